"""The article's own design on the map: is it on the Pareto front of its space?

A space may name the configuration its article proposes (``[paper_design]``).  After a
sweep, :func:`assess` evaluates that point with the space's fixed values, and compares
it with every feasible swept design *of the same workload* (the knobs that describe the
job, not the design: the model family's workload knobs, ``workload`` and the knobs the
space lists in ``[paper_design] hold``, e.g. prices) on the space's
objectives (cost and power included where the space lists them): ``on_front`` when it
is feasible and no such design dominates it; otherwise the designs that dominate it,
each with its objective values over the paper's (``ratio`` < 1 on a ``min`` objective =
better).  Finding designs better than the one
the article chose is what a design-space tool is for.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dse import pareto
from dse.space import Space

#: Relative difference under which a swept workload value counts as the design's own.
SAME_REL = 0.01
#: Dominating designs listed in a report (the best first on the first objective).
MAX_LISTED = 5


def paper_point(space: Space) -> Any:
    """The paper design evaluated as a one-row Arrow table (same columns as a sweep's)."""
    from dse.sweep.evaluate import evaluate_inputs  # noqa: PLC0415 - sweep code loads after the space

    pd = space.paper_design
    assert pd is not None
    pmap = space.model.param_map()
    inputs: dict[str, Any] = {}
    for k in space.knobs:
        p = pmap[k.name]
        value = pd.values.get(k.name)
        if value is None:
            value = p.code_of(p.default) if p.categorical else float(p.default)
        inputs[k.name] = np.atleast_1d(value)
    for name, value in pd.values.items():
        inputs.setdefault(name, np.atleast_1d(value))
    return evaluate_inputs(space, inputs, np.asarray([-1], dtype=np.int64))


def workload_knobs(space: Space) -> list[str]:
    """Knobs that describe the job rather than the design: the family's workload knobs,
    ``workload``, and those the space's ``[paper_design] hold`` names."""
    from dse import families  # noqa: PLC0415

    fam = space.model.family
    names = {space.model.workload_param(k.name) or k.name for k in families.family(fam).knobs} if fam else set()
    names |= {"workload", *(space.paper_design.hold if space.paper_design else ())}
    return [k.name for k in space.knobs if k.name in names]


def assess(space: Space, points_path: Any) -> dict[str, Any] | None:
    """The paper design's objectives, feasibility and its dominators among the feasible
    points of ``points_path`` with its workload; None when the space names no design."""
    if space.paper_design is None:
        return None
    row = paper_point(space)
    objectives = space.objectives
    values = {m: float(row.column(m)[0].as_py()) for m in objectives}
    feasible = bool(row.column("feasible")[0].as_py())
    reason = row.column("reason")[0].as_py()
    knob_values = {k.name: _plain(row.column(k.name)[0].as_py()) for k in space.knobs}
    out: dict[str, Any] = {
        "source": space.paper_design.source,
        "design": knob_values,
        "objectives": values,
        "feasible": feasible,
        "reason": reason,
        "on_front": False,
        "dominated_by": 0,
        "dominators": [],
    }
    same = workload_knobs(space)
    out["held_equal"] = same
    if not feasible:
        return out
    front = _candidates(points_path, space, same, knob_values)
    out["compared_with"] = front.num_rows
    if front.num_rows == 0:
        out["on_front"] = None  # no swept design has its workload: nothing to say
        return out
    mine = pareto.objective_matrix({m: np.asarray([values[m]]) for m in objectives}, objectives)[0]
    theirs = pareto.objective_matrix({m: front.column(m).to_numpy() for m in objectives}, objectives)
    dominates = np.all(theirs <= mine, axis=1) & np.any(theirs < mine, axis=1)
    idx = np.flatnonzero(dominates)
    out["dominated_by"] = int(idx.size)
    out["on_front"] = idx.size == 0
    first = next(iter(objectives))
    order = idx[np.argsort(theirs[idx, 0])][:MAX_LISTED]
    for i in order:
        design = {k.name: _plain(front.column(k.name)[int(i)].as_py()) for k in space.knobs}
        objs = {m: float(front.column(m)[int(i)].as_py()) for m in objectives}
        ratio = {m: (objs[m] / values[m] if values[m] else None) for m in objectives}
        out["dominators"].append({"design": design, "objectives": objs, "ratio": ratio})
    out["best_ratio"] = {first: out["dominators"][0]["ratio"][first]} if out["dominators"] else {}
    return out


def _candidates(points_path: Any, space: Space, same: list[str], design: dict[str, Any]) -> Any:
    """Feasible swept points with the paper design's workload, as an Arrow table."""
    import polars as pl  # noqa: PLC0415

    frame = pl.scan_parquet(points_path).filter(pl.col("feasible"))
    for name in same:
        value = design[name]
        if isinstance(value, (str, bool)):
            frame = frame.filter(pl.col(name).cast(pl.String) == str(value))
        else:  # a grid value within SAME_REL of the design's (0.0113 for a fitted 0.011339)
            frame = frame.filter((pl.col(name) - value).abs() <= SAME_REL * abs(value))
    keep = [k.name for k in space.knobs] + list(space.objectives)
    return frame.select(keep).collect().to_arrow()


def _plain(v: Any) -> Any:
    return float(v) if isinstance(v, (np.floating,)) else v
