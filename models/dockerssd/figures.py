"""The DockerSSD models against the article's figures (dashboard study pages).

The article's figures exist only as captions; the numbers it states about them are in
``paper_values.csv``.  Model values come from the two registered models at the claims'
settings (128 nodes, one sequence per node for the LLM pool)."""

from __future__ import annotations

import csv
from typing import Any

import numpy as np

from models.dockerssd.hardware import HERE

LLM_NODES = 128
SEQS = [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]


def paper_values() -> list[dict[str, Any]]:
    with open(HERE / "paper_values.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    for r in rows:
        r["value"] = float(r["value"])
    return rows


def _paper(figure: str, quantity: str) -> dict[str, float]:
    return {r["key"]: r["value"] for r in paper_values() if r["figure"] == figure and r["quantity"] == quantity}


def _isp() -> Any:
    from dse import registry

    return registry.get("dockerssd-isp")


def _llm() -> Any:
    from dse import registry

    return registry.get("dockerssd-llm")


def _gmean(x: np.ndarray) -> float:
    return float(np.exp(np.mean(np.log(x))))


def fig4b_speedups() -> Any:
    """D-VirtFW's speedup over each design (geometric mean over the 13 workloads)."""
    import altair as alt

    from models.dockerssd.isp import DESIGNS, WORKLOADS

    m = _isp()
    v = m.run({"design": "d_virtfw", "workload": list(WORKLOADS)})["latency_s"]
    paper = _paper("fig4b", "speedup_of_d_virtfw")
    recs = []
    for d in DESIGNS[:-1]:
        t = m.run({"design": d, "workload": list(WORKLOADS)})["latency_s"]
        recs.append({"design": d, "source": "model", "value": _gmean(t / v)})
        recs.append({"design": d, "source": "paper", "value": paper[d]})
    return (alt.Chart(alt.Data(values=recs)).mark_bar()
            .encode(x=alt.X("design:N", sort=list(DESIGNS[:-1]), title=None), xOffset="source:N",
                    y=alt.Y("value:Q", title="D-VirtFW speedup (x)"), color=alt.Color("source:N", title=None),
                    tooltip=["design:N", "source:N", alt.Tooltip("value:Q", format=".2f")])
            .properties(width=380, height=220))


def fig4b_breakdown() -> Any:
    """Six-way latency breakdown per workload and design, normalised to D-VirtFW (model only:
    the article's per-workload bars are not in its text)."""
    import altair as alt

    from models.dockerssd.isp import DESIGNS, WORKLOADS

    m = _isp()
    parts = ("network_s", "kernel_ctx_s", "lba_set_s", "storage_s", "system_s", "compute_s")
    v = m.run({"design": "d_virtfw", "workload": list(WORKLOADS)})["latency_s"]
    recs = []
    for d in DESIGNS:
        r = m.run({"design": d, "workload": list(WORKLOADS)})
        for j, w in enumerate(WORKLOADS):
            for k in parts:
                recs.append({"workload": w, "design": d, "term": k[:-2], "value": float(r[k][j] / v[j])})
    return (alt.Chart(alt.Data(values=recs)).mark_bar()
            .encode(x=alt.X("design:N", sort=list(DESIGNS), title=None), y=alt.Y("sum(value):Q", title="latency / D-VirtFW"),
                    color=alt.Color("term:N", title=None), facet=alt.Facet("workload:N", columns=5, title=None),
                    tooltip=["workload:N", "design:N", "term:N", alt.Tooltip("value:Q", format=".3f")])
            .properties(width=130, height=120))


def _fig5_runs() -> dict[str, np.ndarray]:
    from models.dockerssd.llm import CONFIGS, LLMS

    m = _llm()
    n = len(LLMS)
    return {c: m.run({"config": c, "llm": list(LLMS), "nodes": [LLM_NODES] * n, "batch": [LLM_NODES] * n,
                      "seq_len": 32768, "enforce_capacity": False})["time_per_token_s"] for c in CONFIGS}


def fig5b_ratios() -> Any:
    """Per-LLM ratios of Fig. 5b at 32K tokens; the article's averages as rules."""
    import altair as alt

    from models.dockerssd.llm import LLMS

    t = _fig5_runs()
    pairs = {"d_cache_over_h_cache": ("h_cache", "d_cache"), "h_cache_over_h_nocache": ("h_nocache", "h_cache"),
             "d_cache_over_d_nocache": ("d_nocache", "d_cache"), "h_nocache_over_d_nocache": ("d_nocache", "h_nocache")}
    paper = _paper("fig5b", "ratio")
    recs = [{"ratio": q, "llm": llm, "value": float(t[slow][j] / t[fast][j]), "paper": paper[q]}
            for q, (slow, fast) in pairs.items() for j, llm in enumerate(LLMS)]
    base = alt.Chart().mark_bar().encode(
        x=alt.X("llm:N", sort=list(LLMS), title=None), y=alt.Y("value:Q", title="speedup (x)"),
        tooltip=["ratio:N", "llm:N", alt.Tooltip("value:Q", format=".3g")])
    rule = alt.Chart().mark_rule(color="red").encode(y="mean(paper):Q")
    return (alt.layer(base, rule, data=alt.Data(values=recs)).properties(width=260, height=180)
            .facet(facet=alt.Facet("ratio:N", title=None), columns=2).resolve_scale(y="independent"))


def fig6ab_sequence() -> Any:
    """D-Cache over H-Cache against sequence length (lamda-137B, megatron-1T); the article's
    crossovers (256, 1024) and long-sequence limit (~9.5x) as rules."""
    import altair as alt

    m = _llm()
    recs = []
    for llm in ("lamda-137B", "megatron-1T"):
        rs = {c: m.run({"config": c, "llm": llm, "nodes": LLM_NODES, "batch": LLM_NODES, "seq_len": SEQS,
                        "enforce_capacity": False})["time_per_token_s"] for c in ("h_cache", "d_cache")}
        for s, r in zip(SEQS, rs["h_cache"] / rs["d_cache"]):
            recs.append({"llm": llm, "seq_len": s, "speedup": float(r)})
    paper = _paper("fig6ab", "crossover_tokens")
    marks = [{"llm": k, "seq_len": v} for k, v in paper.items()]
    line = alt.Chart(alt.Data(values=recs)).mark_line(point=True).encode(
        x=alt.X("seq_len:Q", scale=alt.Scale(type="log", base=2), title="sequence length (tokens)"),
        y=alt.Y("speedup:Q", title="D-Cache / H-Cache (x)"), color=alt.Color("llm:N", title=None),
        tooltip=["llm:N", "seq_len:Q", alt.Tooltip("speedup:Q", format=".2f")])
    xo = alt.Chart(alt.Data(values=marks)).mark_rule(strokeDash=[4, 3]).encode(x="seq_len:Q", color="llm:N")
    one = alt.Chart(alt.Data(values=[{"y": 1.0}, {"y": _paper("fig6ab", "long_seq_speedup")["all"]}])).mark_rule(
        color="gray").encode(y="y:Q")
    return alt.layer(line, xo, one).properties(width=420, height=240)


def fig6cd_batch() -> Any:
    """D-Cache over H-Cache against batch at three sequence lengths."""
    import altair as alt

    m = _llm()
    recs = []
    for llm in ("lamda-137B", "megatron-1T"):
        for s in (512, 2048, 8192):
            rs = {c: m.run({"config": c, "llm": llm, "nodes": LLM_NODES, "batch": BATCHES, "seq_len": s,
                            "enforce_capacity": False})["time_per_token_s"] for c in ("h_cache", "d_cache")}
            for b, r in zip(BATCHES, rs["h_cache"] / rs["d_cache"]):
                recs.append({"llm": llm, "seq_len": str(s), "batch": b, "speedup": float(r),
                             "paper": _paper("fig6cd", "max_batch_speedup")["all"]})
    line = alt.Chart().mark_line(point=True).encode(
        x=alt.X("batch:Q", scale=alt.Scale(type="log", base=2)), y=alt.Y("speedup:Q", title="D-Cache / H-Cache (x)"),
        color=alt.Color("seq_len:N", title="tokens"), tooltip=["llm:N", "seq_len:N", "batch:Q", alt.Tooltip("speedup:Q", format=".2f")])
    rule = alt.Chart().mark_rule(color="red").encode(y="mean(paper):Q")
    return (alt.layer(line, rule, data=alt.Data(values=recs)).properties(width=260, height=200)
            .facet(facet=alt.Facet("llm:N", title=None)))


def figures() -> list[tuple[str, Any]]:
    return [
        ("Fig. 4b: D-VirtFW speedup over each design (gmean of 13 workloads), model vs paper", fig4b_speedups()),
        ("Fig. 4b: six-way latency breakdown per workload, normalised to D-VirtFW (model)", fig4b_breakdown()),
        ("Fig. 5b: per-LLM ratios at 32K tokens, 128 nodes (bars: model; red: the article's average)", fig5b_ratios()),
        ("Fig. 6a/b: D-Cache / H-Cache vs sequence length (dashed: article's crossovers; gray: 1x and ~9.5x)",
         fig6ab_sequence()),
        ("Fig. 6c/d: D-Cache / H-Cache vs batch (red: the article's 1.3x maximum)", fig6cd_batch()),
    ]
