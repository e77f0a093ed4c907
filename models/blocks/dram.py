"""DRAM device block: idle latency, loaded read latency and sustainable bandwidth of one
DRAM channel, computed from its timing parameters.

Everything is derived from the JEDEC-style timings (in memory-clock cycles of ``tck_ns``)
plus a few fitted constants shared by all standards (:data:`DEFAULT_CONSTANTS`, fitted by
``dse calibrate dram`` against DRAMsim3 and stored in ``results/calibration/dram.toml``).
The functions take timings as arguments, so any standard -- including one given only by
its timings -- can be evaluated; :data:`STANDARDS` holds convenience timing sets.

Mechanism (one channel, open-page FR-FCFS controller as in DRAMsim3)
--------------------------------------------------------------------
* **Column slots**: ``slot_s = max(burst, tCCD_S)`` to another bank group, ``slot_l =
  max(burst, tCCD_L)`` within one (every slot is ``slot_s`` with bank groups disabled, as
  DRAMsim3 treats GDDR6).  A stream whose lines rotate over bank groups (``stream_mode``
  1) runs at ``slot_s``, over the banks of one group (2) at ``slot_l``.  A stream that
  stays in one bank row (0, column bits lowest) runs at ``slot_l`` except at row
  boundaries, where the next row's bank is already in the controller's window (read
  queue + bank queue, ``trans_queue + cmd_queue`` requests): ``(L - 2W) slot_l +
  W max(2 slot_s, slot_l)`` cycles per row of ``L`` lines -- 5.5 cycles per line for DDR4
  with the default mapping.  Random traffic: ``slot_s + (slot_l - slot_s) / bankgroups``.
* **Activate rate** (random traffic: every request needs its own ACT):
  ``max(tRRD_S, tFAW / 4, t32AW / 32, tRC / banks) / ranks`` cycles per request.  Random
  HBM2 saturates at a quarter of its peak (4 ACTs per 30-cycle tFAW, 64 B each), GDDR6 at
  32 per 420-cycle t32AW.  Column slot and activate rate combine as a smooth maximum
  ``(a^p + b^p)^(1/p)``.
* **Write drains**: one read-to-write (``CL + burst - CWL + tRTRS``) and one
  write-to-read (``CWL + burst + tWTR``) turnaround per drained batch (the write buffer,
  ``trans_queue`` entries, at high load), less the two column slots they replace.
* **Refresh** blocks a rank for ``tRP + tRFC`` every ``tREFI`` (a stream sits in one
  rank; random traffic loses ``k_rm`` of it with more than one rank).
* Saturation bandwidth = ``request_bytes / (c tCK) x (1 - refresh share)``.
* **Read latency** from arrival = ``1 + CL + burst + P_act tRCD + P_conflict tRP`` plus
  waits: refresh as a periodic vacation (``V^2 / (2 tREFI) / (1 - rho)``, ``V = tRP + tRFC
  + tRCD``); for streams the column slot as an M/D/1 server (a same-bank stream adds its
  slow phase: one bank at ``slot_l`` for a bounded stretch); for random traffic bank
  conflicts (M/D/1 per bank on tRC), the activate windows as M/D/c servers (c = 4 slots of
  tFAW, 32 of t32AW; half the M/M/c wait), tRRD and the column slot (M/D/1); and the rest
  of a write drain a read arrives into (``lambda_w V_w^2 / (2 B)``, ``V_w = B c + turn``,
  ``B`` from 9 writes at low load to the write buffer at high load).  At ``rho >= 1``
  latency is ``inf``.

Public functions (times in ns, bandwidths in GB/s = 1e9 B/s)
-------------------------------------------------------------
* :func:`saturation_bw_gbps(timing, pattern, read_frac)` -- sustainable bandwidth.
* :func:`peak_bw_gbps(timing)` -- channels x request bytes per fastest column slot.
* :func:`sustainable_fraction(timing, pattern, read_frac)` -- saturation / peak.
* :func:`idle_latency_ns(timing, pattern)` -- mean read latency at (near) zero load.
* :func:`loaded_latency_ns(timing, offered_gbps, pattern, read_frac)` -- mean read latency
  from arrival at an offered load (inf at or above saturation).
* :func:`latency_at_utilization_ns(timing, util, pattern, read_frac)` -- the same at a
  fraction of the saturation bandwidth (what the cxl-expander model needs).
* :func:`row_hit_rate(timing, pattern, offered_gbps)` -- modelled row-buffer hit rate.
* :func:`timing(name)` / :data:`STANDARDS` -- timing sets by standard name
  (DDR4-3200, DDR5-4800, DDR5-5600, LPDDR4-2400, LPDDR5-6400, LPDDR5X-8533, HBM2, HBM2e,
  HBM3, GDDR6), each with its source.
* :func:`params` / :func:`from_batch` -- a model's DRAM parameters as one group
  (``<prefix>media``, ``channels``, ``capacity_gib``, ``pattern``, ``dram_ns``,
  ``max_dram_gib``, ``dram_usd_per_gib``: the fields it names) and their columns
  (:class:`DramSpec`) from its batch.

``pattern`` is ``"stream"`` (sequential) or ``"random"``, or an array of booleans
(``True`` = stream).  Every numeric argument broadcasts; ``timing`` may be a
:class:`DramTiming` or a standard name.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from functools import lru_cache
from typing import Any

import numpy as np

from dse.errors import DseError, did_you_mean
from dse.model import Batch, Param

__all__ = [
    "DramTiming",
    "STANDARDS",
    "DEFAULT_CONSTANTS",
    "timing",
    "constants",
    "peak_bw_gbps",
    "saturation_bw_gbps",
    "sustainable_fraction",
    "idle_latency_ns",
    "loaded_latency_ns",
    "latency_at_utilization_ns",
    "evaluate",
    "row_hit_rate",
    "params",
    "from_batch",
    "DramSpec",
    "standard_of",
]


#: Where a stream's consecutive request-sized lines go (``DramTiming.stream_mode`` is a code
#: into this tuple): the same bank's next column (column bits lowest), the next bank group,
#: or the next bank of the same group.
STREAM_MODES: tuple[str, ...] = ("same_bank", "next_bankgroup", "next_bank")
STREAM_SAME_BANK = STREAM_MODES.index("same_bank")
STREAM_NEXT_BANKGROUP = STREAM_MODES.index("next_bankgroup")
STREAM_NEXT_BANK = STREAM_MODES.index("next_bank")


@dataclass(frozen=True)
class DramTiming:
    """Timing and organisation of one DRAM channel.  Timings are in memory-clock cycles
    (``tck_ns`` each); ``cl``/``cwl`` include additive latency.  ``stream_mode``: where
    consecutive request-sized lines go (0: same bank, next column -- column bits lowest;
    1: next bank group; 2: next bank of the same group)."""

    name: str
    protocol: str
    tck_ns: float
    cl: float
    cwl: float
    trcd: float
    trp: float
    tras: float
    trrd_s: float
    trrd_l: float
    tfaw: float
    tccd_s: float
    tccd_l: float
    twtr_s: float
    twtr_l: float
    trefi: float
    trfc: float
    burst_cyc: float
    ranks: int = 1
    bankgroups: int = 4
    banks_per_group: int = 4
    request_bytes: int = 64
    lines_per_row: int = 128
    stream_mode: int = 1
    channels: int = 1
    t32aw: float = 0.0
    trtrs: float = 1.0
    trans_queue: int = 32
    cmd_queue: int = 8
    source: str = ""

    @property
    def banks(self) -> int:
        return self.bankgroups * self.banks_per_group

    def as_arrays(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("name", "protocol", "source")}


# ----------------------------------------------------------------------------- standards
# Timings per standard.  Cycle counts at the data-rate clock tCK = 2 / (MT/s) us.
# Sources: JEDEC JESD79-4 (DDR4), JESD79-5 (DDR5), JESD209-4/-5 (LPDDR4/5/5X),
# JESD235 (HBM2/2e), JESD238 (HBM3), JESD250 (GDDR6); speed-bin values as in DRAMsim3's
# configs/ (DDR4_8Gb_x8_3200, LPDDR4_8Gb_x16_2400, HBM2_8Gb_x128, GDDR6_8Gb_x16) and
# Ramulator2's DDR5/LPDDR5/HBM3 presets; Micron MT60B (DDR5) and MT62F (LPDDR5X) datasheets.
STANDARDS: dict[str, DramTiming] = {
    "DDR4-3200": DramTiming(
        "DDR4-3200", "DDR4", 0.625, 22, 16, 22, 22, 52, 4, 8, 34, 4, 8, 4, 12, 12480, 560, 4,
        ranks=2, bankgroups=4, banks_per_group=4, request_bytes=64, lines_per_row=128, stream_mode=1,
        source="JESD79-4 DDR4-3200AA (22-22-22), 8Gb x8, tRFC 350 ns, tREFI 7.8 us; DRAMsim3 DDR4_8Gb_x8_3200.ini",
    ),
    "DDR5-4800": DramTiming(
        "DDR5-4800", "DDR5", 0.416, 40, 38, 40, 40, 77, 8, 12, 32, 8, 12, 6, 24, 9360, 708, 8,
        ranks=1, bankgroups=8, banks_per_group=4, request_bytes=64, lines_per_row=128, stream_mode=1, channels=2,
        source="JESD79-5 DDR5-4800B (40-40-40), 16Gb x8, tRFC1 295 ns, tREFI 3.9 us; a DIMM = 2 x 32-bit subchannels, BL16 (38.4 GB/s)",
    ),
    "DDR5-5600": DramTiming(
        "DDR5-5600", "DDR5", 0.357, 46, 44, 45, 45, 90, 8, 14, 32, 8, 14, 7, 28, 10920, 826, 8,
        ranks=1, bankgroups=8, banks_per_group=4, request_bytes=64, lines_per_row=128, stream_mode=1, channels=2,
        source="JESD79-5 DDR5-5600B (46-45-45), 16Gb x8, tRFC1 295 ns, tREFI 3.9 us; Micron MT60B datasheet; 2 subchannels (44.8 GB/s)",
    ),
    "LPDDR4-2400": DramTiming(
        "LPDDR4-2400", "LPDDR4", 0.83, 17, 14, 15, 15, 32, 8, 8, 32, 4, 6, 8, 16, 8660, 392, 8,
        ranks=2, bankgroups=2, banks_per_group=4, request_bytes=128, lines_per_row=64, stream_mode=0,
        source="JESD209-4 LPDDR4-2400; DRAMsim3 LPDDR4_8Gb_x16_2400.ini (x64 channel, BL16)",
    ),
    "LPDDR5-6400": DramTiming(
        "LPDDR5-6400", "LPDDR5", 0.3125, 68, 36, 58, 58, 134, 16, 16, 64, 8, 8, 38, 38, 12480, 896, 8,
        ranks=1, bankgroups=4, banks_per_group=4, request_bytes=64, lines_per_row=64, stream_mode=1,
        source="JESD209-5 LPDDR5-6400 (RL 17 nCK = 21.25 ns, WL 11.25 ns, tRCD 18 ns, tRPpb 18 ns, tRAS 42 ns, tFAW 20 ns, tWTR 12 ns, tRFCab 280 ns), x32 channel BL16; cycles of the 3.2 GHz data clock",
    ),
    "LPDDR5X-8533": DramTiming(
        "LPDDR5X-8533", "LPDDR5", 0.234, 94, 47, 77, 77, 179, 22, 22, 86, 8, 8, 51, 51, 16670, 1197, 8,
        ranks=1, bankgroups=4, banks_per_group=4, request_bytes=64, lines_per_row=64, stream_mode=1,
        source="JESD209-5B LPDDR5X-8533 (RL ~22 ns, WL ~11 ns, tRCD 18 ns, tRPpb 18 ns, tRAS 42 ns, tWTR 12 ns, tRFCab 280 ns); Micron MT62F datasheet; x32 channel BL16",
    ),
    "HBM2": DramTiming(
        "HBM2", "HBM2", 1.0, 14, 4, 14, 14, 34, 4, 6, 30, 1, 2, 6, 8, 3900, 260, 2,
        ranks=1, bankgroups=4, banks_per_group=4, request_bytes=64, lines_per_row=32, stream_mode=0, channels=8,
        source="JESD235A HBM2 2 Gb/s/pin, 8 x 128-bit channels per stack (256 GB/s); DRAMsim3 HBM2_8Gb_x128.ini",
    ),
    "HBM2e": DramTiming(
        "HBM2e", "HBM2", 0.625, 22, 6, 22, 22, 54, 6, 10, 48, 1, 2, 10, 13, 6240, 560, 2,
        ranks=1, bankgroups=4, banks_per_group=4, request_bytes=64, lines_per_row=32, stream_mode=1, channels=8,
        source="JESD235C HBM2e 3.2 Gb/s/pin, 8 x 128-bit channels per stack (410 GB/s), tRCD/CL 14 ns, tFAW 30 ns, tRFC 350 ns",
    ),
    "HBM3": DramTiming(
        "HBM3", "HBM3", 0.3125, 48, 12, 48, 48, 106, 8, 12, 48, 2, 4, 16, 24, 12480, 1120, 4,
        ranks=1, bankgroups=4, banks_per_group=4, request_bytes=64, lines_per_row=32, stream_mode=1, channels=16,
        source="JESD238 HBM3 6.4 Gb/s/pin, 16 x 64-bit channels per stack (819 GB/s), BL8; Ramulator2 HBM3 preset",
    ),
    "GDDR6": DramTiming(
        "GDDR6", "GDDR6", 0.66, 24, 16, 24, 24, 54, 9, 9, 32, 3, 4, 7, 7, 11862, 126, 1,
        ranks=1, bankgroups=1, banks_per_group=16, request_bytes=256, lines_per_row=128, stream_mode=0,
        t32aw=420, source="JESD250 GDDR6 16 Gb/s; DRAMsim3 GDDR6_8Gb_x16.ini (bank groups disabled, 128-bit, BL16)",
    ),
}


def timing(name: str | DramTiming, **overrides: Any) -> DramTiming:
    """A timing set by standard name (case-insensitive), with optional field overrides."""
    if isinstance(name, DramTiming):
        return replace(name, **overrides) if overrides else name
    key = {k.lower(): k for k in STANDARDS}.get(str(name).lower())
    if key is None:
        raise DseError(f"unknown DRAM standard {name!r}{did_you_mean(str(name), STANDARDS)}; "
                       f"known: {', '.join(STANDARDS)}")
    t = STANDARDS[key]
    return replace(t, **overrides) if overrides else t


# ----------------------------------------------------------------------------- constants
#: Uncalibrated defaults of the shared constants (physical values: 1 = the queueing formula
#: as written); the shipped calibration (results/calibration/dram.toml) replaces them
#: unless DSE_CALIBRATION=none.
DEFAULT_CONSTANTS: dict[str, float] = {
    "p_smooth": 8.0,  # smooth-max exponent of the column-slot and activate-rate limits
    "k_ref": 1.0,  # refresh vacation wait multiplier
    "k_bus": 1.0,  # column-slot queue (1 = M/D/1)
    "k_bank": 1.0,  # bank-conflict queue of random traffic (1 = M/D/1 on tRC)
    "k_act": 1.0,  # activate-window queue (1 = M/D/c, half the M/M/c wait, per window)
    "k_write": 1.0,  # share of a write drain a read waits out
    "k_turn": 1.0,  # read/write turnarounds paid per drained batch (1 = both, per batch)
    "k_rm": 1.0,  # share of refresh time lost to random traffic with more than one rank
    "k_win": 1.0,  # controller window of a same-bank stream (1 = read queue + bank queue)
}


def constants(cal: dict[str, float] | None = None) -> dict[str, float]:
    """The constants in force: defaults updated with ``cal`` or the active calibration."""
    out = dict(DEFAULT_CONSTANTS)
    if cal is None:
        from models.blocks.calibration import load

        cal = load("dram").get("constants", {})
    out.update({k: float(v) for k, v in (cal or {}).items() if k in out})
    return out


def _t(t: DramTiming | str | dict) -> dict[str, Any]:
    if isinstance(t, dict):
        return t
    return _timing_dict(timing(t))


@lru_cache(maxsize=256)
def _timing_dict(t: DramTiming) -> dict[str, Any]:
    return t.as_arrays()


def _stream_mask(pattern) -> np.ndarray:
    from models.blocks.workload import sequential_mask

    return sequential_mask(pattern, "stream, random")


# ----------------------------------------------------------------------------- mechanism
def _f(t: dict[str, Any], key: str, default: float = 0.0) -> np.ndarray:
    return np.asarray(t.get(key, default), np.float64)


def _service(t: dict[str, Any], stream, rf, k: dict[str, float]) -> dict[str, np.ndarray]:
    """Cycles per request at saturation and the parts of it (see module notes)."""
    stream = np.asarray(stream, bool)
    burst, tccd_s, tccd_l = _f(t, "burst_cyc"), _f(t, "tccd_s"), _f(t, "tccd_l")
    bg, ranks = _f(t, "bankgroups"), _f(t, "ranks", 1)
    banks = bg * _f(t, "banks_per_group")
    # column slots (DRAMsim3 timing rules): another bank group tCCD_S, the same bank group
    # tCCD_L -- with bank groups disabled every slot is tCCD_S
    slot_s = np.maximum(burst, tccd_s)
    slot_l = np.where(bg > 1, np.maximum(burst, tccd_l), slot_s)
    mode = np.asarray(t["stream_mode"])
    # a stream whose lines stay in one bank row (mode 0): same-bank spacing, except while
    # the next row's bank is already in the controller window at a row boundary
    lines = _f(t, "lines_per_row")
    window = k["k_win"] * (_f(t, "trans_queue", 32) + _f(t, "cmd_queue", 8))
    ov = np.minimum(window, lines / 2)
    t_alone = (lines - 2 * ov) * slot_l
    t_over = ov * np.maximum(2 * slot_s, slot_l)
    c_stream = np.where(mode == STREAM_NEXT_BANKGROUP, slot_s,
                        np.where(mode == STREAM_NEXT_BANK, slot_l, (t_alone + t_over) / lines))
    # random traffic: the next column command goes to another bank group (tCCD_S) or, one
    # time in bankgroups, to the same one (tCCD_L); FR-FCFS avoids rank switches
    slot_r = slot_s + (slot_l - slot_s) / bg
    # activate rate per rank: tRRD, 4 per tFAW, 32 per t32AW (GDDR), tRC per bank
    trc = _f(t, "tras") + _f(t, "trp")
    t32 = _f(t, "t32aw")
    act_rank = np.maximum.reduce([_f(t, "trrd_s"), _f(t, "tfaw") / 4.0, np.where(t32 > 0, t32 / 32.0, 0.0),
                                  trc / banks])
    c_act = act_rank / ranks
    # write drains: a read-to-write and a write-to-read turnaround per batch of writes
    # (the write buffer, trans_queue entries, fills at high load)
    cl, cwl, trtrs = _f(t, "cl"), _f(t, "cwl"), _f(t, "trtrs", 1.0)
    twtr = np.where(bg > 1, np.where(stream & (mode == STREAM_SAME_BANK), _f(t, "twtr_l"), 0.5 * (_f(t, "twtr_s") + _f(t, "twtr_l"))),
                    _f(t, "twtr_s"))
    r2w = cl + burst - cwl + trtrs
    w2r = cwl + burst + twtr
    batch = _f(t, "trans_queue", 32)
    turn = np.maximum(r2w + w2r - 2 * np.where(stream, c_stream, slot_r), 0.0)
    per_write = k["k_turn"] * (1.0 - np.asarray(rf, np.float64)) * turn / batch
    p = k["p_smooth"]
    c_rand = ((slot_r + per_write) ** p + c_act**p) ** (1.0 / p)
    c = np.where(stream, c_stream + per_write, c_rand)
    # refresh blocks a rank for tRP + tRFC every tREFI: a stream sits in one rank; random
    # traffic keeps the other ranks busy while its queue fills with the blocked rank
    share = (_f(t, "trp") + _f(t, "trfc")) / _f(t, "trefi")
    lost = np.clip(share * np.where(stream | (ranks <= 1), 1.0, k["k_rm"]), 0.0, 0.9)
    return {"c": c, "slot_r": slot_r + per_write, "slot_s": slot_s, "slot_l": slot_l, "c_act": c_act, "trc": trc,
            "banks": banks, "ranks": ranks, "lost": lost, "turn": turn, "batch": batch, "t_alone": t_alone,
            "t_over": t_over, "phased": (mode == STREAM_SAME_BANK) & (slot_l > slot_s) & stream}


def evaluate_core(t: dict[str, Any], stream, rf, offered_gbps, k: dict[str, float], rho_cap: float | None = None,
          want_idle: bool = True, util=None):
    """Vectorized model: returns (latency_ns, saturation_gbps, rho, idle_ns or None).
    With ``util`` given, the offered load is ``util`` x the saturation bandwidth.  Scalar
    timings (the common case: one standard per call) take :func:`_core_fixed`; timings
    given as arrays (the fit) take :func:`_core_general`."""
    fx = _fixed(t, k)
    if fx is None:
        return _core_general(t, stream, rf, offered_gbps, k, rho_cap, want_idle, util)
    return _core_fixed(fx, stream, rf, offered_gbps, rho_cap, want_idle, util)


def _core_general(t: dict[str, Any], stream, rf, offered_gbps, k: dict[str, float], rho_cap: float | None = None,
                  want_idle: bool = True, util=None):
    """:func:`evaluate_core` for timings that may be arrays (one formula for every point):
    service and saturation, the offered load, the row state at arrival, then the waits
    (refresh, stream or random traffic, write drains)."""
    f = np.float64
    stream = _stream_mask(stream)
    rf = np.asarray(rf, f)
    tck, req, chans = _f(t, "tck_ns"), _f(t, "request_bytes"), _f(t, "channels", 1)
    s = _service(t, stream, rf, k)
    sat = chans * req / (s["c"] * tck) * (1.0 - s["lost"])
    offered = _resolve_offered(sat, offered_gbps, util)
    rho_raw = offered / sat
    rho = np.clip(rho_raw, 0.0, rho_cap if rho_cap is not None else 1.0 - 1e-9)
    lam = offered / chans / req * tck  # requests per cycle per channel
    hit, base = _general_row_state(t, stream, lam, s)
    vac = _f(t, "trp") + _f(t, "trfc") + _f(t, "trcd")
    trefi = _f(t, "trefi")
    # refresh: a vacation of precharge + tRFC + re-activation once per tREFI per rank
    w_ref = k["k_ref"] * vac * vac / (2.0 * trefi) / (1.0 - rho)
    w_access = np.where(stream, _general_stream_wait(s, lam, rho, k), _general_random_wait(t, s, lam, k))
    lat = (base + w_ref + w_access + _general_write_wait(s, rf, lam, rho, k)) * tck
    if rho_cap is None:
        lat = np.where(rho_raw >= 1.0, np.inf, lat)
    if not want_idle:
        return lat, sat, rho_raw, None
    idle = (hit + np.where(stream, 1.0 / _f(t, "lines_per_row"), 1.0) * _f(t, "trcd")
            + np.where(stream, 0.0, 1.0) * _f(t, "trp") + k["k_ref"] * vac * vac / (2.0 * trefi)) * tck
    return lat, sat, rho_raw, idle


def _general_row_state(t: dict[str, Any], stream, lam, s: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Row state at arrival: a stream hits its open row except at row ends and after a
    refresh closed it; random traffic conflicts unless a refresh closed the bank since.
    Returns the row-hit cycles (controller cycle + CL + burst) and the mean access cycles."""
    trefi = _f(t, "trefi")
    with np.errstate(divide="ignore"):
        interval = np.where(lam > 0, 1.0 / np.maximum(lam, 1e-30), np.inf)
    p_closed = np.minimum(1.0, s["banks"] * s["ranks"] * interval / trefi)
    p_act = np.where(stream, np.minimum(1.0, 1.0 / _f(t, "lines_per_row") + np.minimum(1.0, interval / trefi)), 1.0)
    p_conf = np.where(stream, 0.0, 1.0 - p_closed)
    hit = 1.0 + _f(t, "cl") + _f(t, "burst_cyc")
    return hit, hit + p_act * _f(t, "trcd") + p_conf * _f(t, "trp")


