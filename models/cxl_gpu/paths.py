"""Request paths of CXL-GPU: what one off-chip 64 B access costs on each memory, from the
shared blocks, as small per-choice tables that the model picks from with integer codes
(vectorized).  Tables from blocks that carry a calibration (the dram block, the flash
block's loaded figures) are built per calibration in force (:func:`calibrated_media`);
the rest once at import.

* GPU-local DRAM: LLC miss -> GPU memory controller -> DDR5-5600 (dram block; streams get
  the row-hit latency, Around/Rand the row-conflict one).  Digest section 1: DDR5-5600
  behind DRAMSim3 for GPU memory and the DRAM endpoint.
* CXL round trip (digest M1): the controller round trip ``ctrl_rt_ns`` takes the place of
  the link block's four port traversals (the paper's controller *is* the root-port and
  endpoint CXL IP), plus the link block's flit serialization, flight time and, when a
  port fans out to several endpoints, one switch.
* SSD endpoint (digest M5): a hit is the round trip plus the endpoint's internal DRAM; a
  miss adds the flash read of the medium (flash block, unloaded latency of the 64 B
  critical read).  Fills and speculative reads occupy the flash backend at its
  saturation throughput for the fill size (flash block).
* UVM / GDS (digest M3, M4): a page fault costs the host runtime plus the page copy over
  the GPU's PCIe 5.0 x8 link (link block DMA bandwidth); GDS adds the SSD read of the page
  (flash block) and its NVMe command (link block).
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from dse.units import CACHELINE_B, GB, GIB, KIB, NS_PER_S, NS_PER_US
from models.blocks import dram, flash, link
from models.blocks.calibration import per_calibration
from models.blocks.cost import component_price

HERE = Path(__file__).resolve().parent

# ----------------------------------------------------------------------------- GPU side
#: Memory access pattern classes of the SR study (digest section 5).
PATTERNS = ("seq", "around", "rand")
#: GPU memory standard of the study (Table 1a: DDR5-5600 via DRAMSim3).
GPU_DRAM_STANDARD = "DDR5-5600"
#: LLC miss to the GPU memory controller and back, ns.  Assumption: the on-chip path of a
#: small GPU (Vortex) at ~1 GHz, a few tens of cycles; the paper gives no figure.
GPU_PATH_NS = 40.0
#: Vortex configuration: 8 cores (Table 1a, 003:L173).  Assumption: one warp instruction
#: per core per cycle at 1 GHz, so the whole GPU issues one instruction every 0.125 ns
#: when it is not stalled (sets the absolute rate only bandwidth bounds depend on).
GPU_CORES = 8
GPU_CLOCK_GHZ = 1.0
ISSUE_NS = 1.0 / (GPU_CORES * GPU_CLOCK_GHZ)
#: Requests the GPU keeps in flight at most.  Assumption: 8 cores x 8 warps, one miss each.
GPU_MAX_OUTSTANDING = 64
#: Queue of the GPU's own memory controller, entries.  Assumption: the same 32 entries the
#: paper gives each CXL root port's memory queue (003:L138), so that one root port and
#: local memory overlap misses alike.
LOCAL_QUEUE = 32

# ----------------------------------------------------------------------------- link
#: Link generations (the link block's parameter group list: PCIe 4.0, 5.0, 6.0).
LINK_GENS = link.PARAM_GENS
#: Link widths (the link block's parameter group list: x4, x8, x16).
LANES = link.PARAM_LANES
#: CXL 1.1/2.0 use the 68 B flit on PCIe 4.0/5.0 PHYs; CXL 3.x at 64 GT/s the 256 B flit
#: (link block FLIT_MODES).  The paper's link: PCIe 5.0 x8 (Table 1a).
GEN_FLIT = {"pcie4": "68B", "pcie5": "68B", "pcie6": "256B"}
#: The GPU's host link for UVM/GDS page copies: PCIe 5.0 x8 (Table 1a, 003:L175).
HOST_LINK_GEN, HOST_LINK_LANES = "pcie5", 8

# ----------------------------------------------------------------------------- media
MEDIA = ("dram", "optane", "znand", "nand")
#: Bytes the endpoint's internal DRAM cache fills per flash miss.  Assumption: the 4 KiB
#: logical page of the SSD's mapping table (flash block NVME_PAGE_B).
FILL_B = 4 * KIB
#: Lines per fill.
FILL_LINES = FILL_B / CACHELINE_B
#: Standard used for the SSD's internal DRAM.  The sibling articles give tRCD = tRP = 9.1 ns
#: for it (digest ambiguity 6); assumption: a DDR4-3200-class part (dram block timing set).
IDRAM_STANDARD = "DDR4-3200"


def _read_media() -> dict[str, dict[str, str]]:
    with open(HERE / "media.csv", newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(line for line in fh if not line.startswith("#"))]
    return {r["medium"]: r for r in rows}


MEDIA_ROWS = _read_media()


def _media_usd_per_gb(row: dict[str, str]) -> float:
    if row["price_item"]:
        p = component_price(row["price_item"])
        return p.value * (GB / GIB) if p.unit == "usd_per_gib" else p.value
    return float(row["usd_per_gb"])


def _gc_pause_us(cfg: flash.FlashConfig, op_ratio: float) -> float:
    """One garbage-collection pause (us) reclaiming a block: erase plus copying the victim's
    valid pages, greedy victim choice under scattered writes (flash block WA model)."""
    if cfg.tbers_us <= 0:  # write-in-place media (Optane) erase nothing
        return 0.0
    wa = float(flash.gc_write_amplification(op_ratio))
    valid = 1.0 - 1.0 / wa
    tr = float(np.mean(cfg.tr_us))
    tp = float(np.mean(cfg.tprog_us))
    return cfg.tbers_us + valid * cfg.pages_per_block * (tr + tp)


def _media_tables() -> dict[str, np.ndarray]:
    """Per medium (index = MEDIA code): flash miss latency (the flash block's unloaded
    path, which no calibration changes), price per GB and dies per endpoint."""
    miss_ns, usd, dies = [], [], []
    for m in MEDIA:
        row = MEDIA_ROWS[m]
        usd.append(_media_usd_per_gb(row))
        if not row["flash_config"]:
            miss_ns.append(0.0)
            dies.append(0.0)
            continue
        cfg = flash.config(row["flash_config"])
        miss_ns.append(float(flash.unloaded_latency_us(cfg, CACHELINE_B, 1.0, "random")) * NS_PER_US)
        dies.append(float(cfg.channels * cfg.chips_per_channel * cfg.dies_per_chip))
    return {
        "miss_ns": np.array(miss_ns),
        "usd_per_gb": np.array(usd),
        "dies": np.array(dies),
    }


MEDIA_TABLE = _media_tables()


@cache
def gc_pauses_us() -> tuple[np.ndarray, np.ndarray]:
    """Per medium: GC pause (us) under scattered writes and under a sequential writer (one
    erase).  Computed on first use: the flash block's WA model needs scipy, which model
    import should not pay for."""
    rand, seq = [], []
    for m in MEDIA:
        name = MEDIA_ROWS[m]["flash_config"]
        if not name:
            rand.append(0.0)
            seq.append(0.0)
            continue
        cfg = flash.config(name)
        rand.append(_gc_pause_us(cfg, cfg.op_ratio))
        seq.append(float(cfg.tbers_us))
    return np.array(rand), np.array(seq)
IS_SSD = np.array([bool(MEDIA_ROWS[m]["flash_config"]) for m in MEDIA])

#: DRAM channels per DRAM endpoint.  Assumption: two (CZ120-class, as the cxl-expander model).
DRAM_EP_CHANNELS = 2


@per_calibration
def calibrated_media() -> dict[str, Any]:
    """The figures from calibrated blocks (dram block, flash block saturation):

    * ``fill_ns`` -- per medium (index = MEDIA code), backend occupancy of one fill at the
      flash saturation throughput (0 for DRAM);
    * ``dram_media_ns`` -- local DDR5-5600 media latency by pattern (calibrated on
      DRAMsim3): streams hit open rows, Around and Rand pay row conflicts;
    * ``idram_ns`` -- internal DRAM hit latency of the SSD endpoint (random access);
    * ``dram_ep_bw_gbps`` -- sustainable bandwidth of a DRAM endpoint's media (DDR5-5600
      channels of two subchannels), GB/s, for its media bound."""
    fill_ns = []
    for m in MEDIA:
        name = MEDIA_ROWS[m]["flash_config"]
        # backend occupancy of one fill at saturation: 1 / (fills per ns)
        fill_ns.append(NS_PER_S / float(flash.saturation_iops(flash.config(name), FILL_B, 1.0, "random"))
                       if name else 0.0)
    return {
        "fill_ns": np.array(fill_ns),
        "dram_media_ns": np.array([
            float(dram.idle_latency_ns(GPU_DRAM_STANDARD, "stream")),
            float(dram.idle_latency_ns(GPU_DRAM_STANDARD, "random")),
            float(dram.idle_latency_ns(GPU_DRAM_STANDARD, "random")),
        ]),
        "idram_ns": float(dram.idle_latency_ns(IDRAM_STANDARD, "random")),
        "dram_ep_bw_gbps": float(dram.saturation_bw_gbps(GPU_DRAM_STANDARD, "random")) * 2 * DRAM_EP_CHANNELS,
    }


def link_tables() -> dict[str, np.ndarray]:
    """Per link generation x lanes (index gen_code * 3 + lanes_code): serialization + flight
    of a 64 B read round trip (ns) without the ports, the extra round-trip time of one
    switch, and the CXL.mem bandwidth of the link (GB/s, 2:1 read:write)."""
    ser, sw, bw = [], [], []
    for g in LINK_GENS:
        for lanes in LANES:
            parts = link.cxl_round_trip_breakdown(g, lanes, GEN_FLIT[g])
            ser.append(float(parts["serialization"] + parts["flight"] + parts["fec"]))
            parts1 = link.cxl_round_trip_breakdown(g, lanes, GEN_FLIT[g], n_switches=1)
            sw.append(float(sum(parts1.values()) - sum(parts.values())))
            bw.append(float(link.cxl_mem_bw_gbps(g, lanes, GEN_FLIT[g], READ_FRAC)))
    return {"wire_ns": np.array(ser), "switch_ns": np.array(sw), "bw_gbps": np.array(bw)}


#: Read share of CXL.mem traffic used for the link's bandwidth.  Assumption: 2:1 reads to
#: writes, the mix the Table 1b load ratios average to (0.45-1.0, mean ~0.7).
READ_FRAC = 0.67
LINK_TABLE = link_tables()

#: UVM / GDS page sizes the model offers, KiB: 4 KiB faults, 64 KiB UVM migration blocks,
#: 2 MiB large pages (digest ambiguity 9), and two between.
UVM_PAGES_KIB = (4, 16, 64, 256, 2048)


def host_copy_ns(page_b: np.ndarray) -> np.ndarray:
    """Time (ns) to copy a page over the host PCIe 5.0 x8 link (link block, TLP overhead)."""
    bw = link.pcie_dma_bw_gbps(HOST_LINK_GEN, HOST_LINK_LANES, page_b)
    return page_b / bw


def gds_io_ns(page_b: np.ndarray) -> np.ndarray:
    """Storage read of one page for GDS, per medium (rows = MEDIA; NaN for DRAM), ns: the
    flash read of the page (flash block) plus the NVMe command and host stack (link block)."""
    out = []
    nvme = link.nvme_command_overhead_ns(page_b, HOST_LINK_GEN, 4)
    for m in MEDIA:
        cfg = MEDIA_ROWS[m]["flash_config"]
        if not cfg:
            out.append(np.full(np.shape(page_b), np.nan))
            continue
        out.append(flash.unloaded_latency_us(cfg, page_b, 1.0, "random") * NS_PER_US + nvme)
    return np.stack(out)


_PAGES_B = np.asarray(UVM_PAGES_KIB, dtype=np.float64) * KIB
#: Per page size (index = code into UVM_PAGES_KIB): host copy time, ns.
HOST_COPY_NS = host_copy_ns(_PAGES_B)
#: Per medium x page size: GDS storage read, ns.
GDS_IO_NS = gds_io_ns(_PAGES_B)
