"""Leave-one-anchor-out refits of the DockerSSD constants (``dse validate dockerssd --cv``).

Both models share the package and ``claims.yaml``: the four ISP anchors refit
``os_cost_scale``, ``kernel_ctx_us``, ``lba_set_us`` and ``naive_copy_gbps`` (dockerssd-isp),
the long-sequence asymptote refits ``swap_fault_us`` (dockerssd-llm).  Every anchor is the
only equation that pins its own constant (``calibration.ANCHOR_PARAM``), so leaving it out holds that
constant at its a-priori value (``calibration.priors``: sourced unit costs) while the other anchors
solve the rest; the left-out claim is then evaluated with those constants as Param overrides.
"""

from __future__ import annotations

from dse.claims import claim_value
from models.dockerssd import calibration


def refit_without(anchor_id: str) -> tuple[str, dict[str, float]]:
    """(model name, constants) fitted without ``anchor_id``."""
    if anchor_id in calibration.ISP_ANCHORS:
        return "dockerssd-isp", calibration.fit_isp(exclude=frozenset({anchor_id}))
    if anchor_id == calibration.LLM_ANCHOR:
        return "dockerssd-llm", calibration.fit_llm(exclude=frozenset({anchor_id}))
    raise KeyError(f"{anchor_id!r} is not an anchor of models/dockerssd/calibration.py (anchors: "
                   f"{', '.join((*calibration.ISP_ANCHORS, calibration.LLM_ANCHOR))})")


def left_out(anchor_id: str) -> float:
    """The model's value of anchor ``anchor_id`` with the constants refitted without it."""
    model, consts = refit_without(anchor_id)
    return claim_value(calibration.CLAIMS, anchor_id, overrides={model: consts})
