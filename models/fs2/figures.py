"""fs2 against the article's figures (fs2.md): Fig. 6 (speedup of each FS² scheme, single and
distributed HAs, per workload, with the article's averages), Fig. 1b (device hit ratio
against device count, with the YCSB-d points), Fig. 7 (throughput scaling from 4 devices)
and Fig. 1c (miss latency over local access against device count).  The article gives its
bars only as figures; the paper points are the numbers its text states (paper_values.csv)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np

SCHEMES = {"fs2_switch": "FS²-switch", "fs2_topology": "FS²-topology", "fs2_sched": "FS²-scheduling", "fs2": "FS² (all schemes)"}
DEVICES = [1, 2, 4, 8, 16, 32, 64, 128, 256]


def _model() -> Any:
    from dse import registry

    return registry.get("fs2")


def _paper() -> list[dict[str, str]]:
    with (Path(__file__).parent / "paper_values.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def _fig6_rows() -> list[dict[str, Any]]:
    from models.fs2.model import WORKLOAD_TABLE, WORKLOADS

    m = _model()
    rows = []
    for ha in ("single", "distributed"):
        for design, label in SCHEMES.items():
            out = m.run({"design": design, "ha": ha, "workload": list(WORKLOADS)})["speedup_x"]
            for w, v in zip(WORKLOADS, out):
                rows.append({"ha": ha, "scheme": label, "workload": WORKLOAD_TABLE[w]["label"], "speedup_x": float(v), "source": "model"})
            rows.append({"ha": ha, "scheme": label, "workload": "average", "speedup_x": float(np.mean(out)), "source": "model"})
    for r in _paper():
        rows.append({"ha": r["ha"], "scheme": r["quantity"], "workload": "average", "speedup_x": float(r["paper_value"]), "source": "paper"})
    return rows


def _hit_rows() -> list[dict[str, Any]]:
    from models.fs2.model import WORKLOAD_TABLE, WORKLOADS

    m = _model()
    rows = []
    for w in WORKLOADS:
        out = m.run({"design": "vanilla", "workload": w, "n_devices": np.asarray(DEVICES, dtype=float)})["device_hit_frac"]
        rows += [{"devices": d, "hit_pct": 100 * float(v), "workload": WORKLOAD_TABLE[w]["label"], "source": "model"} for d, v in zip(DEVICES, out)]
    rows += [{"devices": 1, "hit_pct": 42.7, "workload": "YCSB-d (Redis)", "source": "paper"},
             {"devices": 64, "hit_pct": 4.8, "workload": "YCSB-d (Redis)", "source": "paper"}]
    return rows


def _scaling_rows() -> list[dict[str, Any]]:
    m = _model()
    n = np.asarray([d for d in DEVICES if d >= 4], dtype=float)
    rows = []
    for w, label in (("dlrm_inf", "DLRM inference"), ("ycsb_b", "YCSB-b")):
        for design, name in (("vanilla", "vanilla"), ("fs2", "FS²")):
            thr = m.run({"design": design, "workload": w, "n_devices": n})["throughput_per_s"]
            rows += [{"devices": int(d), "scaling_x": float(t / thr[0]), "design": name, "workload": label} for d, t in zip(n, thr)]
        rows += [{"devices": int(d), "scaling_x": float(d / 4.0), "design": "linear", "workload": label} for d in n]
    return rows


def _penalty_rows() -> list[dict[str, Any]]:
    m = _model()
    n = np.asarray(DEVICES[1:], dtype=float)
    rows = []
    for ha in ("single", "distributed"):
        out = m.run({"design": "vanilla", "ha": ha, "n_devices": n})["miss_vs_local_x"]
        rows += [{"devices": int(d), "miss_vs_local_x": float(v), "ha": ha} for d, v in zip(n, out)]
    return rows


def figures() -> list[tuple[str, Any]]:
    import altair as alt

    out: list[tuple[str, Any]] = []
    fig6 = alt.Chart(alt.Data(values=_fig6_rows())).mark_bar().encode(
        x=alt.X("workload:N", title=None, sort=None),
        y=alt.Y("speedup_x:Q", title="speedup over vanilla (x)"),
        color=alt.Color("source:N"),
        xOffset="source:N",
        column=alt.Column("scheme:N", title=None),
        row=alt.Row("ha:N", title="home agents"),
        tooltip=["ha:N", "scheme:N", "workload:N", "source:N", "speedup_x:Q"],
    )
    out.append(("Fig. 6: speedup of each FS² scheme per workload, 64 devices (paper: averages stated in the text)", fig6))
    hits = alt.Chart(alt.Data(values=_hit_rows())).encode(
        x=alt.X("devices:Q", scale=alt.Scale(type="log", base=2), title="devices"),
        y=alt.Y("hit_pct:Q", title="device cache hit ratio (%)"),
        color=alt.Color("workload:N"),
    )
    out.append((
        "Fig. 1b: vanilla device-cache hit ratio against device count (points: the article's YCSB-d, fitted)",
        hits.transform_filter("datum.source == 'model'").mark_line(point=True) + hits.transform_filter("datum.source == 'paper'").mark_point(size=120, shape="diamond", filled=True),
    ))
    out.append((
        "Fig. 7: throughput normalized to 4 devices, single HA (paper: FS² near linear for DLRM inference and YCSB-b)",
        alt.Chart(alt.Data(values=_scaling_rows())).mark_line(point=True).encode(
            x=alt.X("devices:Q", scale=alt.Scale(type="log", base=2)), y=alt.Y("scaling_x:Q", title="throughput / 4 devices"),
            color=alt.Color("design:N"), column=alt.Column("workload:N", title=None),
        ),
    ))
    out.append((
        "Fig. 1c: vanilla miss latency over a local access against device count (paper: ~14x at 64 devices, fitted)",
        alt.Chart(alt.Data(values=_penalty_rows())).mark_line(point=True).encode(
            x=alt.X("devices:Q", scale=alt.Scale(type="log", base=2)), y=alt.Y("miss_vs_local_x:Q", title="miss / local (x)"),
            color=alt.Color("ha:N"),
        ),
    ))
    return out
