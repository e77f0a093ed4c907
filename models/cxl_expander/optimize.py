"""`dse optimize cxl-expander-provision`: the cheapest mix of CXL memory expanders that
meets a capacity, bandwidth and latency target within a host's lane and slot budget.

Formulation (a MILP solved by CVXPY with HiGHS):

    candidates i   every (media, link generation, lanes, module capacity) of the
                   cxl-expander model at the given read mix, direct-attached, keeping the
                   ones whose idle latency is within max_latency_ns
    variables      n_i in {0, 1, 2, ...}     devices of type i
    minimize       sum_i n_i (device_usd_i + years x energy_usd_per_year_i)
    subject to     sum_i n_i capacity_gib_i >= capacity_gib
                   sum_i n_i bw_gbps_i      >= bandwidth_gbps
                   sum_i n_i lanes_i        <= host_lanes
                   sum_i n_i                <= max_devices

The LP relaxation's bound and a greedy heuristic (fill capacity with the lowest $/GiB
type, then add the lowest $/(GB/s) type until bandwidth is met) are reported beside it.
"""

from __future__ import annotations

import itertools

import numpy as np

from dse.errors import DseError
from dse.optimize import Solution, solver_name
from dse.units import HOURS_PER_YEAR
from models.blocks import link
from models.blocks.cost import PUE, USD_PER_KWH

MODULE_CAPACITIES_GIB = (64, 128, 256, 512)  # E3.S/AIC module sizes offered by vendors (CZ120: 128/256)


def _candidates(read_frac: float, media: list[str]) -> dict[str, np.ndarray]:
    from models.cxl_expander.model import LINK_GENS, CxlExpander

    combos = [
        (m, g, lanes, cap)
        for m, g, lanes, cap in itertools.product(media, LINK_GENS, link.PARAM_LANES, MODULE_CAPACITIES_GIB)
    ]
    model = CxlExpander()
    cols = {
        "media": [c[0] for c in combos],
        "link_gen": [c[1] for c in combos],
        # each generation's own flit: 68 B up to 32 GT/s, 256 B at PCIe 6 (link block)
        "flit_mode": [link.FLIT_MODES[link.default_flit_mode(c[1])] for c in combos],
        "lanes": np.asarray([c[2] for c in combos], dtype=float),
        "capacity_gib": np.asarray([c[3] for c in combos], dtype=float),
        "channels": np.asarray([4 if c[2] == 16 else 2 for c in combos], dtype=float),
        "read_frac": read_frac,
    }
    out = model.run(cols)
    out["label"] = np.asarray([f"{m} {g} x{lanes} {cap} GiB" for m, g, lanes, cap in combos], dtype=object)
    out["lanes"] = cols["lanes"]
    out["capacity_gib"] = cols["capacity_gib"]
    return out


