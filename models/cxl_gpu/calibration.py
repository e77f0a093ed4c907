"""Calibration of the CXL-GPU model's fitted constants; ``python -m models.cxl_gpu.calibration``
rewrites ``calibration.toml``.

Each constant is fitted to a stated figure of the article (or a row of Fig 9d); the
claims it was fitted to are anchors, the others predictions.  What is fitted to what:

==================  =================================================================
constant            fitted to
==================  =================================================================
gpu.offchip_frac    CXL (DRAM endpoint) slowdown of the compute-intensive class, 2.3%
gpu.store_ns        CXL (DRAM endpoint) slowdown of the store-intensive class, 6.8%
                    (the two solved together; the load class, 19.7%, is predicted from
                    the compute class through the 87.5% fewer accesses of 003:L226.
                    Leave-one-out, :func:`loo_dram`: fitting load + store predicts
                    compute at -4%, compute + store predicts load at +3%; compute +
                    load predict store at -28%: only the store class sets store_ns)
uvm.faults_per_page UVM 52.7x slower than GPU-DRAM (the number both versions state,
                    003:L224, 000:L3372) at MICRO's 45 us per fault; CXL over UVM
                    (MICRO 50x, FULL 44.2x) and GDS (35.4x) are predicted
ssd.miss_concurrency, ssd.seq_miss_concurrency, gc.interval_gib (solved together):
                    CXL-NAIVE 6.6x slower than GPU-DRAM on the Fig 9d workloads
                    (003:L258), CXL-SR 15.6x over CXL on vadd/saxpy (003:L234) and
                    CXL-DS +62.8% over CXL-SR on store-intensive kernels (003:L238),
                    all on Z-NAND; NAIVE's 1.9x over CXL and SR's 7.4x average are
                    predicted
sr.sigma_*          Fig 9d CXL row: Around 31.2%, Rand 10% (Seq 47.4% is predicted)
sr.lead_*_ns        Fig 9d CXL-NAIVE row: 88.4 / 56 / 32.1%
sr.fwd_*            Fig 9d CXL-DYN row: Around 57.4%, Rand 34% (Seq >99% is predicted)
sr.pollution        Rand hit at the largest SR size, 30.7% (003:L258)
sr.bwd_around       Fig 9d CXL-SR Around, 75.8%
==================  =================================================================

Everything else (the SR gains of Fig 9b/9c, the ablation's speed-ups, DS on the other
classes, GDS, the controller-latency study) falls out.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from models.cxl_gpu import workloads as wl
from models.cxl_gpu.fitted import CAL, CALIBRATION_FILE

#: Fig 9d workloads: Seq (vadd, saxpy), Around (sort, gauss), Rand (path, bfs) (003:L252).
FIG9D = {"seq": ["vadd", "saxpy"], "around": ["sort", "gauss"], "rand": ["path", "bfs"]}
FIG9D_ALL = FIG9D["seq"] + FIG9D["around"] + FIG9D["rand"]
#: Fig 9c workloads (003:L240-244).
FIG9C = ["vadd", "path", "bfs"]

# targets (digest section 4)
T_CLASS_PCT = {"compute": 2.3, "load": 19.7, "store": 6.8}
#: The classes the DRAM-endpoint constants are fitted to (the third is predicted).
DRAM_FIT_CLASSES = ("compute", "store")
T_UVM_VS_GPU = 52.7
T_NAIVE_VS_GPU = 6.6
T_SR_VECTOR = 15.6
T_HIT = {"cxl": {"around": 0.312, "rand": 0.10}, "naive": {"seq": 0.884, "around": 0.56, "rand": 0.321},
         "dyn": {"around": 0.574, "rand": 0.34}, "sr": {"around": 0.758}, "maxg_rand": 0.307}
T_DS_STORE_PCT = 62.8


def _model() -> Any:
    from dse import registry

    return registry.get("cxl-gpu")


def run(design: str, media: str = "dram", workloads: list[str] | None = None, **kw: Any) -> dict[str, np.ndarray]:
    names = list(workloads or wl.NAMES)
    return _model().run({"design": design, "media": media, "workload": names, **kw})


def gmean(x: np.ndarray) -> float:
    return float(np.exp(np.mean(np.log(x))))


def mean(x: np.ndarray) -> float:
    """The paper's averages: arithmetic means of per-workload ratios (Fig 9c's 8.8x only
    closes with vadd 21.5x, path 2.4x and bfs 1.2x that way; digest ambiguity 4)."""
    return float(np.mean(x))


def class_pct(cat: str, design: str = "cxl", media: str = "dram") -> float:
    return float(np.mean(run(design, media, wl.in_category(cat))["slowdown_x"] - 1.0) * 100.0)


def ds_gain_pct(cat: str, media: str = "znand") -> float:
    names = wl.in_category(cat)
    return float(np.mean(run("cxl_sr", media, names)["slowdown_x"] / run("cxl_ds", media, names)["slowdown_x"] - 1.0) * 100)


def hit(design: str, pattern: str, **kw: Any) -> float:
    return float(np.mean(run(design, "znand", FIG9D[pattern], **kw)["idram_hit_frac"]))


def fit_dram(classes: tuple[str, str]) -> None:
    """Solve ``gpu.offchip_frac`` and ``gpu.store_ns`` (in ``CAL``) to the CXL DRAM-endpoint
    slowdowns of two workload classes."""
    from scipy.optimize import least_squares

    def resid(x: np.ndarray) -> list[float]:
        CAL["gpu"]["offchip_frac"], CAL["gpu"]["store_ns"] = float(np.exp(x[0])), float(np.exp(x[1]))
        return [class_pct(c) / T_CLASS_PCT[c] - 1.0 for c in classes]

    least_squares(resid, np.log([CAL["gpu"]["offchip_frac"], CAL["gpu"]["store_ns"]]), xtol=1e-12, ftol=1e-12)


def loo_dram() -> dict[str, float]:
    """Leave-one-out check of the DRAM-endpoint fit: for each class, its slowdown (%) with
    the two constants fitted to the other two classes.  ``CAL`` is restored afterwards."""
    saved = dict(CAL["gpu"])
    out = {}
    try:
        for held in T_CLASS_PCT:
            fit_dram(tuple(c for c in T_CLASS_PCT if c != held))
            out[held] = class_pct(held)
    finally:
        CAL["gpu"].update(saved)
    return out


def _solve1(f: Any, lo: float, hi: float) -> float:
    from scipy.optimize import brentq

    return float(math.exp(brentq(lambda x: f(math.exp(x)), math.log(lo), math.log(hi), xtol=1e-10)))


def fit() -> dict[str, dict[str, float]]:
    """Fit every constant in place (``CAL`` is updated) and return the new sections."""
    from scipy.optimize import least_squares

    # --- DRAM endpoint: off-chip rate and store cost from the compute and store classes
    fit_dram(DRAM_FIT_CLASSES)

    # --- UVM: faults per page from UVM vs GPU-DRAM (both versions: 52.7x; MICRO's 45 us)
    def uvm_slowdown(v: float) -> float:
        CAL["uvm"]["faults_per_page"] = v
        return mean(run("uvm")["slowdown_x"]) - T_UVM_VS_GPU

    CAL["uvm"]["faults_per_page"] = _solve1(uvm_slowdown, 1e-3, 1e4)

    # --- SSD endpoint: Fig 9d hit rates and the NAIVE slowdown, iterated because the
    # DevLoad SR size depends on the speed the others set
    sr = CAL["sr"]
    for _ in range(4):
        inflight = float(np.mean(run("cxl", "znand", FIG9D["seq"])["idram_hit_frac"]))  # = 1 - queue/64
        sr["sigma_around"] = T_HIT["cxl"]["around"] / inflight
        sr["sigma_rand"] = T_HIT["cxl"]["rand"]
        for pat in ("seq", "around", "rand"):
            m_cxl = 1.0 - hit("cxl", pat)
            miss_ns = float(_media_miss_ns("znand"))
            sr[f"lead_{pat}_ns"] = miss_ns * math.log(m_cxl / (1.0 - T_HIT["naive"][pat]))

        def resid_sr(x: np.ndarray) -> list[float]:
            sr["fwd_around"], sr["fwd_rand"], sr["bwd_around"], sr["pollution"] = (float(v) for v in x)
            return [hit("cxl_dyn", "around") - T_HIT["dyn"]["around"], hit("cxl_dyn", "rand") - T_HIT["dyn"]["rand"],
                    hit("cxl_sr", "around") - T_HIT["sr"]["around"],
                    hit("cxl_dyn", "rand", devload=False) - T_HIT["maxg_rand"]]

        x0 = [sr["fwd_around"], sr["fwd_rand"], sr["bwd_around"], sr["pollution"]]
        least_squares(resid_sr, x0, bounds=([0, 0, 0, 0], [1, 1, 1, 20]), xtol=1e-12, ftol=1e-12)

        # miss overlap and GC interval together: the NAIVE ratios and DS on the store class
        def resid_ssd(x: np.ndarray) -> list[float]:
            CAL["ssd"]["seq_miss_concurrency"], CAL["ssd"]["miss_concurrency"], CAL["gc"]["interval_gib"] = (
                float(v) for v in np.exp(x))
            naive = run("cxl_naive", "znand", FIG9D_ALL)["slowdown_x"]
            vec = FIG9D["seq"]
            sr_vec = run("cxl", "znand", vec)["slowdown_x"] / run("cxl_sr", "znand", vec)["slowdown_x"]
            return [mean(naive) / T_NAIVE_VS_GPU - 1.0, mean(sr_vec) / T_SR_VECTOR - 1.0,
                    ds_gain_pct("store") / T_DS_STORE_PCT - 1.0]

        least_squares(resid_ssd, np.log([CAL["ssd"]["seq_miss_concurrency"], CAL["ssd"]["miss_concurrency"],
                                         CAL["gc"]["interval_gib"]]), xtol=1e-12, ftol=1e-12)
    return {k: dict(v) for k, v in CAL.items()}


def _media_miss_ns(medium: str) -> float:
    from models.cxl_gpu import paths

    return float(paths.MEDIA_TABLE["miss_ns"][paths.MEDIA.index(medium)])


_FITTED_TO = {
    "gpu.offchip_frac": "off-chip (LLC-miss) accesses per memory instruction of load/store-intensive kernels; with gpu.store_ns "
                        "solved to the CXL DRAM-endpoint slowdowns of the compute (2.3%) and store (6.8%) classes (003:L226); "
                        "the load class (19.7%) is predicted",
    "gpu.store_ns": "exposed cost of one posted off-chip store, ns; see gpu.offchip_frac",
    "uvm.faults_per_page": "faults per migrated page and pass (refaults of a thrashing working set), each serialized by the "
                           "host runtime; fitted to UVM 52.7x slower than GPU-DRAM (003:L224, 000:L3372) at 45 us per fault; "
                           "CXL over UVM (MICRO 50x, FULL 44.2x) is predicted",
    "ssd.miss_concurrency": "flash misses to scattered pages one SSD endpoint overlaps; solved with ssd.seq_miss_concurrency and "
                            "gc.interval_gib to CXL-NAIVE 6.6x slower than GPU-DRAM (Fig 9d workloads, 003:L258), CXL-SR 15.6x "
                            "over CXL on vadd/saxpy (003:L234) and DS +62.8% on store-intensive kernels (003:L238), Z-NAND",
    "ssd.seq_miss_concurrency": "flash misses of a sequential stream the endpoint overlaps (they fall on one page and die); "
                                "see ssd.miss_concurrency",
    "sr.sigma_around": "Around pages' spatial reuse; fitted to the Fig 9d CXL hit rate 31.2% (003:L256)",
    "sr.sigma_rand": "Rand re-reference hit rate at 1.5 GB internal DRAM; fitted to the Fig 9d CXL hit rate 10% (003:L256)",
    "sr.lead_seq_ns": "lead of a 64 B MemSpecRd over its demand, Seq; fitted to the CXL-NAIVE hit rate 88.4% (003:L256)",
    "sr.lead_around_ns": "the same, Around; fitted to 56% (003:L256)",
    "sr.lead_rand_ns": "the same, Rand; fitted to 32.1% (003:L256)",
    "sr.fwd_around": "share of Around misses within the SR span ahead; fitted to CXL-DYN 57.4% (003:L260)",
    "sr.fwd_rand": "share of Rand misses within the SR span ahead (and behind); fitted to CXL-DYN 34% (003:L258)",
    "sr.bwd_around": "share of Around misses within the window behind; fitted to CXL-SR 75.8% (003:L262)",
    "sr.pollution": "hit loss per unit of wasted SR bytes at 1 KiB; fitted to the Rand hit rate 30.7% at the largest SR (003:L258)",
    "gc.interval_gib": "GiB written between GC pauses; see ssd.miss_concurrency (CXL-DS over CXL-SR = +62.8% on store-intensive kernels)",
}


def write(cal: dict[str, dict[str, float]], path: Path = CALIBRATION_FILE) -> None:
    lines = ["# Fitted constants of the cxl-gpu model.  Written by `python -m models.cxl_gpu.calibration`;",
             "# each value says what it was fitted to (see models/cxl_gpu/calibration.py).", ""]
    for section, values in cal.items():
        lines.append(f"[{section}]")
        for k, v in values.items():
            lines.append(f"# {_FITTED_TO.get(f'{section}.{k}', '')}")
            lines.append(f"{k} = {float(v)!r}")
        lines.append("")
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines), encoding="utf-8")
    tmp.replace(path)


def main() -> None:
    cal = fit()
    write(cal)
    for s, vals in cal.items():
        for k, v in vals.items():
            print(f"{s}.{k} = {v:.6g}")


if __name__ == "__main__":
    main()
