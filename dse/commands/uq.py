"""`dse uq NAME key=value ...` and `dse sensitivity NAME --metric M`: how sure an answer
is, and which input moves it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from dse import jsonsafe


def register(app: typer.Typer) -> None:
    app.command("uq")(uq_cmd)
    app.command("sensitivity")(sensitivity_cmd)


def _design(model: Any, assignments: list[str] | None, what: str) -> dict[str, Any]:
    """key=value -> engine columns (checked, units converted)."""
    from dse.errors import DseError
    from dse.model import parse_assignments

    fixed: dict[str, Any] = {}
    for key, value in parse_assignments(assignments or [], model.param_map()).items():
        name, value = model.resolve_name(key, value)
        if name in fixed:
            raise DseError(f"{what}: parameter {name} is given twice; give it once")
        fixed[name] = model.coerce(name, value)
    return fixed


def uq_cmd(
    name: Annotated[str, typer.Argument(help="Model name.")],
    assignments: Annotated[list[str] | None, typer.Argument(help="The design point: key=value knobs held fixed.")] = None,
    samples: Annotated[int, typer.Option(help="Monte Carlo draws (Sobol).")] = 4096,
    seed: Annotated[int, typer.Option(help="Seed of the draws (the same seed pairs two designs).")] = 0,
    width: Annotated[float | None, typer.Option(help="Replace every relative width by this one (0.3 = +-30 % on every input).")] = None,
    against: Annotated[list[str] | None, typer.Option("--against", help="key=value of a second design compared on the same draws (repeatable).")] = None,
    fit_draws: Annotated[int, typer.Option(help="Calibrations drawn from the block fits' sds (DRAM, flash constants), each over a share of the draws; 0: the calibration in force only.")] = 8,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Monte Carlo over every uncertain parameter default at one design point, and over the
    calibrated blocks' fitted constants: p5 / p50 / p95 and the mean of every metric
    (`dse describe NAME` shows each uncertainty)."""
    from dse import registry
    from dse.errors import DseError
    from dse.uncertainty import draws, run_draws, summarize, uncertain_params

    if not 2 <= samples <= 10_000_000:
        raise DseError(f"--samples {samples}: allowed 2 to 10,000,000")
    if not 0 <= seed < 2**32:
        raise DseError(f"--seed {seed}: allowed 0 to {2**32 - 1}")
    if not 0 <= fit_draws <= 64:
        raise DseError(f"--fit-draws {fit_draws}: allowed 0 to 64")
    model = registry.get(name)
    fixed = _design(model, assignments, "design")
    cols = draws(model, fixed, samples, seed, width)
    ev, fit_varied = run_draws(model, cols, samples, fit_draws, seed)
    out: dict[str, Any] = {
        "model": name, "samples": samples, "seed": seed, "width": width,
        "varied": sorted(uncertain_params(model, set(fixed), width)),
        "block_fits": {"draws": fit_draws if fit_varied else 0, "varied": fit_varied},
        "infeasible_share": float(1.0 - ev.feasible.mean()),
        "metrics": summarize(ev.metrics, ev.feasible, {m.name: m.labels for m in model.metrics if m.categorical}),
    }
    if against:
        other = dict(cols)
        for k in fixed:
            other.pop(k)
        other.update(_design(model, against, "--against"))
        out["against"] = _paired(model, ev, run_draws(model, other, samples, fit_draws, seed)[0])
    if as_json:
        typer.echo(jsonsafe.dumps(out))
        return
    _print_uq(out, model)


def _paired(model: Any, a: Any, b: Any) -> dict[str, Any]:
    """Per metric with a direction: the share of draws where design A is better than B
    (both feasible), and the median ratio A/B."""
    import numpy as np

    both = a.feasible & b.feasible
    res: dict[str, Any] = {"both_feasible_share": float(both.mean())}
    for m in model.metrics:
        if m.direction is None or not both.any():
            continue
        x, y = a.metrics[m.name][both], b.metrics[m.name][both]
        better = x < y if m.direction == "min" else x > y
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.median(x / y)
        res[m.name] = {"a_better_share": float(better.mean()), "median_ratio_a_over_b": float(ratio)}
    return res


