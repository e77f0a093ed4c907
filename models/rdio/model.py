"""rdio: MinIO vs MinRdIO, remote file access with decoupled metadata and data paths.

The cluster (nvmeof-objstore.md §1): ``nodes`` compute nodes (one of them the gateway
the client talks to) and one storage node whose SSDs are the compute nodes' volumes over
NVMe-oF; all on one InfiniBand fabric.  Per object request (``requests.py``):

    client --HTTP--> gateway: read/write xl.meta, read/write k (+ r) shards
      MinIO:   remote shards through an RPC to their owner node (NVMe-oF + TCP: two transfers)
      MinRdIO: remote shards straight from the volume (NVMe-oF: one transfer), block map
               from the FileMap cache (miss: fallocate/fiemap RPC to the owner)

``threads`` clients loop over requests; throughput is the closed loop over the
stations each request visits (``closed_loop.py``): gateway CPU, the other nodes' CPUs,
the gateway's and the storage node's NIC, the gateway's NVMe-oF initiator, the SSDs.
With the article's one request-receiving node, its CPU is what bounds both systems for
objects up to ~1 MB (MinIO's storage-REST calls and the TCP receive of the remote shards
are what MinRdIO saves); above, MinRdIO's single NVMe-oF initiator.  Deferred parity runs
in the background on the capacity the requests leave idle (M9).

Calibration (``calibration.py``): the software costs without a public value -- CPU per MinIO
storage-REST call, per RdIO block-map call, per byte of TCP, per byte of Reed-Solomon and
of PUT body hashing, and the calls' waits -- are each fitted to one ratio of the article
(the FileMap-cache gain, the 16 MB crossover, MinIO's failure drop, the write CPU saving,
the PUT breakdown; the read CPU saving, which makes ``cpu_read`` an anchor); the rest are
stated assumptions, and the other claims are predictions.  See each parameter's source.

System (kv-object family): an object GET or PUT is the family's operation; the boundary is
the whole cluster the model already prices (compute nodes, storage node, NIC + switch port
per node, SSDs).  The object size is ``object_kb`` (the article's, KiB) unless
``size_from = "value_b"``, when the family knob ``value_b`` (bytes) sets it.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import GB, HOURS_PER_YEAR, KIB, NS_PER_US, US_PER_S
from models.blocks import cache, cost, link
from models.blocks.cost import component_price
from models.rdio import closed_loop, paths, requests

HERE = Path(__file__).resolve().parent
SYSTEMS = ("minio", "minrdio", "minrdio_fmc", "optimal")


def _table(name: str) -> list[dict[str, str]]:
    with (HERE / name).open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


_WORKLOADS = {r["workload"]: float(r["read_frac"]) for r in _table("workloads.csv")}
WORKLOADS = tuple(_WORKLOADS)
_PRICES = {r["item"]: float(r["usd_per_unit"]) for r in _table("prices.csv")}

# ----------------------------------------------------------------------------- constants
#: Hyper-threading throughput gain per core.  Assumption: ~20% (Intel's usual figure for
#: server workloads); the paper's nodes run with HT on (L782).
HT_GAIN = 1.2
#: Usable share of the fabric's line rate for payload (FDR signals 14.0625 Gb/s per lane
#: with 64b/66b coding: 56 Gb/s nominal carries 54.5 Gb/s).  Source: IBTA FDR spec.
FDR_CODING = 64.0 / 66.0
#: SSD DRAM per TB of NAND (GiB) for the drive BOM.  Assumption: 1 GiB per TiB FTL ratio.
SSD_DRAM_GIB_PER_TB = 1.0
#: Service life for TCO.  Assumption: 5-year server depreciation.
LIFE_YEARS = 5.0
BYTES_PER_GB = GB
GB_PER_TB = 1000.0
OPS_PER_KIOPS = 1000.0


#: The per-request quantities reported after the closed loop (the rest feed only the stations).
PER_OP_KEYS = ("cpu_gw_us", "cpu_own_us", "storage_b", "compute_b")


#: Infeasible points (``run_full``'s reasons).
NO_DATA_DRIVES = "parity_count leaves no data drive (nodes x vols_per_node - parity_count < 1)"
OPTIMAL_WRITES = "system=optimal mounts the other nodes' volumes read-only: it serves reads only"
GATEWAYS_DOWN = "more gateways than live nodes (gateways > nodes - failed_nodes)"


class RdIO(Model):
    name = "rdio"
    version = "1"
    summary = "NVMe-oF object store: MinIO's RPC data path vs MinRdIO's direct remote I/O (RdIO)"
    source = "Han et al., IEEE Micro 2025 (DOI 10.1109/MM.2025.3564477), digest shared/research/nvmeof-objstore.md"
    variant_param = "system"
    family = "kv-object"
    family_fixed = {"size_from": "value_b"}
    boundary = (
        "the whole cluster: the compute nodes (one or more gateways), the storage node, a NIC and a switch port per node "
        "(priced per Gb/s) and the NVMe SSDs; power: every node under load plus the SSDs"
    )
    params = (
        Param("system", "minrdio", "nvmeof-objstore.md §1: MinIO, MinRdIO, MinRdIO-FMC (no FileMap cache), Optimal (L786, L827)",
              choices=SYSTEMS),
        Param("workload", "get", "nvmeof-objstore.md §5: REST GET/PUT microbenchmarks and YCSB (workloads.csv)", choices=WORKLOADS),
        Param("object_kb", 1024.0, "nvmeof-objstore.md §3: 1024 kB objects for the CPU and traffic runs (L792)",
              bounds=(4.0, 1048576.0), doc="object size (KiB)"),
        *knob_params("kv-object"),
        Param("size_from", "object_kb",
              "assumption: the article's object_kb wins unless a family comparison selects the family knob value_b",
              choices=("object_kb", "value_b"), doc="which parameter sets the object size"),
        Param("threads", 40, "nvmeof-objstore.md §3: 40 client threads (L790)", bounds=(1, 1024), integer=True),
        Param("gateways", 1,
              "nvmeof-objstore.md §3: the client talks to one request-receiving node (L835); a load-balanced deployment spreads requests over several",
              bounds=(1, 16), integer=True, doc="compute nodes that receive client requests (evenly)"),
        Param("nodes", 4, "nvmeof-objstore.md §3: four compute nodes (L782)", bounds=(2, 16), integer=True),
        Param("vols_per_node", 2, "nvmeof-objstore.md §3: two NVMe volumes per compute node (L784)", bounds=(1, 4), integer=True),
        Param("parity_count", 2, "nvmeof-objstore.md §3: EC (6, 2) over the 8 volumes (L784); data shards = volumes - parity",
              bounds=(1, 4), integer=True),
        Param("link_gbit_s", 56.0, "nvmeof-objstore.md §3: 56 Gb/s ConnectX-4 InfiniBand on every node (L782)", bounds=(10.0, 800.0)),
        Param("transport", "rdma", "nvmeof-objstore.md §7 ambiguity 1: NVMe-oF over RDMA assumed", choices=link.NVMEOF_TRANSPORTS),
        Param("cores_per_node", 20, "nvmeof-objstore.md §3: two 10-core Xeon Gold 5115 per compute node (L782)",
              bounds=(2, 256), integer=True),
        Param("cache_ratio_frac", 1.0, "nvmeof-objstore.md §3: the FileMap cache holds every object (4 M entries, warmed, L786)",
              bounds=(0.0, 1.0), doc="FileMap cache entries / objects"),
        Param("zipf_alpha", 0.99, "nvmeof-objstore.md §7 ambiguity 10: YCSB's default Zipf constant", bounds=(0.0, 1.5),
              doc="popularity skew of the objects (for the FileMap hit rate)"),
        Param("dataset_gb", 40.0, "nvmeof-objstore.md §3: 40 GB microbenchmark datasets (L792)", bounds=(1.0, 1e6)),
        Param("failed_nodes", 0, "nvmeof-objstore.md §3: the resilience run kills one non-gateway compute node (L835)",
              choices=(0, 1)),
        Param("parity_mode", "vanilla", "nvmeof-objstore.md §2 M9: vanilla (synchronous) or deferred parity", choices=("vanilla", "deferred")),
        Param("parity_background", "idle",
              "assumption: the asynchronous parity encoder (M9, L774) gets only the capacity the requests leave idle, so a saturated "
              "run leaves its parity for after the run; 'shared': it competes with the requests (steady state)",
              choices=("idle", "shared"), doc="how deferred parity work shares the cluster with the requests"),
        # --- software constants: CPU per operation and the waits the RPCs add.  Five are fitted
        # (calibration.py) to secondary observations of the article, one anchored on cpu_read;
        # the rest are stated assumptions
        Param("req_cpu_us", 700.0,
              "assumption: MinIO's S3 handler per request beyond data and internode calls (SigV4 HMAC-SHA256, header parsing, "
              "xl.meta decode of every disk's copy, object-layer bookkeeping, Go allocation/GC), ~0.7 ms of a 2.4 GHz core",
              bounds=(0.0, 10000.0), doc="gateway CPU per S3 request beyond the data movement and the internode calls"),
        Param("rpc_cpu_us", 53.69, "fitted (calibration.py): anchored on 37% less read CPU (L808, headline cpu_read)", bounds=(0.0, 1000.0),
              doc="CPU per MinIO storage-REST call (xl.meta, shard stream, lock) at each end"),
        Param("rpc_wait_us", 0.0, "fitted (calibration.py) to WriteBlocks 85% shorter in MinRdIO (digest §2 M3) and 'double transfer doubles the I/O latency' (L644)",
              bounds=(0.0, 5000.0), doc="MinIO storage-REST call latency beyond its CPU at both ends (scheduling, handler waits)"),
        Param("map_rpc_cpu_us", 23.84, "fitted (calibration.py) to MinRdIO 23% faster than MinRdIO-FMC at the smallest objects (L796)",
              bounds=(0.0, 1000.0), doc="CPU per RdIO metadata-plane call (block map, remote fdatasync) at each end"),
        Param("map_rpc_wait_us", 0.0, "assumption: RdIO's metadata call waits on nothing beyond its CPU and the owner's file system",
              bounds=(0.0, 5000.0), doc="RdIO metadata-plane call latency beyond its CPU at both ends"),
        Param("http_sw_us", 50.0, "assumption: S3 front-end waits beyond its CPU and the lock round (goroutine hand-offs, response flush), ~50 us",
              bounds=(0.0, 10000.0), doc="S3 front-end latency per request beyond its CPU and the namespace lock"),
        Param("io_cpu_us", paths.HOST_STACK_NS / NS_PER_US,
              "link block: kernel NVMe stack submit + complete + interrupt (kernel_irq, interrupt completion)",
              bounds=(0.0, 100.0), doc="CPU per NVMe-oF I/O at the issuing host"),
        Param("tcp_cpu_per_kib_us", 1.932,
              "fitted (calibration.py) to MinRdIO falling behind MinIO at 16 MB objects (L798): MinIO's TCP over IPoIB per byte",
              bounds=(0.0, 10.0), doc="CPU per KiB sent or received over kernel TCP (IPoIB) incl. Go's HTTP copies, per end"),
        Param("hash_cpu_per_kib_us", 0.5,
              "assumption: HighwayHash bitrot check (~10 GB/s/core, MinIO docs) + about three buffer copies (~6 GB/s each) per byte",
              bounds=(0.0, 10.0), doc="gateway CPU per KiB of shard read or written (bitrot hash, buffer copies)"),
        Param("ec_cpu_per_kib_input_us", 0.2516,
              "fitted (calibration.py) to MinIO's 7% lower GET throughput with a failed node (L839), at (6, 2)",
              bounds=(0.0, 2.0),
              doc="Reed-Solomon CPU per KiB of parity computed or of data rebuilt, per input shard: every output byte "
                  "combines k inputs (k x r multiply-adds per stripe byte), so an output KiB costs k times this"),
        Param("put_hash_cpu_per_kib_us", 11.22, "fitted (calibration.py) to 12% less write CPU (L808)", bounds=(0.0, 40.0),
              doc="gateway CPU per KiB of PUT body beyond TCP and the shards (content hashes: MD5 ETag, SigV4 payload SHA-256; copies)"),
        Param("fs_meta_us", 10.0, "assumption: XFS fallocate + fiemap served from the in-memory inode (L712: no disk I/O)",
              bounds=(0.0, 1000.0), doc="owner-node file-system time of a block-map request"),
        Param("fs_create_us", 50.0, "assumption: XFS create + fallocate + close of a shard file with the journal in memory, tens of us",
              bounds=(0.0, 5000.0), doc="owner-node time and CPU to create (and allocate) one shard file"),
        Param("initiator_gbps", 6.1,
              "assumption: one host's NVMe-oF/RDMA reads reach ~90% of the FDR port's 6.8 GB/s payload rate (per-I/O capsules and "
              "memory registration on one initiator); below the port rate, as MinRdIO's >16 MB deficit needs (L798)",
              bounds=(0.5, 100.0), doc="NVMe-oF data rate one host can issue"),
        Param("ssd_capacity_tb", 3.84, "assumption: PM983 3.84 TB, the capacity class the datasheet figures refer to",
              bounds=(0.48, 30.72)),
    )
    metrics = (
        Metric("throughput_kiops", "max", "object requests per second at the given threads, thousands"),
        Metric("throughput_gbps", "max", "object bytes per second at the given threads"),
        Metric("latency_us", "min", "mean request latency at the given threads"),
        Metric("unloaded_latency_us", "min", "latency of one request alone (one thread)"),
        Metric("storage_phase_us", "min", "one thread: ReadMeta + ReadParts (GET) or WriteBlocks (PUT), mix-weighted"),
        Metric("commit_us", "min", "one thread: PUT commit phase"),
        Metric("encode_us", "min", "one thread: PUT encode phase on the critical path"),
        Metric("cpu_per_op_us", "min", "CPU time per request over all compute nodes"),
        Metric("gateway_cpu_per_op_us", "min", "CPU time per request on the gateway"),
        Metric("network_per_op_b", "min", "bytes per request on the compute and storage networks (client traffic excluded)"),
        Metric("storage_net_per_op_b", "min", "NVMe-oF bytes per request"),
        Metric("compute_net_per_op_b", "min", "internode TCP bytes per request"),
        Metric("filemap_hit_frac", "max", "FileMap cache hit rate (MinRdIO)"),
        Metric("parity_in_run_frac", None, "share of the parity written while the requests run (1 unless deferred to idle capacity)"),
        Metric("cores_busy_count", None, "CPU cores busy at the throughput reached"),
        Metric("block_rpc_read_us", "min", "unloaded read of one remote shard block through the owner's storage-REST call (MinIO's path, M1)"),
        Metric("block_direct_read_us", "min", "unloaded read of one remote shard block straight from its volume over NVMe-oF (RdIO's path, M1)"),
        Metric("double_transfer_x", None, "block_rpc_read_us / block_direct_read_us: what the double transfer costs a remote block (L644)"),
        Metric("gateway_request_cpu_us", "min", "gateway CPU per request that does not scale with the object (S3 handler + namespace lock)"),
        Metric("saturation_threads", None,
               "client threads where the closed loop saturates: unloaded latency / bottleneck demand (N*, the knee of throughput vs threads)"),
        Metric("capex_usd", "min", "cluster hardware: compute and storage nodes, NICs, switch ports, SSDs"),
        Metric("power_w", "min", "cluster power (nodes and SSDs)"),
        Metric("op_latency_us", "min", "mean object request latency at the given threads (= latency_us)"),
        Metric("tco_usd_per_hour", "min", "capex over 5 years + energy (cost block)"),
        Metric("tco_per_gbps_usd_per_hour", "min", "TCO per GB/s of object throughput"),
    )

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        n = p.n
        arr = partial(_arr, n)
        cl = _cluster(p, arr)
        nodes, vols, object_b, read_frac = cl["nodes"], cl["vols"], cl["object_b"], cl["read_frac"]
        hit = _filemap_hit(p, arr, object_b)
        # deferred parity left to the capacity the requests leave idle (M9)
        deferred = np.broadcast_to(p.is_("parity_mode", "deferred"), (n,))
        background = deferred & np.broadcast_to(p.is_("parity_background", "idle"), (n,))
        c = _request_ctx(p, arr, cl, hit, deferred, background)
        g_req = requests.get(c)
        w_req, w_parity = requests.put(c, parity_extra=bool(background.any()))
        write_frac = 1.0 - read_frac
        mix = partial(_mix, read_frac, write_frac, g_req)

        # --- the closed loop over the stations (M6)
        st = _station_rates(p, arr, nodes, g_req, w_req)
        demands = _station_demands(st, mix, w_req, read_frac, write_frac, g_req, nodes, vols)
        r0 = mix("latency_us", w_req)
        saturation = saturation_threads(demands, r0)
        x_per_us, resp_us = closed_loop.throughput(demands, r0, arr(p.threads))
        ops_per_s = x_per_us * US_PER_S
        if w_parity is not None:
            w_req, parity_in_run = _deferred_parity(st, demands, w_req, w_parity, x_per_us, write_frac, background, nodes, vols)
        else:
            parity_in_run = np.ones(n)
        cpu_per_op = mix("cpu_gw_us", w_req) + mix("cpu_own_us", w_req)
        storage_b, compute_b = mix("storage_b", w_req), mix("compute_b", w_req)

        capex, power, tco_per_hour = _cluster_cost(p, arr, nodes, vols)
        gbps = ops_per_s * object_b / GB
        block_rpc_us, block_direct_us = requests.remote_block_read_us(c)
        bad = np.where(~cl["no_data"] & ~cl["optimal_writes"] & ~st["few_live"], 1.0, np.nan)
        return {
            "block_rpc_read_us": block_rpc_us * bad,
            "block_direct_read_us": block_direct_us * bad,
            "double_transfer_x": block_rpc_us / block_direct_us * bad,
            "gateway_request_cpu_us": requests.request_handling_cpu_us(c) * bad,
            "saturation_threads": saturation * bad,
            "infeasible": {NO_DATA_DRIVES: cl["no_data"], OPTIMAL_WRITES: cl["optimal_writes"], GATEWAYS_DOWN: st["few_live"]},
            "throughput_kiops": ops_per_s / OPS_PER_KIOPS * bad,
            "throughput_gbps": gbps * bad,
            "latency_us": resp_us * bad,
            "unloaded_latency_us": r0 * bad,
            "storage_phase_us": mix("storage_phase_us", w_req) * bad,
            "commit_us": w_req["commit_us"] * bad,
            "encode_us": w_req["encode_us"] * bad,
            "cpu_per_op_us": cpu_per_op * bad,
            "gateway_cpu_per_op_us": mix("cpu_gw_us", w_req) * bad,
            "network_per_op_b": (storage_b + compute_b) * bad,
            "storage_net_per_op_b": storage_b * bad,
            "compute_net_per_op_b": compute_b * bad,
            "filemap_hit_frac": hit,
            "parity_in_run_frac": parity_in_run * bad,
            "cores_busy_count": cpu_per_op * x_per_us * bad,
            "capex_usd": capex,
            "power_w": power,
            "tco_usd_per_hour": tco_per_hour,
            "tco_per_gbps_usd_per_hour": tco_per_hour / gbps * bad,
            "work_per_s": ops_per_s * bad,
            "op_latency_us": resp_us * bad,
        }


# ----------------------------------------------------------------------------- stages of evaluate
#: Named columns one stage hands to the next.
Cols = dict[str, np.ndarray]
#: A parameter or value as a float column of the batch's length.
Arr = Callable[[object], np.ndarray]


def _arr(n: int, x: object) -> np.ndarray:
    """``x`` as a float64 column of ``n`` points."""
    if isinstance(x, np.ndarray) and x.shape == (n,):
        return x.astype(np.float64, copy=False)
    return np.broadcast_to(np.asarray(x, dtype=np.float64), (n,))


def _mix(read_frac: np.ndarray, write_frac: np.ndarray, g_req: Cols, key: str, w: Cols) -> np.ndarray:
    """Workload mix of a per-request quantity (GETs and the writes' accounting ``w``)."""
    return read_frac * g_req[key] + write_frac * w[key]


def _cluster(p: Batch, arr: Arr) -> Cols:
    """The cluster and its workload (§1): erasure set k + r, the system, object size, read share."""
    n = p.n
    nodes, vols, r = arr(p.nodes), arr(p.vols_per_node), arr(p.parity_count)
    k = nodes * vols - r
    no_data = k < 1.0
    k = np.maximum(k, 1.0)
    optimal = np.broadcast_to(p.is_("system", "optimal"), (n,))
    object_b = np.where(np.broadcast_to(p.is_("size_from", "value_b"), (n,)), arr(p.value_b), arr(p.object_kb) * KIB)
    read_frac = arr(p.pick("workload", _WORKLOADS))
    # Optimal mounts the other nodes' volumes read-only: reads only (L827)
    optimal_writes = optimal & (read_frac < 1.0)
    return {"nodes": nodes, "vols": vols, "r": r, "k": k, "no_data": no_data, "optimal": optimal,
            "minio": np.broadcast_to(p.is_("system", "minio"), (n,)), "fmc": np.broadcast_to(p.is_("system", "minrdio_fmc"), (n,)),
            "object_b": object_b, "read_frac": read_frac, "optimal_writes": optimal_writes}


def _filemap_hit(p: Batch, arr: Arr, object_b: np.ndarray) -> np.ndarray:
    """FileMap cache hit rate (M7): LRU over Zipf popularity (the cache block's working-set bound)."""
    # exact for a cache holding everything, as in the paper's runs
    n = p.n
    n_objects = np.maximum(arr(p.dataset_gb) * BYTES_PER_GB / object_b, 1.0)
    ratio = arr(p.cache_ratio_frac)
    hit = np.where(np.broadcast_to(p.is_("system", "minrdio"), (n,)), 1.0, 0.0)
    part = (hit > 0.0) & (ratio < 1.0)  # only partial caches need the hit-rate law
    if part.any():
        hit[part] = cache.zipf_hit_rate(ratio[part] * n_objects[part], n_objects[part], arr(p.zipf_alpha)[part])
    return hit


def _request_ctx(p: Batch, arr: Arr, cl: Cols, hit: np.ndarray, deferred: np.ndarray, background: np.ndarray) -> requests.Ctx:
    """The per-request software and transfer costs (requests.py, paths.py) of this point."""
    n, k = p.n, cl["k"]
    return requests.Ctx(
        object_b=cl["object_b"], k=k, r=cl["r"], nodes=cl["nodes"], vols=cl["vols"], link_gbit_s=arr(p.link_gbit_s),
        transport=np.broadcast_to(np.asarray(p.transport), (n,)), minio=cl["minio"], fmc=cl["fmc"], optimal=cl["optimal"],
        hit=hit, failed=arr(p.failed_nodes), deferred=deferred,
        parity_in_window=np.where(background, 0.0, 1.0),
        rpc_wait_us=arr(p.rpc_wait_us), map_rpc_wait_us=arr(p.map_rpc_wait_us), http_sw_us=arr(p.http_sw_us), req_cpu_us=arr(p.req_cpu_us),
        rpc_cpu_us=arr(p.rpc_cpu_us), map_rpc_cpu_us=arr(p.map_rpc_cpu_us), io_cpu_us=arr(p.io_cpu_us),
        tcp_cpu_per_kib_us=arr(p.tcp_cpu_per_kib_us),
        hash_cpu_per_kib_us=arr(p.hash_cpu_per_kib_us), ec_cpu_per_kib_us=arr(p.ec_cpu_per_kib_input_us) * k,
        put_hash_cpu_per_kib_us=arr(p.put_hash_cpu_per_kib_us),
        fs_meta_us=arr(p.fs_meta_us), fs_create_us=arr(p.fs_create_us), tcp_base_us=paths.tcp_base_us(arr(p.link_gbit_s)),
        tcp_us_per_b=paths.tcp_us_per_wire_b(arr(p.link_gbit_s)),
    )


def _station_rates(p: Batch, arr: Arr, nodes: np.ndarray, g_req: Cols, w_req: Cols) -> Cols:
    """Service rates of the closed loop's stations (M6): gateways and owners, cores, wire, initiator, SSD."""
    # requests spread over ``gateways`` nodes; a request's owner-side work over the other live nodes
    g = arr(p.gateways)
    return {
        "g": g,
        "owners": np.maximum(nodes - 1.0 - arr(p.failed_nodes), 1.0),
        "few_live": g > nodes - arr(p.failed_nodes),
        "cores": arr(p.cores_per_node) * HT_GAIN,
        "wire_b_per_us": paths.gbit_s_to_b_per_us(arr(p.link_gbit_s)) * FDR_CODING,
        "initiator_b_per_us": arr(p.initiator_gbps) * paths.B_PER_US_PER_GBPS,
        "ssd_read_us": US_PER_S / paths.ssd_sat_iops(g_req["ssd_io_b"], False),
        "ssd_write_us": US_PER_S / paths.ssd_sat_iops(w_req["ssd_io_b"], True),
    }


def _station_demands(st: Cols, mix: Callable[[str, Cols], np.ndarray], w: Cols, read_frac: np.ndarray,
                     write_frac: np.ndarray, g_req: Cols, nodes: np.ndarray, vols: np.ndarray) -> list[np.ndarray]:
    """Demand per request at each station of the closed loop (M6), us, with the writes' accounting ``w``."""
    g, owners, wire_b_per_us = st["g"], st["owners"], st["wire_b_per_us"]

    def per_node(gw_key: str, own_key: str) -> np.ndarray:
        """Busiest node's share: a gateway's own requests + owner work for the others."""
        x_gw, x_own = mix(gw_key, w), mix(own_key, w)
        at_gateway = x_gw / g + x_own * (g - 1.0) / (g * owners)
        return np.where(g < nodes, np.maximum(at_gateway, x_own / owners), at_gateway)

    return [
        per_node("cpu_gw_us", "cpu_own_us") / st["cores"],
        per_node("gw_rx_b", "own_rx_b") / wire_b_per_us,
        per_node("gw_tx_b", "own_tx_b") / wire_b_per_us,
        per_node("gw_nvmf_b", "own_nvmf_b") / st["initiator_b_per_us"],
        mix("storage_rx_b", w) / wire_b_per_us,
        mix("storage_tx_b", w) / wire_b_per_us,
        (read_frac * g_req["ssd_ios"] * st["ssd_read_us"] + write_frac * w["ssd_ios"] * st["ssd_write_us"]) / (nodes * vols),
    ]


def _deferred_parity(st: Cols, demands: list[np.ndarray], w_req: Cols, w_parity: Cols, x_per_us: np.ndarray,
                     write_frac: np.ndarray, background: np.ndarray, nodes: np.ndarray, vols: np.ndarray) -> tuple[Cols, np.ndarray]:
    """Deferred parity in the background (M9): the share done in the run on the capacity requests leave idle."""
    # it gets what the requests leave idle at every station; the rest is written after the run.
    # Per-request CPU and bytes count the share done during it.  Its demand is taken at the
    # gateway(s), where it is issued.
    wire_b_per_us = st["wire_b_per_us"]
    at_gw = write_frac / st["g"]  # a gateway's share of the parity work of all requests
    parity = [
        w_parity["cpu_gw_us"] / st["cores"] * at_gw, w_parity["gw_rx_b"] / wire_b_per_us * at_gw,
        w_parity["gw_tx_b"] / wire_b_per_us * at_gw, w_parity["gw_nvmf_b"] / st["initiator_b_per_us"] * at_gw,
        w_parity["storage_rx_b"] / wire_b_per_us * write_frac, w_parity["storage_tx_b"] / wire_b_per_us * write_frac,
        w_parity["ssd_ios"] * st["ssd_write_us"] / (nodes * vols) * write_frac,
    ]
    share = np.where(background, 1.0, 0.0)
    for d_fg, d_par in zip(demands, parity):
        need = x_per_us * d_par  # utilization the parity would add
        idle = np.maximum(1.0 - x_per_us * d_fg, 0.0)
        share = np.minimum(share, np.where(need > 0.0, idle / np.where(need > 0.0, need, 1.0), 1.0))
    w_req = {**w_req, **{key: w_req[key] + share * w_parity[key] for key in PER_OP_KEYS}}
    return w_req, np.where(background, share, 1.0)


def _cluster_cost(p: Batch, arr: Arr, nodes: np.ndarray, vols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cost (cost block + prices.csv) of nodes, NICs, switch ports and SSDs; power; TCO per hour."""
    drives = nodes * vols
    ssd_usd = (
        arr(p.ssd_capacity_tb) * GB_PER_TB * component_price("nand_tlc").value
        + component_price("ssd_controller_enterprise").value + component_price("ssd_other").value
        + SSD_DRAM_GIB_PER_TB * arr(p.ssd_capacity_tb) * component_price("dram_ddr4").value
    )
    servers = nodes + 1.0  # + the storage node (the client is not part of the system)
    capex = (
        nodes * _PRICES["compute_node"] + _PRICES["storage_node"]
        + servers * _PRICES["network_port_per_gbit"] * arr(p.link_gbit_s) + drives * ssd_usd
    )
    power = servers * _PRICES["node_power"] + drives * _PRICES["ssd_power"]
    return capex, power, cost.tco_usd_per_year(capex, power, LIFE_YEARS) / HOURS_PER_YEAR


def saturation_threads(demands: list[np.ndarray], r0: np.ndarray) -> np.ndarray:
    """Client threads at which the closed loop saturates (digest M6): N* = (Z + D_b) / D_b =
    R0 / D_b, where the light-load line X = N / R0 meets the bottleneck bound X = 1 / D_b
    (Kleinrock's saturation number, as in Lazowska et al., Quantitative System Performance,
    ch. 5).  Writes carry more gateway CPU per request than reads, so a write-heavy mix
    saturates at fewer threads (MinIO's writes from ~64 threads, L822)."""
    d_b = np.maximum.reduce([np.asarray(d, dtype=np.float64) for d in demands])
    return np.asarray(r0, dtype=np.float64) / d_b
