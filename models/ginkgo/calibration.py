"""Ginkgo calibration: derived constants and the locality exponents fitted to the article.

Derived:

* Unison's tag metadata per DRAM block: 512 MB for an 8 GB DRAM cache (BTree) and 256 MB
  for 4 GB (PR) (L1920, L1910) = 4 B per 64 B block;
* the direct-map (Alloy) conflict excess: Ginkgo's miss ratio is 5.24 % below Alloy's
  (L1916, relative per ambiguity default), on both workloads (the article gives only the
  mean); with Ginkgo = Unison x (1 + PLF excess) this fixes Alloy's excess over Unison.

Fitted (``fitted.toml``, reproduced by :func:`fit`), all as Zipf skews of the cache block:

* metadata locality at block granularity (Unison's tags) per workload, to Unison's 64 kB
  double-read fractions (L1926);
* metadata locality at huge-page granularity (Ginkgo's entries) per workload, to Ginkgo's
  near-zero double reads (BTree at 64 kB, L1926; PR at 16 kB, L1928; "almost all
  eliminated" read as 0.5 %);
* data reuse per workload (the DRAM cache miss ratio at 1:4, which the article shows only
  in Fig. 5) and the cost of one double read (a metadata DRAM read; the digest's default
  would be one 100 ns row miss), by least squares (in percentage points) to the gains left
  with a 5 ns index computation (1.0 % vs Alloy, 11.6 % vs Unison, L1938: a known latency
  measured against the AMAT) and to PR's Unison AMAT 1.68 % above Ginkgo (L1938).  The
  article's numbers do not close exactly; the residual lands mostly on the 5-ns-vs-Alloy point.

Not fitted and predicted: the 3.1 % and 13.5 % AMAT reductions, Unison at 16 kB, Ginkgo's
BTree at 16 kB.
"""

from __future__ import annotations

import csv
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from dse.units import GIB, KIB, MIB

HERE = Path(__file__).resolve().parent
FITTED_PATH = HERE / "fitted.toml"

# ----------------------------------------------------------------------------- article constants
DRAM_ROW_HIT_NS = 80.0  # Table 1 (L1906)
DRAM_ROW_MISS_NS = 100.0  # Table 1 (L1907)
CXL_NS = 200.0  # Table 1 (L1908)
MC_SRAM_KIB = 64.0  # Table 1 (L1905)
DRAM_TO_CXL = 0.25  # 1:4 (L1910)
BLOCK_B = 64.0  # management unit (L1912)
HUGE_PAGE_B = 2.0 * MIB  # 2 MB huge pages (L1813)
UNISON_WAYS = 4  # (L1912)
INDEX_COMPUTE_SENSITIVITY_NS = 5.0  # (L1938)
MISS_REDUCTION_VS_ALLOY = 0.0524  # (L1916)
#: Unison tag bytes per DRAM block: 512 MB of metadata over an 8 GB DRAM cache (L1920, L1910).
UNISON_TAG_B_PER_BLOCK = 512 * MIB / (8 * GIB / BLOCK_B)
#: Metadata-cache line: the MC SRAM caches metadata in 64 B lines (ambiguity default).
META_LINE_B = 64.0

#: Fit targets (percent): the gains left with a 5 ns index computation (L1938), which place the
#: absolute AMAT, and PR's Unison-over-Ginkgo AMAT (L1938).
FIT_TARGETS = {
    "gain_vs_alloy_5ns_pct": 1.0,
    "gain_vs_unison_5ns_pct": 11.6,
    "pr_unison_over_ginkgo_pct": 1.68,
}


def workloads() -> dict[str, dict[str, str]]:
    with (HERE / "workloads.csv").open(newline="", encoding="utf-8") as f:
        return {r["workload"]: r for r in csv.DictReader(line for line in f if not line.startswith("#"))}


def alloy_excess(plf_excess: float) -> float:
    """Alloy's miss ratio over the ideal/Unison one: Ginkgo's (1 + PLF excess) is 5.24 % below it."""
    return (1.0 + plf_excess) / (1.0 - MISS_REDUCTION_VS_ALLOY) - 1.0


@cache
def fitted() -> dict[str, dict[str, float]]:
    with FITTED_PATH.open("rb") as f:
        raw = tomllib.load(f)
    # the [uncertainty] table (fit sds, dse/fit_uncertainty.py) is not a workload's constants
    return {w: {k: float(v) for k, v in d.items()} for w, d in raw.items() if w != "uncertainty"}


def _meta_alpha(sram_b: float, meta_b: float, entry_b: float, target_miss: float) -> float:
    from scipy.optimize import brentq  # noqa: PLC0415

    from models.blocks import cache as cb  # noqa: PLC0415

    return float(brentq(lambda a: 1.0 - float(cb.zipf_hit_rate(sram_b / entry_b, meta_b / entry_b, a)) - target_miss, 0.0, 4.0, xtol=1e-10))


