"""One decode step of a distributed LLM on a pool of nodes, with the parallelism search,
vectorized over design points *and* hardware.

This is the LLM block's inference accounting (``models.blocks.llm.inference``: per-layer
GEMM/elementwise flops and bytes of ``_pass_costs``, greedy tier placement, ring
all-reduce per TP layer, PP stages run one after another within a step, no-overlap sum of
compute, memory and communication) restated on columns, because here the hardware itself
(node flop rate, tier capacities and bandwidths) varies from point to point while the
block takes one ``System`` per call.  ``tests/test_dockerssd_llm.py`` checks this module
against ``models.blocks.llm.inference`` on fixed hardware.

A step at context ``ctx`` (paper section M6, L1072-1094):

* with a KV cache, each sequence adds one token: ``rows = b`` query rows attend to
  ``ctx`` cached keys, and the cache of the context is read (O(n) per token);
* without one, every step recomputes the whole context: ``rows = b * ctx`` (O(n^2) per
  sequence), nothing but weights and activations is read.

Parallelism (L1072): every (TP, PP) pair of powers of two with ``TP * PP`` dividing the
node count, TP dividing the head count and PP at most the layer count, DP the rest;
``b = ceil(batch / DP)`` sequences per replica, which either go through the stages
together (the block's step: PP stages one after another) or as ``b`` one-sequence
microbatches pipelined through the stages (``b + PP - 1`` slots, weights read once per
microbatch).  The fastest feasible layout wins.

Placement on a node's two tiers (fast = DRAM, slow = swap SSD or flash): activations, then
weights, fill the fast tier and spill to the slow tier, and the KV cache sits in the slow tier (``kv_second_tier``, as the article's H-Cache / D-Cache are built:
the SSD or flash is where the cache lives) or fills the fast tier first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.blocks.llm.hardware import simple_network

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
    cols = {k: np.asarray(v, dtype=np.float64) for k, v in shape.items()}
    args = dict(nodes=nodes, batch=batch, ctx=ctx, kv_cache=kv_cache, flops_per_s=flops_per_s, fast_cap_b=fast_cap_b,
                fast_bps=fast_bps, slow_cap_b=slow_cap_b, slow_bps=slow_bps, kv_second_tier=kv_second_tier,
                net_bps=net_bps, net_latency_s=net_latency_s, relax=relax)
    arrs = {k: np.asarray(v, dtype=np.float64) for k, v in {**cols, **args}.items()}
    n = int(np.broadcast(*arrs.values()).size) if arrs else 1
    flat = {k: np.broadcast_to(v, np.broadcast(*arrs.values()).shape).reshape(n) for k, v in arrs.items()}
    cand = (TP_CAND, PP_CAND) if pairs is None else tuple(np.asarray(x, dtype=np.float64) for x in zip(*pairs))
    # (points, 1) columns against (1, candidates) rows; Model.run keeps the batches
    # cache-sized (DockerSsdLlm.eval_chunk)
    return _step_columns({k: v[:, None] for k, v in flat.items()}, bytes_per_elem, cand, microbatch)


def _step_columns(c: dict[str, np.ndarray], bpe: float, cand: tuple[np.ndarray, np.ndarray],
                microbatch: bool) -> dict[str, np.ndarray]:
    """(points, 1) columns in, best candidate per point out."""
    tp, pp = cand[0][None, :], cand[1][None, :]
    L, h, ffn, ffn_in = c["layers"], c["hidden"], c["ffn"], c["ffn_in"]
    heads, kvh, hd, vocab = c["heads"], c["kv_heads"], c["head_dim"], c["vocab"]
    nodes, ctx = c["nodes"], c["ctx"]
    cache = c["kv_cache"] > 0.5
    valid = (np.mod(nodes, tp * pp) == 0) & (np.mod(heads, tp) == 0) & (pp <= L)
    dp = nodes / (tp * pp)
    b = np.ceil(c["batch"] / dp)
    Ls = np.ceil(L / pp)
    rows = np.where(cache, b, b * ctx)

    # --- one layer on one device (block: inference._pass_costs)
    q_d = heads * hd / tp
    kvc = np.maximum(kvh / tp, 1.0) * hd  # K (or V) columns per device
    w_el = h * (q_d + 2 * kvc) + q_d * h + h * ffn_in / tp + ffn / tp * h  # QKV, O, MLP in, MLP out
    gemm = 2 * rows * w_el + 4 * rows * ctx * hd * (heads / tp)  # + Q K^T and P V
    vec = rows * (22 * h + 5 * ctx * heads / tp + 8 * ffn / tp)  # norms, softmax, activation, residuals
    w_layer_b = (w_el + 4 * h) * bpe
    act_io_b = rows * (6 * h + 2 * ffn_in / tp + 2 * ffn / tp) * bpe + rows * ctx * heads / tp * bpe * 2
    kv_row_b = 2 * kvc * bpe

    # --- a pipeline stage: its layers plus a 1/PP share of the LM head (last position only)
    head_flops = 2 * b * h * vocab / tp
    flops = Ls * (gemm + vec) + head_flops / pp
    compute = flops / c["flops_per_s"]
    w_traffic = Ls * w_layer_b + vocab * h * bpe / tp / pp
    kv_held = np.where(cache, Ls * b * ctx * kv_row_b, 0.0)
    kv_traffic = kv_held  # the whole cache of the context is read once per step
    act_traffic = Ls * act_io_b
    w_held = Ls * w_layer_b + 2 * vocab * h * bpe / tp / pp  # embedding + LM head, averaged over stages
    # one layer's working set for one sequence at a time (assumption: sequences of a replica
    # go through a layer one after another and attention is tiled, so no score matrix is held)
    act_held = rows / b * (4 * h + 2 * ffn_in / tp) * bpe

    # --- placement (block's greedy order by traffic per byte): activations, then weights,
    # fill the fast tier and spill to the slow one; the KV cache sits in the slow tier
    # (second_tier) or takes what is left of the fast tier first
    cap = c["fast_cap_b"]
    a_fast = np.minimum(act_held, cap)
    w_fast = np.minimum(w_held, cap - a_fast)
    left = cap - a_fast - w_fast
    kv_fast = np.where(c["kv_second_tier"] > 0.5, 0.0, np.minimum(kv_held, left))
    slow_held = (act_held - a_fast) + (w_held - w_fast) + (kv_held - kv_fast)
    feasible = valid & (slow_held <= c["slow_cap_b"] * (1 + 1e-12))
    with np.errstate(divide="ignore", invalid="ignore"):
        fa = np.where(act_held > 0, a_fast / act_held, 1.0)
        fw = np.where(w_held > 0, w_fast / w_held, 1.0)
        fkv = np.where(kv_held > 0, kv_fast / kv_held, 1.0)
    fast_tr = fa * act_traffic + fw * w_traffic + fkv * kv_traffic
    slow_tr = (1 - fa) * act_traffic + (1 - fw) * w_traffic + (1 - fkv) * kv_traffic

    # --- network: two all-reduces per layer under TP, one message per PP boundary
    msg = rows * h * bpe
    ar_b = msg * AR_SCALAR * (1 + AR_OFFSET / np.maximum(tp, 2))
    lat, bw = c["net_latency_s"], c["net_bps"]
    fbw, sbw = c["fast_bps"], c["slow_bps"]

    def mem_time(f_tr: np.ndarray, s_tr: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return f_tr / fbw + np.where(s_tr > 0, s_tr / sbw, 0.0)

    # (a) the block's step: the replica's b sequences go through the stages together
    memory = mem_time(fast_tr, slow_tr)
    tp_comm = np.where(tp > 1, Ls * 2 * (lat + ar_b / bw), 0.0)
    pp_comm = np.where(pp > 1, (pp - 1) * (lat + msg * P2P_SCALAR / bw), 0.0)
    total_a = pp * (compute + memory + tp_comm) + pp_comm
    # (b) one sequence per microbatch, pipelined through the stages (b + PP - 1 slots);
    # every microbatch reads the stage's weights again
    mb_f = fa * act_traffic / b + fw * w_traffic + fkv * kv_traffic / b
    mb_s = (1 - fa) * act_traffic / b + (1 - fw) * w_traffic + (1 - fkv) * kv_traffic / b
    mb_mem = mem_time(mb_f, mb_s)
    mb_comm = np.where(tp > 1, Ls * 2 * (lat + ar_b / b / bw), 0.0) + np.where(pp > 1, lat + msg / b * P2P_SCALAR / bw, 0.0)
    span_b = b + pp - 1
    total_b = span_b * (compute / b + mb_mem + mb_comm)

    # fastest layout that fits; where none fits and the capacity check is off, the fastest
    # layout with the overflow timed at the slow tier's bandwidth
    nk = np.broadcast(total_a, total_b).shape

    def both(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.concatenate((np.broadcast_to(x, nk), np.broadcast_to(y, nk)), axis=1)

    if not microbatch:
        total_b = np.full(nk, np.inf)
    total = both(total_a, total_b)
    fit_t = np.where(both(feasible, feasible), total, np.inf)
    any_t = np.where(both(valid, valid), total, np.inf)
    best_fit, best_any = np.argmin(fit_t, axis=1), np.argmin(any_t, axis=1)
    i = np.arange(total.shape[0])
    fits = np.isfinite(fit_t[i, best_fit])
    best = np.where(fits, best_fit, best_any)
    ok = fits | ((c["relax"][:, 0] > 0.5) & np.isfinite(any_t[i, best_any]))

    def pick(x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        return both(x, x if y is None else y)[i, best]

    nan = np.where(ok, 1.0, np.nan)
    return {
        "step_s": pick(total_a, total_b) * nan,
        "compute_s": pick(pp * compute, span_b * compute / b) * nan,
        "memory_s": pick(pp * memory, span_b * mb_mem) * nan,
        "comm_s": pick(pp * tp_comm + pp_comm, span_b * mb_comm) * nan,
        "tp": pick(tp) * nan, "pp": pick(pp) * nan, "dp": pick(dp) * nan,
        "microbatches": pick(np.ones_like(b), b) * nan,
        "feasible": fits.astype(np.float64),
        "weights_b": pick(w_held) * nan, "kv_b": pick(kv_held) * nan, "act_b": pick(act_held) * nan,
        "need_b": pick(w_held + kv_held + act_held) * nan,
        "fast_traffic_b": pick(fast_tr, b * mb_f) * nan, "slow_traffic_b": pick(slow_tr, b * mb_s) * nan,
        "flops": pick(flops) * nan,
        "net_b": pick(np.where(tp > 1, Ls * 2 * ar_b, 0.0) + np.where(pp > 1, msg, 0.0)) * nan,
    }
