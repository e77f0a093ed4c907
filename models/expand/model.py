"""expand: topology-aware, expander-driven LLC prefetching for CXL-SSDs (ExPAND, Oh et al.,
IEEE Micro 2025; digest research/cxl-prefetch.md).

A host's memory lives on a CXL-SSD (Z-NAND, PMEM or DRAM back end behind a 1.5 GB
internal DRAM) reached through ``switch_levels`` CXL switches.  Every LLC miss pays the
end-to-end path (M1, memssd block):

    LLC lookup -> CXL.mem round trip through the switches (link block)
               -> controller -> internal DRAM hit, or back-end read (flash block)

A prefetcher hides a share of those misses (M1/M2): ``coverage x timely``.  On the graph
traversals coverage is the prefetcher's accuracy (Table 4; Fig. 1a's convention coverage =
accuracy); on the SPEC set's structured, repetitive patterns (L1333) only a fitted share of
the mispredictions stays uncovered (Fig. 3a's best workload reaches 71.8x, which 92%
coverage caps at 12.5x).  Timeliness:

* ``expand`` runs on the SSD (decider) and issues each prefetch at the predicted arrival
  minus the end-to-end latency it read from the topology at enumeration; its timing
  predictor's accuracy maps to timely prefetches through the saturation the article
  reports (gains flatten past 84% timing accuracy, M2).  Prefetched lines wait in the
  16 KB reflector buffer at the root complex (a hit there costs the LLC lookup).
* host-side prefetchers (``rule1``, ``rule2``, ``ml1``, ``ml2``) issue on their trigger
  without a timing model: a fixed share of their useful prefetches arrives in time
  (fitted), and they do not know the topology: every switch level makes each covered
  access wait the level's extra round trip (M3, Fig. 1c).
* ``ideal`` is Fig. 1a's synthetic prefetcher of effectiveness ``effectiveness_frac``
  (coverage = accuracy), timely; ``topology_aware=false`` gives Fig. 1c's unaware one.
* ``local_dram`` keeps everything in host DDR (tRP = tRCD = tCAS = 22 ns, Table 1) with
  no prefetcher (digest ambiguity 16); ``nopf`` is the CXL-SSD without prefetching.

Execution time per instruction: ``CPI_core / f + MPKI/1000 x (exposed latency) / MLP``.
Link traffic (M5): demand misses, useful prefetches and useless ones ``(1 - A)/A`` of the
useful, 64 B each plus the MemRdPC / BISnpData headers, over the CXL link.  Decider load
(M4): one prediction per LLC miss at Table 4's operations per prediction.  Cost (M8,
cost block): holding the working set on CXL-SSDs (Z-NAND or Optane-class media, internal
DRAM, controller, CXL premium) against host DDR5.

Common metrics (family ``mem-analytics``, ``_system``): one dual-socket host (workload block)
runs the family's query over ``footprint_gib`` held on CXL-SSDs of that capacity (or, for
``local_dram``, in the host's DIMMs).  The query's misses follow the selected workload's
pattern (its prefetch coverage and timeliness); the footprint sets the internal-DRAM hit rate,
the device count and the price.  Access latency is the exposed latency of one miss (a hidden
miss costs an LLC / reflector lookup); bandwidth is the devices' links less prefetch traffic,
capped by the back end's 64 B read rate where the internal DRAM misses.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import CACHELINE_B, GB, GIB
from models.blocks import dram, link, memssd, queueing, workload
from models.blocks.calibration import per_calibration
from models.blocks.cost import component_price

HERE = Path(__file__).parent


def _table(name: str) -> list[dict[str, str]]:
    with open(HERE / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


_WL = _table("workloads.csv")
_PF = {r["name"]: r for r in _table("prefetchers.csv")}
#: Mixed workloads (Fig. 3b, digest M7): every core runs a different benchmark.  The article
#: lists no composition except that CC+TC appears; assumption: the cores split evenly over the
#: members (12 cores: 3 per graph kernel, 6 each for CC+TC).
MIXES = {"mix_graph": ("cc", "pr", "sssp", "tc"), "mix_cc_tc": ("cc", "tc")}
MAX_MIX = max(len(v) for v in MIXES.values())
WORKLOADS = tuple(r["name"] for r in _WL) + tuple(MIXES)
GRAPH = tuple(r["name"] for r in _WL if r["suite"] == "graph")
SPEC = tuple(r["name"] for r in _WL if r["suite"] == "spec")
PREFETCHERS = tuple(_PF)
DESIGNS = ("local_dram", "nopf", "ideal") + PREFETCHERS
MEDIA = ("znand", "pmem", "dram")
#: The link generations the article's CXL 3.0 era admits (a restriction of the link block's group).
LINK_GENS = ("pcie5", "pcie6")
FLIT_MODES = link.FLIT_MODES

WS_B = {r["name"]: float(r["working_set_gb"]) * GB for r in _WL}
MPKI = {r["name"]: float(r["mpki"]) for r in _WL}
READ_FRAC = {r["name"]: float(r["read_frac"]) for r in _WL}
PATTERN = {r["name"]: r["pattern"] for r in _WL}
#: Regular patterns (stencil or structured) leave most mispredictions covered (L1333).
STRUCTURED = {k: float(v in ("structured", "stencil")) for k, v in PATTERN.items()}
STENCIL = {k: float(v == "stencil") for k, v in PATTERN.items()}
IRREGULAR = {k: float(v == "irregular") for k, v in PATTERN.items()}
ACCURACY = {k: float(v["accuracy_pct"]) / 100.0 for k, v in _PF.items()}
OPS_PER_PREDICTION = {k: float(v["ops_per_prediction"]) for k, v in _PF.items()}
PREDICTOR_MEM_KB = {k: float(v["mem_kb"]) for k, v in _PF.items()}
RULE = tuple(k for k, v in _PF.items() if v["family"] == "rule")
OFFSET_PF = tuple(k for k, v in _PF.items() if v["offset"] == "1")
GLOBAL_TRAINED = tuple(k for k, v in _PF.items() if v["trains_on"] == "global")

# ----------------------------------------------------------------------------- access patterns
#: Rule-based prefetchers reach at most 76% accuracy on large irregular access patterns
#: (L1243: "9% to 76%"); Table 4's accuracy is their average over all workloads.
IRREGULAR_RULE_ACC_MAX = 0.76
#: Prefetch distance of an offset prefetcher on a fixed-offset stream, in lines: the
#: best-offset prefetcher's largest offset (Michaud, HPCA 2016: offsets up to 256 lines).
#: Assumption that Rule1 = BOP (digest §1, external) reaches it on a stencil sweep, range 64-256.
OFFSET_DISTANCE_LINES = 256.0

# ----------------------------------------------------------------------------- host (Table 1)
#: 12 OoO cores at 3.6 GHz (Table 1, L1316).
FREQ_GHZ = 3.6
CORES = 12
#: LocalDRAM: tRP = tRCD = tCAS = 22 ns (Table 1, L1320), through the dram block.
HOST_DDR_T_NS = 22.0
#: A Param default (``host_dram_ns``): fitted at import, under the shipped calibration.
HOST_DDR_NS = memssd.host_dram_ns(HOST_DDR_T_NS)
#: LLC lookup on the way out: the LLC is unstated; assumption (digest ambiguity 3): a shared
#: L3 of about 40 cycles at 3.6 GHz.
LLC_LOOKUP_NS = 40 / FREQ_GHZ
#: LLC size for the internal DRAM's conditional hit rate: assumption 30 MB (ambiguity 3).
LLC_B = 30e6

# ----------------------------------------------------------------------------- device (Table 2)
#: Internal DRAM of the CXL-SSD: 1.5 GB, 9.1 ns timings (Table 2, L1329), memssd block.
SSD_DRAM_B = 1.5 * GB


@per_calibration
def _ssd_dram_ns() -> float:
    """Internal-DRAM hit latency (memssd / dram block, calibrated)."""
    return memssd.ssd_dram_hit_ns()


#: Back-end reads of one 64 B sector (flash block): Z-NAND (tRd 3 us, Table 2) and an
#: Optane-class PMEM (P5800X, Table 1); the article puts Z-NAND 6x slower than PMEM (L1414);
#: the two flash-block configurations give 5.4x (3.34 us vs 0.62 us per 64 B read; tR 3 us vs
#: 0.3 us).  A DRAM back end is served at the internal-DRAM latency.
MEDIA_READ_NS = {
    "znand": float(memssd.backend_read_ns(memssd.backend_config("znand"), CACHELINE_B)),
    "pmem": float(memssd.backend_read_ns(memssd.backend_config("pmem"), CACHELINE_B)),
    "dram": 0.0,
}
#: Device capacity per CXL-SSD: Samsung 983 ZET 2 TB (Table 2, L1327).
DEVICE_GB = 2000.0
#: Timing accuracy past which timeliness gains are marginal (Fig. 3c, L1382: 84%).
TIMELY_SATURATION = 0.84
#: Header bytes per prefetch message on the link: the BISnpData S2M header and the
#: MemRdPC PC payload, one 16 B slot each (assumption from the 256 B flit's 16 B slots).
PREFETCH_HEADER_B = 16.0

# ----------------------------------------------------------------------------- fitted constants
# Fitted by models/expand/calibration.py (tests/test_expand.py checks they still fit):
#: Core CPI without memory stalls: Fig. 1a, perfect prefetch makes the CXL-SSD 3.9x faster
#: than LocalDRAM on the graph workloads (L1224).
CPI_CORE = 0.5159
#: Zipf skew of the misses reaching the internal DRAM: Fig. 1a, at 80% effectiveness the
#: CXL-SSD is still 4.5x slower than LocalDRAM on the graph workloads (L1224).
DRAM_REUSE_ALPHA = 0.7394
#: Share of a host-side prefetcher's useful prefetches that arrive in time: Fig. 3a, the ML
#: prefetchers run 4.4x faster than NoPrefetch (L1337).
HOST_TIMELY_FRAC = 0.8717
#: Share of a prefetcher's mispredictions (1 - Table 4 accuracy) that stay uncovered on the
#: SPEC set's structured, repetitive patterns (L1333); the graph traversals keep Fig. 1a's
#: coverage = accuracy.  Fig. 3a: ExPAND's best workload runs 71.8x faster than NoPrefetch
#: (L1365, the top of the 4.3x-71.8x range; the model's best is mcf, the highest MPKI).
STRUCTURED_RESIDUAL_FRAC = 0.07452

# ----------------------------------------------------------------------------- prices (cost block)
_ZNAND_USD_PER_GB = component_price("nand_znand").value
_SSD_DRAM_USD_PER_GIB = component_price("dram_ddr4").value
_HOST_DRAM_USD_PER_GIB = component_price("dram_ddr5").value
_SSD_CTRL_USD = component_price("ssd_controller_enterprise").value + component_price("ssd_other").value
_CXL_PREMIUM = component_price("cxl_premium_frac").value
#: Optane-class media priced like Z-NAND (assumption: no public 3D XPoint media price).
_MEDIA_USD_PER_GB = {"znand": _ZNAND_USD_PER_GB, "pmem": _ZNAND_USD_PER_GB, "dram": _HOST_DRAM_USD_PER_GIB * GB / GIB}

# ----------------------------------------------------------------------------- system (mem-analytics family)
#: Infeasible point of the common metrics.
SWITCH_SATURATED = "a switch port is saturated: switch_fanout devices offer more traffic than the port carries (M/D/1, rho >= 1)"
LOCAL_TOO_BIG = "local_dram: footprint_gib plus the host's own DIMMs is more DRAM than the host takes (host_max_dram_gib)"
#: Wall power of one CXL-SSD under load (cost block price table, dated assumption).
_SSD_W = component_price("cxl_ssd_power_w").value
_SWITCH_USD = component_price("cxl_switch").value
_SWITCH_W = component_price("cxl_switch_power_w").value
#: Downstream ports of one CXL switch.  Assumption: a 16-port switch (one level of the tree
#: fans out to 16 devices or switches below it).
SWITCH_PORTS = 16.0
@per_calibration
def backend_reads_per_s() -> dict[str, float]:
    """Back-end 64 B reads per second of one device (flash block saturation, calibrated), per
    media; a DRAM back end is not a limit (the link is)."""
    return {
        "znand": float(memssd.backend_iops(memssd.backend_config("znand"), CACHELINE_B)),
        "pmem": float(memssd.backend_iops(memssd.backend_config("pmem"), CACHELINE_B)),
        "dram": np.inf,
    }


@per_calibration
def _host_channel_gbps() -> float:
    """Random-read saturation bandwidth of one host DDR channel at Table 1's timings (dram block)."""
    return float(dram.saturation_bw_gbps(memssd.host_dram_timing(HOST_DDR_T_NS), "random", 1.0))


