"""IKS hardware: LPDDR packages behind near-memory accelerators (digest §1, §3).

One IKS = 8 LPDDR5X packages x 8 channels, each package driven by its own NMA chip; a
channel is x16 at 8533 MT/s (17 GB/s) and holds 8 GB.  Channel bandwidth, sustainable
stream / random bandwidth and loaded latency come from the dram block with its JEDEC
timing set, re-shaped to the x16 channel (a 64 B access is a BL32 burst of 16 data
clocks instead of the x32 channel's BL16 of 8, and an open row is one die's 2 KB page,
32 such accesses, instead of the x32 channel's 4 KB).

The channel tables are computed once per calibration in force (`tech_table()`) and looked
up per design point.
"""

from __future__ import annotations

import numpy as np
from typing import Any

from dse.units import CACHELINE_B, GB
from models.blocks import dram
from models.blocks.calibration import per_calibration

# ----------------------------------------------------------------------------- organisation
#: Packages (= NMAs) per IKS.  Digest §3 n_lpddr5x_packages / n_nma (~L2952).
PACKAGES = 8
#: Channels per package.  Digest §3 channels_per_pkg (~L2991).
CHANNELS_PER_PACKAGE = 8
#: Channels per IKS (8 x 8 = 64).  Digest §3 total_channels (~L2991).
CHANNELS = PACKAGES * CHANNELS_PER_PACKAGE
#: Capacity of one channel, GB.  Digest §3 channel_capacity (~L3103): 8 GB.
CHANNEL_CAPACITY_GB = 8.0
#: Capacity of one IKS, GB (64 x 8 = 512).  Digest §3 iks_capacity (~L2952).
DEVICE_CAPACITY_GB = CHANNELS * CHANNEL_CAPACITY_GB
#: Emulated uplink between one NMA and the CPU, GB/s; 8 NMAs x 8 = the x16 Gen5 link's
#: 64 GB/s.  Digest §3 nma_cpu_uplink (~L3126) and check d_uplink_sum.
NMA_UPLINK_GBPS = 8.0

#: Hz per GHz (clock conversions).
HZ_PER_GHZ = 1e9

# ----------------------------------------------------------------------------- NMA
#: Processing engines per NMA.  Digest §3 pe_per_nma (~L2995).
PE_PER_NMA = 64
#: Embedding vectors one PE scores per D cycles (column-major layout).  Digest §3
#: vectors_per_pe_group (~L2995-L2997).
VECTORS_PER_GROUP = 68
#: Queries served by one pass over the corpus: one query per PE, vectors broadcast to all
#: PEs (digest §7 ambiguity 3, default B_max = 64).
QUERIES_PER_PASS = PE_PER_NMA

