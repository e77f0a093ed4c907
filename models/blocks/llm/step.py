"""Batch-native LLM inference step: every system quantity may be a column.

:func:`models.blocks.llm.inference.inference` describes the hardware with one
:class:`~models.blocks.llm.hardware.System`; a design-space model whose points differ in
their hardware (node flop rate, tier capacities and bandwidths, network) passes columns
instead, through a :class:`StepSystem`:

* ``StepSystem.from_system(system, datatype)`` -- the one-System case (efficiency tables,
  any number of tiers, Calculon networks); ``inference()`` is a thin call of
  :func:`inference_columns` with it;
* ``StepSystem.columns(flops_per_s=..., tiers=[(name, capacity_b, bps), ...], net_bps=...,
  net_latency_s=...)`` -- flat efficiencies, every number a column (numpy arrays or scalars
  that broadcast), ring collectives.

The stages, each returning its breakdown (a dict of columns):

1. :func:`layer_costs` -- one transformer block on one device: GEMM and elementwise flops
   and times, weight bytes, activation traffic, K/V bytes per cached row;
2. :func:`held_sizes` -- bytes a device holds (weights, KV cache, activations);
3. :func:`place_columns` -- fractions of each object in each tier: ``greedy`` / ``lp``
   (:func:`models.blocks.llm.placement.place`, scalar tiers) or ``ordered`` (two tiers,
   activations then weights fill the first, the KV cache after them or in the second);
4. :func:`pass_breakdown` -- one pass (prefill, or a decode step) on a pipeline stage:
   compute, tier transfers, TP all-reduces, the PP message;
5. :func:`schedule` -- the stages of a step: ``together`` (the batch goes through the PP
   stages one after another) or ``microbatch`` (one sequence per microbatch, pipelined,
   ``b + PP - 1`` slots, every microbatch re-reading the stage's weights);
6. :func:`inference_columns` -- prefill (TTFT) and the decode steps (three-point rule).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from dse.errors import DseError
from models.blocks.llm.hardware import System, canonical_dtype, collective_time, simple_network
from models.blocks.llm.models import ModelShape
from models.blocks.llm.placement import infeasible_message, place

#: Ring collective scalars (all-reduce moves 2 (n-1)/n of the data) of column networks.
RING_OPS = MappingProxyType(dict(simple_network(size=2).ops))


def ring_ops() -> dict[str, tuple[float, float]]:
    return dict(RING_OPS)
#: Objects placed on the tiers, in the ``ordered`` placement's order.
OBJECTS = ("activations", "weights", "kv_cache")
PLACEMENTS = ("greedy", "lp", "ordered")
SCHEDULES = ("together", "microbatch")


@dataclass(frozen=True)
class RateEngine:
    """A compute engine at a flat efficiency; ``peak_flops`` may be a column."""

    peak_flops: Any

    def time(self, flops: Any) -> Any:
        return np.asarray(flops, dtype=np.float64) / self.peak_flops


@dataclass(frozen=True)
class ColumnTier:
    """A memory tier whose capacity and (effective) bandwidth may be columns; flat efficiency."""

    name: str
    capacity_bytes: Any
    effective_bandwidth_Bps: Any

    def efficiency(self, nbytes: Any) -> float:
        """Flat: 1 at every size."""
        return 1.0

    def time(self, nbytes: Any) -> Any:
        """Seconds to move ``nbytes`` (0 for 0)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(nbytes > 0, nbytes / self.effective_bandwidth_Bps, 0.0)


@dataclass(frozen=True)
class ColumnNetwork:
    """A network whose bandwidth and latency may be columns (Calculon's op model)."""

    bandwidth_Bps: Any
    latency_s: Any
    efficiency: float = 1.0
    ops: Mapping[str, tuple[float, float]] = field(default_factory=ring_ops)

    def time(self, op: str, nbytes: Any, peers: Any) -> Any:
        return collective_time(self.ops[op], nbytes, peers, self.latency_s, self.bandwidth_Bps, self.efficiency)


