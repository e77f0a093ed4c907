"""Fleet metrics over the view-count distribution (article Fig 1 and Fig 5b; digest M5, M6).

Per video, the baseline's yearly cost is the lower envelope over the tier set of the lines
``A_t + B_t n`` (n = views a year; A = storage, B = retrieval per view): a concave, piecewise
linear function with breakpoints ``x_1 < x_2`` (the envelope has at most three tiers in every
tier set, see ``tiers.STRUCTURES``).  NCS in tier t costs ``r A_t + T + (r B_t + c) n`` (r = LR/HR
size, T = amortized DNN training, c = SR $ per access); in its cheapest tier it saves
``f(n) = (1 - r) B(n) - T - c n``, also concave, so the videos where NCS pays form one interval
``[n_lo, n_hi]`` (n_hi is the crossover; 91 views a year, 4 days, in the article).

With a lognormal n every fleet average is a sum of ``A x dF + B x dG`` over segments, with
``F`` the CDF and ``G`` the partial mean (see ``popularity``).  Request fees are left out of
the fleet sums (under 0.5% of a 1-min clip's retrieval cost at the article's prices).

Upgrades (L553): a video is upgraded when NCS in a tier of better service (higher
availability, or equal availability and lower latency) costs no more than the baseline does
in its own tier.  Within a baseline segment j each candidate tier gives a half-line of n; the
union of half-lines is measured in closed form.
"""

from __future__ import annotations

import numpy as np


KEYS = ("fleet_baseline_usd", "fleet_ncs_usd", "ncs_share", "multitier_share", "breakeven_views", "n_hi", "n_lo", "upgraded_share")


def sums(a_t, b_t, r, train, c, structure, mu, sigma):
    """Fleet averages per video and year, for points that share one tier set.

    a_t, b_t: tier -> (n,) baseline storage $/year and retrieval $/view of the video in that
    tier (every tier of the set); r, train, c: (n,) LR/HR size ratio, training $/year, SR $ per
    view; structure: ``tiers.STRUCTURES[i]`` (envelope tiers, upgrade candidates per segment);
    mu, sigma: (n,) lognormal of annual views.  Returns a dict of (n,) arrays.
    """
    from scipy.special import ndtr  # noqa: PLC0415 (kept out of module import)

    seq, cands = structure
    n, K = np.shape(r)[0], len(seq)
    A = [a_t[t] for t in seq]
    B = [b_t[t] for t in seq]
    x = envelope_breakpoints(A, B)
    edges = [np.zeros(n), *x, np.full(n, np.inf)]
    alpha, beta, n_lo, n_hi, none = ncs_interval(A, B, r, train, c)
    ups = upgrade_half_lines(a_t, b_t, A, B, r, train, c, cands, edges)
    cdf = Segments(x, n_lo, n_hi, mu, sigma, ndtr)

    base = sum(A[j] * (cdf.F_e[j + 1] - cdf.F_e[j]) + B[j] * (cdf.G_e[j + 1] - cdf.G_e[j]) for j in range(K))
    # NCS saving on the winning interval: each segment clipped into [n_lo, n_hi] (F, G monotone)
    Fw = [np.minimum(np.maximum(v, cdf.F_lo), cdf.F_hi) for v in cdf.F_e]
    Gw = [np.minimum(np.maximum(v, cdf.G_lo), cdf.G_hi) for v in cdf.G_e]
    gain = sum(alpha[j] * (Fw[j + 1] - Fw[j]) + beta[j] * (Gw[j + 1] - Gw[j]) for j in range(K))
    gain = np.where(none, 0.0, gain)
    return {
        "fleet_baseline_usd": base,
        "fleet_ncs_usd": base - gain,
        "ncs_share": np.where(none, 0.0, cdf.F_hi - cdf.F_lo),
        "multitier_share": cdf.F_e[K - 1] if K >= 2 else np.zeros(n),
        "breakeven_views": x[-1] if K >= 2 else np.full(n, np.inf),
        "n_hi": n_hi,
        "n_lo": n_lo,
        "upgraded_share": upgraded_share(ups, edges, cdf, mu, sigma, ndtr),
    }


def envelope_breakpoints(A, B):
    """Views a year where the cheapest baseline tier changes (coldest tier first): K - 1 arrays."""
    K = len(A)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = [np.fmax((A[j] - A[j - 1]) / (B[j - 1] - B[j]), 0.0) for j in range(1, K)]
        if K == 3:  # a middle tier pushed off the envelope: the outer two meet directly
            x02 = np.fmax((A[2] - A[0]) / (B[0] - B[2]), 0.0)
            drop = x[0] > x[1]
            x = [np.where(drop, x02, x[0]), np.where(drop, x02, x[1])]
        elif K > 3:  # approximation: keep breakpoints ordered
            x = list(np.maximum.accumulate(np.asarray(x), axis=0))
    return x


