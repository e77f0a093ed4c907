"""Leave-one-anchor-out refits of the DockerSSD constants (``dse validate dockerssd --cv``).

Both models share the package and ``claims.yaml``: the four ISP anchors refit
``os_cost_scale``, ``kernel_ctx_us``, ``lba_set_us`` and ``naive_copy_gbps`` (dockerssd-isp),
the long-sequence asymptote refits ``swap_fault_us`` (dockerssd-llm).  Every anchor is the
only equation that pins its own constant (``fit.ANCHOR_PARAM``), so leaving it out holds that
constant at its a-priori value (``fit.priors``: sourced unit costs) while the other anchors
solve the rest; the left-out claim is then evaluated with those constants as Param overrides.
"""

from __future__ import annotations

from dse.claims import claim_value
from models.dockerssd import fit


def refit_without(anchor_id: str) -> tuple[str, dict[str, float]]:
    """(model name, constants) fitted without ``anchor_id``."""
    if anchor_id in fit.ISP_ANCHORS:
        return "dockerssd-isp", fit.fit_isp(exclude=frozenset({anchor_id}))
    if anchor_id == fit.LLM_ANCHOR:
        return "dockerssd-llm", fit.fit_llm(exclude=frozenset({anchor_id}))
    raise KeyError(f"{anchor_id!r} is not an anchor of models/dockerssd/fit.py (anchors: "
                   f"{', '.join((*fit.ISP_ANCHORS, fit.LLM_ANCHOR))})")


def left_out(anchor_id: str) -> float:
    """The model's value of anchor ``anchor_id`` with the constants refitted without it."""
    model, consts = refit_without(anchor_id)
    return claim_value(fit.CLAIMS, anchor_id, overrides={model: consts})
