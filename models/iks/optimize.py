"""`dse optimize iks-channel-split`: split each IKS's 64 channels between the ENNS corpus
and latency-critical CPU tenants -- the most ENNS throughput with every tenant's P99
within its SLO (digest §2 mechanisms 6-7; the article's heuristic is half the channels each).

Formulation (convex, solved by CVXPY with Clarabel; channel counts integer by rounding,
which is exact here, see below):

    devices d = 1..M, tenants t pinned to device dev(t)
    variables   e_d >= 0   ENNS channels of device d;   n_t >= 1   channels of tenant t
    maximize    sum_d e_d                       (corpus shards sized in proportion to e_d,
                                                 so every device's pass takes
                                                 S / (sum_d e_d x peak x eta): QPS ~ sum_d e_d)
    subject to  e_d + sum_{t on d} n_t <= 64
                S <= 8 GB x sum_d e_d           (the corpus fits on the ENNS channels)
                F_t <= 8 GB x n_t               (the tenant's footprint fits)
                P99_t(n_t) <= SLO_t

The tenant's P99 follows the model's spatial-multitenancy form: solo P99 + accesses x the
change of its DRAM latency at utilization ``u = bw_t / (n_t x random saturation)``.  For
the solver the dram block's latency curve is replaced by the convex surrogate
``a + b u + c / (1 - u)`` (relative least squares on the tabulated block, error reported),
so with ``u = k_t inv_pos(n_t)`` the SLO reads
``b k_t inv_pos(n_t) + c inv_pos(1 - k_t inv_pos(n_t)) <= r_t`` -- DCP-convex.  Each tenant's constraint
involves only its own n_t and is monotone in it, so the integer optimum gives each tenant
the fewest whole channels meeting its footprint and SLO -- found from ``ceil(n_t*)`` by
stepping against the dram block itself -- and ENNS the rest.

Reported beside it: the heuristic split (ENNS gets half of every device, tenants share the
other half equally), its QPS and whether it meets the SLOs, and the gain in %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dse.errors import DseError
from dse.optimize import Solution
from dse.units import MS_PER_S, NS_PER_US
from models.iks import device

#: Utilization range the surrogate is fitted over (the SLO region of interest).
FIT_MAX_UTIL = 0.95
#: Slack below which a solver's channel count counts as whole (interior-point tolerance).
SOLVER_TOL = 1e-6


def _list(value: Any, n: int | None, what: str) -> list[float]:
    if isinstance(value, str):
        items = [v for v in value.split(",") if v.strip()]
    elif isinstance(value, (list, tuple, np.ndarray)):
        items = list(value)
    else:
        items = [value]
    try:
        out = [float(v) for v in items]
    except (TypeError, ValueError):
        raise DseError(f"{what} must be numbers (a comma-separated list per tenant); got {value!r}") from None
    if n is not None and len(out) == 1 and n > 1:
        out = out * n
    if n is not None and len(out) != n:
        raise DseError(f"{what} has {len(out)} values; give one per tenant ({n}) or one for all")
    return out


def latency_surrogate(tech: str) -> tuple[float, float, float, float]:
    """(a, b, c, max relative error) of ``a + b u + c / (1 - u)`` fitted (relative least
    squares) to the dram block's tabulated tenant latency for u in [0, FIT_MAX_UTIL]."""
    u = device.UTIL_GRID[device.UTIL_GRID <= FIT_MAX_UTIL]
    lat = device.tenant_access_ns(device.TECHS.index(tech), u)
    x = np.column_stack([np.ones_like(u), u, 1.0 / (1.0 - u)])
    coef, *_ = np.linalg.lstsq(x / lat[:, None], np.ones_like(lat), rcond=None)
    err = float(np.max(np.abs(x @ coef - lat) / lat))
    return float(coef[0]), float(coef[1]), float(coef[2]), err


def _surrogate_ns(a: float, b: float, c: float, u: float) -> float:
    return a + b * u + c / (1.0 - u)


def _tenant_p99_us(n_ch, bw, accesses, solo_p99_us, tech_code, sat) -> float:
    """The model's spatial-MT tenant P99 (dram block, not the surrogate)."""
    if n_ch <= 0:
        return math.inf
    shift = device.tenant_access_ns(tech_code, bw / (n_ch * sat)) - device.tenant_access_ns(
        tech_code, bw / (device.CHANNELS * sat))
    return float(solo_p99_us + accesses * shift / NS_PER_US)


@dataclass(frozen=True)
class Tenants:
    """The checked inputs of a split: the devices, each tenant's traffic, SLO, footprint,
    solo P99 and device, and the LPDDR's channel figures (dram block)."""

    corpus_gb: float
    batch: int
    m: int
    bw: list[float]
    slo: list[float]
    foot: list[float]
    solo: list[float]
    dev: list[int]
    accesses: float
    lpddr: str
    tech: int
    sat: float
    peak: float

    @property
    def nt(self) -> int:
        return len(self.bw)

    def p99_us(self, t: int, channels: float) -> float:
        """Tenant ``t``'s P99 on ``channels`` channels (dram block, not the surrogate)."""
        return _tenant_p99_us(channels, self.bw[t], self.accesses, self.solo[t], self.tech, self.sat)


