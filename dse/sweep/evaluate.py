"""Generating design points in chunks and evaluating them into Arrow tables.

A chunk is a contiguous range of point ids.  For ``grid`` the id is the flat index
into the Cartesian product of the knob grids; for ``sobol``/``random`` it is the
sample index of a seeded sequence.  Either way a chunk can be regenerated anywhere
(another process, a Ray worker, a resumed run) from ``(space, strategy, seed, range)``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from dse.space import Space

CHUNK_POINTS = 1 << 17  # 131072 points: ~10-50 ms of model time, ~20 MB of columns
RANDOM_BLOCK = 4096  # points per independently seeded block of the 'random' strategy


@dataclass(frozen=True)
class Chunk:
    index: int
    start: int
    stop: int

    @property
    def size(self) -> int:
        return self.stop - self.start


def chunks(total: int, size: int = CHUNK_POINTS) -> list[Chunk]:
    return [Chunk(i, s, min(s + size, total)) for i, s in enumerate(range(0, total, size))]


def grid_inputs(space: Space, start: int, stop: int) -> dict[str, np.ndarray]:
    """Knob columns for grid points ``start..stop`` (flat index, last knob fastest)."""
    shape = tuple(k.size for k in space.knobs)
    flat = np.arange(start, stop, dtype=np.int64)
    idx = np.unravel_index(flat, shape)
    return {k.name: k.values[i] for k, i in zip(space.knobs, idx)}


def sample_inputs(space: Space, strategy: str, seed: int, start: int, stop: int) -> dict[str, np.ndarray]:
    """Knob columns for samples ``start..stop`` of a seeded Sobol or uniform sequence."""
    d = len(space.knobs)
    n = stop - start
    if strategy == "sobol":
        from scipy.stats import qmc

        eng = qmc.Sobol(d=d, scramble=True, seed=seed)
        if start:
            eng.fast_forward(start)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # balance warning for non powers of two
            u = eng.random(n)
    elif strategy == "random":
        # fixed blocks of RANDOM_BLOCK points, each its own seeded stream: any chunking
        # of the same sequence gives the same points
        first, last = start // RANDOM_BLOCK, (stop - 1) // RANDOM_BLOCK
        blocks = [np.random.default_rng([seed, b]).random((RANDOM_BLOCK, d)) for b in range(first, last + 1)]
        u = np.concatenate(blocks)[start - first * RANDOM_BLOCK : stop - first * RANDOM_BLOCK]
    else:  # pragma: no cover - guarded by the caller
        raise ValueError(strategy)
    return {k.name: k.from_unit(u[:, j]) for j, k in enumerate(space.knobs)}


def evaluate_inputs(space: Space, inputs: dict[str, np.ndarray], point_ids: np.ndarray) -> Any:
    """Evaluate knob columns with the space's fixed values; returns a pyarrow Table with
    ``point_id``, the knobs (labels for categorical knobs), every metric, a ``feasible``
    flag (the model's feasibility, finite objectives and every constraint), its
    ``reason`` (null where feasible) and one boolean column per named constraint
    (``ok_<name>``)."""
    import pyarrow as pa

    cols: dict[str, Any] = dict(space.fixed)
    cols.update(inputs)
    ev = space.model.run_full(cols, checked=True)
    metrics = ev.metrics
    n = len(point_ids)
    ok_cols = {f"ok_{c}": ok for c, ok in constraint_masks(space, cols, metrics, n).items()}
    reason, texts = infeasibility(space, ev, ok_cols)

    arrays: dict[str, Any] = {"point_id": pa.array(point_ids, type=pa.int64())}
    pmap = space.model.param_map()
    for k in space.knobs:
        arrays[k.name] = knob_array(pmap[k.name], k.integer, inputs[k.name])
    mmap = space.model.metric_map()
    for name, v in metrics.items():
        arrays[name] = metric_array(mmap[name], v)
    arrays["feasible"] = pa.array(reason < 0)
    arrays["reason"] = pa.DictionaryArray.from_arrays(
        pa.array(reason, mask=reason < 0, type=pa.int32()), pa.array(list(texts), type=pa.string())
    )
    for name, v in ok_cols.items():
        arrays[name] = pa.array(np.ascontiguousarray(v))
    return pa.table(arrays)


def knob_array(p: Any, integer: bool, v: Any) -> Any:
    """A knob's Arrow column: a dictionary of its labels for a categorical, int64 for a
    whole-number parameter (``integer=True`` or int choices: 8, not 8.0), else float64."""
    import pyarrow as pa

    if p.categorical:
        labels = [str(c) for c in p.choices or ()]
        return pa.DictionaryArray.from_arrays(pa.array(np.asarray(v, dtype=np.int32)), pa.array(labels))
    if integer or p.whole:
        return pa.array(np.asarray(v).astype(np.int64))
    return pa.array(np.asarray(v, dtype=np.float64))


def metric_array(m: Any, v: np.ndarray) -> Any:
    """A metric's Arrow column: float64, or for a categorical metric (``Metric.labels``) a
    dictionary of its labels over the model's codes (null where the code is NaN)."""
    import pyarrow as pa

    if m.labels is None:
        return pa.array(np.ascontiguousarray(v, dtype=np.float64))
    v = np.asarray(v, dtype=np.float64)
    nan = np.isnan(v)
    codes = np.where(nan, 0.0, v)
    if codes.size and (codes.min() < 0 or codes.max() >= len(m.labels) or np.any(codes != np.floor(codes))):
        raise RuntimeError(f"metric {m.name}: a code outside its {len(m.labels)} labels")
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32), mask=nan), pa.array(list(m.labels), type=pa.string()))


