"""The index's "fronts compared" section: studies that optimize the same objectives,
scored in one shared box so their numbers can be compared (:func:`dse.pareto.shared_box_scores`).

A study's own hypervolume is normalized between its own best and worst values: it tells
how much of its own box its front covers, not whether it beats another study.  Studies
with the same objectives (names and directions) are grouped; each group with at least
two studies gets a table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

#: What the studies table's hypervolume is.
OWN_BOUNDS = (
    "Hypervolume (own bounds) is the share of the box between a study's own best and worst objective values "
    "that its front dominates (objectives scaled to [0, 1], reference point 1.1): it measures how well a front "
    "covers its own range, and two studies with different ranges cannot be compared on it."
)
#: What the shared-box tables are.
EXPLAIN = OWN_BOUNDS + (
    " Here studies with the same objectives are measured in one shared box (the best and worst values "
    "any of them reaches): hypervolume in the shared box, the share of the joint front (the non-dominated "
    "points of all of them together) each contributes, and the share of its front no other study dominates."
)


def objective_key(m: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """A study's objectives as a sortable key (name, direction)."""
    return tuple(sorted((str(k), str(v)) for k, v in (m.get("objectives") or {}).items()))


def groups(studies: list[tuple[str, str, Path, dict[str, Any]]]) -> list[tuple[tuple[tuple[str, str], ...], list[list[str]]]]:
    """(objectives, table rows) for every group of two or more studies with the same
    objectives; ``studies`` are (name, page file, results folder, manifest)."""
    by_key: dict[tuple[tuple[str, str], ...], list[tuple[str, str, Path]]] = {}
    for name, fname, path, m in studies:
        if m.get("kind") == "comparison":
            continue
        key = objective_key(m)
        if key:
            by_key.setdefault(key, []).append((name, fname, path))
    out = []
    for key, members in sorted(by_key.items()):
        if len(members) < 2:
            continue
        out.append((key, _rows(key, members)))
    return out


def _rows(key: tuple[tuple[str, str], ...], members: list[tuple[str, str, Path]]) -> list[list[str]]:
    found = scores({f"@@{fname}@@{name}": path for name, fname, path in members}, dict(key))
    return [[label, f"{s['front_points']:,}", f"{s['hypervolume_shared']:.3f}", f"{100 * s['joint_share']:.0f}%",
             f"{100 * s['undominated_frac']:.0f}%"] for label, s in found.items()]


def scores(paths: dict[str, Path], objectives: dict[str, str]) -> dict[str, dict[str, float]]:
    """Shared-box scores of the studies' Pareto fronts (label -> results folder), best
    hypervolume first; each with ``front_points``."""
    from dse import pareto

    fronts = {label: _front(path, objectives) for label, path in paths.items()}
    found = pareto.shared_box_scores(fronts)
    ranked = sorted(found.items(), key=lambda kv: -kv[1]["hypervolume_shared"])
    return {label: {"front_points": len(fronts[label]), **s} for label, s in ranked}


def _front(path: Path, objectives: dict[str, str]) -> np.ndarray:
    """The study's Pareto front as a 'minimize' matrix (empty when unreadable)."""
    import pyarrow.parquet as pq

    from dse import pareto

    try:
        table = pq.read_table(Path(path) / "pareto.parquet", columns=list(objectives))
    except (OSError, ValueError, KeyError):
        return np.empty((0, len(objectives)))
    cols = {k: table.column(k).to_numpy(zero_copy_only=False) for k in objectives}
    return pareto.objective_matrix(cols, objectives)


COLUMNS = ["study", "points on the front", "hypervolume (shared box)", "share of the joint front", "undominated by the others"]
