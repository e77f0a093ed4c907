"""directcxl: memory pooling over CXL.mem (DirectCXL, IEEE Micro; shared/research/directcxl.md).

Hosts load and store remote DRAM through a CXL switch; the baselines pool memory over
RDMA (raw one-sided verbs, FastSwap page swapping, HERD key-value gets) or tier it
locally (TPP, emulated).  The request path of a 64 B load that misses the host caches:

    LLC miss handling (root port packs the flit)       CPU cycles        paths.llc_ns
    root port -> [switch per level] -> endpoint        IP cycles + PHY   paths.fpga_fabric_ns
                                                       (ASIC: link block CXL round trip)
    device DRAM controller + DRAM                      ns                calibration.DEVICE_MEM_NS

A payload of many lines overlaps at most ``llc_mshr`` misses (§2.3).  An RDMA read pays
the verbs library, a copy and two DMAs around the network (§2.4).  Workloads turn
per-operation costs into run time relative to Local (ops.py, §2.2); their constants are
in ``workloads.csv`` and ``fitted.toml`` (calibration.py says what they are fitted to).

Cost (§2.9, prices external): a CXL pool is DRAM + one controller per device + switches;
an RDMA pool is DRAM + a memory-node server and RNIC per node + an RNIC per host (+ fabric
switches).  Power: DRAM background (energy block) + controllers/NICs/servers.

System (mem-analytics family): ``hosts`` dual-socket hosts run the family's query over
``footprint_gib`` (= ``pool_capacity_gib``), held by each path's memory (own DIMMs for
local / tpp, the pool otherwise).  One 64 B access of the query costs the path's operation
on a one-line object (the same ``op_times``; Swap and TPP hit their local pages at the
share of the footprint those hold); the bandwidth is the host's local DRAM (local, tpp) or
its share of the fabric over the bytes each access moves (a page per Swap fault).
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dse.model import Batch, Metric, Model, Param
from dse.units import BITS_PER_BYTE, CACHELINE_B, GB, GIB, MIB, NS_PER_US
from models.blocks import cache, cost, dram, energy, link, workload
from models.blocks.calibration import per_calibration
from models.directcxl import calibration as cal
from models.directcxl import paths
from models.directcxl.ops import PATHS, op_times, run_time

# ----------------------------------------------------------------------------- workloads
TABLE = Path(__file__).resolve().parent / "workloads.csv"


def _load_table() -> dict[str, dict[str, str]]:
    with TABLE.open(newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    return {r["workload"]: r for r in rows}


WORKLOAD_TABLE = _load_table()
WORKLOADS: tuple[str, ...] = tuple(WORKLOAD_TABLE)
MEM_CLASSES = ("memdb", "other", "pure")
#: Codes (indices into :data:`MEM_CLASSES`) of the classes whose memory share is a parameter.
MEMDB, OTHER = MEM_CLASSES.index("memdb"), MEM_CLASSES.index("other")


def _col(name: str) -> dict[str, float]:
    return {w: float(r[name]) for w, r in WORKLOAD_TABLE.items()}


_OBJECT_B = _col("object_b")
_INDEX_LINES = _col("index_lines")
_FOOTPRINT_GB = _col("footprint_gb")
_REUSE_ALPHA = _col("reuse_alpha")
_CLASS = {w: float(MEM_CLASSES.index(r["mem_class"])) for w, r in WORKLOAD_TABLE.items()}
_IS_UBENCH = {w: r["kind"] == "ubench" for w, r in WORKLOAD_TABLE.items()}

# ----------------------------------------------------------------------------- cost / power
_FIT = cal.fitted()
#: Ports per fabric switch (CXL or InfiniBand) when a pool needs one.  Assumption: 16.
SWITCH_PORTS = 16
#: Memory per DRAM rank for the background power: 8 x8 devices of 8 Gb (the energy block's
#: DDR4-3200 set) = 8 GiB per rank.
RANK_GIB = 8.0
_DDR4 = energy.dram_standard_energy("DDR4-3200")
#: DRAM background power per GiB (refresh + precharge standby of one rank / its GiB).
DRAM_W_PER_GIB = float(_DDR4["refresh_w"] + _DDR4["precharge_standby_w"]) / RANK_GIB
#: CXL controller power, W.  Assumption (as the cxl-expander model): ~8 W for a Type-3 ASIC.
CXL_CTRL_W = 8.0
#: CXL switch power, W.  Assumption: ~25 W for a 16-port PCIe 5.0 switch class device.
CXL_SWITCH_W = 25.0
#: RNIC power, W.  Assumption: ~10 W, the order ConnectX-class adapter briefs list.
RNIC_W = 10.0
#: Memory-node server power without its DRAM, W.  Assumption: a one-socket server at light load.
MEMORY_NODE_W = 120.0
#: InfiniBand switch power, W.  Assumption: ~150 W for a 36-port EDR-class switch.
IB_SWITCH_W = 150.0

#: Local DRAM channels of one host, for the family query's local bandwidth.  Assumption:
#: the dual-socket host of workload.host_server, 8 channels per socket.
HOST_CHANNELS = workload.HOST_DRAM_CHANNELS
#: Most DRAM one host's DIMM slots take (workload block: 16 channels x 2 DIMMs x 128 GiB).
HOST_MAX_DRAM_GIB = workload.HOST_MAX_DRAM_GIB
#: Reason of a local / tpp point whose per-host share of the footprint exceeds the slots.
TOO_MUCH_LOCAL_DRAM = "footprint per host beyond one host's DIMM slots (local and tpp keep it in DIMMs)"

_PATH_CODE = {p: i for i, p in enumerate(PATHS)}


class DirectCxl(Model):
    name = "directcxl"
    version = "2"
    family = "mem-analytics"
    family_fixed = {"platform": "asic", "cpu_clock_mhz": 3000.0}
    workload_map = {"footprint_gib": "pool_capacity_gib"}
    boundary = (
        "`hosts` dual-socket hosts (workload.host_server, local_mem_mib of DRAM each) plus the memory holding "
        "footprint_gib: their own DIMMs (local, tpp), the CXL pool with controllers and switches (directcxl), or "
        "memory-node servers, RNICs and InfiniBand switches (rdma, swap, kvs)"
    )
    summary = "DirectCXL memory pooling over CXL.mem vs RDMA pooling (raw, Swap, KVS) and TPP: latency, run time, $/GiB"
    source = "Gouk et al., 'Memory Pooling With CXL', IEEE Micro (shared/research/directcxl.md)"
    variant_param = "path"
    params = (
        Param("path", "directcxl", "DirectCXL and the article's baselines RDMA, Swap (FastSwap), KVS (HERD), TPP (L101, L218)", choices=PATHS),
        Param("workload", "dlrm", "Table 1 (DLRM, MemDB, Ligra x4), Table 2 (9 GNN graphs), the microbenchmark (L111-L153)", choices=WORKLOADS),
        Param("payload_b", 64.0, "64 B request of the microbenchmark (L119); 64 B-4 KB payloads (L126)", bounds=(8.0, 1048576.0),
              doc="bytes per access of the microbenchmark (workload=ubench) and of the payload metrics"),
        Param("platform", "fpga", "the prototype: FPGA hosts, CXL IPs and memory blades (L93-L97); asic = link-block projection",
              choices=("fpga", "asic")),
        Param("switch_levels", 1, "one CXL switch in the prototype (L93)", bounds=(0, 4), integer=True),
        Param("cpu_clock_mhz", cal.PROTO_CPU_MHZ, "softcore hosts at 100 MHz (L97)", bounds=(50.0, 5000.0)),
        Param("ip_clock_mhz", cal.PROTO_IP_MHZ, "CXL/PCIe IPs at 250 MHz (L97); fpga platform only", bounds=(50.0, 2000.0)),
        Param("llc_mshr", cal.LLC_MSHR, "16 concurrent LLC misses (L126)", bounds=(1, 256), integer=True),
        Param("cxl_gen", 5, "CXL 2.0 runs on the PCIe 5.0 PHY (CXL 2.0 spec); asic platform only", choices=(5, 6)),
        Param("cxl_lanes", 8, "assumption: x8 CXL links, the common expander width; asic platform only", choices=(4, 8, 16)),
        Param("rdma_link_gbit_s", 56.0, "ConnectX-3 VPI runs FDR InfiniBand, 56 Gb/s (product brief; digest ambiguity 4); asic only",
              bounds=(10.0, 800.0)),
        Param("rdma_switches", 0, "direct host-to-memory-node link (digest ambiguity 4); asic only", bounds=(0, 3), integer=True),
        Param("local_mem_mib", 100.0, "Table 1: local memory use under 100 MB, taken as Swap's local page budget (ambiguity 8)",
              bounds=(1.0, 1048576.0)),
        Param("rdma_lib_cyc", cal.RDMA_LIB_CYC, "libibverbs + libmlx4, 4,158 cycles below 1 KB (L126)", bounds=(0.0, 1e6)),
        Param("swap_kernel_cyc", _FIT["swap_kernel_cyc"], "fitted: Swap kernel share 51.8 % (L140) + No-Switch gain (L214); calibration.py",
              bounds=(0.0, 1e6), doc="kernel fault path + FastSwap driver per remote page fault"),
        Param("kvs_software_cyc", _FIT["kvs_software_cyc"], "fitted: MemDB KVS breakdown 55.3 % / 24.9 % (L155); calibration.py",
              bounds=(0.0, 1e6), doc="HERD software per get (client and server)"),
        Param("mem_frac_memdb", _FIT["mem_frac_memdb"], "fitted: MemDB KVS breakdown (L155); calibration.py", bounds=(0.001, 1.0),
              doc="share of MemDB's Local run time spent in remote-data operations"),
        Param("mem_frac_other", _FIT["mem_frac_other"], "fitted: No-Switch gain (L214) + Swap kernel share (L140); calibration.py",
              bounds=(0.001, 1.0), doc="share of DLRM's and Ligra's Local run time spent in remote-data operations"),
        Param("hosts", 4, "four compute hosts (L93)", bounds=(1, 4096), integer=True),
        Param("pool_capacity_gib", 256.0, "four devices of 64 GB (L93, ambiguity 2)", bounds=(1.0, 1048576.0),
              doc="memory the hosts need at their individual peaks (sum of peaks); the mem-analytics footprint_gib"),
        Param("pooling_saving_frac", 0.10, "assumption: pooling provisions the peak of the sum, ~7-10 % less DRAM than the sum of "
              "per-host peaks (Pond, ASPLOS'23); digest §2.7", bounds=(0.0, 0.9),
              doc="DRAM a shared pool saves over per-host provisioning"),
        Param("device_capacity_gib", 64.0, "64 GB per CXL device / memory node (L93, ambiguity 2)", bounds=(8.0, 8192.0)),
        Param("dram_usd_per_gib", cost.component_price("dram_ddr4").value, "cost block: dram_ddr4 (dated)", bounds=(0.1, 100.0)),
        Param("cxl_ctrl_usd", cost.component_price("cxl_memory_controller").value, "cost block: cxl_memory_controller (assumption)",
              bounds=(0.0, 5000.0)),
        Param("cxl_switch_usd", cost.component_price("cxl_switch").value, "cost block: cxl_switch (assumption)", bounds=(0.0, 50000.0)),
        Param("rnic_usd", 700.0, "assumption: a 56-100 Gb/s ConnectX-class adapter sells for several hundred US$ (vendor stores, 2024)",
              bounds=(0.0, 10000.0)),
        Param("memory_node_usd", 2500.0, "assumption: a one-socket memory server without DRAM (CPU, board, chassis, PSU)",
              bounds=(0.0, 50000.0)),
        Param("ib_switch_usd", 6000.0, "assumption: a 36-port EDR-class InfiniBand switch", bounds=(0.0, 100000.0)),
        # ``years`` (5, the pool TCO's period) is the family's common parameter
    )
    metrics = (
        Metric("load_latency_cyc", "min", "one 64 B remote load (RDMA: hardware path, Fig. 6a accounting), host CPU cycles"),
        Metric("load_latency_ns", "min", "the same in ns"),
        Metric("load_network_share_frac", None, "share of the 64 B load latency in the RDMA network (hardware-only view)"),
        Metric("best_load_cyc", "min", "best case of the memory-hierarchy test (RDMA: Fig. 7 best case)"),
        Metric("hit_latency_cyc", "min", "an access whose line the host caches hold (load/store paths: L1 hit)"),
        Metric("payload_latency_ns", "min", "one access of payload_b bytes"),
        Metric("payload_latency_cyc", "min", "the same in host CPU cycles"),
        Metric("bw_gbps", "max", "one host's bandwidth streaming payload_b accesses back to back"),
        Metric("llc_share_frac", None, "share of the payload latency in LLC miss handling"),
        Metric("fabric_share_frac", None, "share in the CXL fabric (root port, switches, endpoint, PHY)"),
        Metric("phy_share_frac", None, "share in the FlexBus PHY"),
        Metric("software_share_frac", None, "share in software (verbs library, kernel, KVS)"),
        Metric("copy_share_frac", None, "share in CPU copies"),
        Metric("network_share_frac", None, "share in the RDMA network"),
        Metric("time_vs_local_x", "min", "workload run time relative to Local"),
        Metric("op_time_ns", "min", "run time per remote-data operation of the workload (compute included)"),
        Metric("exec_software_share_frac", None, "share of run time in software (kernel faults, verbs, KVS)"),
        Metric("exec_rdma_share_frac", None, "share of run time in RDMA transfers and their copies"),
        Metric("transfer_b_per_op", "min", "bytes moved over the fabric per operation"),
        Metric("pool_capex_usd", "min", "pool hardware for all hosts: DRAM, controllers/servers, NICs, switches"),
        Metric("usd_per_gib", "min", "pool capex per GiB of the hosts' memory demand"),
        Metric("pool_power_w", "min", "pool power: DRAM background, controllers/servers, NICs, switches"),
        Metric("pool_tco_usd", "min", "pool capex + energy over the years (cost block, PUE and $/kWh defaults)"),
        Metric("access_latency_ns", "min", "one 64 B access of the mem-analytics query on the path (software included)"),
        Metric("host_bw_gbps", "max", "one host's bandwidth for the query's 64 B accesses (fabric share over bytes moved)"),
    )

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        fpga = p.is_("platform", "fpga")
        is_ = {k: p.path == i for k, i in _PATH_CODE.items()}
        choose = _chooser(p.path, p.n)
        lp = _load_path(p, fpga)
        rd = _rdma_path(p, fpga)
        common = _op_inputs(p, lp, rd)
        pool = _pool_cost_power(p, is_)
        return {
            **_mem_analytics_system(p, rd, common, pool, choose, is_),
            **_line_load(p, lp, rd, common, choose, is_),
            **_payload_access(p, lp, rd, common, choose, is_),
            **_workload_run(p, rd, common, choose, is_),
            "pool_capex_usd": pool["capex"],
            "usd_per_gib": pool["capex"] / p.pool_capacity_gib,
            "pool_power_w": pool["power"],
            "pool_tco_usd": cost.tco_usd(pool["capex"], pool["power"], p.years),
        }


# ----------------------------------------------------------------------------- stages of evaluate
#: Named columns one stage hands to the next.
Cols = dict[str, np.ndarray]
#: Picks, per point, the element of a per-path list that belongs to the point's path.
Chooser = Callable[[list], np.ndarray]


def _cyc(ns: np.ndarray, cpu: np.ndarray) -> np.ndarray:
    """ns in host CPU cycles."""
    return ns * cpu / NS_PER_US


def _select(choose: Chooser, parts: dict[str, Cols], key: str) -> np.ndarray:
    """Per point, ``key`` of the point's path in ``op_times``' per-path ``parts``."""
    return choose([parts[k][key] for k in PATHS])


def _load_path(p: Batch, fpga: np.ndarray) -> Cols:
    """The load path (§2.1): LLC miss handling, the CXL fabric (PHY apart) and device memory."""
    cpu = p.cpu_clock_mhz
    levels = p.switch_levels
    llc = paths.llc_ns(cpu)
    asic_dram_ns = paths.asic_dram_idle_ns()
    local_miss = np.where(fpga, paths.fpga_local_miss_ns(cpu), llc + asic_dram_ns)
    fab_f, phy_f = paths.fpga_fabric_ns(levels, p.ip_clock_mhz)
    fab_a, phy_a = paths.asic_fabric_ns(levels, p.cxl_gen, p.cxl_lanes)
    fabric = np.where(fpga, fab_f, fab_a)
    phy = np.where(fpga, phy_f, phy_a)
    cxl_miss = llc + fabric + np.where(fpga, cal.DEVICE_MEM_NS, asic_dram_ns)
    return {"llc": llc, "local_miss": local_miss, "cxl_miss": cxl_miss, "fabric": fabric, "phy": phy}


def _rdma_path(p: Batch, fpga: np.ndarray) -> Cols:
    """The RDMA hardware path (§2.4) for a line, a page, the payload and the workload's object."""
    size = p.payload_b
    ub = p.pick("workload", _IS_UBENCH)
    obj = np.where(ub, size, p.pick("workload", _OBJECT_B))
    sizes = np.stack([np.broadcast_to(np.asarray(x, dtype=np.float64), (p.n,)) for x in (CACHELINE_B, paths.PAGE_B, size, obj)])
    hw_all, net_all = paths.rdma_table(sizes, fpga, p.rdma_link_gbit_s, p.rdma_switches)
    hw_line, hw_page, hw_size, hw_obj = hw_all
    net_line, net_page, net_size, _ = net_all
    return {"obj": obj, "hw_line": hw_line, "hw_page": hw_page, "hw_size": hw_size, "hw_obj": hw_obj,
            "net_line": net_line, "net_page": net_page, "net_size": net_size}


