"""`dse validate --cv`: out-of-fit error, the number a design-space tool lives by.

A claim marked ``kind: anchor`` in a claims file had a constant fitted to it, so the
model reproducing it shows little.  A model package that fits constants to claims
provides ``cv.py`` with::

    def left_out(anchor_id: str) -> float:
        '''Refit the constants without this anchor and return the model's value of it.'''

(usually: call the package's fit with the anchor excluded, then
``dse.claims.claim_value(claims_path, anchor_id, overrides={model: refitted params})``).
:func:`cross_validate` runs it for every anchor and reports the in-fit error (the
ordinary one) beside the out-of-fit error; the model's median absolute out-of-fit error
is the generalization figure ``dse validate --cv`` prints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dse.claims import ClaimResult, error_pct


@dataclass
class CvRow:
    model: str
    id: str
    expected: Any
    unit: str
    in_fit_value: float
    in_fit_error_pct: float
    out_of_fit_value: float | None
    out_of_fit_error_pct: float | None
    note: str = ""


def cv_module(model: str) -> Any | None:
    """The model package's ``cv`` module (its descriptor's ``cv``), or None when it has none."""
    from dse import registry

    return registry.part_module(model, "cv")


def cross_validate(path: Path, results: list[ClaimResult]) -> list[CvRow]:
    """Leave-one-anchor-out rows for the anchors among ``results`` (of claims file ``path``)."""
    rows = []
    modules: dict[str, Any] = {}
    for r in results:
        if r.kind != "anchor":
            continue
        if r.model not in modules:
            modules[r.model] = cv_module(r.model)
        mod = modules[r.model]
        row = CvRow(r.model, r.id, r.expected, r.unit, r.value, r.error_pct, None, None)
        if mod is None:
            row.note = "no leave-one-out refit (the package has no cv.py): in-fit only"
        else:
            value = float(mod.left_out(r.id))
            row.out_of_fit_value = value
            row.out_of_fit_error_pct = error_pct(r.expected, value)
        rows.append(row)
    return rows


def refitted_left_out(claims_path: Path, model: str, refit: Callable[[str], dict[str, float]]) -> Callable[[str], float]:
    """``left_out`` for a package whose fitted constants are parameters of ``model``:
    ``refit(anchor_id)`` gives them without the anchor, and the anchor is evaluated with
    them as parameter overrides."""
    from dse.claims import claim_value

    def left_out(anchor_id: str) -> float:
        return claim_value(claims_path, anchor_id, overrides={model: refit(anchor_id)})

    return left_out


def median_abs(rows: list[CvRow]) -> dict[str, float | None]:
    """Per model, the median |out-of-fit error| (%) over its anchors (None: not run)."""
    import statistics

    out: dict[str, float | None] = {}
    for model in dict.fromkeys(r.model for r in rows):
        errs = [abs(r.out_of_fit_error_pct) for r in rows if r.model == model and r.out_of_fit_error_pct is not None]
        errs = [e for e in errs if math.isfinite(e)]
        out[model] = statistics.median(errs) if errs else None
    return out
