"""mhj: merge hash join (MHJ) for Spark SQL on CXL multi-host shared memory (SK hynix,
IEEE Micro 2025; digest shared/research/cxl-sql-join.md).

A query scans its tables, then joins a large probe table A with a smaller build table B.
The schemes differ in what they move (§2 items 1-3):

    SMJ  shuffle A and B (all-to-all), sort both sides, merge          Spark's default
         (a task's sorts spill sorted runs to node storage past its execution memory)
    SHJ  shuffle A and B, build a hash map per executor from its part of B, probe it
    MHJ  shuffle B only; every executor builds its map in shared CXL memory, the maps are
         merged by exchanging addresses, one cache flush (software coherence), then every
         executor probes the shared maps with its own, un-shuffled part of A

Below the 10 MB broadcast limit the Spark schemes use a broadcast hash join (BHJ: one map
copied to every executor); MHJ builds one shared map without copies.  Operator costs are
in spark.py, the hash-map phases in memory.py (a closed loop of cores against local DRAM
or a CXL device: clm, asic, fpga).  Cost per query: the cluster's node-hours (cost block
instance prices) plus the CXL pool's amortized bill of materials.

Common metrics (family ``mem-analytics``, ``_system``): the family's fixed query (not the
model's join) runs on the cluster's ``nodes`` hosts (the workload block's dual-socket server
each, with the article's 512 GB) over ``footprint_gib``: SMJ and SHJ keep it in the nodes'
local DRAM, MHJ in CXL pool devices of ``pool_capacity_gb`` each that every host reaches at the
pool's latency, sharing its bandwidth.  The join's own rate stays ``query_s``.
"""

from __future__ import annotations

import csv
import tomllib
from pathlib import Path

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import CACHELINE_B, GB, GIB, HOURS_PER_YEAR, MB, NS_PER_MS, NS_PER_S, S_PER_HOUR
from models.blocks import cost, workload
from models.mhj import memory, spark

HERE = Path(__file__).resolve().parent
SCHEMES = ("smj", "shj", "mhj")


def _table() -> dict[str, dict[str, str]]:
    with (HERE / "workloads.csv").open(newline="", encoding="utf-8") as f:
        return {r["query"]: r for r in csv.DictReader(line for line in f if not line.startswith("#"))}


WORKLOAD_TABLE = _table()
WORKLOADS = tuple(WORKLOAD_TABLE)
TPCDS = tuple(q for q, r in WORKLOAD_TABLE.items() if r["kind"] == "tpcds")
SYNTHETIC = tuple(q for q, r in WORKLOAD_TABLE.items() if r["kind"] == "synthetic")
_COLS = ("probe_mrows", "build_mrows", "small_joins", "scan_mrows", "scan_cols", "other_ops", "row_b")
_W = {c: {q: float(r[c]) for q, r in WORKLOAD_TABLE.items()} for c in _COLS}

FITTED = tomllib.loads((HERE / "fitted.toml").read_text(encoding="utf-8"))

#: Server of the article (§3: one socket, 64 cores, 512 GB DDR5) priced as cloud capacity:
#: 32 m7i.xlarge (4 vCPU, 16 GiB each) = 128 vCPU (64 cores) and 512 GiB (cost block).
NODE_INSTANCES = 32
NODE_USD_PER_HOUR = NODE_INSTANCES * cost.instance_price_usd_per_hour("m7i.xlarge", "on_demand")
#: Pool device bill of materials (§2 item 8): its DRAM, one CXL memory controller (an FPGA for
#: the prototype, priced as the ASIC controller for want of a price), and for shared memory a
#: CXL switch and two retimers (the 115 ns path of the ASIC estimate).
POOL_SWITCHES = {"clm": 0.0, "asic": 1.0, "fpga": 0.0}
POOL_RETIMERS = {"clm": 0.0, "asic": 2.0, "fpga": 0.0}
#: Assumption: a CXL pool device draws ~8 W for the controller (as the cxl-expander model)
#: plus ~3 W per 128 GB DIMM at light load (DDR5 RDIMM vendor power calculators).
POOL_CTRL_W = 8.0
POOL_W_PER_128GB = 3.0
#: Hash-map bytes per entry beyond the row: Spark's BytesToBytesMap keeps two 8 B words per
#: slot at a 0.5 load factor (assumption from its source layout).
MAP_ENTRY_B = 32.0


