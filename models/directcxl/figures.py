"""directcxl against the article's figures (shared/research/directcxl.md): Fig. 6 (latency by
payload), Fig. 8 (real workloads relative to Local), Fig. 9 (GNN embedding lookups) and every
claim as model over paper.  The article's curves exist only as figures; the paper points are
the numbers its text states."""

from __future__ import annotations

from typing import Any

import numpy as np

PAYLOADS_B = [64, 128, 256, 512, 1024, 2048, 4096]
REAL = ["dlrm", "memdb", "ligra_mis", "ligra_bfs", "ligra_cc", "ligra_bc"]
GNN = ["gnn_ogbn_arxiv", "gnn_citeseer", "gnn_ogbn_mag", "gnn_cora_ml", "gnn_dblp", "gnn_yelp", "gnn_cora", "gnn_cs", "gnn_physics"]
#: Numbers the article states for these figures (digest §4).
PAPER_POINTS = [
    {"payload_b": 64, "path": "directcxl", "cycles": 328.0},
    {"payload_b": 64, "path": "rdma (hardware only)", "cycles": 2705.0},
]
PAPER_MEANS = [
    {"path": "directcxl", "value": 1.45, "what": "DirectCXL / Local (L218)"},
    {"path": "swap", "value": 1.45 * 3.0, "what": "3x DirectCXL (L138)"},
    {"path": "kvs", "value": 1.45 * 2.2, "what": "2.2x DirectCXL, DLRM+MemDB (L138)"},
]


def _model() -> Any:
    from dse import registry

    return registry.get("directcxl")


def _payload_rows() -> list[dict[str, Any]]:
    m = _model()
    rows = []
    for path in ("local", "directcxl", "rdma"):
        out = m.run({"path": path, "workload": "ubench", "payload_b": np.asarray(PAYLOADS_B, dtype=float)})
        for i, s in enumerate(PAYLOADS_B):
            rows.append({"payload_b": s, "path": path, "cycles": float(out["payload_latency_cyc"][i]), "source": "model"})
    rows += [dict(r, source="paper") for r in PAPER_POINTS]
    return rows


def _workload_rows(workloads: list[str], paths: tuple[str, ...], norm: str) -> list[dict[str, Any]]:
    m = _model()
    base = m.run({"path": norm, "workload": workloads})["time_vs_local_x"]
    rows = []
    for path in paths:
        t = m.run({"path": path, "workload": workloads})["time_vs_local_x"]
        rows += [{"workload": w, "path": path, "value": float(v / b)} for w, v, b in zip(workloads, t, base)]
    return rows


def _claim_rows() -> list[dict[str, Any]]:
    from dse import registry
    from dse.claims import evaluate_claims

    rows = []
    for r in evaluate_claims(registry.model_dir("directcxl") / "claims.yaml"):
        if isinstance(r.expected, tuple) or not r.expected:
            continue
        rows.append({"claim": r.id, "kind": "headline" if r.headline else "other", "model_over_paper": r.value / float(r.expected)})
    return rows


def figures() -> list[tuple[str, Any]]:
    import altair as alt

    pay = alt.Chart(alt.Data(values=_payload_rows())).encode(
        x=alt.X("payload_b:Q", scale=alt.Scale(type="log", base=2), title="payload (B)"),
        y=alt.Y("cycles:Q", scale=alt.Scale(type="log"), title="latency (host cycles)"),
        color=alt.Color("path:N"),
    )
    fig6 = pay.transform_filter("datum.source == 'model'").mark_line(point=True) + pay.transform_filter(
        "datum.source == 'paper'").mark_point(shape="diamond", size=120, filled=True, color="black")

    real = _workload_rows(REAL, ("directcxl", "swap", "kvs", "tpp"), "local")
    real = [r for r in real if not (r["path"] == "kvs" and r["workload"].startswith("ligra"))]
    fig8 = alt.Chart(alt.Data(values=real)).mark_bar().encode(
        x=alt.X("path:N", title=None), y=alt.Y("value:Q", title="run time / Local"), color="path:N",
        column=alt.Column("workload:N", title=None),
    )
    means = alt.Chart(alt.Data(values=PAPER_MEANS)).mark_bar(color="gray").encode(
        x=alt.X("path:N"), y=alt.Y("value:Q", title="paper mean, run time / Local"), tooltip=["what:N"])

    gnn = _workload_rows(GNN, ("swap", "kvs"), "directcxl")
    fig9 = alt.Chart(alt.Data(values=gnn)).mark_bar().encode(
        x=alt.X("workload:N", title=None), xOffset="path:N",
        y=alt.Y("value:Q", title="lookup latency / DirectCXL",  # log bars: domain from below the smallest bar
                scale=alt.Scale(type="log", domainMin=0.5 * min(r["value"] for r in gnn))),
        color="path:N",
    )
    claims = alt.Chart(alt.Data(values=_claim_rows())).mark_bar().encode(
        y=alt.Y("claim:N", sort=None, title=None), x=alt.X("model_over_paper:Q", title="model / paper"), color="kind:N")
    return [
        ("Fig. 6: one access by payload size (model lines, paper points)", fig6),
        ("Fig. 8: real workloads, run time relative to Local (model)", fig8),
        ("Fig. 8: the article's mean ratios, as run time relative to Local", means),
        ("Fig. 9: GNN embedding lookups relative to DirectCXL (model; paper means: Swap 9.4x, KVS 2.4x)", fig9),
        ("Every claim: model over paper", claims),
    ]