def _general_stream_wait(s: dict[str, np.ndarray], lam, rho, k: dict[str, float]) -> np.ndarray:
    """Stream wait: the column slot as an M/D/1 server; a same-bank stream alternates a
    slow phase (one bank, slot_l per line) whose queue is bounded by the phase length, and
    a fast one (two banks overlapping)."""
    w_bus = k["k_bus"] * 0.5 * s["c"] * rho / (1.0 - rho)
    sl = s["slot_l"]
    rho_a = lam * sl
    f_a = s["t_alone"] / np.maximum(s["t_alone"] + s["t_over"], 1e-9)
    gap = np.maximum(1.0 - rho_a, np.sqrt(sl / np.maximum(s["t_alone"], sl)))
    w_a = 0.5 * sl * rho_a / gap + np.maximum(rho_a - 1.0, 0.0) * s["t_alone"] / 2.0
    so = np.maximum(2.0 * s["slot_s"], sl) / 2.0
    rho_o = np.clip(lam * so, 0.0, 0.999)
    w_o = 0.5 * so * rho_o / (1.0 - rho_o)
    return np.where(s["phased"], np.maximum(k["k_bus"] * (f_a * w_a + (1.0 - f_a) * w_o), w_bus), w_bus)


def _general_random_wait(t: dict[str, Any], s: dict[str, np.ndarray], lam, k: dict[str, float]) -> np.ndarray:
    """Random-traffic wait: bank conflicts (each request holds its bank tRC; M/D/1 per
    bank), the activate windows as M/D/c servers (c = 4 slots of tFAW, 32 of t32AW; half
    the M/M/c wait), tRRD (M/D/1), and the column slot (M/D/1)."""
    from models.blocks import queueing

    lim = 0.999
    rho_b = np.clip(lam / (s["banks"] * s["ranks"]) * s["trc"], 0.0, lim)
    w_bank = k["k_bank"] * 0.5 * s["trc"] * rho_b / (1.0 - rho_b)
    lam_r = lam / s["ranks"]
    faw = _f(t, "tfaw")
    w_faw = 0.5 * queueing.mmc_wait(np.minimum(lam_r, lim * 4.0 / faw), faw, 4)
    t32 = _f(t, "t32aw")
    t32s = np.maximum(t32, 1.0)
    w_32 = np.where(t32 > 0, 0.5 * queueing.mmc_wait(np.minimum(lam_r, lim * 32.0 / t32s), t32s, 32), 0.0)
    trrd = _f(t, "trrd_s")
    rho_rrd = np.clip(lam_r * trrd, 0.0, lim)
    w_rrd = 0.5 * trrd * rho_rrd / (1.0 - rho_rrd)
    rho_col = np.clip(lam * s["slot_r"], 0.0, lim)
    w_col = 0.5 * s["slot_r"] * rho_col / (1.0 - rho_col)
    return w_bank + k["k_act"] * (w_faw + w_32 + w_rrd) + w_col


