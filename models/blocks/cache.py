"""Cache block: hit rate of a (DRAM) cache in front of slower media.

Four models, from cheapest to most faithful:

* ``zipf_hit_rate(cache_objects, n_objects, alpha)`` -- working-set model: under the
  independent reference model (IRM) with Zipf(alpha) popularity the best a cache of C
  objects can do is hold the C most popular ones, hit = H(C, alpha) / H(N, alpha) with
  H the generalized harmonic number (closed form via Euler-Maclaurin; alpha = 0 is
  uniform reuse, hit = C / N).  ``working_set_hit_rate(cache_b, footprint_b, alpha,
  granularity_b)`` is the same in bytes (``working_set_hit_rates`` for several cache
  sizes over one footprint, e.g. the levels of a hierarchy).  This is also the LFU /
  static-placement hit rate.
* ``che_lru_hit_rate(cache_objects, n_objects, alpha)`` -- LRU under IRM / Zipf by Che's
  approximation (Che, Tung, Wang, IEEE JSAC 2002; Fricker, Robert, Roberts, ITC 2012):
  the characteristic time T solves sum_i (1 - exp(-p_i T)) = C and
  hit = sum_i p_i (1 - exp(-p_i T)).  Vectorized over design points; ranks are exact up
  to 64 and log-binned beyond, so N can be billions of lines.
* ``stream_hit_rate(stride_b, access_b, line_b, prefetch_degree, ...)`` -- sequential /
  strided streams: spatial reuse inside a line, and next-line / stride prefetching of a
  given degree (trigger on miss or tagged), with the page-boundary restart of hardware
  prefetchers, plus ``prefetch_exposed_frac`` for timeliness.
* ``trace_hit_rate(trace, cache_b, policy="lru", ...)`` -- trace-driven simulation with
  libCacheSim (PyPI ``libcachesim``, imported lazily), for users with real traces: a
  file libCacheSim reads (oracleGeneral binary, csv, plain text, ...) or an array of
  addresses / object ids.

All analytic functions broadcast their numeric arguments and return values in [0, 1],
non-decreasing in the cache size.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import zeta

from dse.errors import DseError, allowed_list, did_you_mean
from models.blocks.link import chunked

ArrayLike = Any

#: Euler-Mascheroni constant (for H(n, 1)) and the first Stieltjes constant (for the
#: derivative of H(n, alpha) in alpha at alpha = 1).
EULER_GAMMA = 0.5772156649015329
STIELTJES_GAMMA1 = -0.0728158454836767
#: Cache line size used as the default object granularity, bytes.
LINE_B = 64.0
#: Hardware prefetchers do not cross 4 KiB page boundaries (Intel 64 and IA-32
#: Optimization Reference Manual, "hardware prefetching" section), so a stream restarts
#: (and retrains) at every page.
PAGE_B = 4096.0
#: Demand misses a stride prefetcher needs per page before it issues prefetches.
#: Assumption: 2 (a reference-prediction-table prefetcher confirms a stride from two
#: equal address deltas; Chen & Baer, IEEE TC 1995).
PREFETCH_TRAIN_MISSES = 2.0

# Che: ranks up to _CHE_EXACT are represented one by one, the rest by log-spaced bins.
_CHE_EXACT = 64
_CHE_BINS = 192
_CHE_ITERS = 60  # upper bound of the fallback Newton
_CHE_HALLEY_STEPS = 3  # from _che_start's log T (within ~0.25), two steps reach 1e-9 of C
_CHE_CHUNK = 256  # points per slice (x 256 groups per array)


# ============================================================================= harmonic numbers
def _harmonic_em(n: np.ndarray, a: np.ndarray, z: np.ndarray, k1: np.ndarray, k2: np.ndarray, k3: np.ndarray) -> np.ndarray:
    """Euler-Maclaurin H(n, a) for n >= 1 given zeta(a) and the a-only factors
    k1 = 1/(1-a), k2 = a/12, k3 = a(a+1)(a+2)/720 (shared between several n)."""
    inv = 1.0 / n
    x = np.exp(-a * np.log(n))  # n**-a
    return z + x * (n * k1 + 0.5 - k2 * inv + k3 * inv * inv * inv)


def _harmonic_fixups(h: np.ndarray, n: np.ndarray, a: np.ndarray, near1: np.ndarray) -> np.ndarray:
    """Replace entries near alpha = 1 (log form) and with n < 12 (exact sum)."""
    if near1.any():
        nn, aa = n[near1], a[near1]
        ln = np.log(nn)
        log_form = ln + EULER_GAMMA + 0.5 / nn - 1.0 / (12.0 * nn**2) + 1.0 / (120.0 * nn**4)
        # first order in (alpha - 1): d/dalpha H = -sum ln k / k ~ -(ln^2 n / 2 + gamma_1 + ln n / 2n)
        h[near1] = log_form - (aa - 1.0) * (0.5 * ln**2 + STIELTJES_GAMMA1 + 0.5 * ln / nn)
    small = n < 12
    if small.any():
        ks = np.arange(1, 12, dtype=np.float64)
        ns, as_ = n[small], a[small]
        terms = ks[None, :] ** -as_[:, None]
        full = np.floor(ns)
        partial = np.where(ks[None, :] <= full[:, None], terms, 0.0).sum(axis=1)
        # linear interpolation in the fractional part of n
        h[small] = partial + (ns - full) * (full + 1.0) ** -as_
    return h


def _alpha_factors(a: np.ndarray) -> tuple[np.ndarray, ...]:
    near1 = np.abs(a - 1.0) < 1e-6
    a_safe = np.where(near1, 0.5, a) if near1.any() else a
    with np.errstate(divide="ignore", invalid="ignore"):
        z = zeta(a_safe)
        k1 = 1.0 / (1.0 - a_safe)
    return z, k1, a_safe / 12.0, a_safe * (a_safe + 1.0) * (a_safe + 2.0) / 720.0, near1, a_safe


def generalized_harmonic(n: ArrayLike, alpha: ArrayLike) -> np.ndarray:
    """H(n, alpha) = sum_{k=1..n} k**-alpha, vectorized, for real n >= 1 and alpha >= 0.

    Exact summation for n < 12; for larger n the Euler-Maclaurin expansion
    zeta(alpha) + n**(1-alpha)/(1-alpha) + n**-alpha/2 - alpha n**(-alpha-1)/12
    + alpha(alpha+1)(alpha+2) n**(-alpha-3)/720 (log form, to first order in alpha - 1,
    within 1e-6 of alpha = 1), accurate to ~1e-8.  Non-integer n interpolates smoothly.
    """
    n = np.asarray(n, dtype=np.float64)
    a = np.asarray(alpha, dtype=np.float64)
    return _harmonic_with(n, a, _alpha_factors(a))


def _harmonic_with(n: np.ndarray, a: np.ndarray, fac: tuple[np.ndarray, ...]) -> np.ndarray:
    """H(n, a) given ``_alpha_factors(a)``; broadcasts n against a."""
    z, k1, k2, k3, near1, a_safe = fac
    nn = np.maximum(n, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        h = _harmonic_em(nn, a_safe, z, k1, k2, k3)
    small = nn < 12
    if near1.any() or small.any():
        shape = h.shape
        h = np.array(h, dtype=np.float64).reshape(-1)
        nb = np.broadcast_to(nn, shape).reshape(-1)
        ab = np.broadcast_to(a, shape).reshape(-1)
        m1 = np.broadcast_to(near1, shape).reshape(-1)
        h = _harmonic_fixups(h, nb, ab, m1).reshape(shape)
    return h


# ============================================================================= working-set model
def _check_sizes(c: np.ndarray, n: np.ndarray, a: np.ndarray) -> None:
    if (n <= 0).any():
        raise DseError("the footprint / number of objects must be positive")
    if (c < 0).any():
        raise DseError("the cache size must be >= 0")
    if (a < 0).any():
        raise DseError("the Zipf skew alpha must be >= 0 (0 = uniform reuse)")


def zipf_hit_rate(cache_objects: ArrayLike, n_objects: ArrayLike, alpha: ArrayLike) -> np.ndarray:
    """Hit rate of a cache holding the ``cache_objects`` most popular of ``n_objects``
    objects with Zipf(``alpha``) popularity: H(C, alpha) / H(N, alpha).

    The IRM optimum (static / LFU placement); an upper bound for LRU (see
    :func:`che_lru_hit_rate`).  ``alpha = 0``: uniform, hit = C / N.  For C < 1 the hit
    rate is C times the top object's probability.
    """
    c = np.asarray(cache_objects, dtype=np.float64)
    n = np.asarray(n_objects, dtype=np.float64)
    a = np.asarray(alpha, dtype=np.float64)
    _check_sizes(c, n, a)
    return chunked(_zipf_core, c, n, a)


def _zipf_core(c: np.ndarray, n: np.ndarray, a: np.ndarray) -> np.ndarray:
    """H(C, a) / H(N, a) of one chunk (the elementwise core of :func:`zipf_hit_rate`)."""
    fac = _alpha_factors(a)  # zeta(alpha) etc. once, on alpha's own shape
    return _zipf_given(c, n, a, fac, _harmonic_with(n, a, fac))  # H(N) on the (n, alpha) shape only


def _zipf_given(c: np.ndarray, n: np.ndarray, a: np.ndarray, fac: tuple[np.ndarray, ...], hn: np.ndarray) -> np.ndarray:
    """H(C, a) / H(N, a) given the alpha factors and ``hn`` = H(N, a); clipped to [0, 1]."""
    c = np.minimum(c, n)
    hc = _harmonic_with(np.maximum(c, 1.0), a, fac)
    hit = np.where(c >= 1.0, hc / hn, c / hn)
    return np.minimum(np.maximum(hit, 0.0), 1.0)  # np.clip's values, cheaper on short columns


def _zipf_many(n: np.ndarray, a: np.ndarray, *cs: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`_zipf_core` for several cache sizes: the alpha factors and H(N, a) once."""
    fac = _alpha_factors(a)
    hn = _harmonic_with(n, a, fac)
    return tuple(_zipf_given(c, n, a, fac, hn) for c in cs)


