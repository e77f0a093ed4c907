"""Leave-one-anchor-out for cxl-expander (``dse validate cxl-expander --cv``).

The model has one anchor, ``pond-added-latency``: the link block's port latency
(``CXL_PORT_NS``, the model's ``port_latency_ns`` knob) is derived from Pond's 70-90 ns and
from nothing else.  Without it there is no data to refit the port latency to, so it takes
its a-priori value: the CXL-GPU article's "two-digit ns" controller round trip
(digest shared/research/cxl-gpu.md L31: 10-99 ns, midpoint 54.5 ns) spread over the four
port traversals of a round trip (host and device port, each way).
"""

from __future__ import annotations

from pathlib import Path

from dse.claims import claim_value

CLAIMS_PATH = Path(__file__).resolve().parent / "claims.yaml"
MODEL = "cxl-expander"
#: A-priori port latency, ns: midpoint of the CXL-GPU digest's "two-digit ns" controller
#: round trip (L31, 10-99 ns) over the 4 port traversals of a round trip.
PRIOR_PORT_NS = (10.0 + 99.0) / 2.0 / 4.0

#: anchor -> the parameters the refit without it gives.
_LEFT_OUT = {"pond-added-latency": {"port_latency_ns": PRIOR_PORT_NS}}


def left_out(anchor_id: str) -> float:
    """The model's value of ``anchor_id`` with the constants refitted without it."""
    if anchor_id not in _LEFT_OUT:
        raise KeyError(f"{anchor_id!r} is not an anchor of {MODEL}; anchors: {', '.join(_LEFT_OUT)}")
    return claim_value(CLAIMS_PATH, anchor_id, overrides={MODEL: _LEFT_OUT[anchor_id]})