def _print_uq(out: dict[str, Any], model: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console(width=140)
    con.print(f"[bold]{out['model']}[/bold]: {out['samples']:,} draws of {len(out['varied'])} uncertain inputs "
              f"(seed {out['seed']}); infeasible in {100 * out['infeasible_share']:.1f} % of draws")
    fits = out["block_fits"]
    if fits["varied"]:
        con.print(f"block fits: {fits['draws']} calibrations drawn from the fits' sds of {', '.join(fits['varied'])}")
    t = Table()
    for c in ("metric", "p5", "p50", "p95", "mean", "p95/p5"):
        t.add_column(c, justify="left" if c == "metric" else "right")
    for k, s in out["metrics"].items():
        if "shares" in s:  # a label: how often each one comes out
            t.add_row(k, ", ".join(f"{lab} {100 * f:.0f} %" for lab, f in s["shares"].items() if f > 0), "", "", "", "")
            continue
        if s["p50"] is None:
            t.add_row(k, "-", "-", "-", "-", "")
            continue
        spread = f"{s['p95'] / s['p5']:.3g}" if s["p5"] and s["p5"] > 0 else ""
        t.add_row(k, *(f"{s[q]:.4g}" for q in ("p5", "p50", "p95", "mean")), spread)
    con.print(t)
    if "against" in out:
        con.print(f"against the second design (same draws; both feasible in {100 * out['against']['both_feasible_share']:.1f} %):")
        for k, v in out["against"].items():
            if isinstance(v, dict):
                con.print(f"  {k}: first design better in {100 * v['a_better_share']:.1f} % of draws, "
                          f"median ratio {v['median_ratio_a_over_b']:.4g}")


def sensitivity_cmd(
    name: Annotated[str, typer.Argument(help="Model name.")],
    assignments: Annotated[list[str] | None, typer.Argument(help="key=value inputs held fixed.")] = None,
    metric: Annotated[str, typer.Option(help="The metric whose variance is apportioned.")] = "",
    method: Annotated[str, typer.Option(help="sobol (first-order and total indices) | morris (screening).")] = "sobol",
    space: Annotated[Path | None, typer.Option(help="Vary this space's knobs instead of the uncertain defaults.")] = None,
    base_samples: Annotated[int, typer.Option(help="Base samples N: Sobol evaluates N x (inputs + 2), Morris N trajectories.")] = 1024,
    width: Annotated[float | None, typer.Option(help="Relative width on every uncertain input (0.3 = +-30 %).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the samples.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Which input matters: global sensitivity of one metric (SALib), ranked."""
    from dse import registry, sensitivity
    from dse.errors import DseError

    if not metric:
        raise DseError("give --metric, one of the model's metrics (`dse describe NAME`)")
    if not 0 <= seed < 2**32:
        raise DseError(f"--seed {seed}: allowed 0 to {2**32 - 1}")
    model = registry.get(name)
    fixed = _design(model, assignments, "design")
    if space is not None:
        from dse.space import load_space

        sp = load_space(space)
        if sp.model.name != name:
            raise DseError(f"{space}: sweeps model {sp.model.name}, not {name}")
        fixed = {**sp.fixed, **fixed}
        factors = sensitivity.factors_from_space(sp, fixed)
    else:
        factors = sensitivity.factors_from_uncertainty(model, fixed, width)
    res = sensitivity.analyze(model, metric, factors, fixed, method=method, base_samples=base_samples, seed=seed)
    if as_json:
        typer.echo(jsonsafe.dumps(res.as_dict()))
        return
    _print_sensitivity(res)


def _print_sensitivity(res: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console(width=120)
    con.print(f"[bold]{res.metric}[/bold]: {res.method} indices from {res.evaluations:,} evaluations"
              + (f" ({res.infeasible:,} infeasible, set to the median)" if res.infeasible else ""))
    t = Table()
    cols = ("input", "S1", "±", "ST", "±") if res.method == "sobol" else ("input", "mu*", "±", "sigma")
    for c in cols:
        t.add_column(c, justify="left" if c == "input" else "right")
    for r in res.rows:
        if res.method == "sobol":
            t.add_row(str(r["name"]), f"{r['S1']:.3f}", f"{r['S1_conf']:.3f}", f"{r['ST']:.3f}", f"{r['ST_conf']:.3f}")
        else:
            t.add_row(str(r["name"]), f"{r['mu_star']:.4g}", f"{r['mu_star_conf']:.3g}", f"{r['sigma']:.4g}")
    con.print(t)
