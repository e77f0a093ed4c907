"""fs2: FS², switch caches, flexible topology and locality-aware scheduling for large
cache-coherent fabrics (Jeong et al., IEEE Micro 2025; digest shared/research/fs2.md).

N GPU-class devices share one coherent address space over a switch fabric.  A memory
access (fs2.md §2 items 1-2):

    device cache lookup                                   device_cache_ns (77 ns)
      hit  -> done
      miss -> [FS²: requester-side switch caches, level by level; a read hit returns
               from there while the request goes on to the HA]
           -> home agent: the host (single HA, CXL-like) or the line's home device
              (distributed HAs, CCIX-like); each switch crossed costs switch_ns + link_ns
           -> directory lookup (ha_ns) + home memory (mem_ns)
           -> with probability snoop_frac, a snoop round trip to a device holding the line
           -> the response back, serialized on the narrowest link of the path

Hit ratios come from locality.py (capacity + coherence churn), paths from fabric.py.
Each device is one server of the paper's M/M/c queue; a request is one access plus its
share of compute, so speedup = mean service time of vanilla / of the design, the ratio of
the M/M/c saturation throughputs (queueing block).  Per-port bandwidth enters as the
response's serialization on the narrowest link (an all-to-all splits a leaf's uplink over
its peers); with one request in service per device the links do not saturate.

Designs (variant ``design``): ``vanilla`` (tree, no switch cache, default scheduling),
``fs2_switch``, ``fs2_topology`` (best topology of fabric.TOPOLOGIES unless ``topology``
names one), ``fs2_sched``, and ``fs2`` (all three).  Cost: switches (cost block price),
the switch-cache SRAM (sram.py), and fabric power.

Common metrics (family ``mem-analytics``, ``_system``): one dual-socket host (workload block)
runs the family's query over ``footprint_gib`` held in the memory behind the fabric, spread
over the N endpoints (a CXL memory controller with its coherent cache and DRAM each).  The
design is evaluated a second time with that footprint (hit ratios, the topology FS²-topology
picks); its mean access time is the query's access latency, the endpoints' ports its bandwidth.
"""

from __future__ import annotations

import csv
import tomllib
from pathlib import Path

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import GIB, MIB, NS_PER_S
from models.blocks import link, queueing, workload
from models.blocks.cost import component_price
from models.fs2 import fabric, locality, sram

HERE = Path(__file__).resolve().parent
DESIGNS = ("vanilla", "fs2_switch", "fs2_topology", "fs2_sched", "fs2")
HA_MODES = ("single", "distributed")
TOPOLOGY_CHOICES = ("auto",) + fabric.TOPOLOGIES


def _workload_table() -> dict[str, dict[str, str]]:
    with (HERE / "workloads.csv").open(newline="", encoding="utf-8") as f:
        return {r["workload"]: r for r in csv.DictReader(line for line in f if not line.startswith("#"))}


WORKLOAD_TABLE = _workload_table()
WORKLOADS = tuple(WORKLOAD_TABLE)
_WRITE = {w: float(r["write_frac"]) for w, r in WORKLOAD_TABLE.items()}

#: Fitted constants (calibration.py writes fitted.toml; it says what each is fitted to).
FITTED = tomllib.loads((HERE / "fitted.toml").read_text(encoding="utf-8"))

#: One response on the wire: a 64 B line in two 68 B CXL flits (link block 68 B flit).
RESPONSE_B = 2.0 * float(link.FLIT_WIRE_B[0])
#: Per-port bandwidth when the article gives none: PCIe 5.0 x16 (fs2.md §7 ambiguity 1).
PORT_BW_GBPS = float(link.raw_bw_gbps(5, 16))
#: Reference fabric for the workloads' compute time: vanilla, single HA, 64 devices (§2 item 5).
REFERENCE_DEVICES = 64.0

#: Memory endpoints behind the fabric (common metrics): a CXL Type-3 controller each (cost
#: block price and power) with DRAM at the cost block's DDR5 price and power per GiB.
_ENDPOINT_USD = component_price("cxl_memory_controller").value
_ENDPOINT_W = component_price("cxl_memory_controller_power_w").value
_DRAM_USD_PER_GIB = component_price("dram_ddr5").value