def channel_split(
    corpus_gb: float = 256.0,
    batch: int = 16,
    n_devices: int = 1,
    tenant_bw_gbps: Any = 64.0,
    tenant_slo_p99_us: Any = 195.0,
    tenant_footprint_gb: Any = 64.0,
    tenant_device: Any = 0,
    tenant_accesses: float = 32.0,
    tenant_solo_p99_us: Any = 191.0,
    lpddr: str = "lpddr5x_8533",
) -> Solution:
    """Channels per IKS for ENNS vs latency-critical tenants: max ENNS QPS, tenant P99 <= SLO."""
    ts = check_tenants(corpus_gb, batch, n_devices, tenant_bw_gbps, tenant_slo_p99_us, tenant_footprint_gb,
                       tenant_device, tenant_accesses, tenant_solo_p99_us, lpddr)
    surrogate = latency_surrogate(lpddr)
    prob, n_lp, e_lp = solve_relaxed(ts, surrogate)
    if prob.status not in ("optimal", "optimal_inaccurate"):
        return Solution("iks-channel-split", prob.status, "enns_qps", float("nan"),
                        summary={"why": "no split meets every SLO, footprint and the corpus"})
    n_int, e_int = whole_channels(ts, n_lp)
    return split_report(ts, surrogate, prob, n_lp, e_lp, n_int, e_int)


def check_tenants(corpus_gb: float, batch: int, n_devices: int, tenant_bw_gbps: Any, tenant_slo_p99_us: Any,
                  tenant_footprint_gb: Any, tenant_device: Any, tenant_accesses: float, tenant_solo_p99_us: Any,
                  lpddr: str) -> Tenants:
    """1. The inputs, checked (one value per tenant, or one for all), and the LPDDR's figures."""
    if lpddr not in device.TECHS:
        raise DseError(f"lpddr {lpddr!r} is not known; allowed: {', '.join(device.TECHS)}")
    m = int(n_devices)
    if m < 1 or corpus_gb <= 0 or batch < 1:
        raise DseError("n_devices and batch must be >= 1 and corpus_gb > 0")
    bw = _list(tenant_bw_gbps, None, "tenant_bw_gbps")
    nt = len(bw)
    slo = _list(tenant_slo_p99_us, nt, "tenant_slo_p99_us")
    foot = _list(tenant_footprint_gb, nt, "tenant_footprint_gb")
    solo = _list(tenant_solo_p99_us, nt, "tenant_solo_p99_us")
    dev = [int(d) for d in _list(tenant_device, nt, "tenant_device")]
    if any(d < 0 or d >= m for d in dev):
        raise DseError(f"tenant_device values must be 0..{m - 1}")
    tech = device.TECHS.index(lpddr)
    return Tenants(corpus_gb, batch, m, bw, slo, foot, solo, dev, tenant_accesses, lpddr, tech,
                   sat=float(device.tech_table()["random_sat_gbps"][tech]),
                   peak=float(device.tech_table()["peak_gbps"][tech]))


def solve_relaxed(ts: Tenants, surrogate: tuple[float, float, float, float]) -> tuple[Any, Any, Any]:
    """2. The convex relaxation (CVXPY, Clarabel): (problem, tenant channels n, ENNS channels e)."""
    import cvxpy as cp

    a, b, c, _ = surrogate
    cap = device.CHANNEL_CAPACITY_GB
    n = cp.Variable(ts.nt)
    e = cp.Variable(ts.m)
    cons = [e >= 0, n >= 1, ts.corpus_gb <= cap * cp.sum(e)]
    for d in range(ts.m):
        on_d = [t for t in range(ts.nt) if ts.dev[t] == d]
        cons.append(e[d] + (cp.sum(n[on_d]) if on_d else 0) <= device.CHANNELS)
    for t in range(ts.nt):
        cons.append(ts.foot[t] <= cap * n[t])
        lat_solo = _surrogate_ns(a, b, c, ts.bw[t] / (device.CHANNELS * ts.sat))
        room_ns = (ts.slo[t] - ts.solo[t]) * NS_PER_US / ts.accesses + lat_solo - a
        if ts.slo[t] < ts.solo[t]:
            raise DseError(f"tenant {t}: SLO {ts.slo[t]:g} us is below what its solo run reaches ({ts.solo[t]:g} us)")
        k_t = ts.bw[t] / ts.sat
        cons.append(b * k_t * cp.inv_pos(n[t]) + c * cp.inv_pos(1.0 - k_t * cp.inv_pos(n[t])) <= room_ns)
    prob = cp.Problem(cp.Maximize(cp.sum(e)), cons)
    prob.solve(solver="CLARABEL")
    return prob, n, e


