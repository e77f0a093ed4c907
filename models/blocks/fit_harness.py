"""The pieces the DRAM and flash block fits share (``dram_fit``, ``flash_fit``).

* :func:`too_few(n_rows, keys)` -- the too-few-runs guard: fewer than
  :data:`RUNS_PER_CONSTANT` counted runs per constant cannot identify them all (one run
  fitted two constants to "MAPE 0.00 %"); the fits then refit only their scale constants.
* :func:`error_tables(summarize, df, consts, masks)` -- the ``[error.<name>]`` tables (train,
  held-out points, held-out standards/configs, all) of one fit.
* :func:`finish(doc, df, fit, summarize, leave_one_out, fit_keys, consts)` -- the part of a
  calibration document after the split fit: leave-one-group-out errors, the all-data refit
  that models use, the fixed constants and the ``[uncertainty]`` table.
* :func:`jacobian_sd(resid, x, ...)` / :func:`uncertainty_table` -- standard errors of the
  fitted constants from the least-squares Jacobian, ``s^2 (J^T J)^-1``.
* :func:`add_uncertainty(path, table)` -- write an ``[uncertainty]`` table into an existing
  calibration TOML (atomically, every other line kept as it is).
* :func:`write_fitted(path, tables, header, package=...)` -- the one writer of the
  architecture packages' ``models/<pkg>/fitted.toml`` (their ``calibration`` modules): header
  comments, the tables in order, floats at the package's digits, atomically; it keeps the
  file's ``[uncertainty]`` table (:mod:`dse.fit_uncertainty`) while the fit is unchanged and
  recomputes it when the fit changed.  :func:`fitted_toml` is its text without writing.

Why the Jacobian and not a bootstrap: one refit of the DRAM block costs about 0.3 s and of the
flash block about 1 s, so the 200 refits a bootstrap needs for a stable sd would add minutes
to ``dse calibrate``; the Jacobian comes from 2 p extra residual evaluations at the solution.
Its assumption (residuals independent, the model locally linear in the constants) is stated
in the table's ``method``.  A constant at one of its bounds is marked ``at_bound`` and held
there (an active constraint): the others' covariance is that of the free constants, and its
own sd is the one along its axis with the others fixed (indicative only).
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: Counted runs needed per fitted constant (the too-few-runs guard).
RUNS_PER_CONSTANT = 3
#: Relative step of the central differences of the Jacobian.
JAC_REL_STEP = 1e-4

METHOD_JACOBIAN = ("jacobian: sd = sqrt(diag(s^2 (J^T J)^-1)) at the fitted constants, J the residuals' "
                   "Jacobian (central differences) weighted by the soft-L1 loss (IRLS weights), "
                   "s^2 = sum of weighted squared residuals / (n - p); a constant at a bound is held there "
                   "(its sd: along its own axis, the others fixed); assumes independent residuals")


def reference_runs(load_reference: Callable[[Any], Any], path: Any = None, add: bool = False) -> tuple[Any, str]:
    """The runs a fit uses and how the calibration document names them: ``path`` alone, or
    with ``add`` the shipped runs and ``path``'s together (a user's runs added to the
    shipped set; columns one of them lacks are null in the other's rows)."""
    import polars as pl

    if not add or path is None:
        return load_reference(path), str(path) if path else ""
    both = pl.concat([load_reference(None), load_reference(path)], how="diagonal_relaxed")
    return both, f"shipped reference + {path}"


def least_squares_fit(resid: Callable[[np.ndarray], np.ndarray], x_init: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                      k0: dict[str, float], keys, *, max_nfev: int, loss: str, f_scale: float) -> dict[str, float]:
    """The block fits' solver: scipy's bounded trust-region least squares with a robust
    loss, from ``x_init``; returns every constant (``k0`` with the fitted ``keys`` set)."""
    from scipy.optimize import least_squares

    res = least_squares(resid, x_init, bounds=(lo, hi), method="trf", x_scale="jac", max_nfev=max_nfev,
                        loss=loss, f_scale=f_scale)
    out = dict(k0)
    out.update({k: float(v) for k, v in zip(keys, res.x)})
    return out


def too_few(n_rows: int, keys) -> bool:
    """True when ``n_rows`` counted runs are too few to fit every constant of ``keys``."""
    return int(n_rows) < RUNS_PER_CONSTANT * len(keys)