class Fs2(Model):
    name = "fs2"
    version = "1"
    summary = "FS²: switch caches, flexible topology and locality-aware scheduling in coherent CXL/CCIX fabrics"
    source = "Jeong et al., 'FS²: A Fast, Scalable, and Flexible Switching System for Emerging Interconnects', IEEE Micro 2025 (fs2.md)"
    variant_param = "design"
    family = "mem-analytics"
    boundary = ("one dual-socket host (CPUs, board, its own DIMMs) plus the fabric: its switches and switch-cache "
                "SRAM and the N memory endpoints (CXL controller + the DRAM holding the footprint)")
    params = (
        Param("design", "fs2", "fs2.md §1: vanilla tree vs the FS² schemes alone and combined", choices=DESIGNS),
        Param("ha", "single", "fs2.md §1: CXL-like single-point HA (Fig. 6a) or CCIX-like distributed HAs (Fig. 6b)", choices=HA_MODES),
        Param("workload", "dlrm_inf", "fs2.md §5: DLRM RMC2 inference/training, YCSB a/b/d on Redis (workloads.csv)", choices=WORKLOADS),
        Param("topology", "auto", "fs2.md §1: FS²-topology picks the topology per workload (auto = lowest mean access time)",
              choices=TOPOLOGY_CHOICES, doc="topology of the FS²-topology designs; vanilla is always a tree"),
        Param("n_devices", 64, "fs2.md §3: 64 V100-class devices in the main evaluation (~L2870)", bounds=(1, fabric.MAX_DEVICES), integer=True),
        Param("fanout", 4, "assumption: a PEX8796-class 96-lane switch (the article's reference switch) has six x16 ports: "
              "four down, so 64 devices form a 3-level tree, and the 24 MB switch cache is 1x (6 MB) per child (Fig. 3)",
              choices=fabric.FANOUTS, doc="devices (or child switches) per switch"),
        Param("device_cache_mb", 6.0, "fs2.md §3: coherent 6 MB, 16-way device cache (~L2870)", bounds=(0.5, 128.0)),
        Param("switch_cache_mb", 24.0, "fs2.md §3: 24 MB cache per FS²-switch (~L2866)", bounds=(0.0, 512.0)),
        Param("cache_levels", 4, "fs2.md §7 ambiguity 9: every switch level caches (4 = all levels of a 256-device tree)",
              bounds=(1, 4), integer=True, doc="switch levels above the devices that carry a cache (1 = leaf switches only)"),
        Param("device_cache_ns", 77.0, "fs2.md §3: 77 ns device cache lookup (~L2870)", bounds=(5.0, 500.0)),
        Param("switch_ns", 150.0, "fs2.md §3: 150 ns switch latency (~L2866)", bounds=(5.0, 1000.0)),
        Param("link_ns", 75.0, "fs2.md §7 ambiguity 1: the 75 ns 'interconnect speed' taken as per-link latency (~L2866)", bounds=(1.0, 500.0)),
        Param("mem_ns", 120.0, "fs2.md §7 ambiguity 2: HBM2 local access of ~100-150 ns; assumption: 120 ns", bounds=(20.0, 1000.0)),
        Param("ha_ns", 77.0, "assumption: the HA's directory is an SRAM lookup like the 77 ns device cache (the article gives none)",
              bounds=(0.0, 1000.0)),
        Param("snoop_frac", FITTED["snoop_frac"]["value"], FITTED["snoop_frac"]["source"], bounds=(0.0, 1.0),
              doc="share of misses that need a snoop round trip to another device"),
        Param("reuse_alpha", FITTED["reuse_alpha"]["value"], FITTED["reuse_alpha"]["source"], bounds=(0.0, 1.5),
              doc="power-law skew of line reuse"),
        Param("footprint_mb", FITTED["footprint_mb"]["value"], FITTED["footprint_mb"]["source"], bounds=(1.0, 1e6),
              doc="data each device adds to the shared footprint (weak scaling)"),
        Param("sched_affinity_frac", FITTED["sched_affinity_frac"]["value"], FITTED["sched_affinity_frac"]["source"],
              bounds=(0.0, 1.0), doc="share of requests FS²-scheduling places on the device owning their data"),
        Param("port_bw_gbps", PORT_BW_GBPS, "fs2.md §7 ambiguity 1: PCIe 5.0 x16 per port (link block)", bounds=(1.0, 1000.0)),
        Param("switch_w", sram.PCIE_SWITCH_W, "fs2.md §3: off-the-shelf PCIe switch 18.6 W (PEX8796, ~L2896)", bounds=(0.0, 500.0)),
        Param("switch_usd", component_price("cxl_switch").value, "cost block: cxl_switch (assumption, dated)", bounds=(0.0, 20000.0)),
        Param("sram_usd_per_mm2", sram.USD_PER_MM2, "28 nm wafer $2,891 (CSET 2020) / 300 mm wafer area / 80% yield (sram.py)",
              bounds=(0.0, 10.0)),
        *knob_params("mem-analytics"),
        Param("host_base_dram_gib", workload.HOST_BASE_DRAM_GIB, "workload block: the host's own DIMMs for the OS, code and "
              "stacks (one 16 GiB RDIMM per socket); the footprint sits behind the fabric", bounds=(0.0, 8192.0),
              doc="host DRAM besides the footprint (common metrics only)"),
    )
    metrics = (
        Metric("speedup_x", "max", "saturation throughput over vanilla's (same HA mode, devices, workload)"),
        Metric("amat_ns", "min", "mean access time of one memory access"),
        Metric("service_ns", "min", "mean service time of one request: compute share + access"),
        Metric("throughput_per_s", "max", "requests per second at saturation of the M/M/c (N / service time)"),
        Metric("device_hit_frac", "max", "device cache hit ratio"),
        Metric("switch_hit_frac", "max", "share of device misses served by a switch cache"),
        Metric("total_hit_frac", "max", "share of accesses served by the device cache or a switch cache"),
        Metric("miss_latency_ns", "min", "mean latency of a device-cache miss"),
        Metric("capacity_miss_frac", "min", "device-cache accesses that miss because the cache cannot hold the line"),
        Metric("coherence_miss_frac", "min", "device-cache accesses that miss because another device's write invalidated "
               "the line (capacity_miss_frac + coherence_miss_frac = 1 - device_hit_frac)"),
        Metric("local_latency_ns", None, "local memory access: device cache miss + home memory"),
        Metric("miss_vs_local_x", "min", "miss latency over local access latency"),
        Metric("mean_switches_count", "min", "switches crossed one way by a miss that leaves the device"),
        Metric("memory_share_frac", None, "share of the service time spent in memory accesses"),
        Metric("n_switches_count", None, "switches in the fabric"),
        Metric("sw_cache_power_w", "min", "SRAM power of one switch cache"),
        Metric("sw_cache_area_mm2", "min", "SRAM area of one switch cache"),
        Metric("fabric_power_w", "min", "switches + switch caches (at the cached levels)"),
        Metric("fabric_usd", "min", "switches + switch-cache silicon (at the cached levels)"),
        Metric("access_latency_ns", "min", "mean access time of the family query over footprint_gib"),
        Metric("system_bw_gbps", "max", "the endpoints' port bandwidth (common metrics)"),
    )

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        want = _design_flags(p)
        base = _fabric_columns(p, want)
        vanilla, design, x = _designs_at(p, base, want, p.footprint_mb)
        # the family query: footprint_gib spread over the devices (common metrics)
        _, design_fam, _ = _designs_at(p, base, want, p.footprint_gib * GIB / MIB / x["n"])

        # --- requests: a memory access plus its compute share; M/M/c over N devices (§2 item 5)
        compute_ns = _compute_ns(p)
        service_v = compute_ns + vanilla["amat_ns"]
        service = compute_ns + design["amat_ns"]
        n = x["n"]

        # --- cost and power: switches, plus the SRAM of a switch cache where one is fitted
        n_switches = design["n_switches"]
        has_cache, cache_w, cache_mm2 = _switch_cache_sram(p, want["switch"])
        local_ns = x["dc"] + x["mem"]
        capacity_miss, coherence_miss = locality.miss_split(x["cap_spread"], x["n"], x["write"], x["affinity"], x["h_own"])
        system = _system(p, design_fam, x["n"], has_cache, cache_w, cache_mm2)
        return {
            **system,
            "speedup_x": service_v / service,
            "amat_ns": design["amat_ns"],
            "service_ns": service,
            "throughput_per_s": queueing.saturation_throughput(service, n) * NS_PER_S,
            "device_hit_frac": design["device_hit_frac"],
            "switch_hit_frac": design["switch_hit_frac"],
            "total_hit_frac": design["device_hit_frac"] + (1.0 - design["device_hit_frac"]) * design["switch_hit_frac"],
            "miss_latency_ns": design["miss_latency_ns"],
            "capacity_miss_frac": capacity_miss,
            "coherence_miss_frac": coherence_miss,
            "local_latency_ns": local_ns,
            "miss_vs_local_x": design["miss_latency_ns"] / local_ns,
            "mean_switches_count": design["mean_switches"],
            "memory_share_frac": design["amat_ns"] / service,
            "n_switches_count": n_switches,
            "sw_cache_power_w": cache_w,
            "sw_cache_area_mm2": cache_mm2,
            "fabric_power_w": n_switches * p.switch_w + design["cached_switches"] * cache_w,
            "fabric_usd": n_switches * p.switch_usd + design["cached_switches"] * cache_mm2 * p.sram_usd_per_mm2,
        }


