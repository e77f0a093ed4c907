"""The espresso model against the article's figures (dashboard study page).

Paper values come from ``paper_results.csv`` (digest numbers); model values from the
scenarios in ``scenarios.py``.  ``figures()`` returns (title, altair chart) pairs."""

from __future__ import annotations

import csv
from typing import Any

import numpy as np

from models.espresso import scenarios as sc
from models.espresso.data import HERE, TRACES

PAPER_CSV = HERE / "paper_results.csv"
DESIGN_ORDER = ["conv", "oc", "shrunk", "vh", "vh_ideal", "proch", "espresso"]


def paper_values() -> list[dict[str, Any]]:
    with open(PAPER_CSV, encoding="utf-8") as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    for r in rows:
        r["value"] = float(r["value"])
    return rows


def _paper(figure: str, quantity: str) -> dict[str, float]:
    return {r["design"]: r["value"] for r in paper_values() if r["figure"] == figure and r["quantity"] == quantity}


def _ratio_bars(title_y: str, scenario: dict[str, Any], metric: str, figure: str, quantity: str, designs: list[str]) -> Any:
    import altair as alt

    conv = sc.run("conv", scenario)[metric]
    paper = _paper(figure, quantity)
    recs = []
    for d in designs:
        recs.append({"design": d, "source": "model", "value": float(np.mean(sc.run(d, scenario)[metric] / conv))})
        if d in paper:
            recs.append({"design": d, "source": "paper", "value": paper[d]})
    return (
        alt.Chart(alt.Data(values=recs))
        .mark_bar()
        .encode(
            x=alt.X("design:N", sort=designs, title=None),
            xOffset="source:N",
            y=alt.Y("value:Q", title=title_y),
            color=alt.Color("source:N", title=None),
            tooltip=["design:N", "source:N", alt.Tooltip("value:Q", format=".3f")],
        )
        .properties(width=360, height=220)
    )


def fig10_throughput() -> Any:
    return _ratio_bars("throughput / Conv (mean of 12 points)", sc.MICROBENCH, "throughput_gbps", "fig10", "throughput", DESIGN_ORDER)


def fig11_latency() -> Any:
    return _ratio_bars("4 KB random read QD1 latency / Conv", sc.LATENCY_4K, "qd1_latency_us", "fig11", "latency", DESIGN_ORDER)


def fig12_traces() -> Any:
    """Per-trace throughput over Conv for every design, the paper's averages as rules."""
    import altair as alt

    conv = sc.run("conv", sc.REAL)["throughput_gbps"]
    recs = []
    for d in DESIGN_ORDER:
        r = sc.run(d, sc.REAL)["throughput_gbps"] / conv
        recs += [{"trace": w, "design": d, "ratio": float(v)} for w, v in zip(TRACES, r)]
    paper = [{"design": d, "ratio": v} for d, v in _paper("fig12", "throughput").items()]
    bars = (
        alt.Chart(alt.Data(values=recs))
        .mark_bar()
        .encode(
            x=alt.X("trace:N", sort=list(TRACES), title=None),
            xOffset=alt.XOffset("design:N", sort=DESIGN_ORDER),
            y=alt.Y("ratio:Q", title="throughput / Conv (model)"),
            color=alt.Color("design:N", sort=DESIGN_ORDER),
            tooltip=["trace:N", "design:N", alt.Tooltip("ratio:Q", format=".3f")],
        )
        .properties(width=640, height=240)
    )
    means = [{"design": d, "ratio": float(np.mean([x["ratio"] for x in recs if x["design"] == d])), "source": "model mean"} for d in DESIGN_ORDER]
    means += [dict(p, source="paper mean") for p in paper]
    summary = (
        alt.Chart(alt.Data(values=means))
        .mark_point(filled=True, size=80)
        .encode(
            x=alt.X("design:N", sort=DESIGN_ORDER, title=None),
            y=alt.Y("ratio:Q", title="mean throughput / Conv", scale=alt.Scale(zero=False)),
            shape=alt.Shape("source:N", title=None),
            color=alt.Color("source:N", title=None),
            tooltip=["design:N", "source:N", alt.Tooltip("ratio:Q", format=".3f")],
        )
        .properties(width=300, height=240)
    )
    return alt.hconcat(bars, summary).resolve_scale(color="independent", shape="independent")


