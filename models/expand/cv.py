"""Leave-one-anchor-out refit of the expand model (``dse validate expand --cv``).

Each of the four fitted constants has exactly one anchor claim (calibration.py), so leaving
an anchor out leaves its constant unconstrained: it takes its a-priori value
(``calibration.PRIORS``, each with its source) and the constants fitted after it in the
chain are refitted with that value.  The returned number is the model's value of the left-out
claim under those constants.
"""

from __future__ import annotations

from pathlib import Path

from dse.claims import claim_value
from models.expand import calibration

CLAIMS_PATH = Path(__file__).with_name("claims.yaml")


def refit_without(anchor_id: str) -> dict[str, float]:
    """The model's fitted parameters (Param names) refitted without ``anchor_id``."""
    fit = calibration.fit_all(exclude=frozenset({anchor_id}))
    return {calibration.PARAM_OF[k]: v for k, v in fit.items()}


def left_out(anchor_id: str) -> float:
    return claim_value(CLAIMS_PATH, anchor_id, overrides={"expand": refit_without(anchor_id)})
