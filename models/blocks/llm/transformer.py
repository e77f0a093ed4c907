"""Per-layer accounting of one transformer block, vectorized over configurations.

This is the bookkeeping Calculon does per layer (calculon-ai/calculon,
``calculon/llm/layers.py`` and the block builders in ``calculon/llm/llm.py``): for each
layer of a Megatron-style block (fork, layer norm, TP communication, Q/K/V projections,
the two batched matmuls of attention, softmax, dropout, output projection, residual and
the two MLP matrices with their activation) we record

* flops of the forward pass, the activation-gradient pass and the weight-gradient pass,
* elements read/written (inputs, outputs), weights, weight gradients, optimizer state,
* activation elements kept for the backward pass and activation gradients,
* whether the layer is recomputed (activation recompute) or its TP communication redone,
* whether its activation is shared with another layer (``reused``) or stored at all.

All sizes are in *elements*; multiplying by bytes per element happens in
:mod:`models.blocks.llm.training`.  Every quantity is a numpy column, one entry per
configuration, so a whole parallelism search is one pass through ~30 layer records.

Attention variants: multi-head (``kv_heads == heads``), multi-query (``kv_heads == 1``,
K/V projections not split by TP, as in Calculon) and grouped-query (K/V columns per TP
rank ``kv_heads*head_dim/TP`` when ``kv_heads`` divides evenly, otherwise one head per
rank).  A gated MLP (SwiGLU) doubles the first MLP matrix.

Serving (one token per step, KV cache, embeddings and LM head) is costed per layer in
:func:`models.blocks.llm.step.layer_costs` with the same flop/byte conventions.

Layers that do not exist in a configuration (e.g. the separate Q/K/V projections when TP
communication is overlapped with the fused QKV GEMM) are present with ``active`` False;
the union is ordered so that the active layers keep Calculon's order, which matters for
its running-sum recompute statistics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

# layer kinds (how memory traffic and stored activations are counted)
BASIC, DROPOUT, ELEMWISE_ACT, FORK, TPCOMM, LINOV = "basic", "dropout", "act", "fork", "tpcomm", "linov"


@dataclass
class Layer:
    """One layer's counts (element units), each a scalar or a column."""

    name: str
    kind: str
    active: Any
    matrix: bool = False
    fw: Any = 0
    ag: Any = 0
    wg: Any = 0
    inp: Any = 0
    out: Any = 0
    act: Any = 0
    actg: Any = 0
    w: Any = 0
    wgrads: Any = 0
    opt: Any = 0
    recompute: Any = False
    recomm: Any = False
    reused: Any = False
    stored: Any = True
    out_stored: Any = True
    users: int = 0
    conj: bool = False  # TP comm direction: False = identity/all-gather forward, True = all-reduce/reduce-scatter
    comm: Any = 0  # TP communication elements (TPComm layers)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class BlockInputs:
    """Columns describing one block per configuration (all integer element counts)."""

    mbs: Any
    seq: Any
    hidden: Any
    ffn: Any
    heads: Any
    head_dim: Any
    kv_heads: Any
    tp: Any
    recompute: Any  # 0 none, 1 attn_only, 2 full
    comm: Any  # 0 ar, 1 p2p_rs_ag, 2 rs_ag
    overlap: Any  # 0 none, 1 ring, 2 pipe
    redo: Any  # seq_par_ag_redo
    fused: Any  # fused activation
    gated: Any = False


def _linear(name: str, active: Any, m: Any, n: Any, k: Any, **flags: Any) -> Layer:
    return Layer(name, BASIC, active, matrix=True, fw=2 * m * n * k, ag=2 * m * n * k, wg=2 * m * n * k,
                 inp=m * n, out=m * k, act=m * n, actg=m * k, w=n * k, wgrads=n * k, opt=2 * n * k, **flags)


