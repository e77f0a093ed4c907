"""Dashboard figures of the cxl-gpu model against the article's figures (Fig 9a-9d of the
FULL version; values the article states are in ``paper_values.csv``)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np

from models.cxl_gpu import workloads as wl

HERE = Path(__file__).resolve().parent
DESIGN_LABELS = {"cxl": "CXL", "cxl_naive": "CXL-NAIVE", "cxl_dyn": "CXL-DYN", "cxl_sr": "CXL-SR", "cxl_ds": "CXL-DS",
                 "uvm": "UVM", "gds": "GDS", "gpu_dram": "GPU-DRAM"}
PATTERN_WORKLOADS = {"seq": ["vadd", "saxpy"], "around": ["sort", "gauss"], "rand": ["path", "bfs"]}
WRITE_THROUGH = "model, write-through stores"


def paper_values() -> list[dict[str, Any]]:
    with open(HERE / "paper_values.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    for r in rows:
        r["value"] = float(r["value"])
    return rows


def _run(design: str, media: str, names: list[str], **kw: Any) -> np.ndarray:
    from dse import registry

    return registry.get("cxl-gpu").run({"design": design, "media": media, "workload": names, **kw})


def _paper(fig: str) -> list[dict[str, Any]]:
    return [{"group": r["group"], "series": r["series"], "value": r["value"], "source": "paper"}
            for r in paper_values() if r["figure"] == fig]


def figures() -> list[tuple[str, Any]]:
    import altair as alt

    names = list(wl.NAMES)
    out: list[tuple[str, Any]] = []

    # --- per-workload slowdown over GPU-DRAM, every variant, DRAM and Z-NAND endpoints
    recs = []
    for media in ("dram", "znand"):
        for design in ("uvm", "gds", "cxl", "cxl_naive", "cxl_dyn", "cxl_sr", "cxl_ds"):
            if (design == "gds" and media == "dram") or (design == "uvm" and media != "dram"):
                continue  # GDS needs storage; UVM is host DRAM whatever the endpoint
            s = _run(design, media, names)["slowdown_x"]
            recs += [{"workload": n, "design": DESIGN_LABELS[design], "media": media, "slowdown": float(v)}
                     for n, v in zip(names, s)]
    chart = alt.Chart(alt.Data(values=recs)).mark_bar().encode(
        x=alt.X("workload:N", sort=names, title=None),
        xOffset=alt.XOffset("design:N"),
        y=alt.Y("slowdown:Q", scale=alt.Scale(type="log"), title="slowdown over GPU-DRAM (model, log)"),
        y2=alt.datum(1.0),  # bars start at GPU-DRAM speed (a log axis has no zero)
        color=alt.Color("design:N"),
        tooltip=["workload:N", "design:N", "media:N", alt.Tooltip("slowdown:Q", format=".3g")],
    ).properties(width=520, height=220).facet(row=alt.Row("media:N", title="endpoint medium"))
    out.append(("Workloads x variants: slowdown over GPU-DRAM (model; Fig 9a/9b layout)", chart))

    # --- Fig 9a: CXL (DRAM) slowdown by class, and UVM
    recs = _paper("9a")
    for cat in ("compute", "load", "store"):
        s = _run("cxl", "dram", wl.in_category(cat))["slowdown_x"]
        recs.append({"group": cat, "series": "CXL (DRAM)", "value": float(np.mean(s - 1) * 100), "source": "model"})
    out.append(("Fig 9a: CXL (DRAM endpoint) slowdown by workload class, % (model vs paper)", _bars(alt, recs, "% slowdown")))

    # --- Fig 9b: SR over CXL and DS over SR (Z-NAND)
    recs = _paper("9b") + _paper("9b-ds")
    for label, wls in (("all", names), ("vadd+saxpy", ["vadd", "saxpy"])):
        g = _run("cxl", "znand", wls)["slowdown_x"] / _run("cxl_sr", "znand", wls)["slowdown_x"]
        recs.append({"group": label, "series": "CXL-SR over CXL", "value": float(np.mean(g)), "source": "model"})
    # DS: the default (87.5% fewer off-chip stores for compute kernels) and the write-through
    # reading of the compute kernels' stores, which brackets the paper's compute class
    for source, scale in (("model", None), (WRITE_THROUGH, 1.0)):
        kw = {} if scale is None else {"compute_store_scale": scale}
        for cat in ("compute", "load", "store"):
            wls = wl.in_category(cat)
            g = _run("cxl_sr", "znand", wls, **kw)["slowdown_x"] / _run("cxl_ds", "znand", wls, **kw)["slowdown_x"]
            recs.append({"group": cat, "series": "CXL-DS over CXL-SR", "value": float(np.mean(g - 1) * 100),
                         "source": source})
    sr = [r for r in recs if r["series"] == "CXL-SR over CXL"]
    ds = [r for r in recs if r["series"] == "CXL-DS over CXL-SR"]
    out.append(("Fig 9b: CXL-SR over CXL on Z-NAND, x (model vs paper)", _bars(alt, sr, "x")))
    out.append(("Fig 9b: CXL-DS over CXL-SR on Z-NAND by class, % (model, model with write-through stores, paper)",
                _bars(alt, ds, "%", domain=["model", WRITE_THROUGH, "paper"])))

    # --- Fig 9c: SR gain by medium on vadd, path, bfs
    recs = _paper("9c")
    for media in ("optane", "znand", "nand"):
        wls = ["vadd", "path", "bfs"]
        g = _run("cxl", media, wls)["slowdown_x"] / _run("cxl_sr", media, wls)["slowdown_x"]
        recs.append({"group": media, "series": "CXL-SR over CXL", "value": float(np.mean(g)), "source": "model"})
    out.append(("Fig 9c: CXL-SR over CXL by medium, mean of vadd/path/bfs, x (model vs paper)", _bars(alt, recs, "x")))

    # --- Fig 9d: internal-DRAM hit rate by pattern and SR policy (Z-NAND)
    recs = [dict(r, series=f"{r['series']} ({r['group']})") for r in _paper("9d")]
    for design in ("cxl", "cxl_naive", "cxl_dyn", "cxl_sr"):
        for pat, wls in PATTERN_WORKLOADS.items():
            h = _run(design, "znand", wls)["idram_hit_frac"]
            recs.append({"group": pat, "series": f"{DESIGN_LABELS[design]} ({pat})", "value": float(np.mean(h) * 100),
                         "source": "model"})
    chart = alt.Chart(alt.Data(values=recs)).mark_bar().encode(
        x=alt.X("series:N", title=None, sort=[f"{DESIGN_LABELS[d]} ({p})" for p in PATTERN_WORKLOADS
                                              for d in ("cxl", "cxl_naive", "cxl_dyn", "cxl_sr")]),
        xOffset=alt.XOffset("source:N"),
        y=alt.Y("value:Q", title="internal-DRAM hit rate, %"),
        color=alt.Color("source:N"),
        tooltip=["series:N", "source:N", alt.Tooltip("value:Q", format=".3g")],
    ).properties(width=520, height=220)
    out.append(("Fig 9d: internal-DRAM hit rate by SR policy and pattern, % (model vs paper; CXL-SR Seq/Rand not stated)", chart))
    return out


def _bars(alt: Any, recs: list[dict[str, Any]], unit: str, domain: list[str] | None = None) -> Any:
    return alt.Chart(alt.Data(values=recs)).mark_bar().encode(
        x=alt.X("group:N", title=None),
        xOffset=alt.XOffset("source:N"),
        y=alt.Y("value:Q", title=unit),
        color=alt.Color("source:N", scale=alt.Scale(domain=domain or ["model", "paper"])),
        tooltip=["group:N", "series:N", "source:N", alt.Tooltip("value:Q", format=".3g")],
    ).properties(width=320, height=200)