def _general_write_wait(s: dict[str, np.ndarray], rf, lam, rho, k: dict[str, float]) -> np.ndarray:
    """Write drains: a drain of B writes (9 when the queues run dry at low load, up to the
    write buffer at high load) occupies the bank queues for B requests' service; a read
    arriving meanwhile waits out the rest of it."""
    lam_w = (1.0 - rf) * lam
    batch = 9.0 + (s["batch"] - 9.0) * rho
    v_w = batch * s["c"] + s["turn"]
    return k["k_write"] * lam_w * v_w * v_w / (2.0 * batch)


# ----------------------------------------------------------------------------- fast path
# Models evaluate the block once per standard (scalar timings) on per-point loads and read
# fractions.  Everything that depends only on the timings and the constants is then a
# number, computed once per (timing set, constants) by _fixed and cached; _core_fixed runs
# each pattern's formula only on the points with that pattern.  The formulas are those of
# _service and _core_general, regrouped so that the per-point work is as small as possible
# (tests/test_dram_fast.py pins the two paths together).
_TIMING_KEYS = tuple(f.name for f in fields(DramTiming) if f.name not in ("name", "protocol", "source"))
_FIXED_CACHE: dict[tuple, dict[str, float]] = {}
_FIXED_CACHE_MAX = 512
#: utilization cap of the per-station M/D/1 and M/D/c waits (as in _core_general)
_RHO_LIM = 0.999