@dataclass(frozen=True)
class StepSystem:
    """What an inference step needs of the hardware: matrix and vector engines (``.time``),
    memory tiers (``.name``, ``.capacity_bytes``, ``.time``, ``.effective_bandwidth_Bps``),
    the TP and PP networks (``.time(op, bytes, peers)``) and how compute and memory combine."""

    mat: Any
    vec: Any
    tiers: tuple[Any, ...]
    tp_net: Any
    pp_net: Any
    processing_mode: str = "no_overlap"
    name: str = ""

    @classmethod
    def from_system(cls, system: System, datatype: str = "float16", net: int = 0,
                    pipeline_net: int | None = None) -> StepSystem:
        """One System (DseError for an unknown datatype or network index)."""
        mat, vec = system.engines(canonical_dtype(datatype))
        if net >= len(system.networks) or (pipeline_net is not None and pipeline_net >= len(system.networks)):
            raise DseError(f"network index out of range: system {system.name} has {len(system.networks)}")
        ppn = system.networks[net if pipeline_net is None else pipeline_net]
        return cls(mat, vec, tuple(system.tiers), system.networks[net], ppn, system.processing_mode, system.name)

    @classmethod
    def columns(cls, *, flops_per_s: Any, tiers: Sequence[tuple[str, Any, Any]], net_bps: Any, net_latency_s: Any,
                vector_flops_per_s: Any = None, processing_mode: str = "no_overlap") -> StepSystem:
        """Flat-efficiency hardware from columns: ``tiers`` as ``(name, capacity_b, bps)``,
        fastest first; the vector engine runs at the matrix rate unless given."""
        mat = RateEngine(flops_per_s)
        vec = mat if vector_flops_per_s is None else RateEngine(vector_flops_per_s)
        net = ColumnNetwork(net_bps, net_latency_s)
        return cls(mat, vec, tuple(ColumnTier(n, c, b) for n, c, b in tiers), net, net, processing_mode)

    def combine(self, flops_time: Any, mem_time: Any) -> Any:
        """Calculon's processing mode: ``roofline`` takes the max, ``no_overlap`` the sum."""
        if self.processing_mode == "roofline":
            return np.maximum(flops_time, mem_time)
        return flops_time + mem_time


def shape_columns(model: ModelShape | Mapping[str, Any]) -> dict[str, Any]:
    """A model's shape as the stages take it: ``layers``, ``hidden``, ``ffn``, ``ffn_in`` (x2
    when gated), ``heads``, ``kv_heads``, ``head_dim``, ``vocab``, ``encoder_layers``, ``name``
    (a mapping passes through, ``encoder_layers`` 0 and ``name`` 'model' when absent)."""
    if isinstance(model, Mapping):
        return {"encoder_layers": 0, "name": "model", **model}
    return {"layers": model.layers, "hidden": model.hidden, "ffn": model.ffn,
            "ffn_in": model.ffn * (2 if model.gated_mlp else 1), "heads": model.heads, "kv_heads": model.kv_heads,
            "head_dim": model.head_dim, "vocab": model.vocab, "encoder_layers": model.encoder_layers,
            "seq": model.seq, "name": model.name}


