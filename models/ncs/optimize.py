"""`dse optimize ncs-tiers`: tier (and design) per popularity bucket, minimizing fleet TCO.

The article places each video in its cheapest tier, video by video ("Baseline Pareto", L539).
A provider also answers for the fleet as a whole: a mean availability and a mean retrieval
latency.  A per-video rule must then meet the target on every video; a fleet-level
assignment may put the rarely watched tail in archive tiers (hours to restore, almost no
accesses) and keep the rest online.

Formulation (MILP, CVXPY + HiGHS):

    buckets b     annual-view buckets of the fleet's lognormal (popularity.py): share w_b,
                  mean views n_b (the per-video cost of a fixed tier is linear in views, so
                  the bucket mean gives the bucket's mean cost exactly)
    options o     (design, tier): baseline HR or NCS, in each allowed tier
    x_bo in {0,1} bucket b uses option o;   sum_o x_bo = 1
    minimize      videos x sum_bo w_b cost_bo x_bo                     ($/year, ncs model)
    subject to    sum_bo w_b avail_o x_bo            >= min_availability_pct   (per video)
                  sum_bo w_b n_b latency_o x_bo      <= max_mean_latency_s x sum_b w_b n_b
                                                        (per access)
                  sum_bo videos w_b n_b gpu_h_o x_bo <= gpu_cap_hours  (optional)

Greedy (the article's rule with the targets applied to every video): each bucket takes its
cheapest option whose own availability and latency meet the targets.  Reported: both fleet
TCOs, the gap, and the baseline-only (HR) optimum under the same targets.
"""

from __future__ import annotations

import numpy as np

from dse.errors import DseError
from dse.optimize import Solution, solver_name
from dse.units import DAYS_PER_YEAR

#: Bucket edges span 0.01 to 10^4 views a year (log-spaced), plus the open ends.
BUCKET_VIEWS_LO, BUCKET_VIEWS_HI = 1e-2, 1e4