def _fixed(t: dict[str, Any], k: dict[str, float]) -> dict[str, float] | None:
    """Per-configuration numbers of the fast path, or None when a timing is an array."""
    vals = []
    for name in _TIMING_KEYS:
        v = t.get(name)
        if isinstance(v, np.ndarray):
            if v.ndim:
                return None
            v = v.item()
        vals.append(v)
    key = (tuple(vals), tuple(k.items()))
    fx = _FIXED_CACHE.get(key)
    if fx is None:
        if len(_FIXED_CACHE) >= _FIXED_CACHE_MAX:
            _FIXED_CACHE.clear()
        fx = _FIXED_CACHE[key] = _fixed_numbers(dict(zip(_TIMING_KEYS, vals)), k)
    return fx


def _fixed_numbers(t: dict[str, Any], k: dict[str, float]) -> dict[str, float]:
    def g(key: str, default: float = 0.0) -> float:
        v = t.get(key)
        return float(default if v is None else v)

    burst, tccd_s, tccd_l = g("burst_cyc"), g("tccd_s"), g("tccd_l")
    bg, ranks = g("bankgroups"), g("ranks", 1)
    banks = bg * g("banks_per_group")
    slot_s = max(burst, tccd_s)
    slot_l = max(burst, tccd_l) if bg > 1 else slot_s
    mode = t["stream_mode"]
    lines = g("lines_per_row")
    window = k["k_win"] * (g("trans_queue", 32) + g("cmd_queue", 8))
    ov = min(window, lines / 2)
    t_alone = (lines - 2 * ov) * slot_l
    t_over = ov * max(2 * slot_s, slot_l)
    c_stream = (slot_s if mode == STREAM_NEXT_BANKGROUP
                else (slot_l if mode == STREAM_NEXT_BANK else (t_alone + t_over) / lines))
    slot_r = slot_s + (slot_l - slot_s) / bg
    trc = g("tras") + g("trp")
    t32 = g("t32aw")
    c_act = max(g("trrd_s"), g("tfaw") / 4.0, t32 / 32.0 if t32 > 0 else 0.0, trc / banks) / ranks
    cl, cwl, trtrs, burst = g("cl"), g("cwl"), g("trtrs", 1.0), burst
    twtr_s, twtr_l = g("twtr_s"), g("twtr_l")
    twtr_rand = 0.5 * (twtr_s + twtr_l) if bg > 1 else twtr_s
    twtr_stream = (twtr_l if mode == STREAM_SAME_BANK else twtr_rand) if bg > 1 else twtr_s
    r2w = cl + burst - cwl + trtrs
    batch = g("trans_queue", 32)
    turn_s = max(r2w + (cwl + burst + twtr_stream) - 2 * c_stream, 0.0)
    turn_r = max(r2w + (cwl + burst + twtr_rand) - 2 * slot_r, 0.0)
    trp, trfc, trefi, trcd = g("trp"), g("trfc"), g("trefi"), g("trcd")
    share = (trp + trfc) / trefi
    lost_s = min(max(share, 0.0), 0.9)
    lost_r = min(max(share * (1.0 if ranks <= 1 else k["k_rm"]), 0.0), 0.9)
    tck, req, chans = g("tck_ns"), g("request_bytes"), g("channels", 1)
    hit = 1.0 + cl + burst
    vac = trp + trfc + trcd
    w_ref0 = k["k_ref"] * vac * vac / (2.0 * trefi)
    sl = slot_l
    return {
        "p": k["p_smooth"], "c_stream": c_stream, "slot_r": slot_r, "c_act_p": c_act ** k["p_smooth"],
        "pw_s": k["k_turn"] * turn_s / batch, "pw_r": k["k_turn"] * turn_r / batch, "turn_s": turn_s, "turn_r": turn_r,
        "batch": batch, "k_sat_s": chans * req / tck * (1.0 - lost_s), "k_sat_r": chans * req / tck * (1.0 - lost_r),
        "lam_per_gbps": tck / chans / req, "tck": tck, "trcd": trcd, "trp": trp, "hit": hit, "w_ref0": w_ref0,
        "inv_lines": 1.0 / lines, "refresh_rate": 1.0 / trefi, "closed_rate": banks * ranks / trefi,
        "k_bus_half": 0.5 * k["k_bus"], "k_bus": k["k_bus"], "k_write_half": 0.5 * k["k_write"], "k_act": k["k_act"],
        "phased": float((mode == STREAM_SAME_BANK) and (sl > slot_s) and True), "sl": sl, "t_alone": t_alone,
        "f_a": t_alone / max(t_alone + t_over, 1e-9), "gap0": float(np.sqrt(sl / max(t_alone, sl))),
        "so": max(2.0 * slot_s, sl) / 2.0,
        "bank_trc": trc / (banks * ranks), "w_bank_k": k["k_bank"] * 0.5 * trc, "ranks": ranks,
        "faw": g("tfaw"), "t32": t32, "trrd": g("trrd_s"),
        "idle_s": (hit + 1.0 / lines * trcd + w_ref0) * tck, "idle_r": (hit + trcd + trp + w_ref0) * tck,
    }