def layer_costs(s: Mapping[str, Any], *, rows: Any, ctx: Any, cross: Any, tp: Any, bpe: float, mat: Any,
                vec: Any) -> dict[str, Any]:
    """One block on one device for ``rows`` query rows (batch x new tokens) attending to
    ``ctx`` keys per row (and ``cross`` cross-attention keys): ``t_mat``, ``t_vec``,
    ``flops``, ``weight_bytes``, ``act_traffic`` and ``kv_row_bytes`` (K and V of one row)."""
    h, hd, ffn = s["hidden"], s["head_dim"], s["ffn"]
    heads_d = s["heads"] / tp
    kv_d = np.maximum(s["kv_heads"] / tp, 1.0)
    q = s["heads"] * hd
    kvc = kv_d * hd  # K (or V) columns per device
    mlp_in = s["ffn_in"] / tp
    gemms = [
        2 * rows * h * (q / tp + 2 * kvc),  # fused QKV projection
        2 * rows * (q / tp) * h,  # attention output projection
        2 * rows * h * mlp_in,  # MLP in (gate+up when gated)
        2 * rows * (ffn / tp) * h,  # MLP out
        2 * rows * ctx * hd * heads_d,  # Q K^T
        2 * rows * ctx * hd * heads_d,  # P V
    ]
    has_cross = not (isinstance(cross, float) and cross == 0.0) and bool(np.any(np.asarray(cross) > 0))
    if has_cross:
        has = np.asarray(cross) > 0
        gemms += [np.where(has, 2 * rows * h * q / tp * 2, 0.0),  # cross Q and output projections
                  np.where(has, 2 * 2 * rows * cross * hd * heads_d, 0.0)]
    vec_flops = (2 * 9 * rows * h  # two layer norms
                 + 5 * rows * ctx * heads_d + 5 * rows * cross * heads_d  # softmax
                 + 8 * rows * ffn / tp  # activation
                 + 4 * rows * h)  # residuals and dropout
    w = (h * (q / tp + 2 * kvc) + (q / tp) * h + h * mlp_in + (ffn / tp) * h + 4 * h) * bpe
    if has_cross:
        w = w + np.where(np.asarray(cross) > 0, (2 * h * q / tp + 2 * h * kvc) * bpe, 0.0)
    flops = sum(np.asarray(g, dtype=np.float64) for g in gemms) + vec_flops
    act_io = rows * (6 * h + 2 * mlp_in + 2 * ffn / tp) * bpe + rows * (ctx + cross) * heads_d * bpe * 2
    return {"t_mat": sum(mat.time(g) for g in gemms), "t_vec": vec.time(vec_flops), "weight_bytes": w,
            "flops": flops, "act_traffic": act_io, "kv_row_bytes": 2 * kvc * bpe}


