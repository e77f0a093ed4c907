"""Per-request service terms of the flash block: pages, channel transfers, the PCIe
messages of an NVMe request (host link), the isolated-request latency, and the per-point
input plumbing the loop solvers share."""

from __future__ import annotations

from typing import Any

import numpy as np

from dse.units import GB, US_PER_S
from models.blocks import link
from models.blocks.flash.configs import (CQE_B, DOORBELL_B, MAP_READ_B, PROG_CMD_US, READ_CMD_US, READ_REQUEST_B,
                                        SQE_B, TLP_OVERHEAD_B, TLP_PAYLOAD_B)
from models.blocks.flash.gc import gc_us_per_page
from models.blocks.numeric import f64, shape_of, where


#: Euler-Mascheroni constant (harmonic-number asymptotics for the fork-join factor)
EULER_GAMMA = 0.5772156649015329


def pcie_message_us(payload_b, lanes, lane_gbps) -> np.ndarray:
    """Transfer time (us) of one PCIe message of ``payload_b`` bytes the way MQSim models
    the link: 128-B TLPs, 28 B of framing each, bytes spread over the lanes."""
    return msg_us(payload_b, np.asarray(lanes, float), np.asarray(lanes, float) * np.asarray(lane_gbps, float) * GB / US_PER_S)


def msg_us(payload_b, lanes, raw_bw) -> np.ndarray:
    """Transfer time (us) of one message at ``raw_bw`` bytes per us over all ``lanes``
    (the link block's fixed-overhead TLP wire bytes, MQSim's 128-B TLPs with 28 B each);
    0 on a transparent link (infinite bandwidth)."""
    if np.ndim(raw_bw) == 0 and not np.isfinite(raw_bw):
        return np.float64(0.0)  # a transparent link (e.g. a model's own link station instead)
    wire = link.tlp_wire_bytes(payload_b, lanes, TLP_PAYLOAD_B, TLP_OVERHEAD_B)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isfinite(raw_bw), wire / raw_bw, 0.0)


def pattern_seq(pattern) -> np.ndarray:
    """Sequential (True) or random (False) per point from a pattern label or booleans."""
    from models.blocks.workload import sequential_mask

    return sequential_mask(pattern, "random, sequential")


