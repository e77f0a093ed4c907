"""`dse optimize espresso-harvest`: the lender-to-borrower processor allocation of an
Espresso JBOF as an LP, against the article's decentralized load-balance formula.

Each borrower i runs its own workload (a trace of Table 3 or a microbenchmark): it needs
``c_i`` firmware cycles per request, owns ``C_i`` cycles/s, and its data end (flash, link,
rated data path) caps it at ``D_i`` requests/s.  Each lender j has ``L_j`` cycles/s and
its own utilization ``u_j``; it lends up to the busy watermark ``w`` (75%, beyond it a
processor is busy and stops lending, Table 1); serving a borrower's request costs it
``1 + o`` times the borrower's cycles (o = 3.1%, remote mapping table over CXL).

LP (CVXPY, HiGHS):

    variables   z_i >= 0      borrower i's cycles/s spent on its own requests
                y_ij >= 0     lender j's cycles/s spent on borrower i (borrower-work units)
    maximize    sum_i b_i (z_i + sum_j y_ij) / c_i           (b_i: bytes per request; GB/s)
    subject to  z_i <= C_i
                (z_i + sum_j y_ij) / c_i <= D_i               data-end bound
                (1 + o) sum_i y_ij <= L_j (w - u_j)           lender spare
                y_ij = 0 where lender j is busy (u_j >= watermark)

Heuristic (the article's decentralized scheme, L150-179): every busy borrower (own
utilization above the 75% watermark at its data-end bound) claims every idle lender's
descriptor, so each idle lender's spare cycles are shared evenly among the busy borrowers
(the espresso model's assumption too), and each borrower splits its commands with the
load-balance formula within that share (``harvest.harvest_capacity``, the model's code).
Nobody reassigns a share a borrower cannot use (it is data-bound, or not busy): that is
the gap to the LP, (LP - heuristic) / LP.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dse.errors import DseError
from dse.optimize import Solution, solver_name
from models.espresso.data import WORKLOADS
from models.espresso.harvest import harvest_capacity

DEFAULT_BORROWERS = "ali0,mds,tencent2,fuji0,dap,ali1"
DEFAULT_LENDER_UTILS = "0,0,0.1,0.3,0.5,0.8"


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _inputs(borrowers: Any, lender_utils: Any, cores_per_ssd: int) -> tuple[list[str], np.ndarray]:
    """Borrower workloads and lender utilizations, checked."""
    wl = [str(w) for w in _as_list(borrowers)]
    for w in wl:
        if w not in WORKLOADS or w == "micro":
            raise DseError(f"borrower workload {w!r} is not a trace; allowed: {', '.join(x for x in WORKLOADS if x != 'micro')}")
    try:
        u = np.asarray([float(x) for x in _as_list(lender_utils)], dtype=float)
    except ValueError:
        raise DseError("lender_utils must be numbers in [0, 1], comma separated") from None
    if not wl or u.size == 0:
        raise DseError("give at least one borrower workload and one lender utilization")
    if np.any((u < 0) | (u > 1)):
        raise DseError("lender_utils must be within [0, 1]")
    if len(wl) + u.size > 24:
        raise DseError(f"{len(wl)} borrowers + {u.size} lenders exceed the 24 SSDs a JBOF model allows")
    if not 1 <= int(cores_per_ssd) <= 12:
        raise DseError("cores_per_ssd must be 1 to 12")
    return wl, u


def borrower_demands(wl: list[str], n_lenders: int, cores_per_ssd: int, dram_gb_per_tb: float) -> dict[str, Any]:
    """Per borrower, from the espresso model (Shrunk-class SSDs without harvesting): firmware
    cycles per request ``c``, data-end bound ``d`` (requests/s), bytes per request ``b``; and
    one core's clock ``core_hz``."""
    from dse import registry

    model = registry.get("espresso")
    base = {"design": "shrunk", "workload": wl, "cores_per_ssd": float(cores_per_ssd), "dram_gb_per_tb": dram_gb_per_tb,
            "jbof_ssds": float(len(wl) + n_lenders), "lenders": float(n_lenders), "trace_qd": 256.0}
    out = model.run(base)
    return {
        "c": out["firmware_kcycles_per_io"] * 1e3,
        "d": out["data_end_iops"],
        "b": out["throughput_gbps"] / out["iops"] * 1e9,  # bytes per request
        "core_hz": model.param_map()["core_ghz"].default * 1e9,
    }