# ----------------------------------------------------------------------------- memory technology
#: LPDDR generations a package may use (the dram block's timing sets).
TECHS = ("lpddr5x_8533", "lpddr5_6400")
TECH_STANDARD = {"lpddr5x_8533": "LPDDR5X-8533", "lpddr5_6400": "LPDDR5-6400"}
#: Data clocks per 64 B access on a x16 channel: BL32 (JESD209-5: x16 LPDDR5/5X channels
#: move 32 B per BL16, 64 B per BL32).
X16_BURST_CYC = 16.0
#: 64 B lines in one open row of a x16 channel: a x16 LPDDR5/5X die has a 2 KB page
#: (JESD209-5; Micron MT62F datasheet), i.e. 32 BL32 accesses.  The dram block's LPDDR sets
#: describe a x32 channel of two x16 dies in lockstep, whose row is 4 KB (64 lines).
X16_PAGE_B = 2048.0
X16_LINES_PER_ROW = int(X16_PAGE_B // CACHELINE_B)
#: Read fraction of the CPU co-tenant's traffic.  Assumption: a GET-heavy key-value mix
#: (Facebook ETC: ~30 GETs per SET, Atikoglu et al., SIGMETRICS'12).
TENANT_READ_FRAC = 0.97
#: Utilization grid on which the co-tenant's loaded latency is tabulated.
UTIL_GRID = np.linspace(0.0, 0.995, 400)


def channel_timing(tech: str) -> dram.DramTiming:
    """The dram block's timing set of ``tech`` shaped to one x16 IKS channel: BL32 per 64 B
    access and the 2 KB page of one x16 die."""
    return dram.timing(TECH_STANDARD[tech], burst_cyc=X16_BURST_CYC, lines_per_row=X16_LINES_PER_ROW)


def _tech_row(tech: str) -> dict[str, object]:
    t = channel_timing(tech)
    rand_sat = float(dram.saturation_bw_gbps(t, "random", TENANT_READ_FRAC))
    lat = dram.loaded_latency_ns(t, UTIL_GRID * rand_sat, "random", TENANT_READ_FRAC)
    return {
        "peak_gbps": dram.peak_bw_gbps(t),
        "stream_sat_gbps": float(dram.saturation_bw_gbps(t, "stream", 1.0)),
        "random_sat_gbps": rand_sat,
        "random_idle_ns": float(dram.idle_latency_ns(t, "random")),
        "random_latency_ns": np.asarray(lat, dtype=np.float64),
        # FR-FCFS serves the row hits of a streaming neighbour first: a row miss waits on
        # average for half an open row of stream bursts
        "row_drain_ns": 0.5 * t.lines_per_row * X16_BURST_CYC * t.tck_ns,
    }


@per_calibration
def tech_table() -> dict[str, Any]:
    """Every tech's channel figures from the dram block under the calibration in force:
    ``rows`` (tech -> figures) and per-tech arrays indexed by the tech code (``peak_gbps``,
    ``stream_sat_gbps``, ``random_sat_gbps``, ``row_drain_ns``; ``latency_ns``: the
    tabulated loaded latencies, one row per tech code)."""
    rows = {k: _tech_row(k) for k in TECHS}
    table: dict[str, Any] = {"rows": rows}
    for key in ("peak_gbps", "stream_sat_gbps", "random_sat_gbps", "row_drain_ns"):
        table[key] = np.array([rows[k][key] for k in TECHS], dtype=np.float64)
    table["latency_ns"] = np.stack([rows[k]["random_latency_ns"] for k in TECHS])
    return table


_GRID_STEP = UTIL_GRID[1] - UTIL_GRID[0]


def tenant_access_ns(tech_code, util) -> np.ndarray:
    """Mean loaded latency (ns) of the co-tenant's random 64 B accesses on a channel at
    ``util`` of its random-traffic saturation bandwidth (dram block, tabulated on a uniform
    grid and interpolated linearly); inf at ``util >= 1``."""
    u = np.asarray(util, dtype=np.float64)
    x = np.clip(u, 0.0, UTIL_GRID[-1]) / _GRID_STEP
    lo = np.minimum(x.astype(np.int64), len(UTIL_GRID) - 2)
    w = x - lo
    flat = tech_table()["latency_ns"].reshape(-1)
    base = np.asarray(tech_code) * len(UTIL_GRID) + lo
    lat = flat[base] * (1.0 - w) + flat[base + 1] * w
    return np.where(u >= 1.0, np.inf, lat)


def internal_bw_gbps(tech_code) -> np.ndarray:
    """Peak internal bandwidth of one IKS: 64 channels x channel peak (8 x 136 GB/s for
    LPDDR5X, digest §2 mechanism 1)."""
    return CHANNELS * tech_table()["peak_gbps"][np.asarray(tech_code)]


def corpus_vectors(corpus_gb, dim, elem_b) -> np.ndarray:
    """Embedding vectors in a corpus of ``corpus_gb`` GB of ``dim``-element vectors."""
    return np.asarray(corpus_gb, dtype=np.float64) * GB / (np.asarray(dim) * np.asarray(elem_b))
