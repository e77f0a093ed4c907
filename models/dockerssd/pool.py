"""One decode step of a distributed LLM on a pool of nodes, with the parallelism search,
vectorized over design points *and* hardware.

The step is the LLM block's batch-native inference step (:mod:`models.blocks.llm.step`:
per-layer GEMM/elementwise flops and bytes of ``layer_costs``, ring all-reduce per TP layer,
PP stages one after another within a step, no-overlap sum of compute, memory and
communication) on column hardware (``StepSystem.columns``: the node flop rate, tier
capacities and bandwidths and the network vary from point to point), evaluated for every
(TP, PP) layout of the pool at once.  Two choices of the block are named here: the
``ordered`` placement and ``layer`` activations (below).  ``tests/test_dockerssd_llm.py``
checks this module against ``models.blocks.llm.inference`` on fixed hardware.

A step at context ``ctx`` (paper section M6, L1072-1094):

* with a KV cache, each sequence adds one token: ``rows = b`` query rows attend to
  ``ctx`` cached keys, and the cache of the context is read (O(n) per token);
* without one, every step recomputes the whole context: ``rows = b * ctx`` (O(n^2) per
  sequence), nothing but weights and activations is read.

Parallelism (L1072): every (TP, PP) pair of powers of two with ``TP * PP`` dividing the
node count, TP dividing the head count and PP at most the layer count, DP the rest;
``b = ceil(batch / DP)`` sequences per replica, which either go through the stages
together (the block's ``together`` schedule) or as ``b`` one-sequence microbatches
pipelined through the stages (``microbatch``: ``b + PP - 1`` slots, weights read once per
microbatch).  The fastest feasible layout wins.

Placement on a node's two tiers (fast = DRAM, slow = swap SSD or flash; the block's
``ordered`` placement): activations, then weights, fill the fast tier and spill to the slow
tier, and the KV cache sits in the slow tier (``kv_second_tier``, as the article's H-Cache /
D-Cache are built: the SSD or flash is where the cache lives) or fills the fast tier first.
The activations held are one layer's working set for one sequence at a time (the block's
``layer`` activations: sequences of a replica go through a layer one after another and
attention is tiled, so no score matrix is held).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.blocks.llm.hardware import simple_network
from models.blocks.llm.step import StepSystem, held_sizes, layer_costs, pass_breakdown, place_columns, schedule

#: Powers of two for TP and PP, up to the largest pool (128 nodes, L1062).
POW2 = (1, 2, 4, 8, 16, 32, 64, 128)
MAX_NODES = 128
_PAIRS = np.asarray([(t, p) for t in POW2 for p in POW2 if t * p <= MAX_NODES], dtype=np.float64)
TP_CAND = _PAIRS[:, 0]
PP_CAND = _PAIRS[:, 1]
#: Ring collective scalars of the block's network (all-reduce moves 2 (n-1)/n of the data).
_RING = simple_network(size=2).ops
AR_SCALAR, AR_OFFSET = _RING["all_reduce"]
P2P_SCALAR, _ = _RING["p2p"]


def step(shape: dict[str, Any], *, nodes: Any, batch: Any, ctx: Any, kv_cache: Any, flops_per_s: Any,
         fast_cap_b: Any, fast_bps: Any, slow_cap_b: Any, slow_bps: Any, kv_second_tier: Any,
         net_bps: Any, net_latency_s: Any, relax: Any = False, bytes_per_elem: float = 2.0,
         pairs: tuple[tuple[int, int], ...] | None = None, microbatch: bool = True) -> dict[str, np.ndarray]:
    """Best decode step per point.  ``shape`` holds model columns (``layers``, ``hidden``,
    ``ffn``, ``ffn_in`` (ffn x 2 when gated), ``heads``, ``kv_heads``, ``head_dim``,
    ``vocab``); every argument broadcasts.  ``relax``: where no layout fits the tiers, take
    the fastest one anyway (its overflow timed at the slow tier) instead of NaN.  Returns
    columns: ``step_s``, ``compute_s``, ``memory_s``, ``comm_s``, ``tp``, ``pp``, ``dp``,
    ``feasible`` (1 when the chosen layout fits), per node
    ``weights_b``, ``kv_b``, ``act_b``, ``fast_traffic_b``, ``slow_traffic_b``, ``flops``,
    ``net_b`` per step, and ``need_b`` (bytes the best layout holds)."""
    c = columns(shape, nodes=nodes, batch=batch, ctx=ctx, kv_cache=kv_cache, flops_per_s=flops_per_s,
                fast_cap_b=fast_cap_b, fast_bps=fast_bps, slow_cap_b=slow_cap_b, slow_bps=slow_bps,
                kv_second_tier=kv_second_tier, net_bps=net_bps, net_latency_s=net_latency_s, relax=relax)
    cand = (TP_CAND, PP_CAND) if pairs is None else tuple(np.asarray(x, dtype=np.float64) for x in zip(*pairs))
    return best(layouts(c, bytes_per_elem, cand, microbatch), c["relax"] > 0.5)


def columns(shape: dict[str, Any], **args: Any) -> dict[str, np.ndarray]:
    """Shape and hardware as float columns of shape (points, 1), or (1, 1) for a value all
    points share (it broadcasts), and ``points`` (zeros, (points, 1)) so that every per-layout
    column has the points' length; Model.run keeps the batches cache-sized (DockerSsdLlm.eval_chunk)."""
    arrs = {k: np.asarray(v, dtype=np.float64) for k, v in {**shape, **args}.items()}
    bshape = np.broadcast_shapes(*(a.shape for a in arrs.values()))
    n = int(np.prod(bshape)) if bshape else 1
    out = {}
    for k, a in arrs.items():
        if a.size == 1:
            out[k] = a.reshape(1, 1)
        elif a.shape == bshape:
            out[k] = a.reshape(n, 1)
        else:
            out[k] = np.broadcast_to(a, bshape).reshape(n, 1)
    out["points"] = np.zeros((n, 1))
    return out


