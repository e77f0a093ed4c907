"""Standard deviations of the constants model packages fit to their papers' numbers.

A package that fits constants to claims (``models/<pkg>/fitted.toml``, anchors of its
``claims.yaml`` with ``kind: anchor``) already refits them without one anchor at a time for
``dse validate --cv`` (``cv.refit_without(anchor)`` or ``<calibration module>.fit(exclude=...)``).
Those leave-one-out refits give each constant a jackknife standard deviation over the fit's
N targets::

    sd = sqrt((N - 1) / N * sum_i (theta_(i) - mean(theta_(.)))^2)

where ``theta_(i)`` is the constant refitted without target i.  Most of these fits are
exactly identified (one target per constant): leaving a constant's own target out sends it
to its a-priori value, so its sd measures how far the fit moved it from what is known
without that number -- a wide but honest interval for a constant pinned by a single figure.

The sds are stored in the package's ``fitted.toml`` as an ``[uncertainty]`` table of floats
(``n_targets`` and one sd per constant, named as the model parameter it feeds or, for a
per-workload table, ``"<table>.<name>"``; a table of floats only, so readers that turn every
table of the file into floats keep working).  The fitted values are not touched.

A package's calibration module rewriting its fitted.toml (``models.blocks.fit_harness.
write_fitted``, the one writer) keeps the table while the fit is unchanged and recomputes it
through :func:`compute` when it changed.

``python -m dse.fit_uncertainty [PKG ...]`` recomputes and writes the tables (atomically);
:func:`fit_sd(model)` reads them (``dse.uncertainty`` gives such a parameter
``normal(sd)`` instead of the generic 10 %).
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

#: The model packages that ship a fitted.toml fitted to anchors with leave-one-out refits.
PACKAGES = ("directcxl", "espresso", "fs2", "ginkgo", "mhj", "llm_serve")
TABLE = "uncertainty"
N_KEY = "n_targets"
METHOD = "jackknife over the fit's targets (leave-one-out refits of models/{pkg}/cv.py)"
COMMENT = ("# [uncertainty]: jackknife sd of each fitted constant over the leave-one-out refits of its "
           "anchors (dse/fit_uncertainty.py); values above are unchanged")


def package_dir(pkg: str) -> Path:
    from dse.registry import project_root

    return project_root() / "models" / pkg


def anchors(pkg: str) -> list[str]:
    """Ids of the claims of the package's claims.yaml that a constant is fitted to."""
    from dse.claims import load_claims

    spec = load_claims(package_dir(pkg) / "claims.yaml")
    return [c.id for c in spec.claims if c.kind == "anchor"]


def refit_function(pkg: str) -> Callable[[str], dict[str, Any]]:
    """anchor id -> the constants refitted without it (the package's own cv refit)."""
    import models
    from dse.registry import part_module

    arch = models.ARCHITECTURES.get(f"models.{pkg}")
    if arch is None:
        raise LookupError(f"models.{pkg}: not an architecture package (no ARCH descriptor)")
    model = next(iter(arch.models))
    cv = part_module(model, "cv")
    if hasattr(cv, "refit_without"):
        return cv.refit_without
    cal = part_module(model, "calibration")
    if hasattr(cal, "fit"):
        return lambda a, fit=cal.fit: fit(exclude=frozenset({a}))
    raise LookupError(f"models.{pkg}: no cv.refit_without and no calibration module with fit(exclude=...)")


def flatten(consts: dict[str, Any]) -> dict[str, float]:
    """Constants as name -> float; a nested per-workload table becomes ``"<table>.<name>"``
    (``global`` entries keep their plain name: they are model parameters)."""
    out: dict[str, float] = {}
    for k, v in consts.items():
        if isinstance(v, dict):
            for k2, v2 in flatten(v).items():
                out[k2 if k == "global" else f"{k}.{k2}"] = v2
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = float(v)
    return out


def jackknife_sd(estimates: np.ndarray) -> np.ndarray:
    """Jackknife sd from the N leave-one-out estimates (rows) of each quantity (columns)."""
    x = np.asarray(estimates, dtype=np.float64)
    n = x.shape[0]
    if n < 2:
        raise ValueError("a jackknife needs at least 2 leave-one-out estimates")
    return np.sqrt((n - 1) / n * np.sum((x - x.mean(axis=0)) ** 2, axis=0))


def compute(pkg: str) -> dict[str, float]:
    """The ``[uncertainty]`` table of one package: ``n_targets`` and an sd per constant."""
    refit = refit_function(pkg)
    ids = anchors(pkg)
    rows = [flatten(refit(a)) for a in ids]
    names = [k for k in rows[0] if all(k in r for r in rows)]
    sd = jackknife_sd(np.array([[r[k] for k in names] for r in rows]))
    return {N_KEY: float(len(ids)), **{k: float(s) for k, s in zip(names, sd)}}


def write(pkg: str, table: dict[str, float]) -> Path:
    """Put ``table`` into ``models/<pkg>/fitted.toml`` as its ``[uncertainty]`` table
    (replacing an old one; every other line kept byte for byte), atomically."""
    from dse import store

    path = package_dir(pkg) / "fitted.toml"
    kept: list[str] = []
    skipping = False
    for line in path.read_text(encoding="utf-8").splitlines():
        s = line.strip()
        if s.startswith("[") and not s.startswith("[["):
            skipping = s == f"[{TABLE}]" or s.startswith(f"[{TABLE}.")
        elif s.startswith("[["):
            skipping = False
        if not skipping and line != COMMENT:
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    text = with_table("\n".join(kept), table)
    before = tomllib.loads(path.read_text(encoding="utf-8"))
    after = tomllib.loads(text)
    after.pop(TABLE, None)
    before.pop(TABLE, None)
    if after != before:  # never change a fitted value
        raise RuntimeError(f"{path}: writing [{TABLE}] would change other tables")
    store.atomic_write_text(path, text)
    fit_sd_table.cache_clear()
    return path


def with_table(text: str, table: dict[str, float]) -> str:
    """``text`` (a fitted.toml without the table) with ``table`` appended as its
    ``[uncertainty]`` table, under :data:`COMMENT` (the one layout of that table; the
    package writer, ``models.blocks.fit_harness.write_fitted``, uses it too)."""
    from models.blocks.calibration import dumps

    return text.rstrip("\n") + "\n\n" + COMMENT + "\n" + dumps({TABLE: table})


@cache
def fit_sd_table(fitted_path: str) -> dict[str, float]:
    """The ``[uncertainty]`` table of a fitted.toml ({} when none)."""
    p = Path(fitted_path)
    if not p.is_file():
        return {}
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError:
        return {}
    t = doc.get(TABLE)
    return {k: float(v) for k, v in t.items()} if isinstance(t, dict) else {}


def fit_sd(model: Any) -> tuple[dict[str, float], int]:
    """(parameter name -> sd, number of targets) from the fitted.toml next to the model's
    module (``model``: an instance or its class), ({}, 0) when it has none."""
    cls = model if isinstance(model, type) else type(model)
    mod = sys.modules.get(cls.__module__)
    f = getattr(mod, "__file__", None)
    if not f:
        return {}, 0
    t = dict(fit_sd_table(str(Path(f).resolve().parent / "fitted.toml")))
    n = int(t.pop(N_KEY, 0))
    return t, n


def main(argv: list[str]) -> None:
    for pkg in argv or PACKAGES:
        table = compute(pkg)
        write(pkg, table)
        print(pkg, ", ".join(f"{k}={v:.4g}" for k, v in table.items()))


if __name__ == "__main__":  # python -m dse.fit_uncertainty [PKG ...]
    main(sys.argv[1:])