def held_sizes(s: Mapping[str, Any], *, b: Any, tp: Any, pp: Any, kv_tokens: Any, cross_tokens: Any, span: Any,
               bpe: float, kv_cache: Any, activations: str = "pass", enc_layers: Any = 0.0,
               costs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Bytes one device holds: ``weights`` (its layers, and the embedding + LM head averaged
    over the stages), ``kv_cache`` (``kv_tokens`` self-attention and ``cross_tokens``
    cross-attention keys of ``b`` sequences; the cross ones kept with or without a cache) and
    ``activations`` over ``span`` tokens: ``pass`` -- the whole batch's largest pass with its
    score matrix; ``layer`` -- one layer's working set for one sequence at a time (attention
    tiled, no score matrix held).  ``enc_layers`` > 0: an encoder-decoder's encoder blocks.
    ``costs``: the :func:`layer_costs` of a decoder block at ``tp`` and ``cross_tokens``, when
    already at hand (its weight and K/V row bytes are the same)."""
    enc = bool(np.any(np.asarray(s.get("encoder_layers", 0)) > 0))
    dec_layers = np.ceil(s["layers"] / pp)
    h = s["hidden"]
    w_layer = layer_weight_bytes(s, tp=tp, bpe=bpe, cross=cross_tokens) if costs is None else costs["weight_bytes"]
    weight_bytes = dec_layers * w_layer
    if enc:
        weight_bytes = weight_bytes + enc_layers * layer_weight_bytes(s, tp=tp, bpe=bpe, cross=0.0)
    weight_bytes = weight_bytes + s["vocab"] * h * bpe / tp * (1 if enc else 2) / pp
    kv_row = kv_row_bytes(s, tp=tp, bpe=bpe) if costs is None else costs["kv_row_bytes"]
    kv_bytes = np.where(kv_cache, dec_layers * b * kv_tokens * kv_row, 0.0)
    if enc:  # cross-attention keys/values of the encoded prompt are kept in any case
        kv_bytes = kv_bytes + dec_layers * b * cross_tokens * kv_row
    mlp_cols = s["ffn_in"] / tp
    if activations == "layer":
        act_bytes = span * (4 * h + 2 * mlp_cols) * bpe
    elif activations == "pass":
        act_bytes = b * span * (4 * h + 2 * mlp_cols) * bpe + b * (s["heads"] / tp) * span * span * bpe
    else:
        raise DseError(f"activations must be 'pass' or 'layer', got {activations!r}")
    return {"activations": act_bytes, "weights": weight_bytes, "kv_cache": kv_bytes}


def layer_weight_bytes(s: Mapping[str, Any], *, tp: Any, bpe: float, cross: Any) -> Any:
    """Weight bytes of one block on one device (with cross-attention where ``cross`` > 0)."""
    h, hd = s["hidden"], s["head_dim"]
    q = s["heads"] * hd
    kvc = np.maximum(s["kv_heads"] / tp, 1.0) * hd
    w = (h * (q / tp + 2 * kvc) + (q / tp) * h + h * (s["ffn_in"] / tp) + (s["ffn"] / tp) * h + 4 * h) * bpe
    return w + np.where(np.asarray(cross) > 0, (2 * h * q / tp + 2 * h * kvc) * bpe, 0.0)


def kv_row_bytes(s: Mapping[str, Any], *, tp: Any, bpe: float) -> Any:
    """K and V bytes of one cached token on one device, per layer."""
    return 2 * (np.maximum(s["kv_heads"] / tp, 1.0) * s["head_dim"]) * bpe


def place_columns(sizes: Mapping[str, Any], traffic: Mapping[str, Any], tiers: Sequence[Any], *,
                  method: str = "greedy", overlap: str = "sum", kv_last: Any = False) -> dict[str, Any]:
    """Fractions of each object in each tier: ``{"fractions": {obj: {tier: col}}, "used":
    {tier: bytes held}, "feasible": bool col}``.  ``greedy``/``lp``: :func:`place` (scalar
    tiers); ``ordered``: two tiers, activations then weights fill the first and spill to the
    second, the KV cache takes what is left of the first (or, where ``kv_last``, sits in the
    second); an object of no bytes counts as in the first tier."""
    if method == "greedy" and not all(np.ndim(x) == 0 for t in tiers for x in (t.capacity_bytes,
                                                                             t.effective_bandwidth_Bps)):
        return greedy_columns(sizes, traffic, tiers)
    if method in ("greedy", "lp"):
        pl = place(sizes, traffic, tiers, method=method, overlap=overlap, raise_infeasible=False)
        return {"fractions": pl.fractions, "used": pl.used_bytes, "feasible": pl.feasible}
    if method != "ordered":
        raise DseError(f"placement must be one of {', '.join(PLACEMENTS)}, got {method!r}")
    if len(tiers) != 2:
        raise DseError(f"placement 'ordered' needs two tiers (fast, slow), got {len(tiers)}")
    fast, slow = tiers
    act, w, kv = sizes["activations"], sizes["weights"], sizes["kv_cache"]
    cap = fast.capacity_bytes
    a_fast = np.minimum(act, cap)
    w_fast = np.minimum(w, cap - a_fast)
    left = cap - a_fast - w_fast
    kv_fast = np.where(kv_last, 0.0, np.minimum(kv, left))
    slow_held = (act - a_fast) + (w - w_fast) + (kv - kv_fast)
    with np.errstate(divide="ignore", invalid="ignore"):
        fr = {o: np.where(x > 0, xf / x, 1.0) for o, x, xf in zip(OBJECTS, (act, w, kv), (a_fast, w_fast, kv_fast))}
    return {"fractions": {o: {fast.name: f, slow.name: 1 - f} for o, f in fr.items()},
            "used": {fast.name: a_fast + w_fast + kv_fast, slow.name: slow_held},
            "feasible": slow_held <= slow.capacity_bytes * (1 + 1e-12)}


def greedy_columns(sizes: Mapping[str, Any], traffic: Mapping[str, Any], tiers: Sequence[Any]) -> dict[str, Any]:
    """:func:`place`'s greedy placement on tiers whose capacities and bandwidths are columns:
    per point, objects in order of traffic per byte, each poured into the tiers fastest
    first (ties keep the listed order); the same result as ``place`` point by point."""
    objs = tuple(sizes)
    n = int(np.broadcast(*(np.asarray(x) for x in (*sizes.values(), *traffic.values(),
                                                   *(t.capacity_bytes for t in tiers),
                                                   *(t.effective_bandwidth_Bps for t in tiers)))).size)
    rows = np.arange(n)
    S = np.stack([np.broadcast_to(np.asarray(sizes[o], dtype=np.float64), (n,)) for o in objs], axis=1)  # (n, O)
    B = np.stack([np.broadcast_to(np.asarray(traffic.get(o, 0.0), dtype=np.float64), (n,)) for o in objs], axis=1)
    cap = np.stack([np.broadcast_to(np.asarray(t.capacity_bytes, dtype=np.float64), (n,)) for t in tiers], axis=1)
    bw = np.stack([np.broadcast_to(np.asarray(t.effective_bandwidth_Bps, dtype=np.float64), (n,)) for t in tiers], axis=1)
    tord = np.argsort(-bw, axis=1, kind="stable")  # (n, T)
    with np.errstate(divide="ignore", invalid="ignore"):
        order = np.argsort(-np.where(S > 0, B / S, 0.0), axis=1, kind="stable")  # (n, O)
    frac = np.zeros((n, len(objs), len(tiers)))
    cap = cap.copy()
    feasible = np.ones(n, dtype=bool)
    for r in range(len(objs)):
        oi = order[:, r]
        size = S[rows, oi]
        left = size.copy()
        for q in range(len(tiers)):
            k = tord[:, q]
            take = np.minimum(left, np.maximum(cap[rows, k], 0.0))
            cap[rows, k] -= take
            left -= take
            with np.errstate(divide="ignore", invalid="ignore"):
                frac[rows, oi, k] = np.where(size > 0, take / size, 0.0)
        feasible &= left <= 1e-9 * np.maximum(size, 1.0)
    fr = {o: {t.name: frac[:, j, k] for k, t in enumerate(tiers)} for j, o in enumerate(objs)}
    used = {t.name: sum(fr[o][t.name] * S[:, j] for j, o in enumerate(objs)) for t in tiers}
    return {"fractions": fr, "used": used, "feasible": feasible}


def tier_traffic(fractions: Mapping[str, Mapping[str, Any]], tiers: Sequence[Any], *, weights: Any, kv: Any,
                 act: Any) -> list[Any]:
    """Bytes each tier moves for a pass reading ``weights``, ``kv`` and ``act`` bytes."""
    return [fractions["weights"][t.name] * weights + fractions["kv_cache"][t.name] * kv
            + fractions["activations"][t.name] * act for t in tiers]


def memory_time(tiers: Sequence[Any], moved: Sequence[Any], overlap: str = "sum") -> Any:
    """Transfer time of per-tier bytes: tiers one after another (``sum``) or in parallel (``max``)."""
    per_tier = [np.asarray(t.time(m)) for t, m in zip(tiers, moved)]
    if len(per_tier) == 2 and overlap == "sum":
        return per_tier[0] + per_tier[1]
    return np.sum(per_tier, axis=0) if overlap == "sum" else np.max(per_tier, axis=0)


def pass_breakdown(s: Mapping[str, Any], hw: StepSystem, fractions: Mapping[str, Mapping[str, Any]], *, b: Any,
                   new_tok: Any, ctx: Any, cross: Any, layers: Any, tp: Any, pp: Any, bpe: float, with_head: bool,
                   kv_read: Any = 0.0, overlap: str = "sum", costs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One pass of ``b`` sequences x ``new_tok`` tokens on one pipeline stage of ``layers``
    blocks (plus a 1/PP share of the LM head, last position only): ``compute_s``,
    ``memory_s``, ``tp_comm_s`` (two all-reduces per block), ``p2p_s`` (one boundary
    message), ``flops``, ``tier_b`` (bytes per tier), ``weight_b``, ``kv_b``, ``act_b``,
    ``msg_b`` (bytes of one activation message).  ``costs``: this pass's :func:`layer_costs`
    when already at hand."""
    rows = b * new_tok
    c = costs if costs is not None else layer_costs(s, rows=rows, ctx=ctx, cross=cross, tp=tp, bpe=bpe, mat=hw.mat,
                                                    vec=hw.vec)
    comp = layers * (c["t_mat"] + c["t_vec"])
    flops = layers * c["flops"]
    w_b = layers * c["weight_bytes"]
    a_b = layers * c["act_traffic"]
    h = s["hidden"]
    if with_head:
        hf = 2 * b * h * s["vocab"] / tp
        comp = comp + hw.mat.time(hf) / pp  # one stage has the head; spread so per-stage sums add up
        flops = flops + hf / pp
        w_b = w_b + s["vocab"] * h * bpe / tp / pp
    moved = tier_traffic(fractions, hw.tiers, weights=w_b, kv=kv_read, act=a_b)
    msg = rows * h * bpe
    ar = np.where(tp > 1, hw.tp_net.time("all_reduce", msg, np.maximum(tp, 2)), 0.0)
    return {"compute_s": comp, "memory_s": memory_time(hw.tiers, moved, overlap), "tp_comm_s": layers * 2 * ar,
            "p2p_s": hw.pp_net.time("p2p", msg, 2), "flops": flops, "tier_b": moved, "weight_b": w_b,
            "kv_b": kv_read, "act_b": a_b, "msg_b": msg}


