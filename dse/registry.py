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


def refresh() -> None:
    """Forget the cached registry (after a plug-in or test registers a model)."""
    _entries.cache_clear()
    model_class.cache_clear()


def model_package(name: str) -> str:
    """The dotted package of a registered model (``models.cxl_expander``)."""
    entries = _entries()
    if name not in entries:
        raise DseError(f"unknown model {name!r}{did_you_mean(name, entries)}; known models: {', '.join(sorted(entries))}")
    return entries[name].partition(":")[0].rsplit(".", 1)[0]


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


#: Files whose content decides a model's results: code, workload tables, fitted constants.
CODE_SUFFIXES = (".py", ".csv", ".json", ".toml")


def _tree_sha256(folder: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    for f in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in CODE_SUFFIXES):
        if "__pycache__" in f.parts:
            continue
        h.update(str(f.relative_to(folder)).encode())
        h.update(b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def code_fingerprint(name: str) -> dict[str, object]:
    """Hashes of what a model's results depend on besides its inputs: its package's
    source and tables, the shared blocks, and each ``fitted.toml`` (constants fitted to
    claims).  A resumed study whose hashes differ would mix old and new results."""
    import hashlib

    pkg = model_dir(name)
    blocks = Path(importlib.import_module("models.blocks").__file__).parent
    fitted = {
        str(f.relative_to(pkg)): hashlib.sha256(f.read_bytes()).hexdigest()[:16]
        for f in sorted(pkg.rglob("fitted*.toml"))
    }
    return {
        "package_sha256": _tree_sha256(pkg)[:16],
        "blocks_sha256": _tree_sha256(blocks)[:16],
        "fitted_sha256": fitted,
    }