def lp_allocation(dem: dict[str, Any], own: float, spare: np.ndarray, o: float) -> tuple[str, np.ndarray, np.ndarray]:
    """The LP of the module doc: (status, requests/s per borrower, lent cycles/s per borrower and lender)."""
    import cvxpy as cp

    c_i, d_i, b_i = dem["c"], dem["d"], dem["b"]
    z = cp.Variable(c_i.size, nonneg=True)
    y = cp.Variable((c_i.size, spare.size), nonneg=True)
    x = cp.multiply(z + cp.sum(y, axis=1), 1.0 / c_i)
    cons = [z <= own, x <= d_i, (1.0 + o) * cp.sum(y, axis=0) <= spare]
    prob = cp.Problem(cp.Maximize(cp.sum(cp.multiply(x, b_i)) / 1e9), cons)
    prob.solve(solver=solver_name())
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise DseError(f"the LP did not solve: {prob.status}")
    return prob.status, np.asarray(x.value, dtype=float), np.maximum(np.asarray(y.value, dtype=float), 0.0)


def formula_split(dem: dict[str, Any], own: float, u: np.ndarray, o: float, watermark: float) -> tuple[np.ndarray, np.ndarray]:
    """The article's decentralized split, lenders shared evenly among busy borrowers:
    (requests/s of each borrower alone, with the formula)."""
    c_i, d_i = dem["c"], dem["d"]
    x_alone = np.minimum(own / c_i, d_i)
    busy = d_i * c_i > watermark * own
    idle = u < watermark
    n_busy = max(int(busy.sum()), 1)
    # each busy borrower's share: 1/n_busy of every idle lender (cycles/s, lenders' own load u_j)
    share_hz = np.where(busy, (own * idle).sum() / n_busy, 0.0)
    u_share = float(np.sum(u * idle) / max(idle.sum(), 1))
    cap, _ = harvest_capacity(own, share_hz, u_share, o, watermark)
    return x_alone, np.where(busy, np.minimum(cap / c_i, d_i), x_alone)


def harvest(
    borrowers: str = DEFAULT_BORROWERS,
    lender_utils: str = DEFAULT_LENDER_UTILS,
    cores_per_ssd: int = 3,
    dram_gb_per_tb: float = 0.5,
    busy_watermark_frac: float = 0.75,
    remote_overhead_frac: float = 0.031,
) -> Solution:
    """Lender-to-borrower processor allocation: LP optimum vs the article's decentralized split."""
    wl, u = _inputs(borrowers, lender_utils, cores_per_ssd)
    dem = borrower_demands(wl, u.size, cores_per_ssd, dram_gb_per_tb)
    c_i, d_i, b_i, core_hz = dem["c"], dem["d"], dem["b"], dem["core_hz"]
    own = float(cores_per_ssd) * core_hz
    spare = np.where(u < busy_watermark_frac, own * (busy_watermark_frac - u), 0.0)
    o = remote_overhead_frac
    status, x_lp, y_lp = lp_allocation(dem, own, spare, o)
    x_alone, x_h = formula_split(dem, own, u, o, busy_watermark_frac)

    gbps_lp = float(np.sum(x_lp * b_i) / 1e9)
    gbps_h = float(np.sum(x_h * b_i) / 1e9)
    gbps_alone = float(np.sum(x_alone * b_i) / 1e9)
    rows = [
        {
            "borrower": w,
            "kcycles_per_io": float(c_i[i] / 1e3),
            "data_bound_gbps": float(d_i[i] * b_i[i] / 1e9),
            "alone_gbps": float(x_alone[i] * b_i[i] / 1e9),
            "formula_gbps": float(x_h[i] * b_i[i] / 1e9),
            "lp_gbps": float(x_lp[i] * b_i[i] / 1e9),
            "lp_lent_cores": float(y_lp[i].sum() / core_hz),
        }
        for i, w in enumerate(wl)
    ]
    return Solution(
        problem="espresso-harvest",
        status=status,
        objective_name="borrowers' throughput (GB/s)",
        objective=gbps_lp,
        rows=rows,
        summary={
            "no harvesting (GB/s)": gbps_alone,
            "article's decentralized formula (GB/s)": gbps_h,
            "LP optimum (GB/s)": gbps_lp,
            "gap of the formula to the LP (%)": (gbps_lp - gbps_h) / gbps_lp * 100.0,
            "LP gain over no harvesting (%)": (gbps_lp / gbps_alone - 1.0) * 100.0,
            "lender spare cores used by the LP": float(y_lp.sum() * (1.0 + o) / core_hz),
            "lender spare cores available": float(spare.sum() / core_hz),
        },
        formulation=__doc__ or "",
    )