def _mdc_half_wait(lam, service: float, servers: int) -> np.ndarray:
    """Half the M/M/c wait (``0.5 * queueing.mmc_wait``) at ``lam`` already capped below
    saturation: the same Erlang B recursion, without the saturation branches."""
    a = lam * service
    b = a / (1.0 + a)
    for j in range(2, servers + 1):
        ab = a * b
        b = ab / (j + ab)
    pc = b / (1.0 - a / servers * (1.0 - b))
    return 0.5 * (pc * service / (servers - a))


def _rho(rho_raw, rho_cap):
    return np.minimum(np.maximum(rho_raw, 0.0), rho_cap if rho_cap is not None else 1.0 - 1e-9)


def _power(x, p: float) -> np.ndarray:
    """``x ** p`` for x > 0: square-and-multiply when p is a small whole number (cheaper
    than ``pow``, within a few ulp of it), else ``pow``."""
    if p == int(p) and 1 <= p <= 64:
        e, base, out = int(p), x, None
        while e:
            if e & 1:
                out = base if out is None else out * base
            e >>= 1
            if e:
                base = base * base
        return out
    return x**p


def _branch_sat(fx: dict[str, float], stream: bool, rf):
    """(cycles per request c, the random column slot with its write share -- c for
    streams --, saturation GB/s) of one pattern's points."""
    if stream:
        c = fx["c_stream"] + (1.0 - rf) * fx["pw_s"]
        return c, c, fx["k_sat_s"] / c
    sr = fx["slot_r"] + (1.0 - rf) * fx["pw_r"]
    # smooth maximum of column slot and activate rate
    c = np.exp(np.log(_power(sr, fx["p"]) + fx["c_act_p"]) / fx["p"])
    return c, sr, fx["k_sat_r"] / c