def _op_inputs(p: Batch, lp: Cols, rd: Cols) -> Cols:
    """The per-path operation costs' inputs (ops.op_times): hardware paths and software (§2.4-§2.6) in ns."""
    cpu = p.cpu_clock_mhz
    to_ns = lambda cyc: paths.cyc_to_ns(cyc, cpu)  # noqa: E731
    sw = dict(lib_ns=to_ns(p.rdma_lib_cyc), kernel_ns=to_ns(p.swap_kernel_cyc), kvs_ns=to_ns(p.kvs_software_cyc))
    return dict(local_miss_ns=lp["local_miss"], cxl_miss_ns=lp["cxl_miss"], llc_line_ns=lp["llc"], mshr=p.llc_mshr,
                hw_line_ns=rd["hw_line"], hw_page_ns=rd["hw_page"], cpu_mhz=cpu, **sw)


def _line_load(p: Batch, lp: Cols, rd: Cols, common: Cols, choose: Chooser, is_: Cols) -> Cols:
    """One 64 B load (Fig. 6a / Fig. 7 view; RDMA: hardware path only), its best case and cache hit."""
    cpu = p.cpu_clock_mhz
    local_miss, hw_line = lp["local_miss"], rd["hw_line"]
    page_fault = paths.pages_spanned(CACHELINE_B)
    load_ns = choose([
        local_miss, lp["cxl_miss"], hw_line,
        local_miss + page_fault * (common["kernel_ns"] + rd["hw_page"]),
        common["kvs_ns"] + hw_line + paths.copy_ns(CACHELINE_B, cpu),
        local_miss + page_fault * (common["kernel_ns"] + paths.copy_ns(paths.PAGE_B, cpu)),
    ])
    rdma_like = is_["rdma"] | is_["kvs"]
    best_ns = np.where(is_["rdma"], hw_line * cal.RDMA_BEST_FRAC, load_ns)
    hit_ns = np.where(rdma_like, load_ns, paths.cyc_to_ns(cal.L1_HIT_CYC, cpu))
    return {
        "load_latency_cyc": _cyc(load_ns, cpu),
        "load_latency_ns": load_ns,
        "load_network_share_frac": np.where(is_["rdma"], rd["net_line"], 0.0) / load_ns,
        "best_load_cyc": _cyc(best_ns, cpu),
        "hit_latency_cyc": _cyc(hit_ns, cpu),
    }