#: Infeasible points (``run_full``'s reasons).
CLM_NOT_SHARED = "CXL local memory (pool=clm) is one host's device: MHJ cannot share it across nodes"
MAP_OVER_POOL = "the MHJ hash map is larger than the CXL pool (pool_capacity_gb)"
SHJ_OVER_EXECUTOR = "an SHJ executor's share of the hash map is larger than its memory (executor_mem_gb)"
FOOTPRINT_OVER_NODES = "SMJ/SHJ: the nodes' share of footprint_gib is more local DRAM than a host takes (node_max_dram_gib)"


class Mhj(Model):
    name = "mhj"
    version = "1"
    summary = "Merge hash join on CXL shared memory vs Spark's shuffled hash join and sort-merge join"
    source = "'Improving SQL Join Algorithms for Distributed Systems: CXL Multihost Shared Memory', IEEE Micro 2025 (cxl-sql-join.md)"
    variant_param = "scheme"
    family = "mem-analytics"
    boundary = ("the cluster's hosts (a dual-socket server each with its local DRAM, grown to hold the footprint for "
                "SMJ/SHJ) plus, for MHJ, the CXL pool devices holding the footprint (DRAM, controller, switch and "
                "retimers of the ASIC estimate); the network between hosts is not priced")
    params = (
        Param("scheme", "mhj", "cxl-sql-join.md §1: SMJ (Spark default), SHJ, MHJ schemes", choices=SCHEMES),
        Param("pool", "clm", "§1: MHJ-CLM (CXL local memory, single node), MHJ-CSM (FPGA shared prototype), ASIC estimate",
              choices=memory.DEVICES, doc="CXL device that holds MHJ's hash maps"),
        Param("workload", "syn_store", "§5: three synthetic joins and TPC-DS SF1000 join-heavy queries (workloads.csv)", choices=WORKLOADS),
        Param("nodes", 1, "§3: one- and two-node clusters", bounds=(1, 8), integer=True),
        Param("executors_per_node", 16, "§3: 16 executors per node (16 and 32 on one and two nodes)", bounds=(1, 64), integer=True),
        Param("cores_per_executor", 4, "§3: four cores per executor", bounds=(1, 16), integer=True),
        Param("executor_mem_gb", 20.0, "§3: 20 GB per executor", bounds=(1.0, 512.0)),
        Param("net_gbit_s", 100.0, "assumption: 100 GbE between the servers (§7: the article gives no NIC)", bounds=(1.0, 800.0)),
        Param("shuffle_storage_gbps", FITTED["shuffle_storage_gbps"]["value"], FITTED["shuffle_storage_gbps"]["source"],
              bounds=(0.05, 100.0), doc="per node: input files read, shuffle files written and read back (§7: unstated)"),
        Param("shuffle_cpu_ns_per_b", 2.0, "assumption: serialization + LZ4 at ~500 MB/s per core (LZ4 reference speed class)",
              bounds=(0.0, 100.0)),
        Param("parquet_b_per_value", 3.0, "assumption: TPC-DS SF1000 fact tables in Parquet + Snappy take ~2-3 B per value",
              bounds=(0.1, 64.0)),
        Param("scan_ns_per_row", 50.0, "assumption: vectorized Parquet decode of a few columns, ~20 M rows/s per core", bounds=(0.0, 1000.0)),
        Param("hash_cpu_ns", 30.0, "assumption: hashing + compare + copy of one row in Spark's generated join code", bounds=(0.0, 1000.0),
              doc="CPU per build or probe row, memory stalls excluded"),
        Param("probe_lines", 2.0, "assumption: BytesToBytesMap probe = one miss in the slot array + one in the record page",
              bounds=(0.5, 8.0)),
        Param("build_lines", 2.0, "assumption: one slot-array miss + one record write per insert", bounds=(0.5, 8.0)),
        Param("mlp", 2.0, "assumption: an out-of-order core overlaps the misses of ~2 rows of row-at-a-time join code",
              bounds=(0.5, 16.0), doc="rows in flight per core"),
        Param("other_ns_per_row", FITTED["other_ns_per_row"]["value"], FITTED["other_ns_per_row"]["source"],
              bounds=(0.0, 1e5), doc="non-join work of a TPC-DS plan per scanned row, per core"),
        Param("sort_ns_per_compare", 20.0, "assumption: most compares end on the cached 8 B key prefix (~5 ns); composite "
              "keys tie there and dereference records, a DRAM miss (~100 ns) each", bounds=(0.0, 1000.0)),
        Param("shuffle_partitions", 200, "Spark default spark.sql.shuffle.partitions", bounds=(1, 100000), integer=True),
        Param("spark_memory_fraction", 0.6, "Spark default spark.memory.fraction (unified execution + storage share of the "
              "heap above 300 MiB)", bounds=(0.05, 0.95), doc="bounds SMJ's sort buffers per task; past it the sort spills"),
        Param("sort_ptr_b_per_row", spark.SORT_PTR_B_TIMSORT, "Spark 3.4 UnsafeInMemorySorter: a (pointer, prefix) pair per "
              "record plus TimSort's half-size buffer = 24 B (radix sort of a one-column key: 32 B); the join keys here are "
              "composite (ticket/order, item)", bounds=(16.0, 64.0), doc="sort-buffer bytes per record besides the row"),
        Param("skew_x", 1.0, "assumption: TPC-DS join keys are close to uniform (dsdgen); raise to study skew (§2 item 7)",
              bounds=(1.0, 1000.0), doc="largest shuffle partition over the mean"),
        Param("flush_ms", 50.0, "§3: flushing the whole cache takes ~50 ms (L2323); once per host per join (§7 default)",
              bounds=(0.0, 1000.0)),
        Param("bhj_threshold_mb", 10.0, "§3: Spark allows BHJ below 10 MB (L2277); also MHJ's parallel-build cutoff",
              bounds=(0.0, 10000.0)),
        Param("bcast_fixed_s", 0.2, "assumption: building a small table's map is its own Spark job (collect, build): ~0.2 s",
              bounds=(0.0, 10.0)),
        Param("copy_ns_per_b", 1.0, "assumption: ~1 GB/s to serialize, send and deserialize one copy of a broadcast map",
              bounds=(0.0, 100.0)),
        Param("small_map_mb", 2.0, "assumption: a filtered dimension table's map (date, store, item subsets) is a few MB",
              bounds=(0.0, 10000.0)),
        Param("pool_capacity_gb", 512.0, "§3: 512 GB pool of four 128 GB DIMMs (L2327)", bounds=(16.0, 65536.0)),
        Param("node_usd_per_hour", NODE_USD_PER_HOUR, "cost block: 32 x m7i.xlarge on demand (= 64 cores, 512 GiB)",
              bounds=(0.0, 1000.0)),
        Param("dram_usd_per_gib", cost.component_price("dram_ddr5").value, "cost block: dram_ddr5", bounds=(0.0, 100.0)),
        Param("amortize_years", 5.0, "assumption: five-year server life", bounds=(0.5, 10.0)),
        *knob_params("mem-analytics"),
        Param("node_dram_gib", 512.0 * GB / GIB, "§3: 512 GB of DDR5 per node (16 DIMMs)", bounds=(16.0, 16384.0),
              doc="local DRAM of each host (common metrics; SMJ/SHJ grow it to hold their share of the footprint)"),
        Param("node_max_dram_gib", workload.HOST_MAX_DRAM_GIB, "workload block: a dual-socket host with 32 DIMM slots of 128 GiB RDIMMs",
              bounds=(16.0, 65536.0), doc="most local DRAM a host takes (common metrics)"),
    )
    metrics = (
        Metric("query_s", "min", "end-to-end query time"),
        Metric("speedup_vs_shj_x", "max", "SHJ scheme's time over this scheme's (same cluster)"),
        Metric("speedup_vs_smj_x", "max", "SMJ scheme's time over this scheme's"),
        Metric("scan_s", None, "reading the inputs and the plan's non-join work (every scheme)"),
        Metric("shuffle_s", "min", "repartitioning"),
        Metric("join_s", "min", "build + probe (or sort + merge), broadcasts and flush"),
        Metric("shuffle_gb", "min", "bytes repartitioned"),
        Metric("spill_gb", "min", "sorted runs SMJ spills to local storage (written once, read once)"),
        Metric("hashmap_gb", "min", "memory held by hash maps (BHJ: one copy per executor)"),
        Metric("pool_latency_ns", None, "idle load latency of the hash-map device (MHJ) or local DRAM (others)"),
        Metric("pool_util_frac", None, "pool bandwidth utilization while MHJ probes"),
        Metric("pool_wait_ns", None, "M/D/1 queueing per line at the pool while MHJ probes"),
        Metric("pool_time_frac", None, "share of the query MHJ spends in hash-map phases on the pool"),
        Metric("pool_usd", "min", "CXL pool bill of materials (MHJ only)"),
        Metric("usd_per_hour", "min", "cluster node-hours + amortized pool + its energy"),
        Metric("usd_per_query", "min", "cost of one query"),
        Metric("access_latency_ns", "min", "latency of one access of the family query (pool or local DRAM, idle)"),
        Metric("pool_devices_count", "min", "CXL pool devices holding footprint_gib (MHJ; 0 otherwise)"),
        Metric("system_bw_gbps", "max", "memory bandwidth the family query shares (the pool's, or the nodes' DRAM)"),
    )

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        w = {c: p.pick("workload", _W[c]) for c in _COLS}
        j = _join_shape(p, w)
        nodes, executors, small, map_b, b_b = j["nodes"], j["executors"], j["small"], j["map_b"], j["b_b"]
        scan, bhj_small = _scan_and_small_joins(p, w, j)
        local = _local_hash_phases(p, j)
        spark_join = _spark_joins(p, w, j, local)
        shuffled, spill_b = spark_join["shuffled"], spark_join["spill_b"]
        shuffle_both, shj_join, smj_join = spark_join["shuffle_both"], spark_join["shj_join"], spark_join["smj_join"]
        t_shj = scan + shuffle_both + shj_join + bhj_small
        t_smj = scan + shuffle_both + smj_join + bhj_small
        mhj = _merge_hash_join(p, w, j)
        pool_ns, pool_read = mhj["pool_ns"], mhj["pool_read"]
        t_mhj = scan + mhj["shuffle_b"] + mhj["join"]

        # --- this point's scheme; infeasible combinations are NaN
        is_mhj, is_shj = p.is_("scheme", "mhj"), p.is_("scheme", "shj")
        t = np.where(is_mhj, t_mhj, np.where(is_shj, t_shj, t_smj))
        nan, infeasible = _feasibility(p, j, is_mhj, is_shj)

        # --- cost: node-hours for everyone; MHJ also pays for its pool device
        pool_usd, pool_w = _pool_bill(p)
        system = _system(p, is_mhj, pool_ns, pool_read, pool_usd, pool_w)
        # amortized capex + energy (cost block defaults: PUE 1.58, 0.127 $/kWh)
        pool_usd_year = cost.tco_usd_per_year(pool_usd, pool_w, p.amortize_years)
        pool_usd = np.where(is_mhj, pool_usd, 0.0)
        usd_per_hour = nodes * p.node_usd_per_hour + np.where(is_mhj, pool_usd_year / HOURS_PER_YEAR, 0.0)
        query_s = t / NS_PER_S * nan
        shuffle_ns_here = np.where(is_mhj, mhj["shuffle_b"], shuffle_both)
        join_ns = np.where(is_mhj, mhj["join"], np.where(is_shj, shj_join, smj_join) + bhj_small)
        # memory held by hash maps: MHJ one copy of everything (pool); BHJ one copy per
        # executor; SHJ the main map spread over the executors; SMJ sorts instead
        dims_b = w["small_joins"] * j["small_b"]
        main_b = np.where(small, executors * map_b, np.where(is_shj, map_b, 0.0))
        hashmap_b = np.where(is_mhj, map_b + dims_b, main_b + executors * dims_b)
        infeasible.update(system.pop("infeasible"))
        return {
            **system,
            "infeasible": infeasible,
            "query_s": query_s,
            "speedup_vs_shj_x": t_shj / t * nan,
            "speedup_vs_smj_x": t_smj / t * nan,
            "scan_s": scan / NS_PER_S,
            "shuffle_s": shuffle_ns_here / NS_PER_S * nan,
            "join_s": join_ns / NS_PER_S * nan,
            "shuffle_gb": np.where(is_mhj, np.where(small, 0.0, b_b), shuffled) / GB,
            "spill_gb": np.where(is_mhj | is_shj, 0.0, spill_b) / GB,
            "hashmap_gb": hashmap_b / GB,
            "pool_latency_ns": np.where(is_mhj, pool_ns, memory.local_memory()["ns"]),
            "pool_util_frac": np.where(is_mhj, np.minimum(mhj["lam"] * CACHELINE_B / pool_read, 1.0), 0.0),
            "pool_wait_ns": np.where(is_mhj, mhj["wait"], 0.0),
            "pool_time_frac": np.where(is_mhj, (mhj["build_pool"] + mhj["probe_pool"]) / t_mhj, 0.0),
            "pool_usd": pool_usd,
            "usd_per_hour": usd_per_hour * nan,
            "usd_per_query": usd_per_hour * query_s / S_PER_HOUR,
        }