def _full(p: Batch, v: np.ndarray | float) -> np.ndarray:
    """``v`` as a float column of the batch length."""
    return np.broadcast_to(np.asarray(v, dtype=np.float64), (p.n,))


def _design_flags(p: Batch) -> dict[str, np.ndarray]:
    """Which FS² schemes each point's design turns on: switch caches, topology, scheduling (§1)."""
    return {
        "switch": _full(p, p.is_("design", "fs2_switch") | p.is_("design", "fs2")) > 0,
        "topo": _full(p, p.is_("design", "fs2_topology") | p.is_("design", "fs2")) > 0,
        "sched": _full(p, p.is_("design", "fs2_sched") | p.is_("design", "fs2")) > 0,
    }


def _fabric_columns(p: Batch, want: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per-point fabric timings, HA mode, workload write share and the schemes' switches as columns."""
    cols = {
        "n": p.n_devices, "fanout": p.fanout, "dist": p.is_("ha", "distributed"), "write": p.pick("workload", _WRITE),
        "dc": p.device_cache_ns, "sw": p.switch_ns, "link": p.link_ns, "mem": p.mem_ns, "ha": p.ha_ns,
        "snoop": p.snoop_frac, "port_gbps": p.port_bw_gbps, "switch_on": want["switch"],
        "cache_levels": p.cache_levels,
        "affinity": np.where(want["sched"], p.sched_affinity_frac, 0.0),
    }
    x = {k: _full(p, v) for k, v in cols.items()}
    x["dist"] = x["dist"] > 0.5
    x["switch_on"] = x["switch_on"] > 0.5
    return x


def _designs_at(p: Batch, base: dict[str, np.ndarray], want: dict[str, np.ndarray],
                foot_mb: np.ndarray | float) -> tuple[dict, dict, dict]:
    """Vanilla and the design when each device brings ``foot_mb`` of data (and the hit columns)."""
    x = _hit_columns(p, base, want, foot_mb)
    vanilla, design = _tree_designs(x, want)
    if want["topo"].any():
        _pick_topologies(p, x, want["topo"], design)
    return vanilla, design, x


def _hit_columns(p: Batch, base: dict[str, np.ndarray], want: dict[str, np.ndarray],
                 foot_mb: np.ndarray | float) -> dict[str, np.ndarray]:
    """Hit ratios (locality.py): private caches, and the capacity of the first l switch levels."""
    dev_b, sw_b = _full(p, p.device_cache_mb * MIB), _full(p, p.switch_cache_mb * MIB)
    foot_b = _full(p, foot_mb * MIB)
    x = dict(base)
    alpha = _full(p, p.reuse_alpha)
    cap_spread, h_shared = locality.device_capacity_hits(dev_b, foot_b, x["n"], alpha)
    x["cap_spread"] = cap_spread
    x["h_spread"] = cap_spread * locality.survive_frac(1.0, x["n"], x["write"])
    x["h_own"] = np.zeros(p.n)  # only FS²-scheduling's affine requests need it
    sched_idx = np.flatnonzero(want["sched"])
    if sched_idx.size:
        x["h_own"][sched_idx] = locality.own_capacity_hits(dev_b[sched_idx], foot_b[sched_idx], alpha[sched_idx])
    max_levels = fabric.TABLE_LEVELS["tree"]
    # switch-level capacity only where a switch cache is fitted
    caps = np.zeros((p.n, max_levels))
    sw_idx = np.flatnonzero(want["switch"])
    if sw_idx.size:
        caps[sw_idx] = locality.switch_capacity_hits(
            dev_b[sw_idx], sw_b[sw_idx], foot_b[sw_idx], x["n"][sw_idx], alpha[sw_idx], h_shared[sw_idx], max_levels
        )
    x["caps"] = caps
    return x


def _tree_designs(x: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> tuple[dict, dict]:
    """The vanilla tree (no switch hits, no affinity) and the tree with the design's switch caches / scheduling."""
    tree = fabric.lookup("tree", x["dist"], x["n"], x["fanout"])
    tree_full = _miss_paths(tree, x)
    vanilla = _plain(tree, tree_full, x)
    design = {k: v.copy() for k, v in vanilla.items()}
    idx = np.flatnonzero(want["switch"] | want["sched"])
    if idx.size:
        sub = {k: v[idx] for k, v in x.items()}
        got = _access(tree.take(idx), tree_full[idx], sub)
        for k in design:
            design[k][idx] = got[k]
    return vanilla, design


def _pick_topologies(p: Batch, x: dict[str, np.ndarray], want_topo: np.ndarray, design: dict[str, np.ndarray]) -> None:
    """FS²-topology: the named topology, or (auto) the one with the lowest mean access time, into ``design``."""
    choice = np.broadcast_to(np.asarray(p.topology), (p.n,))
    auto = want_topo & (choice == TOPOLOGY_CHOICES.index("auto"))
    for topo in fabric.TOPOLOGIES[1:]:
        named = want_topo & (choice == TOPOLOGY_CHOICES.index(topo))
        idx = np.flatnonzero(named | auto)
        if not idx.size:
            continue
        # leaf (+ hub) only: at most two requester-side switches off the tree
        sub = {k: v[idx] for k, v in x.items()}
        sub["caps"] = x["caps"][idx, : fabric.TABLE_LEVELS[topo]]
        g = fabric.lookup(topo, sub["dist"], sub["n"], sub["fanout"])
        cand = _access(g, _miss_paths(g, sub), sub)
        keep = named[idx] | (cand["amat_ns"] < design["amat_ns"][idx])
        take = idx[keep]
        for k in design:
            design[k][take] = cand[k][keep]


def _switch_cache_sram(p: Batch, want_switch: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where a switch cache is fitted, and the power and area of its SRAM (sram.py)."""
    has_cache = want_switch & (_full(p, p.switch_cache_mb) > 0)
    cache_w = np.where(has_cache, sram.cache_power_w(p.switch_cache_mb), 0.0)
    cache_mm2 = np.where(has_cache, sram.cache_area_mm2(p.switch_cache_mb), 0.0)
    return has_cache, cache_w, cache_mm2



def _miss_paths(g: fabric.Geometry, x: dict[str, np.ndarray]) -> np.ndarray:
    """(n, I + 1): probability-weighted time of a device miss that goes all the way to the
    home, per count of requester-side switches: there and back through the switches and
    links, the response on the narrowest link, directory + memory, maybe a snoop."""
    c = lambda k: x[k][:, None]  # noqa: E731
    owner = g.owner_switches
    snoop_ns = x["snoop"] * np.where(owner > 0, 2.0 * (owner * (x["sw"] + x["link"]) + x["link"]) + x["dc"], 0.0)
    fixed_ns = x["ha"] + x["mem"] + snoop_ns
    ser_ns = RESPONSE_B / c("port_gbps")
    return 2.0 * ((c("sw") + c("link")) * g.switches + c("link") * g.remote) + ser_ns * g.slow_link + fixed_ns[:, None] * g.prob


def _plain(g: fabric.Geometry, full: np.ndarray, x: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Metrics without switch caches or affinity (every miss goes to the home)."""
    h = x["h_spread"]
    miss_ns = full.sum(axis=1)
    return {
        "amat_ns": x["dc"] + (1.0 - h) * miss_ns,
        "device_hit_frac": h.copy(),
        "switch_hit_frac": np.zeros_like(h),
        "miss_latency_ns": miss_ns,
        "mean_switches": g.switches.sum(axis=1),
        "n_switches": np.asarray(g.n_switches, dtype=np.float64),
        "cached_switches": _cached_switches(g, x),
    }


def _cached_switches(g: fabric.Geometry, x: dict[str, np.ndarray]) -> np.ndarray:
    """Switches at the levels that carry a cache (levels 1..cache_levels)."""
    top = np.minimum(x["cache_levels"], g.cached_switches.shape[1]).astype(np.int64) - 1
    return np.take_along_axis(g.cached_switches, top[:, None], axis=1)[:, 0]


def _access(g: fabric.Geometry, full: np.ndarray, x: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Mean access time and its parts with switch caches (``switch_on``) and affinity."""
    h, n, write, caps = x["h_spread"], x["n"], x["write"], x["caps"]
    hop_ns = x["sw"] + x["link"]
    ser_ns = RESPONSE_B / x["port_gbps"]
    # FS²-switch: going up the requester-side switches, the share of device misses served
    # at level l (reads only, locality.py) and the time they take (there and back from l)
    read_share = np.where(x["switch_on"], (1.0 - write) / np.maximum(1.0 - h, 1e-12), 0.0)
    reached = h  # share of requests served at or below the current level
    served = np.zeros_like(h)
    saved = np.zeros_like(h)
    miss_spread = full[:, 0].copy()
    sw_hit = np.zeros_like(h)
    for lv in range(1, full.shape[1]):
        level = np.maximum(reached, caps[:, lv - 1] * locality.survive_frac(g.served[:, lv - 1], n, write))
        level = np.where(lv <= x["cache_levels"], level, reached)
        step = (level - reached) * read_share
        reached = level
        served = served + step
        saved = saved + step * (2.0 * lv * hop_ns + ser_ns)
        prob = g.prob[:, lv]
        miss_spread += prob * saved + (1.0 - served) * full[:, lv]
        sw_hit += prob * served
    # FS²-scheduling: affine requests see the device's own data; with distributed HAs the
    # device is also their home, so their misses are a local directory + memory access
    miss_own = np.where(x["dist"], x["ha"] + x["mem"], miss_spread)
    aff = x["affinity"]
    m_spread = (1.0 - aff) * (1.0 - h)
    m_own = aff * (1.0 - x["h_own"])
    misses = m_spread + m_own
    amat = x["dc"] + m_spread * miss_spread + m_own * miss_own
    return {
        "amat_ns": amat,
        "device_hit_frac": 1.0 - misses,
        "switch_hit_frac": m_spread * sw_hit / np.maximum(misses, 1e-12),
        "miss_latency_ns": (amat - x["dc"]) / np.maximum(misses, 1e-12),
        "mean_switches": g.switches.sum(axis=1),
        "n_switches": np.asarray(g.n_switches, dtype=np.float64),
        "cached_switches": _cached_switches(g, x),
    }


def _compute_ns(p: Batch) -> np.ndarray:
    """Compute time per request of each workload (fitted.toml [compute_ns]): set so that
    memory accesses take ``memory_share_frac`` of the vanilla single-HA 64-device service
    time (calibration.py derives it)."""
    return p.pick("workload", {w: float(FITTED["compute_ns"][w]) for w in WORKLOADS})


def _system(p: Batch, d: dict[str, np.ndarray], n: np.ndarray, has_cache, cache_w, cache_mm2) -> dict[str, np.ndarray]:
    """The mem-analytics system: one host runs the family query over ``footprint_gib``
    spread over the N memory endpoints behind the fabric (design ``d`` at that footprint)."""
    fp_gib = np.asarray(p.footprint_gib, dtype=np.float64)
    access_ns = d["amat_ns"]
    bw = n * p.port_bw_gbps
    host = workload.host_server(p.host_base_dram_gib)
    cached = np.where(has_cache, d["cached_switches"], 0.0)
    capex = (host["capex_usd"] + d["n_switches"] * p.switch_usd + cached * cache_mm2 * p.sram_usd_per_mm2
             + n * _ENDPOINT_USD + fp_gib * _DRAM_USD_PER_GIB)
    power = host["power_w"] + d["n_switches"] * p.switch_w + cached * cache_w + n * _ENDPOINT_W + fp_gib * workload.DRAM_W_PER_GIB
    return {
        "access_latency_ns": access_ns,
        "system_bw_gbps": bw,
        "work_per_s": workload.mem_queries_per_s(access_ns, bw),
        "capex_usd": capex,
        "power_w": power,
    }
