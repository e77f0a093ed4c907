"""Access paths of DirectCXL and its RDMA baselines (shared/research/directcxl.md §2).

Everything is in ns; cycle counts of the prototype convert through the clock of the
domain they run in, so a stage can be projected to other clocks on its own:

* CPU domain (host softcore, ``cpu_mhz``): L1 hits, LLC miss handling, software
  (RDMA library, kernel fault path, KVS logic, memcpy);
* CXL IP domain (``ip_mhz``, FPGA platform only): root port + endpoint, switch core;
* fixed ns: FlexBus PHY per link segment, DRAM behind the memory controllers, the
  RNIC network, DMA.

Two platforms: ``fpga`` (the prototype: stage times calibrated from the article's cycle
anchors, ``calibration.py``) and ``asic`` (link block: CXL round trip with switch hops,
RDMA verbs round trip; DRAM block for the DRAM idle latency).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dse.units import CACHELINE_B, NS_PER_US
from models.blocks import dram, link
from models.blocks.calibration import per_calibration
from models.directcxl import calibration as cal

ArrayLike = Any

#: Page size of the Swap/TPP paths, bytes (4 KB pages exchanged per fault, L155).
PAGE_B = 4096.0
#: Alignment of remote objects, bytes (8 B pointers/words): an object of s bytes at a
#: uniformly random aligned offset spans 1 + (s - align) / page pages on average.
OBJECT_ALIGN_B = 8.0
#: The RNIC: ConnectX-3 is a PCIe 3.0 x8 card (Mellanox ConnectX-3 VPI product brief); the
#: prototype's payload-dependent DMA time is calibration.rnic_xfer_ns on the same link.
RNIC_PCIE_GEN = "pcie3"
RNIC_PCIE_LANES = 8
#: ASIC platform: CXL device controller round trip beyond the link ports, ns.
#: Assumption: 40 ns, the ASIC figure of the cxl-expander model ('tens of ns', CXL-GPU digest).
ASIC_CTRL_NS = 40.0
#: ASIC platform: DRAM of host and device is DDR4-3200 (DirectCXL's devices carry DDR4, L93).
ASIC_DRAM_STANDARD = "DDR4-3200"


@per_calibration
def asic_dram_idle_ns() -> float:
    """ASIC platform: idle latency of a random 64 B read from the dram block
    (DRAMsim3-calibrated)."""
    return float(dram.idle_latency_ns(ASIC_DRAM_STANDARD, "random"))


def cyc_to_ns(cycles: ArrayLike, mhz: ArrayLike) -> np.ndarray:
    """Cycles of a clock of ``mhz`` as ns."""
    return np.asarray(cycles, dtype=np.float64) * NS_PER_US / np.asarray(mhz, dtype=np.float64)


# ============================================================================= CXL.mem load path
def llc_ns(cpu_mhz: ArrayLike) -> np.ndarray:
    """Per-line LLC miss handling in the host (flit packing at the root-port side of the LLC)."""
    return cyc_to_ns(cal.LLC_LINE_CYC, cpu_mhz)


def fpga_local_miss_ns(cpu_mhz: ArrayLike) -> np.ndarray:
    """Local DRAM behind an L2 miss on the prototype: LLC handling + local memory."""
    return llc_ns(cpu_mhz) + cal.LOCAL_MEM_NS


def fpga_fabric_ns(levels: ArrayLike, ip_mhz: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(CXL fabric time, PHY part of it) of one 64 B load on the prototype: root port +
    endpoint IP, one switch core per level, and one FlexBus PHY segment per link."""
    lv = np.asarray(levels, dtype=np.float64)
    phy = cal.PHY_SEGMENT_NS * (lv + 1.0)
    ip = cyc_to_ns(cal.RP_EP_IP_CYC + lv * cal.SWITCH_IP_CYC, ip_mhz)
    return ip + phy, phy


