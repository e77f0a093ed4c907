"""Altair charts for study pages: the Pareto front and knobs against objectives."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

MAX_BACKGROUND_POINTS = 3000


#: Unit suffix -> how an axis title shows it.
UNIT_LABELS = {
    "ns": "ns", "us": "µs", "ms": "ms", "s": "s", "usd": "$", "usd_per_gib": "$/GiB", "usd_per_gb": "$/GB",
    "usd_per_tb": "$/TB", "usd_per_hour": "$/h", "usd_per_kwh": "$/kWh", "gbps": "GB/s", "mbps": "MB/s", "tbps": "TB/s",
    "gib": "GiB", "gb": "GB", "tb": "TB", "mib": "MiB", "kib": "KiB", "b": "B", "w": "W", "per_s": "/s",
    "iops": "IOPS", "kiops": "kIOPS", "qps": "queries/s", "tokens_per_s": "tokens/s", "frac": "fraction", "pct": "%",
    "x": "×", "mm2": "mm²", "j": "J", "uj": "µJ", "nj": "nJ", "pj": "pJ", "ghz": "GHz", "mhz": "MHz", "gbit_s": "Gbit/s",
}
#: An axis whose positive values span more than this ratio is drawn on a log scale.
LOG_SPAN = 100.0
#: A numeric knob with more distinct values than this is binned in the knob charts (a
#: Sobol study has a distinct float per point: grouping on it made 1.35 MB charts).
MAX_KNOB_LEVELS = 24
KNOB_BINS = 12


def axis_title(name: str) -> str:
    """An axis title with the unit spelled for people: 'usd_per_gib' -> 'usd per gib ($/GiB)'."""
    from dse import units

    unit = units.unit_of(name)
    label = UNIT_LABELS.get(unit or "", unit) if unit else None
    stem = name[: -len(unit) - 1] if unit and name.endswith("_" + unit) else name
    return stem.replace("_", " ") + (f" ({label})" if label else "")


def axis_scale(values: Any) -> Any:
    """Log when every value is positive and they span two decades, else linear (no zero)."""
    import altair as alt

    v = values.drop_nulls()
    if v.dtype.is_float():
        v = v.drop_nans()
    if v.len() and v.min() > 0 and v.max() / v.min() > LOG_SPAN:
        return alt.Scale(type="log")
    return alt.Scale(zero=False)


def color_knob(front: Any, knobs: list[str]) -> str | None:
    """The categorical knob that colours a front: the first label knob (design, media,
    scheme...) with 2 to 12 values on the front."""
    for k in knobs:
        if k in front.columns and not front.schema[k].is_numeric() and 1 < front[k].n_unique() <= 12:
            return k
    return None


def label_metrics(schema: Any, knobs: list[str]) -> list[str]:
    """The categorical metric columns of a results table (``Metric.labels``, stored as
    dictionaries of labels, e.g. ``bottleneck_code``): colouring candidates after the knobs."""
    import polars as pl

    return [c for c, t in schema.items()
            if c not in knobs and c != "reason" and (t == pl.Categorical or isinstance(t, pl.Enum))]


def pareto_charts(points: Any, front: Any, objectives: dict[str, str], knobs: list[str]) -> list[Any]:
    """Scatter of every objective pair (up to four objectives: six pairs): a sample of
    feasible points in grey, the Pareto front on top coloured by a categorical knob, log
    axes where values span decades, the whole design in the tooltip."""
    import altair as alt

    objs = list(objectives)[:4]
    if len(objs) == 1:
        o = objs[0]
        return [
            alt.Chart(alt.Data(values=records(points.select(o))))
            .mark_bar()
            .encode(alt.X(f"{o}:Q", bin=alt.Bin(maxbins=40), title=axis_title(o)), alt.Y("count():Q"))
            .properties(title=f"distribution of {axis_title(o)}", width=420, height=300)
        ]
    sample = points
    if points.height > MAX_BACKGROUND_POINTS:
        sample = points.sample(MAX_BACKGROUND_POINTS, seed=0)
    tooltip_cols = [c for c in knobs + list(objectives) if c in front.columns]
    tooltip = [alt.Tooltip(f"{c}:Q", format=".4g") if front.schema[c].is_numeric() else alt.Tooltip(f"{c}:N") for c in tooltip_cols]
    colour = color_knob(front, knobs)
    charts = []
    for x, y in combinations(objs, 2):
        xs, ys = axis_scale(points[x]), axis_scale(points[y])
        bg = (
            alt.Chart(alt.Data(values=records(sample.select(list(dict.fromkeys([x, y]))), digits=4)))
            .mark_circle(size=14, opacity=0.25, color="#9aa5b1")
            .encode(
                alt.X(f"{x}:Q", title=axis_title(x) + _arrow(objectives[x]), scale=xs),
                alt.Y(f"{y}:Q", title=axis_title(y) + _arrow(objectives[y]), scale=ys),
            )
        )
        enc: dict[str, Any] = {"x": alt.X(f"{x}:Q", scale=xs), "y": alt.Y(f"{y}:Q", scale=ys), "tooltip": tooltip}
        if colour is not None:
            enc["color"] = alt.Color(f"{colour}:N", title=axis_title(colour))
            enc["shape"] = alt.Shape(f"{colour}:N")
        fr = (
            alt.Chart(alt.Data(values=records(front.select(list(dict.fromkeys(tooltip_cols))))))
            .mark_point(size=70, opacity=0.95, filled=True)
            .encode(**enc)
        )
        charts.append(
            alt.layer(bg, fr)
            .properties(title=f"Pareto front: {axis_title(y)} vs {axis_title(x)}", width=430, height=320)
            .interactive()
        )
    return charts


def _arrow(direction: str) -> str:
    return ", lower is better" if direction == "min" else ", higher is better"


def _knob_levels(points: Any, knob: str) -> tuple[Any, bool]:
    """(the knob's column, or its bin centres when it has too many values; numeric?)."""
    import polars as pl

    col = points[knob]
    numeric = col.dtype.is_numeric()
    if not numeric or col.n_unique() <= MAX_KNOB_LEVELS:
        return col, numeric
    lo, hi = col.min(), col.max()
    if lo > 0 and hi / lo > LOG_SPAN:  # log-spaced bins for a log-ranged knob
        edges = pl.Series(np.geomspace(lo, hi, KNOB_BINS + 1))
        idx = ((col.log() - np.log(lo)) / (np.log(hi) - np.log(lo)) * KNOB_BINS).floor().clip(0, KNOB_BINS - 1).cast(pl.Int64)
        centres = (edges[:-1].log() + edges[1:].log()) / 2
        return idx.map_elements(lambda i: float(np.exp(centres[i])), return_dtype=pl.Float64), True
    width = (hi - lo) / KNOB_BINS or 1.0
    idx = ((col - lo) / width).floor().clip(0, KNOB_BINS - 1)
    return lo + (idx + 0.5) * width, True


def knob_charts(points: Any, objectives: dict[str, str], knobs: list[str]) -> list[Any]:
    """For every knob, the best and the median value of every objective at each knob
    setting (over feasible points); a knob with many values (a Sobol study) in bins;
    label knobs as points, numeric ones as lines."""
    import altair as alt
    import polars as pl

    charts = []
    for knob in knobs:
        level, numeric = _knob_levels(points, knob)
        frame = points.select(list(objectives)).with_columns(level.alias("_level"))
        rows = []
        for obj, direction in objectives.items():
            agg = (
                frame.group_by("_level")
                .agg(
                    (pl.col(obj).min() if direction == "min" else pl.col(obj).max()).alias("best"),
                    pl.col(obj).median().alias("median"),
                )
                .sort("_level")
            )
            for r in agg.iter_rows(named=True):
                for stat in ("best", "median"):
                    rows.append({"knob": _plain(r["_level"]), "objective": axis_title(obj), "stat": stat, "value": r[stat]})
        if not rows:
            continue
        kscale = axis_scale(level) if numeric else alt.Undefined
        x = alt.X("knob:Q" if numeric else "knob:N", title=axis_title(knob), scale=kscale)
        base = alt.Chart(alt.Data(values=rows)).encode(
            x,
            alt.Y("value:Q", title=None, scale=alt.Scale(zero=False)),
            alt.Color("stat:N", scale=alt.Scale(domain=["best", "median"], range=["#17324d", "#e07a1f"])),
            tooltip=["objective:N", "stat:N", "knob:Q" if numeric else "knob:N", alt.Tooltip("value:Q", format=".4g")],
        )
        mark = base.mark_line(point=True) if numeric else base.mark_point(size=60, filled=True)
        layer = alt.layer(mark).properties(width=210, height=140)
        charts.append(
            layer.facet(row=alt.Row("objective:N", title=None), title=f"{axis_title(knob)} against the objectives").resolve_scale(
                y="independent"
            )
        )
    return charts


def _plain(v: Any) -> Any:
    if hasattr(v, "item"):
        return v.item()
    return v


def records(df: Any, digits: int | None = None) -> list[dict[str, Any]]:
    """Rows for a chart: non-finite floats as null; with ``digits``, floats rounded to that
    many significant digits (background points: a third of the bytes, same picture)."""
    import math

    out = df.to_dicts()
    for r in out:
        for k, v in r.items():
            if isinstance(v, float):
                if not math.isfinite(v):
                    r[k] = None
                elif digits is not None:
                    r[k] = float(f"{v:.{digits}g}")
    return out


def sensitivity_chart(rows: list[dict[str, Any]], metric: str) -> Any:
    """Total Sobol index of each knob with its 95 % interval, largest first."""
    import altair as alt

    data = [{"knob": r["name"], "ST": max(0.0, float(r["ST"])), "lo": max(0.0, float(r["ST"]) - float(r["ST_conf"])),
             "hi": float(r["ST"]) + float(r["ST_conf"]), "S1": float(r["S1"])} for r in rows]
    order = [d["knob"] for d in data]
    base = alt.Chart(alt.Data(values=data)).encode(alt.Y("knob:N", sort=order, title=None))
    bars = base.mark_bar(color="#3b6ea5").encode(
        alt.X("ST:Q", title="total Sobol index (share of variance)", scale=alt.Scale(domain=[0, 1])),
        tooltip=[alt.Tooltip("knob:N"), alt.Tooltip("ST:Q", format=".3f"), alt.Tooltip("S1:Q", format=".3f")],
    )
    rules = base.mark_rule(color="#17324d").encode(alt.X("lo:Q"), alt.X2("hi:Q"))
    return alt.layer(bars, rules).properties(title=f"which knob moves {axis_title(metric)}", width=380,
                                             height=max(60, 22 * len(data)))


def robust_chart(points: Any, objectives: dict[str, str]) -> Any:
    """The robust front: points non-dominated in at least half of the uncertainty draws,
    with p5-p95 bars on the first two objectives, coloured by ``p_pareto``."""
    import altair as alt

    x, y = list(objectives)[:2]
    cols = [x, y, f"{x}_p5", f"{x}_p95", f"{y}_p5", f"{y}_p95", "p_pareto"]
    data = records(points.filter(points["p_pareto"] >= 0.5).select(cols))
    base = alt.Chart(alt.Data(values=data))
    dots = base.mark_circle(size=60, stroke="#17324d", strokeWidth=0.5).encode(
        alt.X(f"{x}:Q", title=axis_title(x) + _arrow(objectives[x]), scale=alt.Scale(zero=False)),
        alt.Y(f"{y}:Q", title=axis_title(y) + _arrow(objectives[y]), scale=alt.Scale(zero=False)),
        alt.Color("p_pareto:Q", title="share of draws on the front", scale=alt.Scale(scheme="viridis", domain=[0.5, 1])),
        tooltip=[alt.Tooltip(f"{c}:Q", format=".4g") for c in cols],
    )
    xbar = base.mark_rule(opacity=0.5).encode(alt.X(f"{x}_p5:Q"), alt.X2(f"{x}_p95:Q"), alt.Y(f"{y}:Q"))
    ybar = base.mark_rule(opacity=0.5).encode(alt.Y(f"{y}_p5:Q"), alt.Y2(f"{y}_p95:Q"), alt.X(f"{x}:Q"))
    return alt.layer(xbar, ybar, dots).properties(
        title=f"robust front: p5-p95 under parameter uncertainty ({len(data)} points with p_pareto >= 0.5)",
        width=430, height=320).interactive()


#: Row number of a design on the front (a knob may be called 'design').
ROW_ID = "front_row"


def front_explorer(front: Any, objectives: dict[str, str], knobs: list[str]) -> Any | None:
    """One linked view of the front: brush a region of the first objective pair and the
    parallel-coordinates lines below (every objective and numeric knob, each scaled to
    its own range) keep only the designs inside it; click a legend entry to keep one
    value of the colouring knob."""
    import altair as alt
    import polars as pl

    objs = list(objectives)
    if len(objs) < 2 or front.height < 2:
        return None
    axes = [c for c in [*objs, *knobs] if c in front.columns and front.schema[c].is_numeric() and front[c].n_unique() > 1]
    colour = color_knob(front, knobs)
    cols = list(dict.fromkeys([*axes, *objs, *([colour] if colour else [])]))
    data = front.select(cols).with_row_index(ROW_ID).with_columns(pl.col(ROW_ID).cast(pl.Int64))
    x, y = objs[0], objs[1]
    brush = alt.selection_interval(name="brush", encodings=["x", "y"])
    legend = alt.selection_point(name="pick", fields=[colour], bind="legend") if colour else None
    colour_enc = alt.Color(f"{colour}:N", title=axis_title(colour)) if colour else alt.value("#3b6ea5")
    keep = brush & legend if legend is not None else brush
    scatter = (
        alt.Chart(alt.Data(values=records(data)))
        .mark_point(filled=True, size=60)
        .encode(
            alt.X(f"{x}:Q", title=axis_title(x), scale=axis_scale(front[x])),
            alt.Y(f"{y}:Q", title=axis_title(y), scale=axis_scale(front[y])),
            color=alt.condition(keep, colour_enc, alt.value("#d0d5da")),
            tooltip=[alt.Tooltip(f"{c}:Q", format=".4g") if front.schema[c].is_numeric() else alt.Tooltip(f"{c}:N") for c in cols],
        )
        .add_params(brush, *([legend] if legend is not None else []))
        .properties(width=520, height=260, title="brush designs of the front")
    )
    lines = (
        alt.Chart(alt.Data(values=records(data)))
        .transform_filter(keep)
        .transform_fold(axes, as_=["axis", "raw"])
        .transform_joinaggregate(lo="min(raw)", hi="max(raw)", groupby=["axis"])
        .transform_calculate(scaled="datum.hi > datum.lo ? (datum.raw - datum.lo) / (datum.hi - datum.lo) : 0.5")
        .mark_line(opacity=0.6)
        .encode(
            alt.X("axis:N", sort=axes, title=None),
            alt.Y("scaled:Q", title="each axis from its min (0) to its max (1)", scale=alt.Scale(domain=[0, 1])),
            alt.Detail(f"{ROW_ID}:Q"),
            color=colour_enc,
            tooltip=[alt.Tooltip("axis:N"), alt.Tooltip("raw:Q", format=".4g", title="value"), alt.Tooltip(f"{ROW_ID}:Q", title="design")],
        )
        .properties(width=max(520, 90 * len(axes)), height=260, title="the brushed designs across every objective and knob")
    )
    return alt.vconcat(scatter, lines)
