"""Leave-one-anchor-out refits of the fs2 model (``dse validate fs2 --cv``).

The four fitted constants solve four targets together (calibration.py).  Leaving one anchor
out removes its target; the constant it pinned stays at its a-priori value
(calibration.PRIORS: YCSB's zipfian constant 0.99 for the reuse skew, one half for the
snoop and the scheduling-affinity shares) and the other three are solved again.  The
workloads' compute time per request follows from the refitted constants (it is derived from
the 97.7 % memory share), so it is recomputed and swapped into the model's table for the
one evaluation (restored in ``finally``).
"""

from __future__ import annotations

from dse.claims import claim_value
from models.fs2 import calibration as cal
from models.fs2 import model as fm

CLAIMS_PATH = cal.FITTED_PATH.parent / "claims.yaml"


def left_out(anchor_id: str) -> float:
    """The model's value of ``anchor_id`` with the constants refitted without it."""
    refit = cal.fit(exclude=frozenset({anchor_id}))
    saved = dict(fm.FITTED["compute_ns"])
    try:
        fm.FITTED["compute_ns"].update(cal.compute_ns(refit))
        return claim_value(CLAIMS_PATH, anchor_id, overrides={"fs2": refit})
    finally:
        fm.FITTED["compute_ns"].clear()
        fm.FITTED["compute_ns"].update(saved)
