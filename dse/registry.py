"""Model registry: name -> model class, imported lazily."""

from __future__ import annotations

import importlib
from functools import cache
from importlib import metadata
from pathlib import Path

from dse.errors import DseError, did_you_mean
from dse.model import Model


@cache
def _entries() -> dict[str, str]:
    from models import REGISTRY

    entries = dict(REGISTRY)
    try:
        eps = metadata.entry_points(group="cxl_dse.models")
    except Exception:  # pragma: no cover - broken metadata
        eps = ()
    for ep in eps:
        if ep.name in entries:
            raise RuntimeError(f"model name {ep.name!r} registered twice")
        entries[ep.name] = ep.value
    return entries


def names() -> list[str]:
    return sorted(_entries())


@cache
def model_class(name: str) -> type[Model]:
    entries = _entries()
    if name not in entries:
        raise DseError(
            f"unknown model {name!r}{did_you_mean(name, entries)}; known models: {', '.join(sorted(entries))}"
        )
    module, _, cls_name = entries[name].partition(":")
    cls = getattr(importlib.import_module(module), cls_name)
    if getattr(cls, "name", None) != name:
        raise RuntimeError(f"registry entry {name!r} points at a class named {getattr(cls, 'name', None)!r}")
    return cls


def get(name: str) -> Model:
    return model_class(name)()


def model_dir(name: str) -> Path:
    """The folder of a model's package (claims.yaml and workload tables live there)."""
    module = _entries()[name].partition(":")[0]
    mod = importlib.import_module(module)
    return Path(mod.__file__).parent


def project_root() -> Path:
    """The checkout root (spaces/, results/, dashboards/ live there)."""
    return Path(__file__).resolve().parent.parent
