"""Queueing stations: closed forms, vectorized over numpy arrays.

Every function broadcasts its arguments (scalars or arrays) and returns float64 arrays
(0-d for scalar input).  Times are in whatever unit the caller uses for the service time
(``service`` in ns gives waits in ns); rates are per that unit (``lam`` per ns).

Public functions
----------------
* :func:`utilization` -- ``rho = lam * service / servers``.
* :func:`mm1_wait`, :func:`mm1_response`, :func:`mm1_wait_percentile`,
  :func:`mm1_response_percentile` -- M/M/1.
* :func:`erlang_c`, :func:`mmc_wait`, :func:`mmc_response`,
  :func:`mmc_wait_percentile` -- M/M/c (Erlang C in a numerically stable recursive form).
* :func:`mg1_wait`, :func:`mg1_response` -- M/G/1 (Pollaczek-Khinchine) with the squared
  coefficient of variation ``scv`` of the service time; :func:`md1_wait` is ``scv = 0``.
* :func:`mg1_wait_percentile` -- exponential-tail approximation of M/G/1 waiting-time
  percentiles (documented below).
* :func:`mva` -- exact mean-value analysis of a closed, single-class network of
  queueing stations plus a delay (think) station, vectorized over design points.
* :func:`mva_schweitzer` -- the Schweitzer/Bard approximate MVA for large populations.
* :func:`saturation_throughput` -- the bottleneck bound ``servers / service``.

Saturation behaviour (the same everywhere)
------------------------------------------
Open stations are stable only for ``rho < 1``.  At or above saturation (``rho >= 1``)
waits and responses are ``+inf`` -- never NaN -- and the throughput the station can
carry is :func:`saturation_throughput`.  Utilization is reported unclipped by
:func:`utilization`; the wait functions internally clip ``rho`` to ``[0, 1)`` before the
formula and then put ``inf`` where the unclipped value was ``>= 1``.  Zero load gives zero
wait.  Percentiles ``p`` are fractions in ``(0, 1)``.

Sources: Kleinrock, *Queueing Systems* Vol. 1 (1975) -- M/M/1, M/M/c, M/G/1 (P-K);
Reiser & Lavenberg, "Mean-value analysis of closed multichain queuing networks",
JACM 27(2), 1980 -- exact MVA; Schweitzer (1979) and Bard (1979) -- approximate MVA.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "utilization",
    "saturation_throughput",
    "mm1_wait",
    "mm1_response",
    "mm1_wait_percentile",
    "mm1_response_percentile",
    "erlang_c",
    "mmc_wait",
    "mmc_response",
    "mmc_wait_percentile",
    "mg1_wait",
    "mg1_response",
    "md1_wait",
    "mg1_wait_percentile",
    "mva",
    "mva_schweitzer",
]

_F = np.float64


def _arr(x) -> np.ndarray:
    return np.asarray(x, dtype=_F)


def utilization(lam, service, servers=1) -> np.ndarray:
    """Offered utilization ``lam * service / servers`` (dimensionless, unclipped)."""
    return _arr(lam) * _arr(service) / _arr(servers)


def saturation_throughput(service, servers=1) -> np.ndarray:
    """Largest arrival rate a station carries: ``servers / service`` (per time unit)."""
    s = _arr(service)
    with np.errstate(divide="ignore"):
        return np.where(s > 0, _arr(servers) / np.where(s > 0, s, 1.0), np.inf)


def _stable(rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(clipped rho in [0, 1), mask of saturated points)."""
    sat = rho >= 1.0
    # np.minimum(np.maximum()) is np.clip's result at a fraction of its call cost
    return np.minimum(np.maximum(np.where(sat, 0.0, rho), 0.0), 1.0 - 1e-15), sat


# --------------------------------------------------------------------------- M/M/1
def mm1_wait(lam, service) -> np.ndarray:
    """M/M/1 mean waiting time in queue ``W_q = rho * S / (1 - rho)``; inf at rho >= 1."""
    s = _arr(service)
    rho, sat = _stable(_arr(lam) * s)
    return np.where(sat, np.inf, rho * s / (1.0 - rho))


def mm1_response(lam, service) -> np.ndarray:
    """M/M/1 mean response time ``S / (1 - rho)``; inf at rho >= 1."""
    return mm1_wait(lam, service) + _arr(service)


def mm1_wait_percentile(lam, service, p) -> np.ndarray:
    """p-quantile of the M/M/1 waiting time (exact): ``P(W > t) = rho exp(-(mu - lam) t)``.

    Zero where ``1 - p >= rho`` (the quantile falls on the atom at zero)."""
    s = _arr(service)
    lam = _arr(lam)
    rho, sat = _stable(lam * s)
    tail = 1.0 - _arr(p)
    decay = (1.0 - rho) / s  # mu - lam
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.log(np.where(rho > 0, rho, 1.0) / tail) / decay
    t = np.where(tail >= rho, 0.0, t)
    return np.where(sat, np.inf, t)