class Expand(Model):
    name = "expand"
    version = "1"
    summary = "ExPAND: topology-aware SSD-side prefetching for CXL-SSDs vs host prefetchers and local DRAM"
    source = "Oh et al., 'ExPAND', IEEE Micro 2025 (research/cxl-prefetch.md)"
    variant_param = "design"
    family = "mem-analytics"
    boundary = ("one dual-socket host (CPUs, board, its own DIMMs; local_dram adds the footprint to them) plus the "
                "CXL-SSDs that hold the footprint and the CXL switches of the switch levels")
    params = (
        Param("design", "expand", "Fig. 3a prefetchers, NoPrefetch, LocalDRAM; ideal = Fig. 1a's swept prefetcher", choices=DESIGNS),
        Param("workload", "pr", "Table 3 (CC: assumption, digest ambiguity 8)", choices=WORKLOADS),
        Param("media", "znand", "main results use the Table 2 Z-NAND CXL-SSD (digest ambiguity 11)", choices=MEDIA),
        Param("switch_levels", 0, "assumption: direct attach for the main results; Figs. 1c/4c-f sweep 1-4 levels",
              bounds=(0, 4), integer=True),
        Param("hop_latency_ns", link.CXL_SWITCH_NS, "link block: Pond switch traversal (digest ambiguity 1: t_sw unstated)",
              bounds=(5.0, 1000.0)),
        Param("switch_fanout", 1.0, "assumption: the article's CXL-SSD alone below its switch chain (Figs. 1c/4c); "
              "range 1-16 (a 16-port switch)", bounds=(1.0, 64.0),
              doc="devices whose traffic shares each switch level's port (M/D/1 wait on every access path)"),
        Param("topology_aware", True, "ExPAND reads the switch levels and DSLBIS latency at enumeration (M2)", choices=(True, False)),
        Param("effectiveness_frac", 0.9, "Fig. 1a sweeps 0-100%; Fig. 1c uses 90% (L1239)", bounds=(0.0, 1.0),
              doc="coverage = accuracy of the ideal prefetcher"),
        Param("timing_accuracy_frac", 0.9, "ExPAND's timeliness model is 90% accurate (M2)", bounds=(0.0, 1.0)),
        Param("host_timely_frac", HOST_TIMELY_FRAC, "fitted (calibration.py): ML prefetchers 4.4x over NoPrefetch (L1337)",
              bounds=(0.0, 1.0)),
        Param("structured_residual_frac", STRUCTURED_RESIDUAL_FRAC,
              "fitted (calibration.py): ExPAND's best workload 71.8x over NoPrefetch (Fig. 3a, L1365)", bounds=(0.0, 1.0),
              doc="share of a prefetcher's mispredictions left uncovered on structured (SPEC) patterns; 1 = coverage = accuracy"),
        Param("cpi_core", CPI_CORE, "fitted (calibration.py): perfect prefetch 3.9x faster than LocalDRAM (Fig. 1a, L1224)",
              bounds=(0.1, 4.0)),
        Param("mlp", 1.0, "assumption: misses on the graph kernels' dependent loads do not overlap", bounds=(1.0, 16.0)),
        Param("dram_reuse_alpha", DRAM_REUSE_ALPHA, "fitted (calibration.py): 4.5x slower than LocalDRAM at 80% effectiveness (Fig. 1a)",
              bounds=(0.0, 1.5)),
        Param("ssd_dram_gb", SSD_DRAM_B / GB, "CXL-SSD internal DRAM 1.5 GB (Table 2, L1329)", bounds=(0.1, 64.0)),
        *dram.params("host_", dram_ns=HOST_DDR_NS, bounds={"dram_ns": (20.0, 500.0)},
                     source="dram block: tRP=tRCD=tCAS=22 ns (Table 1, L1320)"),
        *link.params(gens=LINK_GENS, default_gen="pcie6", default_lanes=8, flit_mode="256B", source={
            "link_gen": "PCIe 6.0 64 GT/s, CXL 3.0 (Table 1, L1322)", "lanes": "assumption: x8 (width unstated)",
            "flit_mode": "CXL 3.x 256 B flit (link block)"}),
        Param("ctrl_ns", 10.0, "assumption: CXL.mem front end in controller hardware, a few cycles", bounds=(0.0, 500.0)),
        Param("working_set_scale", 1.0, "Table 3 working sets as printed", bounds=(0.01, 100.0),
              doc="multiplier on the workload's working set (capacity sizing and internal-DRAM hit rate)"),
        *dram.params(dram_usd_per_gib=_HOST_DRAM_USD_PER_GIB, bounds={"dram_usd_per_gib": (0.5, 50.0)},
                     source="cost block: dram_ddr5 (TrendForce 2023-04)"),
        Param("media_usd_per_gb", _ZNAND_USD_PER_GB, "cost block: nand_znand (priced as SLC; dated assumption)", bounds=(0.01, 20.0),
              doc="back-end media price (Z-NAND / PMEM; a DRAM back end uses dram_usd_per_gib)"),
        *knob_params("mem-analytics"),
        Param("host_base_dram_gib", 32.0, "assumption: the host's own DIMMs for the OS, code and stacks (one 16 GiB RDIMM "
              "per socket); the footprint sits on the CXL-SSDs", bounds=(0.0, 8192.0),
              doc="host DRAM besides the footprint (common metrics only)"),
        *dram.params("host_", channels=16, max_dram_gib=4096.0, bounds={"channels": (1, 64), "max_dram_gib": (16.0, 65536.0)},
                     doc={"channels": "host DDR channels (local_dram's bandwidth, common metrics only)",
                          "max_dram_gib": "most DRAM the host takes (local_dram holds the footprint there)"},
                     source={"channels": "assumption: the workload block's dual-socket host, 8 DDR channels per socket",
                             "max_dram_gib": "assumption: a dual-socket host with 32 DIMM slots of 128 GiB RDIMMs"}),
    )
    metrics = (
        Metric("time_ns_per_kinst", "min", "execution time per 1000 instructions"),
        Metric("speedup_vs_nopf_x", "max", "NoPrefetch CXL-SSD time over this design's time"),
        Metric("slowdown_vs_local_x", "min", "this design's time over LocalDRAM's"),
        Metric("e2e_latency_ns", "min", "end-to-end latency of an LLC miss to the memory"),
        Metric("switch_wait_ns", "min", "queueing at the switch ports, paid on every device access (demand and prefetch)"),
        Metric("hidden_miss_frac", "max", "share of LLC misses a timely prefetch hides"),
        Metric("ssd_dram_hit_frac", "max", "share of device reads served by the CXL-SSD's internal DRAM"),
        Metric("link_util_frac", "min", "busier-direction CXL link utilization (demand + prefetch traffic)"),
        Metric("predictor_gops", "min", "prediction work, operations per second / 1e9 (Table 4 ops per prediction)"),
        Metric("predictor_mem_kb", "min", "predictor state (Table 4)"),
        Metric("memory_usd", "min", "cost of holding the working set on this memory"),
        Metric("usd_per_gib", "min", "memory cost per GiB"),
        Metric("access_latency_ns", "min", "exposed latency of one miss of the family query at footprint_gib"),
        Metric("ssd_count", "min", "CXL-SSDs holding footprint_gib (0 for local_dram)"),
        Metric("system_bw_gbps", "max", "bandwidth of useful 64 B lines the system delivers at footprint_gib"),
    )

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        d = {k: p.is_("design", k) for k in DESIGNS}
        fl = design_flags(p)
        # the link's fields stay numpy scalars for a single point (cheap arithmetic, same values)
        lk = link.from_batch(p, columns=False)  # a 68 B flit at PCIe 6 evaluates as 256B, declared infeasible below
        gen, flit, valid = lk.gen, lk.flit, lk.flit_exists
        path_ns = memssd.cxl_path_ns(gen, p.lanes, flit, p.switch_levels, p.hop_latency_ns)
        direct_ns = memssd.cxl_path_ns(gen, p.lanes, flit, 0, p.hop_latency_ns)
        is_dram_media = p.is_("media", "dram")
        # --- the workload: one benchmark on every core, or a mix (one per core) -------------
        comps, same_stream, ws_b = _components(p)
        rf = _mean([c["rf"] for c in comps])
        link_gbps = link.cxl_mem_bw_gbps(gen, p.lanes, flit, rf)
        # unaware prefetchers are tuned to the direct-attached path: each switch level's
        # extra round trip lands on every access they cover
        aware = (d["expand"] | d["ideal"]) & p.is_("topology_aware", True)
        late_ns = np.where(aware, 0.0, path_ns - direct_ns)
        media_ns = p.pick("media", MEDIA_READ_NS)
        h_int = np.where(is_dram_media, 1.0,
                         memssd.powerlaw_hit_rate(p.ssd_dram_gb * GB, LLC_B, ws_b, p.dram_reuse_alpha))
        dev_ns = memssd.device_read_ns(h_int, p.ctrl_ns, _ssd_dram_ns(), media_ns)
        e2e_ns = LLC_LOOKUP_NS + path_ns + dev_ns
        local_ns = LLC_LOOKUP_NS + p.host_dram_ns  # the dram group's host_dram_ns (dram.from_batch's column)
        acc_eff = np.where(fl["glob"], fl["acc"] * same_stream, fl["acc"])
        pats = [_pattern(p, d, fl, c, same_stream, local_ns) for c in comps]  # what the switch wait leaves alone

        def run(wait_ns):
            """Every core's time per instruction with ``wait_ns`` of switch-port queueing on
            each device access (averaged over a mix's members), and its prefetch figures."""
            parts = [_core_times(p, fl, c, pat, acc_eff, e2e_ns + wait_ns, local_ns, late_ns + wait_ns)
                     for c, pat in zip(comps, pats)]
            return parts[0] if len(parts) == 1 else {k: _mean([q[k] for q in parts]) for k in parts[0]}

        r = run(0.0)
        # --- link traffic (M5), switch ports on every access path (M3/M5) -----------------
        link_util = _link_util(p, d, r, fl["acc"], link_gbps)
        wait_ns = switch_port_wait_ns(p.switch_levels, p.switch_fanout, link_util, link_gbps)
        if np.asarray(wait_ns).any():  # no wait anywhere (direct attach): the same figures again
            r = run(wait_ns)
            link_util = _link_util(p, d, r, fl["acc"], link_gbps)
        t, t_nopf, t_local = r["t"], r["t_nopf"], r["t_local"]
        coverage, timely, hidden = r["coverage"], r["timely"], r["hidden"]
        miss_per_ns = CORES * r["m"] / t
        predictor_gops = miss_per_ns * fl["ops"]  # predictions per ns x ops = Gops/s

        # --- cost of holding the working set (M8, cost block) -----------------------------
        ws_gb = ws_b / GB
        memory_usd = np.where(d["local_dram"], ws_gb * GB / GIB * p.dram_usd_per_gib, _ssd_usd(p, ws_gb, is_dram_media))

        # --- the family's system at footprint_gib (common metrics) -------------------------
        system = _system(p, d, gen, flit, path_ns, is_dram_media, coverage, timely, r["acc"], late_ns, local_ns, media_ns)

        nan = np.where(valid & np.isfinite(wait_ns), 1.0, np.nan)
        return {
            **system,
            "infeasible": {**lk.infeasible(), SWITCH_SATURATED: ~np.isfinite(wait_ns) & ~d["local_dram"],
                           **system["infeasible"]},
            "time_ns_per_kinst": 1000.0 * t * nan,
            "speedup_vs_nopf_x": np.divide(t_nopf, t, out=np.full_like(t, np.nan), where=np.isfinite(t)) * nan,
            "slowdown_vs_local_x": t / t_local * nan,
            "e2e_latency_ns": np.where(d["local_dram"], local_ns, e2e_ns + wait_ns) * nan,
            "switch_wait_ns": np.where(d["local_dram"], 0.0, wait_ns) * nan,
            "hidden_miss_frac": hidden,
            "ssd_dram_hit_frac": np.where(d["local_dram"], 0.0, h_int),
            "link_util_frac": link_util * nan,
            "predictor_gops": predictor_gops * nan,
            "predictor_mem_kb": fl["mem_kb"],
            "memory_usd": memory_usd,
            "usd_per_gib": memory_usd / (ws_gb * GB / GIB),
        }