def layouts(c: dict[str, np.ndarray], bpe: float, cand: tuple[np.ndarray, np.ndarray],
            microbatch: bool = True) -> dict[str, Any]:
    """Every (TP, PP) layout of every point, both schedules: (points, candidates) columns
    of the block's step (``together``) and of the pipelined microbatches (``microbatch``)."""
    tp, pp = cand[0][None, :], cand[1][None, :]
    nodes, ctx = c["nodes"], c["ctx"]
    valid = (np.mod(nodes, tp * pp) == 0) & (np.mod(c["heads"], tp) == 0) & (pp <= c["layers"]) & (c["points"] == 0)
    dp = nodes / (tp * pp)
    b = np.ceil(c["batch"] / dp)
    Ls = np.ceil(c["layers"] / pp)
    cache = c["kv_cache"] > 0.5
    new_tok = np.where(cache, 1.0, ctx)  # without a cache the step recomputes the context
    hw = StepSystem.columns(flops_per_s=c["flops_per_s"], tiers=(("fast", c["fast_cap_b"], c["fast_bps"]),
                                                                 ("slow", c["slow_cap_b"], c["slow_bps"])),
                            net_bps=c["net_bps"], net_latency_s=c["net_latency_s"])
    costs = layer_costs(c, rows=b * new_tok, ctx=ctx, cross=0.0, tp=tp, bpe=bpe, mat=hw.mat, vec=hw.vec)
    held = held_sizes(c, b=b, tp=tp, pp=pp, kv_tokens=ctx, cross_tokens=0.0, span=new_tok, bpe=bpe, kv_cache=cache,
                      activations="layer", costs=costs)
    pl = place_columns(held, {}, hw.tiers, method="ordered", kv_last=c["kv_second_tier"] > 0.5)
    br = pass_breakdown(c, hw, pl["fractions"], b=b, new_tok=new_tok, ctx=ctx, cross=0.0, layers=Ls, tp=tp, pp=pp,
                        bpe=bpe, with_head=True, kv_read=held["kv_cache"], costs=costs)
    together = schedule(br, hw, pp=pp)
    mb = schedule(br, hw, pp=pp, how="microbatch", b=b, layers=Ls, tp=tp, fractions=pl["fractions"])
    if not microbatch:
        mb = {**mb, "step_s": np.full(np.broadcast(mb["step_s"], together["step_s"]).shape, np.inf)}
    msg = br["msg_b"]
    net_b = np.where(tp > 1, Ls * 2 * (msg * AR_SCALAR * (1 + AR_OFFSET / np.maximum(tp, 2))), 0.0)
    return {"together": together, "microbatch": mb, "valid": valid, "feasible": valid & pl["feasible"],
            "tp": tp, "pp": pp, "dp": dp, "b": b, "weights_b": held["weights"], "kv_b": held["kv_cache"],
            "act_b": held["activations"], "flops": br["flops"], "net_b": net_b + np.where(pp > 1, msg, 0.0)}