def _branch_lat(fx: dict[str, float], stream: bool, rf, c, sr, offered, rho_raw, rho_cap):
    """Mean read latency (ns) of one pattern's points (see _core_general)."""
    rho = _rho(rho_raw, rho_cap)
    one_m = 1.0 - rho
    lam = offered * fx["lam_per_gbps"]
    with np.errstate(divide="ignore"):
        inv_lam = 1.0 / lam
    w = fx["w_ref0"] / one_m
    if stream:
        p_act = np.minimum(1.0, fx["inv_lines"] + np.minimum(1.0, inv_lam * fx["refresh_rate"]))
        w = w + (fx["hit"] + p_act * fx["trcd"])
        w_bus = fx["k_bus_half"] * c * rho / one_m
        if fx["phased"]:
            sl = fx["sl"]
            rho_a = lam * sl
            w_a = 0.5 * sl * rho_a / np.maximum(1.0 - rho_a, fx["gap0"]) + np.maximum(rho_a - 1.0, 0.0) * (fx["t_alone"] / 2.0)
            so = fx["so"]
            rho_o = np.minimum(lam * so, 0.999)
            w_o = 0.5 * so * rho_o / (1.0 - rho_o)
            f_a = fx["f_a"]
            w_bus = np.maximum(fx["k_bus"] * (f_a * w_a + (1.0 - f_a) * w_o), w_bus)
        w = w + w_bus
        turn = fx["turn_s"]
    else:
        p_conf = 1.0 - np.minimum(1.0, inv_lam * fx["closed_rate"])
        w = w + (fx["hit"] + fx["trcd"] + p_conf * fx["trp"])
        rho_b = np.minimum(lam * fx["bank_trc"], _RHO_LIM)
        w_rand = fx["w_bank_k"] * rho_b / (1.0 - rho_b)
        lam_r = lam / fx["ranks"] if fx["ranks"] != 1.0 else lam
        faw = fx["faw"]
        w_act = _mdc_half_wait(np.minimum(lam_r, _RHO_LIM * 4.0 / faw), faw, 4)
        t32 = fx["t32"]
        if t32 > 0:
            w_act = w_act + _mdc_half_wait(np.minimum(lam_r, _RHO_LIM * 32.0 / t32), t32, 32)
        trrd = fx["trrd"]
        rho_rrd = np.minimum(lam_r * trrd, _RHO_LIM)
        w_act = w_act + 0.5 * trrd * rho_rrd / (1.0 - rho_rrd)
        rho_col = np.minimum(lam * sr, _RHO_LIM)
        w = w + (w_rand + fx["k_act"] * w_act + 0.5 * sr * rho_col / (1.0 - rho_col))
        turn = fx["turn_r"]
    # write drains (see _core_general)
    batch = 9.0 + (fx["batch"] - 9.0) * rho
    v_w = batch * c + turn
    w = w + fx["k_write_half"] * ((1.0 - rf) * lam) * v_w * v_w / batch
    lat = w * fx["tck"]
    if rho_cap is None:
        lat = np.where(rho_raw >= 1.0, np.inf, lat)
    return lat


def _resolve_offered(sat, offered_gbps, util):
    if util is not None:
        return np.asarray(util, np.float64) * sat
    if callable(offered_gbps):
        return np.asarray(offered_gbps(sat), np.float64)
    return np.asarray(offered_gbps, np.float64)


#: points per slice of the fast path: temporaries of this size stay in the L2 cache and
#: below malloc's mmap threshold (whole-array temporaries are page-faulted in each time)
_CHUNK = 8192


