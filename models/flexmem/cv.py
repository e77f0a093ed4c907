"""Leave-one-anchor-out refit of flexmem's one fitted constant (``dse validate flexmem --cv``).

``registry_gbps`` is fitted to ``warm_vs_cold_startup`` (48.5%) and nothing else of the
article pins it (no absolute start-up or download times, vm-image-cache.md §7).  Left out,
it takes its a-priori value, the digest's default of a download at the 100 Gb/s NIC rate
(``calibration.APRIORI_REGISTRY_GBPS``); the claim cannot be predicted without itself.
"""

from __future__ import annotations

from pathlib import Path

from dse.claims import claim_value
from models.flexmem import calibration

CLAIMS = Path(__file__).parent / "claims.yaml"


def left_out(anchor_id: str) -> float:
    """The model's value of anchor ``anchor_id`` with the constants refitted without it."""
    from models.flexmem.model import WARM_S_DEFAULT

    if anchor_id not in calibration.ANCHORS:
        raise KeyError(f"{anchor_id!r} is not a flexmem anchor (anchors: {', '.join(calibration.ANCHORS)})")
    refit = calibration.fit(WARM_S_DEFAULT, frozenset({anchor_id}))
    return claim_value(CLAIMS, anchor_id, overrides={"flexmem": refit})
