"""Robust Pareto fronts: every design point evaluated under N draws of the uncertain
parameter defaults (``dse sweep ... --uncertainty N``).

The draws are the same for every point (common random numbers: one seeded Sobol set of
the parameters no knob or fixed value sets), so two designs are compared on paired
samples.  Per point and objective the table gains ``<objective>_p5``, ``_p50`` and
``_p95`` over the draws in which the point is feasible, ``feasible_share``, and
``p_pareto``: the share of draws in which the point is non-dominated among all the
sweep's points (moocore per draw).

``p_pareto`` needs every point of a draw, but chunks are evaluated apart (and resumed):
each chunk saves, per draw, its own non-dominated points (``.parts/front-*.parquet``).
A point on a draw's global front is on its chunk's front for that draw, so the union of
the chunk fronts holds every global front; :func:`p_pareto_counts` reduces it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dse.space import Space

#: Draws of the uncertain parameters per design point (``--uncertainty``) allowed.
MIN_DRAWS, MAX_DRAWS = 2, 4096


def uq_seed(seed: int) -> int:
    """The draws' seed: derived from the sweep's, distinct from its sampling stream."""
    return int(np.random.SeedSequence([seed, 0x0A0]).generate_state(1)[0])


def chunk_points(draws: int, evaluations: int) -> int:
    """Design points per chunk so one chunk is about ``evaluations`` model evaluations."""
    return max(1, evaluations // draws)


def evaluate_robust(space: Space, inputs: dict[str, np.ndarray], point_ids: np.ndarray, draws: int, seed: int) -> tuple[Any, Any]:
    """(points table, per-draw chunk front table) for one chunk of design points."""
    import pyarrow as pa

    from dse.sweep.evaluate import evaluate_inputs

    table = evaluate_inputs(space, inputs, point_ids)  # the nominal design (defaults)
    objs, ok = draw_objectives(space, inputs, len(point_ids), draws, seed)
    extra = _percentiles(objs, ok)
    extra["feasible_share"] = ok.mean(axis=1)
    for name, v in extra.items():
        table = table.append_column(name, pa.array(np.ascontiguousarray(v, dtype=np.float64)))
    return table, _chunk_fronts(space, point_ids, objs, ok)


def draw_objectives(space: Space, inputs: dict[str, np.ndarray], b: int, draws: int,
                    seed: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Each objective of ``b`` design points under ``draws`` draws (b x draws arrays) and
    where a point is feasible in a draw (model, constraints, finite objectives)."""
    from dse.sweep.evaluate import constraint_masks
    from dse.uncertainty import sample_uncertain

    fixed = {**space.fixed, **{k: v for k, v in inputs.items()}}
    sampled = sample_uncertain(space.model, set(fixed), draws, uq_seed(seed))
    cols: dict[str, Any] = {k: (np.repeat(v, draws) if np.ndim(v) else v) for k, v in fixed.items()}
    cols.update({k: np.tile(v, b) for k, v in sampled.items()})
    ev = space.model.run_full(cols, checked=True)
    ok = ev.feasible.reshape(b, draws)
    for cmask in constraint_masks(space, cols, ev.metrics, b * draws).values():
        ok = ok & cmask.reshape(b, draws)
    objs = {k: ev.metrics[k].reshape(b, draws) for k in space.objectives}
    for k in space.objectives:
        ok = ok & np.isfinite(objs[k])
    return objs, ok


def evaluate_robust_chunk(space: Space, strategy: str, seed: int, chunk: Any, draws: int) -> tuple[Any, Any]:
    """:func:`evaluate_robust` of one chunk of a sweep (what a Ray task runs): the same
    points, draws and per-draw chunk front as the local loop."""
    from dse.sweep.evaluate import chunk_inputs

    inputs, ids = chunk_inputs(space, strategy, seed, chunk)
    return evaluate_robust(space, inputs, ids, draws, seed)


def _percentiles(objs: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, np.ndarray]:
    import warnings

    out = {}
    for k, v in objs.items():
        x = np.where(ok, v, np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: never feasible
            q = np.nanpercentile(x, (5, 50, 95), axis=1)
        for name, row in zip(("p5", "p50", "p95"), q):
            out[f"{k}_{name}"] = row
    return out


def _chunk_fronts(space: Space, ids: np.ndarray, objs: dict[str, np.ndarray], ok: np.ndarray) -> Any:
    """Per draw, the chunk's non-dominated feasible points: (point_id, draw, objectives)."""
    import pyarrow as pa

    from dse import pareto

    rows_id, rows_draw, rows_obj = [], [], []
    for j in range(ok.shape[1]):
        feas = np.flatnonzero(ok[:, j])
        if feas.size == 0:
            continue
        mat = pareto.objective_matrix({k: v[feas, j] for k, v in objs.items()}, space.objectives)
        keep = feas[pareto.nondominated_mask(mat, keep_ties=True)]
        rows_id.append(ids[keep])
        rows_draw.append(np.full(keep.size, j, dtype=np.int32))
        rows_obj.append(np.column_stack([objs[k][keep, j] for k in space.objectives]))
    cols: dict[str, Any] = {
        "point_id": pa.array(np.concatenate(rows_id) if rows_id else np.empty(0, np.int64), type=pa.int64()),
        "draw": pa.array(np.concatenate(rows_draw) if rows_draw else np.empty(0, np.int32), type=pa.int32()),
    }
    mat = np.concatenate(rows_obj) if rows_obj else np.empty((0, len(space.objectives)))
    for i, k in enumerate(space.objectives):
        cols[k] = pa.array(np.ascontiguousarray(mat[:, i]))
    return pa.table(cols)


def front_path(parts_dir: Path, index: int) -> Path:
    return parts_dir / f"front-{index:07d}.parquet"


def p_pareto_counts(parts_dir: Path, space: Space, draws: int) -> tuple[np.ndarray, np.ndarray]:
    """(point ids, share of draws on the front), from the chunk fronts, one draw at a time."""
    import polars as pl

    from dse import pareto

    files = sorted(parts_dir.glob("front-*.parquet"))
    if not files:
        return np.empty(0, np.int64), np.empty(0)
    counts: dict[int, int] = {}
    for d in pl.read_parquet(files).partition_by("draw"):
        mat = pareto.objective_matrix({k: d[k].to_numpy() for k in space.objectives}, space.objectives)
        for pid in d["point_id"].to_numpy()[pareto.nondominated_mask(mat, keep_ties=True)]:
            counts[int(pid)] = counts.get(int(pid), 0) + 1
    ids = np.fromiter(counts, dtype=np.int64, count=len(counts))
    share = np.fromiter(counts.values(), dtype=np.float64, count=len(counts)) / draws
    order = np.argsort(ids)
    return ids[order], share[order]


def p_pareto_column(point_ids: np.ndarray, ids: np.ndarray, share: np.ndarray) -> np.ndarray:
    """``p_pareto`` for ``point_ids`` (0 for points never on a draw's front)."""
    out = np.zeros(len(point_ids))
    if ids.size:
        pos = np.clip(np.searchsorted(ids, point_ids), 0, ids.size - 1)
        hit = ids[pos] == point_ids
        out[hit] = share[pos[hit]]
    return out
