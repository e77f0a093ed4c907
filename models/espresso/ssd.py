"""One SSD of the Espresso JBOF: what a request costs each of its resources.

An SSD (Espresso digest section 1, Table 2 L213-216) has four resources a request
passes through, and its throughput is the bottleneck of them (digest M1):

* the **processor** (compute-end): ``cores`` ARM cores at ``core_ghz``; the firmware
  cuts every request into 4 KiB units (L70), so a request costs
  ``cmd + ceil(size / 4 KiB) x slice`` cycles, plus ``miss`` cycles when its mapping
  entry is not in DRAM;
* the **flash backbone** (data-end): the shared flash block (``models.blocks.flash``)
  with the article's geometry and TLC timings; its constants are calibrated against
  MQSim runs of an 8 ch x 8 die x 4 plane TLC backbone with these timings
  (results/calibration/flash.toml).  Those runs use a 48 GiB device (96 pages per block,
  mean tR / tPROG 43.75 / 285 us); here Table 2's 1024 pages per block give 44.9 / 293 us.
  A mapping-cache miss adds one mapping-page read (the block's ``p_map``);
* the **CXL link**: PCIe 6.0 flit-mode payload bandwidth of the link block, one
  direction for reads (device to host) and the other for writes;
* the **rated data path**: the 14 / 10 GB/s read / write rating of the simulated SSD.

Every function is vectorized over numpy arrays (one entry per design point).
"""

from __future__ import annotations

import numpy as np

from dse.units import KIB, NS_PER_US
from models.blocks import flash, link

#: The firmware's processing unit (L70 "slices them into unit size (e.g., 4 KB)").
SLICE_B = 4 * KIB

# Split of the firmware work between a command and its 4 KiB units.  The article gives no
# cycle counts; its simulator, SimpleSSD 2.0 (digest section 1), charges firmware time per
# function call from a table of instruction counts (cpu/cpu.cc, one instruction per cycle).
# Per read command (called once per command): NVMe request handling 310 + completion 794,
# subsystem submit 550 + LBA-to-LPN conversion 169, namespace submit 113 + read 548, PRP
# list 327 + its DMA 832, HIL read 597, ICL read 141 instructions.  Per 4 KiB unit (the
# internal cache is entered per logical page; read caching on, the simulator's default):
# cache read 971, FTL read 57, page-mapping read 62 + internal read 395.  Only the ratio is
# used; the scale (slice_kcycles) is fitted to Fig 10.  A write unit costs 948 + 57 + 62 +
# 1108 = 2175 there (1.46x a read unit): a cross-check for write_cycles_scale_x, which is
# fitted to the article's VH write numbers instead.
SIMPLESSD_CMD_INSTR = 310 + 794 + 550 + 169 + 113 + 548 + 327 + 832 + 597 + 141
SIMPLESSD_READ_UNIT_INSTR = 971 + 57 + 62 + 395
SIMPLESSD_WRITE_UNIT_INSTR = 948 + 57 + 62 + 1108
#: Firmware cycles of a command per cycle of one 4 KiB read unit (4381 / 1485 = 2.95).
CMD_PER_SLICE_X = SIMPLESSD_CMD_INSTR / SIMPLESSD_READ_UNIT_INSTR
#: Mapping-table size per unit of capacity: one 4 B entry per 4 KiB page = 1 GiB per TiB
#: (issue 6: "the mapping table needs 1 GB per TB"; conventional 1/1000 DRAM ratio).
MAP_GB_PER_TB = 1.0
#: Mapping entries per 64 B line fetched over CXL by a lender (4 B entries).
MAP_ENTRIES_PER_LINE = 16
#: CXL generation of the JBOF: CXL 3.0 on the PCIe 6.0 PHY (Table 2 L216).
LINK_GEN = 6
#: Payload transfer unit used for the link's TLP efficiency (PCIe max payload, 256 B
#: TLPs: the efficiency of any transfer of a few KiB or more is the same).
LINK_XFER_B = 4096.0

