"""Leave-one-anchor-out refit of the NCS constants (``dse validate ncs --cv``).

Each anchor of claims.yaml (``kind: anchor``) is left out in turn, the constants are refitted
without it (``calibration.fit(exclude=...)``) and the claim is evaluated with them:

* ``restore-no-pipelining`` / ``restore-pipelining``: two Fig 6(d) ratios pin two stage
  times; with one left out the split falls back on the a-priori pack share
  (``calibration.APRIORI_PACK_SHARE``, a two-stage fetch/SR pipeline).  The GPU busy
  fraction is refitted with the new stage times (the SR cost per view stays pinned by 40.8%).
* ``tco-max-45d``: its only constant, the GPU busy fraction, takes its a-priori value
  (``APRIORI_GPU_BUSY_FRAC``: billed only while restoring).
* ``baseline-coverage-50pct`` / ``coverage-78pct``: the lognormal loses one of its two
  points; its sigma then comes from McGrady's view concentration (L403), its median from
  the point that is left.
"""

from __future__ import annotations

from pathlib import Path

from dse.claims import claim_value
from models.ncs import calibration

CLAIMS = Path(__file__).parent / "claims.yaml"


def left_out(anchor_id: str) -> float:
    """The model's value of anchor ``anchor_id`` with the constants refitted without it."""
    if anchor_id not in calibration.ANCHORS:
        raise KeyError(f"{anchor_id!r} is not an ncs anchor (anchors: {', '.join(calibration.ANCHORS)})")
    return claim_value(CLAIMS, anchor_id, overrides={"ncs": calibration.fit(frozenset({anchor_id}))})