def _buckets(popularity: str, buckets: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges, shares and mean annual views of the buckets."""
    from models.ncs import popularity as pop

    if popularity not in pop.POPULARITY:
        raise DseError(f"popularity {popularity!r} is not known; allowed: {', '.join(pop.POPULARITY)}")
    median, sigma = pop.POPULARITY[popularity]
    mu = np.log(median)
    inner = np.logspace(np.log10(BUCKET_VIEWS_LO), np.log10(BUCKET_VIEWS_HI), buckets - 1)
    edges = np.concatenate([[0.0], inner, [np.inf]])
    F = pop.cdf(edges, mu, sigma)
    G = pop.partial_mean(edges, mu, sigma)
    share = np.diff(F)
    mean_views = np.diff(G) / share
    return edges, share, mean_views


def _options(tier_names: list[str], allow_ncs: bool) -> list[tuple[str, str]]:
    designs = ("baseline", "ncs") if allow_ncs else ("baseline",)
    return [(d, t) for d in designs for t in tier_names]


def tier_assignment(
    buckets: int = 24,
    videos: float = 1e9,
    video_min: float = 1.0,
    popularity: str = "coverage_fit_lognormal",
    tiers: str = "all",
    min_availability_pct: float = 99.9,
    max_mean_latency_s: float = 10.0,
    gpu_cap_hours: float = 0.0,
    allow_ncs: bool = True,
) -> Solution:
    """Tier and design per popularity bucket minimizing fleet TCO under availability and mean-latency targets (MILP vs per-video greedy)."""
    import cvxpy as cp

    from models.ncs import tiers as tiers_mod
    from models.ncs.model import Ncs

    if not 3 <= int(buckets) <= 200:
        raise DseError(f"buckets={buckets} is out of range; allowed: 3 to 200")
    if videos <= 0 or video_min <= 0:
        raise DseError("videos and video_min must be positive")
    if tiers not in tiers_mod.TIER_SETS:
        raise DseError(f"tiers={tiers!r} is not a tier set; allowed: {', '.join(tiers_mod.TIER_SETS)}")
    if gpu_cap_hours < 0:
        raise DseError("gpu_cap_hours must be >= 0 (0 = no cap)")
    edges, share, views = _buckets(popularity, int(buckets))
    opts = _options(list(tiers_mod.TIER_SETS[tiers]), bool(allow_ncs))
    n_b, n_o = share.size, len(opts)

    # per-video cost, latency, availability and GPU time of every (bucket, option), from the model
    model = Ncs()
    interval = np.repeat(DAYS_PER_YEAR / views, n_o)
    run = model.run({
        "design": [d for _ in range(n_b) for d, _t in opts],
        "tier": [t for _ in range(n_b) for _d, t in opts],
        "access_interval_days": np.clip(interval, *model.param_map()["access_interval_days"].bounds),
        "video_min": video_min,
        "popularity": popularity,
    })
    cost = run["tco_usd_per_year"].reshape(n_b, n_o)
    latency = run["restore_latency_s"].reshape(n_b, n_o)
    avail = run["availability_pct"].reshape(n_b, n_o)
    gpu_usd = run["sr_usd_per_year"].reshape(n_b, n_o)
    gpu_h = gpu_usd / model.param_map()["gpu_usd_per_hour"].default  # billed GPU-hours per video-year
    access = share * views

    def solve(allowed: np.ndarray) -> tuple[str, np.ndarray | None, float]:
        x = cp.Variable((n_b, n_o), boolean=True)
        cons = [cp.sum(x, axis=1) == 1, x <= allowed.astype(float)]
        cons.append(cp.sum(cp.multiply(share[:, None] * avail, x)) >= min_availability_pct)
        cons.append(cp.sum(cp.multiply(access[:, None] * latency, x)) <= max_mean_latency_s * access.sum())
        if gpu_cap_hours > 0:
            cons.append(videos * cp.sum(cp.multiply(share[:, None] * gpu_h, x)) <= gpu_cap_hours)
        prob = cp.Problem(cp.Minimize(videos * cp.sum(cp.multiply(share[:, None] * cost, x))), cons)
        prob.solve(solver=solver_name())
        if x.value is None:
            return prob.status, None, float("nan")
        choice = np.argmax(x.value, axis=1)
        return prob.status, choice, float(videos * np.sum(share * cost[np.arange(n_b), choice]))

    every = np.ones((n_b, n_o), dtype=bool)
    status, milp, milp_usd = solve(every)
    hr_only = np.array([[d == "baseline" for d, _t in opts]] * n_b)
    _, base_milp, base_usd = solve(hr_only)

    # greedy: cheapest option per bucket meeting the targets on its own videos
    ok = (avail >= min_availability_pct) & (latency <= max_mean_latency_s)
    greedy = np.argmin(np.where(ok, cost, np.inf), axis=1)
    greedy_ok = bool(np.all(ok.any(axis=1)))
    greedy_usd = float(videos * np.sum(share * cost[np.arange(n_b), greedy])) if greedy_ok else float("nan")
    if gpu_cap_hours > 0 and greedy_ok:
        greedy_ok = bool(videos * np.sum(share * gpu_h[np.arange(n_b), greedy]) <= gpu_cap_hours)

    def fleet_means(choice: np.ndarray | None) -> tuple[float, float]:
        if choice is None:
            return float("nan"), float("nan")
        rows = np.arange(n_b)
        return float(np.sum(share * avail[rows, choice])), float(np.sum(access * latency[rows, choice]) / access.sum())

    label = [f"{d}/{t}" for d, t in opts]
    out_rows = []
    for b in range(n_b):
        out_rows.append({
            "views_per_year": f"{edges[b]:.3g}-{edges[b + 1]:.3g}",
            "videos_pct": 100.0 * share[b],
            "mean_views": float(views[b]),
            "milp": label[milp[b]] if milp is not None else "-",
            "greedy": label[greedy[b]] if greedy_ok or ok[b].any() else "-",
            "milp_usd_per_video_year": float(cost[b, milp[b]]) if milp is not None else float("nan"),
        })
    a_m, l_m = fleet_means(milp)
    a_g, l_g = fleet_means(greedy if greedy_ok else None)
    summary = {
        "milp_fleet_tco_usd_per_year": milp_usd,
        "greedy_fleet_tco_usd_per_year": greedy_usd,
        "milp_vs_greedy_saving_pct": 100.0 * (1.0 - milp_usd / greedy_usd) if greedy_ok else float("nan"),
        "greedy_feasible": greedy_ok,
        "baseline_only_milp_tco_usd_per_year": base_usd,
        "ncs_vs_baseline_saving_pct": 100.0 * (1.0 - milp_usd / base_usd),
        "milp_mean_availability_pct": a_m,
        "milp_mean_latency_s": l_m,
        "greedy_mean_availability_pct": a_g,
        "greedy_mean_latency_s": l_g,
        "videos": float(videos),
        "solver": solver_name(),
    }
    return Solution(
        problem="ncs-tiers",
        status=status,
        objective_name="fleet TCO (USD/year)",
        objective=milp_usd,
        rows=out_rows,
        summary=summary,
        formulation=__doc__ or "",
    )