#: Claim ids (claims.yaml) of the fit targets, for leave-one-out refits (cv.py).
TARGET_CLAIMS = {
    "gain_vs_alloy_5ns": "gain_vs_alloy_5ns_pct",
    "gain_vs_unison_5ns": "gain_vs_unison_5ns_pct",
    "amat_pr_unison_higher": "pr_unison_over_ginkgo_pct",
}
#: Claim ids of the per-workload metadata-locality targets: (workload, fitted exponent).
META_CLAIMS = {
    "double_read_unison_btree_64k": ("btree", "meta_alpha_block"),
    "double_read_unison_pr_64k": ("pr", "meta_alpha_block"),
    "double_read_ginkgo_64k": ("btree", "meta_alpha_page"),
}
#: The a-priori cost of a double read when the fit has fewer targets than unknowns: one DRAM
#: row miss (digest §7 ambiguity default, Table 1 100 ns, L1907).
META_READ_PRIOR_NS = DRAM_ROW_MISS_NS


def fit(exclude: frozenset[str] = frozenset()) -> dict[str, dict[str, float]]:
    """Refit the locality exponents (see the module docstring).

    ``exclude``: claim ids left out of the fit (leave-one-out, cv.py).  A workload whose
    metadata-locality target is left out takes the other workload's exponent (the only
    other evidence of that locality); with one of the three AMAT targets left out, the
    double-read cost stays at its a-priori value (one 100 ns row miss) and the two data
    skews are solved from the two targets left."""
    from scipy.optimize import least_squares  # noqa: PLC0415

    from models.ginkgo import model as gm  # noqa: PLC0415

    out: dict[str, dict[str, float]] = {}
    for w, r in workloads().items():
        cxl_b = float(r["cxl_capacity_gib"]) * GIB
        unison_meta_b = cxl_b * DRAM_TO_CXL / BLOCK_B * UNISON_TAG_B_PER_BLOCK
        ginkgo_meta_b = float(r["ginkgo_meta_kib"]) * KIB
        entry_b = ginkgo_meta_b / (cxl_b / HUGE_PAGE_B)
        out[w] = {
            "meta_alpha_block": _meta_alpha(MC_SRAM_KIB * KIB, unison_meta_b, META_LINE_B, float(r["unison_double_read_64k"])),
            "meta_alpha_page": _meta_alpha(float(r["ginkgo_double_read_sram_kib"]) * KIB, ginkgo_meta_b, entry_b,
                                           float(r["ginkgo_double_read"])),
            "data_alpha": 0.5,
        }
    for cid, (w, key) in META_CLAIMS.items():
        if cid in exclude:
            other = next(o for o in out if o != w)
            out[w][key] = out[other][key]

    names = list(out)
    left_out = {TARGET_CLAIMS[c] for c in exclude if c in TARGET_CLAIMS}
    targets = {k: v for k, v in FIT_TARGETS.items() if k not in left_out}

    def gains(x: Any) -> dict[str, float]:
        consts = {w: dict(out[w], data_alpha=float(a)) for w, a in zip(names, x[:2])}
        amat = {}
        for scheme in ("alloy", "unison", "ginkgo"):
            for t in (0.0, INDEX_COMPUTE_SENSITIVITY_NS):
                for w in names:
                    amat[scheme, t, w] = gm.amat_point(scheme, w, consts, index_compute_ns=t, meta_read_ns=x[2])
        g = lambda other, t: 100 * sum(1 - amat["ginkgo", t, w] / amat[other, 0.0, w] for w in names) / len(names)  # noqa: E731
        return {
            "gain_vs_alloy_5ns_pct": g("alloy", INDEX_COMPUTE_SENSITIVITY_NS),
            "gain_vs_unison_5ns_pct": g("unison", INDEX_COMPUTE_SENSITIVITY_NS),
            "pr_unison_over_ginkgo_pct": 100 * (amat["unison", 0.0, "pr"] / amat["ginkgo", 0.0, "pr"] - 1),
        }

    free_meta = len(targets) >= 3

    def res(x: Any) -> list[float]:
        g = gains(x if free_meta else [*x, META_READ_PRIOR_NS])
        return [g[k] - v for k, v in targets.items()]

    if free_meta:
        s = least_squares(res, [0.5, 0.1, DRAM_ROW_MISS_NS], bounds=([0.0, 0.0, 0.0], [3.0, 3.0, 1000.0]), xtol=1e-12, ftol=1e-12)
        meta_ns = float(s.x[2])
    else:
        s = least_squares(res, [0.5, 0.1], bounds=([0.0, 0.0], [3.0, 3.0]), xtol=1e-12, ftol=1e-12)
        meta_ns = META_READ_PRIOR_NS
    for w, a in zip(names, s.x[:2]):
        out[w]["data_alpha"] = float(a)
    out["global"] = {"meta_read_ns": meta_ns}
    return out


#: The comment lines at the top of ``fitted.toml``.
FITTED_HEADER = (
    "Ginkgo locality exponents (Zipf skews), fitted by models.ginkgo.calibration.fit();",
    "see that module for the targets.  Regenerate: .venv/bin/python -m models.ginkgo.calibration",
)
#: Significant digits of the constants in ``fitted.toml``.
FITTED_DIGITS = 8


def write_fitted(values: dict[str, dict[str, float]], path: Path = FITTED_PATH, recompute_sd: bool = True) -> str:
    """Write ``fitted.toml`` (the shared writer: atomic, keeps or recomputes ``[uncertainty]``)."""
    from models.blocks.fit_harness import write_fitted as write  # noqa: PLC0415

    text = write(path, values, FITTED_HEADER, package="ginkgo", recompute_sd=recompute_sd, digits=FITTED_DIGITS)
    fitted.cache_clear()
    return text


if __name__ == "__main__":  # pragma: no cover
    vals = fit()
    write_fitted(vals)
    print(vals)
