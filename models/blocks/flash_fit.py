"""Calibration of the flash block against MQSim runs.

* :func:`load_reference(path)` -- runs.csv (or a folder of raw MQSim output XML) with each
  row's SSD config XML (``ssdconfig_file`` relative to the CSV's folder, else the shipped
  ``results/reference/mqsim/``).
* :func:`predict(df, consts)` -- model mean latency (us) and throughput (IOPS) per row.
* :func:`fit(df, train)` -- scipy least squares of the shared constants.
* :func:`check_reference(path)` -- per-group errors; last line ``MAPE=<x>% N=<runs>``.
* :func:`curves(path=None)` -- tidy polars frame of latency against IOPS per SSD config and
  workload, reference and model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from models.blocks import flash

RULE = (
    "flash rows counted: complete == true, not open-loop rows at or above the closed-loop "
    "maximum (rate_fraction_of_closed_loop_max >= 1.0, i.e. transient overload), and no GC "
    "activity (gc_executions == 0: MQSim's GC write stalls, README caveat 5, are a simulator "
    "artefact); metric: avg_latency_us (mean over all requests), model closed loop by MVA at "
    "the row's queue depth, open loop at its offered_iops."
)
SAT_RULE = ("saturation IOPS per workload group (config, state, pattern, size, read fraction): "
            "reference = max achieved_iops over complete rows without GC, model = predicted throughput at that row")
FIT_KEYS = ("t_fixed_us", "t_cmd_us", "k_open", "map_xfer_b", "k_die", "k_hold")
SMALL_KEYS = ("t_fixed_us", "k_open")  # refitted alone when few runs are given
BOUNDS = {"t_fixed_us": (0.0, 20.0), "t_cmd_us": (0.1, 1.0), "k_open": (0.2, 3.0), "map_xfer_b": (8.0, 16384.0),
          "k_die": (0.5, 1.5), "k_hold": (0.0, 2.0)}
HOLDOUT_CONFIGS = ("mqsim_default",)
HOLDOUT_EVERY = 5
GROUP = ["config", "device_state", "pattern", "request_size_B", "read_fraction"]


def shipped_dir() -> Path:
    from dse.registry import project_root

    return project_root() / "results" / "reference" / "mqsim"


def _resolve(name: str, csv_dir: Path | None) -> Path:
    from dse.errors import DseError

    p = Path(name)
    if p.is_absolute() and p.is_file():
        return p
    for base in ([csv_dir] if csv_dir else []) + [shipped_dir()]:
        for cand in (base / name, base / "configs" / Path(name).name):
            if cand.is_file():
                return cand
    raise DseError(f"MQSim SSD config {name!r} not found next to the CSV or in {shipped_dir()}")


def load_reference(path=None):
    import polars as pl

    from models.blocks import mqsim_io as io

    p = Path(path) if path is not None else shipped_dir() / "runs.csv"
    if p.is_dir():
        if (p / "runs.csv").is_file():
            p = p / "runs.csv"
        else:
            df = io.read_raw_folder(p)
            return _prep(df, p)
    return _prep(io.read_runs_csv(p), p.parent)


def _prep(df, base: Path):
    import polars as pl

    files = df["ssdconfig_file"].to_list()
    df = df.with_columns(pl.Series("cfg_path", [str(_resolve(f, base)) for f in files]))
    for col, default in (("gc_executions", 0), ("complete", True), ("rate_fraction_of_closed_loop_max", None)):
        if col not in df.columns:
            df = df.with_columns(pl.lit(default).alias(col))
    return df


def with_rule(df):
    import polars as pl

    comp = pl.col("complete").cast(pl.Utf8).str.to_lowercase().is_in(["true", "1"])
    over = (pl.col("mode") == "open_loop_poisson") & (
        pl.col("rate_fraction_of_closed_loop_max").cast(pl.Float64).fill_null(0.0) >= 0.999)
    gc = pl.col("gc_executions").cast(pl.Float64).fill_null(0.0) > 0
    return df.with_columns((comp & ~over & ~gc & pl.col("avg_latency_us").is_not_null()).alias("counted"),
                           comp.alias("is_complete"))


def predict(df, consts=None) -> dict[str, np.ndarray]:
    """Model latency (us) and achieved IOPS for each row."""
    from models.blocks import mqsim_io as io

    k = flash.constants(consts) if consts is not None else flash.constants()
    lat = np.full(df.height, np.nan)
    iops = np.full(df.height, np.nan)
    cfgp = df["cfg_path"].to_numpy()
    cache: dict[str, Any] = {}
    for path in np.unique(cfgp):
        idx = np.nonzero(cfgp == path)[0]
        if path not in cache:
            cache[path] = io.read_ssd_config(path)
        cfg = cache[path]
        sub = df[idx]
        size = sub["request_size_B"].cast(float).to_numpy()
        rf = sub["read_fraction"].cast(float).to_numpy()
        seq = (sub["pattern"] == "sequential").to_numpy()
        closed = (sub["mode"] == "closed_loop_qd").to_numpy()
        qd = sub["qd_or_rate"].cast(float).to_numpy()
        a = flash._cfg_arrays(cfg)
        l_c, x_c = np.full(len(idx), np.nan), np.full(len(idx), np.nan)
        if closed.any():
            x, l = flash.closed_loop(a, qd[closed], size[closed], rf[closed], seq[closed], cal=k)
            l_c[closed], x_c[closed] = l, x
        if (~closed).any():
            o = ~closed
            l = flash.open_loop_latency_us(a, qd[o], size[o], rf[o], seq[o], cal=k)
            bound = flash.saturation_iops(a, size[o], rf[o], seq[o], cal=k)
            l_c[o] = l
            x_c[o] = np.minimum(qd[o], bound)
        lat[idx], iops[idx] = l_c, x_c
    return {"latency_us": lat, "iops": iops}


def _split(df, holdout=HOLDOUT_CONFIGS, every=HOLDOUT_EVERY) -> np.ndarray:
    cfg = df["config"].to_numpy()
    idx = np.arange(df.height)
    train = ~np.isin(cfg, list(holdout))
    if every:
        train &= (idx % every) != 2
    return train


def _sat_rows(df, mask=None):
    """Index of the max-achieved complete row of every group (within ``mask``)."""
    import polars as pl

    d = df.with_row_index("_i").filter(
        pl.col("is_complete") & (pl.col("gc_executions").cast(pl.Float64).fill_null(0.0) == 0))
    if mask is not None:
        d = d.filter(pl.Series(mask)[d["_i"]])
    best = d.sort("achieved_iops", descending=True).unique(subset=GROUP, keep="first")
    return best["_i"].to_numpy()


def summarize(df, consts, mask=None) -> dict[str, Any]:
    pred = predict(df, consts)
    ref = df["avg_latency_us"].cast(float).to_numpy()
    m = df["counted"].to_numpy() & (mask if mask is not None else True)
    ape = np.abs(pred["latency_us"] - ref) / ref
    ape = np.where(np.isfinite(ape), ape, 10.0)
    si = _sat_rows(df, mask)
    se = np.abs(pred["iops"][si] / df["achieved_iops"].cast(float).to_numpy()[si] - 1.0) * 100
    return {"mape_pct": float(np.mean(ape[m]) * 100) if m.any() else float("nan"), "n": int(m.sum()),
            "sat_max_err_pct": float(np.max(se)) if se.size else float("nan"),
            "sat_mean_err_pct": float(np.mean(se)) if se.size else float("nan"), "sat_groups": int(se.size)}


def fit(df, train=None, x0=None, keys=FIT_KEYS):
    from scipy.optimize import least_squares

    k0 = dict(flash.DEFAULT_CONSTANTS)
    if x0:
        k0.update(x0)
    train = train if train is not None else np.ones(df.height, bool)
    m = df["counted"].to_numpy() & train
    if int(m.sum()) < 3 * len(keys):
        # too few runs to identify every constant: refit only the scale constants,
        # starting from the calibration in force
        keys = SMALL_KEYS
        k0 = flash.constants()
        if x0:
            k0.update(x0)
    sub = df.filter(m)
    ref = sub["avg_latency_us"].cast(float).to_numpy()
    si = _sat_rows(df, train)
    sat_df = df[si]
    sat_ref = sat_df["achieved_iops"].cast(float).to_numpy()
    lo = np.array([BOUNDS[k][0] for k in keys])
    hi = np.array([BOUNDS[k][1] for k in keys])
    x_init = np.clip(np.array([k0.get(k, 1.0) for k in keys]), lo + 1e-9, hi - 1e-9)

    def resid(x):
        c = dict(k0)
        c.update(dict(zip(keys, x)))
        p = predict(sub, c)["latency_us"]
        r1 = np.log(np.where(np.isfinite(p), p, ref * 20) / ref)
        ps = predict(sat_df, c)["iops"]
        r2 = 2.0 * np.log(ps / sat_ref)
        return np.concatenate([r1, r2])

    res = least_squares(resid, x_init, bounds=(lo, hi), method="trf", x_scale="jac", max_nfev=200)
    out = dict(k0)
    out.update({k: float(v) for k, v in zip(keys, res.x)})
    return out


def calibrate(path=None) -> dict[str, Any]:
    df = with_rule(load_reference(path))
    train = _split(df)
    consts = fit(df, train)
    held_cfg = np.isin(df["config"].to_numpy(), list(HOLDOUT_CONFIGS))
    held_pts = ~train & ~held_cfg
    doc = {
        "block": "flash",
        "reference": str(path) if path else "results/reference/mqsim/runs.csv",
        "target": "avg_latency_us (mean device response time over all requests)",
        "rule": RULE,
        "sat_rule": SAT_RULE,
        "fitted_on": (f"counted rows except configs {list(HOLDOUT_CONFIGS)} and every {HOLDOUT_EVERY}th row "
                      f"(row index % {HOLDOUT_EVERY} == 2) of the CSV order"),
        "held_out": {"configs": list(HOLDOUT_CONFIGS), "load_points": f"row index % {HOLDOUT_EVERY} == 2"},
        "constants": consts,
        "error": {
            "train": summarize(df, consts, train),
            "heldout_points": summarize(df, consts, held_pts),
            "heldout_configs": summarize(df, consts, held_cfg),
            "all": summarize(df, consts, None),
        },
    }
    full = fit(df, np.ones(df.height, bool), x0=consts)
    doc["constants_split_fit"] = consts
    doc["constants"] = full
    doc["error"]["all_full_fit"] = summarize(df, full, None)
    return doc


def check_reference(path, echo: Callable[[str], None] = print, consts=None) -> dict[str, Any]:
    import polars as pl

    df = with_rule(load_reference(path))
    pred = predict(df, consts)
    ref = df["avg_latency_us"].cast(float).to_numpy()
    ape = np.abs(pred["latency_us"] - ref) / ref * 100
    ape = np.where(np.isfinite(ape), ape, 1000.0)
    df = df.with_columns(pl.Series("model_latency_us", pred["latency_us"]), pl.Series("model_iops", pred["iops"]),
                         pl.Series("ape_pct", ape))
    echo(f"rule: {RULE}")
    echo(f"{'group':<52} {'n':>4} {'MAPE%':>7} {'sat_ref':>10} {'sat_mod':>10} {'sat_err%':>8}")
    si = _sat_rows(df)
    sat = df[si].select(GROUP + ["achieved_iops", "model_iops"])
    g = df.group_by(GROUP, maintain_order=True).agg(
        pl.col("counted").sum().alias("n"), pl.col("ape_pct").filter(pl.col("counted")).mean().alias("mape"))
    g = g.join(sat, on=GROUP, how="left").sort(GROUP)
    errs = []
    for r in g.iter_rows(named=True):
        label = f"{r['config']} {r['device_state']} {r['pattern']} {r['request_size_B']}B rf={r['read_fraction']}"
        mape = f"{r['mape']:7.2f}" if r["mape"] is not None else "      -"
        se = ""
        if r["achieved_iops"] is not None and r["model_iops"] is not None and np.isfinite(r["model_iops"]):
            v = (r["model_iops"] / r["achieved_iops"] - 1) * 100
            errs.append(abs(v))
            se = f"{v:+8.1f}"
        ra = f"{r['achieved_iops']:10.0f}" if r["achieved_iops"] is not None else "         -"
        rm = f"{r['model_iops']:10.0f}" if r["model_iops"] is not None else "         -"
        echo(f"{label:<52} {r['n']:>4} {mape} {ra} {rm} {se:>8}")
    m = df["counted"].to_numpy()
    n = int(m.sum())
    mape = float(np.mean(ape[m])) if n else 0.0
    if errs:
        echo(f"saturation IOPS: mean |err| {np.mean(errs):.2f}%, max {np.max(errs):.2f}% over {len(errs)} groups "
             f"({SAT_RULE})")
    echo(f"MAPE={mape:.2f}% N={n}")
    return {"mape_pct": mape, "n": n, "sat_errs_pct": errs, "frame": df}


def curves(path=None, consts=None):
    """Tidy frame: reference rows and model predictions (at the same load points) of
    latency_us against iops per config / state / pattern / size / read fraction / mode."""
    import polars as pl

    df = with_rule(load_reference(path))
    pred = predict(df, consts)
    keep = GROUP + ["mode", "qd_or_rate"]
    ref = df.select(keep + [pl.col("achieved_iops").cast(pl.Float64).alias("iops"),
                            pl.col("avg_latency_us").cast(pl.Float64).alias("latency_us"), "counted"]
                    ).with_columns(pl.lit("reference").alias("source"))
    mod = df.select(keep + ["counted"]).with_columns(
        pl.Series("iops", pred["iops"]), pl.Series("latency_us", pred["latency_us"]), pl.lit("model").alias("source"))
    return pl.concat([ref, mod.select(ref.columns)], how="vertical_relaxed")
