"""LLM inference: prefill, then autoregressive decode with or without a KV cache.

Calculon models a forward pass of whole sequences only (``training=false``).  Serving
needs more, in the same spirit (per-layer flops and bytes, efficiency-by-size tables,
network collectives):

* **Prefill** of ``prompt`` tokens per sequence: every block's GEMMs run on ``batch*prompt``
  rows; the attention score/context matmuls cost ``prompt**2`` per head (causal masking
  is not exploited, as in Calculon); the LM head runs for the last position only.
  TTFT = prefill time (+ the encoder for encoder-decoder models).
* **Decode with a KV cache**: one token per sequence per step; weights are streamed once
  per step and the cache of the context is read (and one token's K/V written).
  TPOT = time of one step at the mean context; the total over ``gen`` steps is summed
  exactly for step times quadratic in the context (three-point rule).
* **Decode without a KV cache**: every step recomputes the forward over the whole
  context (``O(n**2)`` over the generation).

Per step, the time of a pipeline stage is ``compute (+) memory + TP communication``, where
compute is ``sum flops/(peak*eff(flops))`` per GEMM (matrix engine) and per
elementwise op (vector engine), memory is the placement's tier transfer time
(:mod:`models.blocks.llm.placement`; weights, KV cache and activations over the device's
tiers, OS swap with its page-fault cost) and ``(+)`` is the system's processing mode
(``no_overlap``: sum, ``roofline``: max).  TP adds two all-reduces of the activations per
block; PP stages run one after another for a step (no cross-step pipelining) and add one
point-to-point message per boundary.

Inputs may be columns (batch, prompt, gen, TP, PP): one call evaluates a whole sweep.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dse.errors import DseError
from models.blocks.llm.hardware import DTYPE_BYTES, System, canonical_dtype
from models.blocks.llm.models import ModelShape
from models.blocks.llm.placement import infeasible_message, place

def _pass_costs(model: ModelShape, *, rows: Any, ctx: Any, cross: Any, tp: Any, bpe: float, mat: Any, vec: Any,
                encoder: bool = False) -> dict[str, Any]:
    """Per-block costs on one device for ``rows`` query rows (batch*new tokens) attending to
    ``ctx`` keys per row (and ``cross`` cross-attention keys)."""
    h, hd = model.hidden, model.head_dim
    heads_d = model.heads / tp
    kv_d = np.maximum(model.kv_heads / tp, 1.0)
    q = model.heads * hd
    kvc = kv_d * hd  # K (or V) columns per device
    mlp_in = model.ffn * (2 if model.gated_mlp else 1) / tp
    gemms = [
        2 * rows * h * (q / tp + 2 * kvc),  # fused QKV projection
        2 * rows * (q / tp) * h,  # attention output projection
        2 * rows * h * mlp_in,  # MLP in (gate+up when gated)
        2 * rows * (model.ffn / tp) * h,  # MLP out
        2 * rows * ctx * hd * heads_d,  # Q K^T
        2 * rows * ctx * hd * heads_d,  # P V
    ]
    if np.any(np.asarray(cross) > 0):
        has = np.asarray(cross) > 0
        gemms += [np.where(has, 2 * rows * h * q / tp * 2, 0.0),  # cross Q and output projections
                  np.where(has, 2 * 2 * rows * cross * hd * heads_d, 0.0)]
    vec_flops = (2 * 9 * rows * h  # two layer norms
                 + 5 * rows * ctx * heads_d + 5 * rows * cross * heads_d  # softmax
                 + 8 * rows * model.ffn / tp  # activation
                 + 4 * rows * h)  # residuals and dropout
    t_mat = sum(mat.time(g) for g in gemms)
    t_vec = vec.time(vec_flops)
    w = (h * (q / tp + 2 * kvc) + (q / tp) * h + h * mlp_in + (model.ffn / tp) * h + 4 * h) * bpe
    w = w + np.where(np.asarray(cross) > 0, (2 * h * q / tp + 2 * h * kvc) * bpe, 0.0)
    flops = sum(np.asarray(g, dtype=np.float64) for g in gemms) + vec_flops
    act_io = rows * (6 * h + 2 * mlp_in + 2 * model.ffn / tp) * bpe + rows * (ctx + cross) * heads_d * bpe * 2
    return {"t_mat": t_mat, "t_vec": t_vec, "weight_bytes": w, "flops": flops, "act_traffic": act_io,
            "kv_row_bytes": 2 * kvc * bpe}


def inference(
    model: ModelShape, system: System, *, batch: Any = 1, prompt: Any = None, gen: Any = 128, tp: Any = 1,
    pp: Any = 1, datatype: str = "float16", kv_cache: bool = True, placement: str = "greedy",
    overlap: str = "sum", net: int = 0, pipeline_net: int | None = None, encoder_chunks: Any = 1,
    raise_infeasible: bool = True,
) -> dict[str, np.ndarray]:
    """Serve ``batch`` sequences of ``prompt`` tokens, generating ``gen`` tokens each.

    Returns columns: ``ttft_s``, ``tpot_s``, ``decode_s`` (all ``gen`` steps),
    ``tokens_per_s`` (``batch*gen`` over TTFT + decode), ``decode_tokens_per_s``
    (``batch/tpot``), per-device bytes (``weight_bytes``, ``kv_bytes``, ``act_bytes``,
    ``mem_bytes``), bytes held per tier (``tier_<name>_bytes``), the decode step's split
    (``step_compute_s``, ``step_memory_s``, ``step_comm_s``), ``step_flops`` and
    ``step_bytes`` per device, and ``feasible``.  ``placement`` is ``greedy`` or ``lp``
    (one configuration); ``overlap`` is how tier transfers combine (``sum``/``max``).
    """
    datatype = canonical_dtype(datatype)
    mat, vec = system.engines(datatype)
    bpe = float(DTYPE_BYTES[datatype])
    prompt = model.seq if prompt is None else prompt
    b = np.asarray(batch, dtype=np.float64)
    P = np.asarray(prompt, dtype=np.float64)
    G = np.asarray(gen, dtype=np.float64)
    tp_a = np.asarray(tp, dtype=np.float64)
    pp_a = np.asarray(pp, dtype=np.float64)
    chunks = np.asarray(encoder_chunks, dtype=np.float64)
    shape = np.broadcast(b, P, G, tp_a, pp_a, chunks).shape
    n = int(np.prod(shape)) if shape else 1
    b, P, G, tp_a, pp_a, chunks = (np.broadcast_to(x, shape).reshape(n) for x in (b, P, G, tp_a, pp_a, chunks))
    if np.any(b < 1) or np.any(P < 1) or np.any(G < 0) or np.any(tp_a < 1) or np.any(pp_a < 1):
        raise DseError("batch, prompt, tp and pp must be >= 1 and gen >= 0")
    if np.any(model.heads % tp_a != 0):
        raise DseError(f"tp must divide the {model.heads} attention heads of {model.name}")
    if net >= len(system.networks) or (pipeline_net is not None and pipeline_net >= len(system.networks)):
        raise DseError(f"network index out of range: system {system.name} has {len(system.networks)}")
    tpn = system.networks[net]
    ppn = system.networks[net if pipeline_net is None else pipeline_net]
    enc = model.encoder_layers > 0
    dec_layers = np.ceil(model.layers / pp_a)
    enc_layers = np.ceil(model.encoder_layers / pp_a) if enc else 0.0

    # ---- sizes per device (first stage holds the embedding, last the head: average them)
    blk = _pass_costs(model, rows=b, ctx=P, cross=P if enc else 0.0, tp=tp_a, bpe=bpe, mat=mat, vec=vec)
    enc_blk = _pass_costs(model, rows=b, ctx=P, cross=0.0, tp=tp_a, bpe=bpe, mat=mat, vec=vec) if enc else None
    embed = model.vocab * model.hidden * bpe / tp_a * (1 if enc else 2) / pp_a
    weight_bytes = dec_layers * blk["weight_bytes"] + (enc_layers * enc_blk["weight_bytes"] if enc else 0.0) + embed
    max_ctx = P + G if not enc else G
    kv_row = blk["kv_row_bytes"]
    kv_bytes = np.where(kv_cache, dec_layers * b * max_ctx * kv_row, 0.0)
    if enc:  # cross-attention keys/values of the encoded prompt are kept in any case
        kv_bytes = kv_bytes + dec_layers * b * P * kv_row
    # working activations: the largest pass (the prefill, or a no-cache step over the whole context)
    span = P if (kv_cache or enc) else P + G
    mlp_cols = model.ffn * (2 if model.gated_mlp else 1) / tp_a
    act_bytes = (b * span * (4 * model.hidden + 2 * mlp_cols) * bpe
                 + b * (model.heads / tp_a) * span * span * bpe)

    # ---- placement of one decode step's traffic
    mean_ctx = (P + (G + 1) / 2) if not enc else (G + 1) / 2
    cross_kv = dec_layers * b * (P if enc else 0.0) * kv_row
    kv_traffic = np.where(kv_cache, dec_layers * b * mean_ctx * kv_row + cross_kv, cross_kv)
    sizes = {"activations": act_bytes, "weights": weight_bytes, "kv_cache": kv_bytes}
    # activation bytes one decode step reads and writes (each block's inputs/outputs and
    # attention scores for the batch's new tokens), the same count `_pass_costs` charges
    heads_d = model.heads / tp_a
    step_act_traffic = dec_layers * (
        b * (6 * model.hidden + 2 * mlp_cols + 2 * model.ffn / tp_a) * bpe
        + b * (mean_ctx + (P if enc else 0.0)) * heads_d * bpe * 2
    )
    traffic = {"activations": step_act_traffic, "weights": weight_bytes, "kv_cache": kv_traffic}
    tiers = system.tiers
    if placement == "lp":
        if n != 1:
            raise DseError("placement='lp' evaluates one configuration; use greedy for columns")
        pl = place(sizes, traffic, tiers, method="lp", overlap=overlap, raise_infeasible=False)
    else:
        pl = place(sizes, traffic, tiers, method="greedy", overlap=overlap, raise_infeasible=False)
    feasible = pl.feasible
    if raise_infeasible and not feasible.all():
        i = int(np.nonzero(~feasible)[0][0])
        raise DseError(infeasible_message({k: float(np.broadcast_to(v, (n,))[i]) for k, v in sizes.items()}, tiers))

    def mem_time(w_b: Any, kv_b: Any, act_b: Any) -> Any:
        """Transfer time of a pass moving these bytes, with the placement's tier split."""
        per_tier = []
        for t in tiers:
            moved = (pl.fractions["weights"][t.name] * w_b + pl.fractions["kv_cache"][t.name] * kv_b
                     + pl.fractions["activations"][t.name] * act_b)
            per_tier.append(np.asarray(t.time(moved)))
        return np.sum(per_tier, axis=0) if overlap == "sum" else np.max(per_tier, axis=0)

    def tp_comm(rows: Any, layers: Any) -> Any:
        size = rows * model.hidden * bpe
        ar = np.where(tp_a > 1, tpn.time("all_reduce", size, np.maximum(tp_a, 2)), 0.0)
        return layers * 2 * ar

    def pp_comm(rows: Any) -> Any:
        return np.where(pp_a > 1, (pp_a - 1) * ppn.time("p2p", rows * model.hidden * bpe, 2), 0.0)

    def head_time(rows: Any) -> tuple[Any, Any, Any]:
        flops = 2 * rows * model.hidden * model.vocab / tp_a
        return mat.time(flops), flops, model.vocab * model.hidden * bpe / tp_a

    def step(new_tok: Any, ctx: Any, cross: Any, layers: Any, with_head: bool, kv_read: Any = 0.0) -> tuple[Any, Any, Any, Any, Any]:
        """(time, compute, memory, comm, flops) of one pass on the first stage x PP stages."""
        rows = b * new_tok
        c = _pass_costs(model, rows=rows, ctx=ctx, cross=cross, tp=tp_a, bpe=bpe, mat=mat, vec=vec)
        comp = layers * (c["t_mat"] + c["t_vec"])
        flops = layers * c["flops"]
        w_b = layers * c["weight_bytes"]
        a_b = layers * c["act_traffic"]
        if with_head:
            ht, hf, hb = head_time(b)
            comp = comp + ht / pp_a  # one stage has the head; spread so per-stage sums add up
            flops = flops + hf / pp_a
            w_b = w_b + hb / pp_a
        memt = mem_time(w_b, kv_read, a_b)
        comm = tp_comm(rows, layers)
        per_stage = system.combine(comp, memt) + comm
        total = pp_a * per_stage + pp_comm(rows)
        return total, comp * pp_a, memt * pp_a, comm * pp_a + pp_comm(rows), flops * pp_a

    # ---- prefill (TTFT)
    if enc:
        chunk_len = np.maximum(np.floor(P / chunks), 1.0)
        e_t, *_ = step(P, chunk_len, 0.0, enc_layers, False)
        d_t, *_ = step(1.0, 1.0, P, dec_layers, True, kv_read=cross_kv)
        ttft = e_t + d_t
    else:
        ttft, *_ = step(P, P, 0.0, dec_layers, True, kv_read=np.where(kv_cache, dec_layers * b * P * kv_row, 0.0))

    # ---- decode
    def decode_at(ctx: Any) -> tuple[Any, ...]:
        if kv_cache:
            self_ctx = ctx
            kv_read = dec_layers * b * (ctx + (P if enc else 0.0)) * kv_row
            return step(1.0, self_ctx, P if enc else 0.0, dec_layers, True, kv_read=kv_read)
        # no cache: recompute the whole context each step
        kv_read = dec_layers * b * (P if enc else 0.0) * kv_row
        return step(ctx, ctx, P if enc else 0.0, dec_layers, True, kv_read=kv_read)

    base_ctx = P if not enc else 0.0
    mid = base_ctx + (G + 1) / 2
    d = np.maximum(G / 4, 0.5)
    f0 = decode_at(mid)
    fm = decode_at(np.maximum(mid - d, 1.0))[0]
    fp = decode_at(mid + d)[0]
    curv = (fm + fp - 2 * f0[0]) / (2 * d * d)
    decode_total = G * (f0[0] + curv * (G * G - 1) / 12)
    tpot = np.where(G > 0, decode_total / np.maximum(G, 1), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        tokens_per_s = b * G / (ttft + decode_total)
        decode_tps = np.where(tpot > 0, b / tpot, 0.0)
    out = {
        "ttft_s": ttft, "tpot_s": tpot, "decode_s": decode_total, "tokens_per_s": tokens_per_s,
        "decode_tokens_per_s": decode_tps, "weight_bytes": weight_bytes, "kv_bytes": kv_bytes,
        "act_bytes": act_bytes, "mem_bytes": weight_bytes + kv_bytes + act_bytes,
        "step_s": f0[0], "step_compute_s": f0[1], "step_memory_s": f0[2], "step_comm_s": f0[3],
        "step_flops": f0[4], "step_bytes": weight_bytes + kv_traffic,
        "feasible": feasible.astype(bool), "devices": tp_a * pp_a,
    }
    for t in tiers:
        out[f"tier_{t.name}_bytes"] = pl.used_bytes[t.name]
    return {k: np.broadcast_to(np.asarray(v, dtype=np.float64 if k != "feasible" else bool), (n,)).reshape(shape)
            for k, v in out.items()}