def _payload_access(p: Batch, lp: Cols, rd: Cols, common: Cols, choose: Chooser, is_: Cols) -> Cols:
    """One payload access (microbenchmark view, Fig. 6; no index, no page reuse) and its latency split."""
    size = p.payload_b
    pay = op_times(size, 0.0, 0.0, hw_obj_ns=rd["hw_size"], **common)
    pay_ns = _select(choose, pay, "total")
    lines = np.maximum(np.ceil(size / CACHELINE_B), 1.0)
    waves = np.ceil(lines / p.llc_mshr)
    load_store = is_["local"] | is_["directcxl"]
    rdma_like = is_["rdma"] | is_["kvs"]
    # network side of an RDMA transfer: the flat network (fpga) or all but the two DMAs (asic)
    net_total = np.where(rdma_like, rd["net_size"], 0.0) + np.where(is_["swap"], paths.pages_spanned(size) * rd["net_page"], 0.0)
    return {
        "payload_latency_ns": pay_ns,
        "payload_latency_cyc": _cyc(pay_ns, p.cpu_clock_mhz),
        "bw_gbps": size / pay_ns,
        "llc_share_frac": np.where(load_store, lines * lp["llc"], 0.0) / pay_ns,
        "fabric_share_frac": np.where(is_["directcxl"], waves * lp["fabric"], 0.0) / pay_ns,
        "phy_share_frac": np.where(is_["directcxl"], waves * lp["phy"], 0.0) / pay_ns,
        "software_share_frac": _select(choose, pay, "software") / pay_ns,
        "copy_share_frac": _select(choose, pay, "copy") / pay_ns,
        "network_share_frac": net_total / pay_ns,
    }