def asic_fabric_ns(levels: ArrayLike, gen: ArrayLike, lanes: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(CXL fabric time, PHY part) of one 64 B CXL.mem read from the link block: ports,
    switch traversals, serialization, flight (+ FEC on PCIe 6), plus the device controller.
    The flit is the generation's own (68 B up to PCIe 5.0 / CXL 2.0, 256 B from PCIe 6.0)."""
    parts = link.cxl_round_trip_breakdown(gen, lanes, None, n_switches=levels)
    phy = parts["serialization"] + parts["flight"] + parts["fec"]
    total = parts["ports"] + parts["switches"] + parts["retimers"] + phy + ASIC_CTRL_NS
    return total, phy


def payload_ns(size_b: ArrayLike, miss_ns: ArrayLike, llc_line_ns: ArrayLike, mshr: ArrayLike) -> np.ndarray:
    """Load ``size_b`` bytes through the LLC (§2.3): every line costs the LLC its handling
    time, and at most ``mshr`` misses overlap, so the rest of the miss latency is paid
    once per wave of ``mshr`` lines."""
    lines = np.maximum(np.ceil(np.asarray(size_b, dtype=np.float64) / CACHELINE_B), 1.0)
    waves = np.ceil(lines / np.asarray(mshr, dtype=np.float64))
    return lines * llc_line_ns + waves * (miss_ns - llc_line_ns)


# ============================================================================= RDMA
def fpga_rdma_hw_ns(size_b: ArrayLike) -> np.ndarray:
    """Hardware part of a one-sided RDMA read on the prototype (§2.4): the network (flat in
    the size, the RNIC overlaps transmission with memory reads) plus two DMA operations
    (responder reads memory, requester writes it), each a fixed PCIe + memory time and the
    payload's transfer over the RNIC's PCIe 3.0 x8 link (link block)."""
    return cal.RDMA_NET_NS + 2.0 * (cal.RDMA_DMA_FIXED_NS + cal.rnic_xfer_ns(size_b))


def rdma_table(sizes_b: np.ndarray, fpga: np.ndarray | bool, link_gbit_s: ArrayLike, n_switches: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(hardware time, network part) of RDMA reads of ``sizes_b`` (shape (k, n): k sizes for
    n points), each point on its platform; one link-block call for all ASIC points."""
    k, n = sizes_b.shape
    fp = np.broadcast_to(np.asarray(fpga, dtype=bool), (n,))
    hw = np.empty((k, n))
    net = np.empty((k, n))
    if fp.any():
        hw[:, fp] = fpga_rdma_hw_ns(sizes_b[:, fp])
        net[:, fp] = cal.RDMA_NET_NS
    rest = ~fp
    if rest.any():
        gbit = np.broadcast_to(np.asarray(link_gbit_s, dtype=np.float64), (n,))[rest]
        sw = np.broadcast_to(np.asarray(n_switches, dtype=np.float64), (n,))[rest]
        parts = link.rdma_round_trip_breakdown(np.maximum(sizes_b[:, rest], 1.0), "read", gbit, sw,
                                               gen=RNIC_PCIE_GEN, lanes=RNIC_PCIE_LANES)
        total = sum(parts.values())
        hw[:, rest] = total
        net[:, rest] = total - parts["requester_dma"] - parts["responder_dma"]
    return hw, net


def copy_ns(size_b: ArrayLike, cpu_mhz: ArrayLike) -> np.ndarray:
    """memcpy of ``size_b`` bytes by the host CPU (into/out of registered memory, page copies)."""
    return cyc_to_ns(np.asarray(size_b, dtype=np.float64) / cal.COPY_B_PER_CYC, cpu_mhz)


def pages_spanned(size_b: ArrayLike) -> np.ndarray:
    """Expected 4 KB pages an object of ``size_b`` bytes spans at a random aligned offset."""
    return 1.0 + (np.maximum(np.asarray(size_b, dtype=np.float64), OBJECT_ALIGN_B) - OBJECT_ALIGN_B) / PAGE_B