def label_env(model: Any, cols: dict[str, Any], names: Any) -> dict[str, Any]:
    """Label columns (not codes) of the categorical parameters and metrics among ``names``
    in ``cols``, for expressions that compare labels (``design == "cxl"``)."""
    pmap, mmap = model.param_map(), model.metric_map()
    out: dict[str, Any] = {}
    for name in names:
        p, m = pmap.get(name), mmap.get(name)
        if name not in cols:
            continue
        if p is not None and p.categorical:
            out[name] = np.asarray(p.choices, dtype=object)[np.asarray(cols[name], dtype=np.int64)]
        elif m is not None and m.categorical:
            out[name] = m.label(cols[name])
    return out


def constraint_masks(space: Space, cols: dict[str, Any], metrics: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """Per named constraint, the points that meet it (labels, not codes, for categoricals)."""
    env: dict[str, Any] = dict(cols)
    env.update(metrics)
    env.update(label_env(space.model, env, space.constraint_names))  # constraints compare labels, not codes
    return {c: np.broadcast_to(np.asarray(expr.evaluate(env), dtype=bool), (n,)) for c, expr in space.constraints.items()}


def infeasibility(space: Space, ev: Any, ok_cols: dict[str, np.ndarray]) -> tuple[np.ndarray, tuple[str, ...]]:
    """int32 reason code per point (-1: feasible) and the reasons: the model's first,
    then a non-finite objective, then the first failed constraint (``constraint <name>``)."""
    reason = ev.reason.copy()
    texts = list(ev.reasons)
    checks = [(f"objective {m} is not finite", np.isfinite(ev.metrics[m])) for m in space.objectives]
    checks += [(f"constraint {k[3:]}", ok) for k, ok in ok_cols.items()]
    for text, ok in checks:
        hit = ~ok & (reason < 0)
        if hit.any():
            reason[hit] = len(texts)
            texts.append(text)
    return reason, tuple(texts)


def chunk_inputs(space: Space, strategy: str, seed: int, chunk: Chunk) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The knob columns and point ids of one chunk."""
    if strategy == "grid":
        inputs = grid_inputs(space, chunk.start, chunk.stop)
    else:
        inputs = sample_inputs(space, strategy, seed, chunk.start, chunk.stop)
    return inputs, np.arange(chunk.start, chunk.stop, dtype=np.int64)


def evaluate_chunk(space: Space, strategy: str, seed: int, chunk: Chunk) -> Any:
    inputs, ids = chunk_inputs(space, strategy, seed, chunk)
    return evaluate_inputs(space, inputs, ids)
