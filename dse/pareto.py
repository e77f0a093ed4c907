"""Pareto fronts, ranks and hypervolume (moocore), for any number of objectives.

Objectives are given as ``{metric: "min" | "max"}``.  Points with a non-finite
objective are never on a front.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def objective_matrix(columns: Mapping[str, np.ndarray], objectives: Mapping[str, str]) -> np.ndarray:
    """(n, k) float matrix with every objective turned into 'minimize'."""
    cols = []
    for name, direction in objectives.items():
        v = np.asarray(columns[name], dtype=np.float64)
        cols.append(-v if direction == "max" else v)
    return np.column_stack(cols) if cols else np.empty((0, 0))


def nondominated_mask(matrix: np.ndarray, keep_ties: bool = False) -> np.ndarray:
    """Boolean mask of the non-dominated rows of a 'minimize' matrix.

    Duplicated objective vectors are reported once (the first), so the front lists
    distinct trade-offs; ``keep_ties=True`` keeps every copy (a design is non-dominated
    even when another design ties it exactly)."""
    import moocore

    n = matrix.shape[0]
    mask = np.zeros(n, dtype=bool)
    finite = np.isfinite(matrix).all(axis=1)
    if not finite.any():
        return mask
    idx = np.flatnonzero(finite)
    sub = matrix[idx]
    if sub.shape[1] == 1:
        best = sub[:, 0].min()
        hits = idx[np.flatnonzero(sub[:, 0] == best)]
        mask[hits if keep_ties else hits[:1]] = True
        return mask
    nd = moocore.is_nondominated(sub, keep_weakly=keep_ties)
    mask[idx[nd]] = True
    return mask


def ranks(matrix: np.ndarray) -> np.ndarray:
    """Pareto rank of every row (1 = non-dominated); rows with non-finite values get 0."""
    import moocore

    out = np.zeros(matrix.shape[0], dtype=np.int64)
    finite = np.isfinite(matrix).all(axis=1)
    if finite.any():
        sub = matrix[finite]
        out[finite] = moocore.pareto_rank(sub) if sub.shape[1] > 1 else _ranks_1d(sub[:, 0])
    return out


def _ranks_1d(v: np.ndarray) -> np.ndarray:
    _, inverse = np.unique(v, return_inverse=True)
    return inverse + 1


def hypervolume(front: np.ndarray, ideal: np.ndarray, nadir: np.ndarray) -> float:
    """Hypervolume of a 'minimize' front after normalizing each objective to [0, 1]
    between ``ideal`` and ``nadir``; the reference point is 1.1 in every objective.
    The value is comparable between studies that use the same bounds."""
    import moocore

    if front.size == 0:
        return 0.0
    span = np.where(nadir > ideal, nadir - ideal, 1.0)
    norm = (front - ideal) / span
    norm = norm[(norm <= 1.1).all(axis=1)]
    if norm.size == 0:
        return 0.0
    ref = np.full(front.shape[1], 1.1)
    return float(moocore.hypervolume(norm, ref=ref))


def shared_box_scores(fronts: Mapping[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """Scores of several 'minimize' fronts over the same objectives, comparable with one
    another: each front is measured in one box, from the best to the worst value any of
    them reaches (so a study's score no longer depends on its own bounds).

    Per front: ``hypervolume_shared`` (normalized hypervolume in that box, reference 1.1),
    ``joint_share`` (the share of the joint front -- the non-dominated points of all the
    fronts together -- that this front contributes) and ``undominated_frac`` (the share of
    this front's points no other front dominates)."""
    width = max((np.asarray(v).shape[1] for v in fronts.values() if np.ndim(v) == 2), default=1)
    rows = {k: np.asarray(v, dtype=np.float64).reshape(-1, width) for k, v in fronts.items()}
    rows = {k: v[np.isfinite(v).all(axis=1)] for k, v in rows.items()}
    stacked = [v for v in rows.values() if v.size]
    if not stacked:
        return {k: {"hypervolume_shared": 0.0, "joint_share": 0.0, "undominated_frac": 0.0} for k in rows}
    every = np.vstack(stacked)
    ideal, nadir = every.min(axis=0), every.max(axis=0)
    owner = np.concatenate([np.full(len(v), i) for i, v in enumerate(rows.values())])
    joint = nondominated_mask(every, keep_ties=True)
    out = {}
    for i, (k, v) in enumerate(rows.items()):
        others = every[owner != i]
        out[k] = {
            "hypervolume_shared": hypervolume(v, ideal, nadir),
            "joint_share": float(joint[owner == i].sum() / max(joint.sum(), 1)),
            "undominated_frac": _undominated_frac(v, others),
        }
    return out


def _undominated_frac(front: np.ndarray, others: np.ndarray) -> float:
    """Share of ``front``'s rows that no row of ``others`` dominates (weakly better in every
    objective, strictly in one)."""
    if front.size == 0:
        return 0.0
    if others.size == 0:
        return 1.0
    beaten = np.zeros(len(front), dtype=bool)
    for start in range(0, len(front), 256):
        f = front[start:start + 256, None, :]
        le = (others[None, :, :] <= f).all(axis=2)
        lt = (others[None, :, :] < f).any(axis=2)
        beaten[start:start + 256] = (le & lt).any(axis=1)
    return float(1.0 - beaten.mean())
