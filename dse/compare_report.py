"""`dse compare`: who wins where, and whether the papers' designs are on the front.

For a comparison results folder: per workload point (each combination of the workload
knobs), per objective, the architecture whose best feasible design is best, its value,
the runner-up and the margin (runner-up over winner for ``min`` objectives, winner
over runner-up for ``max``: how many times better); a margin under :data:`TIE_X` is a
tie (``tie`` true: the winner is no better than the runner-up within 0.5 %).  For every results folder whose
space names the article's design: on the front or not, and the designs that dominate
it (from the sweep's manifest, see ``dse.paper_design``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dse import store
from dse.errors import DseError


#: Margins below this are ties.
TIE_X = 1.005


def winners(points: Any, workload: list[str], objectives: dict[str, str]) -> Any:
    """Polars frame: one row per workload point and objective with the winning and the
    runner-up architecture, their values and the margin."""
    import polars as pl  # noqa: PLC0415

    feasible = points.filter(pl.col("feasible"))
    rows = []
    for metric, direction in objectives.items():
        best = pl.col(metric).min() if direction == "min" else pl.col(metric).max()
        per_arch = feasible.filter(pl.col(metric).is_finite()).group_by([*workload, "arch"]).agg(best.alias("value"))
        ranked = per_arch.sort([*workload, "value"], descending=[False] * len(workload) + [direction == "max"])
        top = ranked.group_by(workload or [pl.lit(0).alias("_all")], maintain_order=True).agg(
            pl.col("arch").first().alias("winner"), pl.col("value").first().alias("value"),
            pl.col("arch").get(1, null_on_oob=True).alias("runner_up") if len(ranked) else pl.lit(None),
            pl.col("value").get(1, null_on_oob=True).alias("runner_up_value"),
            pl.len().alias("archs"),
        )
        ratio = (pl.col("runner_up_value") / pl.col("value")) if direction == "min" else (pl.col("value") / pl.col("runner_up_value"))
        margin = pl.when(pl.col("value") == pl.col("runner_up_value")).then(pl.lit(1.0)).otherwise(ratio)  # 0 = 0 is a tie
        top = top.with_columns(pl.lit(metric).alias("objective"), pl.lit(direction).alias("direction"), margin.alias("margin_x"))
        rows.append(top.with_columns((pl.col("margin_x") < TIE_X).fill_null(False).alias("tie")))
    out = pl.concat(rows, how="diagonal_relaxed")
    lead = [*workload, "objective", "direction", "winner", "value", "runner_up", "runner_up_value", "margin_x", "tie", "archs"]
    return out.select([c for c in lead if c in out.columns])


def report(folder: str | Path, uq: int = 0, seed: int = 0, width: float | None = None) -> dict[str, Any]:
    """Everything `dse compare` prints, as JSON-safe data.  With ``uq`` draws, each win
    also says how sure it is (:func:`robust_wins`)."""
    import polars as pl  # noqa: PLC0415

    folder = Path(folder)
    manifest = store.read_manifest(folder)
    if manifest.get("kind") == "comparison":
        points = pl.read_parquet(folder / store.POINTS)
        table = winners(points, list(manifest["workload"]), dict(manifest["objectives"]))
        if uq:
            table = robust_wins(manifest, points, table, uq, seed, width)
        return {
            "kind": "comparison",
            "space": manifest["space"]["name"],
            "family": manifest["family"],
            "workload": manifest["workload"],
            "objectives": manifest["objectives"],
            "wins": table.to_dicts(),
            "win_counts": table.filter(~pl.col("tie")).group_by("objective", "winner").len().sort("objective", "len", descending=[False, True]).to_dicts(),
            "pareto_by_arch": manifest.get("pareto_by_arch", {}),
            "paper_designs": {a: info.get("paper_design") for a, info in manifest["archs"].items() if info.get("paper_design")},
        }
    if uq:
        raise DseError(f"{folder}: --uq compares architectures; this folder is one study (sweep it with --uncertainty for a robust front)")
    if manifest.get("paper_design") is None and "paper_design" not in manifest.get("space", {}).get("definition", {}):
        raise DseError(f"{folder}: neither a comparison nor a sweep of a space with [paper_design]; nothing to compare")
    return {"kind": "study", "space": manifest["space"]["name"], "objectives": manifest["objectives"],
            "paper_designs": {manifest["space"]["name"]: manifest.get("paper_design")}}


def robust_wins(manifest: dict[str, Any], points: Any, table: Any, n: int, seed: int, width: float | None) -> Any:
    """``p_win``: the share of ``n`` joint draws of every uncertain parameter default
    (``dse uq``'s draws; ``width`` overrides every relative width) in which the winner's
    best design still beats the runner-up's best design at that workload point (strictly;
    a tie counts for neither); ``p_win_runner_up``: the draws in which the order flips.  Each
    architecture's draws are its own model's; a draw where a design turns infeasible counts
    as a loss for it."""
    import numpy as np  # noqa: PLC0415
    import polars as pl  # noqa: PLC0415

    if not 2 <= n <= 100_000:
        raise DseError(f"--uq {n}: give 2 to 100,000 draws")
    comp = _same_comparison(manifest)
    workload = list(manifest["workload"])
    feasible = points.filter(pl.col("feasible"))
    p_win, p_runner = [], []
    for row in table.iter_rows(named=True):
        metric, direction = row["objective"], row["direction"]
        at = feasible.filter(*[pl.col(w) == row[w] for w in workload]) if workload else feasible
        draws = {}
        for arch in (row["winner"], row["runner_up"]):
            if arch is None:
                continue
            mine = at.filter(pl.col("arch") == arch).sort(metric, descending=direction == "max").row(0, named=True)
            draws[arch] = _under_draws(comp.archs[arch], mine, metric, workload, n, seed, width, direction)
        if row["runner_up"] is None:
            p_win.append(1.0), p_runner.append(None)
            continue
        a, b = draws[row["winner"]], draws[row["runner_up"]]
        p_win.append(float(np.mean(a < b)))
        p_runner.append(float(np.mean(b < a)))
    return table.with_columns(pl.Series("p_win", p_win, dtype=pl.Float64), pl.Series("p_win_runner_up", p_runner, dtype=pl.Float64))


def _same_comparison(manifest: dict[str, Any]) -> Any:
    from dse import comparison  # noqa: PLC0415

    path = Path(manifest["space"]["path"])
    if not path.is_file():
        raise DseError(f"{path}: the comparison file of this study is gone; --uq re-evaluates its designs from it")
    comp = comparison.load_comparison(path)
    if comp.sha256 != manifest["space"]["sha256"]:
        raise DseError(f"{path}: changed since the sweep; re-run the sweep before --uq")
    return comp


def _under_draws(space: Any, row: dict[str, Any], metric: str, workload: list[str], n: int, seed: int,
                 width: float | None, direction: str) -> Any:
    """One design's ``metric`` over ``n`` draws, as a 'lower is better' column (``max``
    objectives negated; infeasible draws +inf)."""
    import numpy as np  # noqa: PLC0415

    from dse.uncertainty import draws  # noqa: PLC0415

    model = space.model
    names = {model.workload_param(w) or w: w for w in workload}
    fixed = dict(space.fixed)
    for k in space.knobs:
        fixed[k.name] = model.coerce(k.name, row[names.get(k.name, k.name)])
    ev = model.run_full(draws(model, fixed, n, seed, width), checked=True)
    v = np.broadcast_to(ev.metrics[metric], (n,)).astype(np.float64)
    v = -v if direction == "max" else v
    return np.where(np.broadcast_to(ev.feasible, (n,)) & np.isfinite(v), v, np.inf)
