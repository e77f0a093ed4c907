"""Leave-one-anchor-out refit of the rdio software constants (``dse validate rdio --cv``).

Each anchor of claims.yaml (``kind: anchor``) stands for one calibration observation
(``calibration.ANCHOR_OBSERVATION``).  Leaving it out, the five CPU constants lose the one
equation that pins one of them: that constant takes its a-priori value
(``calibration.APRIORI``, each a stated assumption with its range) and the other four are
refitted to their own observations; the RPC wait is refitted to what remains of its two
latency observations.  The claim is then evaluated with the refitted constants.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from dse.claims import claim_value
from models.rdio import calibration

CLAIMS = Path(__file__).parent / "claims.yaml"


@lru_cache(maxsize=None)
def refit(anchor_id: str) -> dict[str, float]:
    """The constants refitted without anchor ``anchor_id``."""
    if anchor_id not in calibration.ANCHORS:
        raise KeyError(f"{anchor_id!r} is not an rdio anchor (anchors: {', '.join(calibration.ANCHORS)})")
    return {k: float(v) for k, v in calibration.fit(frozenset({anchor_id})).items()}


def left_out(anchor_id: str) -> float:
    """The model's value of anchor ``anchor_id`` with the constants refitted without it."""
    return claim_value(CLAIMS, anchor_id, overrides={"rdio": refit(anchor_id)})
