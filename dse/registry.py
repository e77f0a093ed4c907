"""Model registry: name -> model class, imported lazily.

The names come from the architecture descriptors (``ARCH`` in each ``models/<pkg>/__init__.py``,
see :mod:`dse.architecture`; ``models.REGISTRY`` is derived from them) and from the
``cxl_dse.models`` entry-point group.  Reading them imports no model module."""

from __future__ import annotations

import importlib
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dse.errors import DseError, did_you_mean

if TYPE_CHECKING:
    from dse.architecture import Architecture
    from dse.model import Model


@cache
def _entries() -> dict[str, str]:
    import models

    entries = dict(models.REGISTRY)
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


def _unknown(name: str, known: dict[str, str]) -> DseError:
    return DseError(f"unknown model {name!r}{did_you_mean(name, known)}; known models: {', '.join(sorted(known))}")


def model_package(name: str) -> str:
    """The dotted package of a registered model (``models.cxl_expander``)."""
    entries = _entries()
    if name not in entries:
        raise _unknown(name, entries)
    return entries[name].partition(":")[0].rsplit(".", 1)[0]


def architecture(name: str) -> Architecture | None:
    """The descriptor of the package a model belongs to; None for a model from an entry
    point or a test, whose parts are found by the conventional names."""
    import models

    return models.ARCHITECTURES.get(model_package(name))


def part_module(name: str, role: str) -> Any | None:
    """A model package's ``calibration``, ``cv`` or ``figures`` module as its descriptor names
    it (None when the package has none).  A package without a descriptor is looked up by
    the conventional module name."""
    import importlib.util

    arch = architecture(name)
    if arch is not None:
        mod = arch.parts().get(role)
        return None if mod is None else importlib.import_module(f"{model_package(name)}.{mod}")
    full = f"{model_package(name)}.{role}"
    try:
        if importlib.util.find_spec(full) is None:
            return None
    except ModuleNotFoundError:  # the model lives in a plain module, not a package
        return None
    return importlib.import_module(full)


def figures_function(name: str) -> Any | None:
    """The model's ``figures()`` (``[(title, chart), ...]`` against the paper), or None."""
    mod = part_module(name, "figures")
    if mod is None:
        return None
    arch = architecture(name)
    return getattr(mod, arch.figures.partition(":")[2] if arch is not None and arch.figures else "figures")


def claims_file(name: str) -> Path | None:
    """The model's claims file, or None when it has none."""
    arch = architecture(name)
    if arch is not None:
        return model_dir(name) / arch.claims if arch.claims else None
    f = model_dir(name) / "claims.yaml"
    return f if f.exists() else None


def optimize_problems() -> dict[str, str]:
    """`dse optimize` problems of every package: name -> ``"module:function"``."""
    import models

    return dict(models.OPTIMIZE)


def names() -> list[str]:
    return sorted(_entries())


@cache
def model_class(name: str) -> type[Model]:
    entries = _entries()
    if name not in entries:
        raise _unknown(name, entries)
    module, _, cls_name = entries[name].partition(":")
    cls = getattr(importlib.import_module(module), cls_name)
    if getattr(cls, "name", None) != name:
        raise RuntimeError(f"registry entry {name!r} points at a class named {getattr(cls, 'name', None)!r}")
    return cls


def get(name: str) -> Model:
    return model_class(name)()


def model_dir(name: str) -> Path:
    """The folder of a model's package (claims.yaml and workload tables live there); reads
    the package's light ``__init__`` only, never the model module."""
    if architecture(name) is not None:
        return Path(importlib.import_module(model_package(name)).__file__).parent
    module = _entries()[name].partition(":")[0]
    return Path(importlib.import_module(module).__file__).parent


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