def ncs_interval(A, B, r, train, c):
    """Where NCS pays: f = (1 - r) B(n) - T - c n is the minimum of the lines
    l_j = alpha_j + beta_j n over the envelope tiers, so f > 0 on the intersection of their
    positive half-lines: one interval [n_lo, n_hi].  Returns (alpha, beta, n_lo, n_hi, none)."""
    n, K = np.shape(r)[0], len(A)
    alpha = [(1.0 - r) * A[j] - train for j in range(K)]
    beta = [(1.0 - r) * B[j] - c for j in range(K)]
    n_lo, n_hi = np.zeros(n), np.full(n, np.inf)
    for j in range(K):
        with np.errstate(divide="ignore", invalid="ignore"):
            root = -alpha[j] / beta[j]  # +-inf or NaN where beta = 0
        n_hi = np.fmin(n_hi, np.where(beta[j] < 0, root, np.where((beta[j] > 0) | (alpha[j] > 0), np.inf, -np.inf)))
        n_lo = np.fmax(n_lo, np.where(beta[j] > 0, root, 0.0))
    none = n_hi <= n_lo
    return alpha, beta, np.where(none, 0.0, n_lo), np.where(none, 0.0, n_hi), none


def upgrade_half_lines(a_t, b_t, A, B, r, train, c, cands, edges):
    """Upgrades: each better-service candidate t' of segment j gives a half-line k n <= d; one
    candidate: a single threshold; several: the union of the "<=" and ">=" half-lines.
    Returns [(segment j, single, le, X, Y, thresholds clipped into the segment)]."""
    n = np.shape(r)[0]
    ups = []
    for j in range(len(A)):
        if not cands[j]:
            continue
        ks, ds = [], []
        for t in cands[j]:
            ks.append(r * b_t[t] + c - B[j])
            ds.append(A[j] - train - r * a_t[t])
        with np.errstate(divide="ignore", invalid="ignore"):
            qs = [d / k for k, d in zip(ks, ds)]
        if len(ks) == 1:
            k, d, q = ks[0], ds[0], qs[0]
            # k > 0: n <= q; k < 0: n >= q; k = 0: every n (d >= 0) or none (as q = +-inf, "<=")
            thr = np.where(k != 0, q, np.where(d >= 0, np.inf, -np.inf))
            ups.append((j, True, k >= 0, None, None, [np.clip(thr, edges[j], edges[j + 1])]))
        else:
            X, Y = np.full(n, -np.inf), np.full(n, np.inf)
            for k, d, q in zip(ks, ds, qs):
                X = np.fmax(X, np.where(k > 0, q, np.where((k == 0) & (d >= 0), np.inf, -np.inf)))
                Y = np.fmin(Y, np.where(k < 0, q, np.inf))
            ups.append((j, False, None, X, Y, [np.clip(X, edges[j], edges[j + 1]), np.clip(Y, edges[j], edges[j + 1])]))
    return ups


class Segments:
    """CDF F and partial mean G at the envelope's breakpoints (``F_e``, ``G_e``, from 0 to the
    open end) and at NCS's interval ends (``F_lo``/``G_lo``, ``F_hi``/``G_hi``); n_lo is often
    0, so F and G are evaluated only where it is not."""

    def __init__(self, x, n_lo, n_hi, mu, sigma, ndtr):
        n, K = np.shape(n_lo)[0], len(x) + 1
        mean = np.exp(mu + 0.5 * sigma * sigma)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (np.log(np.stack([*x, n_hi])) - mu) / sigma
        Fp = ndtr(z)
        Gp = ndtr(z - sigma) * mean
        self.F_e = [np.zeros(n), *Fp[: K - 1], np.ones(n)]
        self.G_e = [np.zeros(n), *Gp[: K - 1], mean]
        self.F_hi, self.G_hi = Fp[K - 1], Gp[K - 1]
        self.F_lo, self.G_lo = np.zeros(n), np.zeros(n)
        inner = np.flatnonzero(n_lo > 0)
        if inner.size:
            self.F_lo[inner], self.G_lo[inner] = _cdf_pmean(n_lo[inner], mu[inner], sigma[inner], mean[inner], ndtr)


def upgraded_share(ups, edges, cdf, mu, sigma, ndtr):
    """Share of videos upgraded to a tier of better service, summed over the segments."""
    F_e = cdf.F_e
    upgraded = np.zeros(np.shape(mu)[0])
    for j, single, le, X, Y, pts in ups:
        F_t = [_cdf_inside(t, edges[j], edges[j + 1], F_e[j], F_e[j + 1], mu, sigma, ndtr) for t in pts]
        if single:  # one threshold: the segment below it ("<=") or above it
            upgraded += np.where(le, F_t[0] - F_e[j], F_e[j + 1] - F_t[0])
        else:
            seg = F_e[j + 1] - F_e[j]
            part = np.clip((F_t[0] - F_e[j]) + (F_e[j + 1] - F_t[1]), 0.0, seg)
            upgraded += np.where(Y <= X, seg, part)
    return upgraded


def _cdf_pmean(x, mu, sigma, mean, ndtr):
    """F and G at x (same-length arrays)."""
    z = (np.log(x) - mu) / sigma
    return ndtr(z), ndtr(z - sigma) * mean


def _cdf_inside(t, lo, hi, F_lo, F_hi, mu, sigma, ndtr):
    """F at t, a point clipped into [lo, hi] where F(lo), F(hi) are known: evaluated only
    where t lies strictly inside."""
    out = np.where(t <= lo, F_lo, F_hi)
    inner = np.flatnonzero((t > lo) & (t < hi))
    if inner.size:
        out[inner] = ndtr((np.log(t[inner]) - mu[inner]) / sigma[inner])
    return out