def _workload_run(p: Batch, rd: Cols, common: Cols, choose: Chooser, is_: Cols) -> Cols:
    """The workload's run time relative to Local and its split (§2.2, §2.5, §2.6)."""
    index = p.pick("workload", _INDEX_LINES)
    alpha = p.pick("workload", _REUSE_ALPHA)
    footprint_b = p.pick("workload", _FOOTPRINT_GB) * GB
    # Swap's page cache: LRU-free working-set hit rate under Zipf reuse (cache block); only
    # the paging paths of reused workloads need it
    needs = (alpha >= 0) & (is_["swap"] | is_["tpp"])
    page_hit = _where_needed(needs, p.n, lambda mib, fp, a: cache.working_set_hit_rate(mib * MIB, fp, a, paths.PAGE_B),
                             p.local_mem_mib, footprint_b, alpha)
    cls = p.pick("workload", _CLASS)
    f = np.where(cls == MEMDB, p.mem_frac_memdb, np.where(cls == OTHER, p.mem_frac_other, 1.0))
    ops = op_times(rd["obj"], index, page_hit, hw_obj_ns=rd["hw_obj"], **common)
    t_op = _select(choose, ops, "total")
    t_local = ops["local"]["total"]
    t_rel = run_time(t_op, t_local, f)
    share = f / t_local / t_rel
    return {
        "time_vs_local_x": t_rel,
        "op_time_ns": t_rel * t_local / f,
        "exec_software_share_frac": _select(choose, ops, "software") * share,
        "exec_rdma_share_frac": _select(choose, ops, "rdma") * share,
        "transfer_b_per_op": _select(choose, ops, "bytes"),
    }


