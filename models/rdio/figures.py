"""rdio against the article's figures (nvmeof-objstore.md): Fig. 3(a)(b) (PUT/GET
throughput against object size, MinIO vs MinRdIO vs MinRdIO-FMC), Fig. 4 (YCSB
throughput against client threads), Fig. 5(a) (PUT throughput with vanilla and deferred
parity against the erasure code), Fig. 5(b) (GET throughput with a failed node against the
FileMap cache ratio), and the article's numbers next to the model's
(``paper_values.csv``; the article gives its curves only as figures)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np

SIZES_KB = [4, 16, 64, 256, 1024, 4096, 16384, 65536]
THREADS = [16, 32, 64, 128, 256]
LABEL = {"minio": "MinIO", "minrdio": "MinRdIO", "minrdio_fmc": "MinRdIO-FMC", "optimal": "Optimal"}
YCSB = {"object_kb": 100.0, "dataset_gb": 80.0}
YCSB_LABEL = {"ycsb_load": "YCSB Load", "ycsb_a": "YCSB A", "ycsb_c": "YCSB C"}


def _model() -> Any:
    from dse import registry

    return registry.get("rdio")


def _size_rows() -> list[dict[str, Any]]:
    m = _model()
    rows = []
    for op in ("get", "put"):
        for system in ("minio", "minrdio", "minrdio_fmc"):
            out = m.run({"system": system, "workload": op, "object_kb": np.asarray(SIZES_KB, dtype=float)})
            for i, kb in enumerate(SIZES_KB):
                rows.append({"op": op.upper(), "system": LABEL[system], "object_kb": kb,
                             "throughput_gbps": float(out["throughput_gbps"][i])})
    return rows


def _ycsb_rows() -> list[dict[str, Any]]:
    m = _model()
    rows = []
    for wl in ("ycsb_load", "ycsb_a", "ycsb_c"):
        for system in ("minio", "minrdio", "optimal"):
            if system == "optimal" and wl != "ycsb_c":
                continue
            out = m.run({"system": system, "workload": wl, "threads": np.asarray(THREADS, dtype=float), **YCSB})
            for i, t in enumerate(THREADS):
                rows.append({"workload": YCSB_LABEL[wl],
                             "system": LABEL[system], "threads": t, "throughput_kiops": float(out["throughput_kiops"][i])})
    return rows


def _deferred_rows() -> list[dict[str, Any]]:
    m = _model()
    parity = np.asarray([2.0, 3.0, 4.0])
    rows = []
    for mode in ("vanilla", "deferred"):
        out = m.run({"system": "minrdio", "workload": "put", "object_kb": 4096.0, "parity_count": parity, "parity_mode": mode})
        for i, r in enumerate(parity):
            rows.append({"code": f"({8 - int(r)}, {int(r)})", "parity": mode.capitalize(),
                         "throughput_gbps": float(out["throughput_gbps"][i])})
    return rows


def _failure_rows() -> list[dict[str, Any]]:
    m = _model()
    ratios = np.linspace(0.0, 1.0, 11)
    normal = m.point(system="minio", object_kb=4096.0)["throughput_kiops"]
    rows = []
    for system, failed in (("minio", 0), ("minio", 1), ("minrdio", 1)):
        out = m.run({"system": system, "object_kb": 4096.0, "failed_nodes": failed, "cache_ratio_frac": ratios})
        for i, r in enumerate(ratios):
            rows.append({"series": f"{LABEL[system]} {'Failure' if failed else 'Normal'}", "cache_ratio": float(r),
                         "vs_minio_normal": float(out["throughput_kiops"][i] / normal)})
    return rows


def _model_vs_paper() -> list[dict[str, Any]]:
    from dse.claims import evaluate_claims

    results = {r.id: r.value for r in evaluate_claims(Path(__file__).parent / "claims.yaml")}
    with (Path(__file__).parent / "paper_values.csv").open(newline="", encoding="utf-8") as f:
        paper = list(csv.DictReader(f))
    rows = []
    for r in paper:
        cid = r["claim"]
        label = f"{r['quantity']} [{r['scenario']}, {r['unit']}]"
        rows.append({"quantity": label, "source": "paper", "value": float(r["paper_value"])})
        rows.append({"quantity": label, "source": "model", "value": float(results[cid])})
    return rows


def figures() -> list[tuple[str, Any]]:
    import altair as alt

    out: list[tuple[str, Any]] = []
    out.append((
        "Fig. 3(a)(b): throughput against object size, 40 threads (model); paper: GET up to +48%, PUT up to +11%, MinRdIO slightly lower above 16 MB",
        alt.Chart(alt.Data(values=_size_rows())).mark_line(point=True).encode(
            x=alt.X("object_kb:Q", scale=alt.Scale(type="log", base=2), title="object size (KiB)"),
            y=alt.Y("throughput_gbps:Q", title="throughput (GB/s)"),
            color=alt.Color("system:N"), column=alt.Column("op:N"),
        ),
    ))
    out.append((
        "Fig. 4: YCSB throughput against client threads (model, ~100 kB objects); paper at 256 threads: Load 1.29x, A 1.21x, C 1.66x",
        alt.Chart(alt.Data(values=_ycsb_rows())).mark_line(point=True).encode(
            x=alt.X("threads:Q", scale=alt.Scale(type="log", base=2), title="client threads"),
            y=alt.Y("throughput_kiops:Q", title="thousand requests/s"),
            color=alt.Color("system:N"), column=alt.Column("workload:N"),
        ),
    ))
    out.append((
        "Fig. 5(a): MinRdIO PUT throughput with vanilla and deferred parity against the erasure code (k, r), 4 MB, 40 threads (model); paper: Deferred up to +20%, throughput slightly lower as r grows",
        alt.Chart(alt.Data(values=_deferred_rows())).mark_bar().encode(
            x=alt.X("parity:N", title=None), y=alt.Y("throughput_gbps:Q", title="PUT throughput (GB/s)"),
            color=alt.Color("parity:N"), column=alt.Column("code:N", title="(k, r)"),
        ),
    ))
    out.append((
        "Fig. 5(b): GET throughput with a failed node against the FileMap cache ratio, relative to MinIO Normal (model, 4 MB); paper: MinIO -7%, MinRdIO up to 1.27x",
        alt.Chart(alt.Data(values=_failure_rows())).mark_line(point=True).encode(
            x=alt.X("cache_ratio:Q", title="FileMap cache entries / objects"),
            y=alt.Y("vs_minio_normal:Q", title="throughput / MinIO Normal"),
            color=alt.Color("series:N"),
        ),
    ))
    out.append((
        "The article's numbers against the model",
        alt.Chart(alt.Data(values=_model_vs_paper())).mark_bar().encode(
            y=alt.Y("source:N", title=None), x=alt.X("value:Q", title="value"), color=alt.Color("source:N"),
            row=alt.Row("quantity:N", header=alt.Header(labelAngle=0, labelAlign="left")),
        ).resolve_scale(x="independent"),
    ))
    return out