def schedule(br: Mapping[str, Any], hw: StepSystem, *, pp: Any, how: str = "together", b: Any = 1.0,
             layers: Any = 0.0, tp: Any = 1.0, fractions: Mapping[str, Mapping[str, Any]] | None = None,
             overlap: str = "sum") -> dict[str, Any]:
    """The PP stages of one step from a stage's :func:`pass_breakdown`: ``step_s``,
    ``compute_s``, ``memory_s``, ``comm_s`` (critical path), ``tier_b`` (bytes per tier per
    device).  ``together``: the ``b`` sequences go through the stages one after another;
    ``microbatch``: one sequence per microbatch, pipelined over ``b + PP - 1`` slots, each
    re-reading the stage's weights (needs ``b``, ``layers``, ``tp`` and the ``fractions``)."""
    if how == "together":
        ppc = np.where(pp > 1, (pp - 1) * br["p2p_s"], 0.0)
        comp, memt, comm = br["compute_s"], br["memory_s"], br["tp_comm_s"]
        return {"step_s": pp * (hw.combine(comp, memt) + comm) + ppc, "compute_s": comp * pp, "memory_s": memt * pp,
                "comm_s": comm * pp + ppc, "tier_b": br["tier_b"]}
    if how != "microbatch":
        raise DseError(f"schedule must be one of {', '.join(SCHEDULES)}, got {how!r}")
    moved = tier_traffic(fractions or {}, hw.tiers, weights=br["weight_b"], kv=br["kv_b"] / b, act=br["act_b"] / b)
    mb_mem = memory_time(hw.tiers, moved, overlap)
    msg = br["msg_b"] / b
    ar = np.where(tp > 1, layers * 2 * hw.tp_net.time("all_reduce", msg, np.maximum(tp, 2)), 0.0)
    mb_comm = ar + np.where(pp > 1, hw.pp_net.time("p2p", msg, 2), 0.0)
    span = b + pp - 1
    comp = br["compute_s"] / b
    return {"step_s": span * (hw.combine(comp, mb_mem) + mb_comm), "compute_s": span * comp, "memory_s": span * mb_mem,
            "comm_s": span * mb_comm, "tier_b": [b * m for m in moved]}