def _mean(values: list):
    """Mean of a mix's member columns, summed in order (``np.mean(values, axis=0)``'s
    arithmetic without stacking them); one member is returned as it is."""
    if len(values) == 1:
        return values[0]
    total = values[0]
    for v in values[1:]:
        total = total + v
    return total / len(values)


def _design_lut(table: dict, default=0.0) -> np.ndarray:
    """A per-design column of ``table`` (``default`` where a design has no entry), by design code."""
    return np.array([table.get(k, default) for k in DESIGNS])


#: Per-design constants by design code (DESIGNS order): Table 4's accuracy, operations per
#: prediction and predictor state (0 without a prefetcher), and the prefetcher kinds.
_DESIGN_COLS = {
    "acc": _design_lut(ACCURACY), "ops": _design_lut(OPS_PER_PREDICTION), "mem_kb": _design_lut(PREDICTOR_MEM_KB),
    "rule": _design_lut({k: True for k in RULE}, False), "glob": _design_lut({k: True for k in GLOBAL_TRAINED}, False),
    "offset": _design_lut({k: True for k in OFFSET_PF}, False),
    "host_side": _design_lut({k: True for k in ("rule1", "rule2", "ml1", "ml2")}, False),
    "no_pf": _design_lut({"nopf": True, "local_dram": True}, False),
    "hit_ns": _design_lut({"expand": LLC_LOOKUP_NS}),
}