def error_tables(summarize: Callable[..., dict[str, Any]], df, consts: dict[str, float],
                 masks: dict[str, np.ndarray | None]) -> dict[str, dict[str, Any]]:
    """``{name: summarize(df, consts, mask)}`` for each named row mask (None: all rows)."""
    return {name: summarize(df, consts, m) for name, m in masks.items()}


def loss_weights(r: np.ndarray, loss: str, f_scale: float) -> np.ndarray:
    """IRLS weights sqrt(rho'(z)) of scipy's robust losses at residuals ``r``."""
    if loss == "linear":
        return np.ones_like(r)
    z = (r / f_scale) ** 2
    if loss == "soft_l1":
        return (1.0 + z) ** -0.25
    if loss == "cauchy":
        return (1.0 + z) ** -0.5
    raise ValueError(f"loss {loss!r}: weights known for linear, soft_l1, cauchy")


def jacobian_sd(resid: Callable[[np.ndarray], np.ndarray], x: np.ndarray, loss: str = "linear",
                f_scale: float = 1.0, lo: np.ndarray | None = None, hi: np.ndarray | None = None) -> np.ndarray:
    """Standard errors of ``x`` (a least-squares solution of ``resid``): the square root of
    the diagonal of s^2 (J^T J)^-1 (a pseudo-inverse where J^T J is singular)."""
    x = np.asarray(x, dtype=np.float64)
    r0 = np.asarray(resid(x), dtype=np.float64)
    cols = []
    for j in range(x.size):
        h = JAC_REL_STEP * max(abs(x[j]), 1e-3)
        xp, xm = x.copy(), x.copy()
        xp[j] += h
        xm[j] -= h
        if lo is not None and xm[j] < lo[j]:  # one-sided at a lower bound
            xm[j] = x[j]
        if hi is not None and xp[j] > hi[j]:
            xp[j] = x[j]
        cols.append((np.asarray(resid(xp)) - np.asarray(resid(xm))) / (xp[j] - xm[j]))
    w = loss_weights(r0, loss, f_scale)
    jac = np.column_stack(cols) * w[:, None]
    bound = at_bounds(x, lo, hi)
    free = ~bound
    dof = max(r0.size - int(free.sum()), 1)
    s2 = float(np.sum((w * r0) ** 2)) / dof
    var = np.empty(x.size)
    # a constant at a bound is held there (an active constraint): the free ones get the
    # covariance of their own block, the bound one the sd along its axis, others fixed
    jf = jac[:, free]
    var[free] = np.diag(s2 * np.linalg.pinv(jf.T @ jf)) if free.any() else []
    for j in np.nonzero(bound)[0]:
        g = float(jac[:, j] @ jac[:, j])
        var[j] = s2 / g if g > 0 else np.inf
    return np.sqrt(np.clip(var, 0.0, None))


