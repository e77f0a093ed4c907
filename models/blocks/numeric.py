"""Numeric plumbing of the blocks and models for a single point: a sequential sampler evaluates
one design at a time, where numpy's per-call overhead, not arithmetic, is the cost, and an
operation on a numpy scalar costs a tenth of one on a one-element or 0-d array."""

from __future__ import annotations

import numpy as np


def f64(v):
    """``v`` as float64: a scalar (Python, numpy or 0-d array) becomes a numpy scalar, whose
    arithmetic costs a tenth of a 0-d array's (a single point's case); anything else an array."""
    if isinstance(v, np.ndarray):
        return np.float64(v[()]) if v.ndim == 0 else v.astype(np.float64, copy=False)
    if isinstance(v, (list, tuple)):
        return np.asarray(v, np.float64)
    return np.float64(v)


def anywhere(mask) -> bool:
    """Whether any point's ``mask`` holds (a numpy bool, array or Python bool; the
    method, not ``np.any``, which costs microseconds on one point)."""
    return bool(mask.any()) if isinstance(mask, np.ndarray) else bool(mask)


def where(cond, a, b):
    """``np.where(cond, a, b)``; for one point (``cond`` a numpy or Python bool) a plain
    conditional, some 15x cheaper than ``np.where`` on scalars."""
    if type(cond) is np.bool_ or type(cond) is bool:
        return a if cond else b
    return np.where(cond, a, b)


def shape_of(v) -> tuple[int, ...]:
    """``np.shape(v)`` without its dispatch for arrays and numpy scalars."""
    return v.shape if isinstance(v, (np.ndarray, np.generic)) else np.shape(v)


def first_match(cases, default=0.0):
    """``np.select``'s values: per point the value of the first ``(condition, value)`` case
    that holds, else ``default``, as a chain of :func:`where` (the same numbers;
    ``np.select`` costs ~10x more on short columns and on a single point's scalars)."""
    out = default
    for cond, value in reversed(cases):
        out = where(cond, value, out)
    return out
