"""The closed-loop solver: a safeguarded secant on the frozen-model map
(:func:`closed_terms.closed_map`), sliced, with converged points leaving the working set."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from models.blocks.flash.closed_terms import closed_guess, closed_map, closed_prep
from models.blocks.numeric import where
from models.blocks.flash.request import flat_inputs, point_shape, scalar_inputs, take


#: points per slice of the vectorized solvers (temporaries stay in the cache)
_CHUNK = 8192
#: relative fixed-point residual |Y(X) - X| / X at which the closed loop counts as solved
#: (1e-8: the throughput, returned as Y(X), then lies within ~1e-8 of the root -- far
#: inside the model's accuracy; 1e-10 cost about half an evaluation more per point)
CLOSED_TOL = 1e-8
#: iterations per slice before its unsolved points wait for the common final round
_CLOSED_SLICE_ITERS = 8
_CLOSED_MAX_ITERS = 200


def _stack_points(g: dict[str, Any], m: int):
    """(keys of g's per-point float arrays, one 2-D array (keys x m) holding them as rows, g
    with those entries replaced by views of its rows)."""
    keys = [kk for kk, v in g.items() if isinstance(v, np.ndarray) and v.ndim and v.dtype == np.float64]
    table = np.stack([g[kk] for kk in keys]) if keys else np.empty((0, m))
    return keys, table, {**g, **dict(zip(keys, table))}


def _keep_points(g: dict[str, Any], keys: list[str], table: np.ndarray, keep: np.ndarray):
    """(table, g) for the points at ``keep`` only (per-point arrays outside the table, if
    any, taken one by one)."""
    table = table.take(keep, axis=1)
    rest = {kk: v.take(keep) for kk, v in g.items() if kk not in keys and isinstance(v, np.ndarray) and v.ndim}
    return table, {**g, **dict(zip(keys, table)), **rest}


def secant_step(x, x_old, d_old, lo, hi, y):
    """One safeguarded secant step on Y(X) - X at ``x`` (``y = Y(x)``; the previous point
    ``x_old`` with residual ``d_old``; bracket ``lo``, ``hi``): (residual at x, new
    bracket lo and hi, next x, converged on the residual, solved by residual or bracket)."""
    d = y - x
    up = d > 0  # the root lies above x (NaN: past a frozen pole, below)
    lo = where(up, x, lo)
    hi = where(up, hi, x)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_sec = x - d * (x - x_old) / (d - d_old)
    x_new = where((x_sec > lo) & (x_sec < hi), x_sec, where((y > lo) & (y < hi), y, 0.5 * (lo + hi)))
    conv = np.abs(d) <= CLOSED_TOL * x
    return d, lo, hi, x_new, conv, conv | (hi - lo <= CLOSED_TOL * hi)


def closed_iterate(g: dict[str, Any], st: dict[str, np.ndarray], max_iters: int):
    """Secant on Y(X) - X from state ``st`` (x, x_old, d_old, lo, hi) for up to
    ``max_iters`` evaluations.  Returns (positions solved, their throughput, positions
    left, their g, their state)."""
    x, x_old, d_old, lo, hi = st["x"], st["x_old"], st["d_old"], st["lo"], st["hi"]
    m = x.shape[0]
    pos = np.arange(m)
    done_pos, done_val = [], []
    live = np.ones(m, bool)
    # Solved points leave the working set.  g holds some 40 per-point arrays; they are
    # kept as the rows of one 2-D table so that dropping points is one take() on it, not
    # 40 boolean-mask copies (which cost as much as the secant's own bookkeeping).
    keys, table, g = _stack_points(g, m)
    for _ in range(max_iters):
        y = closed_map(g, x)
        d, lo, hi, x_new, conv, solved = secant_step(x, x_old, d_old, lo, hi, y)
        done = live & solved
        x_old, d_old, x = x, d, x_new
        if done.any():
            done_pos.append(pos[done])
            done_val.append(np.where(conv, y, x_new)[done])
            live &= ~done
            n_live = int(live.sum())
            if n_live == 0:
                return np.concatenate(done_pos), np.concatenate(done_val), pos[:0], g, {}
            if n_live <= 0.75 * live.size:  # drop the solved points from the working set
                keep = np.flatnonzero(live)
                table, g = _keep_points(g, keys, table, keep)
                x, x_old, d_old, lo, hi, pos = (v.take(keep) for v in (x, x_old, d_old, lo, hi, pos))
                live = np.ones(n_live, bool)
    if not live.all():
        keep = np.flatnonzero(live)
        table, g = _keep_points(g, keys, table, keep)
        x, x_old, d_old, lo, hi, pos = (v.take(keep) for v in (x, x_old, d_old, lo, hi, pos))
    dp = np.concatenate(done_pos) if done_pos else pos[:0]
    dv = np.concatenate(done_val) if done_val else np.zeros(0)
    return dp, dv, pos, g, {"x": x, "x_old": x_old, "d_old": d_old, "lo": lo, "hi": hi}


def closed_start(g: dict[str, Any], m: int) -> dict[str, np.ndarray]:
    """The secant's state: the first guess, and X = 0 (where Y(0) - 0 is the zero-load
    root) as the previous point."""
    x, y0 = closed_guess(g)
    return {"x": np.broadcast_to(x, (m,)).astype(np.float64), "x_old": np.zeros(m),
            "d_old": np.broadcast_to(y0, (m,)).astype(np.float64), "lo": np.zeros(m),
            "hi": np.broadcast_to(g["x_hi"], (m,)).astype(np.float64)}


def _concat_parts(parts: list[dict[str, Any]], sizes: list[int]) -> dict[str, Any]:
    """Join per-slice dicts of per-point values (scalars broadcast where they differ;
    boolean flags or-ed)."""
    out = {}
    for key, v0 in parts[0].items():
        vals = [p[key] for p in parts]
        if isinstance(v0, bool):
            out[key] = any(vals)
        elif all(np.ndim(v) == 0 for v in vals) and all(np.array_equal(v, v0) for v in vals):
            out[key] = v0
        else:
            out[key] = np.concatenate([np.broadcast_to(np.asarray(v, np.float64), (n,)) for v, n in zip(vals, sizes)])
    return out


def closed_solve(a, r, qd, k, shape, above=None) -> np.ndarray:
    """Closed-loop throughput (req/us) for every point of ``shape``; with ``above`` (req/us,
    per point or scalar) +inf where the throughput exceeds it, without solving it: such a
    point starts at its threshold inside a bracket closed just above it, and the sign of
    its first ``Y(X) - X`` (the bracketing rule) tells whether the root lies above."""
    size = math.prod(shape)
    extra = {"qd": qd} if above is None else {"qd": qd, "above": above}
    if size == 1:  # one point (a sequential sampler's call): numpy scalars, not arrays
        return np.full(shape, solve_one(scalar_inputs(a, r, extra), k, bool(np.asarray(r["seq"]).item())))
    flat = flat_inputs(a, r, shape, extra)
    seq = np.broadcast_to(np.asarray(r["seq"], bool), shape).reshape(-1)
    out = np.zeros(size)  # no requests in flight (qd <= 0): no throughput
    for s_val in (True, False):
        idx = np.flatnonzero(seq == s_val)
        if np.ndim(flat["qd"]):
            idx = idx[flat["qd"][idx] > 0]
        elif flat["qd"] <= 0:
            idx = idx[:0]
        left = []  # (global positions, g, state) of points a slice did not solve
        for c0 in range(0, idx.size, _CHUNK):
            sel = idx[c0 : c0 + _CHUNK]
            b = flat if sel.size == size else {kk: take(v, sel) for kk, v in flat.items()}
            g = closed_prep(b, k, s_val)
            st = closed_start(g, sel.size)
            if above is not None:
                t = np.broadcast_to(b["above"], (sel.size,))
                test = t < st["hi"]
                st["x"] = np.where(test, t, st["x"])
                st["hi"] = np.where(test, t * (1.0 + 0.5 * CLOSED_TOL), st["hi"])
            dp, dv, lp, g, st = closed_iterate(g, st, _CLOSED_SLICE_ITERS)
            out[sel[dp]] = dv
            if lp.size:
                left.append((sel[lp], g, st))
        if left:
            sizes = [p.size for p, _, _ in left]
            g = _concat_parts([gg for _, gg, _ in left], sizes)
            st = {kk: np.concatenate([s[kk] for _, _, s in left]) for kk in left[0][2]}
            gpos = np.concatenate([p for p, _, _ in left])
            dp, dv, lp, _, st = closed_iterate(g, st, _CLOSED_MAX_ITERS)
            out[gpos[dp]] = dv
            if lp.size:  # not converged in the iteration budget: the bracket's midpoint
                out[gpos[lp]] = 0.5 * (st["lo"] + st["hi"])
    if above is not None:
        out = np.where(out < np.broadcast_to(flat["above"], (size,)), out, np.inf)
    return out.reshape(shape)


def solve_one(b: dict[str, np.float64], k, s_val: bool) -> float:
    """:func:`closed_solve` for one point whose inputs ``b`` are numpy scalars: the same
    secant steps, evaluated on scalars (an arithmetic operation on a scalar costs a tenth
    of one on a one-element array), no working set to manage."""
    out = _secant_one(b, k, s_val) if b["qd"] > 0 else 0.0  # qd <= 0: no requests in flight
    if "above" in b and not out < b["above"]:
        return np.inf
    return float(out)


def _secant_one(b: dict[str, np.float64], k, s_val: bool):
    """:func:`solve_one`'s secant, from the first guess (or the ``above`` threshold)."""
    g = closed_prep(b, k, s_val)
    x, d_old = closed_guess(g)
    x_old, lo, hi = 0.0, 0.0, g["x_hi"]
    if "above" in b and b["above"] < hi:  # the bracketing rule decides at once (closed_solve)
        x, hi = b["above"], b["above"] * (1.0 + 0.5 * CLOSED_TOL)
    for _ in range(_CLOSED_SLICE_ITERS + _CLOSED_MAX_ITERS):
        y = closed_map(g, x)
        d, lo, hi, x_new, conv, solved = secant_step(x, x_old, d_old, lo, hi, y)
        if solved:
            out = y if conv else x_new
            break
        x_old, d_old, x = x, d, x_new
    else:  # not converged in the iteration budget: the bracket's midpoint
        out = 0.5 * (lo + hi)
    return out


def closed_rate_latency(a, r, qd, k):
    """Closed loop at queue depth ``qd``: (throughput req/us, mean latency us); the root
    of ``qd / R(X) = X`` for the reference ``closed_response``'s ``R``, found by
    :func:`closed_solve`."""
    f = np.float64
    qd = np.asarray(qd, f)
    shape = point_shape(a, r, qd)
    x = closed_solve(a, r, qd, k, shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        return x, np.broadcast_to(qd, shape) / x