# ----------------------------------------------------------------------------- stages of evaluate
#: Named columns one stage hands to the next.
Cols = dict[str, np.ndarray]


def _join_shape(p: Batch, w: Cols) -> Cols:
    """The cluster's executors and cores, the join's rows, bytes and map size, and its skew stretch (§2)."""
    nodes = p.nodes
    executors = nodes * p.executors_per_node
    cores = executors * p.cores_per_executor
    a_rows, b_rows = w["probe_mrows"] * MB, w["build_mrows"] * MB  # millions of rows -> rows
    small_b = p.small_map_mb * MB
    # skew: a partitioned stage ends with its largest partition (§2 item 7); MHJ's probe
    # side is not partitioned, so only its build stretches
    return {
        "nodes": nodes, "executors": executors, "cores": cores, "node_cores": p.executors_per_node * p.cores_per_executor,
        "a_rows": a_rows, "b_rows": b_rows, "a_b": a_rows * w["row_b"], "b_b": b_rows * w["row_b"],
        "map_b": b_rows * (w["row_b"] + MAP_ENTRY_B),
        "small": b_rows * w["row_b"] < p.bhj_threshold_mb * MB,  # Spark broadcasts the build side
        "small_b": small_b, "small_rows": small_b / w["row_b"],
        "stretch": np.maximum(1.0, p.skew_x * cores / p.shuffle_partitions),
    }