def inference_columns(model: ModelShape | Mapping[str, Any], hw: StepSystem, *, batch: Any = 1, prompt: Any = None,
                      gen: Any = 128, tp: Any = 1, pp: Any = 1, bpe: float = 2.0, kv_cache: bool = True,
                      placement: str = "greedy", overlap: str = "sum", encoder_chunks: Any = 1,
                      raise_infeasible: bool = True) -> dict[str, np.ndarray]:
    """Serve ``batch`` sequences of ``prompt`` tokens generating ``gen`` each, on hardware
    whose numbers may be columns: the columns of :func:`models.blocks.llm.inference.inference`
    (``ttft_s``, ``tpot_s``, ``decode_s``, ``tokens_per_s``, the decode step's split, bytes
    held per device and per tier, ``feasible``)."""
    s = shape_columns(model)
    v = _inputs(s, hw, batch=batch, prompt=s.get("seq") if prompt is None else prompt, gen=gen, tp=tp, pp=pp,
                chunks=encoder_chunks)
    sizes, traffic = _sizes_and_traffic(s, v, bpe=bpe, kv_cache=kv_cache)
    if placement == "lp" and v["n"] != 1:
        raise DseError("placement='lp' evaluates one configuration; use greedy for columns")
    pl = place_columns(sizes, traffic, hw.tiers, method=placement, overlap=overlap)
    if raise_infeasible and not np.all(pl["feasible"]):
        n = v["n"]
        i = int(np.nonzero(~np.broadcast_to(pl["feasible"], (n,)))[0][0])
        tiers = [ColumnTier(t.name, float(np.broadcast_to(t.capacity_bytes, (n,))[i]), 0.0) for t in hw.tiers]
        raise DseError(infeasible_message({k: float(np.broadcast_to(x, (n,))[i]) for k, x in sizes.items()}, tiers))
    run = _Passes(s, hw, v, pl["fractions"], bpe=bpe, overlap=overlap)
    ttft = _prefill(run, v, kv_cache=kv_cache)
    dec = _decode(run, v, kv_cache=kv_cache)
    return _outputs(v, sizes, traffic, pl, ttft, dec, hw)