def _pool_cost_power(p: Batch, is_: Cols) -> Cols:
    """Cost and power of the pool (§2.7, §2.9): its devices, controllers or servers, NICs and switches."""
    # a shared pool (a CXL switch or the RDMA network between hosts and memory) provisions the
    # peak of the sum; per-host memory (Local, TPP, DirectCXL without a switch: one host per
    # device) the sum of peaks
    levels = p.switch_levels
    shared = (is_["directcxl"] & (levels > 0)) | is_["rdma"] | is_["swap"] | is_["kvs"]
    cap = p.pool_capacity_gib * np.where(shared, 1.0 - p.pooling_saving_frac, 1.0)
    n_dev = np.ceil(cap / p.device_capacity_gib)
    endpoints = p.hosts + n_dev
    n_cxl_sw = levels * np.ceil(endpoints / SWITCH_PORTS)
    # without a switch a device's single port serves one host (one VH per HDM, L75)
    n_cxl_dev = np.where(levels > 0, n_dev, np.maximum(n_dev, p.hosts))
    n_ib_sw = np.where(endpoints > 2, np.ceil(endpoints / SWITCH_PORTS), 0.0) + p.rdma_switches
    dram_usd = cap * p.dram_usd_per_gib
    cxl_usd = dram_usd + n_cxl_dev * p.cxl_ctrl_usd + n_cxl_sw * p.cxl_switch_usd
    rdma_usd = dram_usd + n_dev * (p.memory_node_usd + p.rnic_usd) + p.hosts * p.rnic_usd + n_ib_sw * p.ib_switch_usd
    dram_w = cap * DRAM_W_PER_GIB
    cxl_w = dram_w + n_cxl_dev * CXL_CTRL_W + n_cxl_sw * CXL_SWITCH_W
    rdma_w = dram_w + n_dev * (MEMORY_NODE_W + RNIC_W) + p.hosts * RNIC_W + n_ib_sw * IB_SWITCH_W
    pooled_rdma = is_["rdma"] | is_["kvs"] | is_["swap"]
    capex = np.where(is_["directcxl"], cxl_usd, np.where(pooled_rdma, rdma_usd, dram_usd))
    power = np.where(is_["directcxl"], cxl_w, np.where(pooled_rdma, rdma_w, dram_w))
    return {"capex": capex, "power": power, "n_dev": n_dev, "n_cxl_dev": n_cxl_dev}