#: The flash backbone of the article's SSD, from the flash block: Table 2 geometry
#: (8 channels x 8 dies x 4 planes, 16 KiB pages, 1024 pages/block, 1024 blocks/plane),
#: TLC LSB/CSB/MSB timings 30/45/60 us read and 200/280/400 us program.
FLASH_BASE = flash.config("espresso_tlc", pages_per_block=1024, blocks_per_plane=1024)
_MIX = flash.page_type_mix(FLASH_BASE.cell, FLASH_BASE.pages_per_block)
#: Mean page read / program time over the block's LSB/CSB/MSB mix (us).
TR_MEAN_US = float(np.dot(_MIX, FLASH_BASE.tr_us))
TPROG_MEAN_US = float(np.dot(_MIX, FLASH_BASE.tprog_us))
#: The flash block models its own host interface; here the CXL link is a separate
#: station, so the block's PCIe stage is made transparent (infinite bandwidth).
_NO_PCIE_LANE_GBPS = np.inf


def flash_arrays(channels, dies_per_channel, channel_mts, p_map) -> dict:
    """The flash block's per-point SSD description (its dict form, built by
    ``flash.arrays``) for a backbone of ``channels`` x ``dies_per_channel`` dies, 8-bit
    channels at ``channel_mts`` (MB/s = bytes per us), and mapping-miss probability
    ``p_map``: every page at the mean tR / tPROG of the page-type mix (no LSB/CSB/MSB
    spread), no read rounds, no host PCIe stage."""
    return flash.arrays(FLASH_BASE, page_spread=False, read_rounds=False, p_map=p_map, channel_mbps=channel_mts,
                        channels=channels, chips_per_channel=dies_per_channel, pcie_lane_gbps=_NO_PCIE_LANE_GBPS)


def flash_read_write(fa: dict, read_b, write_b, seq, wa, n: int):
    """Flash-block saturation IOPS and unloaded latency (us) of a read of ``read_b`` (random
    or sequential) and of a write of ``write_b``, for ``n`` points: (x_read, x_write,
    l_read, l_write).  Writes are log-structured: the FTL programs the next free pages
    (SimpleSSD's page mapping), so they take the block's sequential, multi-plane program
    path whatever their addresses; a write's mapping-page read is then not counted on the
    flash.  Reads and writes are stacked into one call of each block function.  The
    reference form of :func:`flash_data_end` (the model's path), which the tests pin to it."""
    def two(v):
        v = np.broadcast_to(np.asarray(v, dtype=np.float64), (n,))
        return np.concatenate((v, v))

    fa2 = {k: (two(v) if np.ndim(v) else v) for k, v in fa.items()}
    size = np.concatenate((np.broadcast_to(read_b, (n,)), np.broadcast_to(write_b, (n,))))
    rf = np.concatenate((np.ones(n), np.zeros(n)))
    pattern = np.concatenate((np.broadcast_to(seq, (n,)), np.ones(n, dtype=bool)))
    wa2 = two(wa)
    x = flash.saturation_iops(fa2, size, rf, pattern, wa=wa2)
    lat = flash.unloaded_latency_us(fa2, size, rf, pattern, wa=wa2)
    return x[:n], x[n:], lat[:n], lat[n:]


#: Relative margin by which the flash must exceed the other data-end bound before its
#: read solve is skipped (far above the closed-loop solver's 1e-8 tolerance, so the
#: bottleneck code of a skipped point is the one the full solve gives).
SKIP_MARGIN = 1e-6


