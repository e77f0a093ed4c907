"""The 18 gem5 workloads of the CXL-SSD study (Table 1b, ``workloads.csv``) as arrays, and
each workload's reuse skew derived from its LLC hit ratio.

Locality (research/cxl-ssd.md §6 "locality ... drives h_host"): a workload's line reuse is
taken as Zipf(alpha) over its footprint (the cache block's working-set model).  Table 1b
gives the LLC hit ratio of the accesses that miss the 64 KiB L1D; ``alpha`` is the skew at
which the cache block reproduces that ratio (bisection, once at import).  The same skew
then gives the SSD-internal DRAM's hit rate for the accesses that miss the LLC.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from dse.units import GB, KIB, MIB
from models.blocks import memssd

TABLE = Path(__file__).with_name("workloads.csv")

#: gem5 host caches (Table 1a, research/cxl-ssd.md §3): L1D 64 KB, L2 (the LLC) 2 MB.
L1D_B = 64 * KIB
LLC_B = 2 * MIB
#: Bisection bounds and steps for the reuse skew (alpha in [0, ALPHA_MAX]).
ALPHA_MAX = 2.0
BISECTION_STEPS = 40


def _rows() -> list[dict[str, str]]:
    with open(TABLE, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


ROWS = _rows()
NAMES: tuple[str, ...] = tuple(r["name"] for r in ROWS)
MPKI = np.array([float(r["mpki"]) for r in ROWS])
LOAD_FRAC = np.array([float(r["load_pct"]) for r in ROWS]) / 100.0
STORE_FRAC = np.array([float(r["store_pct"]) for r in ROWS]) / 100.0
FOOTPRINT_B = np.array([float(r["footprint_gb"]) for r in ROWS]) * GB
LLC_HIT_FRAC = np.array([float(r["llc_hit_pct"]) for r in ROWS]) / 100.0
HIGH_MISS = np.array([r["miss_class"] == "H" for r in ROWS])


def llc_hit_rate(alpha: np.ndarray, footprint_b: np.ndarray) -> np.ndarray:
    """LLC hit rate of the L1D misses under Zipf(alpha) reuse (cache block)."""
    return memssd.powerlaw_hit_rate(LLC_B - L1D_B, L1D_B, footprint_b, alpha)


def fit_alpha(target_hit: np.ndarray, footprint_b: np.ndarray) -> np.ndarray:
    """Reuse skew per workload that reproduces ``target_hit`` at the LLC (the hit rate
    rises with alpha, so bisection brackets it)."""
    lo = np.zeros_like(target_hit)
    hi = np.full_like(target_hit, ALPHA_MAX)
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        above = llc_hit_rate(mid, footprint_b) > target_hit
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    return 0.5 * (lo + hi)


#: Reuse skew of each workload, derived from Table 1b's LLC hit ratio and footprint.
ALPHA = fit_alpha(LLC_HIT_FRAC, FOOTPRINT_B)