def at_bounds(x, lo=None, hi=None) -> np.ndarray:
    """Which of ``x`` sit on a bound (within 1e-9)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros(x.size, bool)
    if lo is not None:
        out |= x <= np.asarray(lo) + 1e-9
    if hi is not None:
        out |= x >= np.asarray(hi) - 1e-9
    return out


def uncertainty_table(keys, x, sd, n: int, lo=None, hi=None, method: str = METHOD_JACOBIAN) -> dict[str, Any]:
    """The ``[uncertainty]`` table: method, n (residuals), sd per constant, constants at a bound."""
    at_bound = [k for k, b in zip(keys, at_bounds(x, lo, hi)) if b]
    return {"method": method, "n": int(n), "at_bound": at_bound,
            "sd": {k: float(s) for k, s in zip(keys, sd)}}


def finish(doc: dict[str, Any], df, fit: Callable[..., dict[str, float]], summarize: Callable[..., dict[str, Any]],
           leave_one_out: Callable[[Any], dict[str, dict[str, Any]]], fit_keys, consts: dict[str, float],
           sd_of: Callable[[Any, dict[str, float]], dict[str, Any]]) -> dict[str, Any]:
    """Complete a calibration document after the split fit ``consts``: leave-one-out errors,
    the all-data refit (the constants models use), fixed constants and the uncertainty."""
    for name, r in leave_one_out(df).items():
        doc["error"][f"leave_out_{name}"] = r["heldout"]
    full = fit(df, np.ones(df.height, bool), x0=consts)
    doc["fitted_constants"] = list(fit_keys)
    doc["fixed_constants"] = {k: v for k, v in full.items() if k not in fit_keys}
    doc["constants_split_fit"] = consts
    doc["constants"] = full
    doc["error"]["all_full_fit"] = summarize(df, full, None)
    doc["uncertainty"] = sd_of(df, full)
    return doc


def add_uncertainty(path: str | Path, table: dict[str, Any]) -> Path:
    """Write ``table`` as the ``[uncertainty]`` table of the calibration TOML at ``path``
    (replacing one already there; every other line is kept byte for byte)."""
    import tomllib

    from dse import store
    from models.blocks.calibration import dumps

    p = Path(path)
    lines = p.read_text(encoding="utf-8").splitlines()
    kept: list[str] = []
    skipping = False
    for line in lines:
        s = line.strip()
        if s.startswith("["):
            skipping = s in ("[uncertainty]", "[uncertainty.sd]") or s.startswith("[uncertainty.")
        if not skipping:
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    text = "\n".join(kept) + "\n\n" + dumps({"uncertainty": table})
    tomllib.loads(text)  # never write a file we cannot read back
    store.atomic_write_text(p, text)
    return p


def add_shipped_uncertainty(block: str, folder: str | Path | None = None) -> dict[str, Any]:
    """Compute the ``[uncertainty]`` table of ``<folder>/<block>.toml`` (default: the shipped
    calibration) at its own ``[constants]`` on the shipped reference runs, and write it
    into that file without refitting (the constants are kept byte for byte)."""
    import tomllib

    from models.blocks import calibration

    fit_mod = _fit_module(block)
    path = Path(folder or calibration.shipped_folder()) / f"{block}.toml"
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    df = fit_mod.with_rule(fit_mod.load_reference(None))
    keys = tuple(doc.get("fitted_constants", fit_mod.FIT_KEYS))
    table = fit_mod.uncertainty(df, dict(doc["constants"]), keys)
    add_uncertainty(path, table)
    calibration.clear_cache()
    return table


# ----------------------------------------------------------------------------- fitted.toml
#: The table of a fitted.toml that :mod:`dse.fit_uncertainty` owns: :func:`write_fitted`
#: keeps or recomputes it, callers never pass it.
UNCERTAINTY_TABLE = "uncertainty"
BARE_KEY_RE = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_key(key: str) -> str:
    """A TOML key: bare when it can be, else a quoted string."""
    return key if BARE_KEY_RE.match(key) else toml_string(key)


def toml_string(s: str) -> str:
    """A TOML basic string (UTF-8 kept as it is; quotes, backslashes and controls escaped)."""
    out = []
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_number(v: Any, digits: int | None) -> str:
    """A float with ``digits`` significant digits (None: the shortest text that reads back
    exactly); always a TOML float (``4.0``, not the integer ``4``)."""
    f = float(v)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    s = repr(f) if digits is None else f"{f:.{digits}g}"
    return s if "." in s or "e" in s else s + ".0"


def toml_value(v: Any, digits: int | None) -> str:
    """A value of a fitted.toml table: bool, int, float, string or a list of them."""
    if hasattr(v, "item") and not isinstance(v, (list, tuple)):  # a numpy scalar
        v = v.item()
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return toml_number(v, digits)
    if isinstance(v, str):
        return toml_string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x, digits) for x in v) + "]"
    raise ValueError(f"a fitted.toml value is a bool, number, string or list of them, not {type(v).__name__}: {v!r}")


def fitted_toml(tables: Mapping[str, Any], header: Sequence[str] = (), *, digits: int | None = None,
                digits_of: Mapping[str, int | None] | None = None,
                comments: Mapping[str, Sequence[str]] | None = None) -> str:
    """The text of a package's ``fitted.toml`` (without ``[uncertainty]``): the ``header``
    lines as comments, then each table in order, a blank line before each.  A table is a
    dict of values, or a list of dicts (an array of tables, ``[[name]]``).

    Floats take ``digits`` significant digits (None: the shortest repr that reads back
    exactly), a key named in ``digits_of`` its own; ``comments[table]`` are comment lines
    just above that table."""
    digits_of = digits_of or {}
    comments = comments or {}
    blocks = ["\n".join(f"# {h}".rstrip() for h in header)] if header else []
    for name, body in tables.items():
        if name == UNCERTAINTY_TABLE:
            raise ValueError(f"[{UNCERTAINTY_TABLE}] is written by dse.fit_uncertainty, not passed to the writer")
        rows, head = (body, f"[[{toml_key(name)}]]") if isinstance(body, list) else ([body], f"[{toml_key(name)}]")
        for i, row in enumerate(rows):
            lines = [f"# {c}".rstrip() for c in comments.get(name, ())] if i == 0 else []
            lines.append(head)
            for k, v in row.items():
                if isinstance(v, Mapping):
                    raise ValueError(f"[{name}] {k}: a fitted.toml table holds values, not tables")
                lines.append(f"{toml_key(k)} = {toml_value(v, digits_of.get(k, digits))}")
            blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def write_fitted(path: str | Path, tables: Mapping[str, Any], header: Sequence[str] = (), *,
                 package: str | None = None, recompute_sd: bool = True, **fmt: Any) -> str:
    """Write a package's ``fitted.toml`` (:func:`fitted_toml` text; ``fmt``: its ``digits``,
    ``digits_of``, ``comments``) atomically through :mod:`dse.store`, and return its text.

    A number within :data:`SAME_REL` (relative) or :data:`SAME_ABS` of the one at its place in
    the file already at ``path`` keeps the file's value (:func:`settle`): a refit that
    reproduces the shipped fit to rounding noise leaves its numbers as they are.  That file's
    ``[uncertainty]`` table (jackknife sds over the package's leave-one-out refits,
    :mod:`dse.fit_uncertainty`) is kept when the new tables then read back the same as the file's; when the fit changed (or there was none) the table of
    ``package`` is recomputed (``recompute_sd``: its refits, 0.1-30 s) or, without
    ``recompute_sd``, left out with a one-line note to run ``python -m dse.fit_uncertainty``.
    Without ``package`` the file gets no such table."""
    import tomllib

    from dse import fit_uncertainty as fu
    from dse import store

    p = Path(path)
    old = read_toml(p)
    sd = old.pop(fu.TABLE, None)
    text = fitted_toml(settle(tables, old), header, **fmt)
    new = tomllib.loads(text)  # never write a file we cannot read back
    if sd is None or old != new:
        sd = fresh_sd(p, package, recompute_sd)
    if sd:
        text = fu.with_table(text, sd)
    store.atomic_write_text(p, text)
    fu.fit_sd_table.cache_clear()
    return text


#: A refitted number this close to the file's is the same constant (refits reproduce to
#: ~1e-13 relative, or to ~1e-26 for a constant at a bound of 0; the tolerance of
#: tests/test_fit_uncertainty.py's recomputed sds).
SAME_REL = 1e-6
SAME_ABS = 1e-12


def settle(new: Any, old: Any) -> Any:
    """``new`` (tables, or one value) with each float replaced by the number at the same place
    of ``old`` (a parsed fitted.toml) where the two are within :data:`SAME_REL` / :data:`SAME_ABS`."""
    if isinstance(new, Mapping):
        return {k: settle(v, old.get(k) if isinstance(old, Mapping) else None) for k, v in new.items()}
    if isinstance(new, (list, tuple)):
        same_len = isinstance(old, list) and len(old) == len(new)
        return [settle(v, old[i] if same_len else None) for i, v in enumerate(new)]
    if (isinstance(new, float) and isinstance(old, (int, float)) and not isinstance(old, bool)
            and math.isclose(new, float(old), rel_tol=SAME_REL, abs_tol=SAME_ABS)):
        return float(old)
    return new


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML document at ``path``; {} when there is none or it does not parse."""
    import tomllib

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def fresh_sd(path: Path, package: str | None, recompute: bool) -> dict[str, float] | None:
    """The ``[uncertainty]`` table of ``package`` after its fit changed: recomputed, or None
    (with a note saying how to recompute it)."""
    if package is None:
        return None
    from dse import fit_uncertainty as fu

    if recompute:
        print(f"{path.name}: the fit changed, recomputing its [uncertainty] (leave-one-out refits of {package})",
              file=sys.stderr)
        return fu.compute(package)
    print(f"{path}: the fit changed and its [uncertainty] is left out; run: python -m dse.fit_uncertainty {package}",
          file=sys.stderr)
    return None


def _fit_module(block: str):
    if block == "dram":
        from models.blocks import dram_fit as mod
    elif block == "flash":
        from models.blocks import flash_fit as mod
    else:
        raise ValueError(f"unknown block {block!r}; allowed: dram, flash")
    return mod


if __name__ == "__main__":  # python -m models.blocks.fit_harness: the shipped [uncertainty] tables
    for name in ("dram", "flash"):
        t = add_shipped_uncertainty(name)
        print(name, ", ".join(f"{k} sd {v:.4g}" for k, v in t["sd"].items()), "at bound:", t["at_bound"])
