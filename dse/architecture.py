"""An architecture package's descriptor: the one place that says what a package registers
and where its parts are.

Every ``models/<pkg>/__init__.py`` declares ``ARCH = Architecture(...)``::

    ARCH = Architecture(
        models={"bandslim": "model:BandSlim"},   # model name -> "module:Class" in the package
        optimize={},                             # `dse optimize` problem -> "module:function"
        readme_order=10,                         # place of its section in README.md
        claims="claims.yaml",                    # published results it must reproduce
        figures="figures:figures",               # model against the paper's figures (dashboard)
        calibration="calibration",               # the fit of its constants (python -m ...)
        cv="cv",                                 # refits without each anchor (dse validate --cv)
    )

A part the package does not have is ``None``.  This module imports nothing heavy (no numpy)
and a descriptor imports nothing but this module, so discovering every package (``dse
models``, ``dse --help``) costs a few milliseconds.  ``dse.registry`` reads the descriptors
(plus the ``cxl_dse.models`` entry-point group for models outside this checkout).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: A model or problem name: lowercase words joined by dashes (``cxl-expander``).
NAME_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
#: "module:attribute" inside the package (``model:BandSlim``, ``figures:figures``).
TARGET_RE = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")
#: The reading order given to a package that does not say (after the shipped ones).
LAST_README_ORDER = 1000


@dataclass(frozen=True, eq=False)
class Architecture:
    """What one architecture package registers and where its parts live (module names are
    relative to the package; a part it lacks is None)."""

    models: Mapping[str, str]
    optimize: Mapping[str, str] = field(default_factory=dict)
    readme_order: int = LAST_README_ORDER
    claims: str | None = "claims.yaml"
    figures: str | None = None
    calibration: str | None = None
    cv: str | None = None

    def __post_init__(self) -> None:
        if not self.models:
            raise ValueError("an Architecture registers at least one model")
        for kind, table in (("model", self.models), ("problem", self.optimize)):
            for name, target in table.items():
                if not NAME_RE.match(name):
                    raise ValueError(f"{kind} name {name!r} must be lowercase words joined by dashes")
                if not TARGET_RE.match(target):
                    raise ValueError(f"{kind} {name!r}: {target!r} is not 'module:attribute'")
        if self.figures is not None and not TARGET_RE.match(self.figures):
            raise ValueError(f"figures {self.figures!r} is not 'module:function'")

    def parts(self) -> dict[str, str]:
        """The package's optional modules by role (``{"cv": "cv", ...}``), those it has."""
        named = {"calibration": self.calibration, "cv": self.cv,
                 "figures": self.figures.partition(":")[0] if self.figures else None}
        return {role: mod for role, mod in named.items() if mod}


def discover(folder: Path, prefix: str) -> dict[str, Architecture]:
    """``{"<prefix>.<pkg>": descriptor}`` for every package ``folder/<pkg>/__init__.py`` that
    declares ``ARCH``, in folder-name order (``prefix`` is the package ``folder`` is)."""
    out: dict[str, Architecture] = {}
    for init in sorted(folder.glob("*/__init__.py")):
        pkg = f"{prefix}.{init.parent.name}"
        arch = getattr(importlib.import_module(pkg), "ARCH", None)
        if arch is None:
            continue
        if not isinstance(arch, Architecture):
            raise TypeError(f"{pkg}.ARCH is a {type(arch).__name__}, not a dse.architecture.Architecture")
        out[pkg] = arch
    return out


def flat_table(archs: Mapping[str, Architecture], table: str) -> dict[str, str]:
    """Every package's ``models`` (or ``optimize``) entries as ``name -> "pkg.module:attr"``;
    a name declared by two packages is refused."""
    out: dict[str, str] = {}
    for pkg, arch in archs.items():
        for name, target in getattr(arch, table).items():
            if name in out:
                raise RuntimeError(f"{table} name {name!r} is declared by two packages ({out[name]} and {pkg}.{target})")
            out[name] = f"{pkg}.{target}"
    return out
