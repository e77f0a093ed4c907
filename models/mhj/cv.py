"""Leave-one-anchor-out for mhj (``dse validate mhj --cv``).

Two constants, each solved to one anchor (calibration.py): ``shuffle_storage_gbps`` to
synth_clm_vs_shj, ``other_ns_per_row`` to tpcds_geomean_vs_shj.  Without its anchor a
constant has nothing left to fit it, so :func:`left_out` refits with the anchor excluded
(that constant at its a-priori value, calibration.PRIORS; the other solved as before) and
returns the model's value of the left-out claim with the refitted constants.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from dse.crossval import refitted_left_out
from models.mhj import calibration

CLAIMS_PATH = Path(__file__).resolve().parent / "claims.yaml"
MODEL = "mhj"


@cache
def refit_without(anchor_id: str) -> dict[str, float]:
    """The fitted constants without ``anchor_id``."""
    return calibration.fit(exclude=frozenset({anchor_id}))


#: The model's value of an anchor with the constants refitted without it.
left_out = refitted_left_out(CLAIMS_PATH, MODEL, refit_without)