def fig13b_premium() -> Any:
    """IOPS/$ of Espresso over OC against the CXL premium (2 TB): on Ali-0 (Fig 13a's
    workload, the 19.7% gap the OC price is fitted to) and as the mean over the 14 traces
    (the reading of Fig 13b the break-even claim uses), with the paper's 40%."""
    import altair as alt

    premiums = np.linspace(0.0, 1.0, 21)
    recs = []
    for label, workloads in (("Ali-0", ["ali0"]), ("mean of the 14 traces", list(TRACES))):
        oc = sc.run("oc", {"workload": workloads, "capacity_tb": 2.0})
        for p in premiums:
            esp = sc.run("espresso", {"workload": workloads, "capacity_tb": 2.0}, cxl_premium_frac=float(p))
            ratio = float(np.mean(esp["iops_per_usd"] / oc["iops_per_usd"]))
            recs.append({"premium_pct": float(p * 100), "ratio": ratio, "workload": label})
    line = alt.Chart(alt.Data(values=recs)).mark_line(point=True).encode(
        x=alt.X("premium_pct:Q", title="CXL premium on controller + DRAM (%)"),
        y=alt.Y("ratio:Q", title="IOPS/$: Espresso / OC (model)", scale=alt.Scale(zero=False)),
        color=alt.Color("workload:N", title=None),
        tooltip=["workload:N", alt.Tooltip("premium_pct:Q", format=".0f"), alt.Tooltip("ratio:Q", format=".3f")],
    )
    marks = [{"premium_pct": _paper("fig13b", "breakeven_premium")["espresso"] * 100, "label": "paper break-even (40%)"}]
    rule = alt.Chart(alt.Data(values=marks)).mark_rule(color="firebrick", strokeDash=[4, 3]).encode(x="premium_pct:Q", tooltip=["label:N"])
    one = alt.Chart(alt.Data(values=[{"ratio": 1.0}])).mark_rule(color="gray").encode(y="ratio:Q")
    return (line + rule + one).properties(width=420, height=240)


def fig13_bom() -> Any:
    import altair as alt

    paper = _paper("fig13a", "bom_usd")
    recs = []
    for d in DESIGN_ORDER:
        recs.append({"design": d, "source": "model", "usd": float(sc.run(d, sc.FIG13)["bom_usd"][0])})
        if d in paper:
            recs.append({"design": d, "source": "paper", "usd": paper[d]})
    return (
        alt.Chart(alt.Data(values=recs))
        .mark_bar()
        .encode(
            x=alt.X("design:N", sort=DESIGN_ORDER, title=None),
            xOffset="source:N",
            y=alt.Y("usd:Q", title="SSD bill of materials, 2 TB ($)"),
            color=alt.Color("source:N", title=None),
            tooltip=["design:N", "source:N", alt.Tooltip("usd:Q", format=".2f")],
        )
        .properties(width=360, height=220)
    )


def fig13c_pareto() -> Any:
    """Throughput against BOM for the seven designs over cores, DRAM and lenders (Ali-0, 2 TB)."""
    import altair as alt

    cores, dram, lenders = np.meshgrid([1, 2, 3, 4], [0.25, 0.5, 0.75], [2, 6, 10], indexing="ij")
    recs = []
    for d in DESIGN_ORDER:
        out = sc.run(d, sc.FIG13, cores_per_ssd=cores.ravel().astype(float), dram_gb_per_tb=dram.ravel(), lenders=lenders.ravel().astype(float))
        recs += [
            {"design": d, "bom_usd": float(b), "gbps": float(g), "cores": int(c), "lenders": int(n)}
            for b, g, c, n in zip(out["bom_usd"], out["throughput_gbps"], cores.ravel(), lenders.ravel())
        ]
    return (
        alt.Chart(alt.Data(values=recs))
        .mark_point(filled=True, opacity=0.7)
        .encode(
            x=alt.X("bom_usd:Q", title="SSD bill of materials ($)", scale=alt.Scale(zero=False)),
            y=alt.Y("gbps:Q", title="throughput per SSD (GB/s)"),
            color=alt.Color("design:N", sort=DESIGN_ORDER),
            tooltip=["design:N", "cores:Q", "lenders:Q", alt.Tooltip("bom_usd:Q", format=".2f"), alt.Tooltip("gbps:Q", format=".2f")],
        )
        .properties(width=420, height=280)
    )


def figures() -> list[tuple[str, Any]]:
    return [
        ("Fig 10: 64-256 KB QD64 microbenchmarks, throughput over Conv (model vs paper)", fig10_throughput()),
        ("Fig 11: 4 KB random read QD1 latency over Conv (model vs paper)", fig11_latency()),
        ("Fig 12: real workloads, throughput over Conv per trace, and means against the paper's", fig12_traces()),
        ("Fig 13a: SSD bill of materials at 2 TB (model vs paper)", fig13_bom()),
        ("Fig 13b: IOPS/$ over OC against the CXL premium, Ali-0 and mean of the traces; the paper breaks even at 40%", fig13b_premium()),
        ("Fig 13c: throughput against BOM for the seven designs (Ali-0, 2 TB)", fig13c_pareto()),
    ]