def _inputs(s: Mapping[str, Any], hw: StepSystem, *, batch: Any, prompt: Any, gen: Any, tp: Any, pp: Any,
            chunks: Any) -> dict[str, Any]:
    """Stage 0: the configuration columns, broadcast to one shape and checked."""
    cols = [np.asarray(x, dtype=np.float64) for x in (batch, prompt, gen, tp, pp, chunks)]
    shape = np.broadcast(*cols).shape
    n = int(np.prod(shape)) if shape else 1
    b, P, G, tp_a, pp_a, ch = (np.broadcast_to(x, shape).reshape(n) for x in cols)
    if np.any(b < 1) or np.any(P < 1) or np.any(G < 0) or np.any(tp_a < 1) or np.any(pp_a < 1):
        raise DseError("batch, prompt, tp and pp must be >= 1 and gen >= 0")
    if np.any(s["heads"] % tp_a != 0):
        raise DseError(f"tp must divide the {s['heads']} attention heads of {s['name']}")
    enc = bool(s["encoder_layers"] > 0)
    return {"b": b, "P": P, "G": G, "tp": tp_a, "pp": pp_a, "chunks": ch, "shape": shape, "n": n, "enc": enc,
            "dec_layers": np.ceil(s["layers"] / pp_a), "enc_layers": np.ceil(s["encoder_layers"] / pp_a) if enc else 0.0,
            "cross": P if enc else 0.0}