def design_flags(p: Batch) -> dict:
    """What each point's design is, looked up once per batch by design code: Table 4's
    accuracy (``acc``), operations per prediction (``ops``) and state (``mem_kb``); the
    prefetcher kinds (``rule``-based, ``glob``ally trained, ``offset``, ``host_side``,
    ``no_pf`` = no prefetcher at all); ``hit_ns``, a hidden miss's lookup (ExPAND's reflector
    buffer); ``local`` (local_dram); and ``timely``, the share of useful prefetches in time
    before the stencil correction of :func:`pattern_timeliness` (M2)."""
    code = p["design"]
    fl = {k: v[code] for k, v in _DESIGN_COLS.items()}
    fl["local"] = p.is_("design", "local_dram")
    expand_timely = np.minimum(np.maximum(p.timing_accuracy_frac / TIMELY_SATURATION, 0.0), 1.0)
    fl["timely"] = np.where(p.is_("design", "expand"), expand_timely, np.where(fl["host_side"], p.host_timely_frac, 1.0))
    return fl


#: The benchmarks each workload runs (one, or a mix's members).
_MEMBERS = {w: (w,) for w in WORKLOADS if w not in MIXES} | MIXES
_MEMBER_COUNT = np.array([len(_MEMBERS[w]) for w in WORKLOADS])


