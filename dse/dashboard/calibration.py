"""The calibration page: block fits against the cycle-accurate reference runs
(DRAMsim3 loaded latency, MQSim SSD latency under load), with the fit errors."""

from __future__ import annotations

import tomllib
from typing import Any

from dse.dashboard.charts import records
from dse.dashboard.html import Page


def calibration_page() -> Page | None:
    from dse.registry import project_root

    page = Page(
        "Calibration",
        "calibration.html",
        subtitle="DRAM and flash blocks fitted to DRAMsim3 and MQSim reference runs; points are the simulators, lines the fitted blocks",
    )
    cal_dir = project_root() / "results" / "calibration"
    for block in ("dram", "flash"):
        f = cal_dir / f"{block}.toml"
        if not f.exists():
            continue
        cal = tomllib.loads(f.read_text())
        page.heading(f"{block.upper()} block")
        page.note(cal.get("rule", ""))
        page.note(f"Fitted on: {cal.get('fitted_on', '?')}.")
        rows = []
        for split, e in cal.get("error", {}).items():
            if isinstance(e, dict) and "mape_pct" in e:
                rows.append([split, e.get("n", ""), pct(e["mape_pct"]), _sat(e)])
        if rows:
            page.table(["runs", "N", "latency MAPE", "saturation error (mean / max)"], rows, left={"runs"})
        out = outside_fit(block)
        page.chart(_dram_chart(out) if block == "dram" else _flash_chart(out))
        _add_outside(page, block, out)
    llm = project_root() / "results" / "reference" / "calculon" / "runs.csv"
    if llm.exists():
        page.heading("LLM block against Calculon")
        from models.blocks.llm.reference import check_reference, summarize

        table, mape, n = check_reference(llm)
        s = summarize(table)
        page.table(
            ["rows", "both feasible", "batch-time MAPE", "tier-1 memory error", "feasibility agreement"],
            [[s["rows"], s["both_feasible"], pct(mape), pct(s["mean_abs_tier1_err_pct"]), f"{s['feasibility_agreement_pct']:.1f}%"]],
        )
        page.chart(_llm_chart(table))
    return page


def pct(x: float) -> str:
    """A percentage for people: two decimals, and below 0.01 % as such (not 1.05e-15%)."""
    return "< 0.01%" if abs(x) < 0.005 else f"{x:.2f}%"


def _sat(e: dict[str, Any]) -> str:
    if "sat_mean_err_pct" in e:
        return f"{e['sat_mean_err_pct']:.1f}% / {e.get('sat_max_err_pct', float('nan')):.1f}%"
    return ""


#: The legend entry (and the value of the ``fit`` field) of a reference row outside the fit.
OUTSIDE = "outside the fitted range"
#: How such a row is drawn: hollow and grey, apart from the coloured rows the fit covers.
OUTSIDE_COLOR = "#8c8c8c"

#: Why rows are outside each block's fit (the fit's rule, results/calibration/<block>.toml).
WHY_OUTSIDE = {
    "dram": (
        "Why: the DRAM fit counts only unsaturated DRAMsim3 runs below 90% of their group's saturation "
        "bandwidth (same standard, pattern and read fraction). Near and at saturation the dram block's "
        "queueing terms grow without bound, while DRAMsim3's latency there is set by its finite request "
        "queues and the length of the run; those rows were never part of the fit and are not in its error "
        "figures. They are drawn hollow and grey. The held-out rows (standard HBM2 and every 5th load "
        "point) are inside the range: the fit did not train on them, but it is meant to cover them."
    ),
    "flash": (
        "Why: the flash fit counts only complete MQSim runs with no garbage collection, and open-loop runs "
        "offered less than the closed-loop maximum. Runs with GC activity (the espresso_tlc configuration in "
        "steady state, after preconditioning) include MQSim's GC write stalls, which the flash block does not "
        "model (a simulator artefact, caveat 5 of the reference's README), so the model reads them several "
        "times too low; open-loop runs at or above the closed-loop maximum are transient overload with no "
        "steady-state latency (the model gives none); incomplete runs stopped before every request finished. "
        "They are drawn hollow and grey (the chart shows the closed-loop runs only) and are not in the error "
        "figures. The held-out rows (configuration mqsim_default and every 5th row) are inside the range."
    ),
}


