"""Resource harvesting between SSDs: the article's decentralized processor split and DRAM
borrowing (the VH and OC baselines' host bottlenecks are in model.py).

Processor harvesting (digest M2, paper L158-179)
-------------------------------------------------
A borrower whose processor is busy (utilization above the watermark, 75%) sends part of
its commands to lenders' shadow queues; a lender whose processor is below the watermark
serves them, working on the borrower's mapping table over CXL (``overhead`` = +3.1%
processor time per redirected request).  The host splits commands with the load-balance
formula (L179)

    N_b / N_l = (U_l / U_b) x (sum W_l / W_shadow) x (W_borrow / sum W_b)

i.e. the odds of sending a command to the borrower equal ``omega x U_l / U_b`` with
``omega`` the product of the WRR weight ratios.  With ``C_b`` the borrower's cycles/s, ``C_L``
its share of the lenders' cycles/s and ``U_0`` the lenders' own utilization, a demand of
``a`` cycles/s puts ``(1-p) a / C_b`` on the borrower and ``U_0 + p a (1+o) / C_L`` on the
lenders; the formula's fixed point is the smaller root of a quadratic in ``p``
(:func:`redirect_frac`), kept within what each side can take: a lender stops lending at
the busy watermark (a busy processor does not lend, Table 1) and the borrower's own
cores run to saturation.  So the most one borrower can get processed
(:func:`harvest_capacity`) is its own cycles plus its share of the lenders' cycles below
the watermark, over 1 + o.  How the lenders are shared among several borrowers is the
allocation problem of ``optimize.py`` (LP against an even share).

DRAM harvesting (digest M3, L185)
---------------------------------
A borrower whose mapping-cache miss ratio is above the target (10%) borrows 2 MB
segments from lenders until it reaches the target or the lenders' lendable DRAM runs
out; lookups that hit a borrowed segment pay a CXL.mem round trip.
"""

from __future__ import annotations

import numpy as np

from models.espresso.ssd import MAP_GB_PER_TB


def lent_cycles(c_l, u0, u_max) -> np.ndarray:
    """Lender cycles/s available to a borrower (before dividing by 1 + o for the remote
    mapping-table overhead): up to the busy watermark ``u_max``; a lender above it is busy
    and lends nothing (Table 1)."""
    return np.where(u0 < u_max, c_l * np.maximum(u_max - u0, 0.0), 0.0)


def harvest_capacity(c_b, c_l, u0, overhead, u_max) -> tuple[np.ndarray, np.ndarray]:
    """(cycles/s of borrower work the borrower + its lender share can process, share
    redirected there).  Work-conserving: the borrower's own cores run to saturation and
    the lenders take what they can below the watermark, each redirected cycle costing
    them 1 + o."""
    lent = lent_cycles(c_l, u0, u_max) / (1.0 + overhead)
    a = c_b + lent
    return a, lent / a


def redirect_frac(demand, c_b, c_l, u0, overhead, omega, u_max) -> np.ndarray:
    """Share of a borrower's commands sent to lenders at a demand of ``demand`` cycles/s.

    The article's rule (1-p)/p = omega U_l / U_b with U_b = (1-p) A, U_l = u0 + p K
    (A = demand / c_b, K = demand (1+o) / c_l) gives (A - omega K) p^2 - (2 A + omega u0) p
    + A = 0, whose root in [0, 1] is
    2 A / (2 A + omega u0 + sqrt(omega^2 u0^2 + 4 A omega (u0 + K))).  The split is then
    kept within what the two sides can take: the lenders stop at the watermark (p at most
    their spare over the demand) and the borrower at saturation (p at least 1 - c_b/demand).
    ``c_l`` is the borrower's share of lender cycles/s (0 where none lends), ``u0`` the
    lenders' own utilization, ``overhead`` the extra lender work per redirected request,
    ``omega`` the WRR weight ratio (1 = equal weights).
    """
    a = demand / c_b
    wu = omega * u0
    wk = omega * demand * (1.0 + overhead) / np.maximum(c_l, 1e-30)
    p = 2.0 * a / (2.0 * a + wu + np.sqrt(wu * wu + 4.0 * a * (wu + wk)))
    p_max = lent_cycles(c_l, u0, u_max) / ((1.0 + overhead) * np.maximum(demand, 1e-30))
    p_min = 1.0 - c_b / np.maximum(demand, 1e-30)
    p = np.maximum(np.minimum(p, p_max), p_min)
    return np.where(c_l > 0, np.clip(p, 0.0, 1.0), 0.0)


def borrowed_dram_gb_per_tb(local_gb_per_tb, need_gb_per_tb, target_miss, lendable_gb_per_tb) -> np.ndarray:
    """DRAM (GB per TB of the borrower's flash) borrowed to bring the miss ratio of a
    uniform footprint needing ``need`` GB/TB down to ``target_miss``, limited by what the
    lenders can give each borrower."""
    want = need_gb_per_tb * (1.0 - target_miss) - local_gb_per_tb
    return np.clip(want, 0.0, np.maximum(lendable_gb_per_tb, 0.0))


__all__ = ["MAP_GB_PER_TB", "lent_cycles", "harvest_capacity", "redirect_frac", "borrowed_dram_gb_per_tb"]