def _member_cols(j: int) -> dict[str, np.ndarray]:
    """Table 3 columns of member ``j`` of each workload, by workload code (cycling: a mix of
    2 in a batch with a mix of 4 counts each twice)."""
    member = [_MEMBERS[w][j % len(_MEMBERS[w])] for w in WORKLOADS]
    col = lambda table: np.array([table[m] for m in member], dtype=np.float64)  # noqa: E731
    return {"m": col(MPKI) / 1000.0, "rf": col(READ_FRAC), "structured": col(STRUCTURED),
            "stencil": col(STENCIL), "irregular": col(IRREGULAR)}


_MEMBER_COLS = [_member_cols(j) for j in range(MAX_MIX)]
#: Chance that two successive misses of the shared stream come from the same member (sum of
#: squared miss shares), and the members' summed working set, by workload code.
_SAME_STREAM = np.array([float(np.sum((v / v.sum()) ** 2))
                         for v in (np.array([MPKI[x] for x in _MEMBERS[w]]) for w in WORKLOADS)])
_WS_SUM_B = np.array([sum(WS_B[x] for x in _MEMBERS[w]) for w in WORKLOADS])


def _components(p: Batch) -> tuple[list[dict], np.ndarray, np.ndarray]:
    """The benchmarks the cores run: one (every core the same) or, for a mix (digest M7,
    Fig. 3b), one per member (cores split evenly).  Returns per member its misses per
    instruction, read share and pattern flags; the chance that two successive misses of the
    shared miss stream come from the same member (sum of squared miss shares; 1 for one
    benchmark); and the working set the internal DRAM sees (a mix's members share it).
    Lookups by workload code in tables built at import."""
    code = p["workload"]
    count = int(_MEMBER_COUNT[code].max()) if np.size(code) else 1
    comps = [{k: v[code] for k, v in _MEMBER_COLS[j].items()} for j in range(count)]
    return comps, _SAME_STREAM[code], _WS_SUM_B[code] * p.working_set_scale