def nvme_messages_us(size, lanes, bw):
    """PCIe time (us) of an NVMe request's messages at ``bw`` bytes per us over ``lanes``:
    (device -> host of a read, of a write, host -> device of a read, of a write)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        # a read request: one TLP of framing plus 4 B (MQSim PCIe_Link)
        rreq = np.where(np.isfinite(bw), link.tlp_wire_bytes(READ_REQUEST_B - TLP_OVERHEAD_B, lanes, TLP_PAYLOAD_B,
                                                             TLP_OVERHEAD_B) / bw, 0.0)
    # device -> host: SQE fetch request, data (reads) or data fetch request (writes), CQE
    d2h_r = rreq + msg_us(size, lanes, bw) + msg_us(CQE_B, lanes, bw)
    d2h_w = 2 * rreq + msg_us(CQE_B, lanes, bw)
    # host -> device: two doorbells and the SQE, plus the data of a write
    h2d_r = 2 * msg_us(DOORBELL_B, lanes, bw) + msg_us(SQE_B, lanes, bw)
    return d2h_r, d2h_w, h2d_r, h2d_r + msg_us(size, lanes, bw)


def request_terms(a: dict[str, Any], size_b, rf, seq, wa) -> dict[str, Any]:
    """Per-request quantities (us): pages, channel transfer per page, PCIe service per
    direction, CMT miss probability."""
    size, rf, seq, wa = f64(size_b), f64(rf), np.asarray(seq, bool), f64(wa)
    page = f64(a["page_bytes"])
    n = np.maximum(1.0, np.ceil(size / page))
    ch_bw = f64(a["ch_bw"])
    x = np.minimum(size, page) / ch_bw
    lanes = f64(a.get("lanes", 4))
    bw = f64(a["pcie_bw"])
    if bw.ndim == 0 and not np.isfinite(bw):
        # a transparent link (a model's own link station instead): no PCIe messages
        d2h_r = d2h_w = h2d_r = h2d_w = np.float64(0.0)
    else:
        d2h_r, d2h_w, h2d_r, h2d_w = nvme_messages_us(size, lanes, bw)
    shape = np.broadcast(n, rf, seq, wa).shape
    p_map = f64(a["p_map"])
    return {
        "n": n, "x": x, "x_map": MAP_READ_B / ch_bw, "rf": rf, "seq": seq, "wa": wa,
        "n_ch": np.ceil(n / f64(a["channels"])),
        "d2h_r": d2h_r, "d2h_w": d2h_w, "h2d_r": h2d_r, "h2d_w": h2d_w,
        "d2h": rf * d2h_r + (1 - rf) * d2h_w, "h2d": rf * h2d_r + (1 - rf) * h2d_w,
        "p_map": p_map if p_map.ndim or p_map.shape == shape else np.broadcast_to(p_map, shape),
        "size": size,
    }


def harmonic(n) -> np.ndarray:
    n = f64(n)
    return np.log(n) + EULER_GAMMA + 0.5 / n


def fork_join(r, units, k) -> np.ndarray:
    n = r["n"]
    fj = where(n > 1, harmonic(np.minimum(n, units)) ** k["k_fj"], 1.0)
    # a pure sequential stream keeps its pages in step; mixed reads and writes do not
    mix = 4.0 * r["rf"] * (1.0 - r["rf"])
    return np.where(r["seq"], 1.0 + mix * (fj - 1.0), fj)


def unloaded(a, r) -> np.ndarray:
    """Latency of an isolated request: the reference ``request_path`` at zero load (no merging, no channel wait,
    every mapping read its own), in closed form."""
    rf, xt, nch = r["rf"], r["x"], r["n_ch"]
    tr, tp = f64(a["tr_mean"]), f64(a["tprog_mean"])
    wa = r["wa"]
    gc = gc_us_per_page(wa, tr, tp, xt, a["tbers"], a["pages_per_block"])
    read = r["h2d_r"] + r["d2h_r"] + READ_CMD_US + tr + nch * xt
    write = r["h2d_w"] + r["d2h_w"] + nch * (PROG_CMD_US + xt) + tp + gc
    return rf * read + (1 - rf) * write + r["p_map"] * (READ_CMD_US + tr + r["x_map"])


def take(v, idx):
    return v[idx] if np.ndim(v) else v


def rw_mix(g, read, write):
    """``rf * read + (1 - rf) * write`` for the points of ``g``, skipping a side that no
    point has."""
    if not g["has_w"]:
        return read
    if not g["has_r"]:
        return write
    return g["rf"] * read + g["wf"] * write


POINT_INPUTS_A = ("units", "channels", "planes", "dies", "tr_mean", "tprog_mean", "tr2_mean", "tprog2_mean", "tbers",
                    "pages_per_block", "rounds")
POINT_INPUTS_R = ("n", "x", "x_map", "rf", "wa", "n_ch", "d2h_r", "d2h_w", "h2d_r", "h2d_w", "d2h", "h2d", "p_map")


def flat_inputs(a, r, shape, extra: dict[str, Any]) -> dict[str, Any]:
    """The per-point inputs of the fast paths, flat (length prod(shape)) or scalar."""
    f = np.float64
    flat = {}
    for key in POINT_INPUTS_A:
        v = np.asarray(a.get(key, 1) if key == "dies" else a.get(key, 0.0) if key == "rounds" else a[key], f)
        flat[key] = np.broadcast_to(v, shape).reshape(-1) if v.ndim else v
    for key in POINT_INPUTS_R:
        v = np.asarray(r[key], f)
        flat[key] = np.broadcast_to(v, shape).reshape(-1) if v.ndim else v
    for key, v in extra.items():
        v = np.asarray(v, f)
        flat[key] = np.broadcast_to(v, shape).reshape(-1) if v.ndim else v
    return flat


def scalar_inputs(a, r, extra: dict[str, Any]) -> dict[str, np.float64]:
    """:func:`flat_inputs` of a single point, as numpy scalars (whose arithmetic costs a
    tenth of a one-element array's)."""
    def one(v):
        return np.float64(v.item() if isinstance(v, np.ndarray) else v)

    b = {key: one(a.get(key, 1) if key == "dies" else a.get(key, 0.0) if key == "rounds" else a[key])
         for key in POINT_INPUTS_A}
    b.update((key, one(r[key])) for key in POINT_INPUTS_R)
    b.update((key, one(v)) for key, v in extra.items())
    return b


def point_shape(a, r, extra) -> tuple[int, ...]:
    """Broadcast shape of the per-point inputs of the fast paths and ``extra``."""
    shapes = {shape_of(extra), shape_of(r["seq"]), *(shape_of(r[kk]) for kk in POINT_INPUTS_R),
              *(shape_of(a.get(kk, 1) if kk == "dies" else a[kk]) for kk in POINT_INPUTS_A)}
    return shapes.pop() if len(shapes) == 1 else np.broadcast_shapes(*shapes)
