"""Leave-one-anchor-out refit of the cxl-ssd model (``dse validate cxl-ssd --cv``).

Each fitted constant has exactly one anchor claim (calibration.py), so leaving an anchor out
leaves its constant unconstrained: it takes its a-priori value (``calibration.prior``, each
with its source) and the constants fitted after it are refitted with that value.  The
returned number is the model's value of the left-out claim under those constants.
"""

from __future__ import annotations

from pathlib import Path

from dse.claims import claim_value
from models.cxl_ssd import calibration

CLAIMS_PATH = Path(__file__).with_name("claims.yaml")


def refit_without(anchor_id: str) -> dict[str, float]:
    """The model's fitted parameters (Param names) refitted without ``anchor_id``."""
    fit = calibration.fit_all(exclude=frozenset({anchor_id}))
    return {calibration.PARAM_OF[k]: v for k, v in fit.items() if k in calibration.PARAM_OF}


def left_out(anchor_id: str) -> float:
    return claim_value(CLAIMS_PATH, anchor_id, overrides={"cxl-ssd": refit_without(anchor_id)})
