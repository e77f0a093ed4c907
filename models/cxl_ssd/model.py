"""cxl-ssd: a PCIe SSD turned into CXL memory ("From Block to Byte", Kwon et al., IEEE Micro
2025; digest research/cxl-ssd.md).

Five ways to give a host more memory (``design``):

* ``dram``      host DDR (the ideal baseline);
* ``cxl_dram``  the same DDR behind a CXL.mem link (digest §7 item 13);
* ``pcie_ssd``  a Z-NAND SSD whose PCIe BAR is mapped as memory: uncacheable, so every
                load and store of the region goes to the device, strongly ordered and
                synchronous (one at a time per core); the SSD firmware serves a BAR read
                from flash (its DRAM holds the FTL map and buffers writes), so it does
                not care about locality (digest §1.1 "PCIe-SSD is insensitive to MPKI");
* ``cxl_ssd``   the same SSD as a CXL Type-3 device: its memory is cacheable host memory,
                host caches filter it (§2 item 1), CXL.mem reads are served in hardware
                from the SSD's DRAM cache (64 B lines, LRU) or, on a miss, from Z-NAND;
* ``cxl_assd``  CXL-SSD with the annotations (§2 items 3-4): Bufferability tells the device
                which data to keep and prefetch in its DRAM (a BF-tagged miss is served
                from DRAM with probability ``bf_hit_frac``), Determinism holds internal
                tasks (flushes, GC) off the reads it tags (tail latency only).

Workloads (``workload``): the 18 gem5 programs of Table 1b (per-instruction loads, stores,
LLC MPKI, footprint and LLC hit ratio, ``workloads.csv``), ``apex`` (the Apex-Map
synthetic of the FPGA-prototype study: locality ``apex_alpha``; the access-time average
the benchmark sees, the prototype's 128 KB L1 and 4 MB L2 included) and ``stream``
(STREAM at ``threads`` threads).

Execution time per instruction (§2 item 2, memssd block): ``CPI_core / f`` plus the
stalls: cacheable designs stall on load misses (LLC MPKI x load share, latency / MLP,
stores absorbed by the caches); the PCIe BAR stalls on every load and store of the region
(``pcie_region_frac`` of them; loads pay the flash read, stores the write into SSD DRAM).

Disaggregation (§2 item 8, F only): switch levels add link-block hop latency; a switch of
``switch_lanes`` lanes fans out to ``switch_lanes / 16`` x16 devices per level; a device
split into ``mld_count`` logical devices gives each host that share of its bandwidth, and
the device port is an M/M/1 station at the hosts' offered load.

Cost (cost block, dated prices): Z-NAND $/GB (priced as SLC), SSD-internal DDR4 $/GiB,
SSD controller + board, the CXL premium on controller + DRAM, switch share per device;
``dram`` / ``cxl_dram`` provision the same capacity as DDR5.

System (mem-analytics family): one dual-socket host whose ``footprint_gib`` lives in the
design's memory: its DIMMs (``dram``) or ceil(footprint / ``capacity_gib``) devices (a
logical device of an MLD-split device counts as its share of capacity, bandwidth and
price).  A 64 B access of the family query takes the design's read path (same stages as
above; for the query's uniformly random lines the SSD DRAM hits its share of the footprint
and the annotations find nothing to keep or prefetch);
the PCIe BAR keeps one access in flight per thread (strongly ordered, synchronous).  The
bandwidth is the devices' link and Z-NAND rates (host DDR for ``dram``).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import CACHELINE_B, GB, GIB, KIB, MIB, NS_PER_US, TIB
from models.blocks import cache, dram, flash, link, memssd, queueing, workload
from models.blocks.calibration import per_calibration
from models.blocks.cost import component_price
from models.blocks.numeric import first_match
from models.cxl_ssd import workloads as wl

DESIGNS = ("dram", "cxl_dram", "pcie_ssd", "cxl_ssd", "cxl_assd")
WORKLOADS = wl.NAMES + ("apex", "stream")
#: The link generations of the article's CXL 3.1 study (a restriction of the link block's group).
LINK_GENS = ("pcie5", "pcie6")
FLIT_MODES = link.FLIT_MODES

# ----------------------------------------------------------------------------- host (Table 1a)
#: gem5 host: 4 GHz, 4 cores (research/cxl-ssd.md §3 cpu_freq, cpu_cores).
FREQ_GHZ = 4.0
CORES = 4
#: L1D hit 5 cycles, L2 hit 20 cycles (Table 1a); at 4 GHz in ns.
L1_HIT_NS = 5 / FREQ_GHZ
L2_HIT_NS = 20 / FREQ_GHZ
#: Host DDR: tRP = tRCD = tCAS = 12.5 ns (Table 1a), 2 channels (§3 host_dram_org).
HOST_DDR_T_NS = 12.5
HOST_DDR_CHANNELS = 2
#: L1D MSHRs (Table 1a): a STREAM thread's independent line loads keep them all busy.
L1D_MSHRS = 16

# ----------------------------------------------------------------------------- device
#: Z-NAND back end (flash block's Z-SSD configuration: tR 3 us, tPROG 100 us, tBERS 1 ms
#: as Table 1a gives), seen from the controller's internal bus (memssd block).
_ZNAND = memssd.backend_config("znand")
#: Infeasible points (``run_full``'s reasons).
PORT_SATURATED = "the device port is saturated: the workload offers more than the port carries (M/M/1, rho >= 1)"
ZNAND_TR_US = _ZNAND.tr_us[0]
PAGE_B = float(_ZNAND.page_bytes)
LINES_PER_PAGE = PAGE_B / CACHELINE_B
#: Back-end read of one 64 B sector (no firmware; the fitted firmware is a parameter).
SECTOR_READ_NS = float(memssd.backend_read_ns(_ZNAND, CACHELINE_B))
#: Back-end read of a whole 4 KiB page (a BF prefetch fills the page into SSD DRAM).
PAGE_READ_NS = float(memssd.backend_read_ns(_ZNAND, PAGE_B))
FLASH_UNITS = float(_ZNAND.units)
PAGES_PER_BLOCK = float(_ZNAND.pages_per_block)
TPROG_NS = _ZNAND.tprog_us[0] * NS_PER_US
TBERS_NS = _ZNAND.tbers_us * NS_PER_US
#: Host DDR load latency from the memory controller (memssd/dram block, Table 1a timings).
#: A Param default (``host_dram_ns``): fitted at import, under the shipped calibration.
HOST_DDR_NS = memssd.host_dram_ns(HOST_DDR_T_NS)


@per_calibration
def block_figures() -> dict[str, float]:
    """Figures of the calibrated blocks under the calibration in force:

    * device-wide saturation rates (flash block): ``sector_read_iops`` (random 64 B sector
      reads), ``page_read_iops`` (page reads of a prefetched stream), ``page_prog_iops``
      (buffered lines leave as appended, sequential pages: multi-plane programs);
    * ``ssd_dram_ns`` -- SSD-internal DRAM hit (memssd block: 9.1 ns DRAM of Table 1a
      through the dram block);
    * ``host_ddr_channel_gbps`` -- stream bandwidth of one host DDR channel (dram block)."""
    return {
        "sector_read_iops": float(memssd.backend_iops(_ZNAND, CACHELINE_B, 1.0)),
        "page_read_iops": float(memssd.backend_iops(_ZNAND, PAGE_B, 1.0, "sequential")),
        "page_prog_iops": float(memssd.backend_iops(_ZNAND, PAGE_B, 0.0, "sequential")),
        "ssd_dram_ns": memssd.ssd_dram_hit_ns(),
        "host_ddr_channel_gbps": float(
            memssd.dram.saturation_bw_gbps(memssd.host_dram_timing(HOST_DDR_T_NS), "stream", 1.0)),
    }


#: Dirty lines reach flash through a log-structured write buffer: one page program per
#: page of lines (assumption: page-mapped FTL appending buffered lines, digest §2 item 3);
#: see LINES_PER_PAGE.
#: STREAM: read share of its four kernels (copy, scale: 1 read 1 write; add, triad: 2 reads
#: 1 write), averaged (digest §5; assumption: equal time per kernel).
STREAM_READ_FRAC = (0.5 + 0.5 + 2 / 3 + 2 / 3) / 4
#: 99th percentile: the tail of a read that lands on a die busy with an internal task.
TAIL_QUANTILE = 0.99
#: Apex-Map bounds its working set by the device (assumption: the 32 GB prototype SSD).
APEX_MEMORY_GIB = 32.0
#: Apex-Map ran on the FPGA prototype, whose RISC-V host has 128 KB L1 and 4 MB L2 caches
#: (F L99), not on the gem5 host of Table 1a.
PROTO_L1_B = 128 * KIB
PROTO_L2_B = 4 * MIB

# ----------------------------------------------------------------------------- annotation coverage
#: Functions the annotations can cover, with Zipf(1) access shares: fitted so that the top 8
#: carry 50.5% of storage accesses (digest §2 item 7, F L206; calibration.py).
N_FUNCTIONS = 121.6
#: Zipf exponent of storage accesses over functions (assumption: the classic 1/rank law).
FUNCTION_ZIPF = 1.0

# ----------------------------------------------------------------------------- prices (cost block)
_ZNAND_USD_PER_GB = component_price("nand_znand").value
_SSD_DRAM_USD_PER_GIB = component_price("dram_ddr4").value
_HOST_DRAM_USD_PER_GIB = component_price("dram_ddr5").value
_SSD_CTRL_USD = component_price("ssd_controller_enterprise").value + component_price("ssd_other").value
_CXL_PREMIUM = component_price("cxl_premium_frac").value
_CXL_MEM_CTRL_USD = component_price("cxl_memory_controller").value
_SWITCH_USD = component_price("cxl_switch").value

# ----------------------------------------------------------------------------- the mem-analytics system
#: DDR channels of the family's dual-socket host (the gem5 host of Table 1a has 2; the
#: family host is workload.host_server's).  Assumption: 8 channels per socket, 2 sockets,
#: each at the Table 1a DDR timings.
FAMILY_HOST_CHANNELS = 16
#: Most DRAM the host's DIMM slots take.  Assumption: 16 channels x 2 DIMMs x 128 GiB.
HOST_MAX_DRAM_GIB = 4096.0
#: Host lanes for memory devices.  Assumption: 64 of a Xeon 4th gen pair's 2 x 80 PCIe 5.0/CXL
#: lanes, the rest for NICs and drives.
HOST_DEVICE_LANES = 64
#: One SSD's power, W.  Assumption: ~12 W, the order enterprise NVMe SSD datasheets list for
#: active random reads (the U.2 / E3.S slot budget is 20-25 W).
SSD_W = 12.0
#: CXL memory controller power, W.  Assumption (as the cxl-expander model): ~8 W.
CXL_CTRL_W = 8.0
#: CXL switch power, W.  Assumption: ~25 W for a 64-lane PCIe 5.0/6.0-class switch.
CXL_SWITCH_W = 25.0
TOO_MUCH_DRAM = "footprint beyond the host's DIMM slots (dram design)"
TOO_MANY_DEVICES = "footprint needs more devices than the host's lanes and switch levels reach"

# ----------------------------------------------------------------------------- fitted constants
# Fitted by models/cxl_ssd/calibration.py (tests/test_cxl_ssd.py checks they still fit):
#: Firmware on a flash miss (FTL lookup, command issue): Apex-Map worst case, CXL-SSD 84.1x
#: slower than DRAM (F L107, M L1578).
MISS_FIRMWARE_NS = 1201.0
#: PCIe BAR round trip with the SSD firmware's handling: Apex-Map worst case, PCIe 1.6x
#: slower than CXL (F L105).
PCIE_BAR_NS = 2931.0
#: Share of loads/stores that touch the expander region: the 72.1% average cut in storage
#: accesses from PCIe-SSD to CXL-SSD (F L196).
PCIE_REGION_FRAC = 0.01308
#: SSD-internal DRAM as a share of the flash capacity (digest ambiguity 3 suggests about 0.1%,
#: 1 GB per TB; the article states none): the 8 high-miss workloads run 9.6x faster on CXL-SSD
#: than on PCIe-SSD (F L196; calibration.py), refitted with posted BAR writes (store_path).
SSD_DRAM_FRAC = 0.001563
#: A BF-tagged miss served from SSD DRAM: STREAM at one thread, CXL-ASSD 14.6x CXL-SSD (F L220).
BF_HIT_FRAC = 0.9639


#: Greedy-GC write amplification (flash block) on a fine over-provisioning grid; the model
#: interpolates (the Lambert-W form per point would dominate the evaluation time).
_OP_GRID = np.linspace(0.02, 0.5, 961)
_WA_GRID = flash.gc_write_amplification(_OP_GRID)


def _function_share(coverage: np.ndarray) -> np.ndarray:
    """Share of storage accesses from the ``coverage`` most-used functions (Zipf(1))."""
    n = np.asarray(coverage, dtype=np.float64) * N_FUNCTIONS
    h_all = float(cache.generalized_harmonic(N_FUNCTIONS, FUNCTION_ZIPF))
    h = cache.generalized_harmonic(np.maximum(n, 1.0), FUNCTION_ZIPF)
    return np.clip(np.where(n >= 1.0, h, n) / h_all, 0.0, 1.0)


#: The share on a fine coverage grid (1/1000 of the function list), interpolated per point.
_COV_GRID = np.linspace(0.0, 1.0, 1001)
_SHARE_GRID = _function_share(_COV_GRID)


def _g(coverage: np.ndarray) -> np.ndarray:
    return np.interp(coverage, _COV_GRID, _SHARE_GRID)


#: gem5 host's load/store queue (Table 1a: 64-entry LSQ): the window in which independent
#: load misses can overlap (``miss_overlap="lsq"``).
LSQ_ENTRIES = 64


def pcie_spec_time_ns(cpi_ns, a_rd, a_wr, rd_ns, wr_rt_ns, wr_issue_ns, wr_service_ns, posted):
    """Time per instruction on the uncacheable PCIe BAR (F L190-192, digest §2 items 1-2).

    Loads are non-posted reads: the core waits the whole round trip for each.  Stores:

    * ``posted`` (PCIe: a memory write is a posted transaction, no completion): the core
      hands the write to the root port (``wr_issue_ns``) and goes on; the SSD firmware
      drains the writes one at a time (``wr_service_ns`` each: its handling and the SSD-DRAM
      write) while the core computes, and the next load waits behind any writes not yet
      drained (PCIe ordering: a read does not pass a posted write).  Per instruction that is
      ``a_rd x rd + max(compute + a_wr x issue, a_wr x service)``: stores cost the firmware's
      write throughput, not a round trip each;
    * otherwise (``blocking``, the model's earlier reading) every store waits its round trip
      ``wr_rt_ns`` as a load does.
    """
    blocking = cpi_ns + a_rd * rd_ns + a_wr * wr_rt_ns
    posted_t = a_rd * rd_ns + np.maximum(cpi_ns + a_wr * wr_issue_ns, a_wr * wr_service_ns)
    return np.where(posted, posted_t, blocking)


def lsq_mlp(load_miss_per_instr, mem_ops_per_instr, overlap):
    """Memory-level parallelism of a cacheable design's load misses as the workload's miss
    intensity sets it (digest §2 item 1: MLP bounded by the 16 L1D MSHRs and the 64-entry LSQ,
    Table 1a).  With ``overlap`` ("lsq") a miss overlaps the other load misses among the
    LSQ's 64 memory operations: ``1 + 64 x (load misses per memory op)``, capped at the
    MSHRs; a high-MPKI workload hides more of each miss than a low-MPKI one.  Otherwise
    (``serial``) 1: every miss is serialized."""
    window = 1.0 + LSQ_ENTRIES * load_miss_per_instr / np.maximum(mem_ops_per_instr, 1e-12)
    return np.where(overlap, np.minimum(window, float(L1D_MSHRS)), 1.0)


class CxlSsd(Model):
    name = "cxl-ssd"
    version = "2"
    family = "mem-analytics"
    boundary = (
        "one dual-socket host (CPUs, board, NIC; its DIMMs in the dram design) plus the memory devices that hold "
        "footprint_gib (DDR behind CXL, PCIe or CXL Z-NAND SSDs, their switch share)"
    )
    summary = "PCIe-SSD vs CXL-SSD vs annotated CXL-ASSD as memory: execution time, latency, tail, bandwidth, $/GiB"
    source = "Kwon et al., 'From Block to Byte', IEEE Micro 2025 (research/cxl-ssd.md)"
    variant_param = "design"
    params = (
        Param("design", "cxl_ssd", "§1 configurations compared", choices=DESIGNS),
        Param("workload", "gcc", "Table 1b workloads; apex = Apex-Map (prototype study); stream = STREAM", choices=WORKLOADS),
        Param("apex_alpha", 1.0, "Apex-Map locality, 0.001 (best) to 1 (worst) (F L101)", bounds=(0.001, 1.0)),
        Param("apex_memory_gib", APEX_MEMORY_GIB, "assumption: Apex-Map spans the 32 GB prototype SSD (F L99)", bounds=(1.0, 4096.0)),
        Param("threads", 1, "STREAM host threads, 1 to 64 (F L222)", bounds=(1, 64), integer=True),
        Param("bf_coverage_frac", 1.0, "CXL-ASSD annotates the commonly used functions (F L198); Fig 6d sweeps 0-100%",
              bounds=(0.0, 1.0)),
        Param("dt_coverage_frac", 0.75, "DT tags about 75% of instructions (F L210)", bounds=(0.0, 1.0)),
        Param("cpi_core", 1.0, "assumption: a 4-wide OoO core runs SPEC CPU at about one instruction per cycle without memory stalls",
              bounds=(0.25, 4.0)),
        Param("mlp", 1.0, "assumption: misses to the expander are serialized (the prototype anchors are per-access latencies)",
              bounds=(1.0, 16.0), doc="load misses overlapped per stall (MSHR bound 16, Table 1a)"),
        Param("store_path", "posted", "PCIe: memory writes are posted transactions (no completion), reads are not; "
              "F L192: store-intensive workloads suffer less on PCIe-SSD, stores absorbed by SSD-DRAM buffering",
              choices=("posted", "blocking"),
              doc="posted: a BAR store costs the firmware's write throughput, loads wait behind undrained writes; "
                  "blocking: every BAR store waits a round trip (earlier reading); cacheable designs also write "
                  "back their dirty lines over the port under posted"),
        Param("miss_overlap", "serial", "assumption kept from the fitted runs: expander misses serialized (the prototype "
              "anchors are per-access latencies); lsq = the Table 1a 64-entry LSQ window", choices=("serial", "lsq"),
              doc="serial: MLP = mlp; lsq: MLP = mlp x (1 + 64 x load misses per memory op), capped at 16 MSHRs"),
        Param("mpki_scale", 1.0, "Table 1b LLC MPKI as printed; assumption: a sweep of the miss intensity, range 0.1-10",
              bounds=(0.01, 100.0), doc="multiplier on the workload's LLC misses (Table 1b workloads)"),
        Param("stream_mlp", float(L1D_MSHRS), "Table 1a: 16 L1D MSHRs, all busy on STREAM's independent line loads",
              bounds=(1.0, 64.0)),
        *dram.params("host_", dram_ns=HOST_DDR_NS, bounds={"dram_ns": (20.0, 500.0)},
                     doc={"dram_ns": "host DDR load latency from the memory controller"},
                     source="dram block: tRP=tRCD=tCAS=12.5 ns DDR (Table 1a), random-line idle latency"),
        *link.params(gens=LINK_GENS, default_gen="pcie6", default_lanes=4, flit_mode="256B", source={
            "link_gen": "CXL 3.1 over PCIe 6.0, 64 GT/s (Table 1a, F L145)",
            "lanes": "x4/x8 bifurcation (F L145); x4 assumed (digest ambiguity 6: width per run unstated)",
            "flit_mode": "CXL 3.x standard 256 B flit (link block)"}),
        Param("switch_hops", 0, "the evaluation attaches the device directly; switches only in the F disaggregation discussion",
              bounds=(0, 4), integer=True),
        Param("hop_latency_ns", link.CXL_SWITCH_NS, "link block: Pond switch traversal (digest §2 item 8: t_sw unstated)",
              bounds=(5.0, 500.0)),
        Param("switch_lanes", 64, "a CXL switch has 64-128 lanes, 4-8 x16 storage ports (F L230)", choices=(64, 128)),
        Param("mld_count", 1, "one logical device; up to 16 MLDs per device (F L234)", bounds=(1, 16), integer=True),
        Param("cxl_ctrl_ns", 10.0, "assumption: CXL.mem served by controller hardware (F L75-83), a few cycles beyond the DRAM access",
              bounds=(0.0, 500.0)),
        Param("pcie_bar_ns", PCIE_BAR_NS, "fitted (calibration.py): Apex worst case, PCIe 1.6x slower than CXL (F L105)",
              bounds=(100.0, 50000.0), doc="PCIe BAR round trip including the SSD firmware that serves it"),
        Param("miss_firmware_ns", MISS_FIRMWARE_NS, "fitted (calibration.py): Apex worst case, CXL 84.1x slower than DRAM (F L107)",
              bounds=(0.0, 50000.0), doc="controller firmware on a flash miss (FTL lookup, command issue)"),
        Param("flash_tr_us", ZNAND_TR_US, "Z-NAND tR = 3 us (Table 1a)", bounds=(0.1, 100.0)),
        Param("capacity_gib", 32.0, "the prototype's 32 GB OpenExpress SSD (F L99), the only device capacity the article states",
              bounds=(16.0, 16384.0)),
        Param("ssd_dram_frac", SSD_DRAM_FRAC, "fitted (calibration.py): high-miss workloads, CXL-SSD 9.6x PCIe-SSD (F L196); digest ambiguity 3 suggests ~0.1%",
              bounds=(0.0001, 0.05), doc="SSD-internal DRAM as a fraction of the flash capacity"),
        Param("bf_hit_frac", BF_HIT_FRAC, "fitted (calibration.py): STREAM 1 thread, CXL-ASSD 14.6x CXL-SSD (F L220)",
              bounds=(0.0, 1.0), doc="probability a BF-tagged line the plain SSD would miss is served from SSD DRAM"),
        Param("pcie_region_frac", PCIE_REGION_FRAC, "fitted (calibration.py): 72.1% fewer storage accesses with CXL (F L196)",
              bounds=(0.001, 1.0), doc="share of loads/stores that address the expander region"),
        Param("op_ratio", 0.07, "flash block default over-provisioning (MQSim); the paper states none", bounds=(0.02, 0.5)),
        Param("gc_step_pages", 16, "assumption: a GC step copies 16 pages before its erase (digest ambiguity 5: GC model unstated)",
              bounds=(1, 768), integer=True),
        Param("znand_usd_per_gb", _ZNAND_USD_PER_GB, "cost block: nand_znand (priced as SLC; dated assumption)", bounds=(0.01, 10.0)),
        *dram.params(dram_usd_per_gib=_HOST_DRAM_USD_PER_GIB, bounds={"dram_usd_per_gib": (0.5, 50.0)},
                     source="cost block: dram_ddr5 (TrendForce 2023-04)"),
        # the family knob sizes the common metrics only; ``workload`` drives the article's
        *knob_params("mem-analytics"),
    )
    metrics = (
        Metric("time_ns_per_kop", "min", "time per 1000 operations: instructions (SPEC), accesses (apex), lines per thread (stream)"),
        Metric("slowdown_vs_dram_x", "min", "time relative to the dram design on the same workload"),
        Metric("read_latency_ns", "min", "mean latency of a read that leaves the host caches (uncached: every read)"),
        Metric("p99_read_latency_us", "min", "99th-percentile device read latency with internal tasks (flushes, GC)"),
        Metric("device_accesses_pki", "min", "accesses reaching the expander per 1000 instructions (per 1000 accesses for apex)"),
        Metric("ssd_dram_hit_frac", "max", "share of device reads served by the SSD-internal DRAM"),
        Metric("bw_gbps", "max", "bandwidth: STREAM's sustained rate, else the traffic the workload offers the device"),
        Metric("port_util_frac", "min", "device port utilization with mld_count hosts sharing it"),
        Metric("pool_capacity_tib", "max", "capacity reachable through switch_hops levels of switches"),
        Metric("device_usd", "min", "bill of materials of one memory device of capacity_gib"),
        Metric("usd_per_gib", "min", "device cost per GiB"),
        Metric("access_latency_ns", "min", "one 64 B access of the mem-analytics query over footprint_gib (unloaded)"),
        Metric("system_bw_gbps", "max", "bandwidth of the query's 64 B accesses: host DDR, or the devices' links and Z-NAND"),
        Metric("device_count", None, "devices (logical devices with MLD) holding footprint_gib; 0 for dram"),
    )

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._compute(p)

    def _compute(self, p: Batch) -> dict[str, np.ndarray]:
        """Execution time, latency, tail, bandwidth and cost of each design, stage by stage."""
        f = _design_flags(p)  # which design and workload
        wk = _workload_mix(p)  # Table 1b: misses, loads, stores, locality
        dev = _device_paths(p)  # memssd / link / flash blocks: CXL round trip, flash miss
        hr = _ssd_dram_hits(p, f, wk, dev)  # SSD-DRAM hit rate, host caches (apex), BF
        pa = _access_paths(p, f, wk, dev, hr)  # each design's read and write path, accesses per op
        caps = _stream_caps(p, f, dev, hr)  # STREAM: link and media bandwidth, concurrency
        port = _port_queue(p, f, wk, hr, pa, caps)  # unloaded, then the port as an M/M/1 station
        time_kop_dram = _dram_baseline(p, f, wk, hr, pa, caps)  # the dram design, for the slowdown
        p99_us = _tail_latency(p, f, wk, pa, port)  # reads behind flushes and GC (§2 item 4)
        cost = _device_cost(p, f, dev)  # capacity and cost (cost block)
        nan = np.where(dev.link.flit_exists, 1.0, np.nan)
        saturated = ~(f.d["dram"] | f.is_stream) & (port.util >= 1.0)  # the open-loop port queue has no steady state
        system, sys_infeasible = _mem_analytics_system(p, f, dev, pa, cost, nan)
        return {
            "infeasible": {**dev.link.infeasible(), PORT_SATURATED: saturated, **sys_infeasible},
            **system,
            "time_ns_per_kop": port.time_kop * nan,
            "slowdown_vs_dram_x": port.time_kop / time_kop_dram * nan,
            "read_latency_ns": port.read_ns * nan,
            "p99_read_latency_us": p99_us * nan,
            "device_accesses_pki": 1000.0 * pa.acc_per_op,
            "ssd_dram_hit_frac": pa.hit_frac,
            "bw_gbps": port.offered_gbps * nan,
            "port_util_frac": port.util * nan,
            "pool_capacity_tib": cost.pool_tib,
            "device_usd": cost.device_usd,
            "usd_per_gib": cost.device_usd / p.capacity_gib,
        }


# ----------------------------------------------------------------------------- stages of CxlSsd._compute
def _design_flags(p: Batch) -> SimpleNamespace:
    """Which design (and which kind: SSD, cacheable) and which workload each point is."""
    d = {k: p.is_("design", k) for k in DESIGNS}
    return SimpleNamespace(d=d, is_apex=p.is_("workload", "apex"), is_stream=p.is_("workload", "stream"),
                           is_ssd=d["pcie_ssd"] | d["cxl_ssd"] | d["cxl_assd"], cacheable=~d["pcie_ssd"])


def _col(p: Batch, arr: np.ndarray, pad: float = 0.0) -> np.ndarray:
    """A Table 1b column picked per point; apex / stream rows take ``pad`` (unused by them)."""
    return p.pick("workload", dict(zip(WORKLOADS, tuple(arr) + (pad, pad))))


def _workload_mix(p: Batch) -> SimpleNamespace:
    """Workload (Table 1b): LLC misses, loads, stores and read share per instruction, locality."""
    m = _col(p, wl.MPKI) / 1000.0 * p.mpki_scale  # LLC misses per instruction
    ld, st = _col(p, wl.LOAD_FRAC), _col(p, wl.STORE_FRAC)
    q = np.where(p.is_("workload", "stream"), STREAM_READ_FRAC,
                 np.where(ld + st > 0, ld / np.maximum(ld + st, 1e-12), 1.0))
    return SimpleNamespace(m=m, ld=ld, st=st, q=q, alpha=_col(p, wl.ALPHA, 0.5), footprint_b=_col(p, wl.FOOTPRINT_B, GB))


def _device_paths(p: Batch) -> SimpleNamespace:
    """Device-side paths (memssd / link / flash blocks): link, CXL round trip, flash miss, SSD DRAM."""
    # the link's fields stay numpy scalars for a single point (cheap arithmetic, same values)
    lk = link.from_batch(p, columns=False)  # a 68 B flit at 64 GT/s evaluates as 256B, declared infeasible
    gen, flit = lk.gen, lk.flit
    tr_delta_ns = (p.flash_tr_us - ZNAND_TR_US) * NS_PER_US
    ssd_dram_gib = p.ssd_dram_frac * p.capacity_gib
    blk = block_figures()
    return SimpleNamespace(
        gen=gen, flit=flit, link=lk, cxl_rt=memssd.cxl_path_ns(gen, p.lanes, flit, p.switch_hops, p.hop_latency_ns),
        miss_ns=SECTOR_READ_NS + tr_delta_ns + p.miss_firmware_ns,  # plain: the missed sector
        blk=blk, ssd_dram_ns=blk["ssd_dram_ns"], ssd_dram_gib=ssd_dram_gib, ssd_dram_b=ssd_dram_gib * GIB,
        pcie_dma_gbps=link.pcie_dma_bw_gbps(gen, p.lanes, CACHELINE_B),  # the PCIe-SSD's 64 B DMA rate
    )


def _ssd_dram_hits(p: Batch, f: SimpleNamespace, wk: SimpleNamespace, dev: SimpleNamespace) -> SimpleNamespace:
    """SSD-DRAM hit rate of the device's reads (host caches for Apex-Map; BF for CXL-ASSD, §2 item 3)."""
    # SPEC: LRU lines below the 2 MB LLC, Zipf reuse fitted to Table 1b (workloads.py).
    h_spec = memssd.powerlaw_hit_rate(dev.ssd_dram_b, wl.LLC_B, wk.footprint_b, wk.alpha)
    # Apex-Map: P(index < k) = (k / M)^alpha for each level, host caches included.
    apex_b = p.apex_memory_gib * GIB
    cum = lambda size_b: np.clip(size_b / apex_b, 0.0, 1.0) ** p.apex_alpha  # noqa: E731
    h1, h2, hs_cum = cum(PROTO_L1_B), cum(PROTO_L2_B), cum(PROTO_L2_B + dev.ssd_dram_b)
    h_apex = np.clip((hs_cum - h2) / np.maximum(1.0 - h2, 1e-12), 0.0, 1.0)
    # STREAM's arrays outrun the SSD DRAM: a plain device never re-reads a line in time.
    h_plain = np.where(f.is_apex, h_apex, np.where(f.is_stream, 0.0, h_spec))
    bf_share = np.where(f.d["cxl_assd"], _g(p.bf_coverage_frac), 0.0)
    return SimpleNamespace(h1=h1, h2=h2, bf_share=bf_share, h_cxl=h_plain + (1.0 - h_plain) * bf_share * p.bf_hit_frac)


def _access_paths(p: Batch, f: SimpleNamespace, wk: SimpleNamespace, dev: SimpleNamespace,
                  hr: SimpleNamespace) -> SimpleNamespace:
    """Each design's far read, the PCIe BAR's read and (posted) write, MLP, and device accesses per operation."""
    d, cacheable = f.d, f.cacheable
    # a BF hit was prefetched with its page: the page read's extra transfer is amortized
    # over the page's lines, off the critical path
    cxl_far_ns = dev.cxl_rt + p.cxl_ctrl_ns + memssd.device_read_ns(hr.h_cxl, 0.0, dev.ssd_dram_ns, dev.miss_ns)
    cxl_dram_far_ns = dev.cxl_rt + p.cxl_ctrl_ns + p.host_dram_ns
    # PCIe BAR: every read from flash via firmware; stores land in the write buffer
    pcie_rd_ns = p.pcie_bar_ns + dev.ssd_dram_ns + dev.miss_ns
    pcie_wr_ns = p.pcie_bar_ns + dev.ssd_dram_ns
    # a posted BAR write: the core hands it to the root port (one way of the link round
    # trip); the firmware's share of the BAR time plus the SSD-DRAM write occupies the device
    pcie_link_rt = dev.cxl_rt  # the same link and switch levels as the CXL round trip
    pcie_wr_service_ns = np.maximum(p.pcie_bar_ns - pcie_link_rt, 0.0) + dev.ssd_dram_ns
    far_ns = first_match(((d["dram"], p.host_dram_ns), (d["cxl_dram"], cxl_dram_far_ns), (d["pcie_ssd"], pcie_rd_ns)),
                    cxl_far_ns)
    a_pcie = p.pcie_region_frac * (wk.ld + wk.st)  # uncacheable accesses per instruction
    # per operation: LLC misses (SPEC), L2 misses (apex), one line (stream); PCIe: every access
    acc_per_op = first_match(((f.is_stream, 1.0), (f.is_apex & cacheable, 1.0 - hr.h2), (f.is_apex, 1.0),
                         (d["pcie_ssd"], a_pcie)), wk.m)
    return SimpleNamespace(
        cxl_dram_far_ns=cxl_dram_far_ns, pcie_rd_ns=pcie_rd_ns, pcie_wr_ns=pcie_wr_ns,
        posted=p.is_("store_path", "posted"), pcie_wr_issue_ns=0.5 * pcie_link_rt, pcie_wr_service_ns=pcie_wr_service_ns,
        mlp_eff=p.mlp * lsq_mlp(wk.m * wk.q, wk.ld + wk.st, p.is_("miss_overlap", "lsq")), far_ns=far_ns,
        # a cacheable miss first looks up the L2 (the on-chip path to the memory port)
        dram_read_ns=L2_HIT_NS + p.host_dram_ns, hit_frac=np.where(f.is_ssd & cacheable, hr.h_cxl, 0.0),
        a_pcie=a_pcie, acc_per_op=acc_per_op,
    )


def _stream_caps(p: Batch, f: SimpleNamespace, dev: SimpleNamespace, hr: SimpleNamespace) -> SimpleNamespace:
    """STREAM caps: link and media (flash: sector or page reads, page programs), and its concurrency."""
    d, gen, blk = f.d, dev.gen, dev.blk
    rf = STREAM_READ_FRAC
    link_gbps = np.where(
        d["pcie_ssd"],
        dev.pcie_dma_gbps,
        link.cxl_mem_bw_gbps(gen, p.lanes, dev.flit, rf),
    ) / p.mld_count
    bf_reads = hr.bf_share * p.bf_hit_frac
    flash_s_per_line = (
        rf * ((1.0 - bf_reads) / blk["sector_read_iops"] + bf_reads / (LINES_PER_PAGE * blk["page_read_iops"]))
        + (1.0 - rf) / (LINES_PER_PAGE * blk["page_prog_iops"])
    )
    flash_gbps = CACHELINE_B / flash_s_per_line / GB / p.mld_count
    ddr_gbps = HOST_DDR_CHANNELS * blk["host_ddr_channel_gbps"]
    cap_gbps = np.where(d["dram"], ddr_gbps, np.minimum(link_gbps, np.where(f.is_ssd, flash_gbps, ddr_gbps)))
    return SimpleNamespace(rf=rf, link_gbps=link_gbps, ddr_gbps=ddr_gbps, cap_gbps=cap_gbps,
                           conc=p.threads * np.where(d["pcie_ssd"], 1.0, p.stream_mlp))


def _times(p: Batch, f: SimpleNamespace, wk: SimpleNamespace, hr: SimpleNamespace, pa: SimpleNamespace,
           caps: SimpleNamespace, extra_ns: np.ndarray | float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(time per 1000 ops in ns, STREAM GB/s, read ns) with ``extra_ns`` added to each device access."""
    cacheable, m, q, rf = f.cacheable, wk.m, wk.q, caps.rf
    read_ns = np.where(cacheable, L2_HIT_NS + pa.far_ns, pa.pcie_rd_ns) + extra_ns
    # SPEC (§2 item 2): cacheable designs stall on load misses; the BAR on every access
    t_cache = memssd.stall_time_ns(p.cpi_core, FREQ_GHZ, m * q, read_ns, pa.mlp_eff)
    t_pcie = pcie_spec_time_ns(p.cpi_core / FREQ_GHZ, pa.a_pcie * q, pa.a_pcie * (1.0 - q), read_ns,
                               pa.pcie_wr_ns + extra_ns, pa.pcie_wr_issue_ns, pa.pcie_wr_service_ns + extra_ns, pa.posted)
    t_spec = np.where(cacheable, t_cache, t_pcie)
    # Apex-Map: mean access time, host caches included
    t_apex = np.where(cacheable, L1_HIT_NS + (1.0 - hr.h1) * L2_HIT_NS + (1.0 - hr.h2) * (read_ns - L2_HIT_NS), read_ns)
    # STREAM: outstanding lines over the latency (reads; writes ride along), capped
    gbps = np.minimum(caps.conc * CACHELINE_B / read_ns / rf, caps.cap_gbps)
    t_stream = 1000.0 * CACHELINE_B * p.threads / gbps  # ns per 1000 lines of one thread
    return first_match(((f.is_apex, 1000.0 * t_apex), (f.is_stream, t_stream)), 1000.0 * t_spec), gbps, read_ns


def _port_queue(p: Batch, f: SimpleNamespace, wk: SimpleNamespace, hr: SimpleNamespace, pa: SimpleNamespace,
                caps: SimpleNamespace) -> SimpleNamespace:
    """Time per operation: unloaded first, then with the device port as an M/M/1 station at the offered load (§2 item 8)."""
    is_stream, mld = f.is_stream, p.mld_count
    t0, gbps0, _ = _times(p, f, wk, hr, pa, caps, 0.0)
    # a cacheable design's store misses come back as dirty-line write-backs (write-allocate
    # caches): one 64 B write per store miss crosses the port besides the misses' reads
    wb_per_op = np.where(f.cacheable & pa.posted & ~(f.is_apex | is_stream), wk.m * (1.0 - wk.q), 0.0)
    offered_gbps = np.where(is_stream, gbps0, CORES * (pa.acc_per_op + wb_per_op) * CACHELINE_B / (t0 / 1000.0))
    port_gbps = caps.link_gbps * mld  # the whole port, shared by mld_count hosts
    util = offered_gbps * np.where(is_stream, 1.0, mld) / port_gbps
    service_ns = CACHELINE_B / port_gbps
    # STREAM's rate is already capped by the port; its queueing is in the cap
    port_wait_ns = np.where(f.d["dram"] | is_stream, 0.0, queueing.mm1_wait(util / service_ns, service_ns))
    time_kop, stream_gbps, read_ns = _times(p, f, wk, hr, pa, caps, port_wait_ns)
    return SimpleNamespace(util=util, time_kop=time_kop, read_ns=read_ns,
                           offered_gbps=np.where(is_stream, stream_gbps, offered_gbps))


def _dram_baseline(p: Batch, f: SimpleNamespace, wk: SimpleNamespace, hr: SimpleNamespace, pa: SimpleNamespace,
                   caps: SimpleNamespace) -> np.ndarray:
    """The dram design's time per 1000 operations on the same workload, for the slowdown."""
    dram_read_ns, rf = pa.dram_read_ns, caps.rf
    t_dram_spec = memssd.stall_time_ns(p.cpi_core, FREQ_GHZ, wk.m * wk.q, dram_read_ns, pa.mlp_eff)
    t_dram_apex = L1_HIT_NS + (1.0 - hr.h1) * L2_HIT_NS + (1.0 - hr.h2) * p.host_dram_ns
    dram_gbps = np.minimum(p.threads * p.stream_mlp * CACHELINE_B / dram_read_ns / rf, caps.ddr_gbps)
    return first_match(((f.is_apex, 1000.0 * t_dram_apex), (f.is_stream, 1000.0 * CACHELINE_B * p.threads / dram_gbps)),
                  1000.0 * t_dram_spec)


def _tail_latency(p: Batch, f: SimpleNamespace, wk: SimpleNamespace, pa: SimpleNamespace,
                  port: SimpleNamespace) -> np.ndarray:
    """p99 read latency (us): reads landing on a die busy with flushes or GC (§2 item 4); DT holds them off."""
    wa = np.interp(p.op_ratio, _OP_GRID, _WA_GRID)
    gc_ns_per_page = (wa - 1.0) * (SECTOR_READ_NS + TPROG_NS) + wa * TBERS_NS / PAGES_PER_BLOCK
    write_lines_per_ns = np.where(f.is_stream, port.offered_gbps * (1.0 - STREAM_READ_FRAC) / CACHELINE_B,
                                  CORES * pa.acc_per_op * (1.0 - wk.q) / (port.time_kop / 1000.0))
    write_lines_per_ns = np.where(f.is_apex, 0.0, write_lines_per_ns)  # Apex-Map excludes GC (F L101)
    busy = write_lines_per_ns / LINES_PER_PAGE * (TPROG_NS + gc_ns_per_page) / FLASH_UNITS
    p_dt = np.where(f.d["cxl_assd"], p.dt_coverage_frac, 0.0)
    p_block = np.where(f.is_ssd, np.clip(busy, 0.0, 1.0) * (1.0 - p_dt), 0.0)
    vacation_ns = TBERS_NS + p.gc_step_pages * (SECTOR_READ_NS + TPROG_NS)
    tail_wait_ns = np.where(p_block > 1.0 - TAIL_QUANTILE,
                            vacation_ns * (1.0 - (1.0 - TAIL_QUANTILE) / np.maximum(p_block, 1e-12)), 0.0)
    return (port.read_ns + tail_wait_ns) / NS_PER_US


def _device_cost(p: Batch, f: SimpleNamespace, dev: SimpleNamespace) -> SimpleNamespace:
    """Capacity through the switches, and the bill of materials of one device (cost block)."""
    d = f.d
    per_switch = p.switch_lanes / 16.0
    flash_usd = p.capacity_gib * GIB / GB * p.znand_usd_per_gb
    ctrl_dram_usd = _SSD_CTRL_USD + dev.ssd_dram_gib * _SSD_DRAM_USD_PER_GIB
    ssd_usd = flash_usd + ctrl_dram_usd * np.where(d["pcie_ssd"], 1.0, 1.0 + _CXL_PREMIUM)
    dram_usd = p.capacity_gib * p.dram_usd_per_gib + np.where(d["cxl_dram"], _CXL_MEM_CTRL_USD, 0.0)
    switch_usd = np.where(d["dram"], 0.0, p.switch_hops * _SWITCH_USD / per_switch)
    return SimpleNamespace(per_switch=per_switch, pool_tib=p.capacity_gib * GIB * per_switch ** p.switch_hops / TIB,
                           device_usd=np.where(f.is_ssd, ssd_usd, dram_usd) + switch_usd)


def _mem_analytics_system(p: Batch, f: SimpleNamespace, dev: SimpleNamespace, pa: SimpleNamespace,
                          cost: SimpleNamespace, nan: np.ndarray) -> tuple[dict, dict]:
    """The mem-analytics system: one host, footprint_gib in the design's memory; its columns and limits."""
    d, blk, per_switch = f.d, dev.blk, cost.per_switch
    fp = np.asarray(p.footprint_gib, dtype=np.float64)
    share_gib = p.capacity_gib / p.mld_count  # a logical device's capacity
    n_dev = np.where(d["dram"], 0.0, np.ceil(fp / share_gib - 1e-9))
    # the query's lines are uniformly random: the SSD DRAM hits its share of the footprint,
    # and Bufferability has nothing to keep or prefetch (every line equally likely, no
    # page reuse), so CXL-ASSD serves the query as CXL-SSD does
    h_fam = np.minimum(1.0, p.ssd_dram_frac * n_dev * share_gib / fp)
    fam_far_ns = first_match(
        ((d["dram"], p.host_dram_ns), (d["cxl_dram"], pa.cxl_dram_far_ns), (d["pcie_ssd"], pa.pcie_rd_ns)),
        dev.cxl_rt + p.cxl_ctrl_ns + memssd.device_read_ns(h_fam, 0.0, dev.ssd_dram_ns, dev.miss_ns),
    )
    access_ns = np.where(f.cacheable, L2_HIT_NS + fam_far_ns, fam_far_ns)
    # per logical device: its link share, and Z-NAND sector reads for the lines the SSD DRAM misses
    dev_link = np.where(d["pcie_ssd"], dev.pcie_dma_gbps,
                        link.cxl_mem_bw_gbps(dev.gen, p.lanes, dev.flit, 1.0)) / p.mld_count
    fam_flash_s = (1.0 - h_fam) / blk["sector_read_iops"]
    dev_media = np.where(f.is_ssd, CACHELINE_B / fam_flash_s / GB, HOST_DDR_CHANNELS * blk["host_ddr_channel_gbps"]) / p.mld_count
    sys_bw = np.where(d["dram"], FAMILY_HOST_CHANNELS * blk["host_ddr_channel_gbps"],
                      n_dev * np.minimum(dev_link, dev_media))
    max_dev = np.floor(HOST_DEVICE_LANES / p.lanes) * per_switch ** p.switch_hops * p.mld_count
    host_dram_gib = np.where(d["dram"], fp, 0.0)
    host = workload.host_server(0.0)
    dev_w = np.where(f.is_ssd, SSD_W + dev.ssd_dram_gib * workload.DRAM_W_PER_GIB, CXL_CTRL_W + p.capacity_gib * workload.DRAM_W_PER_GIB)
    dev_w = dev_w + p.switch_hops * CXL_SWITCH_W / per_switch
    sys_infeasible = {TOO_MUCH_DRAM: np.asarray(host_dram_gib > HOST_MAX_DRAM_GIB),
                      TOO_MANY_DEVICES: np.asarray(n_dev > max_dev)}
    system = {
        "access_latency_ns": access_ns * nan,
        "system_bw_gbps": sys_bw * nan,
        "device_count": n_dev,
        # the BAR is strongly ordered and synchronous: one access in flight per thread
        "work_per_s": workload.mem_queries_per_s(access_ns, sys_bw, mlp=np.where(d["pcie_ssd"], 1.0, workload.MLP)) * nan,
        "capex_usd": host["capex_usd"] + host_dram_gib * p.dram_usd_per_gib + n_dev * cost.device_usd / p.mld_count,
        "power_w": host["power_w"] + host_dram_gib * workload.DRAM_W_PER_GIB + n_dev * dev_w / p.mld_count,
    }
    return system, sys_infeasible