#: Layouts whose step times agree to this relative tolerance tie (equal in exact arithmetic:
#: e.g. the two schedules at one sequence per replica, or layouts whose times are set by the
#: same slow-tier bytes); the first in candidate order wins, so rounding noise never decides.
TIE_REL = 1e-12


def first_fastest(t: np.ndarray) -> np.ndarray:
    """Per row, the first column within ``TIE_REL`` of the row's minimum (0 when all are inf)."""
    lo = np.min(t, axis=1, keepdims=True)
    return np.argmax(t <= lo * (1 + TIE_REL), axis=1)


def best(lay: dict[str, Any], relax: Any, keep: Any = None, time_only: bool = False) -> dict[str, np.ndarray]:
    """The fastest layout that fits, per point; where none fits and ``relax`` (a (points, 1)
    or (1, 1) bool column) is set, the fastest layout (its overflow timed at the slow tier's
    bandwidth); NaN where none is taken.  ``keep``: a (1, candidates) mask of the layouts to
    choose among; ``time_only``: return ``step_s`` alone."""
    a, m = lay["together"], lay["microbatch"]
    valid = lay["valid"] if keep is None else lay["valid"] & keep
    feasible = lay["feasible"] if keep is None else lay["feasible"] & keep
    n, k = valid.shape
    total = np.concatenate((np.broadcast_to(a["step_s"], (n, k)), np.broadcast_to(m["step_s"], (n, k))), axis=1)
    fit_t = np.where(np.tile(feasible, 2), total, np.inf)
    any_t = np.where(np.tile(valid, 2), total, np.inf)
    best_fit, best_any = first_fastest(fit_t), first_fastest(any_t)
    i = np.arange(n)
    fits = np.isfinite(fit_t[i, best_fit])
    j = np.where(fits, best_fit, best_any)
    ok = fits | (np.asarray(relax).reshape(-1) & np.isfinite(any_t[i, best_any]))
    nan = np.where(ok, 1.0, np.nan)
    if time_only:
        return {"step_s": total[i, j] * nan}
    # the chosen entries of every column at once: schedule columns over (points, 2 x candidates)
    # (together, then microbatch), layout columns over (points, candidates)
    sched = _table(n, k, [(a["compute_s"], m["compute_s"]), (a["memory_s"], m["memory_s"]), (a["comm_s"], m["comm_s"]),
                          (a["tier_b"][0], m["tier_b"][0]), (a["tier_b"][1], m["tier_b"][1]), (1.0, lay["b"])])[:, i, j] * nan
    jk = np.where(j < k, j, j - k)  # the layout, whichever schedule
    keys = ("tp", "pp", "dp", "weights_b", "kv_b", "act_b", "flops", "net_b")
    lay_t = _table(n, k, [(lay[key],) for key in keys])[:, i, jk] * nan
    out = {"step_s": total[i, j] * nan, "compute_s": sched[0], "memory_s": sched[1], "comm_s": sched[2]}
    out.update({key: lay_t[f] for f, key in enumerate(keys[:3])})
    out.update(microbatches=sched[5], feasible=fits.astype(np.float64))
    out.update({key: lay_t[f] for f, key in enumerate(keys[3:6], start=3)})
    out["need_b"] = lay_t[3] + lay_t[4] + lay_t[5]
    out.update(fast_traffic_b=sched[3], slow_traffic_b=sched[4], flops=lay_t[6], net_b=lay_t[7])
    return out


def _table(n: int, k: int, cols: list[tuple[Any, ...]]) -> np.ndarray:
    """Columns that broadcast to (n, k), one tuple per row of the result, stacked into one
    (len(cols), n, k x len(tuple)) array (a tuple's columns side by side)."""
    w = len(cols[0])
    out = np.empty((len(cols), n, k * w))
    for f, xs in enumerate(cols):
        for s, x in enumerate(xs):
            out[f, :, s * k:(s + 1) * k] = x
    return out