def _shuffle_ns(p: Batch, j: Cols, x: np.ndarray) -> np.ndarray:
    """Time to shuffle ``x`` bytes all-to-all over the cluster (spark.py)."""
    return spark.shuffle_ns(x, j["cores"], j["nodes"], p.shuffle_cpu_ns_per_b, p.shuffle_storage_gbps, p.net_gbit_s)


def _scan_and_small_joins(p: Batch, w: Cols, j: Cols) -> tuple[np.ndarray, np.ndarray]:
    """Every scheme: the scan, the rest of the plan, and the broadcast joins with small dimension tables."""
    cores = j["cores"]
    scan = spark.scan_ns(w["scan_mrows"] * MB, w["scan_cols"], p.parquet_b_per_value, p.scan_ns_per_row, cores, j["nodes"],
                         p.shuffle_storage_gbps)
    # the rest of a TPC-DS plan (aggregation exchanges, sorts, projections), per scanned row
    scan = scan + w["other_ops"] * w["scan_mrows"] * MB * p.other_ns_per_row / cores
    bhj_small = w["small_joins"] * spark.map_job_ns(j["small_b"], j["executors"], p.bcast_fixed_s, p.copy_ns_per_b,
                                                    j["small_rows"] * p.hash_cpu_ns)
    return scan, bhj_small