def pattern_coverage(p: Batch, d: dict, acc, c: dict, same_stream, flags: dict | None = None) -> np.ndarray:
    """Share of one benchmark's LLC misses a prefetcher covers, by access pattern
    (research/cxl-prefetch.md L1243, L1333, M7).

    * irregular (graph) patterns: coverage = accuracy (Fig. 1a's convention); a rule-based
      prefetcher's accuracy there is at most 76% (L1243), whatever its Table 4 average;
    * stencil and structured (SPEC) patterns: only a share (``structured_residual_frac``) of
      the average mispredictions stays uncovered (L1333);
    * in a mix, a prefetcher that learns from the global miss stream (Rule1, ML1, ML2) finds
      its learned successor only when two successive misses come from the same benchmark
      (``same_stream``); PC-localized ones (ExPAND, Rule2's ISB) keep their accuracy (M7).
    ``flags``: :func:`design_flags` of the batch (looked up when not given)."""
    fl = design_flags(p) if flags is None else flags
    acc_p = np.where(fl["rule"] & (c["irregular"] > 0), np.minimum(acc, IRREGULAR_RULE_ACC_MAX), acc)
    acc_p = np.where(fl["glob"], acc_p * same_stream, acc_p)
    return 1.0 - (1.0 - acc_p) * np.where(c["structured"] > 0, p.structured_residual_frac, 1.0)


