"""Fit the serving layer's three efficiency constants to published measurements.

``python -m models.llm_serve.calibration`` reads ``measurements.csv``, fits ``eff_flops_frac``,
``eff_hbm_frac`` and ``gemm_half_rows`` with ``scipy.optimize.least_squares`` on the
log-errors of the rows marked ``fit`` (the others are held out and never seen by the fit),
and writes ``fitted.toml`` (atomically, ``models.blocks.fit_harness.write_fitted``) with the constants
and every row's error.
``fit(exclude=...)`` leaves fit rows out as well (``cv.py``: leave-one-anchor-out).
"""

from __future__ import annotations

import csv
from collections.abc import Collection
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
CONSTANTS = ("eff_flops_frac", "eff_hbm_frac", "gemm_half_rows")
START = (0.6, 0.8, 300.0)
LOWER = (0.1, 0.2, 0.0)
UPPER = (1.0, 1.0, 5000.0)


def measurements() -> list[dict[str, str]]:
    with open(HERE / "measurements.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def scenario(row: dict[str, str]) -> dict[str, Any]:
    """The model's parameters for one measurement row."""
    return {
        "gpu": row["gpu"], "gpus": float(row["gpus"]), "arch": row["arch"],
        "model_params_b": float(row["model_params_b"]), "weight_dtype": row["weight_dtype"], "kv_dtype": row["kv_dtype"],
        "context_tokens": float(row["input_tokens"]) + float(row["output_tokens"]), "output_tokens": float(row["output_tokens"]),
        "load_frac": float(row["load_frac"]), "concurrency": float(row["concurrency"]), "kv_tier": "hbm",
    }


def predict(rows: list[dict[str, str]], constants: dict[str, float] | None = None) -> np.ndarray:
    """The model's value of each row's metric, all rows in one vectorized run."""
    from dse import registry

    model = registry.get("llm-serve")
    cols: dict[str, Any] = {}
    for key in scenario(rows[0]):
        vals = [scenario(r)[key] for r in rows]
        cols[key] = vals if isinstance(vals[0], str) else np.asarray(vals, dtype=np.float64)
    for k, v in (constants or {}).items():
        cols[k] = float(v)
    out = model.run(cols)
    return np.asarray([out[r["metric"]][i] for i, r in enumerate(rows)])


def fit(exclude: Collection[str] = ()) -> dict[str, Any]:
    """Fit the constants to the ``fit`` rows less the ids in ``exclude`` (``cv.py``)."""
    from scipy.optimize import least_squares

    rows = measurements()
    unknown = set(exclude) - {r["id"] for r in rows}
    if unknown:
        raise ValueError(f"fit(exclude=...): no measurement {sorted(unknown)}; ids are those of measurements.csv")
    fit_rows = [r for r in rows if r["role"] == "fit" and r["id"] not in exclude]
    measured = np.asarray([float(r["value"]) for r in fit_rows])

    def residual(x: np.ndarray) -> np.ndarray:
        return np.log(predict(fit_rows, dict(zip(CONSTANTS, x))) / measured)

    res = least_squares(residual, np.asarray(START), bounds=(np.asarray(LOWER), np.asarray(UPPER)), x_scale="jac")
    constants = {k: float(round(v, 4)) for k, v in zip(CONSTANTS, res.x)}
    model = predict(rows, constants)
    errors = []
    for r, m in zip(rows, model):
        v = float(r["value"])
        errors.append({"id": r["id"], "role": r["role"], "metric": r["metric"], "measured": v,
                       "model": float(round(m, 3)), "error_frac": float(round(m / v - 1.0, 4))})
    return {"constants": constants, "errors": errors, "cost": float(res.cost)}


#: Significant digits of the fit's cost in ``fitted.toml`` (the constants and errors are
#: rounded by :func:`fit` and written as they are).
COST_DIGITS = 6


def fitted_header() -> tuple[str, ...]:
    """The comment lines at the top of ``fitted.toml`` (with today's date)."""
    return ("Fitted by `python -m models.llm_serve.calibration` (scipy.optimize.least_squares on log errors)",
            f"on {date.today().isoformat()} to the rows of measurements.csv with role = fit;",
            "the held_out rows were not used.  error_frac = model / measured - 1.")


def fitted_tables(result: dict[str, Any]) -> dict[str, Any]:
    """The tables of ``fitted.toml``: the constants, the fit (rows, cost), every row's error."""
    return {
        "constants": dict(result["constants"]),
        "fit": {"rows": [e["id"] for e in result["errors"] if e["role"] == "fit"], "cost": result["cost"]},
        "errors": [dict(e) for e in result["errors"]],
    }


def write(result: dict[str, Any], path: Path = HERE / "fitted.toml", recompute_sd: bool = True) -> str:
    """Write ``fitted.toml`` (the shared writer: atomic, keeps or recomputes ``[uncertainty]``)."""
    from models.blocks.fit_harness import write_fitted

    return write_fitted(path, fitted_tables(result), fitted_header(), package="llm_serve", recompute_sd=recompute_sd,
                        digits_of={"cost": COST_DIGITS})


def main() -> None:
    result = fit()
    write(result)
    print("constants:", result["constants"])
    for e in result["errors"]:
        print(f"  {e['role']:9s} {e['id']:36s} {e['metric']:10s} measured {e['measured']:>9g} model {e['model']:>10.4g} "
              f"error {100 * e['error_frac']:+6.1f} %")


if __name__ == "__main__":
    main()