def working_set_hit_rate(
    cache_b: ArrayLike, footprint_b: ArrayLike, alpha: ArrayLike = 0.0, granularity_b: ArrayLike = LINE_B
) -> np.ndarray:
    """:func:`zipf_hit_rate` in bytes: objects of ``granularity_b`` (a 64 B line, a 4 KiB
    page, ...) over a ``footprint_b`` working set with power-law reuse skew ``alpha``."""
    g = np.asarray(granularity_b, dtype=np.float64)
    if (g <= 0).any():
        raise DseError("granularity_b must be positive")
    return zipf_hit_rate(np.asarray(cache_b, dtype=np.float64) / g, np.asarray(footprint_b, dtype=np.float64) / g, alpha)


def working_set_hit_rates(
    cache_bs: Sequence[ArrayLike], footprint_b: ArrayLike, alpha: ArrayLike = 0.0, granularity_b: ArrayLike = LINE_B
) -> tuple[np.ndarray, ...]:
    """:func:`working_set_hit_rate` of several cache sizes over one footprint and skew (the
    levels of a hierarchy): the same values, with zeta(alpha) and H(N, alpha) computed once."""
    g = np.asarray(granularity_b, dtype=np.float64)
    if (g <= 0).any():
        raise DseError("granularity_b must be positive")
    n = np.asarray(np.asarray(footprint_b, dtype=np.float64) / g, dtype=np.float64)
    a = np.asarray(alpha, dtype=np.float64)
    cs = [np.asarray(np.asarray(c, dtype=np.float64) / g, dtype=np.float64) for c in cache_bs]
    for c in cs:
        _check_sizes(c, n, a)
    out = chunked(_zipf_many, n, a, *cs)
    return out if isinstance(out, tuple) else (out,)


