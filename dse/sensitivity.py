"""Global sensitivity of a metric to a model's inputs (SALib): Sobol indices or Morris
screening, over the uncertain defaults at one design point or over a space's knobs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dse.errors import DseError, did_you_mean

METHODS = ("sobol", "morris")


@dataclass
class Factor:
    """One varied input: its name and how a unit draw maps onto it."""

    name: str
    to_value: Any  # u in [0, 1) -> values
    describe: str


@dataclass
class SensitivityResult:
    metric: str
    method: str
    rows: list[dict[str, float | str]]  # ranked, most influential first
    evaluations: int
    infeasible: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def factors_from_uncertainty(model: Any, fixed: dict[str, Any], width: float | None = None) -> list[Factor]:
    from dse.uncertainty import uncertain_params

    out = []
    for name, (p, unc) in uncertain_params(model, set(fixed), width).items():
        d = float(p.default)
        out.append(Factor(name, lambda u, unc=unc, d=d: unc.sample(np.clip(u, 1e-12, 1 - 1e-12), d), unc.describe()))
    return out


def factors_from_space(space: Any, fixed: dict[str, Any]) -> list[Factor]:
    """A space's knobs (not the named ones): continuous ranges and discrete choices."""
    out = []
    for k in space.knobs:
        if k.name in fixed:
            continue
        what = f"[{k.lo:g}, {k.hi:g}]" if k.continuous else f"{k.size} values"
        out.append(Factor(k.name, k.from_unit, what))
    return out


def analyze(
    model: Any,
    metric: str,
    factors: list[Factor],
    fixed: dict[str, Any],
    *,
    method: str = "sobol",
    base_samples: int = 1024,
    seed: int = 0,
) -> SensitivityResult:
    """Sobol first-order and total indices (with 95 % confidence half-widths) or Morris
    mu* and sigma, ranked.  Infeasible draws take the median of the feasible ones (they
    are counted and reported; a large share makes the indices a statement about the
    feasible region only)."""
    if method not in METHODS:
        raise DseError(f"--method {method!r} is not known; allowed: {', '.join(METHODS)}")
    mmap = model.metric_map()
    if metric not in mmap:
        raise DseError(f"model {model.name} has no metric {metric!r}{did_you_mean(metric, mmap)}; metrics: {', '.join(mmap)}")
    if mmap[metric].categorical:
        raise DseError(f"--metric {metric} is a label ({', '.join(mmap[metric].labels)}), not a number whose variance can be "
                       f"apportioned; `dse uq {model.name}` gives each label's share of the draws")
    if len(factors) < 2:
        raise DseError(f"sensitivity needs at least 2 varying inputs; {len(factors)} left after the named ones")
    if base_samples < 4 or base_samples > 1 << 20:
        raise DseError(f"--base-samples {base_samples}: allowed 4 to {1 << 20:,}")
    problem = {"num_vars": len(factors), "names": [f.name for f in factors], "bounds": [[0.0, 1.0]] * len(factors)}
    u = _sample(problem, method, base_samples, seed)
    y, infeasible = _evaluate(model, metric, factors, fixed, u)
    rows = _indices(problem, method, u, y, seed)
    return SensitivityResult(metric, method, rows, int(len(y)), infeasible)


def _sample(problem: dict[str, Any], method: str, n: int, seed: int) -> np.ndarray:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SALib warns on n not a power of two
        if method == "sobol":
            from SALib.sample import sobol

            return sobol.sample(problem, n, calc_second_order=False, seed=seed)
        from SALib.sample import morris

        return morris.sample(problem, n, num_levels=4, seed=seed)


def _evaluate(model: Any, metric: str, factors: list[Factor], fixed: dict[str, Any], u: np.ndarray) -> tuple[np.ndarray, int]:
    cols: dict[str, Any] = dict(fixed)
    for j, f in enumerate(factors):
        cols[f.name] = f.to_value(u[:, j])
    ev = model.run_full(cols, checked=True)
    y = np.asarray(ev.metrics[metric], dtype=np.float64).copy()
    bad = ~ev.feasible | ~np.isfinite(y)
    if bad.all():
        raise DseError(f"{metric} is infeasible at every draw; name a feasible design point")
    y[bad] = np.median(y[~bad])
    return y, int(bad.sum())


def _indices(problem: dict[str, Any], method: str, u: np.ndarray, y: np.ndarray, seed: int) -> list[dict[str, Any]]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "sobol":
            from SALib.analyze import sobol

            si = sobol.analyze(problem, y, calc_second_order=False, seed=seed)
            rows = [{"name": n, "S1": float(si["S1"][i]), "S1_conf": float(si["S1_conf"][i]),
                     "ST": float(si["ST"][i]), "ST_conf": float(si["ST_conf"][i])}
                    for i, n in enumerate(problem["names"])]
            key = "ST"
        else:
            from SALib.analyze import morris

            si = morris.analyze(problem, u, y, num_levels=4, seed=seed)
            rows = [{"name": n, "mu_star": float(si["mu_star"][i]), "mu_star_conf": float(si["mu_star_conf"][i]),
                     "sigma": float(si["sigma"][i])} for i, n in enumerate(problem["names"])]
            key = "mu_star"
    rows = [{k: (0.0 if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()} for r in rows]
    return sorted(rows, key=lambda r: -float(r[key]))
