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


def report(folder: str | Path) -> dict[str, Any]:
    """Everything `dse compare` prints, as JSON-safe data."""
    import polars as pl  # noqa: PLC0415

    folder = Path(folder)
    manifest = store.read_manifest(folder)
    if manifest.get("kind") == "comparison":
        points = pl.read_parquet(folder / store.POINTS)
        table = winners(points, list(manifest["workload"]), dict(manifest["objectives"]))
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
    if manifest.get("paper_design") is None and "paper_design" not in manifest.get("space", {}).get("definition", {}):
        raise DseError(f"{folder}: neither a comparison nor a sweep of a space with [paper_design]; nothing to compare")
    return {"kind": "study", "space": manifest["space"]["name"], "objectives": manifest["objectives"],
            "paper_designs": {manifest["space"]["name"]: manifest.get("paper_design")}}
