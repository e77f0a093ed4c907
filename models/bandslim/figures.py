"""bandslim against the article's figures (kvssd.md): Fig. 2 (Baseline traffic and
amplification against value size), Fig. 5(b) (Gen5 response time by mode against value
size), per-workload throughput (Fig. 5(e) style), and the article's numbers next to the
model's.  The article gives its curves only as figures; the paper points are the few
numbers its text states (``paper_values.csv``)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np

SIZES_B = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
MODE_LABEL = {"baseline": "Baseline", "piggyback": "Piggyback", "cxl": "CXL-FGT", "adaptive_p": "Adaptive-P", "adaptive_c": "Adaptive-C"}
WORKLOAD_LABEL = {"wb": "W(B)", "wc": "W(C)", "wd": "W(D)", "wm": "W(M)"}


def _model() -> Any:
    from dse import registry

    return registry.get("bandslim")


def _paper() -> list[dict[str, str]]:
    with (Path(__file__).parent / "paper_values.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _sweep_sizes(modes: list[str], **fixed: Any) -> list[dict[str, Any]]:
    m = _model()
    rows = []
    for mode in modes:
        out = m.run({"mode": mode, "value_b": np.asarray(SIZES_B, dtype=float), **fixed})
        for i, v in enumerate(SIZES_B):
            rows.append({
                "value_b": v, "mode": MODE_LABEL[mode],
                "traffic_b": float(out["traffic_per_put_b"][i]),
                "amplification_x": float(out["amplification_x"][i]),
                "latency_us": float(out["put_latency_us"][i]),
            })
    return rows


def _model_vs_paper() -> list[dict[str, Any]]:
    m = _model()
    p = m.point
    model_values = {
        ("traffic saving 4-32 B (Piggyback vs Baseline)", "Gen2 W(A) 32 B"): 100 * p(mode="piggyback", value_b=32)["traffic_saving_frac"],
        ("traffic amplification (Baseline)", "Gen2 W(A) 32 B"): p(mode="baseline", value_b=32)["amplification_x"],
        ("response time Piggyback / Baseline", "Gen2 W(A) 4-32 B"): 1 / p(mode="piggyback", value_b=32)["speedup_vs_baseline_x"],
        ("traffic saving W(M) (Adaptive vs Baseline)", "Gen2 W(M)"): 100 * p(mode="adaptive_p", workload="wm")["traffic_saving_frac"],
        ("throughput gain W(M) (Adaptive vs Piggyback)", "Gen2 W(M)"): 100 * (
            p(mode="adaptive_p", workload="wm")["put_rate_kiops"] / p(mode="piggyback", workload="wm")["put_rate_kiops"] - 1),
        ("throughput Adaptive / Piggyback", "Gen2 W(C)"): p(mode="adaptive_p", workload="wc")["put_rate_kiops"]
        / p(mode="piggyback", workload="wc")["put_rate_kiops"],
        ("switch threshold", "Gen2"): p(mode="piggyback")["tau_opt_b"],
        ("switch threshold", "Gen5"): p(mode="piggyback", pcie_gen=5)["tau_opt_b"],
        ("response time Piggyback / CXL-FGT", "Gen5 W(A) 256 B"): p(mode="piggyback", pcie_gen=5, value_b=256)["put_latency_us"]
        / p(mode="cxl", pcie_gen=5, value_b=256)["put_latency_us"],
    }
    rows = []
    for r in _paper():
        label = f"{r['quantity']} [{r['scenario']}, {r['unit']}]"
        paper = float(r["paper_value"])
        model = float(model_values[(r["quantity"], r["scenario"])])
        rows.append({"quantity": label, "source": "paper", "value": paper, "model_over_paper": 1.0})
        rows.append({"quantity": label, "source": "model", "value": model, "model_over_paper": model / paper})
    return rows


def _workload_rows() -> list[dict[str, Any]]:
    m = _model()
    rows = []
    for gen, modes, tau in ((2, ["baseline", "piggyback", "adaptive_p"], 128.0), (5, list(MODE_LABEL), 64.0)):
        for w, wl in WORKLOAD_LABEL.items():
            base = m.point(mode="baseline", workload=w, pcie_gen=gen)["put_rate_kiops"]
            for mode in modes:
                x = m.point(mode=mode, workload=w, pcie_gen=gen, tau_b=tau)
                rows.append({"link": f"PCIe Gen{gen}", "workload": wl, "mode": MODE_LABEL[mode],
                             "throughput_vs_baseline": x["put_rate_kiops"] / base,
                             "traffic_vs_baseline": 1.0 - x["traffic_saving_frac"]})
    return rows


def figures() -> list[tuple[str, Any]]:
    import altair as alt

    out: list[tuple[str, Any]] = []
    fig2 = _sweep_sizes(["baseline", "piggyback"])
    base = alt.Chart(alt.Data(values=fig2)).encode(
        x=alt.X("value_b:Q", scale=alt.Scale(type="log", base=2), title="value size (B)"),
        color=alt.Color("mode:N"),
    )
    out.append((
        "Fig. 2 (Gen2): PCIe bytes per PUT; paper: 130x amplification at 32 B, Piggyback reaches Baseline near 2 KB",
        base.mark_line(point=True).encode(y=alt.Y("traffic_b:Q", scale=alt.Scale(type="log"), title="bytes per PUT")),
    ))
    fig5 = _sweep_sizes(list(MODE_LABEL), pcie_gen=5, tau_b=64.0)
    out.append((
        "Fig. 5(b) (Gen5 study, W(A)): response time by mode; paper: CXL-FGT loses below 64 B, ~4x faster than Piggyback at 256 B",
        alt.Chart(alt.Data(values=fig5)).mark_line(point=True).encode(
            x=alt.X("value_b:Q", scale=alt.Scale(type="log", base=2), title="value size (B)"),
            y=alt.Y("latency_us:Q", scale=alt.Scale(type="log"), title="PUT response time (us)"),
            color=alt.Color("mode:N"),
        ),
    ))
    out.append((
        "Fig. 5(e)-style: throughput relative to Baseline per workload (model; Gen2 tau 128 B, Gen5 tau 64 B)",
        alt.Chart(alt.Data(values=_workload_rows())).mark_bar().encode(
            x=alt.X("mode:N", title=None), y=alt.Y("throughput_vs_baseline:Q", title="throughput / Baseline"),
            color=alt.Color("mode:N"), column=alt.Column("workload:N"), row=alt.Row("link:N"),
        ),
    ))
    out.append((
        "The article's numbers against the model (bars: value; paper and model side by side)",
        alt.Chart(alt.Data(values=_model_vs_paper())).mark_bar().encode(
            y=alt.Y("source:N", title=None), x=alt.X("value:Q", title="value"),
            color=alt.Color("source:N"), row=alt.Row("quantity:N", header=alt.Header(labelAngle=0, labelAlign="left")),
            tooltip=["quantity:N", "source:N", "value:Q", "model_over_paper:Q"],
        ).resolve_scale(x="independent"),
    ))
    return out
