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
FIT_KEYS = ("k_mp", "k_mp_w")
SMALL_KEYS = ("k_mp",)  # refitted alone when few runs are given
BOUNDS = {"k_ch": (0.2, 6.0), "k_q": (0.5, 1.5), "k_mp": (0.0, 50.0), "k_mp_w": (0.0, 50.0), "k_fj": (0.0, 1.0),
          "k_seqmap": (0.5, 5.0)}
#: Held out of the shipped split fit: one whole SSD configuration (its CMT makes it the
#: one least like the others, and it is the only one with 2 dies per chip and 333 MB/s
#: channels), plus every 5th row of the CSV.
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
    """Model latency (us) and achieved IOPS for each row: closed-loop rows at their queue
    depth, open-loop rows at their offered rate (achieved = the smaller of offered and
    the sustained throughput)."""
    from models.blocks import mqsim_io as io

    k = flash.constants(consts) if consts is not None else flash.constants()
    lat = np.full(df.height, np.nan)
    iops = np.full(df.height, np.nan)
    cfgp = df["cfg_path"].to_numpy()
    for path in np.unique(cfgp):
        idx = np.nonzero(cfgp == path)[0]
        a = flash.config_arrays(io.read_ssd_config(path))
        sub = df[idx]
        size = sub["request_size_B"].cast(float).to_numpy()
        rf = sub["read_fraction"].cast(float).to_numpy()
        seq = (sub["pattern"] == "sequential").to_numpy()
        closed = (sub["mode"] == "closed_loop_qd").to_numpy()
        q = sub["qd_or_rate"].cast(float).to_numpy()
        l_c, x_c = np.full(len(idx), np.nan), np.full(len(idx), np.nan)
        if closed.any():
            x, l = flash.closed_loop(a, q[closed], size[closed], rf[closed], seq[closed], cal=k)
            l_c[closed], x_c[closed] = l, x
        if (~closed).any():
            o = ~closed
            bound = flash.saturation_iops(a, size[o], rf[o], seq[o], cal=k)
            l = flash.open_loop_latency_us(a, q[o], size[o], rf[o], seq[o], cal=k)
            l_c[o] = np.where(q[o] < bound, l, np.inf)
            x_c[o] = np.minimum(q[o], bound)
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


#: The least-squares loss of the fit (and of its standard errors).
LOSS, F_SCALE = "soft_l1", 0.1


def fit(df, train=None, x0=None, keys=FIT_KEYS):
    """Least squares of the shared constants on the counted training rows (log latency)
    and the saturation rows (log IOPS, weight 2); every configuration weighs the same, and
    a soft-L1 loss keeps single outliers from steering the fit."""
    from models.blocks import fit_harness

    resid, x_init, lo, hi, k0, keys = residuals(df, train, x0, keys)
    return fit_harness.least_squares_fit(resid, x_init, lo, hi, k0, keys, max_nfev=200, loss=LOSS, f_scale=F_SCALE)


def residuals(df, train=None, x0=None, keys=FIT_KEYS):
    """The fit's residual function of the constants ``keys``, its start, bounds, the full
    constant set it starts from and the keys (fewer when the runs are too few)."""
    from models.blocks import fit_harness

    k0 = dict(flash.DEFAULT_CONSTANTS)
    if x0:
        k0.update(x0)
    train = train if train is not None else np.ones(df.height, bool)
    m = df["counted"].to_numpy() & train
    if fit_harness.too_few(int(m.sum()), keys):
        # too few runs to identify every constant: refit only the scale constants,
        # starting from the calibration in force
        keys = SMALL_KEYS
        k0 = flash.constants()
        if x0:
            k0.update(x0)
    sub = df.filter(m)
    ref = sub["avg_latency_us"].cast(float).to_numpy()
    cfg = sub["config"].to_numpy()
    w1 = np.array([1.0 / np.sqrt(np.sum(cfg == c)) for c in cfg])
    si = _sat_rows(df, train)
    sat_df = df[si]
    sat_ref = sat_df["achieved_iops"].cast(float).to_numpy()
    scfg = sat_df["config"].to_numpy()
    w2 = np.array([2.0 / np.sqrt(np.sum(scfg == c)) for c in scfg])
    lo = np.array([BOUNDS[k][0] for k in keys])
    hi = np.array([BOUNDS[k][1] for k in keys])
    x_init = np.clip(np.array([k0.get(k, 1.0) for k in keys]), lo + 1e-9, hi - 1e-9)

    def resid(x):
        c = dict(k0)
        c.update(dict(zip(keys, x)))
        p = predict(sub, c)["latency_us"]
        r1 = w1 * np.log(np.where(np.isfinite(p), p, ref * 20) / ref)
        ps = predict(sat_df, c)["iops"]
        r2 = w2 * np.log(ps / sat_ref)
        return np.concatenate([r1, r2])

    return resid, x_init, lo, hi, k0, tuple(keys)


def uncertainty(df, consts, keys=FIT_KEYS) -> dict[str, Any]:
    """The ``[uncertainty]`` table of constants ``consts`` fitted on all rows of ``df``:
    Jacobian standard errors (:mod:`models.blocks.fit_harness`)."""
    from models.blocks import fit_harness

    resid, _, lo, hi, _, keys = residuals(df, None, consts, keys)
    x = np.array([consts[k] for k in keys])
    sd = fit_harness.jacobian_sd(resid, x, LOSS, F_SCALE, lo, hi)
    return fit_harness.uncertainty_table(keys, x, sd, int(resid(x).size), lo, hi)


def leave_one_out(df) -> dict[str, dict[str, Any]]:
    """Fit on every configuration but one (all its rows held out), for each one in turn;
    returns the held-out configuration's errors and the constants."""
    out = {}
    cfg = df["config"].to_numpy()
    for c in sorted(set(cfg)):
        train = cfg != c
        if not train.any():
            continue
        consts = fit(df, train)
        out[c] = {"heldout": summarize(df, consts, cfg == c), "train": summarize(df, consts, train),
                  "constants": consts}
    return out


def calibrate(path=None, add: bool = False) -> dict[str, Any]:
    """Fit on the shipped split of ``path`` (with ``add``: of the shipped runs and
    ``path``'s together) and return the calibration document."""
    from models.blocks import fit_harness

    runs, named = fit_harness.reference_runs(load_reference, path, add)
    df = with_rule(runs)
    train = _split(df)
    consts = fit(df, train)
    held_cfg = np.isin(df["config"].to_numpy(), list(HOLDOUT_CONFIGS))
    held_pts = ~train & ~held_cfg
    doc = {
        "block": "flash",
        "reference": named or "results/reference/mqsim/runs.csv",
        "target": "avg_latency_us (mean device response time over all requests)",
        "rule": RULE,
        "sat_rule": SAT_RULE,
        "fitted_on": (f"counted rows except configs {list(HOLDOUT_CONFIGS)} and every {HOLDOUT_EVERY}th row "
                      f"(row index % {HOLDOUT_EVERY} == 2) of the CSV order"),
        "held_out": {"configs": list(HOLDOUT_CONFIGS), "load_points": f"row index % {HOLDOUT_EVERY} == 2"},
        "constants": consts,
        "error": fit_harness.error_tables(summarize, df, consts, {
            "train": train, "heldout_points": held_pts, "heldout_configs": held_cfg, "all": None}),
    }
    return fit_harness.finish(doc, df, fit, summarize, leave_one_out, FIT_KEYS, consts, uncertainty)


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
