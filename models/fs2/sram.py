"""Switch-cache SRAM area, power and silicon cost (fs2.md §2 item 7).

The article gives one CACTI 6.0 point: a 24 MB switch cache at 28 nm takes 89.48 mm² and
3.35 W.  The model scales it linearly with capacity (data arrays dominate a cache this
large), so the per-MB figures below are the article's point divided by 24 MB: an input,
not a prediction.  The silicon cost is the area at a 28 nm foundry wafer price.
"""

from __future__ import annotations

import math

import numpy as np

#: The article's CACTI point (fs2.md §3 sw_cache_power / sw_cache_area, ~L2896).
PAPER_CACHE_MB = 24.0
PAPER_CACHE_W = 3.35
PAPER_CACHE_MM2 = 89.48
W_PER_MB = PAPER_CACHE_W / PAPER_CACHE_MB
MM2_PER_MB = PAPER_CACHE_MM2 / PAPER_CACHE_MB

#: Commercial PCIe switch the article compares against (PEX8796: 18.6 W, ~L2896).
PCIE_SWITCH_W = 18.6

#: 28 nm foundry sale price per 300 mm wafer, USD (CSET, Khan & Mann 2020, "AI Chips: What
#: They Are and Why They Matter", foundry wafer price by node: $2,891 at 28 nm).
WAFER_28NM_USD = 2891.0
WAFER_AREA_MM2 = math.pi * 150.0**2
#: Assumption: 80% of the added die area yields (a large SRAM array is mostly repairable).
SRAM_YIELD_FRAC = 0.8
USD_PER_MM2 = WAFER_28NM_USD / WAFER_AREA_MM2 / SRAM_YIELD_FRAC


def cache_area_mm2(cache_mb, mm2_per_mb=MM2_PER_MB) -> np.ndarray:
    return np.asarray(cache_mb, dtype=np.float64) * mm2_per_mb


def cache_power_w(cache_mb, w_per_mb=W_PER_MB) -> np.ndarray:
    return np.asarray(cache_mb, dtype=np.float64) * w_per_mb