def outside_fit(block: str) -> Any:
    """The reference rows of ``block`` ('dram' or 'flash') outside what its fit covers (the
    rows its rule does not count), with the model's value at each, the error and the reason:
    a polars frame with columns run, panel, series, mode, x, reference, model, error_pct,
    ratio, why."""
    import numpy as np
    import polars as pl

    if block == "dram":
        from models.blocks import dram_fit

        df = dram_fit.with_rule(dram_fit.load_reference())
        pred = dram_fit.predict(df)["latency_ns"]
        ref = df["ref_latency_ns"].cast(pl.Float64).to_numpy()
        sat = df["saturated"].to_numpy() == 1
        near = ~sat & (df["achieved_GBps"].to_numpy() >= 0.9 * df["ref_sat_GBps"].fill_null(np.inf).to_numpy())
        why = np.where(sat, "saturated run", np.where(near, "at or above 90% of the group's saturation bandwidth", "no latency"))
        frame = df.select(
            (pl.col("standard") + " " + pl.col("pattern") + " r" + _pct(pl.col("read_fraction")) + " at "
             + pl.col("offered_GBps").round(2).cast(pl.String) + " GB/s offered").alias("run"),
            pl.col("standard").alias("panel"),
            (pl.col("pattern") + " r" + _pct(pl.col("read_fraction"))).alias("series"),
            pl.lit("").alias("mode"),
            pl.col("offered_GBps").cast(pl.Float64).alias("x"),
        )
    elif block == "flash":
        from models.blocks import flash_fit

        df = flash_fit.with_rule(flash_fit.load_reference())
        pred = flash_fit.predict(df)["latency_us"]
        ref = df["avg_latency_us"].cast(pl.Float64).to_numpy()
        gc = df["gc_executions"].cast(pl.Float64).fill_null(0.0).to_numpy() > 0
        incomplete = ~df["is_complete"].to_numpy()
        over = (df["mode"] == "open_loop_poisson").to_numpy() & (
            df["rate_fraction_of_closed_loop_max"].cast(pl.Float64).fill_null(0.0).to_numpy() >= 0.999)
        parts = [(gc, "GC activity"), (incomplete, "incomplete run"), (over, "open loop at or above the closed-loop maximum")]
        why = np.array(["; ".join(t for m, t in parts if m[i]) or "no latency" for i in range(df.height)])
        frame = df.select(
            (pl.col("config") + " " + pl.col("device_state") + " " + pl.col("pattern") + " "
             + (pl.col("request_size_B") // 1024).cast(pl.String) + "K r" + _pct(pl.col("read_fraction")) + " "
             + pl.when(pl.col("mode") == "closed_loop_qd").then(pl.lit("QD ") + pl.col("qd_or_rate").cast(pl.Int64).cast(pl.String))
             .otherwise(pl.col("qd_or_rate").round(0).cast(pl.Int64).cast(pl.String) + " IOPS offered")).alias("run"),
            _flash_panel().alias("panel"),
            (pl.col("pattern") + " r" + _pct(pl.col("read_fraction"))).alias("series"),
            pl.col("mode"),
            pl.col("achieved_iops").cast(pl.Float64).alias("x"),
        )
    else:
        raise ValueError(f"unknown block {block!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = pred / ref
    frame = frame.with_columns(
        pl.Series("reference", ref), pl.Series("model", pred), pl.Series("ratio", ratio),
        pl.Series("error_pct", (ratio - 1.0) * 100), pl.Series("why", why),
    )
    out = frame.filter(~pl.Series(df["counted"].to_numpy()))
    # the worst first; a model without a finite value (saturated) after the finite ones
    key = pl.when(pl.col("ratio").is_finite() & (pl.col("ratio") > 0)).then(pl.col("ratio").log().abs())
    return out.with_columns(key.alias("_k")).sort("_k", descending=True, nulls_last=True).drop("_k")


def _pct(col: Any) -> Any:
    import polars as pl

    return (col.cast(pl.Float64) * 100).round(0).cast(pl.Int64).cast(pl.String) + "%"


def _flash_panel() -> Any:
    import polars as pl

    return (pl.col("config") + " " + pl.col("device_state") + " " + (pl.col("request_size_B") // 1024).cast(pl.String) + "K")


def _add_outside(page: Page, block: str, out: Any) -> None:
    """The table of the rows outside the fit, with their error, and why they are outside."""
    import math

    unit = "ns" if block == "dram" else "µs"
    page.heading(f"{block.upper()}: reference runs outside the fitted range ({out.height})")
    page.note(WHY_OUTSIDE[block])
    if not out.height:
        return
    rows = []
    for r in out.iter_rows(named=True):
        finite = r["model"] is not None and math.isfinite(r["model"])
        rows.append([
            r["run"], f"{r['reference']:.4g}", f"{r['model']:.4g}" if finite else "no finite value",
            f"{r['error_pct']:+.0f}%" if finite else "–", f"{r['ratio']:.2f}x" if finite else "–", r["why"],
        ])
    page.table(["run", f"reference latency ({unit})", f"model latency ({unit})", "model error", "model / reference", "why outside"],
               rows, left={"run", "why outside"})


def _dram_chart(out: Any = None) -> Any:
    import altair as alt
    import polars as pl

    from models.blocks import dram_fit

    d = dram_fit.curves().with_columns(
        (pl.col("pattern") + " r" + (pl.col("read_fraction") * 100).round(0).cast(pl.Int64).cast(pl.String) + "%").alias("series")
    )
    ref = d.filter((pl.col("source") == "reference") & pl.col("counted"))
    mod = d.filter(pl.col("source") == "model")
    pts = alt.Chart().mark_point(size=28, opacity=0.8, filled=True).encode(
        alt.X("bandwidth_gbps:Q", title="achieved bandwidth (GB/s)"),
        alt.Y("latency_ns:Q", title="mean read latency (ns)", scale=alt.Scale(type="log")),
        alt.Color("series:N", title="pattern, reads"),
        tooltip=["standard:N", "series:N", alt.Tooltip("bandwidth_gbps:Q", format=".2f"), alt.Tooltip("latency_ns:Q", format=".1f")],
    )
    lines = alt.Chart().mark_line(strokeWidth=1.5).encode(
        alt.X("bandwidth_gbps:Q"), alt.Y("latency_ns:Q"), alt.Color("series:N"), detail="series:N"
    )
    outside = _outside_points(out if out is not None else outside_fit("dram"), "standard", "bandwidth_gbps", "latency_ns", ".1f")
    return _facet_layers(lines, pts, "standard", "DRAM: read latency against bandwidth, DRAMsim3 (points) vs dram block (lines)",
                         ref, mod, outside)


def _outside_points(out: Any, field: str, x: str, y: str, fmt: str) -> tuple[Any, Any]:
    """The layer of reference rows outside the fit (hollow, grey, one legend entry) and its
    data in the chart's column names."""
    import altair as alt
    import polars as pl

    data = out.select(
        pl.col("panel").alias(field), pl.col("series"), pl.col("x").alias(x), pl.col("reference").alias(y),
        pl.col("model"), pl.col("error_pct"), pl.col("why"), pl.lit(OUTSIDE).alias("fit"),
    )
    layer = alt.Chart().mark_point(size=34, filled=False, strokeWidth=1.3, color=OUTSIDE_COLOR, opacity=0.9).encode(
        alt.X(f"{x}:Q"),
        alt.Y(f"{y}:Q"),
        alt.Shape("fit:N", title=None, scale=alt.Scale(domain=[OUTSIDE], range=["circle"])),
        tooltip=[f"{field}:N", "series:N", alt.Tooltip(f"{x}:Q", format=",.2f"), alt.Tooltip(f"{y}:Q", format=fmt),
                 alt.Tooltip("model:Q", format=fmt), alt.Tooltip("error_pct:Q", format="+.0f", title="model error (%)"),
                 "why:N", "fit:N"],
    )
    return layer, data


def _facet_layers(lines: Any, pts: Any, field: str, title: str, ref: Any, mod: Any, outside: tuple[Any, Any] | None = None) -> Any:
    """One panel per value of ``field``, each a layer of model lines and reference points
    (and, with ``outside``, the reference rows outside the fit, drawn apart)."""
    import altair as alt
    import polars as pl

    out_layer, out = outside if outside is not None else (None, None)
    values = set(ref[field].to_list()) | set(mod[field].to_list()) | (set(out[field].to_list()) if out is not None else set())
    panels = []
    for v in sorted(values, key=str):
        r = ref.filter(pl.col(field) == v)
        m = mod.filter(pl.col(field) == v)
        layers = [lines.properties(data=alt.Data(values=records(m))), pts.properties(data=alt.Data(values=records(r)))]
        if out is not None:
            o = out.filter(pl.col(field) == v)
            if o.height:
                layers.append(out_layer.properties(data=alt.Data(values=records(o))))
        panels.append(alt.layer(*layers).properties(title=str(v), width=300, height=220))
    rows = [alt.hconcat(*panels[i : i + 2]) for i in range(0, len(panels), 2)]
    return alt.vconcat(*rows).properties(title=title)


def _flash_chart(out: Any = None) -> Any:
    import altair as alt
    import polars as pl

    from models.blocks import flash_fit

    f = flash_fit.curves().filter(pl.col("mode") == "closed_loop_qd").with_columns(
        _flash_panel().alias("panel"),
        (pl.col("pattern") + " r" + (pl.col("read_fraction") * 100).round(0).cast(pl.Int64).cast(pl.String) + "%").alias("series"),
    )
    ref = f.filter((pl.col("source") == "reference") & pl.col("counted"))
    mod = f.filter(pl.col("source") == "model")
    out = out if out is not None else outside_fit("flash")
    outside = _outside_points(out.filter(pl.col("mode") == "closed_loop_qd"), "panel", "iops", "latency_us", ".1f")
    pts = alt.Chart().mark_circle(size=30, opacity=0.85).encode(
        alt.X("iops:Q", title="IOPS", scale=alt.Scale(type="log")),
        alt.Y("latency_us:Q", title="mean latency (µs)", scale=alt.Scale(type="log")),
        alt.Color("series:N", title="pattern, reads"),
        tooltip=["panel:N", "series:N", "qd_or_rate:Q", alt.Tooltip("iops:Q", format=",.0f"), alt.Tooltip("latency_us:Q", format=".1f")],
    )
    lines = alt.Chart().mark_line(strokeWidth=1.5).encode(alt.X("iops:Q"), alt.Y("latency_us:Q"), alt.Color("series:N"), detail="series:N")
    return _facet_layers(lines, pts, "panel", "SSD: latency against IOPS by queue depth, MQSim (points) vs flash block (lines)",
                         ref, mod, outside)


def _llm_chart(table: Any) -> Any:
    import altair as alt
    import polars as pl

    t = table.filter(pl.col("calculon_feasible") & pl.col("ours_feasible")).select(
        "model", "config_label", "calculon_time_s", "ours_time_s"
    )
    return (
        alt.Chart(alt.Data(values=records(t)))
        .mark_circle(size=40)
        .encode(
            alt.X("calculon_time_s:Q", title="Calculon batch time (s)", scale=alt.Scale(type="log")),
            alt.Y("ours_time_s:Q", title="LLM block batch time (s)", scale=alt.Scale(type="log")),
            alt.Color("model:N"),
            tooltip=["model:N", "config_label:N", alt.Tooltip("calculon_time_s:Q", format=".4g"), alt.Tooltip("ours_time_s:Q", format=".4g")],
        )
        .properties(title="LLM block against Calculon (every feasible reference run)", width=420, height=360)
    )
