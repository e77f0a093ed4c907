"""ginkgo: a DRAM cache of CXL memory indexed by a per-huge-page learned index (Ginkgo,
IEEE Micro; shared/research/ginkgo.md), against Alloy Cache (direct-mapped) and Unison
Cache (4-way, tags in DRAM).

A memory request (digest §2.1, ambiguity defaults):

    index lookup          Ginkgo's PLF arithmetic (index_compute_ns; 0 in the main results)
    metadata              in the MC SRAM, or one more DRAM read when it misses there
                          ("double read"): Unison's tags, Ginkgo's per-huge-page entries
    DRAM cache            hit: one DRAM access; miss: the DRAM probe and then CXL memory

so ``AMAT = t_idx + L_dram + m (L_cxl [+ probe]) + f_dr L_meta`` with ``L_dram`` the row-hit /
row-miss mix.  Miss ratios come from the cache block's working-set model (Zipf reuse over
64 B blocks, DRAM = 1/4 of CXL), scaled per scheme: Unison's 4-way placement is taken as
the ideal one, Ginkgo adds its PLF approximation error, Alloy its direct-map conflicts.
Double reads are the MC SRAM's miss ratio over the metadata (cache block, Zipf over 64 B
tag lines for Unison, over per-huge-page entries for Ginkgo).  Constants: calibration.py.

Cost: DRAM and CXL memory (cost block prices, CXL premium), MC SRAM area.

System (mem-analytics family): one dual-socket host whose DDR5 caches CXL memory the size
of ``footprint_gib`` (DRAM = ``dram_to_cxl_ratio`` x footprint).  The access latency is the
same AMAT at that footprint for the family's uniformly random lines (no reuse skew in data
or metadata; the workload's index error and metadata per GiB); the
bandwidth is the smaller of the host DRAM's over the DRAM lines an access moves (hit or
probe, fill, double read) and the CXL devices' over the miss ratio.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import GIB, KIB
from models.blocks import cache, cost, dram, workload
from models.blocks.calibration import per_calibration
from models.ginkgo import calibration as cal

SCHEMES = ("alloy", "unison", "ginkgo", "ideal")
#: Scheme codes (indices into :data:`SCHEMES`) of the schemes that keep index metadata.
UNISON, GINKGO = SCHEMES.index("unison"), SCHEMES.index("ginkgo")
_WL = cal.workloads()
WORKLOADS: tuple[str, ...] = tuple(_WL)
#: The per-workload fitted locality constants (calibration.py; cv.py refits them without an anchor).
FITTED = cal.fitted()
#: Cost of one double read (metadata fetched from DRAM), ns: fitted (calibration.py).
META_READ_NS = FITTED["global"]["meta_read_ns"]

#: MC SRAM area, mm2 per KiB.  Assumption: ~0.03 um2 bit cells at 5-7 nm with ~2x array
#: overhead (IEEE ISSCC SRAM papers report 0.021-0.027 um2 high-density cells) -> ~0.5 um2
#: per bit x 8192 bits ~ 0.004 mm2 per KiB.
SRAM_MM2_PER_KIB = 0.004

# --- the mem-analytics system (family metrics only)
#: Local DDR5-4800 channels of the host (the family host of workload.host_server).
HOST_CHANNELS = workload.HOST_DRAM_CHANNELS
HOST_DRAM_STANDARD = "DDR5-4800"
#: Most DRAM the host's DIMM slots take (workload block: 16 channels x 2 DIMMs x 128 GiB).
HOST_MAX_DRAM_GIB = workload.HOST_MAX_DRAM_GIB
#: One CXL memory device: Micron CZ120 (product brief): 256 GB, up to 36 GB/s on PCIe 5.0 x8.
CXL_DEVICE_GIB = 256.0
CXL_DEVICE_GBPS = 36.0
#: CXL controller power, W.  Assumption (as the cxl-expander model): ~8 W for a Type-3 ASIC.
CXL_CTRL_W = 8.0
#: Devices one host attaches: the host's 64 lanes for memory devices (workload block) over
#: x8 devices.
MAX_CXL_DEVICES = workload.HOST_DEVICE_LANES // 8
TOO_MUCH_DRAM = "DRAM cache beyond the host's DIMM slots"
TOO_MANY_DEVICES = "more CXL devices than the host attaches (8 x8 devices on 64 lanes)"


@per_calibration
def _host_dram_gbps() -> float:
    """Sustainable random-read bandwidth of the host's DDR5 (dram block, calibrated)."""
    return HOST_CHANNELS * float(dram.saturation_bw_gbps(HOST_DRAM_STANDARD, "random", 1.0))


