"""DRAM device block: idle latency, loaded read latency and sustainable bandwidth of one
DRAM channel, computed from its timing parameters.

Everything is derived from the JEDEC-style timings (in memory-clock cycles of ``tck_ns``)
plus a few fitted constants shared by all standards (:data:`DEFAULT_CONSTANTS`, fitted by
``dse calibrate dram`` against DRAMsim3 and stored in ``results/calibration/dram.toml``).
The functions take timings as arguments, so any standard -- including one given only by
its timings -- can be evaluated; :data:`STANDARDS` holds convenience timing sets.

Mechanism (one channel, open-page FR-FCFS controller)
-----------------------------------------------------
* **Column spacing** ``c_col`` (cycles per request on the data bus): ``max(burst, tCCD)``;
  a stream whose consecutive lines stay in one bank (column bits lowest in the address
  map) pays ``tCCD_S + w_ccdl (tCCD_L - tCCD_S)``; random traffic uses other bank groups
  (``tCCD_S``) unless bank groups are disabled (GDDR6 in DRAMsim3: ``tCCD_L``).
* **Activate rate** ``c_act`` (random traffic: every request needs its own ACT):
  ``max(tRRD_S, tFAW / 4, t32AW / 32, tRC / banks) / ranks``.  This is why random HBM2
  saturates at about a quarter of its peak: 4 ACTs per tFAW = 30 cycles give one 64-B line
  per 7.5 ns (8.5 GB/s) against a 2-ns burst.  GDDR6 is capped the same way by t32AW.
* The two limits combine as a smooth maximum ``(c_col^p + c_act^p)^(1/p)``.
* **Read/write turnaround**: every drained write batch of ``write_batch`` requests costs one
  read-to-write (``CL + burst - CWL + tRTRS``) and one write-to-read (``CWL + burst + tWTR``)
  turnaround, spread over the batch.
* **Refresh** takes ``tRFC / tREFI`` of each rank's time (``refresh_multirank`` of it when
  random traffic can use another rank meanwhile).
* Saturation bandwidth = ``request_bytes / (c tCK) x (1 - refresh share)``.
* **Read latency** from arrival = ``ctrl + CL + burst + P_act tRCD + P_conflict tRP``
  (row hit for streams, row miss / conflict for random) plus queueing terms in the
  utilization ``rho = offered / saturation``:
  refresh as periodic server vacations (``k_refresh V^2 / (2 tREFI) / (1 - rho)`` with
  ``V = tRP + tRFC + tRCD``: precharge-all, refresh, re-activate),
  the bus as an M/D/1-like station (``k_bus c rho / (1 - rho)``), bank conflicts for random
  traffic (``k_bank tRC rho_b / (1 - rho_b)``, ``rho_b = lambda tRC / banks``) and write
  drains as vacations seen by reads.  At ``rho >= 1`` latency is ``inf``.

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

``pattern`` is ``"stream"`` (sequential) or ``"random"``, or an array of booleans
(``True`` = stream).  Every numeric argument broadcasts; ``timing`` may be a
:class:`DramTiming` or a standard name.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np

from dse.errors import DseError, did_you_mean

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
]


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
#: Uncalibrated defaults of the shared constants (physical first guesses); the shipped
#: calibration (results/calibration/dram.toml) replaces them unless DSE_CALIBRATION=none.
DEFAULT_CONSTANTS: dict[str, float] = {
    "w_ccdl": 1.0,  # share of tCCD_L - tCCD_S paid between same-bank column commands
    "p_smooth": 4.0,  # exponent of the smooth max of column and activate limits
    "write_batch": 32.0,  # writes per drain (the 32-entry write buffer)
    "refresh_multirank": 1.0,  # share of refresh time lost to random traffic with >1 rank
    "ctrl_cyc": 1.0,  # controller pipeline cycles on every read
    "k_refresh": 1.0,  # refresh vacation wait multiplier
    "k_bus": 0.5,  # bus queue (M/D/1: 0.5)
    "k_bank": 0.5,  # bank-conflict queue for random traffic (M/D/1: 0.5)
    "k_write": 1.0,  # write-drain vacation multiplier
    "k_stream": 0.0,  # extra stream queueing (admission stalls behind a full per-bank queue)
    "k_turn_stream": 1.0,  # share of the turnaround a stream pays (writes drain to the open row)
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
    return timing(t).as_arrays()


def _stream_mask(pattern) -> np.ndarray:
    if isinstance(pattern, str):
        p = pattern.lower()
        if p in ("stream", "sequential", "seq"):
            return np.asarray(True)
        if p in ("random", "rand"):
            return np.asarray(False)
        raise DseError(f"pattern {pattern!r} is not allowed; allowed: stream, random")
    arr = np.asarray(pattern)
    if arr.dtype.kind in "US" or arr.dtype == object:
        return np.asarray([_stream_mask(str(x)) for x in arr.ravel()]).reshape(arr.shape)
    return arr.astype(bool)


# ----------------------------------------------------------------------------- mechanism
def _service(t: dict[str, Any], stream, rf, k: dict[str, float]):
    """(cycles per request at saturation c, column spacing c_col, refresh share lost)."""
    f = np.float64
    burst = np.asarray(t["burst_cyc"], f)
    tccd_s = np.asarray(t["tccd_s"], f)
    tccd_l = np.asarray(t["tccd_l"], f)
    bg = np.asarray(t["bankgroups"], f)
    ranks = np.asarray(t["ranks"], f)
    banks = bg * np.asarray(t["banks_per_group"], f)
    mode = np.asarray(t["stream_mode"])
    same_bank_gap = tccd_s + k["w_ccdl"] * (tccd_l - tccd_s)
    gap_stream = np.where(mode == 1, tccd_s, np.where(mode == 2, tccd_l, same_bank_gap))
    gap_random = np.where(bg > 1, tccd_s, tccd_l)
    c_col = np.maximum(burst, np.where(stream, gap_stream, gap_random))
    t32 = np.asarray(t.get("t32aw", 0.0), f)
    trc = np.asarray(t["tras"], f) + np.asarray(t["trp"], f)
    act_rank = np.maximum.reduce([np.asarray(t["trrd_s"], f), np.asarray(t["tfaw"], f) / 4.0, t32 / 32.0,
                                  trc / banks])
    c_act = act_rank / ranks
    p = k["p_smooth"]
    c_rand = (c_col**p + c_act**p) ** (1.0 / p)
    c = np.where(stream, c_col, c_rand)
    # read/write turnarounds per drained batch
    cl, cwl = np.asarray(t["cl"], f), np.asarray(t["cwl"], f)
    trtrs = np.asarray(t.get("trtrs", 1.0), f)
    twtr = np.where(stream, np.asarray(t["twtr_l"], f), 0.5 * (np.asarray(t["twtr_s"], f) + np.asarray(t["twtr_l"], f)))
    t_rtw = cl + burst - cwl + trtrs
    t_wtr = cwl + burst + twtr
    turn = np.maximum(t_rtw + t_wtr - 2.0 * c_col, 0.0) * np.where(stream, k["k_turn_stream"], 1.0)
    wfrac = 1.0 - np.asarray(rf, f)
    c = c + wfrac * turn / k["write_batch"]
    ref_share = np.asarray(t["trfc"], f) / np.asarray(t["trefi"], f)
    phi = np.where(stream | (ranks <= 1), 1.0, k["refresh_multirank"])
    lost = np.clip(phi * ref_share, 0.0, 0.9)
    return c, c_col, lost, turn, trc, banks * ranks


def _core(t: dict[str, Any], stream, rf, offered_gbps, k: dict[str, float], rho_cap: float | None = None,
          want_idle: bool = True, util=None):
    """Vectorized model: returns (latency_ns, saturation_gbps, rho, idle_ns or None).
    With ``util`` given, the offered load is ``util`` x the saturation bandwidth."""
    f = np.float64
    stream = _stream_mask(stream)
    rf = np.asarray(rf, f)
    tck = np.asarray(t["tck_ns"], f)
    req = np.asarray(t["request_bytes"], f)
    chans = np.asarray(t.get("channels", 1), f)
    c, c_col, lost, turn, trc, nbanks = _service(t, stream, rf, k)
    sat = chans * req / (c * tck) * (1.0 - lost)
    if util is not None:
        offered = np.asarray(util, f) * sat
    elif callable(offered_gbps):
        offered = np.asarray(offered_gbps(sat), f)
    else:
        offered = np.asarray(offered_gbps, f)
    rho_raw = offered / sat
    rho = np.clip(rho_raw, 0.0, rho_cap if rho_cap is not None else 1.0 - 1e-12)
    lam = offered / chans / req * tck  # requests per cycle per channel
    trefi = np.asarray(t["trefi"], f)
    trfc = np.asarray(t["trfc"], f)
    # row state: streams hit the open row except at row ends and after a refresh
    with np.errstate(divide="ignore"):
        interval = np.where(lam > 0, 1.0 / np.maximum(lam, 1e-30), np.inf)
    lpr = np.asarray(t["lines_per_row"], f)
    p_closed_ref = np.minimum(1.0, nbanks * interval / trefi)
    p_act_stream = np.minimum(1.0, 1.0 / lpr + np.minimum(1.0, interval / trefi))
    p_act = np.where(stream, p_act_stream, 1.0)
    p_conf = np.where(stream, 0.0, 1.0 - p_closed_ref)
    idle_hit = k["ctrl_cyc"] + np.asarray(t["cl"], f) + np.asarray(t["burst_cyc"], f)
    l0 = idle_hit + p_act * np.asarray(t["trcd"], f) + p_conf * np.asarray(t["trp"], f)
    one_m = 1.0 - rho
    # a refresh blocks the rank for precharge-all + tRFC + re-activation of the row
    v_ref = trfc + np.asarray(t["trp"], f) + np.asarray(t["trcd"], f)
    w_ref = k["k_refresh"] * v_ref * v_ref / (2.0 * trefi) / one_m
    w_bus = k["k_bus"] * c * rho / one_m
    rho_b = np.clip(lam * trc / nbanks, 0.0, 0.999)
    w_bank = np.where(stream, 0.0, k["k_bank"] * trc * rho_b / (1.0 - rho_b))
    lam_w = (1.0 - rf) * lam
    v = k["write_batch"] * c_col + turn
    w_wr = k["k_write"] * (lam_w / k["write_batch"]) * v * v / 2.0 / one_m
    w_st = np.where(stream, k["k_stream"] * trfc * rho * rho / one_m, 0.0)
    lat_cyc = l0 + w_ref + w_bus + w_bank + w_wr + w_st
    lat = lat_cyc * tck
    if rho_cap is None:
        lat = np.where(rho_raw >= 1.0, np.inf, lat)
    if not want_idle:
        return lat, sat, rho_raw, None
    idle = (idle_hit + np.where(stream, 1.0 / lpr, 1.0) * np.asarray(t["trcd"], f)
            + np.where(stream, 0.0, 1.0) * np.asarray(t["trp"], f)
            + k["k_refresh"] * v_ref * v_ref / (2.0 * trefi)) * tck
    return lat, sat, rho_raw, idle


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
    c, _, lost, _, _, _ = _service(a, _stream_mask(pattern), read_frac, k)
    f = np.float64
    return np.asarray(a.get("channels", 1), f) * np.asarray(a["request_bytes"], f) / (c * np.asarray(a["tck_ns"], f)) * (1.0 - lost)


def sustainable_fraction(t: DramTiming | str, pattern="random", read_frac=1.0, *, cal=None) -> np.ndarray:
    """Saturation bandwidth as a fraction of :func:`peak_bw_gbps`."""
    return saturation_bw_gbps(t, pattern, read_frac, cal=cal) / peak_bw_gbps(t)


def idle_latency_ns(t: DramTiming | str, pattern="random", *, cal=None) -> np.ndarray:
    """Mean read latency (ns) at vanishing load: row hit for streams, row conflict for
    random traffic, plus the mean refresh wait."""
    k = constants(cal)
    _, _, _, idle = _core(_t(t), _stream_mask(pattern), 1.0, 0.0, k)
    return idle


def loaded_latency_ns(t: DramTiming | str, offered_gbps, pattern="random", read_frac=1.0, *, cal=None) -> np.ndarray:
    """Mean read latency (ns, from arrival) at an offered load in GB/s; inf at or above
    saturation."""
    k = constants(cal)
    lat, _, _, _ = _core(_t(t), _stream_mask(pattern), read_frac, offered_gbps, k)
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
    lat, sat, rho, idle = _core(_t(t), _stream_mask(pattern), read_frac, 0.0 if offered_gbps is None else offered_gbps, k,
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
