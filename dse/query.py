"""Queries over results folders: the expression language compiled to Polars."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dse.errors import DseError
from dse.expr import Expr
from dse.store import open_results


def run_query(
    results: Path,
    *,
    where: str | None = None,
    minimize: list[str] | None = None,
    maximize: list[str] | None = None,
    top: int | None = 10,
    pareto_only: bool = False,
    feasible_only: bool = True,
    columns: list[str] | None = None,
) -> Any:
    import polars as pl

    r = open_results(results)
    path = r.pareto_path() if pareto_only else r.points_path()
    lf = pl.scan_parquet(path)
    schema = lf.collect_schema()
    available = list(schema.names())
    if feasible_only and "feasible" in available:
        lf = lf.filter(pl.col("feasible"))
    if where:
        e = Expr(where, what="--where")
        e.require_names(available)
        lf = lf.filter(e.to_polars())
    sort_exprs, descending = [], []
    for text, desc in [(t, False) for t in (minimize or [])] + [(t, True) for t in (maximize or [])]:
        e = Expr(text, what="--minimize" if not desc else "--maximize")
        e.require_names(available)
        sort_exprs.append(e.to_polars())
        descending.append(desc)
    if sort_exprs:
        lf = lf.sort(sort_exprs, descending=descending, nulls_last=True)
    if columns is None:
        try:
            m = r.manifest()
            columns = list(m.get("knobs", [])) + list(m.get("objectives", {}))
            extra = [c for c in (minimize or []) + (maximize or []) if c in available and c not in columns]
            columns += extra
        except DseError:
            columns = available
    for c in columns:
        if c not in available:
            from dse.errors import did_you_mean

            raise DseError(f"--columns: no column {c!r}{did_you_mean(c, available)}")
    lf = lf.select(columns)
    if top:
        lf = lf.head(top)
    try:
        return lf.collect()
    except pl.exceptions.PolarsError as exc:
        raise DseError(f"query failed: {str(exc).splitlines()[0]}") from None


def print_table(df: Any, title: str = "") -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title)
    for c in df.columns:
        t.add_column(c, justify="right" if df.schema[c].is_numeric() else "left")
    for row in df.iter_rows():
        t.add_row(*(f"{v:.5g}" if isinstance(v, float) else str(v) for v in row))
    Console().print(t)
