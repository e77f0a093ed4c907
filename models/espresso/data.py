"""Data of the espresso model kept in the package: the workload table (Table 3 of the
paper) and the fitted constants (``fitted.toml``, written by ``calibration.py``)."""

from __future__ import annotations

import csv
import tomllib
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKLOADS_CSV = HERE / "workloads.csv"
FITTED_TOML = HERE / "fitted.toml"


@cache
def workloads() -> dict[str, dict[str, float]]:
    """workload -> {read_frac, read_kib, write_kib} (the 'micro' row is a placeholder)."""
    with open(WORKLOADS_CSV, encoding="utf-8") as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    return {
        r["workload"]: {"read_frac": float(r["read_frac"]), "read_kib": float(r["read_kib"]), "write_kib": float(r["write_kib"])}
        for r in rows
    }


WORKLOADS: tuple[str, ...] = tuple(workloads())
TRACES: tuple[str, ...] = tuple(w for w in WORKLOADS if w != "micro")


#: Values used before the first fit (and by the fit as its starting point).
STARTING_POINT = {
    "slice_kcycles": 1.2,
    "cmd_kcycles": 1.2,
    "fixed_latency_us": 40.0,
    "oc_ftl_scale_x": 2.0,
    "write_cycles_scale_x": 1.0,
    "trace_qd": 64.0,
    "oc_controller_usd": 12.0,
}


@cache
def fitted() -> dict[str, dict]:
    """name -> {value, fitted_to, ...} from fitted.toml (starting values where missing)."""
    doc = tomllib.loads(FITTED_TOML.read_text(encoding="utf-8")) if FITTED_TOML.exists() else {}
    out: dict[str, dict] = {}
    for name, start in STARTING_POINT.items():
        entry = doc.get(name)
        out[name] = dict(entry) if isinstance(entry, dict) else {"value": start, "fitted_to": "not fitted yet (starting point)"}
    return out


def fitted_value(name: str) -> float:
    return float(fitted()[name]["value"])


def fitted_source(name: str) -> str:
    e = fitted()[name]
    if "target" in e:
        return f"fitted (models/espresso/fitted.toml) to {e['fitted_to']}"
    return f"models/espresso/fitted.toml: {e['fitted_to']}"
