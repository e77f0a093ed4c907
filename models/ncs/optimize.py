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

from dataclasses import dataclass
from typing import Any

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


@dataclass
class BucketOptions:
    """Per-video cost, latency, availability and GPU time of every (bucket, option), from the
    ncs model; ``share``/``views`` per bucket, ``access`` = share x views (accesses per video)."""

    edges: np.ndarray
    share: np.ndarray
    views: np.ndarray
    opts: list[tuple[str, str]]
    cost: np.ndarray
    latency: np.ndarray
    avail: np.ndarray
    gpu_h: np.ndarray

    @property
    def access(self) -> np.ndarray:
        return self.share * self.views

    @property
    def shape(self) -> tuple[int, int]:
        return self.share.size, len(self.opts)


def _check(buckets: int, videos: float, video_min: float, tiers: str, gpu_cap_hours: float) -> None:
    from models.ncs import tiers as tiers_mod

    if not 3 <= int(buckets) <= 200:
        raise DseError(f"buckets={buckets} is out of range; allowed: 3 to 200")
    if videos <= 0 or video_min <= 0:
        raise DseError("videos and video_min must be positive")
    if tiers not in tiers_mod.TIER_SETS:
        raise DseError(f"tiers={tiers!r} is not a tier set; allowed: {', '.join(tiers_mod.TIER_SETS)}")
    if gpu_cap_hours < 0:
        raise DseError("gpu_cap_hours must be >= 0 (0 = no cap)")


def bucket_options(buckets: int, video_min: float, popularity: str, tiers: str, allow_ncs: bool) -> BucketOptions:
    """Evaluate every (bucket, option) pair with the ncs model at the bucket's mean views."""
    from models.ncs import tiers as tiers_mod
    from models.ncs.model import Ncs

    edges, share, views = _buckets(popularity, int(buckets))
    opts = _options(list(tiers_mod.TIER_SETS[tiers]), bool(allow_ncs))
    n_b, n_o = share.size, len(opts)
    model = Ncs()
    interval = np.repeat(DAYS_PER_YEAR / views, n_o)
    run = model.run({
        "design": [d for _ in range(n_b) for d, _t in opts],
        "tier": [t for _ in range(n_b) for _d, t in opts],
        "access_interval_days": np.clip(interval, *model.param_map()["access_interval_days"].bounds),
        "video_min": video_min,
        "popularity": popularity,
    })
    gpu_usd = run["sr_usd_per_year"].reshape(n_b, n_o)
    return BucketOptions(
        edges=edges, share=share, views=views, opts=opts,
        cost=run["tco_usd_per_year"].reshape(n_b, n_o),
        latency=run["restore_latency_s"].reshape(n_b, n_o),
        avail=run["availability_pct"].reshape(n_b, n_o),
        gpu_h=gpu_usd / model.param_map()["gpu_usd_per_hour"].default,  # billed GPU-hours per video-year
    )


@dataclass
class Targets:
    videos: float
    min_availability_pct: float
    max_mean_latency_s: float
    gpu_cap_hours: float  # 0 = no cap


def solve_milp(t: BucketOptions, allowed: np.ndarray, tg: Targets) -> tuple[str, np.ndarray | None, float]:
    """The fleet MILP over the allowed (bucket, option) pairs: (status, choice per bucket, fleet $/year)."""
    import cvxpy as cp

    n_b, n_o = t.shape
    share, access = t.share, t.access
    x = cp.Variable((n_b, n_o), boolean=True)
    cons = [cp.sum(x, axis=1) == 1, x <= allowed.astype(float)]
    cons.append(cp.sum(cp.multiply(share[:, None] * t.avail, x)) >= tg.min_availability_pct)
    cons.append(cp.sum(cp.multiply(access[:, None] * t.latency, x)) <= tg.max_mean_latency_s * access.sum())
    if tg.gpu_cap_hours > 0:
        cons.append(tg.videos * cp.sum(cp.multiply(share[:, None] * t.gpu_h, x)) <= tg.gpu_cap_hours)
    prob = cp.Problem(cp.Minimize(tg.videos * cp.sum(cp.multiply(share[:, None] * t.cost, x))), cons)
    prob.solve(solver=solver_name())
    if x.value is None:
        return prob.status, None, float("nan")
    choice = np.argmax(x.value, axis=1)
    return prob.status, choice, float(tg.videos * np.sum(share * t.cost[np.arange(n_b), choice]))


def greedy(t: BucketOptions, tg: Targets) -> tuple[np.ndarray, np.ndarray, bool, float]:
    """The per-video rule: each bucket's cheapest option meeting the targets on its own videos.
    Returns (per-option ok mask, choice, feasible, fleet $/year)."""
    rows = np.arange(t.shape[0])
    ok = (t.avail >= tg.min_availability_pct) & (t.latency <= tg.max_mean_latency_s)
    choice = np.argmin(np.where(ok, t.cost, np.inf), axis=1)
    feasible = bool(np.all(ok.any(axis=1)))
    usd = float(tg.videos * np.sum(t.share * t.cost[rows, choice])) if feasible else float("nan")
    if tg.gpu_cap_hours > 0 and feasible:
        feasible = bool(tg.videos * np.sum(t.share * t.gpu_h[rows, choice]) <= tg.gpu_cap_hours)
    return ok, choice, feasible, usd


def fleet_means(t: BucketOptions, choice: np.ndarray | None) -> tuple[float, float]:
    """Mean availability per video and mean latency per access of an assignment."""
    if choice is None:
        return float("nan"), float("nan")
    rows = np.arange(t.shape[0])
    access = t.access
    return float(np.sum(t.share * t.avail[rows, choice])), float(np.sum(access * t.latency[rows, choice]) / access.sum())


def bucket_rows(t: BucketOptions, milp: np.ndarray | None, ok: np.ndarray, greedy_choice: np.ndarray,
                greedy_ok: bool) -> list[dict[str, Any]]:
    """One row per bucket: its view range and share, and the option each method picks."""
    label = [f"{d}/{tier}" for d, tier in t.opts]
    return [
        {
            "views_per_year": f"{t.edges[b]:.3g}-{t.edges[b + 1]:.3g}",
            "videos_pct": 100.0 * t.share[b],
            "mean_views": float(t.views[b]),
            "milp": label[milp[b]] if milp is not None else "-",
            "greedy": label[greedy_choice[b]] if greedy_ok or ok[b].any() else "-",
            "milp_usd_per_video_year": float(t.cost[b, milp[b]]) if milp is not None else float("nan"),
        }
        for b in range(t.shape[0])
    ]


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
    _check(buckets, videos, video_min, tiers, gpu_cap_hours)
    t = bucket_options(buckets, video_min, popularity, tiers, allow_ncs)
    tg = Targets(videos, min_availability_pct, max_mean_latency_s, gpu_cap_hours)
    n_b, n_o = t.shape
    status, milp, milp_usd = solve_milp(t, np.ones((n_b, n_o), dtype=bool), tg)
    hr_only = np.array([[d == "baseline" for d, _t in t.opts]] * n_b)
    _, _, base_usd = solve_milp(t, hr_only, tg)
    ok, g_choice, greedy_ok, greedy_usd = greedy(t, tg)
    a_m, l_m = fleet_means(t, milp)
    a_g, l_g = fleet_means(t, g_choice if greedy_ok else None)
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
        rows=bucket_rows(t, milp, ok, g_choice, greedy_ok),
        summary=summary,
        formulation=__doc__ or "",
    )