def _mem_analytics_system(p: Batch, rd: Cols, common: Cols, pool: Cols, choose: Chooser, is_: Cols) -> Cols:
    """The mem-analytics system: each host touches footprint/hosts of the memory at random."""
    per_host_gib = p.pool_capacity_gib / p.hosts
    local_gib = p.local_mem_mib * MIB / GIB
    fam_hit = np.where(is_["swap"] | is_["tpp"], np.minimum(1.0, local_gib / per_host_gib), 0.0)
    fam = op_times(CACHELINE_B, 0.0, fam_hit, hw_obj_ns=rd["hw_line"], **common)
    access_ns = _select(choose, fam, "total")
    moved_b = _select(choose, fam, "bytes")
    local_bw = HOST_CHANNELS * paths_local_channel_gbps()
    cxl_link = link.cxl_mem_bw_gbps(p.cxl_gen, p.cxl_lanes)
    cxl_bw = np.minimum(cxl_link, pool["n_cxl_dev"] * cxl_link / p.hosts)
    nic = p.rdma_link_gbit_s / BITS_PER_BYTE
    rdma_bw = np.minimum(nic, pool["n_dev"] * nic / p.hosts)
    fabric_bw = np.where(is_["directcxl"], cxl_bw, rdma_bw)
    with np.errstate(divide="ignore", invalid="ignore"):
        host_bw = np.where(moved_b > 0, fabric_bw * CACHELINE_B / moved_b, local_bw)
    host = workload.host_server(local_gib)
    in_dimms = is_["local"] | is_["tpp"]
    return {
        "infeasible": {TOO_MUCH_LOCAL_DRAM: np.asarray(in_dimms & (per_host_gib > HOST_MAX_DRAM_GIB))},
        "access_latency_ns": access_ns,
        "host_bw_gbps": host_bw,
        "work_per_s": p.hosts * workload.mem_queries_per_s(access_ns, host_bw),
        "capex_usd": p.hosts * host["capex_usd"] + pool["capex"],
        "power_w": p.hosts * host["power_w"] + pool["power"],
    }

