"""The 13 workloads of the CXL-GPU study (``workloads.csv``) as per-workload arrays.

A workload is its instruction mix (Table 1b: compute ratio = share of non-memory
instructions, load ratio = loads / (loads + stores); digest ambiguity 16), its category,
and the access-pattern shares of its off-chip accesses.  Compute-intensive kernels make
87.5% fewer memory accesses than the load-intensive ones and mostly hit the caches
(003:L226), so their off-chip rate per memory instruction is 0.125 of the others';
a real-world workload takes the mean of its parts (gnn = bfs + vadd + gemm,
mri = sort + conv3, 003:L213).

The 0.125 is applied to loads and stores alike (the paper speaks of memory accesses).
Vortex's data caches are write-through by default (vortexgpgpu/vortex
``hw/rtl/VX_config.vh``: ``DCACHE_WRITEBACK``/``L2_WRITEBACK`` 0), which would send every
store of a compute-intensive kernel to memory; the model offers that reading through the
``compute_store_scale`` parameter, so the store rate is kept as two parts:
``stores = store_base + store_cs x scale`` (``store_cs`` is the compute-intensive share,
scale = 0.125 by default, 1 for write-through).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CATEGORIES = ("compute", "load", "store", "real")
#: Off-chip accesses per memory instruction of a compute-intensive kernel relative to a
#: load- or store-intensive one: 87.5% fewer (003:L226, FULL only).
COMPUTE_OFFCHIP_SCALE = 1.0 - 0.875


def _read() -> list[dict[str, str]]:
    with open(HERE / "workloads.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


ROWS = _read()
NAMES: tuple[str, ...] = tuple(r["name"] for r in ROWS)


def _offchip_scale(row: dict[str, str], by_name: dict[str, dict[str, str]]) -> float:
    if row["parts"]:
        parts = row["parts"].split("+")
        return float(np.mean([_offchip_scale(by_name[q], by_name) for q in parts]))
    return COMPUTE_OFFCHIP_SCALE if row["category"] == "compute" else 1.0


def _compute_share(row: dict[str, str], by_name: dict[str, dict[str, str]]) -> float:
    """Share of a workload's instruction mix that is compute-intensive kernels (1, 0, or
    the fraction of its parts for a real-world workload)."""
    if row["parts"]:
        parts = row["parts"].split("+")
        return float(np.mean([_compute_share(by_name[q], by_name) for q in parts]))
    return 1.0 if row["category"] == "compute" else 0.0


def _table() -> dict[str, np.ndarray]:
    by_name = {r["name"]: r for r in ROWS}
    compute = np.array([float(r["compute_pct"]) for r in ROWS]) / 100.0
    load = np.array([float(r["load_pct"]) for r in ROWS]) / 100.0
    scale = np.array([_offchip_scale(r, by_name) for r in ROWS])
    cshare = np.array([_compute_share(r, by_name) for r in ROWS])
    mem = 1.0 - compute
    shares = np.array([[float(r[k]) for k in ("seq", "around", "rand")] for r in ROWS])
    if not np.allclose(shares.sum(axis=1), 1.0, atol=1e-3):
        raise ValueError("workloads.csv: pattern shares must sum to 1 per row")
    return {
        "compute": compute,
        "load": load,
        # memory instructions per instruction that are loads / stores, times the category's
        # off-chip scale (the off-chip rate per memory instruction is fitted separately)
        "loads": mem * load * scale,
        "stores": mem * (1.0 - load) * scale,
        # stores = store_base + store_cs x compute_store_scale (see the module docstring)
        "store_base": mem * (1.0 - load) * (1.0 - cshare),
        "store_cs": mem * (1.0 - load) * cshare,
        "seq": shares[:, 0],
        "around": shares[:, 1],
        "rand": shares[:, 2],
        "category": np.array([CATEGORIES.index(r["category"]) for r in ROWS]),
    }


TABLE = _table()


def in_category(cat: str) -> list[str]:
    """Workload names of one category, in table order."""
    return [r["name"] for r in ROWS if r["category"] == cat]