def whole_channels(ts: Tenants, n_lp: Any) -> tuple[list[int], list[int]]:
    """3. Whole channels: each tenant rounded up (its constraint is monotone in n_t alone),
    then settled on the dram block itself (the surrogate is off by up to its fit error):
    the fewest channels that hold its footprint and meet its SLO; ENNS gets the rest."""
    cap = device.CHANNEL_CAPACITY_GB
    n_int = [int(math.ceil(v - SOLVER_TOL)) for v in np.atleast_1d(n_lp.value)]

    def meets(t: int, k: int) -> bool:
        return k * cap >= ts.foot[t] and ts.p99_us(t, k) <= ts.slo[t]

    for t in range(ts.nt):
        while not meets(t, n_int[t]) and n_int[t] < device.CHANNELS:
            n_int[t] += 1
        while n_int[t] > 1 and meets(t, n_int[t] - 1):
            n_int[t] -= 1
    e_int = [device.CHANNELS - sum(n_int[t] for t in range(ts.nt) if ts.dev[t] == d) for d in range(ts.m)]
    return n_int, e_int


def split_qps(ts: Tenants, channels_total: float) -> float:
    """ENNS QPS with the corpus spread over ``channels_total`` channels (NaN: it does not fit)."""
    from models.iks.model import ETA_FIT

    if channels_total * device.CHANNEL_CAPACITY_GB < ts.corpus_gb:
        return float("nan")
    passes = math.ceil(ts.batch / device.QUERIES_PER_PASS)
    return ts.batch / (passes * ts.corpus_gb / (channels_total * ts.peak * ETA_FIT["eta"]))


def split_report(ts: Tenants, surrogate: tuple[float, float, float, float], prob: Any, n_lp: Any, e_lp: Any,
                 n_int: list[int], e_int: list[int]) -> Solution:
    """4. The solution: one row per tenant and per device's ENNS share, the same split through
    the iks model, and the article's heuristic (half of each device to ENNS) beside it."""
    from models.iks.model import ETA_FIT, Iks

    a, b, c, fit_err = surrogate
    cap = device.CHANNEL_CAPACITY_GB
    q_opt = split_qps(ts, sum(e_int))
    # the same split through the iks model: each device's shard on its ENNS channels
    shards = [ts.corpus_gb * ed / sum(e_int) for ed in e_int]
    out = Iks().run({"corpus_gb": shards, "n_devices": 1.0, "enns_channels": [float(max(ed, 1)) for ed in e_int],
                     "batch": float(ts.batch), "lpddr": ts.lpddr})
    q_model = float(ts.batch / (np.max(out["search_ms"]) / MS_PER_S))
    # the article's heuristic: half of each device to ENNS, tenants share the other half
    half = device.CHANNELS // 2
    heur_n = [half / max(1, sum(1 for u in ts.dev if u == ts.dev[t])) for t in range(ts.nt)]
    heur_p99 = [ts.p99_us(t, math.floor(heur_n[t])) for t in range(ts.nt)]
    q_heur = split_qps(ts, half * ts.m)
    rows = []
    for t in range(ts.nt):
        rows.append({
            "tenant": t, "device": ts.dev[t], "bw_gbps": ts.bw[t], "slo_p99_us": ts.slo[t],
            "channels_lp": float(np.atleast_1d(n_lp.value)[t]), "channels": n_int[t],
            "p99_us": ts.p99_us(t, n_int[t]),
            "heuristic_channels": heur_n[t], "heuristic_p99_us": heur_p99[t],
        })
    for d in range(ts.m):
        rows.append({"tenant": "enns", "device": d, "bw_gbps": float("nan"), "slo_p99_us": float("nan"),
                     "channels_lp": float(np.atleast_1d(e_lp.value)[d]), "channels": e_int[d],
                     "p99_us": float("nan"), "heuristic_channels": float(half), "heuristic_p99_us": float("nan")})
    summary = {
        "enns_qps_optimal": q_opt,
        "enns_qps_model": q_model,
        "enns_qps_lp_bound": split_qps(ts, float(prob.value)),
        "enns_qps_heuristic_half_split": q_heur,
        "gain_over_heuristic_pct": (q_opt / q_heur - 1.0) * 100.0 if q_heur == q_heur else float("nan"),
        "heuristic_meets_slos": all(p <= s for p, s in zip(heur_p99, ts.slo)),
        "heuristic_fits_corpus": half * ts.m * cap >= ts.corpus_gb,
        "latency_surrogate": f"{a:.2f} + {b:.2f} u + {c:.2f} / (1 - u) ns, max error {fit_err * 100:.1f}% for u <= {FIT_MAX_UTIL}",
        "eta_frac": ETA_FIT["eta"],
    }
    return Solution(
        problem="iks-channel-split", status=prob.status, objective_name="enns_qps", objective=q_opt, rows=rows,
        summary=summary, formulation=(__doc__ or "").split("Formulation")[1].split("Reported")[0].strip(),
    )