def _sliced(fn, n: int, *args) -> tuple[np.ndarray, ...]:
    """``fn(*args)`` on slices of ``_CHUNK`` points of the flat length-``n`` arguments
    (0-d arguments are passed whole); returns a tuple of flat length-``n`` arrays."""
    if n <= 2 * _CHUNK:
        return tuple(o if np.ndim(o) else np.full(n, o) for o in fn(*args))
    res = None
    for s in range(0, n, _CHUNK):
        part = fn(*[a[s : s + _CHUNK] if np.ndim(a) else a for a in args])
        if res is None:
            res = [np.empty(n) for _ in part]
        for r, p in zip(res, part):
            r[s : s + _CHUNK] = p
    return tuple(res)


def _flat(x, shape):
    """``x`` broadcast to ``shape`` and flattened; 0-d stays 0-d."""
    return np.broadcast_to(x, shape).reshape(-1) if np.ndim(x) else x


def _core_fixed(fx: dict[str, float], stream, rf, offered_gbps, rho_cap, want_idle, util):
    """:func:`evaluate_core` for scalar timings (``fx`` from :func:`_fixed`)."""
    stream = _stream_mask(stream)
    rf = np.asarray(rf, np.float64)
    shape0 = np.broadcast_shapes(stream.shape, rf.shape)
    n0 = int(np.prod(shape0))
    # the points of each pattern: (pattern, their flat indices or None for all, read fractions)
    if stream.ndim == 0 or bool(stream.all()) or not stream.any():
        groups = [(bool(stream.flat[0]) if stream.size else False, None, _flat(rf, shape0))]
    else:
        m = _flat(stream, shape0)
        rf_f = _flat(rf, shape0)
        groups = [(s, idx, rf_f[idx] if rf.ndim else rf) for s, idx in ((True, np.flatnonzero(m)), (False, np.flatnonzero(~m)))]

    def scatter(parts, k):
        if len(groups) == 1:
            return parts[0][k]
        out = np.empty(n0)
        for (_, idx, _), part in zip(groups, parts):
            out[idx] = part[k]
        return out

    sat_parts = [_sliced(lambda r, s=s: _branch_sat(fx, s, r), n0 if idx is None else idx.size, rf_p)
                 for s, idx, rf_p in groups]
    sat = scatter(sat_parts, 2).reshape(shape0)
    offered = _resolve_offered(sat, offered_gbps, util)
    shape = np.broadcast_shapes(shape0, offered.shape)
    if shape != shape0:  # the load adds dimensions: evaluate on the broadcast inputs
        lat, _, rho_raw, _ = _core_fixed(fx, np.broadcast_to(stream, shape), np.broadcast_to(rf, shape), offered,
                                         rho_cap, False, None)
    else:
        off_f = _flat(offered, shape0)
        lat_parts = [_sliced(lambda r, c, sr, st, o, s=s: _lat_rho(fx, s, r, c, sr, st, o, rho_cap),
                             n0 if idx is None else idx.size, rf_p, *sat_p,
                             off_f if idx is None or not np.ndim(off_f) else off_f[idx])
                     for (s, idx, rf_p), sat_p in zip(groups, sat_parts)]
        lat, rho_raw = scatter(lat_parts, 0).reshape(shape), scatter(lat_parts, 1).reshape(shape)
    idle = np.where(stream, fx["idle_s"], fx["idle_r"]) if want_idle else None
    return lat, sat, rho_raw, idle


def _lat_rho(fx: dict[str, float], s: bool, rf, c, sr, sat, offered, rho_cap):
    rho_raw = offered / sat
    return _branch_lat(fx, s, rf, c, sr, offered, rho_raw, rho_cap), rho_raw


# ----------------------------------------------------------------------------- public API
def peak_bw_gbps(t: DramTiming | str) -> float:
    """Peak bandwidth (GB/s): channels x request bytes per fastest column slot
    ``max(burst, tCCD_S)`` cycles."""
    a = _t(t)
    return float(a.get("channels", 1) * a["request_bytes"] / (max(a["burst_cyc"], a["tccd_s"]) * a["tck_ns"]))


def saturation_bw_gbps(t: DramTiming | str, pattern="random", read_frac=1.0, *, cal=None) -> np.ndarray:
    """Sustainable (saturation) bandwidth in GB/s for a pattern and read fraction."""
    k = constants(cal)
    a = _t(t)
    fx = _fixed(a, k)
    if fx is not None:
        stream = _stream_mask(pattern)
        rf = np.asarray(read_frac, np.float64)
        if stream.ndim == 0:
            return np.asarray(_branch_sat(fx, bool(stream), rf)[2])
        return np.where(stream, _branch_sat(fx, True, rf)[2], _branch_sat(fx, False, rf)[2])
    s = _service(a, _stream_mask(pattern), read_frac, k)
    f = np.float64
    return (np.asarray(a.get("channels", 1), f) * np.asarray(a["request_bytes"], f) / (s["c"] * np.asarray(a["tck_ns"], f))
            * (1.0 - s["lost"]))


def sustainable_fraction(t: DramTiming | str, pattern="random", read_frac=1.0, *, cal=None) -> np.ndarray:
    """Saturation bandwidth as a fraction of :func:`peak_bw_gbps`."""
    return saturation_bw_gbps(t, pattern, read_frac, cal=cal) / peak_bw_gbps(t)


def idle_latency_ns(t: DramTiming | str, pattern="random", *, cal=None) -> np.ndarray:
    """Mean read latency (ns) at vanishing load: row hit for streams, row conflict for
    random traffic, plus the mean refresh wait."""
    k = constants(cal)
    _, _, _, idle = evaluate_core(_t(t), _stream_mask(pattern), 1.0, 0.0, k)
    return idle


def loaded_latency_ns(t: DramTiming | str, offered_gbps, pattern="random", read_frac=1.0, *, cal=None) -> np.ndarray:
    """Mean read latency (ns, from arrival) at an offered load in GB/s; inf at or above
    saturation."""
    k = constants(cal)
    lat, _, _, _ = evaluate_core(_t(t), _stream_mask(pattern), read_frac, offered_gbps, k)
    return lat


def latency_at_utilization_ns(t: DramTiming | str, util, pattern="random", read_frac=1.0, *, cal=None) -> np.ndarray:
    """Mean read latency (ns) at ``util`` = offered / saturation bandwidth (0..1)."""
    sat = saturation_bw_gbps(t, pattern, read_frac, cal=cal)
    return loaded_latency_ns(t, np.asarray(util, np.float64) * sat, pattern, read_frac, cal=cal)


