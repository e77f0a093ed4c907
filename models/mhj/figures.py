"""mhj against the article's figures (cxl-sql-join.md): Fig. 5(a) (synthetic joins, one and
two nodes, performance normalized to SMJ), Fig. 5(b) (TPC-DS per query, MHJ-CLM over SHJ and
SMJ), a time breakdown of one synthetic join per scheme, and the article's stated numbers
against the model's.  The article's bars are only in its figures; the paper values are the
numbers its text states (paper_values.csv)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np

CONFIGS = (  # label, scheme, pool
    ("SMJ", "smj", "clm"),
    ("SHJ", "shj", "clm"),
    ("MHJ-CSM (FPGA)", "mhj", "fpga"),
    ("MHJ-ASIC (estimate)", "mhj", "asic"),
    ("MHJ-CLM", "mhj", "clm"),
)


def _model() -> Any:
    from dse import registry

    return registry.get("mhj")


def _paper() -> list[dict[str, str]]:
    with (Path(__file__).parent / "paper_values.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def _fig5a_rows() -> list[dict[str, Any]]:
    from models.mhj.model import SYNTHETIC

    m = _model()
    rows = []
    for nodes in (1, 2):
        smj = m.run({"scheme": "smj", "workload": list(SYNTHETIC), "nodes": nodes})["query_s"]
        for label, scheme, pool in CONFIGS:
            if pool == "clm" and scheme == "mhj" and nodes > 1:
                continue  # CXL local memory is one host's
            t = m.run({"scheme": scheme, "pool": pool, "workload": list(SYNTHETIC), "nodes": nodes})["query_s"]
            rows += [{"nodes": f"{nodes} node(s)", "query": q, "config": label, "perf_vs_smj": float(s / x)}
                     for q, s, x in zip(SYNTHETIC, smj, t)]
    return rows


def _fig5b_rows() -> list[dict[str, Any]]:
    from models.mhj.model import TPCDS

    out = _model().run({"scheme": "mhj", "workload": list(TPCDS)})
    rows = []
    for q, a, b in zip(TPCDS, out["speedup_vs_shj_x"], out["speedup_vs_smj_x"]):
        rows.append({"query": q.upper(), "against": "SHJ", "speedup_x": float(a)})
        rows.append({"query": q.upper(), "against": "SMJ", "speedup_x": float(b)})
    return rows


def _breakdown_rows() -> list[dict[str, Any]]:
    m = _model()
    rows = []
    for label, scheme, pool in CONFIGS:
        r = m.point(scheme=scheme, pool=pool, workload="syn_store")
        for part in ("scan_s", "shuffle_s", "join_s"):
            rows.append({"config": label, "part": part.removesuffix("_s"), "seconds": r[part]})
    return rows


def _model_vs_paper() -> list[dict[str, Any]]:
    from models.mhj.model import SYNTHETIC, TPCDS

    m = _model()
    syn = {"workload": list(SYNTHETIC)}
    clm = m.run({"scheme": "mhj", **syn})
    csm = m.run({"scheme": "mhj", "pool": "fpga", **syn})
    asic2 = m.run({"scheme": "mhj", "pool": "asic", "nodes": 2, **syn})
    tp = m.run({"scheme": "mhj", "workload": list(TPCDS)})
    slow = float(np.mean(csm["query_s"] / clm["query_s"]))
    model = {
        "synthetic: MHJ-CLM over SHJ (1 node)": float(np.mean(clm["speedup_vs_shj_x"])),
        "synthetic: MHJ-CSM slowdown over MHJ-CLM (low)": slow,
        "synthetic: MHJ-CSM slowdown over MHJ-CLM (high)": slow,
        "synthetic: MHJ-ASIC over SHJ (2 nodes; projected)": float(np.mean(asic2["speedup_vs_shj_x"])),
        "TPC-DS: best MHJ-CLM over SHJ": float(np.max(tp["speedup_vs_shj_x"])),
        "TPC-DS: best MHJ-CLM over SMJ": float(np.max(tp["speedup_vs_smj_x"])),
        "TPC-DS: geometric-mean MHJ-CLM over SHJ": float(np.exp(np.mean(np.log(tp["speedup_vs_shj_x"])))),
    }
    rows = []
    for r in _paper():
        q, paper = r["quantity"], float(r["paper_value"])
        rows.append({"quantity": q, "source": "paper", "value": paper})
        rows.append({"quantity": q, "source": "model", "value": model[q]})
    return rows


def figures() -> list[tuple[str, Any]]:
    import altair as alt

    return [
        (
            "Fig. 5(a): synthetic joins, performance normalized to SMJ (paper: MHJ-CLM ~2.5x SHJ; CSM 1.8-2.1x slower than CLM; "
            "on two nodes CSM ~ SHJ)",
            alt.Chart(alt.Data(values=_fig5a_rows())).mark_bar().encode(
                x=alt.X("query:N", title=None), y=alt.Y("perf_vs_smj:Q", title="performance / SMJ"),
                color=alt.Color("config:N", sort=[c[0] for c in CONFIGS]), xOffset=alt.XOffset("config:N", sort=[c[0] for c in CONFIGS]),
                column=alt.Column("nodes:N", title=None), tooltip=["nodes:N", "query:N", "config:N", "perf_vs_smj:Q"],
            ),
        ),
        (
            "Fig. 5(b): TPC-DS SF1000, MHJ-CLM speedup per query (model; paper: up to 1.53x over SHJ, 4.4x over SMJ, 19% gmean over SHJ)",
            alt.Chart(alt.Data(values=_fig5b_rows())).mark_bar().encode(
                x=alt.X("query:N", title=None), y=alt.Y("speedup_x:Q", title="speedup (x)"), color=alt.Color("against:N"),
                xOffset="against:N", tooltip=["query:N", "against:N", "speedup_x:Q"],
            ),
        ),
        (
            "Where the time goes: store_sales JOIN store_returns, one node (model)",
            alt.Chart(alt.Data(values=_breakdown_rows())).mark_bar().encode(
                y=alt.Y("config:N", title=None, sort=[c[0] for c in CONFIGS]), x=alt.X("seconds:Q", stack=True),
                color=alt.Color("part:N"), tooltip=["config:N", "part:N", "seconds:Q"],
            ),
        ),
        (
            "The article's numbers against the model",
            alt.Chart(alt.Data(values=_model_vs_paper())).mark_bar().encode(
                y=alt.Y("source:N", title=None), x=alt.X("value:Q", title="x"), color=alt.Color("source:N"),
                row=alt.Row("quantity:N", header=alt.Header(labelAngle=0, labelAlign="left")), tooltip=["quantity:N", "source:N", "value:Q"],
            ),
        ),
    ]