def _local_phase_ns(p: Batch, j: Cols, rows: np.ndarray, lines: np.ndarray, mix: bool, node_map_b: np.ndarray) -> np.ndarray:
    """One hash-map phase of each node's cores on its own DRAM, the map's LLC-resident share hitting (memory.py)."""
    bw = memory.local_memory()["mix_gbps"] if mix else memory.local_memory()["read_gbps"]
    hit = memory.llc_hit_frac(node_map_b, 1.0, memory.LLC_MB * MB)
    return memory.phase_ns(rows / j["nodes"], lines, p.hash_cpu_ns, j["node_cores"], p.mlp, memory.local_memory()["ns"], bw,
                           hit, memory.LLC_NS)[0]


def _local_hash_phases(p: Batch, j: Cols) -> Cols:
    """Local hash-map phases (SHJ, BHJ probe): the build and the probe on each node's DRAM."""
    small, stretch = j["small"], j["stretch"]
    # SHJ: a node holds its partitions of the map; BHJ: every executor its own copy; a map
    # small enough stays in the LLC (BHJ: one copy per executor of the node)
    node_map_b = np.where(small, p.executors_per_node * j["map_b"], j["map_b"] / j["nodes"])
    probe_local = _local_phase_ns(p, j, j["a_rows"], p.probe_lines, False, node_map_b) * np.where(small, 1.0, stretch)
    build_local = _local_phase_ns(p, j, j["b_rows"], p.build_lines, True, node_map_b) * stretch
    return {"probe": probe_local, "build": build_local}


