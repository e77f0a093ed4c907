"""Queries over results folders: the expression language compiled to Polars."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dse.errors import DseError, did_you_mean
from dse.expr import Expr
from dse.store import (
    MANIFEST,
    check_parquet_data,
    open_results,
    parquet_schema,
    read_manifest,
    unreadable,
)

#: ``--top`` above this shows every row (Polars takes a 64-bit length).
_TOP_ALL = 2**62


def check_top(top: int | None) -> int | None:
    """``--top N``: N rows, 0 (or None) for all; negative is refused."""
    if top is None:
        return None
    if isinstance(top, bool) or not isinstance(top, int):
        raise DseError(f"--top must be a whole number of rows (0 for all), not {top!r}")
    if top < 0:
        raise DseError(f"--top must be 0 (all rows) or more, not {top}")
    return None if top == 0 or top >= _TOP_ALL else top


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
    group_by: list[str] | None = None,
    agg: list[str] | None = None,
) -> Any:
    """Filter, sort and list a results folder's points (``top`` 0 or None: all rows);
    with ``group_by``, one row per group of the aggregates ``agg`` (``FUNC:COLUMN`` or
    ``FUNC`` for every objective; default: the count and each objective's best).
    Bad input and unreadable files are a :class:`DseError`."""
    import polars as pl

    limit = check_top(top)
    r = open_results(results)
    path = r.pareto_path() if pareto_only else r.points_path()
    schema = parquet_schema(path)
    available = list(schema.names())
    exprs: list[tuple[str, Expr, bool]] = []
    if where:
        e = Expr(where, what="--where")
        e.require_names(available)
        check_labels(e, column_labels(r.path, schema))
        exprs.append(("where", e, False))
    for text, desc in [(t, False) for t in (minimize or [])] + [(t, True) for t in (maximize or [])]:
        e = Expr(text, what="--maximize" if desc else "--minimize")
        e.require_names(available)
        exprs.append(("sort", e, desc))
    objectives: dict[str, str] = read_manifest(r.path)["objectives"] if (r.path / MANIFEST).exists() else {}
    aggs = _aggregations(group_by, agg, available, objectives) if group_by else None
    if columns is None:
        columns = available
        if (r.path / MANIFEST).exists():
            m = read_manifest(r.path)
            wanted = list(m["knobs"]) + list(m["objectives"])
            wanted += [c for c in (minimize or []) + (maximize or []) if c not in wanted]
            shown = [c for c in dict.fromkeys(wanted) if c in available]
            columns = shown or available
    else:
        for c in columns:
            if c not in available:
                raise DseError(f"--columns: no column {c!r}{did_you_mean(c, available)}; available: {', '.join(available)}")
        if not columns:
            raise DseError(f"--columns: give at least one column; available: {', '.join(available)}")
        dup = sorted({c for c in columns if columns.count(c) > 1})
        if dup:
            raise DseError(f"--columns: {', '.join(map(repr, dup))} given twice")
    try:
        lf = pl.scan_parquet(path)
        if feasible_only and "feasible" in available:
            lf = lf.filter(pl.col("feasible"))
        sort_exprs, descending = [], []
        for kind, e, desc in exprs:
            if kind == "where":
                lf = lf.filter(e.to_polars())
            else:
                sort_exprs.append(e.to_polars())
                descending.append(desc)
        if sort_exprs:
            lf = lf.sort(sort_exprs, descending=descending, nulls_last=True)
        lf = lf.group_by(group_by, maintain_order=True).agg(aggs).sort(group_by) if aggs is not None else lf.select(columns)
        if limit is not None:
            lf = lf.head(limit)
        return lf.collect()
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError, OverflowError) as exc:
        check_parquet_data(path)  # a damaged file says so, naming it
        if isinstance(exc, OSError):
            raise unreadable(path, getattr(exc, "strerror", None) or exc) from None
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DseError(f"query failed: {first}") from None


def column_labels(folder: Path, schema: Any) -> dict[str, tuple[str, ...]]:
    """The labels of a results folder's categorical columns (label knobs and categorical
    metrics of the manifest's model), for the columns stored as labels; {} when unknown."""
    import polars as pl

    from dse import registry

    try:
        name = read_manifest(folder)["model"]["name"] if (Path(folder) / MANIFEST).exists() else None
        model = registry.get(name) if isinstance(name, str) else None
    except (DseError, KeyError, TypeError):
        return {}
    if model is None:
        return {}
    out = {p.name: tuple(str(c) for c in p.choices or ()) for p in model.params if p.categorical}
    out.update({m.name: m.labels for m in model.metrics if m.labels})
    return {k: v for k, v in out.items() if schema.get(k) == pl.Categorical}


def check_labels(e: Expr, labels: dict[str, tuple[str, ...]]) -> None:
    """A text compared with a categorical column must be one of its labels: a typo
    (``bottleneck_code == "flsh"``) would silently match nothing."""
    import ast

    for node in ast.walk(e.tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        names = [s.id for s in sides if isinstance(s, ast.Name) and s.id in labels]
        for side in sides:
            items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
            texts = [c.value for c in items if isinstance(c, ast.Constant) and isinstance(c.value, str)]
            for name in names:
                bad = [t for t in texts if t not in labels[name]]
                if bad:
                    raise DseError(f"{e.what}: {name} has no label {bad[0]!r}{did_you_mean(bad[0], labels[name])}; "
                                   f"labels: {', '.join(labels[name])}")


AGG_FUNCS = ("min", "max", "mean", "median", "count")


def _aggregations(group_by: list[str], agg: list[str] | None, available: list[str], objectives: dict[str, str]) -> list[Any]:
    """Polars aggregations for ``--agg`` (``FUNC:COLUMN``, or ``FUNC`` for each objective)."""
    import polars as pl

    for g in group_by:
        if g not in available:
            raise DseError(f"--group-by: no column {g!r}{did_you_mean(g, available)}; available: {', '.join(available)}")
    specs = list(agg or [])
    if not specs:  # the count and each objective's best value
        specs = ["count"] + [f"{'min' if d == 'min' else 'max'}:{k}" for k, d in objectives.items()]
    out: list[Any] = []
    for spec in specs:
        func, _, col = spec.partition(":")
        func = func.strip()
        if func not in AGG_FUNCS:
            raise DseError(f"--agg {spec!r}: unknown function {func!r}; allowed: {', '.join(AGG_FUNCS)} (as FUNC:COLUMN)")
        if func == "count":
            out.append(pl.len().alias("count"))
            continue
        targets = [col.strip()] if col.strip() else list(objectives)
        if not targets:
            raise DseError(f"--agg {spec!r}: give a column (FUNC:COLUMN); this folder names no objectives")
        for c in targets:
            if c not in available:
                raise DseError(f"--agg {spec!r}: no column {c!r}{did_you_mean(c, available)}")
            out.append(getattr(pl.col(c), func)().alias(f"{func}_{c}"))
    names = [e.meta.output_name() for e in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DseError(f"--agg: {', '.join(dup)} asked twice")
    return out


def print_table(df: Any, title: str = "") -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=escape(title))
    for c in df.columns:
        t.add_column(escape(c), justify="right" if df.schema[c].is_numeric() else "left")
    for row in df.iter_rows():
        t.add_row(*(f"{v:.5g}" if isinstance(v, float) else escape(str(v)) for v in row))
    Console().print(t)