def flash_data_end(fa: dict, read_b, write_b, seq, wa, rf, wf, x_cap, n: int):
    """The flash backbone's IOPS for a request mix, resolved only where it can bind the
    data end: (x_flash, l_read, l_write).

    ``x_flash = 1 / (rf / x_read + wf / x_write)`` with the saturation IOPS of
    :func:`flash_read_write` (``rf`` / ``wf``: reads and the SSD's own writes per request);
    ``x_cap``: the other data-end bounds (link, rated path), IOPS.  Where the flash exceeds
    ``x_cap`` (by :data:`SKIP_MARGIN`) it cannot bind and ``x_flash`` is +inf; elsewhere
    (pure writes included) it equals :func:`flash_read_write`'s to the solver's tolerance.

    Why: the random-read closed-loop solve is most of a model evaluation.  Writes
    (log-structured, the block's cheap sequential program path) are solved first; that
    fixes the read IOPS ``t_r = rf / (1 / x_cap - wf / x_write)`` at which the flash would
    match ``x_cap``, and the block decides with one evaluation whether the read
    throughput lies above it (``flash.saturation_iops(..., above_iops=t_r)``)."""
    f = np.float64
    rf, wf, x_cap = np.asarray(rf, f), np.asarray(wf, f), np.asarray(x_cap, f)
    fa_n = {k: (np.broadcast_to(np.asarray(v, f), (n,)) if np.ndim(v) and np.shape(v) != (n,) else v)
            for k, v in fa.items()}
    # writes: log-structured, the sequential program path (see flash_read_write)
    x_w = flash.saturation_iops(fa_n, write_b, 0.0, True, wa=wa)
    l_w = flash.unloaded_latency_us(fa_n, write_b, 0.0, True, wa=wa)
    # reads: the read IOPS at which the flash would reach x_cap (inf: the writes alone
    # already bind, every read is solved); points without reads decide at once
    with np.errstate(divide="ignore", invalid="ignore"):
        spare = 1.0 / x_cap - wf / x_w
        t_r = np.where(spare > 0, rf / spare, np.inf) * (1.0 + SKIP_MARGIN)
    need = rf > 0
    t_r = np.where(need, t_r, 1e-300)
    x_r = flash.saturation_iops(fa_n, read_b, 1.0, seq, wa=wa, above_iops=t_r)
    l_r = flash.unloaded_latency_us(fa_n, read_b, 1.0, seq, wa=wa)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_flash = 1.0 / (np.where(need, rf / x_r, 0.0) + wf / x_w)
    x_flash = np.where(need & np.isinf(x_r), np.inf, x_flash)  # reads above t_r: the flash exceeds x_cap
    return np.broadcast_to(x_flash, (n,)), np.broadcast_to(l_r, (n,)), np.broadcast_to(l_w, (n,))


def slices(size_b) -> np.ndarray:
    """4 KiB firmware units of a request (at least one)."""
    return np.maximum(1.0, np.ceil(size_b / SLICE_B))


def flash_pages(size_b) -> np.ndarray:
    """Flash pages a request touches (one DMA / flash operation each)."""
    return np.maximum(1.0, np.ceil(size_b / FLASH_BASE.page_bytes))


def link_payload_gbps(lanes) -> np.ndarray:
    """Payload bandwidth per direction of the SSD's CXL link (link block, flit mode)."""
    return link.pcie_dma_bw_gbps(LINK_GEN, lanes, LINK_XFER_B)


#: Payload GB/s per lane (the link block's bandwidth is linear in the lane count).
LINK_LANE_PAYLOAD_GBPS = float(link_payload_gbps(1))


#: Host NVMe protocol time of one command over the CXL x2 link (link block: submission,
#: doorbell, SQE fetch, CQE, interrupt and kernel stack; data transfer excluded, it is
#: counted by :func:`link_transfer_us`).
_NVME = link.nvme_command_breakdown(4096.0, LINK_GEN, 2)
HOST_NVME_US = float(sum(v for k, v in _NVME.items() if k != "data")) / NS_PER_US
#: The part of it that is host CPU time (link block, Linux kernel stack with interrupt
#: completion): the submit path, the interrupt handler and the completion path, 1.5 + 1.0 +
#: 2.0 us.  The doorbell, SQE fetch and CQE are bus / device time and leave the cores free.
HOST_CMD_CPU_US = float(_NVME["sw_submit"] + _NVME["completion"] + _NVME["sw_complete"]) / NS_PER_US


def miss_ratio(dram_gb_per_tb, footprint_frac) -> np.ndarray:
    """Mapping-cache miss ratio of uniformly random requests over ``footprint_frac`` of the
    SSD with ``dram_gb_per_tb`` of DRAM for the mapping table: the LRU miss-ratio curve
    of uniform reuse is linear, m = 1 - cached / needed (digest M3; with the whole SSD as
    footprint this gives Shrunk 50% and OC 66.7% against the paper's 49.7% and 66.2%)."""
    need = MAP_GB_PER_TB * footprint_frac
    return np.clip(1.0 - dram_gb_per_tb / np.maximum(need, 1e-12), 0.0, 1.0)
