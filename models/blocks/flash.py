"""NAND flash SSD backend block: latency under load, saturation throughput and garbage
collection, from the SSD's geometry and timings.

Mechanism (per host request of ``size_b`` bytes)
-----------------------------------------------
* The request covers ``n = ceil(size / page)`` flash pages, striped over channels first,
  then chips (MQSim's CWDP allocation).  A sub-page read moves only the bytes asked for.
* **Die (chip) station** -- ``units = channels x chips_per_channel`` (dies inside one chip do
  not overlap in MQSim, so a chip is one unit): a page read holds it ``tR + transfer``, a
  page program ``tPROG / m + transfer`` (``m`` = planes for sequential writes, which get
  multi-plane programs; 1 for random writes, whose plane offsets rarely match), GC adds
  ``(WA - 1)`` page moves (read + program) and one erase per ``pages_per_block`` moved pages.
  Without an ideal mapping table a cached-mapping-table (CMT) miss adds one mapping-page
  read (``tR`` + a small transfer).
* **Channel station** (``channels`` copies): ``t_cmd + bytes / channel_bw`` per page.
* **PCIe**: one station per direction (full duplex), ``bytes / pcie_bw``, with MQSim's TLP
  efficiency 128 / (128 + 28).
* **Fixed** host/controller time ``t_fixed`` per request (delay station).
* TLC/MLC page types: the mean ``tR``/``tPROG`` over a block's page-type mix; the pages of
  one request share their page offset (striping fills the dies in step), so a multi-page
  request pays the mean, not the maximum, of the page types.

Closed loop at queue depth QD: exact MVA (:func:`models.blocks.queueing.mva`) over page-level
customers (QD x n pages in flight, the n pages of one request in parallel), which captures
die collisions; latency = QD / throughput (Little).  Open loop at an offered IOPS: M/G/1 at
the dies (service-time variance from the read/program mix) and M/D/1 at channels and PCIe.
Saturation IOPS = 1 / (largest per-copy demand), i.e. the bottleneck of dies, channels and
PCIe; the achievable value at a finite QD is :func:`closed_loop` throughput.

Garbage collection: :func:`gc_write_amplification` -- greedy victim selection under uniform
random writes, the mean-field limit of Desnoyers (SYSTOR 2012, "Analytic modeling of SSD
write performance") and Van Houdt (SIGMETRICS 2013): the victim's valid fraction ``u``
solves ``u = -W(-a e^{-a}) / a`` with ``a`` = physical / live-logical pages
(over-provisioning and fill level), ``WA = 1 / (1 - u)``; ``policy="random"`` gives
``WA = a / (a - 1)``; ``policy="d_choices"`` interpolates between them with weight ``1/d``
(an approximation of Van Houdt's d-choices model, documented as such).

Public functions (times in us, rates in IOPS = requests/s, sizes in bytes)
-------------------------------------------------------------------------
* :func:`config(name)` / :data:`CONFIGS` -- SSD configurations (the three MQSim reference
  configs, Espresso's 8ch x 8die x 4plane TLC, DockerSSD's 12ch x 48-die MLC, a Z-NAND and
  an Optane-class medium) as :class:`FlashConfig`.  :data:`CELL_TIMINGS` -- tR / tPROG /
  tBERS per cell type (SLC, MLC, TLC LSB/CSB/MSB, QLC, Z-NAND, Optane-class).
* :func:`unloaded_latency_us(cfg, size_b, read_frac, pattern)`.
* :func:`saturation_iops(cfg, size_b, read_frac, pattern)` and
  :func:`saturation_bw_gbps`.
* :func:`closed_loop(cfg, qd, size_b, read_frac, pattern)` -> (iops, mean latency us).
* :func:`open_loop_latency_us(cfg, iops, size_b, read_frac, pattern)` (inf when overloaded).
* :func:`gc_write_amplification(op_ratio, fill=1.0, policy="greedy", d=...)`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from dse.errors import DseError, did_you_mean
from models.blocks import queueing

__all__ = [
    "FlashConfig", "CONFIGS", "CELL_TIMINGS", "DEFAULT_CONSTANTS", "config", "constants",
    "page_type_mix", "unloaded_latency_us", "saturation_iops", "saturation_bw_gbps", "closed_loop",
    "open_loop_latency_us", "gc_write_amplification",
]

#: MQSim's PCIe model: 128-B TLP payload + 28 B of header/framing per TLP.
PCIE_TLP_EFFICIENCY = 128.0 / (128.0 + 28.0)


@dataclass(frozen=True)
class FlashConfig:
    """One SSD.  Times in us, bandwidths in GB/s (1e9 B/s)."""

    name: str
    channels: int
    chips_per_channel: int
    dies_per_chip: int
    planes_per_die: int
    page_bytes: int
    pages_per_block: int
    blocks_per_plane: int
    tr_us: tuple[float, float, float]  # LSB, CSB, MSB page read
    tprog_us: tuple[float, float, float]  # LSB, CSB, MSB page program
    tbers_us: float
    cell: str  # SLC / MLC / TLC / QLC
    channel_gbps: float
    pcie_lane_gbps: float
    pcie_lanes: int
    op_ratio: float = 0.07
    ideal_mapping: bool = True
    cmt_bytes: float = 0.0
    dies_overlap: bool = False  # MQSim: dies of one chip never overlap
    source: str = ""

    @property
    def units(self) -> int:
        return self.channels * self.chips_per_channel * (self.dies_per_chip if self.dies_overlap else 1)

    @property
    def pcie_gbps(self) -> float:
        return self.pcie_lane_gbps * self.pcie_lanes * PCIE_TLP_EFFICIENCY

    @property
    def capacity_bytes(self) -> float:
        return (self.channels * self.chips_per_channel * self.dies_per_chip * self.planes_per_die
                * self.blocks_per_plane * self.pages_per_block * self.page_bytes)


#: Cell-type timings (us): tR (LSB, CSB, MSB), tPROG (LSB, CSB, MSB), tBERS.  Sources:
#: ONFI 4.x datasheet ranges; Micron B27A/B47R TLC; Samsung Z-NAND (Cheong et al., ISSCC
#: 2018: tR 3 us, tPROG 100 us); Intel Optane (3D XPoint) media ~ 100s of ns (Yang et al.,
#: FAST 2020); MQSim's own defaults (MLC 75 / 750 / 3800 us).
CELL_TIMINGS: dict[str, dict[str, Any]] = {
    "SLC": {"tr_us": (25.0, 25.0, 25.0), "tprog_us": (200.0, 200.0, 200.0), "tbers_us": 1500.0},
    "MLC": {"tr_us": (75.0, 75.0, 75.0), "tprog_us": (750.0, 750.0, 750.0), "tbers_us": 3800.0},
    "TLC": {"tr_us": (30.0, 45.0, 60.0), "tprog_us": (200.0, 280.0, 400.0), "tbers_us": 3000.0},
    "QLC": {"tr_us": (80.0, 100.0, 140.0), "tprog_us": (1000.0, 1600.0, 2500.0), "tbers_us": 10000.0},
    "ZNAND": {"tr_us": (3.0, 3.0, 3.0), "tprog_us": (100.0, 100.0, 100.0), "tbers_us": 1000.0},
    "OPTANE": {"tr_us": (0.3, 0.3, 0.3), "tprog_us": (1.0, 1.0, 1.0), "tbers_us": 0.0},
}


def _mk(name, ch, chips, dies, planes, page, ppb, bpp, cell, ch_gbps, lane, lanes, **kw) -> FlashConfig:
    c = CELL_TIMINGS[cell.upper()]
    tech = "SLC" if cell.upper() in ("ZNAND", "OPTANE") else cell.upper()
    return FlashConfig(name, ch, chips, dies, planes, page, ppb, bpp, kw.pop("tr_us", c["tr_us"]),
                       kw.pop("tprog_us", c["tprog_us"]), kw.pop("tbers_us", c["tbers_us"]), tech, ch_gbps, lane,
                       lanes, **kw)


CONFIGS: dict[str, FlashConfig] = {
    "espresso_tlc": _mk("espresso_tlc", 8, 8, 1, 4, 16384, 96, 128, "TLC", 2.4, 3.938, 4,
                        source="results/reference/mqsim/configs/espresso_tlc_fob.xml (Espresso JBOF SSD, 8ch x 8 dies x 4 planes)"),
    "znand_like": _mk("znand_like", 8, 8, 1, 4, 16384, 96, 128, "ZNAND", 2.4, 3.938, 4,
                      source="results/reference/mqsim/configs/znand_like_fob.xml (SLC Z-NAND-like timings)"),
    "mqsim_default": _mk("mqsim_default", 8, 4, 2, 2, 8192, 256, 2048, "MLC", 0.333, 1.0, 4, ideal_mapping=False,
                         cmt_bytes=2 * 2**20, source="MQSim ssdconfig.xml as shipped (CMU-SAFARI/MQSim)"),
    "dockerssd_mlc": _mk("dockerssd_mlc", 12, 4, 1, 2, 16384, 256, 1024, "MLC", 1.2, 3.938, 4,
                         source="DockerSSD (48 MLC dies over 12 channels), research/dockerssd.md; assumption: 1.2 GB/s channels, PCIe 5 x4"),
    "espresso_ssd": _mk("espresso_ssd", 8, 8, 1, 4, 16384, 96, 128, "TLC", 2.4, 3.938, 4,
                        source="research/espresso.md: 12 TLC SSDs of 8ch x 8 dies x 4 planes (one SSD here)"),
    "znand_ssd": _mk("znand_ssd", 16, 4, 1, 2, 4096, 768, 1024, "ZNAND", 1.2, 3.938, 4,
                     source="Samsung Z-SSD SZ985 class: Z-NAND tR 3 us, tPROG 100 us (ISSCC 2018); geometry assumption"),
    "optane_like": _mk("optane_like", 7, 4, 1, 1, 256, 4096, 4096, "OPTANE", 2.0, 3.938, 4,
                       source="Optane P5800X class: media read ~0.3 us (FAST 2020 measurements); geometry assumption"),
}


def config(name: str | FlashConfig, **overrides: Any) -> FlashConfig:
    if isinstance(name, FlashConfig):
        return replace(name, **overrides) if overrides else name
    if name not in CONFIGS:
        raise DseError(f"unknown SSD config {name!r}{did_you_mean(name, CONFIGS)}; known: {', '.join(CONFIGS)}")
    c = CONFIGS[name]
    return replace(c, **overrides) if overrides else c


DEFAULT_CONSTANTS: dict[str, float] = {
    "t_fixed_us": 0.5,  # host interface + controller time per request
    "t_cmd_us": 0.3,  # per-page command/address cycles on the channel
    "k_open": 1.0,  # open-loop queueing multiplier (1 = M/G/1)
    "map_xfer_b": 64.0,  # bytes moved on the channel for one mapping-page read
    "k_die": 1.0,  # die occupancy scale (out-of-order scheduling / multi-plane overlap)
    "k_hold": 1.0,  # share of the channel wait during which the die stays held
}


def constants(cal: dict[str, float] | None = None) -> dict[str, float]:
    out = dict(DEFAULT_CONSTANTS)
    if cal is None:
        from models.blocks.calibration import load

        cal = load("flash").get("constants", {})
    out.update({k: float(v) for k, v in (cal or {}).items() if k in out})
    return out


def page_type_mix(cell: str, pages_per_block: int) -> tuple[float, float, float]:
    """Fractions of LSB / CSB / MSB pages in a block, MQSim's assignment: SLC all LSB; MLC
    pages 0-1 LSB then alternating pairs LSB/MSB; TLC pages 0-5 LSB, 6-7 CSB, then pairs
    cycling LSB, CSB, MSB."""
    cell = cell.upper()
    n = int(pages_per_block)
    if cell in ("SLC", "ZNAND", "OPTANE") or n <= 0:
        return (1.0, 0.0, 0.0)
    counts = [0, 0, 0]
    if cell == "MLC":
        for i in range(n):
            counts[0 if (i < 2 or ((i - 2) // 2) % 2 == 1) else 2] += 1
    else:
        for i in range(n):
            if i < 6:
                counts[0] += 1
            elif i < 8:
                counts[1] += 1
            else:
                counts[((i - 8) // 2) % 3] += 1
    return tuple(c / n for c in counts)  # type: ignore[return-value]


def _max_of(values: tuple[float, ...], probs: tuple[float, ...], n) -> np.ndarray:
    """E[max of n iid draws] of a discrete distribution, vectorized over n."""
    order = np.argsort(values)
    v = np.asarray(values, float)[order]
    p = np.asarray(probs, float)[order]
    cdf = np.cumsum(p)
    n = np.asarray(n, float)
    prev = np.zeros_like(n)
    out = np.zeros_like(n)
    for vi, ci in zip(v, cdf):
        cur = np.minimum(ci, 1.0) ** n
        out = out + vi * (cur - prev)
        prev = cur
    return out


def _cfg_arrays(cfg) -> dict[str, Any]:
    """FlashConfig (or dict of arrays, as the fit passes) -> derived arrays."""
    if isinstance(cfg, dict):
        return cfg
    c = config(cfg)
    mix = page_type_mix(c.cell, c.pages_per_block)
    trm = float(np.dot(mix, c.tr_us))
    tpm = float(np.dot(mix, c.tprog_us))
    return {
        "units": c.units, "channels": c.channels, "planes": c.planes_per_die, "page_bytes": c.page_bytes,
        "pages_per_block": c.pages_per_block, "tr_mean": trm, "tprog_mean": tpm,
        "tr2_mean": float(np.dot(mix, np.square(c.tr_us))), "tprog2_mean": float(np.dot(mix, np.square(c.tprog_us))),
        "tr_types": c.tr_us, "tprog_types": c.tprog_us, "mix": mix, "tbers": c.tbers_us,
        "ch_bw": c.channel_gbps * 1e3, "pcie_bw": c.pcie_gbps * 1e3,  # bytes per us
        "p_map": 0.0 if c.ideal_mapping else _cmt_miss(c), "op_ratio": c.op_ratio,
    }


def _cmt_miss(c: FlashConfig) -> float:
    """Random-access CMT miss probability: 1 - covered share of the logical space (8-B
    entries, one per page)."""
    covered = c.cmt_bytes / 8.0 * c.page_bytes
    logical = c.capacity_bytes * (1.0 - c.op_ratio)
    return float(max(0.0, 1.0 - covered / max(logical, 1.0)))


def _demands(a: dict[str, Any], size_b, rf, seq, k: dict[str, float], wa=1.0):
    """Per-request quantities (us): dict with n pages, per-copy demands and fixed latency."""
    f = np.float64
    size = np.asarray(size_b, f)
    rf = np.asarray(rf, f)
    seq = np.asarray(seq, bool)
    wa = np.asarray(wa, f)
    page = np.asarray(a["page_bytes"], f)
    n = np.maximum(1.0, np.ceil(size / page))
    bytes_pp = np.minimum(size, page)
    x = k["t_cmd_us"] + bytes_pp / a["ch_bw"]
    x_map = k["t_cmd_us"] + k["map_xfer_b"] / a["ch_bw"]
    p_map = np.where(seq, 0.0, np.asarray(a["p_map"], f))
    m = np.where(seq, np.asarray(a["planes"], f), 1.0)
    tr, tp = np.asarray(a["tr_mean"], f), np.asarray(a["tprog_mean"], f)
    ppb = np.asarray(a["pages_per_block"], f)
    gc_die = (wa - 1.0) * (tr + tp + 2 * x) + wa * np.asarray(a["tbers"], f) / ppb
    die_r = n * (tr + x) + p_map * (tr + x_map)
    die_w = n * (tp / m + x + gc_die) + p_map * (tr + x_map)
    d_die = k["k_die"] * (rf * die_r + (1.0 - rf) * die_w)
    d_ch = n * x + p_map * x_map + (1.0 - rf) * n * (wa - 1.0) * 2 * x
    d_pr = rf * size / a["pcie_bw"]
    d_pw = (1.0 - rf) * size / a["pcie_bw"]
    # unloaded critical path of one request
    n_ch = np.ceil(n / np.asarray(a["channels"], f))
    # pages of one request sit at the same page offset of their blocks (striped writes fill
    # the dies in step), so they share the page type: no max-of-n penalty (MQSim QD1 rows)
    tr_max, tp_max = tr, tp
    path_r = tr_max + n_ch * x + p_map * (tr + x_map) + size / a["pcie_bw"]
    path_w = size / a["pcie_bw"] + n_ch * x + tp_max + p_map * (tr + x_map)
    path = k["t_fixed_us"] + rf * path_r + (1.0 - rf) * path_w
    return {"n": n, "d_die": d_die, "d_ch": d_ch, "d_pr": d_pr, "d_pw": d_pw, "path": path, "x": x,
            "die_r": die_r, "die_w": die_w}


def _stations(a, d):
    """Per-copy demands (..., 4) and multiplicities for MVA, per request."""
    f = np.float64
    units = np.asarray(a["units"], f)
    ch = np.asarray(a["channels"], f)
    dem = np.stack(np.broadcast_arrays(d["d_die"] / units, d["d_ch"] / ch, d["d_pr"], d["d_pw"]), axis=-1)
    mult = np.stack(np.broadcast_arrays(units, ch, np.ones_like(ch), np.ones_like(ch)), axis=-1)
    return dem, mult


def _seq(pattern) -> np.ndarray:
    if isinstance(pattern, str):
        p = pattern.lower()
        if p in ("sequential", "seq", "stream"):
            return np.asarray(True)
        if p in ("random", "rand"):
            return np.asarray(False)
        raise DseError(f"pattern {pattern!r} is not allowed; allowed: random, sequential")
    arr = np.asarray(pattern)
    if arr.dtype.kind in "USO":
        return np.asarray([_seq(str(v)) for v in arr.ravel()]).reshape(arr.shape)
    return arr.astype(bool)


def unloaded_latency_us(cfg, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0, cal=None) -> np.ndarray:
    """Mean latency (us) of an isolated request (QD1, no queueing)."""
    k = constants(cal)
    a = _cfg_arrays(cfg)
    return _demands(a, size_b, read_frac, _seq(pattern), k, wa)["path"]


def saturation_iops(cfg, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0, cal=None) -> np.ndarray:
    """Bottleneck throughput (IOPS): 1 / largest per-copy demand over dies, channels and
    the two PCIe directions, where the die demand includes the time a die stays held
    while its page waits for a busy channel (M/D/1 channel wait, at most the transfers of
    the other chips on the channel; damped fixed point).  Die collisions at a finite QD
    are in :func:`closed_loop`."""
    k = constants(cal)
    a = _cfg_arrays(cfg)
    d = _demands(a, size_b, read_frac, _seq(pattern), k, wa)
    dem, _ = _stations(a, d)
    units = np.asarray(a["units"], float)
    ch = np.asarray(a["channels"], float)
    n = d["n"]
    cap = (units / ch - 1.0) * d["x"]
    die = dem[..., 0]
    x = 1.0 / np.max(dem, axis=-1)
    for _ in range(8 if k["k_hold"] > 0 else 0):
        rho_c = np.clip(x * dem[..., 1], 0.0, 0.999)
        w_ch = np.minimum(rho_c * (d["d_ch"] / n) / (2.0 * (1.0 - rho_c)), cap)
        die_eff = die + k["k_hold"] * n * w_ch / units
        x_new = 1.0 / np.maximum.reduce([die_eff, dem[..., 1], dem[..., 2], dem[..., 3]])
        x = 0.5 * (x + x_new)
    return x * 1e6


def saturation_bw_gbps(cfg, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0, cal=None) -> np.ndarray:
    """:func:`saturation_iops` x request size, in GB/s."""
    return saturation_iops(cfg, size_b, read_frac, pattern, wa=wa, cal=cal) * np.asarray(size_b, float) / 1e9


def closed_loop(cfg, qd, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0, cal=None):
    """Closed loop at queue depth ``qd``: (IOPS, mean latency us) by exact MVA over the
    page operations in flight (qd x pages per request)."""
    k = constants(cal)
    a = _cfg_arrays(cfg)
    d = _demands(a, size_b, read_frac, _seq(pattern), k, wa)
    dem, mult = _stations(a, d)
    n = d["n"]
    pop = np.asarray(qd, float) * n
    lead = np.broadcast_shapes(dem.shape[:-1], pop.shape, np.shape(d["path"]))
    dem = np.broadcast_to(dem, lead + dem.shape[-1:])
    mult = np.broadcast_to(mult, lead + mult.shape[-1:])
    n = np.broadcast_to(n, lead)
    pop = np.broadcast_to(pop, lead)
    d = {key: np.broadcast_to(v, lead) if key in ("path", "x") else v for key, v in d.items()}
    # per page-customer: demands / n; think = fixed path not spent queueing
    # think = the part of the unloaded path not spent at a station; negative where the die
    # and channel overlap (a transfer holds both), then it only corrects the latency
    think_raw = d["path"] - np.sum(dem * mult, axis=-1) / n
    base = dem / n[..., None]
    cur = base
    think = np.maximum(think_raw, 0.0)
    units_per_ch = np.asarray(a["units"], float) / np.asarray(a["channels"], float)
    # simultaneous possession: a die that finished tR keeps its chip while its page waits
    # for the channel, so the channel's queueing time is added to the die occupancy
    # (fixed-point iteration, the usual MVA treatment; k_hold scales it)
    for _ in range(4 if k["k_hold"] > 0 else 1):
        x_page, r_page, q = queueing.mva(cur, pop, think=think, multiplicity=mult)
        if k["k_hold"] <= 0:
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            r_ch = np.where(x_page > 0, q[..., 1] / np.maximum(x_page, 1e-30), 0.0)
        wait_ch = np.maximum(mult[..., 1] * (r_ch - base[..., 1]), 0.0)  # per page cycle
        # a page waits at most for the other chips of its channel to transfer
        cap = (units_per_ch - 1.0) * d["x"]
        wait_ch = np.minimum(wait_ch, cap)
        new = base[..., 0] + k["k_hold"] * wait_ch / mult[..., 0]
        cur = cur.copy()
        cur[..., 0] = 0.5 * (cur[..., 0] + new)
    iops = x_page / n * 1e6
    lat = r_page + think_raw
    return iops, lat


def open_loop_latency_us(cfg, iops, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0, cal=None) -> np.ndarray:
    """Mean latency (us) at an offered Poisson load of ``iops``; inf when any station is
    at or above saturation."""
    k = constants(cal)
    a = _cfg_arrays(cfg)
    rf = np.asarray(read_frac, float)
    d = _demands(a, size_b, rf, _seq(pattern), k, wa)
    dem, mult = _stations(a, d)
    lam = np.asarray(iops, float) / 1e6  # per us
    n = d["n"]
    # die: page operations arrive at lam*n/units each with service d_die/n (mixed)
    units = np.asarray(a["units"], float)
    s_die = d["d_die"] / n
    # second moment of the die service from the read/program mix
    tr2 = np.asarray(a.get("tr2_mean", np.asarray(a["tr_mean"]) ** 2), float)
    tp2 = np.asarray(a.get("tprog2_mean", np.asarray(a["tprog_mean"]) ** 2), float)
    e2 = rf * (tr2 + 2 * np.asarray(a["tr_mean"]) * d["x"] + d["x"] ** 2) + (1 - rf) * (tp2 + 2 * np.asarray(a["tprog_mean"]) * d["x"] + d["x"] ** 2)
    scv = np.maximum(e2 / np.maximum(s_die**2, 1e-12) - 1.0, 0.0)
    lam_die = lam * n / units
    ch = np.asarray(a["channels"], float)
    w_ch = queueing.md1_wait(lam * n / ch, d["d_ch"] / n)
    w_pr = queueing.md1_wait(lam, d["d_pr"])
    w_pw = queueing.md1_wait(lam, d["d_pw"])
    # the die is held while its page waits for the channel (simultaneous possession)
    hold = np.minimum(w_ch, (units / ch - 1.0) * d["x"])
    w_die = np.where(np.isfinite(w_ch), queueing.mg1_wait(lam_die, s_die + k["k_hold"] * hold, scv), np.inf)
    w = k["k_open"] * (w_die + w_ch + w_pr + w_pw)
    return d["path"] + w


def gc_write_amplification(op_ratio=0.07, fill=1.0, policy="greedy", d=8) -> np.ndarray:
    """Write amplification of GC under uniform random writes.

    ``op_ratio``: spare / physical capacity (MQSim's Overprovisioning_Ratio); ``fill``:
    fraction of the logical space holding live data.  ``a = 1 / ((1 - op) fill)`` physical
    pages per live page.  greedy: ``WA = 1 / (1 - u)``, ``u = -W(-a e^{-a}) / a``
    (Desnoyers 2012; Van Houdt 2013, d -> inf); random: ``WA = a / (a - 1)``; d_choices:
    ``WA_greedy + (WA_random - WA_greedy) / d`` (approximation)."""
    from scipy.special import lambertw

    op = np.asarray(op_ratio, float)
    fill = np.asarray(fill, float)
    a = 1.0 / np.maximum((1.0 - op) * fill, 1e-9)
    a = np.maximum(a, 1.0 + 1e-9)
    u = np.real(-lambertw(-a * np.exp(-a), 0) / a)
    wa_g = 1.0 / np.maximum(1.0 - u, 1e-12)
    wa_r = a / (a - 1.0)
    pol = str(policy).lower()
    if pol == "greedy":
        return wa_g
    if pol == "random":
        return wa_r
    if pol in ("d_choices", "rga", "d-choices"):
        return wa_g + (wa_r - wa_g) / max(float(d), 1.0)
    raise DseError(f"GC policy {policy!r} is not allowed; allowed: greedy, random, d_choices")