def pattern_timeliness(p: Batch, d: dict, c: dict, e2e_ns, flags: dict | None = None) -> np.ndarray:
    """Share of useful prefetches that arrive in time, by prefetcher and access pattern (M2).

    ExPAND times each prefetch from its timing predictor (accuracy saturating past 84%,
    L1382); host prefetchers issue on their trigger: a fitted share arrives in time
    (``host_timely_frac``), except that an offset prefetcher (Rule1, best-offset) on a
    stencil's fixed-offset sweep issues ``OFFSET_DISTANCE_LINES`` lines ahead, so it is in
    time when that many of the core's inter-miss gaps cover the miss latency.  Where no
    point runs an offset prefetcher on a stencil the fitted shares stand as they are."""
    fl = design_flags(p) if flags is None else flags
    timely = fl["timely"]
    sweep = fl["offset"] & (c["stencil"] > 0)
    if not np.asarray(sweep).any():
        return timely
    gap_ns = p.cpi_core / FREQ_GHZ / np.maximum(c["m"], 1e-12)  # core time between misses once hidden
    ahead = np.minimum(np.maximum(OFFSET_DISTANCE_LINES * gap_ns / e2e_ns, 0.0), 1.0)  # np.clip's values
    return np.where(sweep, np.maximum(timely, ahead), timely)


def _pattern(p: Batch, d: dict, fl: dict, c: dict, same_stream, local_ns) -> dict:
    """One benchmark's figures that do not depend on the device latency: the prefetcher's
    coverage (``ideal``: its effectiveness; none without a prefetcher) and LocalDRAM's time."""
    coverage = np.where(d["ideal"], p.effectiveness_frac, pattern_coverage(p, d, fl["acc"], c, same_stream, fl))
    return {"coverage": np.where(fl["no_pf"], 0.0, coverage),
            "t_local": memssd.stall_time_ns(p.cpi_core, FREQ_GHZ, c["m"], local_ns, p.mlp)}


def _core_times(p: Batch, fl: dict, c: dict, pat: dict, acc_eff, e2e_ns, local_ns, late_ns) -> dict:
    """One benchmark's time per instruction (M1): this design, NoPrefetch and LocalDRAM
    (``pat``: its :func:`_pattern`; ``acc_eff``: the accuracy a mix leaves global learners)."""
    coverage = pat["coverage"]
    timely = pattern_timeliness(p, None, c, e2e_ns, fl)
    hidden = coverage * timely
    # a hidden miss still looks up the reflector buffer (ExPAND) at the root complex
    # a saturated switch port (infinite wait) is declared infeasible; its 0 x inf stays NaN quietly
    with np.errstate(invalid="ignore"):
        exposed_ns = (1.0 - hidden) * e2e_ns + hidden * (fl["hit_ns"] + late_ns)
    exposed_ns = np.where(fl["local"], local_ns, exposed_ns)
    return {
        "t": memssd.stall_time_ns(p.cpi_core, FREQ_GHZ, c["m"], exposed_ns, p.mlp),
        "t_nopf": memssd.stall_time_ns(p.cpi_core, FREQ_GHZ, c["m"], e2e_ns, p.mlp),
        "t_local": pat["t_local"],
        "coverage": coverage, "timely": timely, "hidden": hidden, "m": c["m"], "acc": acc_eff,
    }


def _link_util(p: Batch, d: dict, r: dict, acc, link_gbps) -> np.ndarray:
    """Busier-direction CXL link utilization of one device (M5): demand misses, useful
    prefetches and useless ones ``(1 - A)/A`` of the useful, 64 B plus a header each."""
    miss_per_ns = CORES * r["m"] / r["t"]
    useful = miss_per_ns * r["coverage"]
    a = r["acc"]
    useless = np.where(a > 0, useful * (1.0 - np.maximum(a, 1e-9)) / np.maximum(a, 1e-9), 0.0)
    demand_b_per_ns = miss_per_ns * (1.0 - r["hidden"]) * CACHELINE_B
    pf_b_per_ns = (useful + useless) * (CACHELINE_B + PREFETCH_HEADER_B)
    return np.where(d["local_dram"], 0.0, (demand_b_per_ns + pf_b_per_ns) / link_gbps)


