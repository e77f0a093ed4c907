"""Flash block configuration: the SSD description (:class:`FlashConfig`), the named
configurations, cell timings, ONFI / NVMe / PCIe constants, the calibrated constants, the
page-type mix, and the dict-of-arrays form the model works on (:func:`config_arrays`)."""

from __future__ import annotations

import functools

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dse.errors import DseError, did_you_mean
from dse.units import GB, NS_PER_US, US_PER_S
from models.blocks.calibration import load, per_calibration


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
    # (sequential merging has no constant: see merge)
    # fork-join: a request of n pages waits H_n ** k_fj times the mean page wait.  Fixed:
    # fitted on the MQSim runs it goes to 0 (0.3 and 0.6 cost 0.2 and 1.0 MAPE points), as
    # the MVA page waits at a loaded chip already carry the spread of the slowest page
    "k_fj": 0.0,
    # sequential CMT sharing: a mapping read covers the requests arriving within
    # k_seqmap x its unloaded latency
    "k_seqmap": 2.0,
}


def constants(cal: dict[str, float] | None = None) -> dict[str, float]:
    """The block's constants: the defaults overridden by ``cal``, or by the calibration in
    force (merged once per calibration) when ``cal`` is None."""
    if cal is None:
        return dict(_calibrated_constants())
    return _merged(cal)


def _merged(cal: dict[str, float] | None) -> dict[str, float]:
    out = dict(DEFAULT_CONSTANTS)
    out.update({k: float(v) for k, v in (cal or {}).items() if k in out})
    return out


@per_calibration
def _calibrated_constants() -> dict[str, float]:
    return _merged(load("flash").get("constants", {}))


def page_type_mix(cell: str, pages_per_block: int) -> tuple[float, float, float]:
    """Fractions of LSB / CSB / MSB pages in a block, MQSim's assignment: SLC all LSB; MLC
    pages 0-1 LSB then alternating pairs LSB/MSB; TLC pages 0-5 LSB, 6-7 CSB, then pairs
    cycling LSB, CSB, MSB.  Cached: a model calls it for every point it evaluates."""
    return _page_type_mix(cell.upper(), int(pages_per_block))


@functools.lru_cache(maxsize=256)
def _page_type_mix(cell: str, n: int) -> tuple[float, float, float]:
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