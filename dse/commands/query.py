"""`dse query RESULTS`: filter, rank and list design points of a finished sweep."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    app.command("query")(query_cmd)


def query_cmd(
    results: Annotated[Path, typer.Argument(help="Results folder of a sweep.")],
    where: Annotated[str | None, typer.Option(help='Filter, e.g. "loaded_read_latency_ns < 300 and lanes >= 8".')] = None,
    minimize: Annotated[list[str] | None, typer.Option(help="Sort ascending by this column or expression (repeatable).")] = None,
    maximize: Annotated[list[str] | None, typer.Option(help="Sort descending by this column or expression (repeatable).")] = None,
    top: Annotated[int, typer.Option(help="Rows to show (0: all).")] = 10,
    pareto: Annotated[bool, typer.Option("--pareto", help="Only the Pareto-optimal points.")] = False,
    feasible: Annotated[bool, typer.Option("--feasible/--all", help="Only points that meet the space's constraints.")] = True,
    columns: Annotated[str | None, typer.Option(help="Comma-separated columns to show (default: knobs and objectives).")] = None,
    group_by: Annotated[str | None, typer.Option("--group-by", help="Comma-separated columns: one row per group.")] = None,
    agg: Annotated[list[str] | None, typer.Option(help="With --group-by: FUNC:COLUMN or FUNC (each objective); FUNC in min, max, mean, median, count (repeatable).")] = None,
    fmt: Annotated[str, typer.Option("--format", help="table | csv | json | auto (table on a terminal, csv when piped)")] = "auto",
) -> None:
    """Query a results folder with a safe expression language (never Python eval)."""
    from dse.errors import DseError
    from dse.query import check_top, run_query

    if fmt not in ("table", "csv", "json", "auto"):
        raise DseError(f"--format {fmt!r} is not known; allowed: table, csv, json, auto")
    if agg and not group_by:
        raise DseError("--agg needs --group-by")
    if fmt == "auto":  # piped output is never truncated to a terminal's width
        import sys

        fmt = "table" if sys.stdout.isatty() else "csv"
    check_top(top)
    df = run_query(
        results,
        where=where,
        minimize=minimize or [],
        maximize=maximize or [],
        top=top,
        pareto_only=pareto,
        feasible_only=feasible,
        columns=[c.strip() for c in columns.split(",")] if columns else None,
        group_by=[c.strip() for c in group_by.split(",")] if group_by else None,
        agg=agg,
    )
    if fmt == "csv":
        typer.echo(df.write_csv(), nl=False)
    elif fmt == "json":
        typer.echo(df.write_json())
    elif fmt == "table":
        from dse.query import print_table

        print_table(df, title=f"{results} ({df.height} rows)")
