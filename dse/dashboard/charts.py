"""Altair charts for study pages: the Pareto front and knobs against objectives."""

from __future__ import annotations

from itertools import combinations
from typing import Any

MAX_BACKGROUND_POINTS = 4000
MAX_KNOB_CHARTS = 8


def _title(name: str) -> str:
    return name.replace("_", " ")


def pareto_charts(points: Any, front: Any, objectives: dict[str, str], knobs: list[str]) -> list[Any]:
    """Scatter of every objective pair: a sample of feasible points in grey, the Pareto
    front on top with tooltips listing knobs and objectives."""
    import altair as alt

    objs = list(objectives)
    if len(objs) == 1:
        o = objs[0]
        return [
            alt.Chart(alt.Data(values=records(points.select(o))))
            .mark_bar()
            .encode(alt.X(f"{o}:Q", bin=alt.Bin(maxbins=40), title=_title(o)), alt.Y("count():Q"))
            .properties(title=f"distribution of {_title(o)}", width=420, height=300)
        ]
    sample = points
    if points.height > MAX_BACKGROUND_POINTS:
        sample = points.sample(MAX_BACKGROUND_POINTS, seed=0)
    tooltip_cols = [c for c in knobs + objs if c in front.columns]
    charts = []
    pairs = list(combinations(objs, 2))[:3]
    color_obj = objs[2] if len(objs) >= 3 else None
    for x, y in pairs:
        bg = (
            alt.Chart(alt.Data(values=records(sample.select(list(dict.fromkeys([x, y]))))))
            .mark_circle(size=14, opacity=0.25, color="#9aa5b1")
            .encode(
                alt.X(f"{x}:Q", title=_title(x) + _arrow(objectives[x]), scale=alt.Scale(zero=False)),
                alt.Y(f"{y}:Q", title=_title(y) + _arrow(objectives[y]), scale=alt.Scale(zero=False)),
            )
        )
        enc: dict[str, Any] = {
            "x": alt.X(f"{x}:Q"),
            "y": alt.Y(f"{y}:Q"),
            "tooltip": [
                alt.Tooltip(f"{c}:{'Q' if front.schema[c].is_numeric() else 'N'}", format=".4g")
                if front.schema[c].is_numeric()
                else alt.Tooltip(f"{c}:N")
                for c in tooltip_cols
            ],
        }
        c = color_obj if color_obj not in (x, y) else None
        if c is None and len(objs) >= 3:
            c = next(o for o in objs if o not in (x, y))
        if c is not None:
            enc["color"] = alt.Color(f"{c}:Q", title=_title(c), scale=alt.Scale(scheme="viridis"))
        fr = (
            alt.Chart(alt.Data(values=records(front.select(list(dict.fromkeys(tooltip_cols))))))
            .mark_circle(size=70, opacity=0.95, stroke="#17324d", strokeWidth=0.6)
            .encode(**enc)
        )
        charts.append(
            alt.layer(bg, fr)
            .properties(title=f"Pareto front: {_title(y)} vs {_title(x)}", width=430, height=320)
            .interactive()
        )
    return charts


def _arrow(direction: str) -> str:
    return " (lower is better)" if direction == "min" else " (higher is better)"


def knob_charts(points: Any, objectives: dict[str, str], knobs: list[str]) -> list[Any]:
    """For each knob, the best and the median value of every objective at each knob
    setting (over feasible points)."""
    import altair as alt
    import polars as pl

    charts = []
    for knob in knobs[:MAX_KNOB_CHARTS]:
        rows = []
        for obj, direction in objectives.items():
            agg = (
                points.group_by(knob)
                .agg(
                    (pl.col(obj).min() if direction == "min" else pl.col(obj).max()).alias("best"),
                    pl.col(obj).median().alias("median"),
                )
                .sort(knob)
            )
            for r in agg.iter_rows(named=True):
                for stat in ("best", "median"):
                    rows.append({"knob": _plain(r[knob]), "objective": obj, "stat": stat, "value": r[stat]})
        if not rows:
            continue
        numeric = all(isinstance(r["knob"], (int, float)) for r in rows)
        x = alt.X("knob:Q" if numeric else "knob:N", title=_title(knob), scale=alt.Scale(zero=False) if numeric else alt.Undefined)
        base = alt.Chart(alt.Data(values=rows)).encode(
            x,
            alt.Y("value:Q", title=None, scale=alt.Scale(zero=False)),
            alt.Color("stat:N", scale=alt.Scale(domain=["best", "median"], range=["#17324d", "#e07a1f"])),
            tooltip=["objective:N", "stat:N", "knob:Q" if numeric else "knob:N", alt.Tooltip("value:Q", format=".4g")],
        )
        layer = alt.layer(base.mark_line(point=True)).properties(width=210, height=140)
        charts.append(
            layer.facet(row=alt.Row("objective:N", title=None), title=f"{_title(knob)} against the objectives").resolve_scale(
                y="independent"
            )
        )
    return charts


def _plain(v: Any) -> Any:
    if hasattr(v, "item"):
        return v.item()
    return v


def records(df: Any) -> list[dict[str, Any]]:
    import math

    out = df.to_dicts()
    for r in out:
        for k, v in r.items():
            if isinstance(v, float) and not math.isfinite(v):
                r[k] = None
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
    return alt.layer(bars, rules).properties(title=f"which knob moves {_title(metric)}", width=380,
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
        alt.X(f"{x}:Q", title=_title(x) + _arrow(objectives[x]), scale=alt.Scale(zero=False)),
        alt.Y(f"{y}:Q", title=_title(y) + _arrow(objectives[y]), scale=alt.Scale(zero=False)),
        alt.Color("p_pareto:Q", title="share of draws on the front", scale=alt.Scale(scheme="viridis", domain=[0.5, 1])),
        tooltip=[alt.Tooltip(f"{c}:Q", format=".4g") for c in cols],
    )
    xbar = base.mark_rule(opacity=0.5).encode(alt.X(f"{x}_p5:Q"), alt.X2(f"{x}_p95:Q"), alt.Y(f"{y}:Q"))
    ybar = base.mark_rule(opacity=0.5).encode(alt.Y(f"{y}_p5:Q"), alt.Y2(f"{y}_p95:Q"), alt.X(f"{x}:Q"))
    return alt.layer(xbar, ybar, dots).properties(
        title=f"robust front: p5-p95 under parameter uncertainty ({len(data)} points with p_pareto >= 0.5)",
        width=430, height=320).interactive()
