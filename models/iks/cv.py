"""Leave-one-anchor-out refit of the iks model (``dse validate iks --cv``).

The one constant fitted to the article, eta_frac, is fitted to Table 1's solo ENNS time; the
solo QPS is the same measurement (batch / time).  Leaving either out leaves the solo column
out: eta is fitted to the spatial column (612 ms on 32 channels) and the claim is evaluated
with that eta (calibration.fit_eta).  The CPU baselines' efficiencies are fitted to the
companion ASPLOS paper, not to a claim here, so they have no leave-one-out.
"""

from __future__ import annotations

from dse.claims import claim_value
from models.iks import calibration, model, offload
from models.iks.rag import HERE

CLAIMS_PATH = HERE / "claims.yaml"


def left_out(anchor_id: str) -> float:
    """The model's value of ``anchor_id`` with eta refitted without it."""
    fit = calibration.fit_eta(dim=model.DEFAULT_DIM, elem_b=model.DEFAULT_ELEM_B, top_k=model.DEFAULT_TOP_K,
                              interface=offload.INTERFACES.index("cxl_cache"), gen=5, lanes=16,
                              exclude=frozenset({anchor_id}))
    return claim_value(CLAIMS_PATH, anchor_id, overrides={"iks": {"eta_frac": fit["eta"]}})