#: Footprint inflation of page-granular allocation over the touched 64 B blocks, averages of
#: the article's motivation study (Fig. 1a, L1821): 2.61x with 4 kB pages, 3.85x with 2 MB.
BLOAT_4K_X = 2.61
BLOAT_2M_X = 3.85
PAGE_SIZES_KIB = (4, 2048)


@lru_cache(maxsize=1)
def _touch_pattern() -> tuple[float, float]:
    """(touched-block density rho, mean untouched gap in blocks) of the run/gap model of
    :func:`footprint_inflation_x`, solved from the article's two averages (L1821)."""
    n4k, n2m = 4 * KIB / cal.BLOCK_B, cal.HUGE_PAGE_B / cal.BLOCK_B
    rho = 1.0 / BLOAT_2M_X
    for _ in range(50):  # fixed point: the 2 MB average sets rho, the 4 kB one the gap length
        q_pow = (1.0 - rho * BLOAT_4K_X) / (1.0 - rho)  # q^(n4k - 1)
        q = q_pow ** (1.0 / (n4k - 1.0))
        rho = (1.0 - (1.0 - rho) * q ** (n2m - 1.0)) / BLOAT_2M_X
    return rho, 1.0 / (1.0 - q)


def footprint_inflation_x(page_b: Any) -> np.ndarray:
    """Memory a workload occupies when allocated in pages of ``page_b`` over its touched
    64 B blocks ("huge-page memory bloating", digest §2 item 4, L1813-L1821).

    Touched blocks lie in runs separated by untouched gaps (an alternating renewal
    process along the address space, geometric gap lengths of mean ``g`` blocks, block
    density ``rho``).  A page of ``n`` blocks is allocated unless it lies wholly in a gap:
    P(untouched) = (1 - rho) (1 - 1/g)^(n - 1), so the inflation is
    ``(1 - P(untouched)) / rho``.  rho and g are solved from the article's 4 kB and 2 MB
    averages (2.61x, 3.85x); other page sizes are the model's interpolation."""
    rho, gap = _touch_pattern()
    n = np.maximum(np.asarray(page_b, dtype=np.float64) / cal.BLOCK_B, 1.0)
    return (1.0 - (1.0 - rho) * (1.0 - 1.0 / gap) ** (n - 1.0)) / rho


def _col(name: str) -> dict[str, float]:
    return {w: float(r[name]) for w, r in _WL.items()}