def _spark_joins(p: Batch, w: Cols, j: Cols, local: Cols) -> Cols:
    """SHJ / SMJ: shuffle both sides (or broadcast a small build side), then hash-join or sort-merge (§2 items 1-2)."""
    small, a_rows, b_rows, cores = j["small"], j["a_rows"], j["b_rows"], j["cores"]
    shuffled = np.where(small, 0.0, j["a_b"] + j["b_b"])
    shuffle_both = _shuffle_ns(p, j, shuffled)
    bhj_main = spark.map_job_ns(j["map_b"], j["executors"], p.bcast_fixed_s, p.copy_ns_per_b, b_rows * p.hash_cpu_ns)
    shj_join = np.where(small, bhj_main, local["build"]) + local["probe"]
    sort = spark.sort_ns(a_rows, p.shuffle_partitions, p.sort_ns_per_compare, cores) + spark.sort_ns(
        b_rows, p.shuffle_partitions, p.sort_ns_per_compare, cores
    )
    merge = (a_rows + b_rows) * p.hash_cpu_ns / cores
    # a task sorts both sides of its partition, and both sorted buffers are held until the
    # merge has read them: past the task's execution memory the sorts spill sorted runs
    task_mem_b = spark.task_execution_memory_b(p.executor_mem_gb * GB, p.cores_per_executor, p.spark_memory_fraction)
    spilled_rows, _runs = spark.sort_spill((a_rows + b_rows) / p.shuffle_partitions, w["row_b"], task_mem_b,
                                           p.sort_ptr_b_per_row)
    spill_b = np.where(small, 0.0, p.shuffle_partitions * spilled_rows * (w["row_b"] + spark.SPILL_RECORD_OVERHEAD_B))
    spill = spark.spill_ns(spill_b, cores, j["nodes"], p.shuffle_cpu_ns_per_b, p.shuffle_storage_gbps)
    smj_join = np.where(small, bhj_main + local["probe"], (sort + merge + spill) * j["stretch"])
    return {"shuffled": shuffled, "shuffle_both": shuffle_both, "shj_join": shj_join, "smj_join": smj_join,
            "spill_b": spill_b}


def _merge_hash_join(p: Batch, w: Cols, j: Cols) -> Cols:
    """MHJ (§2 item 3): shuffle B only, build in the pool in parallel, flush, probe the pool in place."""
    small, cores, stretch = j["small"], j["cores"], j["stretch"]
    pool_ns = p.pick("pool", memory.DEVICE_NS)
    pool_read = p.pick("pool", memory.DEVICE_READ_GBPS)
    pool_mix = p.pick("pool", memory.DEVICE_MIX_GBPS)
    build_cores = np.where(small, 1.0, cores)  # below the cutoff one executor core builds
    build_pool = memory.phase_ns(j["b_rows"], p.build_lines, p.hash_cpu_ns, build_cores, p.mlp, pool_ns, pool_mix)[0]
    build_pool = build_pool * np.where(small, 1.0, stretch)
    # one shared map: each node's LLC can hold it whole when it is small
    pool_hit = memory.llc_hit_frac(j["map_b"], 1.0, memory.LLC_MB * MB * j["nodes"])
    probe_pool, wait, lam = memory.phase_ns(j["a_rows"], p.probe_lines, p.hash_cpu_ns, cores, p.mlp, pool_ns, pool_read,
                                            pool_hit, memory.LLC_NS)
    flush = p.flush_ms * NS_PER_MS
    shuffle_b = _shuffle_ns(p, j, np.where(small, 0.0, j["b_b"]))
    # small dimension maps: the same job builds each once in the pool, without copies
    mhj_small = w["small_joins"] * spark.map_job_ns(j["small_b"], 0.0, p.bcast_fixed_s, p.copy_ns_per_b,
                                                    j["small_rows"] * (p.hash_cpu_ns + p.build_lines * pool_ns / p.mlp))
    mhj_main_job = np.where(small, spark.map_job_ns(j["map_b"], 0.0, p.bcast_fixed_s, p.copy_ns_per_b, 0.0), 0.0)
    mhj_join = build_pool + flush + probe_pool + mhj_small + mhj_main_job
    return {"pool_ns": pool_ns, "pool_read": pool_read, "build_pool": build_pool, "probe_pool": probe_pool, "wait": wait,
            "lam": lam, "shuffle_b": shuffle_b, "join": mhj_join}


