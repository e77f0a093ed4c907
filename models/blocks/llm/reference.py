"""Comparison against Calculon's own outputs (``results/reference/calculon/runs.csv``).

:func:`check_reference` reads a file in the ``runs.csv`` format, evaluates every row with
:func:`models.blocks.llm.training.evaluate` (rows are grouped by system and evaluated as
columns; model dimensions come from the row itself) and returns a per-run table:
our and Calculon's batch time, tier-1/tier-2 memory, feasibility and error category.

System files are looked up by the row's ``system`` name in ``inputs/systems/`` next to
the CSV, then in the shipped ``results/reference/calculon/inputs/systems/``; a system not
found there is rebuilt from its ``base_system`` file with the row's ``mem1_*``/``mem2_*``
capacity and bandwidth.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from dse import units
from dse.errors import DseError
from models.blocks.llm.calculon_io import EXECUTION_FIELDS, system_from_json
from models.blocks.llm.executions import BOOL_FIELDS, INT_FIELDS, Executions
from models.blocks.llm.hardware import System
from models.blocks.llm.training import ERRORS, evaluate

SHIPPED = Path(__file__).resolve().parents[3] / "results" / "reference" / "calculon"

REQUIRED = ("run_id", "system", "num_blocks", "hidden", "feedforward", "seq_size", "attn_heads", "attn_size",
            "feasible", "total_time_s", "mem_tier1_used_bytes", "mem_tier2_used_bytes") + EXECUTION_FIELDS


def _systems_dirs(path: Path) -> list[Path]:
    return [path.parent / "inputs" / "systems", SHIPPED / "inputs" / "systems"]


def _load_system(name: str, row: dict[str, str], dirs: list[Path], cache: dict[str, System]) -> System:
    if name in cache:
        return cache[name]
    for d in dirs:
        f = d / f"{name}.json"
        if f.exists():
            cache[name] = system_from_json(f, name=name)
            return cache[name]
    base = row.get("base_system") or ""
    for d in dirs:
        f = d / f"{base}.json"
        if base and f.exists():
            s = system_from_json(f, name=name)
            try:
                s = s.with_mem(0, capacity_bytes=float(row["mem1_GiB"]) * units.GIB,
                               bandwidth_Bps=float(row["mem1_GBps"]) * units.GB)
                s = s.with_mem(1, capacity_bytes=float(row["mem2_GiB"]) * units.GIB,
                               bandwidth_Bps=float(row["mem2_GBps"]) * units.GB)
            except (KeyError, ValueError):
                raise DseError(f"system {name}: no JSON file and no usable mem1_/mem2_ columns") from None
            cache[name] = s
            return s
    raise DseError(f"system {name!r} of the reference file: no {name}.json in {', '.join(map(str, dirs))}")


def _num(s: str) -> float:
    return float(s) if s not in ("", None) else float("nan")


def _exec_columns(rows: list[dict[str, str]]) -> tuple[dict[str, Any], np.ndarray]:
    """Columns for Executions; also a mask of rows whose fields do not parse."""
    bad = np.zeros(len(rows), dtype=bool)
    cols: dict[str, list[Any]] = {k: [] for k in EXECUTION_FIELDS}
    for i, r in enumerate(rows):
        for k in EXECUTION_FIELDS:
            v = r[k]
            if k in BOOL_FIELDS:
                if v not in ("true", "false", "True", "False"):
                    bad[i] = True
                    v = "false"
                cols[k].append(v.lower() == "true")
            elif k in INT_FIELDS:
                try:
                    cols[k].append(int(float(v)))
                except ValueError:
                    bad[i] = True
                    cols[k].append(1)
            else:
                cols[k].append(v)
    return cols, bad


def evaluate_rows(path: Path) -> tuple[list[dict[str, str]], dict[str, np.ndarray]]:
    """Read a runs.csv-format file and evaluate every row; returns (rows, our columns)."""
    path = Path(path)
    try:
        with path.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as exc:
        raise DseError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not rows:
        raise DseError(f"{path}: no rows")
    missing = [k for k in REQUIRED if k not in rows[0]]
    if missing:
        raise DseError(f"{path}: not in the runs.csv format; missing columns {', '.join(missing)}")
    n = len(rows)
    out = {k: np.full(n, np.nan) for k in ("total_time", "sample_rate", "mem_tier1_bytes", "mem_tier2_bytes")}
    out["error"] = np.zeros(n, dtype=np.int64)
    out["parse_error"] = np.zeros(n, dtype=bool)
    dirs = _systems_dirs(path)
    cache: dict[str, System] = {}
    by_sys: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_sys.setdefault(r["system"], []).append(i)
    for name, idx in by_sys.items():
        system = _load_system(name, rows[idx[0]], dirs, cache)
        sub = [rows[i] for i in idx]
        cols, bad = _exec_columns(sub)
        ok = [j for j in range(len(sub)) if not bad[j]]
        # rows whose categorical values are unknown are infeasible on our side
        good: list[int] = []
        for j in ok:
            try:
                Executions.from_columns(1, **{k: cols[k][j] for k in EXECUTION_FIELDS})
                good.append(j)
            except DseError:
                pass
        for j in set(range(len(sub))) - set(good):
            out["error"][idx[j]] = ERRORS.index("invalid_execution_field")
            out["parse_error"][idx[j]] = True
        if not good:
            continue
        exe = Executions.from_columns(len(good), **{k: np.asarray([cols[k][j] for j in good]) for k in EXECUTION_FIELDS})
        model = {
            "hidden": [int(sub[j]["hidden"]) for j in good], "ffn": [int(sub[j]["feedforward"]) for j in good],
            "seq": [int(sub[j]["seq_size"]) for j in good], "heads": [int(sub[j]["attn_heads"]) for j in good],
            "head_dim": [int(sub[j]["attn_size"]) for j in good], "layers": [int(sub[j]["num_blocks"]) for j in good],
        }
        st = evaluate(model, system, exe)
        tgt = np.asarray([idx[j] for j in good])
        for k in ("total_time", "sample_rate", "mem_tier1_bytes", "mem_tier2_bytes", "error"):
            out[k][tgt] = st[k]
    return rows, out


def comparison_table(rows: list[dict[str, str]], ours: dict[str, np.ndarray]) -> pl.DataFrame:
    cal_feas = np.asarray([r["feasible"].lower() == "true" for r in rows])
    our_feas = ours["error"] == 0
    cal_t = np.asarray([_num(r["total_time_s"]) for r in rows])
    cal_m1 = np.asarray([_num(r["mem_tier1_used_bytes"]) for r in rows])
    cal_m2 = np.asarray([_num(r["mem_tier2_used_bytes"]) for r in rows])
    our_t = np.where(our_feas, ours["total_time"], np.nan)
    # memory is comparable where Calculon reports it (feasible rows and capacity failures)
    our_m1 = np.where(np.isfinite(cal_m1), ours["mem_tier1_bytes"], np.nan)
    our_m2 = np.where(np.isfinite(cal_m2), ours["mem_tier2_bytes"], np.nan)

    def pct(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(b != 0, 100.0 * (a - b) / b, np.where(a == b, 0.0, np.inf))

    both = cal_feas & our_feas
    return pl.DataFrame({
        "run_id": [r["run_id"] for r in rows],
        "group": [r.get("group", "") for r in rows],
        "config_label": [r.get("config_label", "") for r in rows],
        "model": [r.get("model", "") for r in rows],
        "system": [r["system"] for r in rows],
        "calculon_feasible": cal_feas,
        "ours_feasible": our_feas,
        "feasibility_agree": cal_feas == our_feas,
        "calculon_error": [r.get("error_category", "") for r in rows],
        "ours_error": [ERRORS[int(c)] for c in ours["error"]],
        "calculon_time_s": cal_t,
        "ours_time_s": our_t,
        "time_err_pct": np.where(both, pct(our_t, cal_t), np.nan),
        "calculon_tier1_bytes": cal_m1,
        "ours_tier1_bytes": our_m1,
        "tier1_err_pct": pct(our_m1, cal_m1),
        "calculon_tier2_bytes": cal_m2,
        "ours_tier2_bytes": our_m2,
        "tier2_err_pct": pct(our_m2, cal_m2),
    }, strict=False)


def summarize(table: pl.DataFrame) -> dict[str, float]:
    """Headline numbers of a comparison table."""
    t = table.filter(pl.col("calculon_feasible") & pl.col("ours_feasible"))
    e = np.abs(t["time_err_pct"].to_numpy())
    m1 = np.abs(table["tier1_err_pct"].drop_nans().drop_nulls().to_numpy())
    m2_all = table.filter(pl.col("calculon_tier2_bytes") > 0)["tier2_err_pct"].drop_nans().drop_nulls().to_numpy()
    return {
        "rows": float(table.height),
        "both_feasible": float(t.height),
        "mape_time_pct": float(e.mean()) if e.size else float("nan"),
        "median_abs_time_err_pct": float(np.median(e)) if e.size else float("nan"),
        "max_abs_time_err_pct": float(e.max()) if e.size else float("nan"),
        "mean_abs_tier1_err_pct": float(m1.mean()) if m1.size else float("nan"),
        "median_abs_tier1_err_pct": float(np.median(m1)) if m1.size else float("nan"),
        "mean_abs_tier2_err_pct": float(np.abs(m2_all).mean()) if m2_all.size else float("nan"),
        "feasibility_agreement_pct": 100.0 * float(table["feasibility_agree"].mean()),
        "error_category_agreement_pct": 100.0 * float(
            table.filter(~pl.col("calculon_feasible"))
            .select((pl.col("calculon_error") == pl.col("ours_error")).mean()).item()
            if table.filter(~pl.col("calculon_feasible")).height else 1.0),
    }


def check_reference(path: Path) -> tuple[pl.DataFrame, float, int]:
    """(per-run comparison table, MAPE of batch time in %, runs compared).

    MAPE is the mean absolute percentage error of ``total_time`` (training or forward
    batch time) over the rows both Calculon and this model find feasible.
    """
    rows, ours = evaluate_rows(Path(path))
    table = comparison_table(rows, ours)
    s = summarize(table)
    return table, s["mape_time_pct"], int(s["both_feasible"])
