"""Placement of weights, KV cache and activations across a device's memory tiers.

Each object ``o`` has a size ``S_o`` (bytes to hold) and a traffic ``B_o`` (bytes moved
per step, e.g. one decode step).  A placement gives fractions ``f[o, t]`` of each object
in each tier ``t`` (sum over ``t`` is 1, tier capacities hold).  Reading it costs, per
tier, ``T_t = sum_o f[o,t] * B_o / bw_t`` (effective bandwidth, so OS-swap page faults
count); the step's memory time is ``sum_t T_t`` when the tiers are used one after another
(``overlap="sum"``) or ``max_t T_t`` when they stream in parallel (``overlap="max"``).

* :func:`place` with ``method="greedy"`` (vectorized over configurations): objects in
  order of traffic per byte, each poured into the fastest tiers first.  This is optimal
  for ``overlap="sum"`` (an exchange argument: moving a byte of a denser object to a
  faster tier never hurts).
* ``method="lp"``: FlexGen-style linear program over the fractions, solved exactly with
  CVXPY (HiGHS/Clarabel) for one configuration at a time: use it to check the greedy path
  or to get the optimum of ``overlap="max"``.

An infeasible placement (the objects need more bytes than the tiers hold) raises a
:class:`DseError` naming what needs how much and what is available.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dse.errors import DseError
from models.blocks.llm.hardware import MemoryTier
from models.blocks.llm.training import human_bytes


@dataclass
class Placement:
    """Result of :func:`place` (arrays of shape ``(n,)`` per object and tier)."""

    objects: tuple[str, ...]
    tiers: tuple[str, ...]
    fractions: dict[str, dict[str, np.ndarray]]  # object -> tier -> fraction
    tier_time_s: dict[str, np.ndarray]  # per tier transfer time of one step
    time_s: np.ndarray  # combined memory time of one step
    used_bytes: dict[str, np.ndarray]  # per tier bytes held
    feasible: np.ndarray

    def bytes_in(self, obj: str, tier: str, size: Any) -> np.ndarray:
        return self.fractions[obj][tier] * size


def _arr(x: Any, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(x, dtype=np.float64), (n,))


def _combine(times: list[np.ndarray], overlap: str) -> np.ndarray:
    if overlap == "sum":
        return np.sum(times, axis=0)
    if overlap == "max":
        return np.max(times, axis=0)
    raise DseError(f"overlap must be 'sum' or 'max', got {overlap!r}")


def infeasible_message(sizes: Mapping[str, float], tiers: Sequence[MemoryTier]) -> str:
    need = sum(sizes.values())
    parts = " + ".join(f"{k} {human_bytes(v)}" for k, v in sizes.items())
    have = " + ".join(f"{t.name} {human_bytes(t.capacity_bytes)}" for t in tiers)
    return (f"placement infeasible: {parts} = {human_bytes(need)} needed per device, "
            f"but the memory tiers hold {have} = {human_bytes(sum(t.capacity_bytes for t in tiers))}")


def place(
    sizes: Mapping[str, Any], traffic: Mapping[str, Any], tiers: Sequence[MemoryTier], *,
    method: str = "greedy", overlap: str = "sum", raise_infeasible: bool = True,
    pinned: Mapping[str, str] | None = None,
) -> Placement:
    """Place objects (``sizes`` bytes, ``traffic`` bytes per step) on ``tiers``.

    ``pinned`` forces an object entirely into a named tier (e.g. activations in HBM).
    Sizes and traffic may be columns; ``method="lp"`` needs scalars (one configuration).
    """
    if not tiers:
        raise DseError("placement needs at least one memory tier")
    objs = tuple(sizes)
    if set(traffic) - set(objs):
        raise DseError(f"traffic given for unknown objects {sorted(set(traffic) - set(objs))}")
    pinned = dict(pinned or {})
    names = tuple(t.name for t in tiers)
    for o, t in pinned.items():
        if o not in objs or t not in names:
            raise DseError(f"pinned {o!r} -> {t!r}: unknown object or tier (tiers: {', '.join(names)})")
    n = 1
    for v in list(sizes.values()) + list(traffic.values()):
        a = np.asarray(v)
        if a.ndim:
            n = max(n, a.shape[0])
    S = {o: _arr(sizes[o], n) for o in objs}
    B = {o: _arr(traffic.get(o, 0.0), n) for o in objs}
    if method == "greedy":
        pl = _greedy(S, B, tiers, overlap, pinned, n)
    elif method == "lp":
        if n != 1:
            raise DseError("method='lp' places one configuration at a time; pass scalars")
        pl = _lp(S, B, tiers, overlap, pinned)
    else:
        raise DseError(f"placement method must be 'greedy' or 'lp', got {method!r}")
    if raise_infeasible and not pl.feasible.all():
        i = int(np.nonzero(~pl.feasible)[0][0])
        raise DseError(infeasible_message({o: float(S[o][i]) for o in objs}, tiers))
    return pl


def _greedy(S: dict[str, np.ndarray], B: dict[str, np.ndarray], tiers: Sequence[MemoryTier], overlap: str,
            pinned: dict[str, str], n: int) -> Placement:
    objs = tuple(S)
    tord = sorted(range(len(tiers)), key=lambda k: -tiers[k].effective_bandwidth_Bps)
    cap = np.stack([np.full(n, float(t.capacity_bytes)) for t in tiers])  # (T, n)
    frac = {o: {t.name: np.zeros(n) for t in tiers} for o in objs}
    feasible = np.ones(n, dtype=bool)
    # pinned objects first
    for o, tn in pinned.items():
        k = [t.name for t in tiers].index(tn)
        frac[o][tn] = np.ones(n)
        cap[k] -= S[o]
        feasible &= cap[k] >= -1e-9 * np.maximum(S[o], 1)
    free = [o for o in objs if o not in pinned]
    if free:
        with np.errstate(divide="ignore", invalid="ignore"):
            dens = np.stack([np.where(S[o] > 0, B[o] / S[o], 0.0) for o in free], axis=1)  # (n, O)
        order = np.argsort(-dens, axis=1, kind="stable")
        Sm = np.stack([S[o] for o in free], axis=1)
        rows = np.arange(n)
        for r in range(len(free)):
            oi = order[:, r]
            left = Sm[rows, oi].copy()
            for k in tord:
                take = np.minimum(left, np.maximum(cap[k], 0.0))
                cap[k] -= take
                left -= take
                with np.errstate(divide="ignore", invalid="ignore"):
                    f = np.where(Sm[rows, oi] > 0, take / Sm[rows, oi], 0.0)
                for j, o in enumerate(free):
                    sel = oi == j
                    if sel.any():
                        frac[o][tiers[k].name] = np.where(sel, f, frac[o][tiers[k].name])
            feasible &= left <= 1e-9 * np.maximum(Sm[rows, oi], 1.0)
    return _finish(objs, S, B, tiers, frac, overlap, feasible)


def _finish(objs: tuple[str, ...], S: dict[str, np.ndarray], B: dict[str, np.ndarray], tiers: Sequence[MemoryTier],
            frac: dict[str, dict[str, np.ndarray]], overlap: str, feasible: np.ndarray) -> Placement:
    times = {}
    used = {}
    for t in tiers:
        traffic = sum(frac[o][t.name] * B[o] for o in objs)
        used[t.name] = sum(frac[o][t.name] * S[o] for o in objs)
        bw = t.effective_bandwidth_Bps
        with np.errstate(divide="ignore", invalid="ignore"):
            times[t.name] = np.where(traffic > 0, traffic / (bw * t.efficiency(traffic)) if bw > 0 else np.inf, 0.0)
    total = _combine(list(times.values()), overlap)
    return Placement(objs, tuple(t.name for t in tiers), frac, times, total, used, feasible)


def _lp(S: dict[str, np.ndarray], B: dict[str, np.ndarray], tiers: Sequence[MemoryTier], overlap: str,
        pinned: dict[str, str]) -> Placement:
    import cvxpy as cp

    objs = tuple(S)
    s = np.array([float(S[o][0]) for o in objs])
    b = np.array([float(B[o][0]) for o in objs])
    caps = np.array([t.capacity_bytes for t in tiers])
    # the efficiency of the bytes a tier would move if it held everything (a linear model)
    inv_bw = np.array([1.0 / (t.effective_bandwidth_Bps * float(t.efficiency(max(b.sum(), 1.0))))
                       if t.effective_bandwidth_Bps > 0 else 1e30 for t in tiers])
    if s.sum() > caps.sum() * (1 + 1e-12):
        feasible = np.array([False])
        frac = {o: {t.name: np.zeros(1) for t in tiers} for o in objs}
        return _finish(objs, S, B, tiers, frac, overlap, feasible)
    F = cp.Variable((len(objs), len(tiers)), bounds=[0.0, 1.0])
    cons = [cp.sum(F, axis=1) == 1, F.T @ s <= caps]
    for o, tn in pinned.items():
        cons.append(F[objs.index(o), [t.name for t in tiers].index(tn)] == 1)
    tier_time = cp.multiply(F.T @ b, inv_bw)
    obj = cp.sum(tier_time) if overlap == "sum" else cp.max(tier_time)
    prob = cp.Problem(cp.Minimize(obj / max(b.sum() * inv_bw.min(), 1e-30)), cons)
    try:
        prob.solve(solver=cp.HIGHS) if "HIGHS" in cp.installed_solvers() else prob.solve()
    except cp.error.SolverError:  # pragma: no cover - fall back to the default solver
        prob.solve()
    if prob.status not in ("optimal", "optimal_inaccurate"):
        feasible = np.array([False])
        frac = {o: {t.name: np.zeros(1) for t in tiers} for o in objs}
        return _finish(objs, S, B, tiers, frac, overlap, feasible)
    val = np.clip(np.asarray(F.value), 0.0, 1.0)
    frac = {o: {t.name: np.array([val[i, k]]) for k, t in enumerate(tiers)} for i, o in enumerate(objs)}
    return _finish(objs, S, B, tiers, frac, overlap, np.array([True]))