def mm1_response_percentile(lam, service, p) -> np.ndarray:
    """p-quantile of the M/M/1 response time (exact): exponential with rate ``mu - lam``."""
    s = _arr(service)
    rho, sat = _stable(_arr(lam) * s)
    t = -np.log(1.0 - _arr(p)) * s / (1.0 - rho)
    return np.where(sat, np.inf, t)


# --------------------------------------------------------------------------- M/M/c
def erlang_c(servers, a) -> np.ndarray:
    """Erlang C: probability that an arrival waits, for ``servers`` servers and offered
    load ``a = lam * S`` (Erlangs).  Numerically stable closed form through the Poisson
    distribution: Erlang B ``B = pmf(c; a) / cdf(c; a)`` (log-space pmf, scipy's regularized
    incomplete gamma for the cdf), then ``C = B / (1 - rho (1 - B))``.  Vectorized over both
    arguments; 1 at ``a >= c``."""
    from scipy.special import gammaln, pdtr

    c = np.rint(_arr(servers))
    a = _arr(a)
    if np.any(c < 1):
        raise ValueError("servers must be >= 1")
    if c.size == 1 and c.item() <= 64:
        # one server count: the Erlang B recursion B_k = a B_{k-1} / (k + a B_{k-1}) is
        # stable and cheaper than the special functions
        b = np.ones_like(a)
        for k in range(1, int(c.item()) + 1):
            ab = a * b
            b = ab / (k + ab)
        rho = a / c.item()
        sat = rho >= 1.0
        pc = b / (1.0 - np.where(sat, 0.0, rho) * (1.0 - b))
        return np.where(sat, 1.0, pc)
    c, a = np.broadcast_arrays(c, a)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_pmf = c * np.log(np.where(a > 0, a, 1.0)) - a - gammaln(c + 1.0)
        cdf = pdtr(c, a)
        b = np.where(a > 0, np.exp(log_pmf) / cdf, 0.0)
    rho = a / c
    sat = rho >= 1.0
    rho_c = np.where(sat, 0.0, rho)
    pc = b / (1.0 - rho_c * (1.0 - b))
    return np.where(sat, 1.0, pc)


def mmc_wait(lam, service, servers) -> np.ndarray:
    """M/M/c mean wait ``C(c, a) * S / (c - a)``; inf at rho >= 1."""
    s = _arr(service)
    a = _arr(lam) * s
    c = _arr(servers)
    pc = erlang_c(servers, a)
    sat = a >= c
    with np.errstate(divide="ignore", invalid="ignore"):
        w = pc * s / np.where(sat, 1.0, c - a)
    return np.where(sat, np.inf, w)


def mmc_response(lam, service, servers) -> np.ndarray:
    """M/M/c mean response time (wait + service)."""
    return mmc_wait(lam, service, servers) + _arr(service)


def mmc_wait_percentile(lam, service, servers, p) -> np.ndarray:
    """p-quantile of the M/M/c wait (exact): ``P(W > t) = C exp(-(c mu - lam) t)``."""
    s = _arr(service)
    a = _arr(lam) * s
    c = _arr(servers)
    pc = erlang_c(servers, a)
    sat = a >= c
    tail = 1.0 - _arr(p)
    decay = np.where(sat, 1.0, (c - a) / s)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.log(np.where(pc > 0, pc, 1.0) / tail) / decay
    t = np.where(tail >= pc, 0.0, t)
    return np.where(sat, np.inf, t)


# --------------------------------------------------------------------------- M/G/1
def mg1_wait(lam, service, scv=1.0) -> np.ndarray:
    """M/G/1 mean wait, Pollaczek-Khinchine: ``W = rho S (1 + scv) / (2 (1 - rho))``.

    ``scv`` is the squared coefficient of variation of the service time (1: exponential,
    0: deterministic).  inf at rho >= 1."""
    s = _arr(service)
    rho, sat = _stable(_arr(lam) * s)
    w = rho * s * (1.0 + _arr(scv)) / (2.0 * (1.0 - rho))
    return np.where(sat, np.inf, w)


def mg1_response(lam, service, scv=1.0) -> np.ndarray:
    """M/G/1 mean response time (P-K wait + service)."""
    return mg1_wait(lam, service, scv) + _arr(service)


def md1_wait(lam, service) -> np.ndarray:
    """M/D/1 mean wait (P-K with ``scv = 0``)."""
    return mg1_wait(lam, service, 0.0)


