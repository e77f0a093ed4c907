"""iks against the article's figures (shared/research/iks.md): Table 1 (model vs paper),
Fig. 6 (offload tax against context size, per interface), Fig. 7 (temporal multitenancy
against corpus size), Fig. 8 (RAG throughput against K, per retriever and pipeline), and
every claim's model-over-paper ratio.  The article prints its curves only as figures; the
paper points are Table 1 (``table1.csv``) and the numbers of ``claims.yaml``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
BATCHES = [1, 2, 4, 8, 16, 32, 64]
CORPORA_GB = [32, 64, 128, 192, 256, 320, 384]
TOP_KS = [1, 2, 4, 8, 16, 32, 64]
#: Corpus of the RAG throughput study: 50 GB, batch 16 (companion ASPLOS'25 paper, Fig. 2 caption).
FIG8_CORPUS_GB = 50.0


def _model() -> Any:
    from dse import registry

    return registry.get("iks")


def _table1_rows() -> list[dict[str, Any]]:
    from models.iks.calibration import table1

    m = _model()
    rows = []
    for r in table1():
        tenancy = "solo" if r["column"] == "solo" else "spatial"
        out = m.point(tenancy=tenancy, enns_channels=r["enns_channels"], corpus_gb=r["corpus_gb"], batch=int(r["batch"]))
        for label, metric, col in (("ENNS search time (ms)", "search_ms", "search_ms"), ("ENNS QPS", "enns_qps", "qps"),
                                   ("Memcached P50 (us)", "tenant_p50_us", "mc_p50_us"),
                                   ("Memcached P99 (us)", "tenant_p99_us", "mc_p99_us")):
            rows.append({"quantity": label, "column": r["column"], "source": "paper", "value": float(r[col])})
            rows.append({"quantity": label, "column": r["column"], "source": "model", "value": out[metric]})
    return rows


def _offload_rows() -> list[dict[str, Any]]:
    m = _model()
    rows = []
    for iface in ("cxl_cache", "cxl_mem", "ring_buffer"):
        out = m.run({"interface": iface, "batch": np.asarray(BATCHES, dtype=float)})
        for i in range(len(BATCHES)):
            rows.append({"interface": iface, "context_kb": float(out["context_kb"][i]), "offload_us": float(out["offload_us"][i])})
    return rows


def _temporal_rows() -> list[dict[str, Any]]:
    m = _model()
    rows = []
    for mode in ("solo", "temporal"):
        out = m.run({"tenancy": mode, "host_link": "nma_uplinks", "corpus_gb": np.asarray(CORPORA_GB, dtype=float)})
        for i, s in enumerate(CORPORA_GB):
            for metric, label in (("enns_overhead_pct", "ENNS overhead (%)"), ("tenant_p50_us", "Memcached P50 (us)"),
                                  ("tenant_p99_us", "Memcached P99 (us)")):
                rows.append({"corpus_gb": s, "mode": mode, "quantity": label, "value": float(out[metric][i])})
    return rows


def _rag_rows() -> list[dict[str, Any]]:
    m = _model()
    rows = []
    for pipe in ("fid_t5", "llama3_8b", "llama3_70b"):
        for ret in ("iks", "cpu_enns", "cpu_hnsw"):
            out = m.run({"retriever": ret, "pipeline": pipe, "corpus_gb": FIG8_CORPUS_GB,
                         "top_k": np.asarray(TOP_KS, dtype=float)})
            for i, k in enumerate(TOP_KS):
                rows.append({"pipeline": pipe, "retriever": ret, "top_k": k, "rag_qps": float(out["rag_qps"][i]),
                             "ttft_ms": float(out["ttft_ms"][i])})
    return rows


def _claim_rows() -> list[dict[str, Any]]:
    from dse.claims import evaluate_claims

    rows = []
    for c in evaluate_claims(HERE / "claims.yaml"):
        if isinstance(c.expected, tuple):
            continue
        rows.append({"claim": c.id, "headline": "headline" if c.headline else "other",
                     "model_over_paper": c.value / float(c.expected), "passed": "ok" if c.passed else "FAIL"})
    return rows


def figures() -> list[tuple[str, Any]]:
    import altair as alt

    t1 = alt.Chart(alt.Data(values=_table1_rows())).mark_bar().encode(
        x=alt.X("source:N", title=None), y=alt.Y("value:Q", title=None), color="source:N",
        column=alt.Column("column:N", title="Table 1 column"), row=alt.Row("quantity:N", title=None),
    ).resolve_scale(y="independent").properties(width=90, height=110)

    off = alt.Chart(alt.Data(values=_offload_rows())).mark_line(point=True).encode(
        x=alt.X("context_kb:Q", title="offload context (kB): 1..64 queries of 768 x fp16", scale=alt.Scale(type="log")),
        y=alt.Y("offload_us:Q", title="offload tax (us)"), color="interface:N",
    ).properties(width=360, height=240, title="Fig. 6: paper says CXL.cache up to 85.5% / 86.2% below CXL.mem / ring")

    tmp = alt.Chart(alt.Data(values=_temporal_rows())).mark_line(point=True).encode(
        x=alt.X("corpus_gb:Q", title="ENNS corpus (GB), 32 QPS, batch 16"), y=alt.Y("value:Q", title=None),
        color="mode:N", column=alt.Column("quantity:N", title=None),
    ).resolve_scale(y="independent").properties(width=200, height=180,
                                                 title="Fig. 7: paper ENNS overhead ~11%; small P50, larger P99 increase")

    rag = alt.Chart(alt.Data(values=_rag_rows())).mark_line(point=True).encode(
        x=alt.X("top_k:Q", title="passages K", scale=alt.Scale(type="log", base=2)),
        y=alt.Y("rag_qps:Q", title="RAG queries/s (batch 16)", scale=alt.Scale(type="log")),
        color="retriever:N", column=alt.Column("pipeline:N", title=None),
    ).properties(width=200, height=200, title="Fig. 8: paper up to 6.7x over CPU HNSW (model: DPR corpus)")

    claims = alt.Chart(alt.Data(values=_claim_rows())).mark_bar().encode(
        x=alt.X("model_over_paper:Q", title="model / paper"), y=alt.Y("claim:N", sort=None, title=None),
        color=alt.Color("passed:N", scale=alt.Scale(domain=["ok", "FAIL"], range=["#4c78a8", "#e45756"])),
        tooltip=["claim:N", "headline:N", "model_over_paper:Q"],
    ).properties(width=360, title="claims: model over paper")
    rule = alt.Chart(alt.Data(values=[{"x": 1.0}])).mark_rule(color="black").encode(x="x:Q")

    return [
        ("Table 1: ENNS and Memcached, solo vs spatial multitenancy", t1),
        ("Fig. 6: offload tax by interface and context size", off),
        ("Fig. 7: temporal multitenancy against corpus size", tmp),
        ("Fig. 8: RAG throughput by retriever, pipeline and K", rag),
        ("Claims: model over paper", claims + rule),
    ]