def amat_parts(
    scheme_code: Any, cxl_b: Any, plf_excess: Any, meta_b_ginkgo: Any, data_alpha: Any, meta_alpha_block: Any,
    meta_alpha_page: Any, *, dram_to_cxl: Any = cal.DRAM_TO_CXL, sram_kib: Any = cal.MC_SRAM_KIB, row_hit_ns: Any = cal.DRAM_ROW_HIT_NS,
    row_miss_ns: Any = cal.DRAM_ROW_MISS_NS, row_hit_frac: Any = 0.5, cxl_ns: Any = cal.CXL_NS, index_compute_ns: Any = 0.0,
    miss_probe: Any = True, meta_read_ns: Any = None, unison_tag_b: Any = cal.UNISON_TAG_B_PER_BLOCK, page_b: Any = cal.HUGE_PAGE_B,
) -> dict[str, np.ndarray]:
    """AMAT and its parts for scheme codes into :data:`SCHEMES` (vectorized)."""
    code = np.asarray(scheme_code)
    cxl_b = np.asarray(cxl_b, dtype=np.float64)
    dram_b = dram_to_cxl * cxl_b
    sram_b = np.asarray(sram_kib, dtype=np.float64) * KIB

    # DRAM-cache miss ratio (§2.3): working set over 64 B blocks, then the scheme's placement
    m_ideal = 1.0 - cache.zipf_hit_rate(dram_b / cal.BLOCK_B, cxl_b / cal.BLOCK_B, data_alpha)
    plf = np.asarray(plf_excess, dtype=np.float64)
    excess = np.choose(code, [cal.alloy_excess(plf), 0.0 * plf, plf, 0.0 * plf])
    miss = np.minimum(m_ideal * (1.0 + excess), 1.0)

    # metadata and double reads (§2.2): MC SRAM caching the index metadata
    unison_meta = dram_b / cal.BLOCK_B * unison_tag_b
    entry_b = meta_b_ginkgo / (cxl_b / page_b)  # Ginkgo keeps one index entry per page
    is_unison, is_ginkgo = code == UNISON, code == GINKGO
    f_u = np.where(is_unison, 1.0 - cache.zipf_hit_rate(sram_b / cal.META_LINE_B, unison_meta / cal.META_LINE_B, meta_alpha_block), 0.0)
    f_g = np.where(is_ginkgo, 1.0 - cache.zipf_hit_rate(sram_b / entry_b, meta_b_ginkgo / entry_b, meta_alpha_page), 0.0)
    double_read = f_u + f_g
    metadata_b = np.where(is_unison, unison_meta, np.where(is_ginkgo, meta_b_ginkgo, 0.0))

    # AMAT (§2.1)
    l_dram = row_hit_frac * row_hit_ns + (1.0 - row_hit_frac) * row_miss_ns
    probe = np.where(np.asarray(miss_probe, dtype=bool), l_dram, 0.0)
    t_idx = np.where(is_ginkgo, index_compute_ns, 0.0)
    meta_ns = META_READ_NS if meta_read_ns is None else meta_read_ns
    amat = t_idx + (1.0 - miss) * l_dram + miss * (probe + cxl_ns) + double_read * meta_ns
    return {"amat_ns": amat, "miss_frac": miss, "double_read_frac": double_read, "metadata_b": metadata_b, "dram_b": dram_b}


def amat_point(scheme: str, workload: str, consts: dict[str, dict[str, float]], **kw: Any) -> float:
    """AMAT (ns) of one scheme and workload with the given locality constants (for calibration.fit)."""
    r, c = _WL[workload], consts[workload]
    out = amat_parts(SCHEMES.index(scheme), float(r["cxl_capacity_gib"]) * GIB, float(r["plf_miss_excess"]),
                     float(r["ginkgo_meta_kib"]) * KIB, c["data_alpha"], c["meta_alpha_block"], c["meta_alpha_page"], **kw)
    return float(out["amat_ns"])