def mg1_wait_percentile(lam, service, p, scv=1.0) -> np.ndarray:
    """Approximate p-quantile of the M/G/1 wait.

    Approximation (documented, not exact): ``P(W > t) ~= rho exp(-rho t / W)`` -- an atom
    ``1 - rho`` at zero and an exponential tail whose mean matches the P-K mean ``W``
    (exact for M/M/1; the usual heavy-traffic exponential approximation elsewhere).
    """
    w = mg1_wait(lam, service, scv)
    s = _arr(service)
    rho, sat = _stable(_arr(lam) * s)
    tail = 1.0 - _arr(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        cond_mean = np.where(rho > 0, w / np.where(rho > 0, rho, 1.0), 0.0)
        t = cond_mean * np.log(np.where(rho > 0, rho, 1.0) / tail)
    t = np.where(tail >= rho, 0.0, t)
    return np.where(sat, np.inf, t)


# --------------------------------------------------------------------------- MVA
def mva(demands, population, think=0.0, servers=None, multiplicity=None):
    """Exact single-class mean-value analysis of a closed network.

    Parameters
    ----------
    demands : array (..., K)
        Service demand of one customer at each of the K queueing stations per cycle
        (visits x service time), in any time unit.  Leading axes are design points.
    population : int or array (...)
        Customers in the loop (e.g. a queue depth).  Non-integers are rounded.
    think : float or array (...)
        Delay (infinite-server) time per cycle: fixed latency that does not queue.
    servers : None or array (..., K)
        Servers per station.  ``None``: one server each.  Multi-server stations use the
        common Seidmann approximation (a station with c servers and demand D behaves as a
        single server with demand D / c plus a delay D (c - 1) / c), documented as approximate.
    multiplicity : None or array (..., K)
        Number of identical copies of each station (e.g. 64 dies each receiving 1/64 of
        the page operations): ``demands`` is then the demand at *one* copy.  The
        recursion handles the copies exactly at the cost of one station.

    Returns
    -------
    (throughput, response, queue) : customers per time unit, time per cycle through the
    queueing stations (excluding ``think``), and mean queue length per station (..., K).

    The recursion runs n = 1..max(population) and is vectorized over the design points;
    each point keeps the values at its own population.  Cost is O(N K) per point -- use
    :func:`mva_schweitzer` for populations of many thousands.
    """
    d = _arr(demands)
    if d.ndim == 0:
        d = d[None]
    z = _arr(think)
    if servers is not None:
        c = _arr(servers)
        d, c = np.broadcast_arrays(d, c)
        z = z + np.sum(d * (c - 1.0) / c, axis=-1)
        d = d / c
    m = np.ones_like(d) if multiplicity is None else _arr(multiplicity)
    d, m = np.broadcast_arrays(d, m)
    n_pop = np.rint(_arr(population)).astype(np.int64)
    lead = np.broadcast_shapes(d.shape[:-1], n_pop.shape, z.shape)
    d = np.broadcast_to(d, lead + d.shape[-1:])
    m = np.broadcast_to(m, lead + m.shape[-1:])
    n_pop = np.broadcast_to(n_pop, lead)
    z = np.broadcast_to(z, lead)
    q = np.zeros(d.shape, dtype=_F)
    x_out = np.zeros(lead, dtype=_F)
    r_out = np.zeros(lead, dtype=_F)
    q_out = np.zeros(d.shape, dtype=_F)
    nmax = int(n_pop.max()) if n_pop.size else 0
    for n in range(1, nmax + 1):
        r_k = d * (1.0 + q)
        r = (m * r_k).sum(axis=-1)
        x = n / (r + z)
        q = x[..., None] * r_k
        hit = n_pop == n
        if hit.any():
            x_out = np.where(hit, x, x_out)
            r_out = np.where(hit, r, r_out)
            q_out = np.where(hit[..., None], q, q_out)
    return x_out, r_out, q_out


def mva_schweitzer(demands, population, think=0.0, tol=1e-9, max_iter=10_000):
    """Approximate MVA (Schweitzer/Bard): the queue seen by an arrival is taken as
    ``(N - 1) / N`` of the time-average queue.  Same arguments and returns as :func:`mva`
    (single-server stations only); exact at N = 1 and asymptotically exact as N grows;
    the error at moderate N is typically a few percent.  Fixed-point iteration,
    vectorized over design points."""
    d = _arr(demands)
    if d.ndim == 0:
        d = d[None]
    n = _arr(population)
    z = _arr(think)
    lead = np.broadcast_shapes(d.shape[:-1], n.shape, z.shape)
    d = np.broadcast_to(d, lead + d.shape[-1:])
    n = np.broadcast_to(n, lead)
    z = np.broadcast_to(z, lead)
    k = d.shape[-1]
    q = np.broadcast_to((n / k)[..., None], d.shape).astype(_F)
    frac = np.where(n > 0, (n - 1.0) / np.where(n > 0, n, 1.0), 0.0)[..., None]
    x = np.zeros(lead)
    r = np.zeros(lead)
    for _ in range(max_iter):
        r_k = d * (1.0 + frac * q)
        r = r_k.sum(axis=-1)
        x = n / (r + z)
        q_new = x[..., None] * r_k
        if np.max(np.abs(q_new - q), initial=0.0) < tol * max(1.0, float(np.max(n, initial=1.0))):
            q = q_new
            break
        q = q_new
    return x, r, q
