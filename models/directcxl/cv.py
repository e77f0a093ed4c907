"""Leave-one-anchor-out for directcxl (``dse validate directcxl --cv``).

The anchors are the four targets of calibration.fit() (MemDB's KVS breakdown, the No-Switch
gain, the Swap kernel share), which fix four constants jointly.  :func:`left_out` refits
without one (calibration.fit(exclude=...): the constant that loses its target takes MemDB's
remote share equal to the other workloads', or the kernel fault path its a-priori value)
and returns the model's value of the left-out claim with the refitted constants as
parameter overrides.  The cycle-count claims the stage times are solved from are echoes,
not anchors: their expected values are the model's inputs.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from dse.crossval import refitted_left_out
from models.directcxl import calibration

CLAIMS_PATH = Path(__file__).resolve().parent / "claims.yaml"
MODEL = "directcxl"


@cache
def refit_without(anchor_id: str) -> dict[str, float]:
    """The four fitted constants without ``anchor_id``."""
    return calibration.fit(exclude=frozenset({anchor_id}))


#: The model's value of an anchor with the constants refitted without it.
left_out = refitted_left_out(CLAIMS_PATH, MODEL, refit_without)
