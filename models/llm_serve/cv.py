"""Leave-one-anchor-out for llm-serve (``dse validate llm-serve --cv``).

The anchors are the claims ``fit-<id>``: calibration.py fits ``eff_flops_frac``, ``eff_hbm_frac``
and ``gemm_half_rows`` to the measurements ``<id>`` of measurements.csv with role ``fit``.
:func:`left_out` refits the three constants on the other five fit rows (the same least
squares from the same start as the shipped fit, about 1.5 s; a warm start from the shipped
constants stops there, the optimizer's tolerances being met before it moves) and returns the
model's value of the left-out claim with the refitted constants as parameter overrides.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from dse.claims import claim_value
from models.llm_serve import calibration

CLAIMS_PATH = Path(__file__).resolve().parent / "claims.yaml"
MODEL = "llm-serve"
ANCHOR_PREFIX = "fit-"


def measurement_id(anchor_id: str) -> str:
    """The measurements.csv row an anchor claim reproduces (``fit-<id>`` -> ``<id>``)."""
    if not anchor_id.startswith(ANCHOR_PREFIX):
        raise ValueError(f"{anchor_id!r} is not an llm-serve anchor (anchors are the claims {ANCHOR_PREFIX}<measurement id>)")
    return anchor_id[len(ANCHOR_PREFIX):]


@cache
def refit_without(anchor_id: str) -> dict[str, float]:
    """The three constants fitted without the anchor's measurement."""
    return calibration.fit(exclude={measurement_id(anchor_id)})["constants"]


def left_out(anchor_id: str) -> float:
    """The model's value of anchor ``anchor_id`` with the constants refitted without it."""
    return claim_value(CLAIMS_PATH, anchor_id, overrides={MODEL: refit_without(anchor_id)})
