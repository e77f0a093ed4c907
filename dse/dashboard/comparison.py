"""The page of a comparison study: the joint Pareto front coloured by architecture,
"who wins where" over two workload knobs, and the papers' designs against the front."""

from __future__ import annotations

from itertools import combinations
from typing import Any

from dse.dashboard.charts import axis_scale, axis_title
from dse.dashboard.html import Page

MAX_BACKGROUND_POINTS = 4000


def _rounded(frame: Any, *cols: str) -> list[Any]:
    """Background coordinates to 4 significant digits (a third of the bytes); the workload
    columns stay exact, since the drop-downs filter on equality."""
    import polars as pl

    return [pl.col(c).round_sig_figs(4) if frame.schema[c].is_float() else pl.col(c) for c in dict.fromkeys(cols)]


def _workload_selectors(front: Any, workload: list[str]) -> list[tuple[str, Any]]:
    """One drop-down per workload knob (the joint front is per workload point)."""
    import altair as alt

    out = []
    for w in workload:
        values = sorted(front[w].drop_nulls().unique().to_list())
        if not values:
            continue
        start = values[len(values) // 2]
        out.append((w, alt.param(name=f"pick_{w}", value=start, bind=alt.binding_select(options=values, name=f"{axis_title(w)}: "))))
    return out


def joint_front_charts(points: Any, front: Any, objectives: dict[str, str], usd_label: str, workload: list[str]) -> list[Any]:
    """Every objective pair (up to four objectives): the feasible points of the chosen
    workload point (drop-downs) in light colours, the joint front there coloured by
    architecture, log axes where the values span two decades."""
    import altair as alt

    from dse.dashboard.charts import records

    sample = points.sample(MAX_BACKGROUND_POINTS, seed=0) if points.height > MAX_BACKGROUND_POINTS else points
    selectors = _workload_selectors(front, workload)
    charts = []
    for x, y in list(combinations(list(objectives)[:4], 2)):
        tx = axis_title(x) + (f" ({usd_label})" if x == "usd_per_work" else "")
        ty = axis_title(y) + (f" ({usd_label})" if y == "usd_per_work" else "")
        xs, ys = axis_scale(points[x]), axis_scale(points[y])
        bg = alt.Chart(alt.Data(values=records(sample.select(["arch", *workload, *_rounded(sample, x, y)])))).mark_circle(size=12, opacity=0.2).encode(
            alt.X(f"{x}:Q", title=tx, scale=xs), alt.Y(f"{y}:Q", title=ty, scale=ys), alt.Color("arch:N", legend=None))
        cols = list(dict.fromkeys(["arch", *workload, x, y, *objectives]))
        fr = alt.Chart(alt.Data(values=records(front.select(cols)))).mark_point(size=80, filled=True, opacity=0.95).encode(
            alt.X(f"{x}:Q", scale=xs), alt.Y(f"{y}:Q", scale=ys), alt.Color("arch:N", title="architecture"),
            alt.Shape("arch:N"), tooltip=[alt.Tooltip("arch:N"), *[alt.Tooltip(f"{c}:Q", format=".4g") for c in cols if c != "arch"]])
        for w, param in selectors:
            bg = bg.transform_filter(alt.datum[w] == param)
            fr = fr.transform_filter(alt.datum[w] == param)
        chart = alt.layer(bg, fr).properties(title=f"joint Pareto front: {axis_title(y)} vs {axis_title(x)}", width=430, height=320)
        if selectors:
            chart = chart.add_params(*[param for _, param in selectors])
        charts.append(chart.interactive())
    return charts


def who_wins_chart(wins: Any, workload: list[str], metric: str) -> Any:
    """Heat map: over the first two workload knobs (or one knob), the architecture that
    wins on ``metric``, with the margin over the runner-up in the tooltip."""
    import altair as alt

    from dse.dashboard.charts import records

    import polars as pl

    rows = wins.filter(pl.col("objective") == metric).with_columns(
        pl.when(pl.col("tie")).then(pl.lit("tie")).otherwise(pl.col("winner")).alias("winner"))
    x = workload[0]
    y = workload[1] if len(workload) > 1 else "objective"
    tip = [alt.Tooltip(f"{x}:O"), alt.Tooltip(f"{y}:O"), alt.Tooltip("winner:N"), alt.Tooltip("value:Q", format=".4g"),
           alt.Tooltip("runner_up:N"), alt.Tooltip("margin_x:Q", format=".3g", title="margin (x)")]
    return (alt.Chart(alt.Data(values=records(rows.select([x, y, "winner", "value", "runner_up", "margin_x"]))))
            .mark_rect(stroke="white").encode(alt.X(f"{x}:O", title=axis_title(x)), alt.Y(f"{y}:O", title=axis_title(y), sort="descending"),
                                              alt.Color("winner:N", title="wins"), tooltip=tip)
            .properties(title=f"who wins on {axis_title(metric)}", width=max(200, 48 * rows[x].n_unique()), height=max(60, 32 * rows[y].n_unique())))


def comparison_page(r: Any, m: dict[str, Any], filename: str) -> Page:
    import polars as pl

    from dse.compare_report import winners
    from dse.dashboard.build import plain_types, read_table

    fam = m["family"]
    objectives: dict[str, str] = m["objectives"]
    workload: list[str] = list(m["workload"])
    page = Page(f"{m['space']['name']} (comparison, {fam['name']})", filename, subtitle=m["space"].get("description", ""))
    rows = m["rows"]
    archs = ", ".join(f"{a}: {i['model']}" for a, i in m["archs"].items())
    page.note(f"{len(m['archs'])} architectures ({archs}); "
              f"{rows['points']:,} points, {rows['feasible']:,} feasible, {rows['pareto']:,} on the joint front. "
              f"Unit of work: {fam['work_unit']}; usd_per_work is {fam['usd_per_work']}.")
    cols = list(dict.fromkeys(["arch", *workload, *objectives]))
    points = plain_types(read_table(r.points_path(), lambda: pl.read_parquet(r.points_path(), columns=[*cols, "feasible"])))
    front = plain_types(read_table(r.pareto_path(), lambda: pl.read_parquet(r.pareto_path(), columns=cols)))
    feasible = points.filter(pl.col("feasible")).drop("feasible")
    page.heading("Joint Pareto front")
    if front.height == 0:
        page.note("No feasible point: nothing is on the front.")
    else:
        page.note("The joint front is taken at each workload point: pick one with the drop-downs under the charts.")
        for c in joint_front_charts(feasible, front, objectives, fam["usd_per_work"], workload):
            page.chart(c)
        page.table(["architecture", "designs on the joint front", "feasible designs"],
                   [[a, m["pareto_by_arch"].get(a, 0), m["feasible_by_arch"].get(a, 0)] for a in m["archs"]], left={"architecture"})
    if workload and feasible.height:
        wins = winners(points, workload[:2], objectives)
        page.heading("Who wins where")
        page.note("Each cell: the architecture whose best feasible design is best on that objective at that workload "
                  "(the other knobs free); the tooltip gives the runner-up and the margin.")
        for metric in objectives:
            page.chart(who_wins_chart(wins, workload, metric))
    if m.get("uncertainty"):
        robust_section(page, r, m, objectives, workload)
    _paper_designs(page, m)
    return page


#: Rows of the robust-front table on a comparison page.
MAX_ROBUST_ROWS = 40


def robust_section(page: Page, r: Any, m: dict[str, Any], objectives: dict[str, str], workload: list[str]) -> None:
    """A robust comparison (``[sweep] uncertainty = N``): per architecture the designs
    non-dominated at their workload point in at least half of the draws, and those designs
    with p_pareto and each objective's p50 [p5 - p95]."""
    import polars as pl

    from dse.dashboard.build import plain_types, read_table

    u = m["uncertainty"]
    cols = ["arch", *workload, "p_pareto", *[f"{k}_{q}" for k in objectives for q in ("p5", "p50", "p95")]]
    pts = plain_types(read_table(r.points_path(), lambda: pl.read_parquet(r.points_path(), columns=cols)))
    rob = pts.filter(pl.col("p_pareto") >= 0.5).sort([*workload, "p_pareto"], descending=[False] * len(workload) + [True])
    page.heading("Robust joint front (parameter uncertainty)")
    page.note(f"Every design evaluated under {u['draws']} draws of its model's uncertain defaults; p_pareto is the "
              "share of draws in which no design of any architecture beats it at the same workload point "
              f"(p_pareto >= 0.5: {u['robust_front']} designs). Each objective: p50 [p5 - p95] over the draws.")
    page.table(["architecture", "designs with p_pareto >= 0.5", "highest p_pareto"],
               [[a, u["robust_by_arch"].get(a, 0), f"{pts.filter(pl.col('arch') == a)['p_pareto'].max() or 0:.2f}"]
                for a in m["archs"]], left={"architecture"})
    rows = []
    for row in rob.head(MAX_ROBUST_ROWS).iter_rows(named=True):
        spread = [_spread(row, k) for k in objectives]
        rows.append([row["arch"], *[f"{row[w]:g}" if isinstance(row[w], float) else row[w] for w in workload],
                     f"{row['p_pareto']:.2f}", *spread])
    if rows:
        page.table(["architecture", *workload, "p_pareto", *objectives], rows, left={"architecture"})


def _spread(row: dict[str, Any], k: str) -> str:
    p5, p50, p95 = row[f"{k}_p5"], row[f"{k}_p50"], row[f"{k}_p95"]
    if p50 is None:
        return "-"
    return f"{p50:.4g} [{p5:.4g} - {p95:.4g}]"


def _paper_designs(page: Page, m: dict[str, Any]) -> None:
    rows = []
    for arch, info in m["archs"].items():
        pd = info.get("paper_design")
        if not pd:
            continue
        if not pd["feasible"]:
            verdict = f"infeasible here ({pd['reason']})"
        elif pd["on_front"] is None:
            verdict = "no swept design has its workload"
        elif pd["on_front"]:
            verdict = "on its Pareto front"
        else:
            best = pd["dominators"][0]["ratio"] if pd["dominators"] else {}
            verdict = f"dominated by {pd['dominated_by']}; best: " + ", ".join(f"{k} x{v:.3g}" for k, v in best.items() if v is not None)
        rows.append([arch, pd["source"], verdict])
    if rows:
        page.heading("The papers' designs")
        page.table(["architecture", "design from", "against the swept designs (same workload)"], rows, left={"architecture", "design from"})