# ============================================================================= Che / LRU
_CHE_LOG_K = np.log(np.arange(1, _CHE_EXACT + 1, dtype=np.float64))
_CHE_T = np.linspace(0.0, 1.0, _CHE_BINS + 1)


def _che_grid(n: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per point: object counts and normalized popularity of each rank group.

    Groups: ranks 1.._CHE_EXACT one by one, then _CHE_BINS log-spaced bins up to n, each
    with the mean popularity of its ranks (integral of x**-alpha).  Powers are taken as
    exp(exponent x log) on precomputed logs."""
    k_exact = np.arange(1, _CHE_EXACT + 1, dtype=np.float64)
    cnt_exact = np.where(k_exact[None, :] <= np.floor(n)[:, None], 1.0, 0.0)
    w_exact = cnt_exact * np.exp(-a[:, None] * _CHE_LOG_K[None, :])
    # tail: ranks _CHE_EXACT+1 .. n as the continuous interval [E + 0.5, n + 0.5]
    lo = _CHE_EXACT + 0.5
    hi = np.maximum(n + 0.5, lo)
    log_edges = np.log(lo) + np.log(hi / lo)[:, None] * _CHE_T[None, :]  # (P, B+1)
    edges = np.exp(log_edges)
    cnt_tail = edges[:, 1:] - edges[:, :-1]
    one_minus = 1.0 - a[:, None]
    near1 = np.abs(one_minus) < 1e-9
    safe = np.where(near1, 1.0, one_minus)
    pw = np.exp(safe * log_edges)  # edges ** (1 - alpha)
    integ = np.where(near1, log_edges[:, 1:] - log_edges[:, :-1], (pw[:, 1:] - pw[:, :-1]) / safe)
    w_tail = np.where(cnt_tail > 0, integ, 0.0)
    counts = np.concatenate([cnt_exact, cnt_tail], axis=1)
    weights = np.concatenate([w_exact, w_tail], axis=1)
    total = weights.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(counts > 0, weights / counts / total, 0.0)
    return counts, p


def che_characteristic_time(cache_objects: ArrayLike, n_objects: ArrayLike, alpha: ArrayLike) -> np.ndarray:
    """Che's characteristic time T (in requests) of an LRU cache of C objects under IRM
    with Zipf(alpha) popularity over N objects (inf when C >= N)."""
    return _che(cache_objects, n_objects, alpha)[1]


def che_lru_hit_rate(cache_objects: ArrayLike, n_objects: ArrayLike, alpha: ArrayLike) -> np.ndarray:
    """LRU hit rate by Che's approximation for IRM requests with Zipf(``alpha``)
    popularity over ``n_objects``, cache of ``cache_objects`` (vectorized).

    Accurate to about 1 % of the simulated LRU hit rate for caches beyond a few dozen
    objects (Fricker et al., ITC 2012); exact at C = 0 and C >= N.
    """
    return _che(cache_objects, n_objects, alpha)[0]


def _che(cache_objects: ArrayLike, n_objects: ArrayLike, alpha: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(cache_objects, dtype=np.float64)
    n = np.asarray(n_objects, dtype=np.float64)
    a = np.asarray(alpha, dtype=np.float64)
    _check_sizes(c, n, a)
    c, n, a = np.broadcast_arrays(c, n, a)
    shape = c.shape
    c, n, a = c.ravel(), n.ravel(), a.ravel()
    hit = np.zeros_like(c)
    t_out = np.zeros_like(c)
    full = c >= n
    hit[full] = 1.0
    t_out[full] = np.inf
    idx = np.nonzero((~full) & (c > 0))[0]
    for s in range(0, idx.size, _CHE_CHUNK):  # bounded memory: points x groups per slice
        sel = idx[s : s + _CHE_CHUNK]
        hit[sel], t_out[sel] = _che_solve(c[sel], *_che_grid(n[sel], a[sel]))
    return np.clip(hit, 0.0, 1.0).reshape(shape), t_out.reshape(shape)


def _che_start(cc: np.ndarray, counts: np.ndarray, p: np.ndarray) -> np.ndarray:
    """log T from occupancy ~ sum cnt min(1, p T) (1 - exp(-x) <= min(1, x), so T is
    underestimated; within ~0.25 in log T): piecewise linear in T, solved exactly -- with
    the groups before j full (p >= p_j) and j on linear, T = (C - K_j) / S_j."""
    cp = counts * p
    k_before = np.cumsum(counts, axis=1) - counts
    s_from = cp.sum(axis=1, keepdims=True) - np.cumsum(cp, axis=1) + cp
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (cc[:, None] - k_before) / s_from
        ok = (t * p <= 1.0) & (k_before <= cc[:, None])
    j = np.argmax(ok, axis=1)
    return np.log(np.maximum(t[np.arange(cc.size), j], cc))


def _che_solve(cc: np.ndarray, counts: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hit rate, T) on a grid of rank groups: Halley's method on u = log T for
    occupancy(T) = sum cnt (1 - exp(-p T)) = C from :func:`_che_start` (two or three steps
    reach 1e-9 of C); points not converged after _CHE_HALLEY_STEPS continue with a
    safeguarded Newton (rare)."""
    cp = counts * p
    cpp = cp * p
    total = counts.sum(axis=1)
    u = _che_start(cc, counts, p)
    for _ in range(_CHE_HALLEY_STEPS):
        tt = np.exp(u)
        e = np.exp(-p * tt[:, None])
        f = total - np.einsum("ij,ij->i", counts, e) - cc
        f1 = tt * np.einsum("ij,ij->i", cp, e)  # d occupancy / d u
        f2 = f1 - tt * tt * np.einsum("ij,ij->i", cpp, e)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = 2.0 * f * f1 / (2.0 * f1 * f1 - f * f2)
        u = u - np.where(np.isfinite(step), step, 0.0)
    tt = np.exp(u)
    e = np.exp(-p * tt[:, None])
    occ = total - np.einsum("ij,ij->i", counts, e)
    bad = ~(np.abs(occ - cc) <= 1e-9 * cc)
    if bad.any():
        u[bad] = _che_newton(cc[bad], counts[bad], p[bad], u[bad])
        tt = np.exp(u)
        e = np.exp(-p * tt[:, None])
    # hit = sum cnt p (1 - exp(-p T))
    return cp.sum(axis=1) - np.einsum("ij,ij->i", cp, e), tt


def _che_newton(cc, counts, p, u):
    """Safeguarded Newton on u = log T (bisection whenever Newton leaves the bracket)."""
    # occupancy(T) <= T (it is sum cnt (1 - e^-pT) <= T sum cnt p = T), so T > C; at
    # T = e^5 C / p_min every object is resident with prob ~1, occupancy ~ N > C
    pmin = np.where(p > 0, p, np.inf).min(axis=1)
    log_lo = np.log(cc) - 1.0
    log_hi = np.log(cc) - np.log(pmin) + 5.0
    u = np.clip(u, log_lo, log_hi)
    act = np.arange(cc.size)  # rows still iterating
    for _ in range(_CHE_ITERS):
        cnt_a, p_a, c_a, u_a = counts[act], p[act], cc[act], u[act]
        tt = np.exp(u_a)
        e = np.exp(-p_a * tt[:, None])
        occ = (cnt_a * (1.0 - e)).sum(axis=1)
        slope = (cnt_a * p_a * e).sum(axis=1) * tt  # d occ / d u
        lo_a, hi_a = log_lo[act], log_hi[act]
        too_big = occ > c_a
        hi_a = np.where(too_big, u_a, hi_a)
        lo_a = np.where(too_big, lo_a, u_a)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = u_a - (occ - c_a) / slope
        inside = np.isfinite(step) & (step >= lo_a) & (step <= hi_a)
        new_u = np.where(inside, step, 0.5 * (lo_a + hi_a))
        done = (np.abs(occ - c_a) <= 1e-9 * c_a) | (hi_a - lo_a < 1e-12) | (np.abs(new_u - u_a) < 1e-13)
        u[act] = np.where(done, u_a, new_u)
        log_lo[act], log_hi[act] = lo_a, hi_a
        act = act[~done]
        if act.size == 0:
            break
    return u


def lru_hit_rate(cache_b: ArrayLike, footprint_b: ArrayLike, alpha: ArrayLike, granularity_b: ArrayLike = LINE_B) -> np.ndarray:
    """:func:`che_lru_hit_rate` in bytes (objects of ``granularity_b``)."""
    g = np.asarray(granularity_b, dtype=np.float64)
    if np.any(g <= 0):
        raise DseError("granularity_b must be positive")
    return che_lru_hit_rate(np.asarray(cache_b, dtype=np.float64) / g, np.asarray(footprint_b, dtype=np.float64) / g, alpha)


# ============================================================================= streams and prefetch
PREFETCH_TRIGGERS: tuple[str, ...] = ("miss", "tagged")


def stream_hit_rate(
    stride_b: ArrayLike,
    access_b: ArrayLike = 8.0,
    line_b: ArrayLike = LINE_B,
    prefetch_degree: ArrayLike = 0.0,
    *,
    trigger: str = "tagged",
    page_b: ArrayLike = PAGE_B,
    train_misses: ArrayLike = PREFETCH_TRAIN_MISSES,
    max_stride_b: ArrayLike = PAGE_B / 2,
) -> np.ndarray:
    """Fraction of a strided stream's accesses that hit (line already present or
    prefetched), for a stream longer than a page.

    * Without prefetching, an access touches a new line once every ``max(1, L / s)``
      accesses for stride ``s`` and line ``L`` (an access wider than a line touches
      ``ceil(access_b / L)`` lines): hit = 1 - s / L for s < L, else 0.
    * A stride prefetcher of degree ``d`` (lines fetched ahead per trigger) covers the
      stream once trained: with ``trigger="miss"`` every miss fetches the next ``d``
      lines of the stream, so 1 in ``d + 1`` line fetches is a demand miss; with
      ``"tagged"`` the first use of a prefetched line triggers the next prefetch, so
      only the training misses remain.  Prefetchers restart at every ``page_b``
      boundary (``train_misses`` demand misses per page) and ignore strides larger than
      ``max_stride_b``.
    """
    s = np.asarray(stride_b, dtype=np.float64)
    L = np.asarray(line_b, dtype=np.float64)
    acc = np.asarray(access_b, dtype=np.float64)
    d = np.asarray(prefetch_degree, dtype=np.float64)
    page = np.asarray(page_b, dtype=np.float64)
    if np.any(s <= 0) or np.any(L <= 0) or np.any(acc <= 0) or np.any(page <= 0):
        raise DseError("stride_b, access_b, line_b and page_b must be positive")
    if np.any(d < 0):
        raise DseError("prefetch_degree must be >= 0")
    if trigger not in PREFETCH_TRIGGERS:
        raise DseError(f"prefetch trigger {trigger!r} is not allowed; allowed: {allowed_list(PREFETCH_TRIGGERS)}")
    lines_per_access = np.ceil(acc / L)
    # new lines per access: s/L when s < L (several accesses share a line)
    new_lines_per_access = np.where(s < L, s / L, 1.0) * lines_per_access
    no_pf_miss = np.minimum(new_lines_per_access, 1.0)  # fraction of accesses that miss
    # lines of the stream in one page, and the misses a prefetcher leaves there
    lines_per_page = np.maximum(page / np.maximum(s, L), 1.0)
    train = np.minimum(np.asarray(train_misses, dtype=np.float64), lines_per_page)
    if trigger == "miss":
        covered = (lines_per_page - train) * d / (d + 1.0)
    else:
        covered = np.where(d > 0, lines_per_page - train, 0.0)
    usable = (d > 0) & (s <= np.asarray(max_stride_b, dtype=np.float64))
    demand_line_frac = np.where(usable, 1.0 - covered / lines_per_page, 1.0)
    return np.clip(1.0 - no_pf_miss * demand_line_frac, 0.0, 1.0)


def prefetch_exposed_frac(
    prefetch_distance_lines: ArrayLike, line_interval_ns: ArrayLike, miss_latency_ns: ArrayLike
) -> np.ndarray:
    """Fraction of the miss latency a prefetched line still exposes: a prefetch issued
    ``distance`` lines ahead of a stream consuming one line per ``line_interval_ns`` has
    ``distance x interval`` to complete; 0 when that covers the latency."""
    dist = np.asarray(prefetch_distance_lines, dtype=np.float64)
    lat = np.asarray(miss_latency_ns, dtype=np.float64)
    if np.any(lat <= 0):
        raise DseError("miss_latency_ns must be positive")
    return np.clip(1.0 - dist * np.asarray(line_interval_ns, dtype=np.float64) / lat, 0.0, 1.0)


def amat_ns(hit_rate: ArrayLike, hit_ns: ArrayLike, miss_ns: ArrayLike) -> np.ndarray:
    """Average access time: hit x hit_ns + (1 - hit) x miss_ns (miss_ns is the full miss path)."""
    h = np.asarray(hit_rate, dtype=np.float64)
    return h * np.asarray(hit_ns, dtype=np.float64) + (1.0 - h) * np.asarray(miss_ns, dtype=np.float64)


# ============================================================================= trace-driven (libCacheSim)
#: Policy names accepted by :func:`trace_hit_rate` -> libCacheSim class name.
TRACE_POLICIES: dict[str, str] = {
    "lru": "LRU",
    "fifo": "FIFO",
    "lfu": "LFU",
    "clock": "Clock",
    "arc": "ARC",
    "twoq": "TwoQ",
    "slru": "SLRU",
    "lirs": "LIRS",
    "sieve": "Sieve",
    "s3fifo": "S3FIFO",
    "random": "Random",
    "belady": "Belady",
}

_ORACLE_DTYPE = np.dtype([("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("next", "<i8")])


def _libcachesim() -> Any:
    try:
        import libcachesim  # noqa: PLC0415
    except ImportError:  # pragma: no cover - exercised only without the package
        raise DseError(
            "trace_hit_rate needs the libCacheSim Python bindings: pip install libcachesim"
        ) from None
    return libcachesim


def _next_access(ids: np.ndarray) -> np.ndarray:
    """Index of the next request to the same object (-1 if none), for Belady."""
    n = ids.size
    order = np.lexsort((np.arange(n), ids))
    nxt = np.full(n, -1, dtype=np.int64)
    same = ids[order[1:]] == ids[order[:-1]]
    nxt[order[:-1][same]] = order[1:][same]
    return nxt


def write_oracle_trace(ids: ArrayLike, path: str | os.PathLike[str], obj_size_b: int = 1) -> Path:
    """Write object ids (in request order) as a libCacheSim oracleGeneral binary trace
    (24 B records: u32 time, u64 id, u32 size, i64 next-access index)."""
    arr = np.asarray(ids)
    if arr.ndim != 1 or arr.size == 0:
        raise DseError("a trace must be a non-empty 1-D array of object ids")
    if arr.dtype.kind not in "iu":
        raise DseError("trace object ids must be integers")
    rec = np.zeros(arr.size, dtype=_ORACLE_DTYPE)
    rec["t"] = np.arange(arr.size, dtype=np.uint64) & 0xFFFFFFFF
    rec["id"] = arr.astype(np.uint64) + 1  # id 0 is reserved by some readers
    rec["sz"] = obj_size_b
    rec["next"] = _next_access(arr.astype(np.int64))
    p = Path(path)
    rec.tofile(p)
    return p


def _trace_type(lcs: Any, path: Path, trace_type: str | None) -> Any:
    types = {
        "oraclegeneral": lcs.TraceType.ORACLE_GENERAL_TRACE,
        "csv": lcs.TraceType.CSV_TRACE,
        "txt": lcs.TraceType.PLAIN_TXT_TRACE,
        "lcs": lcs.TraceType.LCS_TRACE,
        "vscsi": lcs.TraceType.VSCSI_TRACE,
        "twr": lcs.TraceType.TWR_TRACE,
    }
    if trace_type is not None:
        key = trace_type.lower().replace("_", "")
        if key not in types:
            raise DseError(f"trace type {trace_type!r} is not allowed; allowed: {allowed_list(types)}")
        return types[key]
    name = path.name.lower()
    if "oraclegeneral" in name:
        return types["oraclegeneral"]
    if name.endswith(".csv"):
        return types["csv"]
    if name.endswith(".txt"):
        return types["txt"]
    if ".lcs" in name:
        return types["lcs"]
    raise DseError(
        f"cannot tell the trace format of {path.name}; pass trace_type= one of {allowed_list(types)} "
        "(or give a .npy / array of ids)"
    )


def trace_hit_rate(
    trace: str | os.PathLike[str] | ArrayLike,
    cache_b: ArrayLike,
    policy: str = "lru",
    *,
    granularity_b: int = int(LINE_B),
    addresses: bool = True,
    trace_type: str | None = None,
    reader_params: dict[str, Any] | None = None,
    byte_hit: bool = False,
) -> np.ndarray:
    """Hit rate of ``policy`` with a cache of ``cache_b`` bytes (scalar or array of sizes)
    on a request trace, simulated by libCacheSim.

    ``trace``: a numpy array (or ``.npy`` file) of byte addresses -- mapped to
    ``granularity_b`` blocks -- or of object ids (``addresses=False``, each object
    ``granularity_b`` bytes); or the path of a trace file libCacheSim reads
    (oracleGeneral binary, ``.csv`` with ``reader_params`` such as ``obj_id_field``,
    ``obj_size_field``, ``has_header``, ``delimiter``; plain ``.txt`` with one id per line),
    whose own object sizes are used.  ``policy``: one of ``TRACE_POLICIES``.  Returns the
    request hit rate (``byte_hit=True``: byte hit rate) per cache size.
    """
    key = policy.lower().replace("-", "").replace("_", "")
    if key not in TRACE_POLICIES:
        raise DseError(f"cache policy {policy!r} is not allowed{did_you_mean(key, TRACE_POLICIES)}; allowed: {allowed_list(TRACE_POLICIES)}")
    lcs = _libcachesim()
    cls = getattr(lcs, TRACE_POLICIES[key])
    sizes = np.atleast_1d(np.asarray(cache_b, dtype=np.float64))
    if np.any(sizes <= 0):
        raise DseError("cache_b must be positive")

    tmpdir: tempfile.TemporaryDirectory[str] | None = None
    if isinstance(trace, (str, os.PathLike)) and not str(trace).endswith(".npy"):
        path = Path(trace)
        if not path.exists():
            raise DseError(f"trace file {path} does not exist")
        ttype = _trace_type(lcs, path, trace_type)
        params = lcs.ReaderInitParam()
        for k, v in (reader_params or {}).items():
            if not hasattr(params, k):
                raise DseError(f"unknown libCacheSim reader parameter {k!r}; allowed: {allowed_list(a for a in dir(params) if not a.startswith('_'))}")
            setattr(params, k, v)
            if k == "has_header":
                params.has_header_set = True
        make_reader = lambda: lcs.TraceReader(str(path), ttype, params)  # noqa: E731
    else:
        arr = np.load(trace) if isinstance(trace, (str, os.PathLike)) else np.asarray(trace)
        if arr.ndim != 1 or arr.size == 0:
            raise DseError("a trace must be a non-empty 1-D array of addresses or object ids")
        if arr.dtype.kind not in "iu":
            raise DseError("trace addresses / ids must be integers")
        ids = (arr.astype(np.uint64) // np.uint64(granularity_b)) if addresses else arr.astype(np.uint64)
        tmpdir = tempfile.TemporaryDirectory(prefix="dse-trace-")
        path = write_oracle_trace(ids, Path(tmpdir.name) / "trace.oracleGeneral.bin", obj_size_b=granularity_b)
        make_reader = lambda: lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)  # noqa: E731
    try:
        out = np.empty(sizes.size)
        for i, size in enumerate(sizes):
            cache = cls(int(size))
            obj_miss, byte_miss = cache.process_trace(make_reader())
            out[i] = 1.0 - (byte_miss if byte_hit else obj_miss)
    finally:
        if tmpdir is not None:
            tmpdir.cleanup()
    out = np.clip(out, 0.0, 1.0)
    return out.reshape(np.shape(cache_b)) if np.ndim(cache_b) else out[0]


def simulate_lru_hit_rate(ids: Sequence[int] | np.ndarray, cache_objects: int) -> float:
    """Exact LRU hit rate of a small id sequence (pure Python, for tests and checks)."""
    from collections import OrderedDict  # noqa: PLC0415

    if cache_objects <= 0:
        return 0.0
    od: OrderedDict[int, None] = OrderedDict()
    hits = 0
    for x in np.asarray(ids).tolist():
        if x in od:
            hits += 1
            od.move_to_end(x)
        else:
            od[x] = None
            if len(od) > cache_objects:
                od.popitem(last=False)
    return hits / max(len(ids), 1)
