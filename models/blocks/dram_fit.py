"""Calibration of the DRAM block against DRAMsim3 runs.

* :func:`load_reference(path)` -- a runs.csv (or a folder of raw DRAMsim3 JSON) joined with
  the timings of the .ini each row names (found next to the CSV, else in the shipped
  ``results/reference/dramsim3/``).
* :func:`evaluation_mask(df)` -- the rows that count in the MAPE (:data:`RULE`).
* :func:`predict(df, consts)` -- model latency / saturation for every row.
* :func:`fit(df, ...)` -- scipy least squares of the shared constants on the training rows;
  returns the constants and the train / held-out errors.
* :func:`check_reference(path)` -- error per group and overall; the last printed line is
  ``MAPE=<x>% N=<runs>``.
* :func:`curves(path=None)` -- tidy polars frame of reference vs model latency against
  bandwidth per standard / pattern / read fraction (for the dashboard).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from models.blocks import dram

#: Which rows count in the DRAM error figures.
RULE = (
    "DRAM rows counted: saturated == 0 and achieved_GBps < 0.90 x the group's saturation "
    "bandwidth (max achieved_GBps over runs with the same config, pattern and read fraction, "
    "in this file and the shipped reference; groups with no saturated run use all their "
    "unsaturated rows); metric: mean read latency from arrival (e2e_avg_read_latency_ns, "
    "falling back to avg_read_latency_ns), model at the row's offered_GBps."
)
SAT_RULE = "saturation bandwidth: groups with at least one saturated run, reference = max achieved_GBps"

#: Constants fitted to the reference runs.  k_bus, k_act, k_turn and k_win stay at their
#: physical value 1 (M/D/1 column slot, M/D/c activate windows, both turnarounds per
#: drained batch, the controller's own window): the four standards here cannot separate
#: them from the fitted ones (refresh dominates their queues), and a standard whose refresh
#: is short (GDDR6) depends on them.
FIT_KEYS = ("p_smooth", "k_ref", "k_bank", "k_write", "k_rm")
SMALL_KEYS = ("k_ref", "k_bank")  # refitted alone when few runs are given
BOUNDS = {"p_smooth": (2.0, 30.0), "k_ref": (0.2, 3.0), "k_bus": (0.2, 3.0), "k_bank": (0.2, 3.0), "k_act": (0.0, 3.0),
          "k_write": (0.0, 3.0), "k_turn": (0.0, 2.0), "k_rm": (0.0, 1.0), "k_win": (0.3, 1.5)}
TIMING_FIELDS = ("tck_ns", "cl", "cwl", "trcd", "trp", "tras", "trrd_s", "trrd_l", "tfaw", "tccd_s", "tccd_l",
                 "twtr_s", "twtr_l", "trefi", "trfc", "burst_cyc", "ranks", "bankgroups", "banks_per_group",
                 "request_bytes", "lines_per_row", "stream_mode", "channels", "t32aw", "trtrs", "trans_queue", "cmd_queue")

# Held out of the shipped fit: one whole standard, plus every 5th unsaturated load point.
HOLDOUT_STANDARDS = ("HBM2",)
HOLDOUT_EVERY = 5


def shipped_dir() -> Path:
    from dse.registry import project_root

    return project_root() / "results" / "reference" / "dramsim3"


def _resolve_ini(name: str, csv_dir: Path | None) -> Path:
    from dse.errors import DseError

    for base in ([csv_dir] if csv_dir else []) + [shipped_dir()]:
        p = base / name
        if p.is_file():
            return p
    raise DseError(f"DRAMsim3 config {name!r} not found next to the CSV or in {shipped_dir()}")


def load_reference(path: str | Path | None = None):
    """Reference runs with their timings.  ``path``: runs.csv, a folder holding runs.csv,
    or a folder of raw DRAMsim3 JSON stats; ``None``: the shipped copy."""
    from models.blocks import dramsim3_io as io

    p = Path(path) if path is not None else shipped_dir() / "runs.csv"
    if p.is_dir():
        if (p / "runs.csv").is_file():
            p = p / "runs.csv"
        else:
            df = io.read_raw_folder(p)
            return _attach_timings(df, p)
    df = io.read_runs_csv(p)
    return _attach_timings(df, p.parent)


def _attach_timings(df, csv_dir: Path):
    import polars as pl

    from models.blocks import dramsim3_io as io

    cache: dict[str, dict[str, Any]] = {}
    cols: dict[str, list] = {f: [] for f in TIMING_FIELDS}
    for name in df["config_file"].to_list():
        if name not in cache:
            cache[name] = io.read_ini(_resolve_ini(name, csv_dir)).as_arrays()
        for f in TIMING_FIELDS:
            cols[f].append(cache[name][f])
    df = df.with_columns([pl.Series(f"t_{f}", v, dtype=pl.Float64) for f, v in cols.items()])
    # the CSV's own tCK (as DRAMsim3 ran it) wins over the ini text where both exist
    if "tCK_ns" in df.columns:
        df = df.with_columns(pl.coalesce(pl.col("tCK_ns").cast(pl.Float64), pl.col("t_tck_ns")).alias("t_tck_ns"))
    target = "e2e_avg_read_latency_ns" if "e2e_avg_read_latency_ns" in df.columns else "avg_read_latency_ns"
    tgt = pl.col(target).cast(pl.Float64)
    if "avg_read_latency_ns" in df.columns:
        tgt = pl.coalesce(tgt, pl.col("avg_read_latency_ns").cast(pl.Float64))
    df = df.with_columns(tgt.alias("ref_latency_ns"))
    return df


def _group_keys():
    return ["config_file", "pattern", "read_fraction"]


def reference_saturation(df, extra=None):
    """Per-group reference saturation bandwidth (max achieved over the group when the
    group has a saturated run, else null)."""
    import polars as pl

    frames = [df.select(_group_keys() + ["achieved_GBps", "saturated"])]
    if extra is not None:
        frames.append(extra.select(_group_keys() + ["achieved_GBps", "saturated"]))
    allr = pl.concat(frames, how="vertical_relaxed")
    g = allr.group_by(_group_keys()).agg(
        pl.col("achieved_GBps").max().alias("ref_sat_GBps"),
        (pl.col("saturated") == 1).any().alias("has_sat"),
    )
    return g.with_columns(pl.when(pl.col("has_sat")).then(pl.col("ref_sat_GBps")).otherwise(None).alias("ref_sat_GBps"))


def with_rule(df, extra=None):
    """Adds ``ref_sat_GBps`` and the boolean ``counted`` (rows in the MAPE)."""
    import polars as pl

    sat = reference_saturation(df, extra)
    out = df.join(sat.select(_group_keys() + ["ref_sat_GBps"]), on=_group_keys(), how="left")
    counted = (pl.col("saturated") == 0) & pl.col("ref_latency_ns").is_not_null() & (
        pl.col("ref_sat_GBps").is_null() | (pl.col("achieved_GBps") < 0.9 * pl.col("ref_sat_GBps")))
    return out.with_columns(counted.alias("counted"))


def _timing_arrays(df) -> dict[str, np.ndarray]:
    return {f: df[f"t_{f}"].to_numpy() for f in TIMING_FIELDS}


def predict(df, consts: dict[str, float] | None = None, rho_cap: float | None = None) -> dict[str, np.ndarray]:
    """Model latency (ns), saturation (GB/s), utilization and idle latency for each row."""
    k = dram.constants(consts) if consts is not None else dram.constants()
    t = _timing_arrays(df)
    stream = (df["pattern"] == "stream").to_numpy()
    rf = df["read_fraction"].cast(float).to_numpy()
    offered = df["offered_GBps"].cast(float).to_numpy()
    lat, sat, rho, idle = dram.evaluate_core(t, stream, rf, offered, k, rho_cap=rho_cap)
    return {"latency_ns": lat, "sat_GBps": sat, "rho": rho, "idle_ns": idle}


def _split(df, holdout_standards=HOLDOUT_STANDARDS, every=HOLDOUT_EVERY) -> np.ndarray:
    """Boolean train mask: not a held-out standard and not every ``every``-th load point."""
    std = df["standard"].to_numpy() if "standard" in df.columns else df["config_file"].to_numpy()
    idx = np.arange(df.height)
    train = ~np.isin(std, list(holdout_standards))
    if every:
        train &= (idx % every) != 2
    return train


def errors(df, consts=None) -> dict[str, Any]:
    """MAPE of latency over counted rows and saturation error per group."""
    pred = predict(df, consts)
    ref = df["ref_latency_ns"].to_numpy()
    m = df["counted"].to_numpy()
    ape = np.abs(pred["latency_ns"] - ref) / ref
    ape = np.where(np.isfinite(ape), ape, 10.0)
    return {"ape": ape, "mask": m, "pred": pred}


#: The least-squares loss of the fit (and of its standard errors).
LOSS, F_SCALE = "soft_l1", 0.15


def fit(df, train_mask: np.ndarray | None = None, x0: dict[str, float] | None = None, keys=FIT_KEYS):
    """Fit the shared constants on the counted training rows; returns constants."""
    from models.blocks import fit_harness

    resid, x_init, lo, hi, k0, keys = residuals(df, train_mask, x0, keys)
    return fit_harness.least_squares_fit(resid, x_init, lo, hi, k0, keys, max_nfev=400, loss=LOSS, f_scale=F_SCALE)


def residuals(df, train_mask: np.ndarray | None = None, x0: dict[str, float] | None = None, keys=FIT_KEYS):
    """The fit's residual function of the constants ``keys`` (log latency of the counted
    training rows, 6 x log saturation bandwidth of their groups), its start, bounds, the
    full constant set it starts from and the keys (fewer when the runs are too few)."""
    from models.blocks import fit_harness

    k0 = dict(dram.DEFAULT_CONSTANTS)
    if x0:
        k0.update(x0)
    train = train_mask if train_mask is not None else np.ones(df.height, bool)
    m = df["counted"].to_numpy() & train
    if fit_harness.too_few(int(m.sum()), keys):
        # too few runs to identify every constant: refit only the scale constants,
        # starting from the calibration in force
        keys = SMALL_KEYS
        k0 = dram.constants()
        if x0:
            k0.update(x0)
    sub = df.filter(m)
    ref = sub["ref_latency_ns"].to_numpy()
    # saturation groups within the training rows
    satg = df.filter(train & df["ref_sat_GBps"].is_not_null().to_numpy()).unique(
        subset=_group_keys(), keep="first")
    lo = np.array([BOUNDS[k][0] for k in keys])
    hi = np.array([BOUNDS[k][1] for k in keys])
    x_init = np.clip(np.array([k0[k] for k in keys]), lo + 1e-9, hi - 1e-9)

    def resid(x):
        c = dict(k0)
        c.update(dict(zip(keys, x)))
        p = predict(sub, c, rho_cap=0.97)["latency_ns"]
        r1 = np.log(p / ref)
        r2 = np.zeros(0)
        if satg.height:
            ps = predict(satg, c)["sat_GBps"]
            r2 = 6.0 * np.log(ps / satg["ref_sat_GBps"].to_numpy())
        return np.concatenate([r1, r2])

    return resid, x_init, lo, hi, k0, tuple(keys)


def uncertainty(df, consts: dict[str, float], keys=FIT_KEYS) -> dict[str, Any]:
    """The ``[uncertainty]`` table of constants ``consts`` fitted on all rows of ``df``:
    Jacobian standard errors (:mod:`models.blocks.fit_harness`)."""
    from models.blocks import fit_harness

    resid, _, lo, hi, _, keys = residuals(df, None, consts, keys)
    x = np.array([consts[k] for k in keys])
    sd = fit_harness.jacobian_sd(resid, x, LOSS, F_SCALE, lo, hi)
    return fit_harness.uncertainty_table(keys, x, sd, int(resid(x).size), lo, hi)


def leave_one_out(df) -> dict[str, dict[str, Any]]:
    """Fit on every standard but one (all its rows held out; DDR4-3200 and its mapping
    variant DDR4-3200-BGI count as one standard), for each in turn."""
    std = df["standard"].to_numpy() if "standard" in df.columns else df["config_file"].to_numpy()
    family = np.array([s_.replace("-BGI", "") for s_ in std])
    out = {}
    for fam in sorted(set(family)):
        held = family == fam
        if held.all():
            continue
        consts = fit(df, ~held)
        out[fam] = {"heldout": summarize(df, consts, held), "train": summarize(df, consts, ~held), "constants": consts}
    return out


def summarize(df, consts, mask=None) -> dict[str, Any]:
    """MAPE over counted rows in ``mask`` and saturation errors over groups in ``mask``."""
    e = errors(df, consts)
    m = e["mask"] & (mask if mask is not None else True)
    mape = float(np.mean(e["ape"][m]) * 100) if m.any() else float("nan")
    satm = df["ref_sat_GBps"].is_not_null().to_numpy() & (mask if mask is not None else True)
    sat_err = float("nan")
    if satm.any():
        sub = df.filter(satm).unique(subset=_group_keys(), keep="first")
        ps = predict(sub, consts)["sat_GBps"]
        sat_err = float(np.max(np.abs(ps / sub["ref_sat_GBps"].to_numpy() - 1.0)) * 100)
        sat_mean = float(np.mean(np.abs(ps / sub["ref_sat_GBps"].to_numpy() - 1.0)) * 100)
    else:
        sat_mean = float("nan")
    return {"mape_pct": mape, "n": int(m.sum()), "sat_max_err_pct": sat_err, "sat_mean_err_pct": sat_mean}


def calibrate(path=None, add: bool = False) -> dict[str, Any]:
    """Fit on the shipped split of ``path`` (with ``add``: of the shipped runs and
    ``path``'s together) and return the calibration document."""
    from models.blocks import fit_harness

    runs, named = fit_harness.reference_runs(load_reference, path, add)
    df = with_rule(runs)
    train = _split(df)
    consts = fit(df, train)
    std = df["standard"].to_numpy() if "standard" in df.columns else df["config_file"].to_numpy()
    held_std = np.isin(std, list(HOLDOUT_STANDARDS))
    held_pts = ~train & ~held_std
    doc = {
        "block": "dram",
        "reference": named or "results/reference/dramsim3/runs.csv",
        "target": "e2e_avg_read_latency_ns (mean read latency from arrival)",
        "rule": RULE,
        "fitted_on": (f"all counted rows except standards {list(HOLDOUT_STANDARDS)} and every "
                      f"{HOLDOUT_EVERY}th row (row index % {HOLDOUT_EVERY} == 2) of the CSV order"),
        "held_out": {"standards": list(HOLDOUT_STANDARDS), "load_points": f"row index % {HOLDOUT_EVERY} == 2"},
        "constants": consts,
        "error": fit_harness.error_tables(summarize, df, consts, {
            "train": train, "heldout_points": held_pts, "heldout_standards": held_std, "all": None}),
    }
    # final shipped constants: refit on everything (the held-out figures above are for
    # the split fit; the all-data fit is what models use)
    return fit_harness.finish(doc, df, fit, summarize, leave_one_out, FIT_KEYS, consts, uncertainty)


def check_reference(path, echo: Callable[[str], None] = print, consts=None) -> dict[str, Any]:
    """Evaluate the active calibration on the runs in ``path``; prints per-group errors and
    finally ``MAPE=<x>% N=<runs>``."""
    import polars as pl

    df = load_reference(path)
    try:
        shipped = load_reference(None)
    except Exception:
        shipped = None
    df = with_rule(df, shipped)
    e = errors(df, consts)
    pred = e["pred"]
    df = df.with_columns(
        pl.Series("model_latency_ns", pred["latency_ns"]),
        pl.Series("model_sat_GBps", pred["sat_GBps"]),
        pl.Series("ape_pct", e["ape"] * 100),
    )
    echo(f"rule: {RULE}")
    echo(f"{'group':<44} {'n':>4} {'MAPE%':>7} {'sat_ref':>8} {'sat_mod':>8} {'sat_err%':>8}")
    groups = df.group_by(_group_keys(), maintain_order=True).agg(
        pl.col("standard").first() if "standard" in df.columns else pl.col("config_file").first().alias("standard"),
        pl.col("counted").sum().alias("n"),
        pl.col("ape_pct").filter(pl.col("counted")).mean().alias("mape"),
        pl.col("ref_sat_GBps").first(), pl.col("model_sat_GBps").first(),
    ).sort(["standard", "pattern", "read_fraction"])
    sat_errs = []
    for r in groups.iter_rows(named=True):
        se = ""
        if r["ref_sat_GBps"] is not None:
            v = (r["model_sat_GBps"] / r["ref_sat_GBps"] - 1) * 100
            sat_errs.append(abs(v))
            se = f"{v:+8.1f}"
        label = f"{r['standard']} {r['pattern']} rf={r['read_fraction']}"
        mape = f"{r['mape']:7.2f}" if r["mape"] is not None else "      -"
        rs = f"{r['ref_sat_GBps']:8.2f}" if r["ref_sat_GBps"] is not None else "       -"
        echo(f"{label:<44} {r['n']:>4} {mape} {rs} {r['model_sat_GBps']:8.2f} {se:>8}")
    m = df["counted"].to_numpy()
    n = int(m.sum())
    mape = float(np.mean(e["ape"][m]) * 100) if n else 0.0
    if sat_errs:
        echo(f"saturation bandwidth: mean |err| {np.mean(sat_errs):.2f}%, max {np.max(sat_errs):.2f}% "
             f"over {len(sat_errs)} groups ({SAT_RULE})")
    echo(f"MAPE={mape:.2f}% N={n}")
    return {"mape_pct": mape, "n": n, "sat_errs_pct": sat_errs, "frame": df}


def curves(path=None, consts=None, points: int = 40):
    """Tidy frame: for every (standard, pattern, read_fraction) the reference rows
    (``source='reference'``) and a model curve (``source='model'``) of latency_ns against
    bandwidth_gbps, with columns standard, pattern, read_fraction, source, bandwidth_gbps,
    latency_ns, counted."""
    import polars as pl

    df = with_rule(load_reference(path))
    ref = df.select(
        pl.col("standard"), pl.col("pattern"), pl.col("read_fraction").cast(pl.Float64),
        pl.lit("reference").alias("source"), pl.col("offered_GBps").alias("bandwidth_gbps"),
        pl.col("ref_latency_ns").alias("latency_ns"), pl.col("counted"),
    )
    k = dram.constants(consts) if consts is not None else dram.constants()
    parts = [ref]
    for key, g in df.group_by(["standard", "pattern", "read_fraction"], maintain_order=True):
        row = g.head(1)
        t = {f: np.full(points, row[f"t_{f}"][0]) for f in TIMING_FIELDS}
        stream = np.full(points, row["pattern"][0] == "stream")
        rf = np.full(points, float(row["read_fraction"][0]))
        _, sat, _, _ = dram.evaluate_core(t, stream, rf, np.zeros(points), k)
        bw = np.linspace(0.01, 0.97, points) * sat
        lat, _, _, _ = dram.evaluate_core(t, stream, rf, bw, k)
        parts.append(pl.DataFrame({
            "standard": [key[0]] * points, "pattern": [key[1]] * points, "read_fraction": rf,
            "source": ["model"] * points, "bandwidth_gbps": bw, "latency_ns": lat, "counted": [False] * points,
        }))
    return pl.concat(parts, how="vertical_relaxed")