@per_calibration
def paths_local_channel_gbps() -> float:
    """Sustainable random-read bandwidth of one host DRAM channel (dram block, the ASIC
    platform's DDR4-3200)."""
    return float(dram.saturation_bw_gbps(paths.ASIC_DRAM_STANDARD, "random", 1.0))


def _chooser(code: np.ndarray | int, n: int):  # noqa: ANN202
    """A function picking ``arrays[code]`` per point (a gather from the concatenated arrays)."""
    c = np.asarray(code)
    if c.ndim == 0:
        k = int(c)
        return lambda arrays: np.broadcast_to(np.asarray(arrays[k], dtype=np.float64), (n,))
    flat = c * n + np.arange(n)
    return lambda arrays: np.concatenate([np.broadcast_to(np.asarray(a, dtype=np.float64), (n,)) for a in arrays]).take(flat)


def _where_needed(mask: np.ndarray | bool, n: int, fn, *args) -> np.ndarray:  # noqa: ANN001
    """``fn(*args)`` on the points of ``mask``, 0 elsewhere."""
    m = np.broadcast_to(np.asarray(mask), (n,))
    out = np.zeros(n)
    if m.any():
        out[m] = fn(*[np.broadcast_to(np.asarray(a, dtype=np.float64), (n,))[m] for a in args])
    return out


def evaluate_point(path: str, workload: str, *, consts: dict[str, float] | None = None, **params: object) -> dict[str, float]:
    """One design point with the fitted constants replaced by ``consts`` (for calibration.fit)."""
    return DirectCxl().point(path=path, workload=workload, **(consts or {}), **params)

