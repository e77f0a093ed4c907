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
        page.chart(_dram_chart() if block == "dram" else _flash_chart())
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


def _dram_chart() -> Any:
    import altair as alt
    import polars as pl

    from models.blocks import dram_fit

    d = dram_fit.curves().with_columns(
        (pl.col("pattern") + " r" + (pl.col("read_fraction") * 100).round(0).cast(pl.Int64).cast(pl.String) + "%").alias("series")
    )
    ref = d.filter(pl.col("source") == "reference")
    mod = d.filter(pl.col("source") == "model")
    pts = alt.Chart().mark_point(size=28, opacity=0.8, filled=True).encode(
        alt.X("bandwidth_gbps:Q", title="achieved bandwidth (GB/s)"),
        alt.Y("latency_ns:Q", title="mean read latency (ns)", scale=alt.Scale(type="log")),
        alt.Color("series:N", title="pattern, reads"),
        alt.Shape("counted:N", title="counted in MAPE"),
        tooltip=["standard:N", "series:N", alt.Tooltip("bandwidth_gbps:Q", format=".2f"), alt.Tooltip("latency_ns:Q", format=".1f")],
    )
    lines = alt.Chart().mark_line(strokeWidth=1.5).encode(
        alt.X("bandwidth_gbps:Q"), alt.Y("latency_ns:Q"), alt.Color("series:N"), detail="series:N"
    )
    return _facet_layers(lines, pts, "standard", "DRAM: read latency against bandwidth, DRAMsim3 (points) vs dram block (lines)", ref, mod)


def _facet_layers(lines: Any, pts: Any, field: str, title: str, ref: Any, mod: Any) -> Any:
    """One panel per value of ``field``, each a layer of model lines and reference points."""
    import altair as alt
    import polars as pl

    panels = []
    for v in sorted(set(ref[field].to_list()) | set(mod[field].to_list()), key=str):
        r = ref.filter(pl.col(field) == v)
        m = mod.filter(pl.col(field) == v)
        panels.append(
            alt.layer(lines.properties(data=alt.Data(values=records(m))), pts.properties(data=alt.Data(values=records(r))))
            .properties(title=str(v), width=300, height=220)
        )
    rows = [alt.hconcat(*panels[i : i + 2]) for i in range(0, len(panels), 2)]
    return alt.vconcat(*rows).properties(title=title)


def _flash_chart() -> Any:
    import altair as alt
    import polars as pl

    from models.blocks import flash_fit

    f = flash_fit.curves().filter(pl.col("mode") == "closed_loop_qd").with_columns(
        (
            pl.col("config")
            + " "
            + pl.col("device_state")
            + " "
            + (pl.col("request_size_B") // 1024).cast(pl.String)
            + "K"
        ).alias("panel"),
        (pl.col("pattern") + " r" + (pl.col("read_fraction") * 100).round(0).cast(pl.Int64).cast(pl.String) + "%").alias("series"),
    )
    ref = f.filter(pl.col("source") == "reference")
    mod = f.filter(pl.col("source") == "model")
    pts = alt.Chart().mark_circle(size=30, opacity=0.85).encode(
        alt.X("iops:Q", title="IOPS", scale=alt.Scale(type="log")),
        alt.Y("latency_us:Q", title="mean latency (µs)", scale=alt.Scale(type="log")),
        alt.Color("series:N", title="pattern, reads"),
        tooltip=["panel:N", "series:N", "qd_or_rate:Q", alt.Tooltip("iops:Q", format=",.0f"), alt.Tooltip("latency_us:Q", format=".1f")],
    )
    lines = alt.Chart().mark_line(strokeWidth=1.5).encode(alt.X("iops:Q"), alt.Y("latency_us:Q"), alt.Color("series:N"), detail="series:N")
    return _facet_layers(lines, pts, "panel", "SSD: latency against IOPS by queue depth, MQSim (points) vs flash block (lines)", ref, mod)


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