class Ginkgo(Model):
    name = "ginkgo"
    version = "2"
    family = "mem-analytics"
    boundary = (
        "one dual-socket host (CPUs, board, NIC, its DDR5 DRAM cache) plus the CXL memory devices holding footprint_gib "
        "(DRAM at the CXL premium, controllers)"
    )
    summary = "Ginkgo learned-index DRAM cache of CXL memory vs Alloy and Unison: AMAT, metadata, double reads, memory cost"
    source = "Ginkgo: A Learned-Index Enhanced Tiered Memory System, IEEE Micro (shared/research/ginkgo.md)"
    variant_param = "scheme"
    params = (
        Param("scheme", "ginkgo", "Ginkgo and the article's baselines Alloy and Unison (L1912); ideal = minimum-conflict index (L1825)",
              choices=SCHEMES),
        Param("workload", "btree", "BTree and PR, the two evaluated workloads (L1910)", choices=WORKLOADS),
        Param("dram_row_hit_ns", cal.DRAM_ROW_HIT_NS, "Table 1: 80 ns on a row-buffer hit (L1906)", bounds=(10.0, 500.0)),
        Param("dram_row_miss_ns", cal.DRAM_ROW_MISS_NS, "Table 1: 100 ns on a row-buffer miss (L1907)", bounds=(10.0, 500.0)),
        Param("row_hit_frac", 0.5, "not stated; digest ambiguity default 0.5 (90 ns)", bounds=(0.0, 1.0)),
        Param("cxl_latency_ns", cal.CXL_NS, "Table 1: CXL memory 200 ns (L1908)", bounds=(50.0, 2000.0)),
        Param("index_compute_ns", 0.0, "main results without index compute cost; 5 ns in the sensitivity study (L1938)", bounds=(0.0, 100.0)),
        Param("mc_sram_kib", cal.MC_SRAM_KIB, "Table 1: 64 kB memory-controller SRAM (L1905); 16 kB in the scalability study (L1928)",
              bounds=(1.0, 65536.0)),
        Param("dram_to_cxl_ratio", cal.DRAM_TO_CXL, "1:4 DRAM to CXL (L1910)", bounds=(0.01, 1.0)),
        Param("capacity_scale", 1.0, "CXL capacity as in the article (32 GB BTree, 16 GB PR, L1910)", bounds=(0.01, 1024.0),
              doc="footprint / CXL capacity relative to the article's"),
        Param("page_size_kib", 2048, "2 MB huge pages, the unit Ginkgo's learned index is built over (L1813); 4 kB base pages "
              "(L1813) inflate the footprint less (2.61x vs 3.85x, L1821) but need an index entry per 4 kB page",
              bounds=(4, 2048), doc="OS page size of the CXL memory: sets the allocated footprint and Ginkgo's index entries"),
        Param("miss_probe", True, "digest ambiguity default: a miss pays one DRAM probe before CXL", choices=(True, False)),
        Param("meta_read_ns", META_READ_NS, "fitted with the data reuse to the 5-ns results and PR's 1.68 % (L1938); calibration.py",
              bounds=(0.0, 500.0), doc="one double read: the metadata DRAM access"),
        Param("unison_tag_b", cal.UNISON_TAG_B_PER_BLOCK, "derived: 512 MB of tags for an 8 GB DRAM cache (L1920)", bounds=(0.5, 64.0)),
        Param("dram_usd_per_gib", cost.component_price("dram_ddr5").value, "cost block: dram_ddr5 (dated)", bounds=(0.1, 100.0)),
        Param("cxl_premium_frac", cost.component_price("cxl_premium_frac").value, "cost block: cxl_premium_frac (Espresso)",
              bounds=(0.0, 5.0), doc="CXL memory price over plain DRAM"),
        # the family knob sizes the CXL memory of the common metrics only; the article's
        # metrics keep the article's capacities (workload x capacity_scale)
        *knob_params("mem-analytics"),
    )
    metrics = (
        Metric("amat_ns", "min", "average memory access time"),
        Metric("miss_frac", "min", "DRAM-cache miss ratio"),
        Metric("double_read_frac", "min", "requests that read metadata from DRAM"),
        Metric("metadata_b", "min", "index metadata bytes"),
        Metric("metadata_over_sram_x", "min", "index metadata over the MC SRAM"),
        Metric("dram_capacity_gib", None, "DRAM cache capacity"),
        Metric("footprint_inflation_x", "min", "allocated memory over the touched 64 B blocks at page_size_kib"),
        Metric("cxl_capacity_gib", None, "CXL memory allocated at page_size_kib (the article's capacity at 2 MB pages)"),
        Metric("memory_usd", "min", "DRAM + CXL memory (cost block prices)"),
        Metric("usd_per_gib", "min", "memory cost per GiB of CXL capacity"),
        Metric("sram_area_mm2", "min", "MC SRAM area"),
        Metric("access_latency_ns", "min", "AMAT with CXL memory of footprint_gib (the family system)"),
        Metric("system_bw_gbps", "max", "bandwidth of 64 B accesses the DRAM cache and CXL devices sustain at footprint_gib"),
        Metric("cxl_device_count", None, "CXL memory devices holding footprint_gib"),
    )

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        # page size (footprint_inflation_x): the article's CXL capacity is the footprint allocated
        # in 2 MB pages; other pages allocate more or less of it, and Ginkgo keeps one index
        # entry (of the workload's measured size) per allocated page
        page_b = np.asarray(p.page_size_kib, dtype=np.float64) * KIB
        inflation = footprint_inflation_x(page_b)
        alloc = inflation / footprint_inflation_x(cal.HUGE_PAGE_B)
        cxl_b = p.pick("workload", _col("cxl_capacity_gib")) * GIB * p.capacity_scale * alloc
        entries = cxl_b / page_b / (p.pick("workload", _col("cxl_capacity_gib")) * GIB / cal.HUGE_PAGE_B)
        meta_g = p.pick("workload", _col("ginkgo_meta_kib")) * KIB * entries  # per page, so it scales
        fit = {k: p.pick("workload", {w: FITTED[w][k] for w in WORKLOADS}) for k in ("data_alpha", "meta_alpha_block", "meta_alpha_page")}
        probe = p.pick("miss_probe", {True: True, False: False})
        out = amat_parts(
            p.scheme, cxl_b, p.pick("workload", _col("plf_miss_excess")), meta_g, fit["data_alpha"], fit["meta_alpha_block"],
            fit["meta_alpha_page"], dram_to_cxl=p.dram_to_cxl_ratio, sram_kib=p.mc_sram_kib, row_hit_ns=p.dram_row_hit_ns,
            row_miss_ns=p.dram_row_miss_ns, row_hit_frac=p.row_hit_frac, cxl_ns=p.cxl_latency_ns, index_compute_ns=p.index_compute_ns,
            miss_probe=probe, meta_read_ns=p.meta_read_ns, unison_tag_b=p.unison_tag_b, page_b=page_b,
        )
        cxl_gib = cxl_b / GIB
        dram_gib = out["dram_b"] / GIB
        memory_usd = dram_gib * p.dram_usd_per_gib + cxl_gib * p.dram_usd_per_gib * (1.0 + p.cxl_premium_frac)

        # --- the mem-analytics system: the same AMAT with CXL memory of the family footprint
        # (index metadata per GiB as the workload's), DRAM cache at the ratio
        fp_gib = np.asarray(p.footprint_gib, dtype=np.float64)
        meta_per_gib = (p.pick("workload", _col("ginkgo_meta_kib")) * KIB / p.pick("workload", _col("cxl_capacity_gib"))
                        * cal.HUGE_PAGE_B / page_b)
        # the family query reads lines at random: no reuse skew in the data or the metadata
        # (Zipf alpha 0); the workload keeps its index error and metadata per GiB
        sys = amat_parts(
            p.scheme, fp_gib * GIB, p.pick("workload", _col("plf_miss_excess")), meta_per_gib * fp_gib, 0.0,
            0.0, 0.0, dram_to_cxl=p.dram_to_cxl_ratio, sram_kib=p.mc_sram_kib,
            row_hit_ns=p.dram_row_hit_ns, row_miss_ns=p.dram_row_miss_ns, row_hit_frac=p.row_hit_frac, cxl_ns=p.cxl_latency_ns,
            index_compute_ns=p.index_compute_ns, miss_probe=probe, meta_read_ns=p.meta_read_ns, unison_tag_b=p.unison_tag_b,
            page_b=page_b,
        )
        sys_dram_gib = sys["dram_b"] / GIB
        n_dev = np.ceil(fp_gib / CXL_DEVICE_GIB - 1e-9)
        miss = sys["miss_frac"]
        # DRAM lines per access: the hit or the probe, the fill of a miss, a double read
        dram_lines = 1.0 + miss * np.where(probe, 1.0, 0.0) + sys["double_read_frac"]
        with np.errstate(divide="ignore"):
            bw = np.minimum(_host_dram_gbps() / dram_lines, np.where(miss > 0, n_dev * CXL_DEVICE_GBPS / miss, np.inf))
        host = workload.host_server(0.0)
        sys_mem_usd = sys_dram_gib * p.dram_usd_per_gib + fp_gib * p.dram_usd_per_gib * (1.0 + p.cxl_premium_frac)
        return {
            "infeasible": {TOO_MUCH_DRAM: np.asarray(sys_dram_gib > HOST_MAX_DRAM_GIB), TOO_MANY_DEVICES: np.asarray(n_dev > MAX_CXL_DEVICES)},
            "access_latency_ns": sys["amat_ns"],
            "system_bw_gbps": bw,
            "cxl_device_count": n_dev,
            "work_per_s": workload.mem_queries_per_s(sys["amat_ns"], bw),
            "capex_usd": host["capex_usd"] + sys_mem_usd,
            "power_w": host["power_w"] + (sys_dram_gib + fp_gib) * workload.DRAM_W_PER_GIB + n_dev * CXL_CTRL_W,
            "amat_ns": out["amat_ns"],
            "miss_frac": out["miss_frac"],
            "double_read_frac": out["double_read_frac"],
            "metadata_b": out["metadata_b"],
            "metadata_over_sram_x": out["metadata_b"] / (p.mc_sram_kib * KIB),
            "dram_capacity_gib": dram_gib,
            "footprint_inflation_x": inflation,
            "cxl_capacity_gib": cxl_gib,
            "memory_usd": memory_usd,
            "usd_per_gib": memory_usd / cxl_gib,
            "sram_area_mm2": p.mc_sram_kib * SRAM_MM2_PER_KIB,
        }