def provision(
    capacity_gib: float = 2048.0,
    bandwidth_gbps: float = 150.0,
    max_latency_ns: float = 300.0,
    host_lanes: int = 64,
    max_devices: int = 16,
    read_frac: float = 0.67,
    years: float = 0.0,
    media: str = "ddr4_3200,ddr5_4800,ddr5_5600,lpddr5x_8533,hbm2e",
) -> Solution:
    """Cheapest expander mix for a capacity / bandwidth / latency target (MILP)."""
    import cvxpy as cp

    from models.cxl_expander.model import MEDIA

    media_list = [m.strip() for m in (media.split(",") if isinstance(media, str) else list(media)) if m.strip()]
    for m in media_list:
        if m not in MEDIA:
            raise DseError(f"media {m!r} is not known; allowed: {', '.join(MEDIA)}")
    if capacity_gib <= 0 or bandwidth_gbps < 0 or host_lanes <= 0 or max_devices <= 0:
        raise DseError("capacity_gib, host_lanes and max_devices must be positive, bandwidth_gbps >= 0")
    c = _candidates(read_frac, media_list)
    ok = np.isfinite(c["idle_read_latency_ns"]) & (c["idle_read_latency_ns"] <= max_latency_ns)
    if not ok.any():
        best = np.nanmin(c["idle_read_latency_ns"])
        raise DseError(f"no expander meets max_latency_ns={max_latency_ns:g}; the fastest has {best:.0f} ns idle")
    idx = np.flatnonzero(ok)
    unit_cost = c["device_usd"][idx] + years * c["device_power_w"][idx] * PUE * HOURS_PER_YEAR / 1000.0 * USD_PER_KWH
    cap, bw, lanes = c["capacity_gib"][idx], c["bw_gbps"][idx], c["lanes"][idx]

    def solve(integer: bool) -> tuple[str, float | None, np.ndarray | None]:
        n = cp.Variable(len(idx), integer=integer)
        cons = [n >= 0, cap @ n >= capacity_gib, bw @ n >= bandwidth_gbps, lanes @ n <= host_lanes, cp.sum(n) <= max_devices]
        prob = cp.Problem(cp.Minimize(unit_cost @ n), cons)
        prob.solve(solver=solver_name())
        if prob.status not in ("optimal", "optimal_inaccurate"):
            return prob.status, None, None
        return prob.status, float(prob.value), np.round(n.value).astype(int) if integer else n.value

    status, cost, counts = solve(True)
    if counts is None:
        raise DseError(
            f"infeasible: {capacity_gib:g} GiB and {bandwidth_gbps:g} GB/s within {host_lanes} lanes and {max_devices} devices "
            f"({status}); raise host_lanes/max_devices or lower the targets"
        )
    _, lp_bound, _ = solve(False)
    greedy = _greedy(unit_cost, cap, bw, lanes, capacity_gib, bandwidth_gbps, host_lanes, max_devices)
    rows = []
    for j in np.flatnonzero(counts > 0):
        i = idx[j]
        rows.append(
            {
                "devices": int(counts[j]),
                "type": c["label"][i],
                "usd_each": float(c["device_usd"][i]),
                "gib_each": float(cap[j]),
                "gbps_each": float(bw[j]),
                "idle_ns": float(c["idle_read_latency_ns"][i]),
                "power_w_each": float(c["device_power_w"][i]),
            }
        )
    summary = {
        "total capacity (GiB)": float(cap @ counts),
        "total bandwidth (GB/s)": float(bw @ counts),
        "lanes used": int(lanes @ counts),
        "devices": int(counts.sum()),
        "LP relaxation bound (USD)": lp_bound if lp_bound is not None else float("nan"),
        "greedy heuristic (USD)": greedy if greedy is not None else "infeasible",
        "greedy gap over optimum (%)": (greedy / cost - 1) * 100 if greedy is not None else "n/a",
        "candidates within latency": int(len(idx)),
    }
    return Solution(
        problem="cxl-expander-provision",
        status=status,
        objective_name="cost_usd" + (f" (capex + {years:g} years of energy)" if years else " (capex)"),
        objective=cost,
        rows=rows,
        summary=summary,
        formulation=__doc__ or "",
    )


def _greedy(cost, cap, bw, lanes, need_cap, need_bw, max_lanes, max_dev) -> float | None:
    """Fill capacity with the cheapest $/GiB type, then bandwidth with the cheapest $/(GB/s)."""
    total, used_lanes, used_dev, got_cap, got_bw = 0.0, 0.0, 0, 0.0, 0.0
    by_cap = np.argsort(cost / cap)
    by_bw = np.argsort(np.where(bw > 0, cost / np.maximum(bw, 1e-12), np.inf))
    for order, target, which in ((by_cap, need_cap, "cap"), (by_bw, need_bw, "bw")):
        j = order[0]
        while (got_cap if which == "cap" else got_bw) < target:
            if used_lanes + lanes[j] > max_lanes or used_dev + 1 > max_dev:
                return None
            total += cost[j]
            used_lanes += lanes[j]
            used_dev += 1
            got_cap += cap[j]
            got_bw += bw[j]
    return float(total)
