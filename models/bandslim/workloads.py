"""Value-size distributions of the article's db_bench workloads (``workloads.csv``) and
their expected transfer bases below a size threshold.

A workload is a probability mass over integer value sizes.  The model needs, for a
threshold ``tau`` (values below it go fine-grained, the rest by PRP), the expected
bases of the values below and at-or-above ``tau``; ``cumulative_bases()`` tabulates
``sum_{v < t} p(v) * bases(v)`` for every integer ``t`` once, so a design point is a
table lookup.  W(A) has one size (the ``value_b`` parameter) and is evaluated directly.
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

import numpy as np

from models.bandslim import transfer

TABLE = Path(__file__).resolve().parent / "workloads.csv"
#: Largest value size any tabulated workload produces (W(B)-W(D) top out at 2 KB).
SUPPORT_MAX_B = 2048
#: db_bench draws generalized-Pareto sizes without an upper bound and wraps them modulo
#: the maximum; sizes are enumerated up to here, where the remaining tail mass is
#: below 1e-15 for the shipped parameters.
GPD_ENUM_MAX_B = 1 << 20


@cache
def rows() -> tuple[dict[str, str], ...]:
    with TABLE.open(newline="", encoding="utf-8") as f:
        return tuple(csv.DictReader(f))


def names() -> tuple[str, ...]:
    return tuple(r["workload"] for r in rows())


def _floats(text: str) -> np.ndarray:
    return np.asarray([float(x) for x in text.split(";")], dtype=np.float64)


def gpd_size_pmf(k: float, sigma: float, theta: float, max_b: int) -> np.ndarray:
    """Mass over sizes 0..max_b of db_bench's generalized-Pareto value sizes.

    db_bench draws ``ceil(theta + sigma (u^-k - 1) / k)`` for uniform ``u`` (so
    P(size <= n) is the GPD CDF at ``n - theta``), replaces negative sizes by 10 and
    wraps sizes above the maximum modulo the maximum."""
    n = np.arange(0, GPD_ENUM_MAX_B + 1, dtype=np.float64)
    z = np.maximum(n - theta, 0.0)
    cdf = 1.0 - (1.0 + k * z / sigma) ** (-1.0 / k) if k != 0.0 else 1.0 - np.exp(-z / sigma)
    mass = np.diff(cdf, prepend=0.0)
    sizes = np.where(n > max_b, n.astype(np.int64) % max_b, n.astype(np.int64))
    pmf = np.bincount(sizes, weights=mass, minlength=max_b + 1)
    return pmf / pmf.sum()


def size_pmf(row: dict[str, str]) -> np.ndarray:
    """Mass over sizes 0..SUPPORT_MAX_B of one table row (zeros for the 'fixed' kind)."""
    pmf = np.zeros(SUPPORT_MAX_B + 1)
    kind = row["kind"]
    if kind == "mix":
        sizes, w = _floats(row["sizes_b"]).astype(np.int64), _floats(row["weights"])
        np.add.at(pmf, sizes, w / w.sum())
    elif kind == "gpd":
        g = gpd_size_pmf(float(row["gpd_k"]), float(row["gpd_sigma"]), float(row["gpd_theta"]), int(row["max_b"]))
        pmf[: g.size] = g
    elif kind != "fixed":
        raise ValueError(f"{TABLE}: workload {row['workload']}: unknown kind {kind!r} (fixed, mix, gpd)")
    return pmf


@cache
def cumulative_bases() -> np.ndarray:
    """``C[w, t, b] = sum_{v < t} p_w(v) * bases(v)[b]`` for t = 0 .. SUPPORT_MAX_B + 1
    (the last row is the full expectation).  Shape (workloads, SUPPORT_MAX_B + 2, N_BASES)."""
    sizes = np.arange(SUPPORT_MAX_B + 1, dtype=np.float64)
    basis = transfer.bases(sizes)  # (S, N_BASES)
    out = np.zeros((len(rows()), SUPPORT_MAX_B + 2, transfer.N_BASES))
    for i, row in enumerate(rows()):
        weighted = size_pmf(row)[:, None] * basis
        out[i, 1:] = np.cumsum(weighted, axis=0)
    return out


def fraction_below(workload: str, size_b: float) -> float:
    """Share of a tabulated workload's values strictly below ``size_b`` (for checks)."""
    i = names().index(workload)
    return float(size_pmf(rows()[i])[: int(np.ceil(size_b))].sum())
