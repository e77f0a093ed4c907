"""NAND flash SSD block: mean latency and throughput of an NVMe SSD under load, and the
write amplification of its garbage collection, from the SSD's geometry and timings.

The model follows the request path of an MQSim-style SSD (MQSim: Tavakkol et al., FAST
2018; the mechanisms below are those of its NVMe host interface, page-level FTL, priority
out-of-order transaction scheduler and ONFI NV-DDR2 channel model):

* **Host link** -- an NVMe request is a sequence of PCIe messages, each direction one
  FIFO link: doorbell, submission-entry fetch (read request + 64-B completion), data,
  16-B completion entry, completion doorbell.  Payloads travel in 128-B TLPs with 28 B of
  framing each; a read request is one header (:func:`pcie_message_us`).
* **Striping** -- a request of ``n = ceil(size / page)`` pages is split page by page over
  channels first, then chips, dies and planes (CWDP); a sub-page request moves only its
  own bytes on the channel.
* **Chip** -- one command at a time per chip (dies of one chip never overlap in MQSim):
  a read holds it for command + tR + wait for the channel + data out; a program for
  wait for the channel + command and data in + tPROG.  Reads are served before queued
  writes.  Pages queued at one die with the same page offset in other planes merge into
  one multi-plane command (tR / tPROG shared): a sequential write stream's pages sit at
  the die and each program takes half of them (up to the planes), a sequential read takes
  the later pages of its page offset that arrive while it waits (no constant), random
  traffic only where a queued page has the head's page offset (``k_mp`` per queued page /
  pages per block).
* **Channel** -- command/address cycles (ONFI NV-DDR2 defaults) and data transfers; data
  out of a finished read goes before new commands; waits follow a non-preemptive
  priority M/G/1 residual (``k_ch``), bounded by the other chips on the channel.
* **Read rounds** -- because pending data-outs go first and a command is issued only to an
  idle channel, chips with queued reads fall into step: they get their commands together,
  finish tR together and then wait for each other's data-out.  In the limit a chip's read
  cycle is tR plus every chip's transfer on its channel (MQSim at saturation: chip array
  share + channel share = 1).  Each read op (and mapping read) waits ``rho**2`` of the
  other chips' data-out (the chance that another chip has a queued op, M/M/1), the chip
  utilization ``rho`` solved with this wait (a quadratic).
* **Cached mapping table** -- without an ideal mapping table a random request misses the
  CMT and first reads a 512-B translation entry from flash; a sequential stream shares one
  mapping read with the requests arriving while it is in flight.

Queueing: open loop (Poisson arrivals) uses M/G/1 at each chip (service-time moments from
the tR/tPROG page-type mix; the page wait W is the fixed point of the wait the merging at
W implies, solved by a bracketed root finder), M/D/1 at each PCIe direction, and a fork-join factor
``H_n ** k_fj`` for requests that wait for the slowest of their ``n`` pages (``k_fj = 0``
fits the MQSim runs best: the loaded page waits already carry that spread).  Closed loop
(queue depth QD) uses approximate mean-value analysis (Schweitzer) over the same
stations; sequential streams place consecutive pages on consecutive chips, so their
backlog builds only once the pages in flight exceed the chips, and a stream's mix of reads
and programs queues as G/G/1 with the stream's regular arrivals (Kingman).  Reads go
before queued programs in both loops (non-preemptive priority M/G/1, Cobham).  The sustained throughput
(:func:`saturation_iops`) is the closed-loop throughput with the NVMe fetch window
(``queue_fetch_size`` requests, MQSim's ``Queue_Fetch_Size``) full -- what an overloaded
open loop reaches, because the device only fetches that many requests at a time.

Garbage collection: :func:`gc_write_amplification` -- greedy victim selection under uniform
random writes, the mean-field limit of Desnoyers (SYSTOR 2012) and Van Houdt
(SIGMETRICS 2013): ``u = -W(-a e^{-a}) / a``, ``WA = 1 / (1 - u)``; ``policy="random"``
gives ``WA = a / (a - 1)``; ``policy="d_choices"`` interpolates with weight ``1/d``.  A
write amplification ``wa > 1`` adds ``wa - 1`` page moves (read + program) and the erase
share to every host page written.

Public functions (times in us, rates in IOPS = requests/s, sizes in bytes)
-------------------------------------------------------------------------
* :func:`config(name)` / :data:`CONFIGS` -- SSD configurations; :data:`CELL_TIMINGS`.
* :func:`unloaded_latency_us(cfg, size_b, read_frac, pattern)`.
* :func:`saturation_iops(cfg, size_b, read_frac, pattern)`, :func:`saturation_bw_gbps`.
* :func:`closed_loop(cfg, qd, size_b, read_frac, pattern)` -> (iops, mean latency us).
* :func:`open_loop_latency_us(cfg, iops, size_b, read_frac, pattern)` (inf at or above
  the sustained throughput).
* :func:`gc_write_amplification(op_ratio, fill=1.0, policy="greedy", d=...)`.
* :func:`pcie_message_us(payload_b, lanes, lane_gbps)`.

``cfg`` is a :class:`FlashConfig`, a config name, or the dict of arrays returned by
``config_arrays`` (any entry may be an array; the fit and sweeps pass that form).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dse.errors import DseError, did_you_mean
from dse.units import GB, NS_PER_US, US_PER_S

__all__ = [
    "FlashConfig", "CONFIGS", "CELL_TIMINGS", "DEFAULT_CONSTANTS", "config", "constants",
    "page_type_mix", "unloaded_latency_us", "saturation_iops", "saturation_bw_gbps", "closed_loop",
    "open_loop_latency_us", "gc_write_amplification", "pcie_message_us",
]

# ----------------------------------------------------------------------------- host link
#: MQSim's PCIe model: 128-B TLP payload; 28 B per TLP = 20-B header + 6-B DLLP + 2-B PHY.
TLP_PAYLOAD_B = 128.0
TLP_OVERHEAD_B = 28.0
PCIE_TLP_EFFICIENCY = TLP_PAYLOAD_B / (TLP_PAYLOAD_B + TLP_OVERHEAD_B)
#: a read-request TLP: header and framing plus 4 B (MQSim PCIe_Link)
READ_REQUEST_B = TLP_OVERHEAD_B + 4.0
#: NVMe submission / completion queue entries and a doorbell write (NVMe 1.x; MQSim)
SQE_B, CQE_B, DOORBELL_B = 64.0, 16.0, 8.0
#: bytes of one translation entry read on a CMT miss (MQSim reads one sector)
MAP_READ_B = 512.0

# ----------------------------------------------------------------------------- channel
# ONFI NV-DDR2 command timings (ns) as MQSim's ONFI_Channel_NVDDR2 defaults them:
# tCS 20, tWC 25, tWB 100, tRR 20, tADL 70, tWPST 6, tWPSTH 15, tDBSY 500, tCALS 15.
_T_CS, _T_WC, _T_WB, _T_RR, _T_ADL, _T_WPST, _T_WPSTH, _T_DBSY, _T_CALS = 20, 25, 100, 20, 70, 6, 15, 500, 15
#: read command + 5 address cycles (one plane), and each extra plane (dummy busy + cycles)
READ_CMD_US = (_T_CS + 6 * _T_WC + _T_WB + _T_RR) / NS_PER_US
READ_CMD_PLANE_US = (_T_DBSY + 6 * _T_WC) / NS_PER_US
#: program command + address (one plane), and each extra plane
PROG_CMD_US = (_T_CS + 6 * _T_WC + _T_ADL + _T_WPST + _T_WPSTH + _T_WB) / NS_PER_US
PROG_CMD_PLANE_US = (5 * _T_WC + _T_ADL + _T_WPST + _T_CALS + _T_WB + _T_DBSY) / NS_PER_US
#: NVMe requests the device fetches at a time (MQSim Queue_Fetch_Size default)
QUEUE_FETCH_SIZE = 512
#: Euler-Mascheroni constant (harmonic-number asymptotics for the fork-join factor)
_EULER_GAMMA = 0.5772156649015329


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
    #: MQSim's transaction scheduler: a command goes only to an idle channel and pending
    #: data-outs go first, so chips with queued reads fall into rounds (module docstring).
    #: Configs read from MQSim files have it; the others model a controller that overlaps
    #: commands with other dies' transfers (cache read / die interleaving, assumption).
    read_rounds: bool = False
    queue_fetch_size: int = QUEUE_FETCH_SIZE
    source: str = ""

    @property
    def units(self) -> int:
        """Units that work in parallel: chips (dies too where they overlap)."""
        return self.channels * self.chips_per_channel * (self.dies_per_chip if self.dies_overlap else 1)

    @property
    def pcie_gbps(self) -> float:
        """Host-link payload bandwidth (GB/s) per direction after TLP framing."""
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
                        read_rounds=True,
                        source="results/reference/mqsim/configs/espresso_tlc_fob.xml (Espresso JBOF SSD, 8ch x 8 dies x 4 planes)"),
    "znand_like": _mk("znand_like", 8, 8, 1, 4, 16384, 96, 128, "ZNAND", 2.4, 3.938, 4,
                      read_rounds=True, source="results/reference/mqsim/configs/znand_like_fob.xml (SLC Z-NAND-like timings)"),
    "mqsim_default": _mk("mqsim_default", 8, 4, 2, 2, 8192, 256, 2048, "MLC", 0.333, 1.0, 4, ideal_mapping=False,
                         cmt_bytes=2 * 2**20, read_rounds=True, source="MQSim ssdconfig.xml as shipped (CMU-SAFARI/MQSim)"),
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


#: Uncalibrated defaults of the shared constants; the shipped calibration
#: (results/calibration/flash.toml) replaces them unless DSE_CALIBRATION=none.
DEFAULT_CONSTANTS: dict[str, float] = {
    # channel wait = k_ch x priority M/G/1 residual (1 = Poisson arrivals; the chips of one
    # channel are few and their requests correlated, so less is expected)
    "k_ch": 0.7,
    # chip queueing multiplier on the M/G/1 / MVA wait (1 = no correction)
    "k_q": 1.0,
    # random multi-plane merging: a page queued at the die joins the head's multi-plane
    # command with chance k_mp (planes - 1) / planes / pages_per_block (MQSim joins only
    # pages at the head's page offset in the block).  1 = uniform page offsets, pure
    # coincidence; the fit on the MQSim runs puts it at ~5: MQSim allocates pages in
    # arrival order, so the planes' write frontiers (and a fresh drive's first reads) move
    # in step and queued pages share offsets more often than by chance
    "k_mp": 1.0,
    # ... for programs (fitted ~3)
    "k_mp_w": 1.0,
    # (sequential merging has no constant: see _merge)
    # fork-join: a request of n pages waits H_n ** k_fj times the mean page wait.  Fixed:
    # fitted on the MQSim runs it goes to 0 (0.3 and 0.6 cost 0.2 and 1.0 MAPE points), as
    # the MVA page waits at a loaded chip already carry the spread of the slowest page
    "k_fj": 0.0,
    # sequential CMT sharing: a mapping read covers the requests arriving within
    # k_seqmap x its unloaded latency
    "k_seqmap": 2.0,
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


def _cmt_miss(c: FlashConfig) -> float:
    """Random-access CMT miss probability: 1 - covered share of the logical space (8-B
    entries, one per page)."""
    covered = c.cmt_bytes / 8.0 * c.page_bytes
    logical = c.capacity_bytes * (1.0 - c.op_ratio)
    return float(max(0.0, 1.0 - covered / max(logical, 1.0)))


def config_arrays(cfg) -> dict[str, Any]:
    """FlashConfig (or a name) -> the dict of arrays the model works on; a dict is
    returned as is.  Keys: units (chips working in parallel), channels, dies, planes,
    page_bytes, pages_per_block, tr_mean / tprog_mean / tr2_mean / tprog2_mean (us, us^2,
    over the page-type mix), tbers, ch_bw (channel bytes per us), pcie_bw (raw link
    bytes per us, all lanes), lanes, p_map (CMT miss probability of a random request),
    op_ratio, fetch (NVMe fetch window), rounds (1 with read rounds, else 0)."""
    if isinstance(cfg, dict):
        # the dict form may leave out what it does not vary: no page-type spread, one die
        # per chip, no mapping misses, 4 PCIe lanes, MQSim's fetch window
        out = dict(cfg)
        out.setdefault("tr2_mean", np.square(np.asarray(out["tr_mean"], np.float64)))
        out.setdefault("tprog2_mean", np.square(np.asarray(out["tprog_mean"], np.float64)))
        for key, default in (("dies", 1), ("p_map", 0.0), ("lanes", 4), ("fetch", QUEUE_FETCH_SIZE), ("rounds", 0.0),
                             ("tbers", 0.0), ("pages_per_block", 256)):
            out.setdefault(key, default)
        return out
    c = config(cfg)
    mix = page_type_mix(c.cell, c.pages_per_block)
    return {
        "units": c.units, "channels": c.channels, "dies": c.dies_per_chip if not c.dies_overlap else 1,
        "planes": c.planes_per_die, "page_bytes": c.page_bytes, "pages_per_block": c.pages_per_block,
        "tr_mean": float(np.dot(mix, c.tr_us)), "tprog_mean": float(np.dot(mix, c.tprog_us)),
        "tr2_mean": float(np.dot(mix, np.square(c.tr_us))), "tprog2_mean": float(np.dot(mix, np.square(c.tprog_us))),
        "tbers": c.tbers_us, "ch_bw": c.channel_gbps * GB / US_PER_S,
        "pcie_bw": c.pcie_lane_gbps * c.pcie_lanes * GB / US_PER_S, "lanes": c.pcie_lanes,
        "p_map": 0.0 if c.ideal_mapping else _cmt_miss(c), "op_ratio": c.op_ratio, "fetch": c.queue_fetch_size,
        "rounds": 1.0 if c.read_rounds else 0.0,
    }


def pcie_message_us(payload_b, lanes, lane_gbps) -> np.ndarray:
    """Transfer time (us) of one PCIe message of ``payload_b`` bytes the way MQSim models
    the link: 128-B TLPs, 28 B of framing each, bytes spread over the lanes."""
    return _msg_us(payload_b, np.asarray(lanes, float), np.asarray(lanes, float) * np.asarray(lane_gbps, float) * GB / US_PER_S)


def _msg_us(payload_b, lanes, raw_bw) -> np.ndarray:
    if np.ndim(raw_bw) == 0 and not np.isfinite(raw_bw):
        return np.float64(0.0)  # a transparent link (e.g. a model's own link station instead)
    p = np.asarray(payload_b, np.float64)
    full = np.floor(p / TLP_PAYLOAD_B)
    rem = p - full * TLP_PAYLOAD_B
    wire = full * (TLP_PAYLOAD_B + TLP_OVERHEAD_B) + np.where(rem > 0, rem + TLP_OVERHEAD_B, 0.0)
    lanes = np.asarray(lanes, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isfinite(raw_bw), np.ceil(wire / lanes) * lanes / raw_bw, 0.0)


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


# ----------------------------------------------------------------------------- mechanism
def _request(a: dict[str, Any], size_b, rf, seq, wa) -> dict[str, Any]:
    """Per-request quantities (us): pages, channel transfer per page, PCIe service per
    direction, CMT miss probability."""
    f = np.float64
    size, rf, seq, wa = np.asarray(size_b, f), np.asarray(rf, f), np.asarray(seq, bool), np.asarray(wa, f)
    page = np.asarray(a["page_bytes"], f)
    n = np.maximum(1.0, np.ceil(size / page))
    x = np.minimum(size, page) / np.asarray(a["ch_bw"], f)
    lanes = np.asarray(a.get("lanes", 4), f)
    bw = np.asarray(a["pcie_bw"], f)
    with np.errstate(divide="ignore", invalid="ignore"):
        rreq = np.where(np.isfinite(bw), np.ceil(READ_REQUEST_B / lanes) * lanes / bw, 0.0)
    # device -> host: SQE fetch request, data (reads) or data fetch request (writes), CQE
    d2h_r = rreq + _msg_us(size, lanes, bw) + _msg_us(CQE_B, lanes, bw)
    d2h_w = 2 * rreq + _msg_us(CQE_B, lanes, bw)
    # host -> device: two doorbells and the SQE, plus the data of a write
    h2d_r = 2 * _msg_us(DOORBELL_B, lanes, bw) + _msg_us(SQE_B, lanes, bw)
    h2d_w = h2d_r + _msg_us(size, lanes, bw)
    shape = np.broadcast(n, rf, seq, wa).shape
    return {
        "n": n, "x": x, "x_map": MAP_READ_B / np.asarray(a["ch_bw"], f), "rf": rf, "seq": seq, "wa": wa,
        "n_ch": np.ceil(n / np.asarray(a["channels"], f)),
        "d2h_r": d2h_r, "d2h_w": d2h_w, "h2d_r": h2d_r, "h2d_w": h2d_w,
        "d2h": rf * d2h_r + (1 - rf) * d2h_w, "h2d": rf * h2d_r + (1 - rf) * h2d_w,
        "p_map": np.broadcast_to(np.asarray(a["p_map"], f), shape) if np.ndim(a["p_map"]) == 0 else np.asarray(a["p_map"], f),
        "size": size,
    }


def _gc_us_per_page(wa, tr, tp, xt, tbers, pages_per_block):
    """Garbage-collection time per host page written (us) at write amplification ``wa``
    (wa > 1, a drive in steady state): wa - 1 page moves (read + transfer out and in +
    program) and the erase share of the wa pages written."""
    return np.where(wa > 1.0, (wa - 1.0) * (READ_CMD_US + tr + 2 * xt + PROG_CMD_US + tp)
                    + wa * np.asarray(tbers, np.float64) / np.asarray(pages_per_block, np.float64), 0.0)


def _harmonic(n) -> np.ndarray:
    n = np.asarray(n, np.float64)
    return np.log(n) + _EULER_GAMMA + 0.5 / n


def _round_cap(wm1, n_r, x, pm, x_map, sd_tr, rounds):
    """Data-out of the other ``wm1`` chips of a channel that a read op waits for in a full
    round: ``xbar`` (data-out + command per read op, over ``n_r`` page reads of ``x`` us and
    ``pm`` mapping reads of ``x_map`` us), thinned where the array times spread (TLC page
    types): only chips finishing within about one transfer of each other meet, a share
    ``1 / (1 + sd(tR) / xbar)`` (1 for equal tR, as MLC/SLC).  0 without rounds."""
    xbar = (n_r * x + pm * x_map) / np.maximum(n_r + pm, 1e-300) + READ_CMD_US
    return rounds * wm1 * xbar / (1.0 + sd_tr / xbar)


def _round_wait(capb, rho0, c):
    """Read-round wait per read op: ``capb rho**2`` where ``rho = rho0 + c rho**2`` is the
    chip utilization with the wait included (``rho0`` without it; ``c rho**2`` what the
    wait adds), the smaller root, at most 1 where the wait would saturate the chip."""
    disc = np.maximum(1.0 - 4.0 * c * rho0, 0.0)
    rho = np.minimum(2.0 * rho0 / (1.0 + np.sqrt(disc)), 1.0)
    return capb * rho * rho


def _stations(a, r, lam, k, q_die, qd=None, rho_q=0.0, p_join=0.0):
    """Chip and channel service at request rate ``lam`` (per us) with ``q_die`` pages
    waiting per die (multi-plane merging), ``rho_q`` the chip utilization that sets their
    read / program shares (:func:`_queued_shares`) and ``p_join`` a stream's read join
    chance (:func:`_seq_read_join`).  ``qd``: closed loop (waits are those seen by an
    arrival among qd - 1 others)."""
    f = np.float64
    lam = np.asarray(lam, f)
    n, x, rf, wa = r["n"], r["x"], r["rf"], r["wa"]
    units = np.asarray(a["units"], f)
    C = np.asarray(a["channels"], f)
    P = np.asarray(a["planes"], f)
    D = np.asarray(a.get("dies", 1), f)
    W = units / C  # chips per channel
    tr, tp = np.asarray(a["tr_mean"], f), np.asarray(a["tprog_mean"], f)
    seen = 1.0 if qd is None else np.maximum(qd - 1.0, 0.0) / np.maximum(qd, 1.0)
    map0 = READ_CMD_US + tr + r["x_map"]
    pm = _map_reads(a, r, lam * seen, k)
    gc = _gc_us_per_page(wa, tr, tp, x, a["tbers"], a["pages_per_block"])
    sd_tr = np.sqrt(np.maximum(np.asarray(a["tr2_mean"], f) - tr * tr, 0.0))
    lam_chip = lam * (n + pm) / units
    q = np.asarray(q_die, f)
    ppb = a["pages_per_block"]
    sh_r, sh_w = _queued_shares(rf, rho_q)
    m_r = _merge(r["seq"], P, q, sh_r, k, True, ppb, rf, p_join)
    m_w = _merge(r["seq"], P, q, sh_w, k, False, ppb, 1 - rf)
    t_rc = READ_CMD_US + (m_r - 1) * READ_CMD_PLANE_US
    t_pc = PROG_CMD_US + (m_w - 1) * PROG_CMD_PLANE_US
    # channel: data out (high priority), commands and data in (low priority)
    lam_pg, lam_map = lam * n / C, lam * pm / C
    u_out = lam_pg * rf * x + lam_map * r["x_map"]
    u_ch = u_out + lam_pg * rf * t_rc / m_r + lam_pg * (1 - rf) * (t_pc / m_w + x) + lam_map * READ_CMD_US
    res = 0.5 * (lam_pg * rf * (x**2 + t_rc**2 / m_r) + lam_pg * (1 - rf) * (t_pc + m_w * x) ** 2 / m_w
                 + lam_map * (r["x_map"] ** 2 + READ_CMD_US**2))
    w_ch = np.minimum(k["k_ch"] * res * seen / (1 - np.clip(u_out * seen, 0, 0.999)), (W - 1) * (x + READ_CMD_US))
    # chip occupancy per op (the wait for the channel holds the chip)
    s_r = (t_rc + tr) / m_r + x + w_ch + w_ch / m_r
    s_w = (t_pc + tp) / m_w + x + w_ch / m_w + gc
    s_map = map0 + 2 * w_ch
    # read rounds: each read op waits for the data-out of the chips in step with it
    nr = n * rf + pm
    capb = np.maximum(_round_cap(W - 1, n * rf, x, pm, r["x_map"], sd_tr, np.asarray(a.get("rounds", 0.0), f)) - w_ch,
                      0.0)
    rho0 = lam_chip * seen * (n * (rf * s_r + (1 - rf) * s_w) + pm * s_map) / (n + pm)
    w_sy = _round_wait(capb, rho0, lam * seen * nr / units * capb)
    s_r, s_map = s_r + w_sy, s_map + w_sy
    s_mean = (n * (rf * s_r + (1 - rf) * s_w) + pm * s_map) / (n + pm)
    v_r, v_w = s_r - tr / m_r, s_w - tp / m_w
    e2 = (n * (rf * (np.asarray(a["tr2_mean"], f) / m_r**2 + 2 * tr / m_r * v_r + v_r**2)
               + (1 - rf) * (np.asarray(a["tprog2_mean"], f) / m_w**2 + 2 * tp / m_w * v_w + v_w**2))
          + pm * s_map**2) / (n + pm)
    rho = lam_chip * s_mean
    rho_s = np.clip(rho * seen, 0, 0.9999)
    e2_q = np.where(r["seq"], _stream_e2(e2, s_mean, _stream_ca2(n, units)), e2)
    w_chip = k["k_q"] * lam_chip * seen * e2_q / (2 * (1 - rho_s))
    rho_r = np.clip(lam_chip * (n * rf * s_r + pm * s_map) / (n + pm) * seen, 0, 0.9999)
    return {"pm": pm, "s_r": s_r, "s_w": s_w, "s_map": s_map, "s_mean": s_mean, "e2": e2, "rho": rho, "rho_r": rho_r,
            "rho_s": rho_s, "w_chip": w_chip, "w_ch": w_ch, "w_sy": w_sy, "u_ch": u_ch, "t_rc": t_rc, "t_pc": t_pc, "m_r": m_r,
            "m_w": m_w, "map0": map0, "gc": gc}


def _path(a, r, s) -> np.ndarray:
    """Latency of a request that finds no queue at chips or PCIe (channel waits at the
    current load included): host messages, command, array time, the data of the pages
    that share a channel one after the other, and the mapping read."""
    rf, x, nch = r["rf"], r["x"], r["n_ch"]
    tr, tp = np.asarray(a["tr_mean"], np.float64), np.asarray(a["tprog_mean"], np.float64)
    read = r["h2d_r"] + r["d2h_r"] + s["t_rc"] + tr + nch * x + s["w_ch"] * (1 + 1 / s["m_r"]) + s["w_sy"]
    write = r["h2d_w"] + r["d2h_w"] + nch * (s["t_pc"] + x) + tp + s["gc"] + s["w_ch"] / s["m_w"]
    return rf * read + (1 - rf) * write + s["pm"] * s["s_map"]


def _fork_join(r, units, k) -> np.ndarray:
    n = r["n"]
    fj = np.where(n > 1, _harmonic(np.minimum(n, units)) ** k["k_fj"], 1.0)
    # a pure sequential stream keeps its pages in step; mixed reads and writes do not
    mix = 4.0 * r["rf"] * (1.0 - r["rf"])
    return np.where(r["seq"], 1.0 + mix * (fj - 1.0), fj)


def _map_reads(a, r, lam, k):
    """Mapping reads per request (CMT misses): a random request misses; a sequential
    stream shares one read among the requests arriving (rate ``lam``) while it is in
    flight (``k_seqmap`` x its unloaded latency)."""
    map0 = READ_CMD_US + np.asarray(a["tr_mean"], np.float64) + r["x_map"]
    return np.where(r["seq"], r["p_map"] / (1.0 + lam * k["k_seqmap"] * map0), r["p_map"])


def _open_stations(a, r, lam, k, wait):
    """_stations in open loop when pages wait ``wait`` us at a die: the pages waiting
    (Little) and a stream's read joins follow from it, the queue's read / program shares
    from the chip utilization at the page shares (as the closed loop's two steps)."""
    f = np.float64
    units, D = np.asarray(a["units"], f), np.asarray(a.get("dies", 1), f)
    fetch = np.asarray(a.get("fetch", QUEUE_FETCH_SIZE), f)
    ops = (r["n"] + _map_reads(a, r, lam, k)) / units  # chip ops per request per chip
    q = np.minimum(lam * ops * wait, fetch * ops) / D
    s0 = _stations(a, r, lam, k, q, p_join=_seq_read_join(lam * r["n"], units * D, wait, r["rf"], 0.0))
    rho = s0["rho_s"]
    return _stations(a, r, lam, k, q, rho_q=rho, p_join=_seq_read_join(lam * r["n"], units * D, wait, r["rf"], rho))


def _wait_root(wait_of, w_max, iters: int):
    """The root of ``W = W'(W)`` on ``(0, w_max]`` for a chip wait ``W' = wait_of(W)``
    that falls as W rises (more merging, less utilization): Illinois regula falsi on
    ``G(u) = log min(W'(e^u), w_max) - u`` over ``u`` from ``log w_max - 46`` (a wait
    1e-20 of the bound: 0 where even that is above W') to ``log w_max`` (G <= 0 there);
    ``iters`` evaluations after the two ends.  The log tames the chip wait's pole: W'
    spans orders of magnitude near saturation, where regula falsi on W itself stalls."""
    w_max = np.array(w_max, dtype=np.float64)
    hi = np.log(w_max)
    lo = hi - 46.0

    def g(u):
        with np.errstate(divide="ignore"):
            return np.log(np.minimum(wait_of(np.exp(u)), w_max)) - u

    g_lo, g_hi = g(lo), g(hi)
    zero = ~(g_lo > 0)  # no wait: even the smallest one exceeds what it implies
    g_lo = np.where(zero, 1.0, g_lo)
    at_hi = g_hi >= 0  # the bound itself (a full fetch window)
    # a point's root is kept from the evaluation that first meets the tolerance, so that
    # it does not depend on the other points solved with it
    u_out = np.where(at_hi, hi, -np.inf)
    kept = zero | at_hi
    side = np.zeros(hi.shape)  # +1: lo kept last time, -1: hi kept last time
    for _ in range(iters):
        if kept.all():
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            c = (lo * g_hi - hi * g_lo) / (g_hi - g_lo)
        c = np.where((c > lo) & (c < hi), c, 0.5 * (lo + hi))
        g_c = g(c)
        up = g_c > 0
        lo, g_lo = np.where(up, c, lo), np.where(up, g_c, np.where(side > 0, 0.5 * g_lo, g_lo))
        hi, g_hi = np.where(up, hi, c), np.where(up, np.where(side < 0, 0.5 * g_hi, g_hi), g_c)
        side = np.where(up, -1.0, 1.0)
        # W = W'(W) to the tolerance, or a bracket that narrow (a root at a kink)
        new = ~kept & ((np.abs(g_c) <= _WAIT_TOL) | (hi - lo <= _WAIT_TOL * (1.0 + np.abs(c))))
        u_out = np.where(new, c, u_out)
        kept |= new
    with np.errstate(divide="ignore", invalid="ignore"):
        u_end = np.where(g_lo - g_hi > 0, (lo * g_hi - hi * g_lo) / (g_hi - g_lo), hi)
    return np.where(zero, 0.0, np.exp(np.where(kept, u_out, u_end)))


def _open_wait(a, r, lam, k):
    """The page wait at a die in open loop: the root of ``W = W'(W)`` (:func:`_wait_root`)
    with W' the chip wait when the pages W implies merge (:func:`_open_stations`), up to
    the wait of a full fetch window (Little).  A fixed point, not an iteration from an
    empty queue: a stream (or a mix whose programs merge) above its capacity without
    merging needs a standing backlog to merge, and that backlog exists only near
    saturation, which an iteration from zero overshoots."""
    lam = np.asarray(lam, np.float64)
    fetch = np.asarray(a.get("fetch", QUEUE_FETCH_SIZE), np.float64)
    shape = np.broadcast(lam, r["n"], r["rf"]).shape
    w_max = np.broadcast_to(fetch / np.maximum(lam, 1e-300), shape)  # finite at zero load
    return _wait_root(lambda w: _open_stations(a, r, lam, k, w)["w_chip"], w_max, _OPEN_ROOT_ITERS)


def _open(a, r, lam, k):
    """Open loop at request rate ``lam`` (per us): (latency us, capacity exceeded)."""
    s = _open_stations(a, r, lam, k, _open_wait(a, r, lam, k))
    lam = np.asarray(lam, np.float64)
    units = np.asarray(a["units"], np.float64)
    rf, pm = r["rf"], s["pm"]
    # reads (and mapping reads) go before queued writes at a chip (non-preemptive priority)
    w_rd = s["w_chip"] * (1 - s["rho_s"]) / (1 - s["rho_r"])
    w_wr = s["w_chip"] / (1 - s["rho_r"])
    fj = _fork_join(r, units, k)
    w_map = s["w_chip"] * (1 - s["rho_s"])  # mapping reads go first: the residual only
    w_flash = rf * fj * w_rd + (1 - rf) * fj * w_wr + pm * w_map
    rho_d, rho_h = lam * r["d2h"], lam * r["h2d"]
    w_d = lam * r["d2h"] ** 2 / (2 * (1 - np.clip(rho_d, 0, 0.9999)))
    w_h = lam * r["h2d"] ** 2 / (2 * (1 - np.clip(rho_h, 0, 0.9999)))
    lat = _path(a, r, s) + w_flash + s["w_ch"] * (fj - 1) + w_d + w_h
    over = (s["rho"] >= 1) | (rho_d >= 1) | (rho_h >= 1) | (s["u_ch"] >= 1)
    return lat, over


def _closed_response(a, r, x, qd, k) -> np.ndarray:
    """Closed loop at queue depth ``qd``, read as written: the throughput ``qd / R(X)``
    that Little's law gives for the response time ``R(X)`` at a trial throughput ``X``
    (0 where some station has no finite response).  Schweitzer approximate MVA over
    requests whose pages fork to random chips (a request waits H_n ** k_fj page waits),
    PCIe d2h / h2d FIFO stations, and the path as delay; an arrival sees (qd - 1) / qd of
    each queue.  A sequential stream's pages go to consecutive chips, so it queues only once
    qd x n exceeds the chips.  The closed-loop throughput is the X with ``qd / R(X) = X``
    (:func:`_closed` solves it; the tests solve this form by bisection)."""
    f = np.float64
    qd = np.asarray(qd, f)
    n, rf = r["n"], r["rf"]
    units = np.asarray(a["units"], f)
    D = np.asarray(a.get("dies", 1), f)
    seq = r["seq"]
    fj = _fork_join(r, units, k)
    mix = 4.0 * rf * (1.0 - rf)
    frac = np.maximum(qd - 1.0, 0.0) / np.maximum(qd, 1.0)
    q_seq = np.where(seq, np.maximum(qd * n / units - 1.0, 0.0) / D, 0.0)
    x = np.asarray(x, f)
    # pages waiting per die (multi-plane merging): a stream's from its depth, random ones
    # from the chip wait without merging; their read / program shares from that step's
    # chip utilization, a stream's read joins from that step's wait
    q_die, rho_q, p_join = q_seq, 0.0, 0.0
    for step in range(2):
        s = _stations(a, r, x, k, q_die, qd=qd, rho_q=rho_q, p_join=p_join)
        pm = s["pm"]
        v = (n + pm) / units  # chip ops per request per chip
        svc = s["s_mean"]
        resid = 0.5 * (1 + np.maximum(s["e2"] / np.maximum(svc, 1e-12) ** 2 - 1, 0)) * svc
        resid_q = np.where(seq, _stream_resid(s["e2"], np.maximum(svc, 1e-12), _stream_ca2(n, units)), resid)
        busy = frac * x * v * svc
        free = 1.0 - k["k_q"] * busy
        with np.errstate(divide="ignore", invalid="ignore"):
            w_rand = np.where(free > 0, k["k_q"] * busy * resid_q / free, np.inf)
        z = _path(a, r, s)
        chip_path = np.maximum(z - r["d2h"] - r["h2d"] - pm * s["s_map"], svc)
        w_seq = np.maximum(qd * n / units * svc - chip_path, 0.0)
        if step == 0:
            q_die = np.where(seq, q_seq, np.minimum(x * v * w_rand, qd * v) / D)
            rho_q = k["k_q"] * busy
            p_join = _seq_read_join(x * n, units * D, w_seq, rf, rho_q)
    with np.errstate(divide="ignore", invalid="ignore"):
        fd, fh = 1.0 - frac * x * r["d2h"], 1.0 - frac * x * r["h2d"]
        w_d = np.where(fd > 0, frac * x * r["d2h"] ** 2 / fd, np.inf)
        w_h = np.where(fh > 0, frac * x * r["h2d"] ** 2 / fh, np.inf)
        # random pages: reads go first at a chip (the stream's mix keeps the FCFS wait)
        phi = _priority_factor(rf, k["k_q"] * busy, k["k_q"] * s["rho_r"])
        w = np.where(seq, (1 - mix) * w_seq + mix * w_rand, w_rand * phi)
        # mapping reads go first at a chip (MQSim serves the mapping queue before user
        # reads): they wait only for the op in service
        resp = z + fj * w + pm * busy * resid + w_d + w_h
        return np.where(np.isfinite(resp), qd / resp, 0.0)


# ----------------------------------------------------------------------------- fast closed loop
# _closed_response recomputes every station for each trial X.  _closed_solve computes the
# parts that do not depend on X once per point (_closed_prep) and writes the rest as
# functions of the channel wait.  The root is found as the fixed point of a frozen-model
# map (_closed_map): at a trial X every term of R keeps its value at X except the queue of
# the tightest pole (a chip, or a PCIe direction), kept exact as c X / (1 - b X); the root
# Y(X) of X R_frozen(X) = qd is a quadratic's, below that pole, and equals X exactly at the
# closed-loop throughput.  Y varies slowly with X, so a secant on Y(X) - X (safeguarded by
# a bracket) converges in ~4 evaluations; converged points leave the working set, and the
# few slow ones of all slices are finished together.  tests/test_flash_fast.py pins the
# result to a bisection on _closed_response.

#: points per slice of the vectorized solvers (temporaries stay in the cache)
_CHUNK = 8192
#: ... of the open loop (no per-iteration bookkeeping, so bigger slices pay: measured with
#: `dse bench flash`, 16384 gave ~12 % more points/s, the closed loop ~6 % fewer)
_OPEN_CHUNK = 16384
#: relative fixed-point residual |Y(X) - X| / X at which the closed loop counts as solved
#: (1e-8: the throughput, returned as Y(X), then lies within ~1e-8 of the root -- far
#: inside the model's accuracy; 1e-10 cost about half an evaluation more per point)
_CLOSED_TOL = 1e-8
#: first guesses stay below this share of the channels' data-out pole (measured on the
#: espresso bench points: 0.9-0.97 give the fewest map evaluations, 9.3 -> 7.4 per point)
_GUESS_CH_POLE = 0.97
#: iterations per slice before its unsolved points wait for the common final round
_CLOSED_SLICE_ITERS = 8
_CLOSED_MAX_ITERS = 200


def _take(v, idx):
    return v[idx] if np.ndim(v) else v


def _mix(g, read, write):
    """``rf * read + (1 - rf) * write`` for the points of ``g``, skipping a side that no
    point has."""
    if not g["has_w"]:
        return read
    if not g["has_r"]:
        return write
    return g["rf"] * read + g["wf"] * write


def _closed_prep(b: dict[str, Any], k: dict[str, float], seq: bool) -> dict[str, Any]:
    """Per-point constants of the closed loop (flat arrays or scalars) for the points in
    ``b``, all sequential or all random (the formulas of _stations / _closed_response with
    everything independent of X collected)."""
    n, xt, rf, qd = b["n"], b["x"], b["rf"], b["qd"]
    units, C, P, D = b["units"], b["channels"], b["planes"], b["dies"]
    tr, tp, tr2, tp2 = b["tr_mean"], b["tprog_mean"], b["tr2_mean"], b["tprog2_mean"]
    wf = 1.0 - rf
    g: dict[str, Any] = {"seq": seq, "rf": rf, "wf": wf, "qd": qd, "n": n, "k_q": k["k_q"],
                         "has_r": bool(np.any(rf != 0)), "has_w": bool(np.any(rf != 1))}
    frac = np.maximum(qd - 1.0, 0.0) / np.maximum(qd, 1.0)  # share of a queue an arrival sees
    x_map = b["x_map"]
    map0 = READ_CMD_US + tr + x_map
    wa = b["wa"]
    gc = _gc_us_per_page(wa, tr, tp, xt, b["tbers"], b["pages_per_block"])
    p_map = b["p_map"]
    g.update(has_pm=bool(np.any(p_map != 0)), p_map=p_map, map0=map0, frac=frac, d2h=b["d2h"], h2d=b["h2d"])
    g["cap"] = (units / C - 1) * (xt + READ_CMD_US)  # channel wait bound: the other chips' transfers
    # read rounds: the other chips' data-out per read op (mapping reads included)
    g["nr"] = n * rf + p_map if not seq else None
    sd_tr = np.sqrt(np.maximum(tr2 - tr * tr, 0.0))
    g["capb"] = _round_cap(units / C - 1, n * rf, xt, p_map, x_map, sd_tr, b["rounds"])
    g["has_sy"] = bool(np.any((n * rf + p_map != 0) & (b["rounds"] != 0)))
    g["mu_a"] = frac * n * rf * xt / C  # seen channel data-out utilization per unit X: pages
    g["mu_b"] = frac * x_map / C  # ... and mapping reads
    g["kap_b"] = k["k_ch"] * frac * 0.5 * (x_map**2 + READ_CMD_US**2) / C  # channel residual per mapping read
    g["c_b"] = frac / units  # chip busy share per unit X and unit n x service
    fj = _fork_join({"n": n, "rf": rf, "seq": np.asarray(seq)}, units, k)
    mix = 4.0 * rf * wf
    g["fjmix_kq"] = (fj * mix if seq else fj) * k["k_q"]  # weight of the chip queue (the pole term)
    path_r = b["h2d_r"] + b["d2h_r"] + tr + b["n_ch"] * xt
    path_w = b["h2d_w"] + b["d2h_w"] + b["n_ch"] * xt + tp + gc
    x_ub = qd / _mix(g, path_r + READ_CMD_US, path_w + b["n_ch"] * PROG_CMD_US)  # R >= z: X <= qd / z
    # PCIe waits count unless they stay below 1e-13 of the response at any feasible X: at
    # X <= x_ub a direction's utilization is at most rho = frac x_ub t (t its message
    # time), its wait at most rho t / (1 - rho), and the response at least z = qd / x_ub.
    # (A link made transparent with a huge bandwidth, as espresso's, has rho ~ 1e-8 but
    # waits ~ 1e-20 of the response: the wait, not rho, is what must be negligible.)
    t_pcie = np.maximum(b["d2h"], b["h2d"])
    rho_pcie = frac * x_ub * t_pcie
    with np.errstate(divide="ignore", invalid="ignore"):
        pcie_share = rho_pcie / (1.0 - rho_pcie) * t_pcie * x_ub / qd
    g["has_pcie"] = bool(np.any((rho_pcie >= 0.5) | ~(pcie_share <= 1e-13)))
    with np.errstate(divide="ignore"):
        g["x_hi"] = np.minimum(x_ub, 1.0 / (frac * np.maximum(b["d2h"], b["h2d"]))) if g["has_pcie"] else x_ub

    g.update(xt=xt, tr=tr, tp=tp, tr2=tr2, tp2=tp2, gc=gc, path_r=path_r, path_w=path_w, n_ch=b["n_ch"])
    g["kap_n"] = k["k_ch"] * frac * 0.5 * n / C
    if seq:
        # a stream's pages waiting per die follow from its depth; their read / program
        # shares, and so the merging, from the chip utilization (_chip_terms): the terms
        # at an idle chip here
        g["q_seq"] = np.maximum(qd * n / units - 1.0, 0.0) / D
        g["P"], g["dies_total"] = P, units * D
        g.update(_service_terms(g, *_seq_merges(g, 0.0, 0.0)))
        g["k_pm"] = k["k_seqmap"] * map0 * frac  # shared mapping reads: pm = p_map / (1 + X k_pm)
        g["q_n"] = qd * n / units
        g["fj_seq"] = fj * (1.0 - mix)
        g["ca2"] = _stream_ca2(n, units)
        g["has_mix"] = bool(np.any(mix != 0))
        g["sy_wm1"], g["sy_sd"], g["x_map"], g["sy_on"] = units / C - 1, sd_tr, x_map, b["rounds"]
        g["nrf"] = n * rf
    else:
        # random pages: a first pass without merging gives the chip queue, which sets it
        t0 = _service_terms(g, 1.0, 1.0)
        pm = p_map
        g["kap0"] = t0["kap"] + pm * g["kap_b"]
        g["mu"] = g["mu_a"] + pm * g["mu_b"]
        g["m00"], g["m10"] = t0["m0"] + pm * map0, t0["m1"] + 2 * pm
        g["e00"], g["e10"], g["e20"] = t0["e0"] + pm * map0**2, t0["e1"] + 4 * pm * map0, t0["e2"] + 4 * pm
        g["z00"] = t0["z0"] + pm * map0
        g["inv_npm"] = 1.0 / (n + pm)
        g["v"] = (n + pm) / units
        g["qd_v"] = qd * g["v"]
        g["inv_d"] = 1.0 / D
        ppb = b["pages_per_block"]
        g["kr"], g["kw"], g["P"] = _rand_merge(k["k_mp"], P, ppb), _rand_merge(k["k_mp_w"], P, ppb), P
        g["pm_kap_b"] = pm * g["kap_b"]
    return g


def _service_terms(g: dict[str, Any], m_r, m_w) -> dict[str, Any]:
    """For given multi-plane merging (pages per read / program command): the channel
    residual per unit X (kap) and, as polynomials in the channel wait w, n x chip service
    (m0 + m1 w), n x its second moment (e0 + e1 w + e2 w^2), the path (z0 + z1 w) and its
    chip part (cp0 + z1 w)."""
    n, xt, tr, tp, tr2, tp2, gc = g["n"], g["xt"], g["tr"], g["tp"], g["tr2"], g["tp2"], g["gc"]
    t_rc = READ_CMD_US + (m_r - 1.0) * READ_CMD_PLANE_US
    t_pc = PROG_CMD_US + (m_w - 1.0) * PROG_CMD_PLANE_US
    i_r, i_w = 1.0 / m_r, 1.0 / m_w
    ar = 1.0 + i_r
    vr0, vw0 = t_rc * i_r + xt, t_pc * i_w + xt + gc  # service less the array time
    z0 = _mix(g, g["path_r"] + t_rc, g["path_w"] + g["n_ch"] * t_pc)
    return {
        "kap": g["kap_n"] * _mix(g, xt**2 + t_rc**2 * i_r, (t_pc + m_w * xt) ** 2 * i_w),
        "m0": n * _mix(g, vr0 + tr * i_r, vw0 + tp * i_w), "m1": n * _mix(g, ar, i_w),
        "e0": n * _mix(g, tr2 * i_r**2 + 2 * tr * i_r * vr0 + vr0**2, tp2 * i_w**2 + 2 * tp * i_w * vw0 + vw0**2),
        "e1": n * _mix(g, 2 * ar * (tr * i_r + vr0), 2 * i_w * (tp * i_w + vw0)),
        "e2": n * _mix(g, ar * ar, i_w * i_w),
        "z0": z0, "z1": _mix(g, ar, i_w), "cp0": z0 - g["d2h"] - g["h2d"],
        "sy_l": tr * i_r + vr0, "sy_a": ar,  # a read page's array + service less the waits; wait factor
    }


def _seq_merges(g: dict[str, Any], rho, p_join):
    """A stream's pages per read and per program command at chip utilization ``rho`` and
    read join chance ``p_join``."""
    sh_r, sh_w = _queued_shares(g["rf"], rho)
    return (_merge(True, g["P"], g["q_seq"], sh_r, None, True, None, g["rf"], p_join),
            _merge(True, g["P"], g["q_seq"], sh_w, None, False, None, g["wf"]))


def _resid(e2, svc):
    """Mean residual service at a chip, 0.5 E[S^2] / E[S] (at least half the mean)."""
    return 0.5 * np.maximum(e2 / svc, svc)


def _priority_factor(rf, rho, rho_r):
    """Mean page wait at a chip that serves reads (and mapping reads, utilization
    ``rho_r``) before queued programs, over the FCFS wait at the same utilization ``rho``:
    non-preemptive priority M/G/1 (Cobham), reads wait ``W0 / (1 - rho_r)``, programs
    ``W0 / ((1 - rho_r)(1 - rho))``; weighted by the read share ``rf`` of the pages,
    ``(1 - rf rho) / (1 - rho_r)`` (1 for reads only; short reads first lower the mean)."""
    return (1.0 - rf * np.minimum(rho, 0.9999)) / (1.0 - np.minimum(rho_r, 0.9999))


def _queued_shares(rf, rho):
    """Shares of reads and programs among the pages queued at a die when reads go first
    (:func:`_priority_factor`; MQSim's scheduler serves a chip's reads before its
    programs): a program waits ``1 / (1 - rho)`` times as long as a read, so by Little's
    law the queue holds programs and reads as ``(1 - rf) / (1 - rho) : rf`` -- at depth
    the queue is mostly programs (MQSim, 256 KiB 70/30 at QD64 on mqsim_default: reads wait
    0.8-0.9 ms, programs 49-52 ms, random or sequential).  ``rho = 0`` gives the page
    shares ``rf``, ``1 - rf``."""
    r_q = rf * (1.0 - np.clip(rho, 0.0, 0.9999))
    tot = r_q + (1.0 - rf)
    return r_q / tot, (1.0 - rf) / tot


def _seq_read_join(pages_per_us, dies_total, wait, rf, rho):
    """Chance that the next page of a stream's page offset on a die (``dies_total`` pages
    later: CWDP fills every die before the next plane) arrives while a read command's
    head waits at the chip: ``exp(-gap / W_r)`` for an exponential wait of mean ``W_r``,
    the reads' part of the mean page wait ``wait`` under reads-first priority
    (Cobham: ``W_r = wait x share_r / rf``, :func:`_queued_shares`); 0 without a wait."""
    sh_r, _ = _queued_shares(rf, rho)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        w_r = wait * np.where(rf > 0, sh_r / rf, 1.0)
        return np.where(w_r > 0, np.exp(-dies_total / (pages_per_us * w_r)), 0.0)


def _stream_ca2(n, units):
    """Squared coefficient of variation of a sequential stream's page arrivals at one chip:
    the stream visits the chips in turn, so a chip gets every ``units / n``-th request's
    page -- Erlang thinning, ``n / units`` (random placement: 1, Poisson)."""
    return np.minimum(np.asarray(n, np.float64) / np.asarray(units, np.float64), 1.0)


def _stream_e2(e2, svc, ca2):
    """The second moment ``E[S^2]`` a chip queue fed by a sequential stream acts with
    (Kingman, G/G/1): the M/G/1 residual ``0.5 E[S^2] / E[S] = 0.5 (1 + cs^2) E[S]`` becomes
    ``0.5 (ca^2 + cs^2) E[S]`` -- a stream of mixed reads and programs queues only for the
    spread of their service times, not for the spread of its arrivals."""
    return np.maximum(e2 - (1.0 - ca2) * svc * svc, 0.0)


def _stream_resid(e2, svc, ca2):
    """:func:`_stream_e2`'s mean residual service, ``0.5 E[S^2]_stream / E[S]``."""
    return 0.5 * _stream_e2(e2, svc, ca2) / svc


def _seq_chip_terms(g: dict[str, Any], x, t: dict[str, Any]):
    """_chip_terms of a stream whose merging gives the service terms ``t``
    (:func:`_service_terms`): (A, chip busy share per unit X, residual service, the
    stream's queue wait at the chips)."""
    pm = g["p_map"] / (1.0 + x * g["k_pm"]) if g["has_pm"] else 0.0
    if g["has_pm"]:
        den = 1.0 - np.minimum(x * (g["mu_a"] + pm * g["mu_b"]), 0.999)
        w = np.minimum(x * (t["kap"] + pm * g["kap_b"]) / den, g["cap"])
    else:
        w = np.minimum(x * t["kap"] / (1.0 - np.minimum(x * g["mu_a"], 0.999)), g["cap"])
    s_num = t["m0"] + t["m1"] * w
    e2n = t["e0"] + w * (t["e1"] + t["e2"] * w)
    z = t["z0"] + t["z1"] * w
    cp = t["cp0"] + t["z1"] * w
    s_map = g["map0"] + 2.0 * w
    if g["has_sy"]:  # read rounds (see _stations)
        nrf = g["nrf"]
        nr = nrf + pm
        capb = np.maximum(_round_cap(g["sy_wm1"], nrf, g["xt"], pm, g["x_map"], g["sy_sd"], g["sy_on"]) - w, 0.0)
        xc = x * g["c_b"]
        w_sy = _round_wait(capb, xc * (s_num + pm * s_map), xc * nr * capb)
        s_num = s_num + nrf * w_sy
        e2n = e2n + nrf * w_sy * (2.0 * (t["sy_l"] + t["sy_a"] * w) + w_sy)
        z = z + g["rf"] * w_sy
        cp = cp + g["rf"] * w_sy
        s_map = s_map + w_sy
    if g["has_pm"]:
        s_num = s_num + pm * s_map
        e2n = e2n + pm * s_map * s_map
        z = z + pm * s_map
        inv = 1.0 / (g["n"] + pm)
    else:
        inv = 1.0 / g["n"]
    svc = s_num * inv
    resid = _resid(e2n * inv, svc)
    sb = g["c_b"] * s_num
    # a stream's pages queue only once the pages in flight exceed the chips
    w_seq = np.maximum(g["q_n"] * svc - np.maximum(cp, svc), 0.0)
    a_ = z + g["fj_seq"] * w_seq
    if g["has_pm"]:
        a_ = a_ + pm * (x * sb) * resid
    return a_, sb, _stream_resid(e2n * inv, svc, g["ca2"]), w_seq


def _chip_terms(g: dict[str, Any], x):
    """At throughput ``x``: (A, chip busy share per unit X, residual service) -- A is the
    response less the chip queue and the PCIe waits."""
    k_q = g["k_q"]
    if g["seq"]:
        if not g["has_r"]:
            return _seq_chip_terms(g, x, g)[:3]
        # with reads: the chip utilization and the queue wait at the idle-chip merging set
        # the queue's read / program shares and the read joins, and they the merging
        # (_closed_response's two steps)
        _, sb, _, w_seq = _seq_chip_terms(g, x, g)
        rho = k_q * x * sb
        p_join = _seq_read_join(x * g["n"], g["dies_total"], w_seq, g["rf"], rho)
        return _seq_chip_terms(g, x, _service_terms(g, *_seq_merges(g, rho, p_join)))[:3]
    # first pass, no merging: the chip queue it implies sets the merging
    den = 1.0 - np.minimum(x * g["mu"], 0.999)
    w0 = np.minimum(x * g["kap0"] / den, g["cap"])
    s0 = g["m00"] + g["m10"] * w0
    e0 = g["e00"] + w0 * (g["e10"] + g["e20"] * w0)
    if g["has_sy"]:  # read rounds, one-plane commands
        capb0 = np.maximum(g["capb"] - w0, 0.0)
        xc = x * g["c_b"]
        d = _round_wait(capb0, xc * s0, xc * g["nr"] * capb0)
        s0 = s0 + g["nr"] * d
        nrf = g["n"] * g["rf"]
        e0 = e0 + d * (nrf * (2.0 * (g["tr"] + READ_CMD_US + g["xt"] + 2.0 * w0) + d)
                       + g["p_map"] * (2.0 * (g["map0"] + 2.0 * w0) + d))
    busy0 = x * g["c_b"] * s0
    free0 = 1.0 - k_q * busy0
    resid0 = _resid(e0 * g["inv_npm"], s0 * g["inv_npm"])
    with np.errstate(divide="ignore", invalid="ignore"):
        w_rand0 = np.where(free0 > 0, k_q * busy0 * resid0 / free0, np.inf)
    q_die = np.minimum(x * g["v"] * w_rand0, g["qd_v"]) * g["inv_d"]
    mixed = g["has_r"] and g["has_w"]
    sh_r, sh_w = _queued_shares(g["rf"], k_q * busy0) if mixed else (g["rf"], g["wf"])
    # second pass, with merging
    tr, tp, xt = g["tr"], g["tp"], g["xt"]
    kap_r = kap_w = s_r = s_w = e_r = e_w = z_r = z_w = 0.0
    i_r = i_w = t_rc = t_pc = 1.0
    if g["has_r"]:
        m_r = np.minimum(1.0 + g["kr"] * sh_r * q_die, g["P"])
        i_r = 1.0 / m_r
        t_rc = READ_CMD_US + (m_r - 1.0) * READ_CMD_PLANE_US
        kap_r = xt * xt + t_rc * t_rc * i_r
    if g["has_w"]:
        m_w = np.minimum(1.0 + g["kw"] * sh_w * q_die, g["P"])
        i_w = 1.0 / m_w
        t_pc = PROG_CMD_US + (m_w - 1.0) * PROG_CMD_PLANE_US
        kap_w = (t_pc + m_w * xt) ** 2 * i_w
    w = np.minimum(x * (g["kap_n"] * _mix(g, kap_r, kap_w) + g["pm_kap_b"]) / den, g["cap"])
    n = g["n"]
    v_r = t_rc * i_r + xt + w * (1.0 + i_r) if g["has_r"] else 0.0
    v_w = t_pc * i_w + xt + w * i_w + g["gc"] if g["has_w"] else 0.0
    s_map = g["map0"] + 2.0 * w
    w_sy = 0.0
    if g["has_sy"]:  # read rounds (see _stations)
        capb = np.maximum(g["capb"] - w, 0.0)
        sn0 = n * _mix(g, v_r + tr * i_r, v_w + tp * i_w) + (g["p_map"] * s_map if g["has_pm"] else 0.0)
        xc = x * g["c_b"]
        w_sy = _round_wait(capb, xc * sn0, xc * g["nr"] * capb)
        v_r, s_map = v_r + w_sy, s_map + w_sy
    if g["has_r"]:
        s_r = v_r + tr * i_r
        e_r = g["tr2"] * i_r * i_r + 2.0 * tr * i_r * v_r + v_r * v_r
        z_r = g["path_r"] + t_rc + w * (1.0 + i_r) + w_sy
    if g["has_w"]:
        s_w = v_w + tp * i_w
        e_w = g["tp2"] * i_w * i_w + 2.0 * tp * i_w * v_w + v_w * v_w
        z_w = g["path_w"] + g["n_ch"] * t_pc + w * i_w
    s_num = n * _mix(g, s_r, s_w)
    e2n = n * _mix(g, e_r, e_w)
    a_ = _mix(g, z_r, z_w)
    if g["has_pm"]:
        pm = g["p_map"]
        s_num = s_num + pm * s_map
        e2n = e2n + pm * s_map * s_map
        a_ = a_ + pm * s_map
    resid = _resid(e2n * g["inv_npm"], s_num * g["inv_npm"])
    sb = g["c_b"] * s_num
    if g["has_pm"]:
        a_ = a_ + g["p_map"] * (x * sb) * resid  # mapping reads wait for the op in service
    if g["has_w"] and (g["has_r"] or g["has_pm"]):
        # reads (and mapping reads) go before queued programs: the mean page wait is the
        # FCFS one times _priority_factor
        sb_r = g["c_b"] * ((n * g["rf"] * s_r if g["has_r"] else 0.0) + (g["p_map"] * s_map if g["has_pm"] else 0.0))
        resid = resid * _priority_factor(g["rf"], g["k_q"] * x * sb, g["k_q"] * x * sb_r)
    return a_, sb, resid


def _closed_map(g: dict[str, Any], x) -> np.ndarray:
    """The frozen-model root Y(x) (NaN where x lies past a pole that is frozen)."""
    a_, sb, resid = _chip_terms(g, x)
    qd, k_q = g["qd"], g["k_q"]
    b_m = k_q * sb  # chip: free = 1 - b X
    c_m = g["fjmix_kq"] * sb * resid if (not g["seq"] or g["has_mix"]) else 0.0  # chip queue = c X / free
    ok = True
    if g["has_pcie"]:
        fr = g["frac"]
        bd, bh = fr * g["d2h"], fr * g["h2d"]
        fd, fh = 1.0 - x * bd, 1.0 - x * bh
        free = 1.0 - x * b_m
        use_d = (bd > b_m) & (bd >= bh)
        use_h = (bh > b_m) & (bh > bd)
        use_c = ~(use_d | use_h)
        with np.errstate(divide="ignore", invalid="ignore"):
            a_ = (a_ + np.where(use_c, 0.0, x * c_m / free) + np.where(use_d, 0.0, x * bd * g["d2h"] / fd)
                  + np.where(use_h, 0.0, x * bh * g["h2d"] / fh))
        b_m = np.where(use_d, bd, np.where(use_h, bh, b_m))
        c_m = np.where(use_d, bd * g["d2h"], np.where(use_h, bh * g["h2d"], c_m))
        ok = (use_c | (free > 0)) & (use_d | (fd > 0)) & (use_h | (fh > 0))
    # X (A + c X / (1 - b X)) = qd  <=>  (c - A b) X^2 + (A + qd b) X - qd = 0
    y = 2.0 * qd / ((a_ + qd * b_m) + np.sqrt((a_ - qd * b_m) ** 2 + 4.0 * qd * c_m))
    return y if ok is True else np.where(ok, y, np.nan)


def _closed_guess(g: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(first guess, Y(0)): the frozen-model root at zero load -- the map at X = 0, chip
    pole only -- and the guess, that root kept below the PCIe poles and the channels'
    data-out pole (the channel wait's, which the frozen model does not keep: a
    channel-bound point guessed above it takes ~2 more map evaluations)."""
    k_q, qd = g["k_q"], g["qd"]
    if g["seq"]:
        pm = g["p_map"] if g["has_pm"] else 0.0
        s_num = g["m0"] + pm * g["map0"]
        inv = 1.0 / (g["n"] + pm)
        svc = s_num * inv
        resid = _stream_resid((g["e0"] + pm * g["map0"] ** 2) * inv, svc, g["ca2"])
        a_ = g["z0"] + pm * g["map0"] + g["fj_seq"] * np.maximum(g["q_n"] * svc - np.maximum(g["cp0"], svc), 0.0)
        c_on = g["has_mix"]
    else:
        s_num = g["m00"]
        resid = _resid(g["e00"] * g["inv_npm"], s_num * g["inv_npm"])
        a_ = g["z00"]
        c_on = True
    x_pole = _chip_pole_with_channel(g) if not g["seq"] else np.inf
    sb = g["c_b"] * s_num
    b_m = k_q * sb
    c_m = g["fjmix_kq"] * sb * resid if c_on else 0.0
    y0 = 2.0 * qd / ((a_ + qd * b_m) + np.sqrt((a_ - qd * b_m) ** 2 + 4.0 * qd * c_m))
    mu = g["mu_a"] + (g["p_map"] * g["mu_b"] if g["has_pm"] else 0.0)  # data-out per unit X
    with np.errstate(divide="ignore"):
        y = np.minimum(np.minimum(y0, _GUESS_CH_POLE / mu), x_pole)
    return np.minimum(y, 0.999 * g["x_hi"]), y0


def _chip_pole_with_channel(g: dict[str, Any]) -> np.ndarray:
    """Random traffic: the throughput at which the chips saturate with the channel wait
    at that throughput, ``X k_q c_b (m00 + m10 w(X)) = 1`` with ``w = X kap0 / (1 - X mu)``
    (a quadratic), or with the wait at its bound if that is higher -- a first guess near
    the saturation root, which the frozen model (channel wait frozen) approaches slowly
    when the channel binds (map evaluations per point 7.0 -> 5.9, measured)."""
    b0 = g["k_q"] * g["c_b"] * g["m00"]
    b1 = g["k_q"] * g["c_b"] * g["m10"]
    b = b0 + g["mu"]
    # the positive root of (b1 kap0 - b0 mu) X^2 + b X - 1; no load seen (qd = 1): +inf
    with np.errstate(divide="ignore"):
        x_p = 2.0 / (b + np.sqrt((b0 - g["mu"]) ** 2 + 4.0 * b1 * g["kap0"]))
        return np.maximum(x_p, 1.0 / (b0 + b1 * g["cap"]))


def _stack_points(g: dict[str, Any], m: int):
    """(keys of g's per-point float arrays, one 2-D array (keys x m) holding them as rows, g
    with those entries replaced by views of its rows)."""
    keys = [kk for kk, v in g.items() if isinstance(v, np.ndarray) and v.ndim and v.dtype == np.float64]
    table = np.stack([g[kk] for kk in keys]) if keys else np.empty((0, m))
    return keys, table, {**g, **dict(zip(keys, table))}


def _keep_points(g: dict[str, Any], keys: list[str], table: np.ndarray, keep: np.ndarray):
    """(table, g) for the points at ``keep`` only (per-point arrays outside the table, if
    any, taken one by one)."""
    table = table.take(keep, axis=1)
    rest = {kk: v.take(keep) for kk, v in g.items() if kk not in keys and isinstance(v, np.ndarray) and v.ndim}
    return table, {**g, **dict(zip(keys, table)), **rest}


def _closed_iterate(g: dict[str, Any], st: dict[str, np.ndarray], max_iters: int):
    """Secant on Y(X) - X from state ``st`` (x, x_old, d_old, lo, hi) for up to
    ``max_iters`` evaluations.  Returns (positions solved, their throughput, positions
    left, their g, their state)."""
    x, x_old, d_old, lo, hi = st["x"], st["x_old"], st["d_old"], st["lo"], st["hi"]
    m = x.shape[0]
    pos = np.arange(m)
    done_pos, done_val = [], []
    live = np.ones(m, bool)
    # Solved points leave the working set.  g holds some 40 per-point arrays; they are
    # kept as the rows of one 2-D table so that dropping points is one take() on it, not
    # 40 boolean-mask copies (which cost as much as the secant's own bookkeeping).
    keys, table, g = _stack_points(g, m)
    for _ in range(max_iters):
        y = _closed_map(g, x)
        d = y - x
        up = d > 0  # the root lies above x (NaN: past a frozen pole, below)
        lo = np.where(up, x, lo)
        hi = np.where(up, hi, x)
        with np.errstate(divide="ignore", invalid="ignore"):
            x_sec = x - d * (x - x_old) / (d - d_old)
        x_new = np.where((x_sec > lo) & (x_sec < hi), x_sec, np.where((y > lo) & (y < hi), y, 0.5 * (lo + hi)))
        conv = np.abs(d) <= _CLOSED_TOL * x
        done = live & (conv | (hi - lo <= _CLOSED_TOL * hi))
        x_old, d_old, x = x, d, x_new
        if done.any():
            done_pos.append(pos[done])
            done_val.append(np.where(conv, y, x_new)[done])
            live &= ~done
            n_live = int(live.sum())
            if n_live == 0:
                return np.concatenate(done_pos), np.concatenate(done_val), pos[:0], g, {}
            if n_live <= 0.75 * live.size:  # drop the solved points from the working set
                keep = np.flatnonzero(live)
                table, g = _keep_points(g, keys, table, keep)
                x, x_old, d_old, lo, hi, pos = (v.take(keep) for v in (x, x_old, d_old, lo, hi, pos))
                live = np.ones(n_live, bool)
    if not live.all():
        keep = np.flatnonzero(live)
        table, g = _keep_points(g, keys, table, keep)
        x, x_old, d_old, lo, hi, pos = (v.take(keep) for v in (x, x_old, d_old, lo, hi, pos))
    dp = np.concatenate(done_pos) if done_pos else pos[:0]
    dv = np.concatenate(done_val) if done_val else np.zeros(0)
    return dp, dv, pos, g, {"x": x, "x_old": x_old, "d_old": d_old, "lo": lo, "hi": hi}


def _closed_start(g: dict[str, Any], m: int) -> dict[str, np.ndarray]:
    """The secant's state: the first guess, and X = 0 (where Y(0) - 0 is the zero-load
    root) as the previous point."""
    x, y0 = _closed_guess(g)
    return {"x": np.broadcast_to(x, (m,)).astype(np.float64), "x_old": np.zeros(m),
            "d_old": np.broadcast_to(y0, (m,)).astype(np.float64), "lo": np.zeros(m),
            "hi": np.broadcast_to(g["x_hi"], (m,)).astype(np.float64)}


def _concat_parts(parts: list[dict[str, Any]], sizes: list[int]) -> dict[str, Any]:
    """Join per-slice dicts of per-point values (scalars broadcast where they differ;
    boolean flags or-ed)."""
    out = {}
    for key, v0 in parts[0].items():
        vals = [p[key] for p in parts]
        if isinstance(v0, bool):
            out[key] = any(vals)
        elif all(np.ndim(v) == 0 for v in vals) and all(np.array_equal(v, v0) for v in vals):
            out[key] = v0
        else:
            out[key] = np.concatenate([np.broadcast_to(np.asarray(v, np.float64), (n,)) for v, n in zip(vals, sizes)])
    return out


_CLOSED_INPUTS_A = ("units", "channels", "planes", "dies", "tr_mean", "tprog_mean", "tr2_mean", "tprog2_mean", "tbers",
                    "pages_per_block", "rounds")
_CLOSED_INPUTS_R = ("n", "x", "x_map", "rf", "wa", "n_ch", "d2h_r", "d2h_w", "h2d_r", "h2d_w", "d2h", "h2d", "p_map")


def _closed_solve(a, r, qd, k, shape, above=None) -> np.ndarray:
    """Closed-loop throughput (req/us) for every point of ``shape``; with ``above`` (req/us,
    per point or scalar) +inf where the throughput exceeds it, without solving it: such a
    point starts at its threshold inside a bracket closed just above it, and the sign of
    its first ``Y(X) - X`` (the bracketing rule) tells whether the root lies above."""
    size = int(np.prod(shape))
    flat = _flat_inputs(a, r, shape, {"qd": qd} if above is None else {"qd": qd, "above": above})
    seq = np.broadcast_to(np.asarray(r["seq"], bool), shape).reshape(-1)
    out = np.zeros(size)  # no requests in flight (qd <= 0): no throughput
    for s_val in (True, False):
        idx = np.flatnonzero(seq == s_val)
        if np.ndim(flat["qd"]):
            idx = idx[flat["qd"][idx] > 0]
        elif flat["qd"] <= 0:
            idx = idx[:0]
        left = []  # (global positions, g, state) of points a slice did not solve
        for c0 in range(0, idx.size, _CHUNK):
            sel = idx[c0 : c0 + _CHUNK]
            b = flat if sel.size == size else {kk: _take(v, sel) for kk, v in flat.items()}
            g = _closed_prep(b, k, s_val)
            st = _closed_start(g, sel.size)
            if above is not None:
                t = np.broadcast_to(b["above"], (sel.size,))
                test = t < st["hi"]
                st["x"] = np.where(test, t, st["x"])
                st["hi"] = np.where(test, t * (1.0 + 0.5 * _CLOSED_TOL), st["hi"])
            dp, dv, lp, g, st = _closed_iterate(g, st, _CLOSED_SLICE_ITERS)
            out[sel[dp]] = dv
            if lp.size:
                left.append((sel[lp], g, st))
        if left:
            sizes = [p.size for p, _, _ in left]
            g = _concat_parts([gg for _, gg, _ in left], sizes)
            st = {kk: np.concatenate([s[kk] for _, _, s in left]) for kk in left[0][2]}
            gpos = np.concatenate([p for p, _, _ in left])
            dp, dv, lp, _, st = _closed_iterate(g, st, _CLOSED_MAX_ITERS)
            out[gpos[dp]] = dv
            if lp.size:  # not converged in the iteration budget: the bracket's midpoint
                out[gpos[lp]] = 0.5 * (st["lo"] + st["hi"])
    if above is not None:
        out = np.where(out < np.broadcast_to(flat["above"], (size,)), out, np.inf)
    return out.reshape(shape)


# ----------------------------------------------------------------------------- fast open loop
# _open as written recomputes every station in each of _stations' 6 damped iterations of
# the die queue (multi-plane merging depends on it).  At a given request rate everything
# but the merging is fixed, so _open_prep collects it once per point and _open_slice runs
# the same 6 iterations on what the merging changes.  tests/test_flash_fast.py pins it to _open.

#: root-finder evaluations for the open loop's page wait (_wait_root), at most; a point
#: is solved once log W'(W) - log W (or its bracket) is within _WAIT_TOL, and the solver
#: stops when every point is (~8 evaluations on random mixes, measured)
_OPEN_ROOT_ITERS = 40
_WAIT_TOL = 1e-10


def _flat_inputs(a, r, shape, extra: dict[str, Any]) -> dict[str, Any]:
    """The per-point inputs of the fast paths, flat (length prod(shape)) or scalar."""
    f = np.float64
    flat = {}
    for key in _CLOSED_INPUTS_A:
        v = np.asarray(a.get(key, 1) if key == "dies" else a.get(key, 0.0) if key == "rounds" else a[key], f)
        flat[key] = np.broadcast_to(v, shape).reshape(-1) if v.ndim else v
    for key in _CLOSED_INPUTS_R:
        v = np.asarray(r[key], f)
        flat[key] = np.broadcast_to(v, shape).reshape(-1) if v.ndim else v
    for key, v in extra.items():
        v = np.asarray(v, f)
        flat[key] = np.broadcast_to(v, shape).reshape(-1) if v.ndim else v
    return flat


def _rand_merge(k_mp, P, ppb):
    """Extra pages per multi-plane command per page of a kind queued at the die, random
    traffic: MQSim joins queued pages of other planes only at the head's page offset in the
    block, so each page queued joins with a chance ``k_mp (P - 1) / P / ppb`` (``k_mp = 1``:
    uniform page offsets; fitted to the multi-plane command counts of the MQSim runs)."""
    return k_mp * (P - 1) / P / np.asarray(ppb, np.float64)


def _merge(seq, P, q, share, k, read: bool, ppb, kind=None, p_join=0.0):
    """Pages per multi-plane command of one kind (reads or programs) with ``q`` pages
    waiting per die, ``share`` of them of this kind (:func:`_queued_shares`); ``kind``:
    the kind's share of the stream's pages (default ``share``).

    * random: each waiting page of the kind joins with chance :func:`_rand_merge`;
    * sequential: MQSim allocates a stream's pages in order, so the planes of a die are
      filled in step and the ``P`` pages at one page offset across them are pages of the
      stream one die-stride apart; a command joins only pages of its own kind, ``kind``
      of those slots;
    * sequential reads: a read command takes the later pages of its offset that arrived
      while its head waited, each with chance ``p_join`` (:func:`_seq_read_join`) after
      the one before: per offset, ``N ~ Binomial(P, kind)`` reads form ``1 + (N - 1)(1 -
      p_j)`` commands, ``p_j`` the join chance over the geometric gap to the next read
      slot -- ``P / (1 + (P - 1)(1 - p_join))`` pages per command for pure reads (MQSim:
      1.5-1.7 on 4 planes, 1.0-2.0 on 2, as this law gives with the runs' own waits);
    * sequential programs: a program takes far longer than the transfers around it, so a
      write stream's pages in flight sit at the die, split between the command in service
      and the queue; each command takes what queued during the previous one -- half the
      ``q share + 1`` pages there, at most ``1 + (P - 1) kind`` (MQSim: 256-KiB writes at
      QD16, 4 pages per die, run ~2 pages per program, at QD64 all 4 planes; a 70/30
      stream's programs 1.2 of at most 1.3 on 2 planes, 1.6 of at most 1.9 on 4)."""
    kind = share if kind is None else kind
    if read:
        with np.errstate(divide="ignore", invalid="ignore"):
            p_j = kind * p_join / (1.0 - (1.0 - kind) * p_join)
            n_any = 1.0 - (1.0 - kind) ** P  # chance an offset holds a read
            m_seq = np.where(kind > 0, P * kind / (n_any + (P * kind - n_any) * (1.0 - p_j)), 1.0)
    else:
        m_seq = np.minimum(0.5 * (q * share + 1.0), 1.0 + (P - 1) * kind)
    if np.all(seq):
        return np.clip(m_seq, 1.0, P)
    m_rnd = 1 + _rand_merge(k["k_mp"] if read else k["k_mp_w"], P, ppb) * q * share
    return np.clip(np.where(seq, m_seq, m_rnd), 1.0, P)


def _open_slice(b: dict[str, Any], k: dict[str, float], seq: bool):
    """Open-loop (latency us, over capacity) of the points in ``b`` (one pattern)."""
    n, xt, rf, lam = b["n"], b["x"], b["rf"], b["lam"]
    wf = 1.0 - rf
    g = {"rf": rf, "wf": wf, "has_r": bool(np.any(rf != 0)), "has_w": bool(np.any(rf != 1))}
    has_r, has_w = g["has_r"], g["has_w"]
    units, C, P, D = b["units"], b["channels"], b["planes"], b["dies"]
    tr, tp, tr2, tp2 = b["tr_mean"], b["tprog_mean"], b["tr2_mean"], b["tprog2_mean"]
    x_map = b["x_map"]
    map0 = READ_CMD_US + tr + x_map
    wa = b["wa"]
    gc = _gc_us_per_page(wa, tr, tp, xt, b["tbers"], b["pages_per_block"])
    p_map = b["p_map"]
    has_pm = bool(np.any(p_map != 0))
    pm = p_map / (1.0 + lam * k["k_seqmap"] * map0) if (seq and has_pm) else p_map
    npm = n + pm
    lam_chip = lam * npm / units
    lam_pg, lam_map = lam * n / C, lam * pm / C
    u_out = lam_pg * rf * xt + lam_map * x_map
    k_res = 0.5 * k["k_ch"] / (1 - np.clip(u_out, 0, 0.999))  # channel wait per unit residual sum
    cap = (units / C - 1) * (xt + READ_CMD_US)
    pg_r, pg_w = lam_pg * rf, lam_pg * wf
    res_map = lam_map * (x_map**2 + READ_CMD_US**2)
    inv_npm = 1.0 / npm
    q_cap = b["fetch"] * npm / units
    lc_kq = 0.5 * k["k_q"] * lam_chip
    nr = n * rf + pm
    capb_0 = _round_cap(units / C - 1, n * rf, xt, pm, x_map, np.sqrt(np.maximum(tr2 - tr * tr, 0.0)), b["rounds"])
    lam_nr = lam * nr / units
    ppb = b["pages_per_block"]
    rounds_on = (has_r or has_pm) and np.any(b["rounds"] != 0)
    ca2 = _stream_ca2(n, units) if seq else None

    def stage(q, rho_q, p_join):
        """The stations with ``q`` pages waiting per die (as _stations)."""
        sh_r, sh_w = _queued_shares(rf, rho_q) if (has_r and has_w) else (rf, wf)
        m_r = _merge(seq, P, q, sh_r, k, True, ppb, rf, p_join) if has_r else 1.0
        m_w = _merge(seq, P, q, sh_w, k, False, ppb, wf) if has_w else 1.0
        i_r, i_w = 1.0 / m_r, 1.0 / m_w
        t_rc = READ_CMD_US + (m_r - 1) * READ_CMD_PLANE_US
        t_pc = PROG_CMD_US + (m_w - 1) * PROG_CMD_PLANE_US
        res = res_map
        if has_r:
            res = res + pg_r * (xt * xt + t_rc * t_rc * i_r)
        if has_w:
            res = res + pg_w * (t_pc + m_w * xt) ** 2 * i_w
        w = np.minimum(k_res * res, cap)
        v_r = t_rc * i_r + xt + w * (1 + i_r)
        v_w = t_pc * i_w + xt + w * i_w + gc
        s_map = map0 + 2 * w
        if rounds_on:  # read rounds (see _stations)
            capb = np.maximum(capb_0 - w, 0.0)
            sn0 = n * _mix(g, v_r + tr * i_r, v_w + tp * i_w) + (pm * s_map if has_pm else 0.0)
            w_sy = _round_wait(capb, lam_chip * sn0 * inv_npm, lam_nr * capb)
            v_r, s_map = v_r + w_sy, s_map + w_sy
        s_r, s_w = v_r + tr * i_r, v_w + tp * i_w
        sn = n * _mix(g, s_r, s_w)
        e2 = n * _mix(g, tr2 * i_r * i_r + 2 * tr * i_r * v_r + v_r * v_r, tp2 * i_w * i_w + 2 * tp * i_w * v_w + v_w * v_w)
        if has_pm:
            sn = sn + pm * s_map
            e2 = e2 + pm * s_map * s_map
        rho = lam_chip * (sn * inv_npm)
        rho_s = np.clip(rho, 0, 0.9999)
        e2_q = _stream_e2(e2 * inv_npm, sn * inv_npm, ca2) if seq else e2 * inv_npm
        w_chip = lc_kq * e2_q / (1 - rho_s)
        return {"t_rc": t_rc, "t_pc": t_pc, "i_r": i_r, "i_w": i_w, "w": w, "v_r": v_r, "s_map": s_map, "s_r": s_r,
                "rho": rho, "rho_s": rho_s, "w_chip": w_chip}

    # the page wait: the root of W = W'(W) (see _open_wait)
    def wait_stage(wait):
        q = np.minimum(lam_chip * wait, q_cap) / D

        def join(rho):
            return _seq_read_join(lam * n, units * D, wait, rf, rho) if seq else 0.0

        st = stage(q, 0.0, join(0.0))
        if has_r and has_w:  # a mix: the queue's shares follow the utilization (else the page shares)
            st = stage(q, st["rho_s"], join(st["rho_s"]))
        return st

    w_max = np.broadcast_to(b["fetch"] / np.maximum(lam, 1e-300), np.shape(lam_chip))  # finite at zero load
    st = wait_stage(_wait_root(lambda wt: wait_stage(wt)["w_chip"], w_max, _OPEN_ROOT_ITERS))
    t_rc, t_pc, i_r, i_w, w, v_r = st["t_rc"], st["t_pc"], st["i_r"], st["i_w"], st["w"], st["v_r"]
    s_map, s_r, rho, rho_s, w_chip = st["s_map"], st["s_r"], st["rho"], st["rho_s"], st["w_chip"]
    # reads (and mapping reads) go before queued writes at a chip (non-preemptive priority)
    rho_r = np.clip(lam_chip * (n * rf * s_r + pm * s_map) * inv_npm, 0, 0.9999)
    inv_r = 1.0 / (1 - rho_r)
    fj = _fork_join({"n": n, "rf": rf, "seq": np.asarray(seq)}, units, k)
    w_flash = fj * w_chip * _mix(g, (1 - rho_s) * inv_r, inv_r)
    path = _mix(g, b["h2d_r"] + b["d2h_r"] + t_rc + tr + b["n_ch"] * xt + (v_r - t_rc * i_r - xt),
                b["h2d_w"] + b["d2h_w"] + b["n_ch"] * (t_pc + xt) + tp + gc + w * i_w)
    if has_pm:
        w_flash = w_flash + pm * w_chip * (1 - rho_s)  # mapping reads go first: the residual only
        path = path + pm * s_map
    d2h, h2d = b["d2h"], b["h2d"]
    rho_d, rho_h = lam * d2h, lam * h2d
    lat = (path + w_flash + w * (fj - 1) + lam * d2h**2 / (2 * (1 - np.clip(rho_d, 0, 0.9999)))
           + lam * h2d**2 / (2 * (1 - np.clip(rho_h, 0, 0.9999))))
    u_ch = u_out + lam_map * READ_CMD_US + _mix(g, lam_pg * t_rc * i_r, lam_pg * (t_pc * i_w + xt))
    over = (rho >= 1) | (rho_d >= 1) | (rho_h >= 1) | (u_ch >= 1)
    return lat, over


def _open_fast(a, r, lam, k, shape):
    """Open-loop (latency us, over capacity) for every point of ``shape``."""
    size = int(np.prod(shape))
    flat = _flat_inputs(a, r, shape, {"lam": lam, "fetch": a.get("fetch", QUEUE_FETCH_SIZE)})
    seq = np.broadcast_to(np.asarray(r["seq"], bool), shape).reshape(-1)
    lat, over = np.empty(size), np.empty(size, bool)
    for s_val in (True, False):
        idx = np.flatnonzero(seq == s_val)
        for c0 in range(0, idx.size, _OPEN_CHUNK):
            sel = idx[c0 : c0 + _OPEN_CHUNK]
            b = flat if sel.size == size else {kk: _take(v, sel) for kk, v in flat.items()}
            l, o = _open_slice(b, k, s_val)
            lat[sel], over[sel] = l, o
    return lat.reshape(shape), over.reshape(shape)


def _shape(a, r, extra) -> tuple[int, ...]:
    """Broadcast shape of the per-point inputs of the fast paths and ``extra``."""
    return np.broadcast_shapes(np.shape(extra), *(np.shape(r[kk]) for kk in _CLOSED_INPUTS_R), np.shape(r["seq"]),
                               *(np.shape(a.get(kk, 1) if kk == "dies" else a[kk]) for kk in _CLOSED_INPUTS_A))


def _unloaded(a, r) -> np.ndarray:
    """Latency of an isolated request: _path at zero load (no merging, no channel wait,
    every mapping read its own), in closed form."""
    f = np.float64
    rf, xt, nch = r["rf"], r["x"], r["n_ch"]
    tr, tp = np.asarray(a["tr_mean"], f), np.asarray(a["tprog_mean"], f)
    wa = r["wa"]
    gc = _gc_us_per_page(wa, tr, tp, xt, a["tbers"], a["pages_per_block"])
    read = r["h2d_r"] + r["d2h_r"] + READ_CMD_US + tr + nch * xt
    write = r["h2d_w"] + r["d2h_w"] + nch * (PROG_CMD_US + xt) + tp + gc
    return rf * read + (1 - rf) * write + r["p_map"] * (READ_CMD_US + tr + r["x_map"])


def _closed(a, r, qd, k):
    """Closed loop at queue depth ``qd``: (throughput req/us, mean latency us); the root
    of ``qd / R(X) = X`` for :func:`_closed_response`'s ``R``, found by
    :func:`_closed_solve`."""
    f = np.float64
    qd = np.asarray(qd, f)
    shape = _shape(a, r, qd)
    x = _closed_solve(a, r, qd, k, shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        return x, np.broadcast_to(qd, shape) / x


# ----------------------------------------------------------------------------- public API
def unloaded_latency_us(cfg, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0, cal=None) -> np.ndarray:
    """Mean latency (us) of an isolated request (QD1, no queueing)."""
    a = config_arrays(cfg)
    return _unloaded(a, _request(a, size_b, read_frac, _seq(pattern), wa))


def saturation_iops(cfg, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0, cal=None,
                    above_iops=None) -> np.ndarray:
    """Sustained throughput (IOPS): the closed-loop throughput with the device's NVMe
    fetch window (``queue_fetch_size`` requests) full -- the most an overloaded open loop
    gets, because the device fetches no more requests than that at a time.

    ``above_iops`` (per point): where the throughput exceeds it, +inf instead, decided by
    one evaluation of the solver's map -- for a model that needs the SSD's throughput
    only where it is below another bound (a link, a processor)."""
    k = constants(cal)
    a = config_arrays(cfg)
    r = _request(a, size_b, read_frac, _seq(pattern), wa)
    qd = np.asarray(a.get("fetch", QUEUE_FETCH_SIZE), np.float64)
    if above_iops is None:
        x, _ = _closed(a, r, qd, k)
    else:
        above = np.asarray(above_iops, np.float64) / US_PER_S
        x = _closed_solve(a, r, qd, k, np.broadcast_shapes(_shape(a, r, qd), above.shape), above)
    return x * US_PER_S


def saturation_bw_gbps(cfg, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0, cal=None) -> np.ndarray:
    """:func:`saturation_iops` x request size, in GB/s."""
    return saturation_iops(cfg, size_b, read_frac, pattern, wa=wa, cal=cal) * np.asarray(size_b, float) / GB


def closed_loop(cfg, qd, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0, cal=None):
    """Closed loop at queue depth ``qd``: (IOPS, mean latency us)."""
    k = constants(cal)
    a = config_arrays(cfg)
    r = _request(a, size_b, read_frac, _seq(pattern), wa)
    x, lat = _closed(a, r, qd, k)
    return x * US_PER_S, lat


def open_loop_latency_us(cfg, iops, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0, cal=None) -> np.ndarray:
    """Mean latency (us) at an offered Poisson load of ``iops``; inf where a chip, a
    channel or a PCIe direction is at or above saturation."""
    k = constants(cal)
    a = config_arrays(cfg)
    r = _request(a, size_b, read_frac, _seq(pattern), wa)
    lam = np.asarray(iops, np.float64) / US_PER_S
    lat, over = _open_fast(a, r, lam, k, _shape(a, r, lam))
    return np.where(over, np.inf, lat)


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