def _sizes_and_traffic(s: Mapping[str, Any], v: Mapping[str, Any], *, bpe: float,
                       kv_cache: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """Stages 1-2: bytes held per device (first stage holds the embedding, last the head:
    averaged) and the bytes one decode step at the mean context moves (placement weights)."""
    b, P, G, tp, enc, dec = v["b"], v["P"], v["G"], v["tp"], v["enc"], v["dec_layers"]
    sizes = held_sizes(s, b=b, tp=tp, pp=v["pp"], kv_tokens=G if enc else P + G, cross_tokens=v["cross"],
                       span=P if (kv_cache or enc) else P + G, bpe=bpe, kv_cache=kv_cache, enc_layers=v["enc_layers"])
    kv_row = kv_row_bytes(s, tp=tp, bpe=bpe)
    mean_ctx = (P + (G + 1) / 2) if not enc else (G + 1) / 2
    cross_kv = dec * b * v["cross"] * kv_row
    kv_traffic = np.where(kv_cache, dec * b * mean_ctx * kv_row + cross_kv, cross_kv)
    # activation bytes one decode step reads and writes (each block's inputs/outputs and
    # attention scores for the batch's new tokens), the same count `layer_costs` charges
    step_act = dec * (b * (6 * s["hidden"] + 2 * (s["ffn_in"] / tp) + 2 * s["ffn"] / tp) * bpe
                      + b * (mean_ctx + v["cross"]) * (s["heads"] / tp) * bpe * 2)
    return sizes, {"activations": step_act, "weights": sizes["weights"], "kv_cache": kv_traffic}


@dataclass(frozen=True)
class _Passes:
    """Passes of one configuration set (shape, hardware, columns, placement)."""

    s: Mapping[str, Any]
    hw: StepSystem
    v: Mapping[str, Any]
    fractions: Mapping[str, Mapping[str, Any]]
    bpe: float
    overlap: str

    def kv_row(self) -> Any:
        return kv_row_bytes(self.s, tp=self.v["tp"], bpe=self.bpe)

    def step(self, new_tok: Any, ctx: Any, cross: Any, layers: Any, with_head: bool, kv_read: Any = 0.0) -> dict[str, Any]:
        """(step_s, compute_s, memory_s, comm_s, flops) of one pass on the PP stages, together."""
        v = self.v
        br = pass_breakdown(self.s, self.hw, self.fractions, b=v["b"], new_tok=new_tok, ctx=ctx, cross=cross,
                            layers=layers, tp=v["tp"], pp=v["pp"], bpe=self.bpe, with_head=with_head, kv_read=kv_read,
                            overlap=self.overlap)
        return {**schedule(br, self.hw, pp=v["pp"]), "flops": br["flops"] * v["pp"]}


def _prefill(run: _Passes, v: Mapping[str, Any], *, kv_cache: bool) -> Any:
    """Stage 3: time to first token (the encoder, then the decoder's first position)."""
    b, P, dec = v["b"], v["P"], v["dec_layers"]
    if v["enc"]:
        chunk_len = np.maximum(np.floor(P / v["chunks"]), 1.0)
        e_t = run.step(P, chunk_len, 0.0, v["enc_layers"], False)["step_s"]
        d_t = run.step(1.0, 1.0, P, dec, True, kv_read=dec * b * P * run.kv_row())["step_s"]
        return e_t + d_t
    return run.step(P, P, 0.0, dec, True, kv_read=np.where(kv_cache, dec * b * P * run.kv_row(), 0.0))["step_s"]


def _decode(run: _Passes, v: Mapping[str, Any], *, kv_cache: bool) -> dict[str, Any]:
    """Stage 4: the ``gen`` decode steps, summed exactly for step times quadratic in the
    context (three-point rule); also the split of the step at the mean context."""
    b, P, G, dec, cross = v["b"], v["P"], v["G"], v["dec_layers"], v["cross"]
    kv_row = run.kv_row()

    def at(ctx: Any) -> dict[str, Any]:
        if kv_cache:
            return run.step(1.0, ctx, cross, dec, True, kv_read=dec * b * (ctx + cross) * kv_row)
        # no cache: recompute the whole context each step
        return run.step(ctx, ctx, cross, dec, True, kv_read=dec * b * cross * kv_row)

    mid = (P if not v["enc"] else 0.0) + (G + 1) / 2
    d = np.maximum(G / 4, 0.5)
    f0 = at(mid)
    fm = at(np.maximum(mid - d, 1.0))["step_s"]
    fp = at(mid + d)["step_s"]
    curv = (fm + fp - 2 * f0["step_s"]) / (2 * d * d)
    total = G * (f0["step_s"] + curv * (G * G - 1) / 12)
    return {**f0, "decode_s": total, "tpot_s": np.where(G > 0, total / np.maximum(G, 1), 0.0)}


def _outputs(v: Mapping[str, Any], sizes: Mapping[str, Any], traffic: Mapping[str, Any], pl: Mapping[str, Any],
             ttft: Any, dec: Mapping[str, Any], hw: StepSystem) -> dict[str, np.ndarray]:
    """Stage 5: the result columns, in the configuration columns' shape."""
    b, G, tpot = v["b"], v["G"], dec["tpot_s"]
    with np.errstate(divide="ignore", invalid="ignore"):
        tokens_per_s = b * G / (ttft + dec["decode_s"])
        decode_tps = np.where(tpot > 0, b / tpot, 0.0)
    w, kv, act = sizes["weights"], sizes["kv_cache"], sizes["activations"]
    out = {
        "ttft_s": ttft, "tpot_s": tpot, "decode_s": dec["decode_s"], "tokens_per_s": tokens_per_s,
        "decode_tokens_per_s": decode_tps, "weight_bytes": w, "kv_bytes": kv, "act_bytes": act,
        "mem_bytes": w + kv + act, "step_s": dec["step_s"], "step_compute_s": dec["compute_s"],
        "step_memory_s": dec["memory_s"], "step_comm_s": dec["comm_s"], "step_flops": dec["flops"],
        "step_bytes": w + traffic["kv_cache"], "feasible": np.asarray(pl["feasible"]).astype(bool),
        "devices": v["tp"] * v["pp"],
    }
    for t in hw.tiers:
        out[f"tier_{t.name}_bytes"] = pl["used"][t.name]
    n, shape = v["n"], v["shape"]
    return {k: np.broadcast_to(np.asarray(x, dtype=np.float64 if k != "feasible" else bool), (n,)).reshape(shape)
            for k, x in out.items()}
