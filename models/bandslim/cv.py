"""Leave-one-anchor-out refit of bandslim's one fitted constant (``dse validate bandslim --cv``).

``dma_eff_frac`` is the only constant fitted to a claim (``pb_resp_time_small``).  Left
out, nothing else of the article pins the OpenSSD's QD1 page-DMA time, so the refit falls
back on the constant's a-priori value, a DMA engine at the Gen2 link's TLP-limited rate
(``calibration.apriori_dma_eff_frac``): the out-of-fit error shows how much of the "halved"
response time the fitted slow DMA engine carries.
"""

from __future__ import annotations

from pathlib import Path

from dse.claims import claim_value
from models.bandslim import calibration

CLAIMS = Path(__file__).parent / "claims.yaml"


def left_out(anchor_id: str) -> float:
    """The model's value of anchor ``anchor_id`` with the constants refitted without it."""
    if anchor_id not in calibration.ANCHORS:
        raise KeyError(f"{anchor_id!r} is not a bandslim anchor (anchors: {', '.join(calibration.ANCHORS)})")
    return claim_value(CLAIMS, anchor_id, overrides={"bandslim": calibration.fit(frozenset({anchor_id}))})