def _linear_overlapped(name: str, active: Any, m: Any, n: Any, k: Any, conj: bool, rs_ag: Any, tp: Any,
                       **flags: Any) -> Layer:
    """A GEMM whose TP all-gather / reduce-scatter / all-reduce is tiled and overlapped with it."""
    if not conj:  # all-gather (rs_ag) or identity-forward/all-reduce-backward
        k2 = k // tp
        n2 = n
        act = np.where(rs_ag, m * n // tp, m * n)
        actg = np.where(rs_ag, m * k2, 0)
    else:  # reduce-scatter (rs_ag) or all-reduce
        n2 = n // tp
        k2 = k
        act = np.where(rs_ag, m * n2, 0)
        actg = np.where(rs_ag, 2 * (m * k // tp), 2 * m * k)
    f = 2 * m * n2 * k2
    return Layer(name, LINOV, active, matrix=True, fw=f, ag=f, wg=f, inp=m * n2, out=m * k2, act=act, actg=actg,
                 w=n2 * k2, wgrads=n2 * k2, opt=2 * n2 * k2, conj=conj, **flags)


def _bmm(name: str, active: Any, batch: Any, m: Any, n: Any, k: Any, **flags: Any) -> Layer:
    f = batch * 2 * m * n * k
    return Layer(name, BASIC, active, matrix=True, fw=f, ag=2 * f, inp=batch * (m * n + n * k), out=batch * m * k,
                 act=batch * (m * n + n * k), actg=batch * m * k, **flags)


def _layernorm(name: str, active: Any, a: Any, hidden: Any, **flags: Any) -> Layer:
    return Layer(name, BASIC, active, fw=9 * a, ag=14 * a, wg=7 * a, inp=a, out=a, act=a, actg=a, w=2 * hidden,
                 wgrads=2 * hidden, opt=4 * hidden, **flags)


def _dropout(name: str, active: Any, a: Any, **flags: Any) -> Layer:
    return Layer(name, DROPOUT, active, fw=a, ag=a, inp=a, out=a, act=a, actg=a, **flags)


def _softmax(name: str, active: Any, a: Any, **flags: Any) -> Layer:
    return Layer(name, ELEMWISE_ACT, active, fw=5 * a, ag=8 * a, inp=a, out=a, act=a, actg=a, **flags)


def _gelu(name: str, active: Any, a: Any, fused: Any, **flags: Any) -> Layer:
    keep = np.where(fused, 0, a)
    return Layer(name, ELEMWISE_ACT, active, fw=8 * a, ag=13 * a, inp=a, out=a, act=keep, actg=keep, **flags)


def _residual(name: str, active: Any, a: Any, **flags: Any) -> Layer:
    return Layer(name, BASIC, active, fw=a, ag=2 * a, inp=2 * a, out=a, act=2 * a, actg=a, **flags)


def _fork(name: str, active: Any, a: Any, users: int, **flags: Any) -> Layer:
    return Layer(name, FORK, active, ag=users * a, inp=a, act=a, users=users, **flags)


def _tpcomm(name: str, active: Any, a: Any, tp: Any, conj: bool, **flags: Any) -> Layer:
    """Megatron's f/g operators: identity or all-gather forward (conj=False), all-reduce or
    reduce-scatter forward (conj=True).  Its reduction flops are vector work."""
    multi = tp > 1
    red = np.where(multi, a * (tp - 1) / tp, 0.0)
    size = np.where(multi, a, 0)
    return Layer(name, TPCOMM, active, fw=red if conj else 0, ag=0 if conj else red, inp=size, out=size, act=size,
                 actg=size, conj=conj, comm=a, **flags)


def build_block(b: BlockInputs) -> list[Layer]:
    """The layers of one transformer block (attention then MLP) for every configuration."""
    tp = b.tp
    bs = b.mbs * b.seq  # tokens per microbatch
    act = bs * b.hidden
    seqpar = b.comm == 2
    rs_ag = seqpar
    a_sp = np.where(seqpar, (bs // tp) * b.hidden, act)
    full = b.recompute == 2
    attn_rc = b.recompute >= 1
    ag_attn = attn_rc | b.redo
    ag_mlp = full | b.redo
    ovl = b.overlap != 0
    none_ovl = ~ovl
    mha = b.kv_heads == b.heads
    kv_cols = np.where((b.kv_heads % tp == 0) & (b.kv_heads >= tp), b.kv_heads * b.head_dim // tp, b.head_dim)
    q_cols = b.heads * b.head_dim
    heads_tp = b.heads // tp
    score = heads_tp * b.seq * b.seq * b.mbs
    gate = np.where(b.gated, 2, 1)
    T = True
    L: list[Layer] = [
        _fork("attn_fork", T, a_sp, 2, recompute=full, stored=True),
        _layernorm("attn_norm", T, a_sp, b.hidden, recompute=full, stored=False, reused=True),
        _tpcomm("attn_f", none_ovl, act, tp, False, recomm=ag_attn),
        _fork("attn_qkv_fork", none_ovl, act, 3, recompute=ag_attn, stored=~ag_attn),
        _linear_overlapped("attn_qkv_ag", ovl & mha, bs, b.hidden, 3 * q_cols, False, rs_ag, tp,
                           recompute=full, recomm=ag_attn),
        _linear_overlapped("attn_q_ag", ovl & ~mha, bs, b.hidden, q_cols, False, rs_ag, tp,
                           recompute=full, recomm=ag_attn),
        _fork("attn_kv_fork", ovl & ~mha, act, 2, recompute=ag_attn, stored=~ag_attn),
        _linear("attn_q", none_ovl, bs, b.hidden, q_cols // tp, recompute=full, stored=False, reused=True),
        _linear("attn_k", none_ovl | ~mha, bs, b.hidden, kv_cols, recompute=full, stored=False, reused=True),
        _linear("attn_v", none_ovl | ~mha, bs, b.hidden, kv_cols, recompute=full, stored=False, reused=True),
        _bmm("attn_scores", T, b.mbs * heads_tp, b.seq, b.head_dim, b.seq, recompute=attn_rc, out_stored=~attn_rc),
        _softmax("attn_softmax", T, score, recompute=attn_rc, out_stored=~attn_rc),
        _dropout("attn_probs_dropout", T, score, recompute=attn_rc, stored=~attn_rc),
        _bmm("attn_context", T, b.mbs * heads_tp, b.seq, b.seq, b.head_dim, recompute=full),
        _linear("attn_out", none_ovl, bs, q_cols // tp, b.hidden, recompute=full),
        _tpcomm("attn_g", none_ovl, act, tp, True, recomm=full, stored=False),
        _linear_overlapped("attn_out_rs", ovl, bs, q_cols, b.hidden, True, rs_ag, tp, recompute=full, recomm=full),
        _dropout("attn_dropout", T, a_sp, recompute=full),
        _residual("attn_residual", T, a_sp, recompute=full, stored=False, reused=True),
        _fork("mlp_fork", T, a_sp, 2, recompute=full, stored=True),
        _layernorm("mlp_norm", T, a_sp, b.hidden, recompute=full, stored=False, reused=True),
        _tpcomm("mlp_f", none_ovl, act, tp, False, recomm=ag_mlp),
        _linear("mlp_in", none_ovl, bs, b.hidden, gate * b.ffn // tp, recompute=full, stored=~ag_mlp),
        _linear_overlapped("mlp_in_ag", ovl, bs, b.hidden, gate * b.ffn, False, rs_ag, tp, recompute=full,
                           recomm=ag_mlp),
        _gelu("mlp_act", T, b.ffn * bs // tp, b.fused, recompute=full),
        _linear("mlp_out", none_ovl, bs, b.ffn // tp, b.hidden, recompute=full),
        _tpcomm("mlp_g", none_ovl, act, tp, True, recomm=full, stored=False),
        _linear_overlapped("mlp_out_rs", ovl, bs, b.ffn, b.hidden, True, rs_ag, tp, recompute=full, recomm=full),
        _dropout("mlp_dropout", T, a_sp, recompute=full),
        _residual("mlp_residual", T, a_sp, recompute=full, stored=False, reused=True),
    ]
    return L
