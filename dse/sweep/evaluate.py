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
    flag and one boolean column per named constraint (``ok_<name>``)."""
    import pyarrow as pa

    cols: dict[str, Any] = dict(space.fixed)
    cols.update(inputs)
    metrics = space.model.run(cols, checked=True)
    n = len(point_ids)

    env: dict[str, Any] = dict(cols)
    env.update(metrics)
    pmap = space.model.param_map()
    for name in space.constraint_names:
        p = pmap.get(name)
        if p is not None and p.categorical:  # constraints compare labels, not codes
            env[name] = np.asarray(p.choices, dtype=object)[np.asarray(cols[name], dtype=np.int64)]
    feasible = np.ones(n, dtype=bool)
    for name in space.objectives:
        feasible &= np.isfinite(metrics[name])
    ok_cols: dict[str, np.ndarray] = {}
    for cname, expr in space.constraints.items():
        ok = np.broadcast_to(np.asarray(expr.evaluate(env), dtype=bool), (n,))
        ok_cols[f"ok_{cname}"] = ok
        feasible &= ok

    arrays: dict[str, Any] = {"point_id": pa.array(point_ids, type=pa.int64())}
    for k in space.knobs:
        v = inputs[k.name]
        p = pmap[k.name]
        if p.categorical:
            labels = [str(c) for c in p.choices or ()]
            arrays[k.name] = pa.DictionaryArray.from_arrays(
                pa.array(np.asarray(v, dtype=np.int32)), pa.array(labels)
            )
        elif k.integer or p.integer:
            arrays[k.name] = pa.array(np.asarray(v).astype(np.int64))
        else:
            arrays[k.name] = pa.array(np.asarray(v, dtype=np.float64))
    for name, v in metrics.items():
        arrays[name] = pa.array(np.ascontiguousarray(v, dtype=np.float64))
    arrays["feasible"] = pa.array(feasible)
    for name, v in ok_cols.items():
        arrays[name] = pa.array(np.ascontiguousarray(v))
    return pa.table(arrays)


def evaluate_chunk(space: Space, strategy: str, seed: int, chunk: Chunk) -> Any:
    if strategy == "grid":
        inputs = grid_inputs(space, chunk.start, chunk.stop)
    else:
        inputs = sample_inputs(space, strategy, seed, chunk.start, chunk.stop)
    ids = np.arange(chunk.start, chunk.stop, dtype=np.int64)
    return evaluate_inputs(space, inputs, ids)