def switch_port_wait_ns(levels, fanout, link_util, link_gbps) -> np.ndarray:
    """Queueing at the switch ports, paid on every device access path (digest M5: "for a
    switch port shared by many expanders, use an M/D/1 queue per port").  Every access that
    reaches the device -- demand miss, useful or useless prefetch -- crosses each level's
    port, which carries the traffic of ``fanout`` devices like this one: an M/D/1 wait per
    level at that load (64 B lines at the link rate).  A topology-aware prefetcher's
    end-to-end latency is read once at enumeration (M2), so it misses this load-dependent
    wait: its prefetches arrive that much late, as the demand misses do."""
    rho = np.asarray(fanout, dtype=np.float64) * link_util
    service_ns = CACHELINE_B / link_gbps  # GB/s = B/ns
    levels = np.asarray(levels, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        w = np.where(rho < 1.0, queueing.md1_wait(np.minimum(rho, 0.999) / service_ns, service_ns), np.inf)
        return levels * np.where(levels > 0, w, 0.0)



def _ssd_usd(p: Batch, ws_gb, is_dram_media) -> np.ndarray:
    """Price of CXL-SSDs holding ``ws_gb``: media by capacity, plus per device the controller
    and its internal DRAM with the CXL premium (cost block)."""
    devices = np.ceil(ws_gb / DEVICE_GB)
    media_usd = np.where(is_dram_media, ws_gb * GB / GIB * p.dram_usd_per_gib, ws_gb * p.media_usd_per_gb)
    return media_usd + devices * (_SSD_CTRL_USD + p.ssd_dram_gb * GB / GIB * _SSD_DRAM_USD_PER_GIB) * (1.0 + _CXL_PREMIUM)


def _system(p: Batch, d, gen, flit, path_ns, is_dram_media, coverage, timely, acc, late_ns, local_ns, media_ns) -> dict:
    """The mem-analytics system: one host runs the family query over ``footprint_gib`` on
    CXL-SSDs of that capacity (``local_dram``: in the host's DIMMs)."""
    local = np.asarray(d["local_dram"])
    fp_gib = np.asarray(p.footprint_gib, dtype=np.float64)
    fp_gb = fp_gib * GIB / GB
    # latency: the internal DRAM's hit rate over the footprint, the prefetcher's share hidden
    h_int = np.where(is_dram_media, 1.0, memssd.powerlaw_hit_rate(p.ssd_dram_gb * GB, LLC_B, fp_gib * GIB, p.dram_reuse_alpha))
    e2e_ns = LLC_LOOKUP_NS + path_ns + memssd.device_read_ns(h_int, p.ctrl_ns, _ssd_dram_ns(), media_ns)
    hidden = coverage * timely
    ssd_ns = (1.0 - hidden) * e2e_ns + hidden * (LLC_LOOKUP_NS + late_ns)
    access_ns = np.where(local, local_ns, ssd_ns)
    # bandwidth: each device's link carries the demand misses and every prefetch (useful and
    # useless, with header); lines that miss the internal DRAM are back-end reads
    devices = np.where(local, 0.0, np.ceil(fp_gb / DEVICE_GB))
    useless_per_useful = np.where(acc > 0, (1.0 - np.maximum(acc, 1e-9)) / np.maximum(acc, 1e-9), 0.0)
    fetched = (1.0 - hidden) + coverage * (1.0 + useless_per_useful)  # lines per demand access
    link_b = (1.0 - hidden) * CACHELINE_B + coverage * (1.0 + useless_per_useful) * (CACHELINE_B + PREFETCH_HEADER_B)
    link_lines_per_s = link.cxl_mem_bw_gbps(gen, p.lanes, flit, 1.0) * GB / link_b
    with np.errstate(divide="ignore"):
        backend_lines_per_s = p.pick("media", backend_reads_per_s()) / np.maximum((1.0 - h_int) * fetched, 0.0)
    ssd_bw = devices * np.minimum(link_lines_per_s, backend_lines_per_s) * CACHELINE_B / GB
    bw = np.where(local, p.host_channels * _host_channel_gbps(), ssd_bw)
    # price and power: the host with its own DIMMs (+ the footprint for local_dram), the
    # CXL-SSDs, and the switches of every level (SWITCH_PORTS devices below each)
    switches = np.where(local, 0.0, p.switch_levels * np.ceil(devices / SWITCH_PORTS))
    base = workload.host_server(p.host_base_dram_gib)
    host_w = workload.host_server(p.host_base_dram_gib + np.where(local, fp_gib, 0.0))["power_w"]
    capex = (base["capex_usd"] + np.where(local, fp_gib * p.dram_usd_per_gib, _ssd_usd(p, fp_gb, is_dram_media))
             + switches * _SWITCH_USD)
    host_gib = p.host_base_dram_gib + np.where(local, fp_gib, 0.0)
    return {
        "infeasible": {LOCAL_TOO_BIG: np.asarray(host_gib > p.host_max_dram_gib)},
        "access_latency_ns": access_ns,
        "ssd_count": devices,
        "system_bw_gbps": bw,
        "work_per_s": workload.mem_queries_per_s(access_ns, bw),
        "capex_usd": capex,
        "power_w": host_w + devices * _SSD_W + switches * _SWITCH_W,
    }