def _feasibility(p: Batch, j: Cols, is_mhj: np.ndarray, is_shj: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Where the scheme cannot run: MHJ's map must fit the pool, SHJ's per-executor part the executor (NaN mask, reasons)."""
    small, map_b, executors, nodes = j["small"], j["map_b"], j["executors"], j["nodes"]
    fits = np.where(is_mhj, map_b <= p.pool_capacity_gb * GB, ~(is_shj & ~small) | (map_b / executors <= p.executor_mem_gb * GB))
    one_host_device = p.is_("pool", "clm") & (nodes > 1)  # CXL local memory is not shareable
    nan = np.where(fits & ~(is_mhj & one_host_device), 1.0, np.nan)
    return nan, {
        CLM_NOT_SHARED: np.asarray(is_mhj & one_host_device),
        MAP_OVER_POOL: np.asarray(is_mhj & (map_b > p.pool_capacity_gb * GB)),
        SHJ_OVER_EXECUTOR: np.asarray(is_shj & ~small & (map_b / executors > p.executor_mem_gb * GB)),
    }


def _pool_bill(p: Batch) -> tuple[np.ndarray, np.ndarray]:
    """The CXL pool device's bill of materials and power: DRAM, controller, switches, retimers."""
    pool_gib = p.pool_capacity_gb * GB / GIB
    pool_usd = (
        pool_gib * p.dram_usd_per_gib
        + cost.component_price("cxl_memory_controller").value
        + p.pick("pool", POOL_SWITCHES) * cost.component_price("cxl_switch").value
        + p.pick("pool", POOL_RETIMERS) * cost.component_price("pcie5_retimer").value
    )
    return pool_usd, POOL_CTRL_W + POOL_W_PER_128GB * p.pool_capacity_gb / 128.0


def _system(p: Batch, is_mhj, pool_ns, pool_read_gbps, device_usd, device_w) -> dict[str, np.ndarray]:
    """The mem-analytics system: ``nodes`` hosts run the family query over ``footprint_gib``,
    in their local DRAM (SMJ, SHJ) or in CXL pool devices they share (MHJ)."""
    fp_gib = np.asarray(p.footprint_gib, dtype=np.float64)
    nodes = np.asarray(p.nodes, dtype=np.float64)
    local = memory.local_memory()
    devices = np.where(is_mhj, np.ceil(fp_gib * GIB / (p.pool_capacity_gb * GB) - 1e-9), 0.0)
    access_ns = np.where(is_mhj, pool_ns, local["ns"])
    bw = np.where(is_mhj, devices * pool_read_gbps, nodes * local["read_gbps"])
    # SMJ / SHJ hold their share of the footprint in each node's DRAM
    node_gib = np.where(is_mhj, p.node_dram_gib, np.maximum(p.node_dram_gib, fp_gib / nodes))
    too_big = np.asarray(node_gib > p.node_max_dram_gib)
    capex = nodes * (workload.host_server(0.0)["capex_usd"] + node_gib * p.dram_usd_per_gib) + devices * device_usd
    power = nodes * workload.host_server(node_gib)["power_w"] + devices * device_w
    return {
        "infeasible": {FOOTPRINT_OVER_NODES: too_big},
        "access_latency_ns": access_ns,
        "pool_devices_count": devices,
        "system_bw_gbps": bw,
        "work_per_s": workload.mem_queries_per_s(access_ns, bw, threads=nodes * workload.THREADS),
        "capex_usd": capex,
        "power_w": power,
    }
