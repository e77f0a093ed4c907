"""llm-serve against the published serving measurements (measurements.csv: TensorRT-LLM
Performance Overview, NVIDIA NIM benchmarks), and the serving layer's curves: TTFT and
throughput against load, and throughput per GPU against context for each KV tier."""

from __future__ import annotations

from typing import Any

import numpy as np

TIERS = ("hbm", "host_dram", "cxl_expander", "cxl_gpu", "dockerssd_pool", "nvme")


def _model() -> Any:
    from dse import registry

    return registry.get("llm-serve")


def _measured_rows() -> list[dict[str, Any]]:
    from models.llm_serve import calibration

    rows = calibration.measurements()
    pred = calibration.predict(rows)
    return [{"point": r["id"], "role": r["role"], "metric": r["metric"], "measured": float(r["value"]), "model": float(p),
             "error_pct": 100.0 * (float(p) / float(r["value"]) - 1.0)} for r, p in zip(rows, pred)]


def _load_rows() -> list[dict[str, Any]]:
    m = _model()
    loads = np.linspace(0.05, 0.95, 19)
    out = m.run({"model_params_b": 70.0, "weight_dtype": "fp8", "kv_dtype": "fp8", "gpus": 2.0,
                 "context_tokens": 5500.0, "output_tokens": 500.0, "load_frac": loads})
    rows = []
    for i, x in enumerate(loads):
        for metric in ("ttft_p50_ms", "ttft_p99_ms", "ttft_ms"):
            rows.append({"load_frac": float(x), "series": metric, "ms": float(out[metric][i])})
    return rows


def _tier_rows() -> list[dict[str, Any]]:
    m = _model()
    ctx = np.asarray([8192.0, 16384.0, 32768.0, 65536.0, 131072.0])
    rows = []
    for tier in TIERS:
        ev = m.run_full({"kv_tier": tier, "model_params_b": 70.0, "gpus": 2.0, "output_tokens": 1024.0,
                         "context_tokens": ctx, "load_frac": 1.0, "tier_capacity_gib": 4096.0})
        for i, c in enumerate(ctx):
            if ev.feasible[i]:
                rows.append({"kv_tier": tier, "context_tokens": float(c),
                             "tokens_per_s_per_gpu": float(ev.metrics["tokens_per_s_per_gpu"][i])})
    return rows


def figures() -> list[tuple[str, Any]]:
    import altair as alt

    return [
        ("Published serving measurements against the model (TensorRT-LLM offline throughput, NIM TTFT / ITL / "
         "throughput at a concurrency); role 'fit' = the three fitted constants saw them, 'held_out' = predictions",
         alt.Chart(alt.Data(values=_measured_rows())).mark_point(filled=True, size=70).encode(
             x=alt.X("measured:Q", scale=alt.Scale(type="log"), title="measured"),
             y=alt.Y("model:Q", scale=alt.Scale(type="log"), title="model"),
             color=alt.Color("role:N"), shape=alt.Shape("metric:N"),
             tooltip=["point:N", "metric:N", "measured:Q", "model:Q", "error_pct:Q"],
         )),
        ("TTFT against offered load: Llama-3-70B fp8 on 2 x H100, 5000 in / 500 out (model; M/D/1 prompt queue)",
         alt.Chart(alt.Data(values=_load_rows())).mark_line(point=True).encode(
             x=alt.X("load_frac:Q", title="offered load / capacity"),
             y=alt.Y("ms:Q", scale=alt.Scale(type="log"), title="TTFT (ms)"), color=alt.Color("series:N"),
         )),
        ("Throughput per GPU against context by KV tier: 70B bf16 on 2 x H100, 1024 out (model; missing points: "
         "the KV of one request does not fit)",
         alt.Chart(alt.Data(values=_tier_rows())).mark_line(point=True).encode(
             x=alt.X("context_tokens:Q", scale=alt.Scale(type="log", base=2), title="context (tokens)"),
             y=alt.Y("tokens_per_s_per_gpu:Q", scale=alt.Scale(type="log"), title="output tokens/s per GPU"),
             color=alt.Color("kv_tier:N"),
         )),
    ]