def evaluate(t: DramTiming | str | dict, offered_gbps=None, pattern="random", read_frac=1.0, *, util=None,
             cal=None) -> dict[str, np.ndarray]:
    """Everything in one pass: ``latency_ns`` (mean read latency from arrival, inf at or
    above saturation), ``saturation_gbps``, ``idle_ns`` and ``util``.  The load is
    ``offered_gbps`` (GB/s per channel set), or a function of the saturation bandwidth
    returning it (for callers whose load depends on it), or ``util`` x saturation."""
    k = constants(cal)
    lat, sat, rho, idle = evaluate_core(_t(t), _stream_mask(pattern), read_frac, 0.0 if offered_gbps is None else offered_gbps, k,
                                util=util)
    return {"latency_ns": lat, "saturation_gbps": sat, "idle_ns": idle, "util": rho}


def row_hit_rate(t: DramTiming | str, pattern="random", offered_gbps=1.0) -> np.ndarray:
    """Modelled row-buffer hit rate: ``1 - 1/lines_per_row`` less refresh closures for
    streams; 0 for uniformly random addresses over a large span."""
    a = _t(t)
    stream = _stream_mask(pattern)
    lam = np.asarray(offered_gbps, np.float64) / a["request_bytes"] * a["tck_ns"]
    interval = 1.0 / np.maximum(lam, 1e-30)
    miss = np.minimum(1.0, 1.0 / a["lines_per_row"] + np.minimum(1.0, interval / a["trefi"]))
    return np.where(stream, 1.0 - miss, 0.0)


def timing_dict(t: DramTiming) -> dict[str, Any]:
    """A DramTiming as a plain dict (for TOML/JSON)."""
    return asdict(t)


# ----------------------------------------------------------------------------- parameter group
#: Labels a model's DRAM-medium parameter may offer: the standards above in parameter form
#: (``"DDR5-4800"`` -> ``"ddr5_4800"``); :func:`standard_of` maps a label back.
MEDIA_LABELS: tuple[str, ...] = tuple(k.lower().replace("-", "_") for k in STANDARDS)
#: Standard names in a fixed order: ``DramSpec.standard`` is a code into it.
STANDARD_NAMES: tuple[str, ...] = tuple(STANDARDS)
#: Access patterns the block evaluates (``pattern``): ``"stream"`` or ``"random"``.
PATTERNS: tuple[str, ...] = ("random", "stream")
#: The group's fields, in declaration order: unprefixed name -> (doc, block bounds, integer).
#: A model names the fields it has (with its defaults and sources) and may narrow the bounds.
GROUP_FIELDS: dict[str, tuple[str, tuple[float, float] | None, bool]] = {
    "media": ("DRAM standard of the memory (dram block timing set)", None, False),
    "channels": ("memory channels as vendors count them (a DDR5 channel has 2 subchannels)", (1, 64), True),
    "capacity_gib": ("DRAM capacity of one device", (1.0, 65536.0), False),
    "pattern": ("access pattern: random lines (row conflicts) or a stream (open rows)", None, False),
    "dram_ns": ("DRAM load latency from the memory controller (idle)", (1.0, 1000.0), False),
    "max_dram_gib": ("most DRAM the DIMM slots take", (1.0, 65536.0), False),
    "dram_usd_per_gib": ("DRAM price per GiB", (0.0, 1000.0), False),
}


def standard_of(label: str) -> str:
    """The dram-block standard of a medium label (``"ddr5_4800"`` -> ``"DDR5-4800"``)."""
    return timing(str(label).replace("_", "-")).name


def params(prefix: str = "", *, source: str | dict[str, str], bounds: dict[str, tuple[float, float]] | None = None,
           doc: dict[str, str] | None = None, media_choices: tuple[str, ...] = MEDIA_LABELS,
           **defaults: Any) -> tuple[Param, ...]:
    """A DRAM memory's parameters for a model: one ``<prefix><field>`` per field of
    :data:`GROUP_FIELDS` given a default in ``defaults`` (``channels=2``, ``dram_ns=...``),
    in the group's order.  ``source``: one for all or one per unprefixed field (defaults are
    the model's, so their sources are too); ``bounds`` / ``doc`` override the block's per
    field; ``media_choices`` are labels of :data:`MEDIA_LABELS` (the model's order)."""
    unknown = sorted(set(defaults) - set(GROUP_FIELDS))
    if unknown:
        raise ValueError(f"dram.params: unknown fields {unknown}; known: {list(GROUP_FIELDS)}")
    bad = [m for m in media_choices if m not in MEDIA_LABELS]
    if bad:
        raise ValueError(f"dram.params: media {bad} not in {MEDIA_LABELS}")
    out = []
    for key, (block_doc, block_bounds, integer) in GROUP_FIELDS.items():
        if key not in defaults:
            continue
        src = source if isinstance(source, str) else source.get(key, "")
        choices = {"media": tuple(media_choices), "pattern": PATTERNS}.get(key)
        out.append(Param(prefix + key, defaults[key], src, choices=choices, integer=integer,
                         bounds=None if choices else (bounds or {}).get(key, block_bounds),
                         doc=(doc or {}).get(key, block_doc)))
    return tuple(out)


@dataclass(frozen=True)
class DramSpec:
    """A batch's DRAM memory as columns of length ``Batch.n`` (:func:`from_batch`); a field
    the model does not declare is None."""

    #: Code into :data:`STANDARD_NAMES` (the medium's timing set).
    standard: np.ndarray | None
    channels: np.ndarray | None
    capacity_gib: np.ndarray | None
    #: True for a stream, False for random lines (the block's ``pattern`` argument).
    stream: np.ndarray | None
    dram_ns: np.ndarray | None
    max_dram_gib: np.ndarray | None
    dram_usd_per_gib: np.ndarray | None


def from_batch(p: Batch, prefix: str = "") -> DramSpec:
    """The DRAM memory of a model's batch, from the parameters :func:`params` declared with ``prefix``."""
    n = (p.n,)

    def col(key: str, dtype=np.float64) -> np.ndarray | None:
        return np.broadcast_to(np.asarray(p[prefix + key], dtype), n) if prefix + key in p else None

    standard = None
    if prefix + "media" in p:
        codes = {m: STANDARD_NAMES.index(standard_of(m)) for m in MEDIA_LABELS}
        standard = np.broadcast_to(p.pick(prefix + "media", codes), n)
    stream = np.broadcast_to(p.is_(prefix + "pattern", "stream"), n) if prefix + "pattern" in p else None
    return DramSpec(standard, col("channels"), col("capacity_gib"), stream, col("dram_ns"), col("max_dram_gib"),
                    col("dram_usd_per_gib"))
