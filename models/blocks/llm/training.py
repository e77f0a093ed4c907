"""Training (and Calculon-style forward-only) step time and memory, vectorized.

The method is Calculon's (Isaev et al., SC'23; calculon-ai/calculon ``calculon/llm/llm.py``):

1. **Per block, per microbatch** (``_block_stats``): every layer of
   :func:`models.blocks.llm.transformer.build_block` is costed for the forward (fw),
   activation-gradient (agrad), weight-gradient (wgrad) and optimizer stages as
   ``flops / (peak * eff(flops)) + bytes / (bw * eff(bytes))`` (``no_overlap`` mode; the
   max of the two in ``roofline`` mode).  TP communication layers add network time
   (latency + size/(bw*eff) with the system's collective scalars) and the local
   reduction; GEMMs with overlapped TP communication are split into TP tiles where either
   the communication or the (slowed) compute is exposed, plus one exposed tile for the
   ``pipe`` schedule.  Pipeline chunks are ``blocks_per_chunk - 1`` *base* blocks and one
   *edge* block (which also sends the pipeline message; with ``p2p_rs_ag`` only the edge
   block does reduce-scatter/all-gather).
2. **Per batch** (``_batch_stats``): times multiply by blocks per processor and
   microbatches; offload to the second memory tier is exposed only where it exceeds the
   block's compute; the 1F1B bubble is ``(PP-1)`` chunk times (plus extra bubbles when the
   microbatch count is not a multiple of PP with interleaving, minus the blocks missing on
   later stages for uneven splits); DP gradient reduction is exposed or overlapped with the
   backward pass chunk by chunk.
3. **Memory**: weights, activations (1F1B keeps ``min(microbatches, PP)`` in flight,
   scaled for interleaving), activation checkpoints, gradients and sharded optimizer state
   (fp32 master copy and two moments), split between tier 1 and tier 2 by the offload
   flags (tier 1 keeps two blocks' worth of anything offloaded).

Reported values are for processor 0 (first pipeline stage) and one global batch, exactly
the quantities of Calculon's ``get_stats_json``.  Calculon's quirks are kept on purpose
(so results agree with it): recompute flops/memory time accumulate the running block
forward total, the exposed time of redone TP communication in overlapped GEMMs is the
forward exposure, a zero-byte pipeline message still costs one latency.

Entry point: :func:`evaluate` (model, system, :class:`Executions`) -> dict of columns,
including ``error`` (0 = feasible, else an index into :data:`ERRORS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dse.errors import DseError
from models.blocks.llm.executions import Executions
from models.blocks.llm.hardware import DTYPE_BYTES, System
from models.blocks.llm.models import ModelShape
from models.blocks.llm.transformer import DROPOUT, ELEMWISE_ACT, FORK, LINOV, TPCOMM, BlockInputs, build_block

# Error categories, in the order Calculon checks them (first failing check wins).
ERRORS: tuple[str, ...] = (
    "",  # feasible
    "invalid_execution_field",
    "tp_pp_dp_product_mismatch",
    "batch_size_not_divisible_by_data_par",
    "local_batch_not_divisible_by_microbatch",
    "recompute_requires_training",
    "invalid_pipeline_interleaving",
    "optimizer_sharding_requires_dp_gt_1",
    "tp_overlap_requires_tp_gt_1",
    "seq_par_ag_redo_requires_rs_ag_without_full_recompute",
    "dp_overlap_requires_training_and_dp_gt_1",
    "optimizer_offload_requires_training",
    "network_index_out_of_range",
    "network_tier_too_small_for_parallelism",
    "network_tier_must_be_filled",
    "invalid_pipeline_interleaving",
    "offload_needs_at_least_3_blocks_per_proc",
    "batch_seq_not_divisible_by_tp",
    "model_dim_not_divisible_by_tp",
    "datatype_not_supported_by_system",
    "mem_tier1_capacity_exceeded",
    "mem_tier2_capacity_exceeded",
)
ERR = {name: i for i, name in reversed(list(enumerate(ERRORS)))}  # first index per name
ERR_INTERLEAVE_COMPILE = 15

# Output columns shared with runs.csv (``<name>`` -> seconds / bytes as in Calculon).
TIME_PARTS = ("fw_time", "bw_time", "optim_step_time", "fw_offload_exposed_time", "bw_offload_exposed_time",
              "recompute_time", "recomm_exposed_time", "bubble_time", "tp_comm_exposed_time",
              "pp_comm_exposed_time", "dp_comm_exposed_time")


def _model_columns(model: ModelShape | Mapping[str, Any], n: int) -> dict[str, np.ndarray]:
    if isinstance(model, ModelShape):
        d = {"hidden": model.hidden, "ffn": model.ffn, "seq": model.seq, "heads": model.heads,
             "head_dim": model.head_dim, "layers": model.layers, "kv_heads": model.kv_heads,
             "gated": model.gated_mlp}
    else:
        d = dict(model)
        d.setdefault("kv_heads", d["heads"])
        d.setdefault("gated", False)
    out = {}
    for k, v in d.items():
        a = np.asarray(v)
        out[k] = np.broadcast_to(a.astype(bool) if k == "gated" else a.astype(np.int64), (n,))
    return out


class _Nets:
    """Network parameters gathered per configuration (index columns -> value columns)."""

    def __init__(self, system: System) -> None:
        nets = system.networks
        self.count = len(nets)
        self.lat = np.array([x.latency_s for x in nets])
        self.bwe = np.array([x.bandwidth_Bps * x.efficiency for x in nets])
        self.pu = np.array([x.processor_usage for x in nets])
        self.size = np.array([x.size for x in nets])
        self.filled = np.array([x.must_be_filled for x in nets])
        self.scal = {op: np.array([x.ops[op][0] for x in nets]) for op in ("p2p", "reduce_scatter", "all_gather",
                                                                          "all_reduce")}
        self.off = {op: np.array([x.ops[op][1] for x in nets]) for op in self.scal}

    def view(self, idx: np.ndarray) -> dict[str, Any]:
        i = np.clip(idx, 0, self.count - 1)
        return {"lat": self.lat[i], "bwe": self.bwe[i], "pu": self.pu[i],
                "scal": {k: v[i] for k, v in self.scal.items()}, "off": {k: v[i] for k, v in self.off.items()}}


def _tier_misfit(nets: _Nets, k: int, tp: Any, pp: Any, dp: Any, tn: Any, pn: Any, dn: Any) -> tuple[Any, Any]:
    """Network tier ``k`` too small for the dimensions placed on it, and (where it must be
    filled) not divided evenly by them."""
    on_t, on_p, on_d = (tp > 1) & (tn == k), (pp > 1) & (pn == k), (dp > 1) & (dn == k)
    used = on_t | on_p | on_d
    size = np.where(on_t, tp, 1) * np.where(on_p, pp, 1) * np.where(on_d, dp, 1)
    small = used & (size > nets.size[k])
    unfilled = used & nets.filled[k] & (nets.size[k] % np.maximum(size, 1) != 0)
    return small, unfilled


def network_ok(system: System, tp: Any, pp: Any, dp: Any, tn: Any, pn: Any, dn: Any) -> np.ndarray:
    """Whether each placement of TP/PP/DP on network tiers passes :func:`evaluate`'s network checks."""
    nets = _Nets(system)
    tn, pn, dn = (np.asarray(x) for x in (tn, pn, dn))
    ok = (tn >= 0) & (tn < nets.count) & (pn >= 0) & (pn < nets.count) & (dn >= 0) & (dn < nets.count)
    for k in range(nets.count):
        small, unfilled = _tier_misfit(nets, k, np.asarray(tp), np.asarray(pp), np.asarray(dp), tn, pn, dn)
        ok &= ~small & ~unfilled
    return ok


def _net_time(nv: dict[str, Any], op: str, nbytes: Any, peers: Any) -> Any:
    moved = nbytes * nv["scal"][op]
    moved = moved + moved / peers * nv["off"][op]
    return nv["lat"] + moved / nv["bwe"]


def evaluate(model: ModelShape | Mapping[str, Any], system: System, exe: Executions) -> dict[str, np.ndarray]:
    """Evaluate every execution in ``exe`` for ``model`` on ``system``.

    ``model`` may be a :class:`ModelShape` or a mapping of columns (``hidden, ffn, seq,
    heads, head_dim, layers`` and optionally ``kv_heads``, ``gated``) to evaluate many
    model shapes at once.  Returns a dict of length-``n`` columns: every time component,
    ``total_time``, ``sample_rate``, tier capacities required (``mem_tier1_bytes``,
    ``mem_tier2_bytes``), the memory breakdown, offload bandwidth requirements,
    efficiencies and ``error`` (index into :data:`ERRORS`; 0 = feasible).  Values of
    infeasible rows are still computed where they are defined (capacity failures keep
    their requirements, as Calculon reports them).
    """
    n = exe.n
    if not isinstance(model, ModelShape):
        longest = max((np.asarray(v).shape[0] for v in model.values() if np.ndim(v)), default=1)
        if exe.n == 1 and longest > 1:  # one execution, many model shapes
            exe = exe.take(np.zeros(longest, dtype=np.int64))
            n = longest
    m = _model_columns(model, n)
    dtypes = exe["datatype"]
    uniq = np.unique(dtypes)
    if len(uniq) == 1:
        return _evaluate_dtype(m, system, exe, str(uniq[0]))
    out: dict[str, np.ndarray] = {}
    for dt in uniq:
        idx = np.nonzero(dtypes == dt)[0]
        part = _evaluate_dtype({k: v[idx] for k, v in m.items()}, system, exe.take(idx), str(dt))
        for k, v in part.items():
            if k not in out:
                out[k] = np.zeros(n, dtype=v.dtype)
            out[k][idx] = v
    return out


# --------------------------------------------------------------------------- staged use (search)
def prepare(model: ModelShape | Mapping[str, Any], system: System, exe: Executions) -> dict[str, Any]:
    """Per-row columns, validity (``err``) and derived values of ``exe`` (one datatype).

    ``batch_stats(block_stats(rows), rows)`` is :func:`evaluate`; a search computes
    :func:`block_stats` once per distinct block configuration and gathers it for its rows.
    """
    dts = np.unique(exe["datatype"])
    if len(dts) != 1:
        raise DseError("prepare() takes executions of one datatype")
    return _row_columns(_model_columns(model, exe.n), system, exe.cols, exe.n, str(dts[0]))


def block_stats(rows: dict[str, Any]) -> dict[str, np.ndarray]:
    """Per-block, per-microbatch accumulators of prepared rows (see :func:`_block_stats`)."""
    return _block_stats(rows)


def batch_stats(block: dict[str, np.ndarray], rows: dict[str, Any]) -> dict[str, np.ndarray]:
    """:func:`evaluate`'s output from prepared rows and their (gathered) block accumulators."""
    return _batch_stats(block, rows)


def capacity(block: Mapping[str, np.ndarray], rows: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Tier-1/tier-2 bytes per processor (``mem_tier1_bytes``, ``mem_tier2_bytes``) and the breakdown."""
    return _capacity(block, rows)


def pp_message_times(system: System, net: np.ndarray, rows: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Forward/backward pipeline message time per chunk edge on network ``net`` (rows need ``bs``,
    ``m`` (hidden), ``safe_tp``, ``pp``, ``comm``, ``bpe``, ``training``)."""
    return _pp_message_times(_Nets(system).view(net), rows)


def dp_reduce_time(system: System, net: np.ndarray, block_weight: np.ndarray, rows: Mapping[str, Any]) -> np.ndarray:
    """DP gradient reduction of one block on network ``net`` (rows need ``dp``, ``training``, ``sharding``)."""
    return _dp_reduce_time(_Nets(system).view(net), block_weight, rows)


def bound_terms(block: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The per-block sums :func:`batch_time_lower_bound` needs: ``work`` (forward, recompute,
    activation- and weight-gradient time), ``optim`` (optimizer step), ``exp_base`` / ``exp_edge``
    (exposed TP communication of a base / edge block, forward + backward + redone)."""
    return {"work": block["fw_time"] + block["re_time"] + block["ag_time"] + block["wg_time"],
            "optim": block["op_time"],
            "exp_base": block["fw_exp_b"] + block["ag_exp_b"] + block["recomm_exp_b"],
            "exp_edge": block["fw_exp_e"] + block["ag_exp_e"] + block["recomm_exp_e"],
            "weight": block["weight"]}


#: relative slack for rounding: the bound sums the same terms as ``total_time`` in another order
BOUND_SLACK = 1e-9


def batch_time_lower_bound(terms: Mapping[str, np.ndarray], rows: Mapping[str, Any], fw_pp_t: np.ndarray,
                           bw_pp_t: np.ndarray, dp_t: np.ndarray) -> np.ndarray:
    """A lower bound of :func:`evaluate`'s ``total_time`` (rows with PP dividing the blocks).

    ``total_time`` is compute + optimizer + exposed TP communication + pipeline messages + bubble
    + exposed DP communication + exposed offload.  Compute, optimizer, TP exposure and pipeline
    messages are taken exactly; the bubble with each chunk at its time *without* offload
    overhead; DP communication at ``bpp * dp_t`` without overlap and ``dp_t`` (the last
    block's reduction, never hidden) with it; offload exposure (a ``max(0, ...)``) at 0.
    Every dropped piece is >= 0 and every kept one enters with a coefficient >= 0, so the
    bound also holds with any term replaced by a smaller one (e.g. its minimum over networks).
    """
    pp = rows["pp"].astype(np.float64)
    nmb = rows["nmb"].astype(np.float64)
    bpp = rows["bpp"].astype(np.float64)
    chunks = np.maximum(rows["interleave"], 1).astype(np.float64)
    bpc = np.maximum(rows["bpp"] // np.maximum(rows["interleave"], 1), 1).astype(np.float64)
    base = bpc - 1.0
    work, xb, xe = terms["work"], terms["exp_base"], terms["exp_edge"]
    compute = bpp * nmb * work + bpp * terms["optim"]
    exposed = nmb * chunks * (base * xb + xe)
    multi = pp > 1
    pp_link = nmb * np.where(multi, chunks, 0.0) * (fw_pp_t + np.where(rows["training"], bw_pp_t, 0.0))
    chunk = bpc * work + base * xb + xe + fw_pp_t + bw_pp_t
    rem = rows["nmb"] % np.maximum(rows["pp"], 1)
    extra = np.where(rem != 0, (chunks - 1) * (pp - rem), 0.0)
    bubble = (pp - 1 + extra) * chunk
    dp = np.where(rows["dp_ovl"], dp_t, bpp * dp_t)
    return (compute + exposed + pp_link + bubble + dp) * (1 - BOUND_SLACK)


def _evaluate_dtype(m: dict[str, np.ndarray], system: System, exe: Executions, dtype: str) -> dict[str, np.ndarray]:
    v = _row_columns(m, system, exe.cols, exe.n, dtype)
    return _batch_stats(_block_stats(v), v)


def _row_columns(m: dict[str, np.ndarray], system: System, e: dict[str, np.ndarray], n: int,
                 dtype: str) -> dict[str, Any]:
    """The execution columns, their validity (``err``, Calculon order) and derived per-row values."""
    r: dict[str, Any] = {"m": m, "system": system, "e": e, "n": n, "dtype": dtype, **_execution_columns(m, e, dtype)}
    err = r["err"] = np.zeros(n, dtype=np.int64)  # validity, first failing check wins (Calculon order)
    r.update(_check_split(err, r))
    r["nets"] = _check_networks(err, system, r)
    r.update(_check_blocks(err, m, r))
    r.update(_engines_of(err, system, dtype))
    r["full"] = r["rec"] == 2
    r["block_ckpt"] = np.where(r["training"] & r["full"], r["bs"] * m["hidden"] * r["bpe"], 0.0)
    r["mpeak"] = r["mat_e"].peak_flops
    return r


def _flag(err: np.ndarray, cond: Any, name: str | int) -> None:
    """Mark rows failing ``cond`` with error ``name`` (an :data:`ERRORS` name or code) unless already failed."""
    code = name if isinstance(name, int) else ERR[name]
    np.copyto(err, code, where=(err == 0) & np.asarray(cond, dtype=bool))


def _execution_columns(m: dict[str, np.ndarray], e: dict[str, np.ndarray], dtype: str) -> dict[str, Any]:
    """The execution's fields as named columns (parallelism, batch, recompute, TP comm, offload, networks)."""
    c: dict[str, Any] = {
        "bpe": float(DTYPE_BYTES[dtype]),
        "tp": e["tensor_par"].astype(np.int64),
        "pp": e["pipeline_par"].astype(np.int64),
        "dp": e["data_par"].astype(np.int64),
        "nprocs": e["num_procs"], "batch": e["batch_size"], "mbs": e["microbatch_size"],
        "interleave": e["pipeline_interleaving"], "training": e["training"], "rec": e["activation_recompute"],
        "comm": e["tensor_par_comm_type"], "ovl": e["tensor_par_overlap"], "redo": e["seq_par_ag_redo"],
        "sharding": e["optimizer_sharding"], "dp_ovl": e["data_par_overlap"],
        "w_off": e["weight_offload"], "a_off": e["activations_offload"], "o_off": e["optimizer_offload"],
        "tn": e["tensor_par_net"], "pn": e["pipeline_par_net"], "dn": e["data_par_net"],
    }
    if m.get("kv_heads") is not None:
        c["mq"] = e["attention_type"] == 1
        c["kvh"] = np.where(c["mq"], 1, m["kv_heads"])
    else:  # pragma: no cover
        c["kvh"] = m["heads"]
    return c


def _check_split(err: np.ndarray, r: dict[str, Any]) -> dict[str, Any]:
    """Validity of the TP/PP/DP split, batch and microbatches and the execution flags; the microbatch count."""
    tp, pp, dp, mbs, batch, training = r["tp"], r["pp"], r["dp"], r["mbs"], r["batch"], r["training"]
    nprocs, rec, comm, interleave = r["nprocs"], r["rec"], r["comm"], r["interleave"]
    safe_tp = np.maximum(tp, 1)
    safe_pp = np.maximum(pp, 1)
    safe_dp = np.maximum(dp, 1)
    safe_mbs = np.maximum(mbs, 1)
    _flag(err, (nprocs <= 0) | (tp <= 0) | (pp <= 0) | (dp <= 0), "invalid_execution_field")
    _flag(err, nprocs != tp * pp * dp, "tp_pp_dp_product_mismatch")
    _flag(err, (batch <= 0) | (mbs <= 0), "invalid_execution_field")
    _flag(err, batch % safe_dp != 0, "batch_size_not_divisible_by_data_par")
    local = batch // safe_dp
    _flag(err, local % safe_mbs != 0, "local_batch_not_divisible_by_microbatch")
    nmb = local // safe_mbs
    _flag(err, (rec > 0) & ~training, "recompute_requires_training")
    _flag(err, (interleave <= 0) | ((pp == 1) & (interleave != 1)), "invalid_pipeline_interleaving")
    _flag(err, r["sharding"] & (dp <= 1), "optimizer_sharding_requires_dp_gt_1")
    _flag(err, (r["ovl"] != 0) & (tp <= 1), "tp_overlap_requires_tp_gt_1")
    _flag(err, r["redo"] & ((comm != 2) | (rec == 2)), "seq_par_ag_redo_requires_rs_ag_without_full_recompute")
    _flag(err, r["dp_ovl"] & (~training | (dp <= 1)), "dp_overlap_requires_training_and_dp_gt_1")
    _flag(err, r["o_off"] & ~training, "optimizer_offload_requires_training")
    return {"safe_tp": safe_tp, "safe_pp": safe_pp, "safe_dp": safe_dp, "safe_mbs": safe_mbs, "local": local, "nmb": nmb}


def _check_networks(err: np.ndarray, system: System, r: dict[str, Any]) -> _Nets:
    """Validity of the TP/PP/DP network placement (index range, then tier by tier); the system's networks."""
    tp, pp, dp, tn, pn, dn = r["tp"], r["pp"], r["dp"], r["tn"], r["pn"], r["dn"]
    nets = _Nets(system)
    _flag(err, (tn < 0) | (tn >= nets.count) | (pn < 0) | (pn >= nets.count) | (dn < 0) | (dn >= nets.count),
          "network_index_out_of_range")
    for k in range(nets.count):
        small, unfilled = _tier_misfit(nets, k, tp, pp, dp, tn, pn, dn)
        # Calculon checks tier by tier: the first failing tier decides the message
        _flag(err, small, "network_tier_too_small_for_parallelism")
        _flag(err, unfilled, "network_tier_must_be_filled")
    return nets


def _check_blocks(err: np.ndarray, m: dict[str, np.ndarray], r: dict[str, Any]) -> dict[str, Any]:
    """Blocks per processor and the checks on them (interleaving, offload), on TP-divisible sizes."""
    safe_pp, safe_tp, interleave, comm = r["safe_pp"], r["safe_tp"], r["interleave"], r["comm"]
    L = m["layers"]
    bpp = -(-L // safe_pp)  # blocks per processor (ceil)
    reduction_blocks = np.where(L % safe_pp != 0, safe_pp - L % safe_pp, 0)
    safe_int = np.maximum(interleave, 1)
    _flag(err, (interleave > bpp) | (bpp % safe_int != 0), ERR_INTERLEAVE_COMPILE)
    _flag(err, (r["w_off"] | r["a_off"] | r["o_off"]) & (bpp <= 2), "offload_needs_at_least_3_blocks_per_proc")
    bs = r["mbs"] * m["seq"]
    _flag(err, ((comm == 1) | (comm == 2)) & (bs % safe_tp != 0), "batch_seq_not_divisible_by_tp")
    _flag(err, (m["hidden"] % safe_tp != 0) | (m["ffn"] % safe_tp != 0) | (m["heads"] % safe_tp != 0),
          "model_dim_not_divisible_by_tp")
    return {"L": L, "bpp": bpp, "reduction_blocks": reduction_blocks, "safe_int": safe_int, "bs": bs}


def _engines_of(err: np.ndarray, system: System, dtype: str) -> dict[str, Any]:
    """The system's matrix and vector engines for the datatype (rows infeasible where it has none)."""
    dtype_ok = dtype in system.matrix and dtype in system.vector
    if not dtype_ok:
        _flag(err, True, "datatype_not_supported_by_system")
        # evaluate with any engine so the arrays exist; rows are marked infeasible
        mat_e = next(iter(system.matrix.values()))
        vec_e = next(iter(system.vector.values()))
    else:
        mat_e, vec_e = system.matrix[dtype], system.vector[dtype]
    return {"dtype_ok": dtype_ok, "mat_e": mat_e, "vec_e": vec_e}


#: Per-block, per-microbatch accumulators; the ``_TRAINING_ONLY`` ones are zero for forward-only rows.
_ACC_KEYS = (
    "fw_flops", "fw_ft", "fw_mem", "fw_mt", "fw_time", "fw_tp_b", "fw_tp_e", "fw_exp_b", "fw_exp_e",
    "re_flops", "re_ft", "re_mem", "re_mt", "re_time", "recomm_b", "recomm_e", "recomm_exp_b", "recomm_exp_e",
    "ag_flops", "ag_ft", "ag_mem", "ag_mt", "ag_time", "ag_tp_b", "ag_tp_e", "ag_exp_b", "ag_exp_e",
    "wg_flops", "wg_ft", "wg_mem", "wg_mt", "wg_time", "op_flops", "op_ft", "op_mem", "op_mt", "op_time",
    "weight", "act_work", "act_store", "w_grad", "w_grad_ns", "act_grad", "optim")
_TRAINING_ONLY = (
    "ag_flops", "ag_ft", "ag_mem", "ag_mt", "ag_time", "ag_tp_b", "ag_tp_e", "ag_exp_b", "ag_exp_e",
    "wg_flops", "wg_ft", "wg_mem", "wg_mt", "wg_time", "op_flops", "op_ft", "op_mem", "op_mt", "op_time",
    "w_grad", "w_grad_ns", "act_grad", "optim")


def _block_stats(v: dict[str, Any]) -> dict[str, np.ndarray]:
    """Per-block, per-microbatch accumulators (flops, times, exposures, bytes) of every row of ``v``.

    They depend only on the model, the system, the datatype, TP and its network, the microbatch,
    recompute, TP communication type and overlap, seq-par redo, fused activation, training and
    the optimizer-sharding divisor (DP when sharded), so a search computes them once per
    distinct combination (:class:`models.blocks.llm.bound.BlockTable`)."""
    c = _block_context(v)
    rows = np.zeros((len(_ACC_KEYS), v["n"]))  # the accumulators, one row each, in _ACC_KEYS order
    buf = np.zeros_like(rows)  # one layer's contributions
    for ly in build_block(_block_inputs(v)):
        on = np.asarray(ly.active, dtype=bool)
        if not on.any():
            continue
        q = _layer_sizes(ly, on, c)
        b = _stage_bytes(ly, q, c)
        t = _stage_times(ly, q, b, c)
        if ly.kind == TPCOMM:
            s = _tp_comm_layer(ly, on, q, t, c)
        elif ly.kind == LINOV:
            s = _overlapped_gemm_layer(ly, on, q, t, c)
        else:
            s = _plain_layer(ly, q, t, c)
        _accumulate(rows, buf, ly, q, b, t, s, c)
    acc = {k: rows[i] for i, k in enumerate(_ACC_KEYS)}
    # stages that only exist when training
    tr = v["training"].astype(np.float64)
    for k in _TRAINING_ONLY:
        acc[k] = acc[k] * tr
    acc["act_store"] = np.where(v["rec"] == 2, 0.0, acc["act_store"])
    return acc


def _block_inputs(v: dict[str, Any]) -> BlockInputs:
    """The transformer block's shape for the rows (microbatch, model dims, TP, recompute, TP comm)."""
    m, e = v["m"], v["e"]
    return BlockInputs(mbs=v["safe_mbs"], seq=m["seq"], hidden=m["hidden"], ffn=m["ffn"], heads=m["heads"],
                       head_dim=m["head_dim"], kv_heads=v["kvh"], tp=v["safe_tp"], recompute=v["rec"], comm=v["comm"],
                       overlap=v["ovl"], redo=v["redo"], fused=e["fused_activation"], gated=m["gated"])


class _Roofline:
    """A layer stage's compute time on the matrix or vector engine and its tier-1 memory time."""

    def __init__(self, system: System, mat_e: Any, vec_e: Any) -> None:
        mem1 = system.mem1
        self.bw1, self.eff1 = mem1.effective_bandwidth_Bps, mem1.efficiency
        self.mpeak, self.meff = mat_e.peak_flops, mat_e.efficiency
        self.vpeak, self.veff = vec_e.peak_flops, vec_e.efficiency
        self.combine = system.combine

    def mtime(self, nbytes: Any) -> Any:
        """Tier-1 memory time of ``nbytes``."""
        return nbytes / (self.bw1 * self.eff1(nbytes))

    def vtime(self, flops: Any) -> Any:
        """Vector-engine time of ``flops``."""
        return flops / (self.vpeak * self.veff(flops))

    def xtime(self, flops: Any) -> Any:
        """Matrix-engine time of ``flops``."""
        return flops / (self.mpeak * self.meff(flops))


def _block_context(v: dict[str, Any]) -> dict[str, Any]:
    """What every layer of the rows' block shares: engines, datatype size, sharding divisor, TP and its network."""
    tp, comm = v["tp"], v["comm"]
    tpn = v["nets"].view(v["tn"])
    return {"n": v["n"], "bpe": v["bpe"], "training": v["training"], "comm": comm, "ovl": v["ovl"],
            "shard": np.where(v["sharding"], v["safe_dp"], 1), "tpn": tpn, "pu": tpn["pu"],
            "eng": _Roofline(v["system"], v["mat_e"], v["vec_e"]), "split_b": comm == 2, "split_e": comm != 0,
            "tp_f": v["safe_tp"].astype(np.float64), "multi": tp > 1}


def _layer_sizes(ly: Any, on: np.ndarray, c: dict[str, Any]) -> dict[str, Any]:
    """The layer's flops and element counts where it is active, and where it is recomputed / recommunicated."""
    onf = on.astype(np.float64)
    q = {k: getattr(ly, k) * onf for k in ("fw", "ag", "wg", "inp", "out", "act", "actg", "w", "wgrads", "opt")}
    q["onf"] = onf
    q["rc"] = np.asarray(ly.recompute, dtype=bool) & on & c["training"]
    q["rcm"] = np.asarray(ly.recomm, dtype=bool) & on & c["training"]
    return q


def _stage_bytes(ly: Any, q: dict[str, Any], c: dict[str, Any]) -> dict[str, Any]:
    """Memory traffic per stage (bytes) by layer kind, and the optimizer's bytes and flops."""
    bpe, shard, kind = c["bpe"], c["shard"], ly.kind
    inp, out, act, actg, w, wgr = q["inp"], q["out"], q["act"], q["actg"], q["w"], q["wgrads"]
    if kind == FORK:
        fw_mem = 0.0 * q["fw"]
        ag_mem = act * bpe * (ly.users + 1)
    elif kind == DROPOUT:
        fw_mem = (inp + out) * bpe + act
        ag_mem = fw_mem
    elif kind == ELEMWISE_ACT:
        fw_mem = (inp + out + w) * bpe
        ag_mem = fw_mem
    elif kind == TPCOMM:
        rs = c["comm"] == 2
        fw_mem = np.where(~rs & (not ly.conj), 0.0, (inp + out) * bpe)
        ag_mem = np.where(~rs & ly.conj, 0.0, (act + actg) * bpe)
    else:
        fw_mem = (inp + out + w) * bpe
        ag_mem = (w + act + actg) * bpe
    wg_mem = np.where(w > 0, (wgr + act + actg) * bpe, 0.0)
    optim_b = (np.where(bpe < 4, w * 4, 0.0) + q["opt"] * 4) / shard
    op_flops = wgr / shard * 11
    return {"fw_mem": fw_mem, "ag_mem": ag_mem, "wg_mem": wg_mem, "optim_b": optim_b, "op_flops": op_flops}


def _stage_times(ly: Any, q: dict[str, Any], b: dict[str, Any], c: dict[str, Any]) -> dict[str, Any]:
    """Compute and memory time of each stage (fw, agrad, wgrad, optimizer) and the optimizer step's time."""
    eng = c["eng"]
    ce = eng.xtime if ly.matrix else eng.vtime
    t = {"fw_ft": ce(q["fw"]), "ag_ft": ce(q["ag"]), "wg_ft": ce(q["wg"]), "op_ft": eng.vtime(b["op_flops"])}
    t["fw_mt"], t["ag_mt"], t["wg_mt"], t["op_mt"] = (eng.mtime(b["fw_mem"]), eng.mtime(b["ag_mem"]),
                                                      eng.mtime(b["wg_mem"]), eng.mtime(b["optim_b"]))
    t["op_time"] = eng.combine(t["op_ft"], t["op_mt"])
    return t


def _tp_collective_s(tpn: dict[str, Any], reduce: bool, split: np.ndarray, nbytes: Any, tp_f: np.ndarray) -> np.ndarray:
    """One TP collective: reduce-scatter (split) or all-reduce when reducing, else all-gather (split) or none."""
    if reduce:
        return np.where(split, _net_time(tpn, "reduce_scatter", nbytes, tp_f), _net_time(tpn, "all_reduce", nbytes, tp_f))
    return np.where(split, _net_time(tpn, "all_gather", nbytes, tp_f), 0.0)


def _tp_comm_layer(ly: Any, on: np.ndarray, q: dict[str, Any], t: dict[str, Any], c: dict[str, Any]) -> dict[str, Any]:
    """A TP communication layer: its collective (forward, backward, redone) as network + local time, all exposed."""
    bpe, tp_f, comm, combine = c["bpe"], c["tp_f"], c["comm"], c["eng"].combine
    a_b = ly.comm * bpe * q["onf"]
    live = c["multi"] & on
    conj = ly.conj
    nct_fw = combine(t["fw_ft"], t["fw_mt"])
    nct_ag = combine(t["ag_ft"], t["ag_mt"])

    def tpc(stage: str, split: np.ndarray) -> np.ndarray:
        # the forward reduces after a conjugate layer, the backward after a plain one
        net = _tp_collective_s(c["tpn"], conj if stage != "agrad" else not conj, split, a_b, tp_f)
        if stage == "fw":
            return np.where(live, net + nct_fw, 0.0)
        if stage == "agrad":
            return np.where(live, net + nct_ag, 0.0)
        # redone communication (wgrad stage): only when it moves bytes
        return np.where(live & q["rcm"], net, 0.0)

    zero = np.zeros(c["n"])
    act, actg = q["act"], q["actg"]
    s = {"fw_b": tpc("fw", c["split_b"]), "fw_e": tpc("fw", c["split_e"]),
         "ag_b": tpc("agrad", c["split_b"]), "ag_e": tpc("agrad", c["split_e"]),
         "rc_b": tpc("wgrad", c["split_b"]), "rc_e": tpc("wgrad", c["split_e"]),
         "fw_time": zero, "ag_time": zero, "wg_time": zero,
         "act_b": np.where(comm == 2, act * bpe / tp_f, act * bpe if ly.conj else 0.0),
         "actg_b": np.where(comm == 2, act * bpe / tp_f, 0.0 if ly.conj else actg * bpe)}
    # a communication layer's time is all exposed
    s.update(fw_exp_b=s["fw_b"], fw_exp_e=s["fw_e"], ag_exp_b=s["ag_b"], ag_exp_e=s["ag_e"], rc_exp_b=s["rc_b"],
             rc_exp_e=s["rc_e"])
    return s


def _linov_net_s(stage: str, split: np.ndarray, conj: bool, rs_size: Any, ag_size: Any, rcm: np.ndarray,
                 live: np.ndarray, c: dict[str, Any]) -> np.ndarray:
    """TP communication of an overlapped GEMM in one stage (collective + local reduction where it reduces)."""
    tpn, tp_f, bpe, vtime = c["tpn"], c["tp_f"], c["bpe"], c["eng"].vtime
    if conj:
        if stage == "fw":
            t = np.where(split, _net_time(tpn, "reduce_scatter", rs_size, tp_f),
                         _net_time(tpn, "all_reduce", rs_size, tp_f)) + vtime(rs_size / bpe * (tp_f - 1) / tp_f)
        elif stage == "agrad":
            t = np.where(split, _net_time(tpn, "all_gather", rs_size, tp_f), 0.0)
        else:
            t = np.where(rcm, np.where(split, _net_time(tpn, "reduce_scatter", rs_size, tp_f),
                                       _net_time(tpn, "all_reduce", rs_size, tp_f)), 0.0)
    else:
        if stage == "fw":
            t = np.where(split, _net_time(tpn, "all_gather", ag_size, tp_f), 0.0)
        elif stage == "agrad":
            t = np.where(split, _net_time(tpn, "reduce_scatter", ag_size, tp_f),
                         _net_time(tpn, "all_reduce", ag_size, tp_f)) + vtime(ag_size / bpe * (tp_f - 1) / tp_f)
        else:
            t = np.where(rcm & split, _net_time(tpn, "all_gather", ag_size, tp_f), 0.0)
    return np.where(live, t, 0.0)


def _tiled_s(ft: np.ndarray, mt: np.ndarray, net: np.ndarray, c: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Time and exposed communication of a GEMM in TP tiles overlapping its communication (+1 exposed tile for ``pipe``)."""
    combine, pu = c["eng"].combine, c["pu"]
    base = combine(ft, mt)
    slowed = combine(ft / (1 - pu), mt)
    T = c["tp_f"]
    ft_s_tile = ft / (1 - pu) / T
    net_tile = net / T
    c_tile = base / T
    cs_tile = slowed / T
    infl = net_tile - ft_s_tile
    t_exposed = c_tile + (T - 1) * cs_tile
    t_hidden = c_tile + (T - 1) * c_tile + (T - 1) * net_tile * pu
    time = np.where(infl > 0, t_exposed, t_hidden)
    exp = np.where(infl > 0, (T - 1) * infl, 0.0)
    pipe = c["ovl"] == 2
    time = time + np.where(pipe, net_tile, 0.0)
    exp = exp + np.where(pipe, net_tile, 0.0)
    has = net != 0
    return np.where(has, time, base), np.where(has, exp, 0.0)


def _overlapped_gemm_layer(ly: Any, on: np.ndarray, q: dict[str, Any], t: dict[str, Any],
                           c: dict[str, Any]) -> dict[str, Any]:
    """A GEMM with overlapped TP communication: tiled time and exposure per stage."""
    bpe, rcm = c["bpe"], q["rcm"]
    live = c["multi"] & on
    args = (ly.conj, q["out"] * bpe, q["inp"] * bpe, rcm, live, c)  # reduce-scatter bytes, all-gather bytes
    s = {"fw_b": _linov_net_s("fw", c["split_b"], *args), "fw_e": _linov_net_s("fw", c["split_e"], *args),
         "ag_b": _linov_net_s("agrad", c["split_b"], *args), "ag_e": _linov_net_s("agrad", c["split_e"], *args),
         "rc_b": _linov_net_s("wgrad", c["split_b"], *args), "rc_e": _linov_net_s("wgrad", c["split_e"], *args)}
    s["fw_time"], fw_x = _tiled_s(t["fw_ft"], t["fw_mt"], s["fw_b"], c)
    s["ag_time"], ag_x = _tiled_s(t["ag_ft"], t["ag_mt"], s["ag_b"], c)
    s["wg_time"], _ = _tiled_s(t["wg_ft"], t["wg_mt"], s["rc_b"], c)
    s["fw_exp_b"] = s["fw_exp_e"] = fw_x
    s["ag_exp_b"] = s["ag_exp_e"] = ag_x
    # Calculon reads the exposure left by the last forward processing call here
    s["rc_exp_b"] = s["rc_exp_e"] = np.where(rcm, fw_x, 0.0)
    s["act_b"], s["actg_b"] = q["act"] * bpe, q["actg"] * bpe
    return s


def _plain_layer(ly: Any, q: dict[str, Any], t: dict[str, Any], c: dict[str, Any]) -> dict[str, Any]:
    """Any other layer: no communication, each stage's roofline time."""
    zero = np.zeros(c["n"])
    combine, bpe = c["eng"].combine, c["bpe"]
    s = dict.fromkeys(("fw_b", "fw_e", "ag_b", "ag_e", "rc_b", "rc_e", "fw_exp_b", "fw_exp_e", "ag_exp_b", "ag_exp_e",
                       "rc_exp_b", "rc_exp_e"), zero)
    s["fw_time"] = combine(t["fw_ft"], t["fw_mt"])
    s["ag_time"] = combine(t["ag_ft"], t["ag_mt"])
    s["wg_time"] = combine(t["wg_ft"], t["wg_mt"])
    if ly.kind == DROPOUT:
        s["act_b"], s["actg_b"] = q["act"], q["actg"]  # one-byte mask
    else:
        s["act_b"], s["actg_b"] = q["act"] * bpe, q["actg"] * bpe
    return s


def _accumulate(rows: np.ndarray, buf: np.ndarray, ly: Any, q: dict[str, Any], b: dict[str, Any], t: dict[str, Any],
                s: dict[str, Any], c: dict[str, Any]) -> None:
    """Add one layer to the block's accumulators (``rows``, in ``_ACC_KEYS`` order; ``buf`` is
    scratch of the same shape): per-stage flops, bytes and times, TP exposure, capacity."""
    n, bpe, training, shard = c["n"], c["bpe"], c["training"], c["shard"]
    rc, rcm = q["rc"], q["rcm"]
    _add_rows(rows, buf, 0, (q["fw"], t["fw_ft"], b["fw_mem"], t["fw_mt"], s["fw_time"], s["fw_b"], s["fw_e"],
                             s["fw_exp_b"], s["fw_exp_e"]))
    # recompute statistics accumulate the running forward totals (Calculon behaviour)
    rows[9:13] += np.where(rc, rows[:4], 0.0)
    rows[13] += np.where(rc, s["fw_time"], 0.0)
    for i, x in enumerate((s["rc_b"], s["rc_e"], s["rc_exp_b"], s["rc_exp_e"]), start=14):
        buf[i] = x
    rows[14:18] += np.where(rcm, buf[14:18], 0.0)
    # capacity per block
    act_b, out = s["act_b"], q["out"]
    if not (isinstance(ly.reused, bool) and ly.reused):
        act_work = np.where(np.asarray(ly.reused, dtype=bool), 0.0, act_b)
    else:
        act_work = 0.0
    store = act_b.copy() if isinstance(act_b, np.ndarray) else np.full(n, act_b)
    store = store - np.where(training & ~np.asarray(ly.out_stored, dtype=bool), out * bpe, 0.0)
    store = store - np.where(training & ~np.asarray(ly.stored, dtype=bool), act_b, 0.0)
    _add_rows(rows, buf, 18, (q["ag"], t["ag_ft"], b["ag_mem"], t["ag_mt"], s["ag_time"], s["ag_b"], s["ag_e"],
                              s["ag_exp_b"], s["ag_exp_e"], q["wg"], t["wg_ft"], b["wg_mem"], t["wg_mt"], s["wg_time"],
                              b["op_flops"], t["op_ft"], b["optim_b"], t["op_mt"], t["op_time"], q["w"] * bpe, act_work,
                              store, q["wgrads"] * bpe / shard, q["wgrads"] * 4, s["actg_b"], b["optim_b"]))


#: Up to this many rows, a layer's contributions are gathered and added in one operation
#: (fewer numpy calls); beyond it, row by row (less memory traffic).
GATHER_ROWS = 512


def _add_rows(rows: np.ndarray, buf: np.ndarray, start: int, vals: tuple[Any, ...]) -> None:
    """``rows[start + i] += vals[i]`` for every i (the same sums either way)."""
    if rows.shape[1] > GATHER_ROWS:
        for i, x in enumerate(vals, start=start):
            rows[i] += x
        return
    for i, x in enumerate(vals, start=start):
        buf[i] = x
    rows[start:start + len(vals)] += buf[start:start + len(vals)]


#: Link (busy) times of the networks, reported beside the exposed ones.
LINK_PARTS = ("tp_comm_link_time", "pp_comm_link_time", "dp_comm_link_time", "recomm_link_time")


def _batch_stats(a: dict[str, np.ndarray], v: dict[str, Any]) -> dict[str, np.ndarray]:
    """Whole-batch times, memory and feasibility from the per-block accumulators, in stages:
    geometry, per-batch compute and communication, chunk times with offload, bubble, DP
    exposure, totals, offload requirements and efficiencies, capacity errors."""
    g = _batch_geometry(v)
    parts = _batch_work(a, v, g)
    ch = _chunk_times(a, v, g)
    parts["bubble_time"] = _bubble(v, g, ch)
    parts.update(_dp_exposure(a, v, g, ch))
    out = {k: parts[k] for k in (*TIME_PARTS, *LINK_PARTS)}
    total = np.zeros(v["n"])
    for k in TIME_PARTS:
        total = total + out[k]
    out["total_time"] = total
    batch = v["batch"].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["sample_rate"] = batch / total
    cap = _capacity(a, v)
    out.update(cap)
    out.update(_offload_requirements(a, v, ch))
    out.update(_efficiencies(a, v, g, out))
    err = v["err"].copy()
    system: System = v["system"]
    np.copyto(err, ERR["mem_tier1_capacity_exceeded"], where=(err == 0) & (cap["mem_tier1_bytes"] > system.mem1.capacity_bytes))
    np.copyto(err, ERR["mem_tier2_capacity_exceeded"], where=(err == 0) & (cap["mem_tier2_bytes"] > system.mem2.capacity_bytes))
    out["error"] = err
    out["feasible"] = err == 0
    return out


def _batch_geometry(v: Mapping[str, Any]) -> dict[str, Any]:
    """Stage 1: float counts of the batch (microbatches, blocks per processor and per chunk,
    chunks) and the pipeline / data-parallel network views."""
    nmb = v["nmb"].astype(np.float64)
    interleave = v["interleave"]
    chunks = np.maximum(interleave, 1).astype(np.float64)
    bpc = np.maximum(v["bpp"] // np.maximum(interleave, 1), 1).astype(np.float64)  # blocks per chunk
    nets: _Nets = v["nets"]
    pnv = nets.view(v["pn"])
    fw_pp, bw_pp = _pp_message_times(pnv, v)
    return {"tr": v["training"].astype(np.float64), "nmb": nmb, "bpp": v["bpp"].astype(np.float64),
            "chunks": chunks, "bpc": bpc, "base_pc": bpc - 1.0, "per": nmb * chunks,
            "pnv": pnv, "dnv": nets.view(v["dn"]), "chunk_fw_pp": fw_pp, "chunk_bw_pp": bw_pp}


def _batch_work(a: Mapping[str, np.ndarray], v: Mapping[str, Any], g: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Stage 2: compute, optimizer, TP and PP communication of the batch (link and exposed)."""
    mult = g["bpp"] * g["nmb"]
    per, base_pc, tr = g["per"], g["base_pc"], g["tr"]
    tp_fw = per * (base_pc * a["fw_tp_b"] + a["fw_tp_e"])
    tp_fw_x = per * (base_pc * a["fw_exp_b"] + a["fw_exp_e"])
    tp_bw = per * (base_pc * a["ag_tp_b"] + a["ag_tp_e"])
    tp_bw_x = per * (base_pc * a["ag_exp_b"] + a["ag_exp_e"])
    recomm = per * (base_pc * a["recomm_b"] + a["recomm_e"])
    recomm_x = per * (base_pc * a["recomm_exp_b"] + a["recomm_exp_e"])
    chunk_fw_pp, chunk_bw_pp = g["chunk_fw_pp"], g["chunk_bw_pp"]
    pp = v["pp"]
    n_fw_p2p = np.where(pp > 1, g["chunks"], 0.0)
    n_bw_p2p = np.where((pp > 1) & v["training"], g["chunks"], 0.0)
    pp_link = g["nmb"] * n_fw_p2p * chunk_fw_pp + g["nmb"] * n_bw_p2p * chunk_bw_pp
    return {"fw_time": mult * a["fw_time"], "bw_time": mult * a["ag_time"] + mult * a["wg_time"],
            "optim_step_time": g["bpp"] * a["op_time"], "recompute_time": mult * a["re_time"],
            "recomm_exposed_time": recomm_x * tr, "tp_comm_exposed_time": tp_fw_x + tp_bw_x,
            "pp_comm_exposed_time": pp_link, "tp_comm_link_time": tp_fw + tp_bw, "pp_comm_link_time": pp_link,
            "recomm_link_time": recomm * tr}


def _chunk_times(a: Mapping[str, np.ndarray], v: Mapping[str, Any], g: Mapping[str, Any]) -> dict[str, Any]:
    """Stage 3: forward/backward time of a base and an edge block with the exposed offload
    (to the second tier, exposed only beyond the block's own time), and of a chunk."""
    mem2 = v["system"].mem2
    tr = g["tr"]

    def off_time(size: Any) -> Any:
        if mem2.effective_bandwidth_Bps <= 0:
            return np.where(size > 0, np.inf, 0.0)
        return size / (mem2.effective_bandwidth_Bps * mem2.efficiency(size))

    w_off, a_off, o_off = v["w_off"], v["a_off"], v["o_off"]
    c: dict[str, Any] = {}
    c["chunk_fw_pp"], c["chunk_bw_pp"] = g["chunk_fw_pp"], g["chunk_bw_pp"]
    act_off_size = c["act_off_size"] = np.where(v["full"], v["block_ckpt"], a["act_store"])
    c["fw_off_size"] = np.maximum(np.where(w_off, a["weight"], 0.0), np.where(a_off, act_off_size, 0.0))
    c["bw_off_size"] = tr * (np.where(w_off, a["weight"], 0.0) + np.where(a_off, act_off_size, 0.0)
                             + np.where(o_off, a["optim"], 0.0))
    fw_off_t = off_time(c["fw_off_size"])
    bw_off_t = tr * off_time(c["bw_off_size"])
    c["base_fw_no"] = a["fw_time"] + a["fw_exp_b"]
    c["edge_fw_no"] = a["fw_time"] + a["fw_exp_e"] + c["chunk_fw_pp"]
    base_fw_ovh = np.maximum(0.0, fw_off_t + a["fw_mt"] - c["base_fw_no"])
    edge_fw_ovh = np.maximum(0.0, fw_off_t + a["fw_mt"] - c["edge_fw_no"])
    c["base_fw"] = c["base_fw_no"] + base_fw_ovh
    c["edge_fw"] = c["edge_fw_no"] + edge_fw_ovh
    bw_common = a["re_time"] + a["ag_time"] + a["wg_time"]
    c["base_bw_no"] = bw_common + a["recomm_exp_b"] + a["ag_exp_b"]
    c["edge_bw_no"] = bw_common + a["recomm_exp_e"] + a["ag_exp_e"] + c["chunk_bw_pp"]
    c["bw_mem"] = a["ag_mt"] + a["wg_mt"]
    base_bw_ovh = np.maximum(0.0, bw_off_t + c["bw_mem"] - c["base_bw_no"])
    edge_bw_ovh = np.maximum(0.0, bw_off_t + c["bw_mem"] - c["edge_bw_no"])
    c["base_bw"] = c["base_bw_no"] + base_bw_ovh
    c["edge_bw"] = c["edge_bw_no"] + edge_bw_ovh
    base_pc = g["base_pc"]
    c["chunk_fw"] = base_pc * c["base_fw"] + c["edge_fw"]
    c["chunk_bw"] = base_pc * c["base_bw"] + c["edge_bw"]
    c["fw_offload_exposed_time"] = g["per"] * (base_pc * base_fw_ovh + edge_fw_ovh)
    c["bw_offload_exposed_time"] = tr * g["per"] * (base_pc * base_bw_ovh + edge_bw_ovh)
    return c


def _bubble(v: Mapping[str, Any], g: Mapping[str, Any], c: Mapping[str, Any]) -> np.ndarray:
    """Stage 4: the 1F1B bubble, ``(PP-1)`` chunk times plus the extra bubbles of an
    interleaved schedule whose microbatches are not a multiple of PP, less the blocks missing
    on later stages of an uneven split."""
    safe_pp = v["safe_pp"]
    chunk_time = c["chunk_fw"] + c["chunk_bw"]
    red_blocks = v["reduction_blocks"].astype(np.float64)
    bubble_red = np.where(g["base_pc"] > 0, red_blocks * (c["base_fw"] + c["edge_fw"] + c["base_bw"] + c["edge_bw"]) / 2,
                          red_blocks * (c["edge_fw"] + c["edge_bw"]))
    rem = v["nmb"] % safe_pp
    extra = np.where(rem != 0, (g["chunks"] - 1) * (safe_pp - rem), 0.0)
    return (safe_pp - 1) * chunk_time + (extra * chunk_time - bubble_red)


def _dp_exposure(a: Mapping[str, np.ndarray], v: Mapping[str, Any], g: Mapping[str, Any],
                 c: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Stage 5: the data-parallel gradient reduction, exposed or hidden behind the backward
    pass chunk by chunk (memory-bound parts cannot hide communication)."""
    sharding, safe_pp, bpc, base_pc = v["sharding"], v["safe_pp"], g["bpc"], g["base_pc"]
    dp_mem = a["ag_mt"] + a["wg_mt"] + a["re_mt"]
    base_dpw = c["base_bw"] - dp_mem
    edge_dpw = c["edge_bw"] - dp_mem
    dp_compute = a["ag_ft"] + a["wg_ft"] + a["re_ft"]
    opt_hide = a["op_time"] - a["op_mt"]
    base_dpw = np.where(~sharding, base_dpw + opt_hide, base_dpw)
    edge_dpw = np.where(~sharding, edge_dpw + opt_hide, edge_dpw)
    dp_compute = np.where(~sharding, dp_compute + a["op_ft"], dp_compute)
    same_tp = v["dn"] == v["tn"]
    base_dpw = np.where(same_tp, base_dpw - (a["recomm_b"] + a["ag_tp_b"]), base_dpw)
    edge_dpw = np.where(same_tp, edge_dpw - (a["recomm_e"] + a["ag_tp_e"]), edge_dpw)
    chunk_dpw = base_pc * base_dpw + edge_dpw
    do_dp = (v["dp"] > 1) & v["training"]
    dnv = g["dnv"]
    dp_t = _dp_reduce_time(dnv, a["weight"], v)
    dpu = dnv["pu"]
    chunk_dp_t = bpc * dp_t
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.floor(chunk_dp_t / c["chunk_bw"])
    rem = v["nmb"] % safe_pp
    cap = np.where(rem != 0, rem, safe_pp).astype(np.float64)
    n_pp_hit = np.where(v["dn"] == v["pn"], np.minimum(ratio, cap), 0.0)
    infl = chunk_dp_t - (safe_pp * chunk_dpw - n_pp_hit * c["chunk_bw_pp"]) + safe_pp * (bpc * dp_compute) * dpu
    n_ovl_chunks = g["chunks"] - 1
    ovl_exposed = np.where(infl > 0, n_ovl_chunks * infl, n_ovl_chunks * chunk_dp_t * dpu)
    last_size = bpc - 1
    last_win = np.where(base_pc > 0, chunk_dpw - c["chunk_bw_pp"] - (c["base_bw"] + c["edge_bw"]) / 2
                        + np.where(~sharding, opt_hide, 0.0), 0.0)
    last_infl = last_size * dp_t + (dp_compute * dpu - last_win)
    last_exposed = np.where(last_infl > 0, last_infl, last_size * dp_t * dpu)
    bpp = g["bpp"]
    dp_exposed = np.where(v["dp_ovl"], dp_t + ovl_exposed + last_exposed, bpp * dp_t)
    return {"dp_comm_exposed_time": np.where(do_dp, dp_exposed, 0.0), "dp_comm_link_time": np.where(do_dp, bpp * dp_t, 0.0),
            "fw_offload_exposed_time": c["fw_offload_exposed_time"], "bw_offload_exposed_time": c["bw_offload_exposed_time"]}


def _offload_requirements(a: Mapping[str, np.ndarray], v: Mapping[str, Any], c: Mapping[str, Any]) -> dict[str, Any]:
    """Stage 6: second-tier bandwidth that would hide each offload stream in its window."""
    training = v["training"]
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        fw_window = np.minimum(c["base_fw_no"] - a["fw_mt"], c["edge_fw_no"] - a["fw_mt"])
        bw_window = np.minimum(c["base_bw_no"] - c["bw_mem"], c["edge_bw_no"] - c["bw_mem"])
        out["act_offload_bw_req"] = c["act_off_size"] / fw_window
        out["weight_offload_bw_req"] = a["weight"] / fw_window
        out["optim_offload_bw_req"] = np.where(training, (a["w_grad"] + a["optim"]) / bw_window, 0.0)
        out["offload_bw_req"] = np.where(training, np.maximum(c["fw_off_size"] / fw_window, c["bw_off_size"] / bw_window),
                                         c["fw_off_size"] / fw_window)
    return out


def _efficiencies(a: Mapping[str, np.ndarray], v: Mapping[str, Any], g: Mapping[str, Any],
                  out: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Stage 7: useful flops, compute/system/total efficiency and block-level values."""
    bpp, nmb, total = g["bpp"], g["nmb"], out["total_time"]
    useful = a["fw_flops"] + g["tr"] * (a["ag_flops"] + a["wg_flops"] + a["op_flops"])
    compute = out["fw_time"] + out["bw_time"] + out["optim_step_time"]
    ideal = bpp * nmb * useful / v["mpeak"]
    r: dict[str, Any] = {"useful_flops": useful}
    with np.errstate(divide="ignore", invalid="ignore"):
        r["compute_efficiency"] = ideal / compute
        r["system_efficiency"] = compute / total
        r["total_efficiency"] = ideal / total
    r["blocks_per_proc"] = bpp
    r["num_microbatches"] = nmb
    # block-level values useful for checks
    for k in ("fw_time", "fw_flops", "fw_mem", "re_time", "ag_time", "wg_time", "op_time", "weight", "act_work",
              "act_store", "optim"):
        r["block_" + k] = a[k]
    return r


def _pp_message_times(pnv: dict[str, Any], v: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Forward and backward pipeline message time of one chunk edge (a zero-byte message still
    costs the latency); the sequence-parallel layouts send 1/TP of the activation."""
    act_elems = v["bs"] * v["m"]["hidden"]
    sp_elems = (v["bs"] // v["safe_tp"]) * v["m"]["hidden"]
    fw_pp_size = np.where(v["pp"] > 1, np.where(v["comm"] != 0, sp_elems, act_elems) * v["bpe"], 0.0)
    bw_pp_size = np.where(v["training"], fw_pp_size, 0.0)
    return _net_time(pnv, "p2p", fw_pp_size, 2.0), _net_time(pnv, "p2p", bw_pp_size, 2.0)


def _dp_reduce_time(dnv: dict[str, Any], block_weight: np.ndarray, v: Mapping[str, Any]) -> np.ndarray:
    """Gradient reduction of one block's weights over DP (reduce-scatter + all-gather when
    the optimizer is sharded, else all-reduce); 0 without DP or training."""
    dp = v["dp"]
    do_dp = (dp > 1) & v["training"]
    dp_size = np.where(do_dp, block_weight, 0.0)
    dpf = np.maximum(dp, 2).astype(np.float64)
    dp_t = np.where(v["sharding"], _net_time(dnv, "reduce_scatter", dp_size, dpf)
                    + _net_time(dnv, "all_gather", dp_size, dpf), _net_time(dnv, "all_reduce", dp_size, dpf))
    return np.where(do_dp, dp_t, 0.0)


def _capacity(a: Mapping[str, np.ndarray], v: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Bytes per processor in tier 1 and tier 2 and the memory breakdown (no time involved)."""
    training, full = v["training"], v["full"]
    w_off, a_off, o_off = v["w_off"], v["a_off"], v["o_off"]
    tr = training.astype(np.float64)
    bpp = v["bpp"].astype(np.float64)
    safe_pp = v["safe_pp"]
    chunks = np.maximum(v["interleave"], 1).astype(np.float64)
    weight_space = a["weight"] * bpp
    mem_mb = np.minimum(v["nmb"].astype(np.float64), safe_pp).astype(np.float64)
    il = v["interleave"] > 1
    pp_factor = np.where(il, mem_mb * (1 + (safe_pp - 1) / (chunks * safe_pp)), mem_mb)
    act_space = np.where(training & ~full, a["act_work"] + a["act_store"] * (bpp * pp_factor - 1), a["act_work"])
    ckpt = np.where(training & full, bpp * v["block_ckpt"] * pp_factor, 0.0)
    act_grad = a["act_grad"] * tr
    w_grad = tr * np.where(bpp == 1, a["w_grad_ns"], a["w_grad_ns"] + a["w_grad"] * (bpp - 1))
    optim = tr * a["optim"] * bpp
    weight_min = 2 * a["weight"]
    act_min = np.where(~full, a["act_work"] + a["act_store"], a["act_work"])
    ckpt_min = np.where(training & full, 2 * v["block_ckpt"], 0.0)
    wg_min = tr * (a["w_grad_ns"] + a["w_grad"])
    opt_min = tr * 2 * a["optim"]
    t1 = np.where(w_off, weight_min, weight_space)
    t2 = np.where(w_off, weight_space, 0.0)
    t1 = t1 + np.where(a_off, np.where(~full, act_min, act_min + ckpt_min), act_space + ckpt)
    t2 = t2 + np.where(a_off, np.where(~full, act_space, ckpt), 0.0)
    t1 = t1 + np.where(o_off, wg_min + opt_min, w_grad + optim)
    t2 = t2 + np.where(o_off, a["w_grad"] * bpp + optim, 0.0)
    t1 = t1 + act_grad
    return {"mem_tier1_bytes": t1, "mem_tier2_bytes": t2, "weight_space": weight_space, "act_space": act_space,
            "act_checkpoint_size": ckpt, "weight_grad_space": w_grad, "act_grad_space": act_grad,
            "optimizer_space": optim}


# --------------------------------------------------------------------------- messages
def human_bytes(x: float) -> str:
    """Base-2 size with three decimals, as Calculon prints capacities (``329.836 GiB``)."""
    for unit, div in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(x) >= div:
            return f"{x / div:.3f} {unit}"
    return f"{x:.3f} B"


def error_message(code: int, stats: Mapping[str, np.ndarray], i: int, exe: Executions, model: Any,
                  system: System) -> str:
    """A one-line explanation of why execution ``i`` is infeasible (Calculon's wording where it has one)."""
    name = ERRORS[int(code)]
    c = exe.cols
    tp, pp, dp = int(c["tensor_par"][i]), int(c["pipeline_par"][i]), int(c["data_par"][i])
    if name == "mem_tier1_capacity_exceeded":
        return (f"Mem tier1 needs {human_bytes(float(stats['mem_tier1_bytes'][i]))} but only has "
                f"{human_bytes(system.mem1.capacity_bytes)}")
    if name == "mem_tier2_capacity_exceeded":
        return (f"Mem tier2 needs {human_bytes(float(stats['mem_tier2_bytes'][i]))} but only has "
                f"{human_bytes(system.mem2.capacity_bytes)}")
    if name == "tp_pp_dp_product_mismatch":
        return f"tensor * pipeline * data parallelism != num_procs ({tp}*{pp}*{dp} != {int(c['num_procs'][i])})"
    if name == "batch_size_not_divisible_by_data_par":
        return f"batch_size {int(c['batch_size'][i])} is not a multiple of data_par {dp}"
    if name == "local_batch_not_divisible_by_microbatch":
        return (f"local batch {int(c['batch_size'][i]) // max(dp, 1)} is not a multiple of microbatch_size "
                f"{int(c['microbatch_size'][i])}")
    if name == "recompute_requires_training":
        return "We only perform recompute during training"
    if name == "invalid_pipeline_interleaving":
        return (f"Bad pipeline interleaving of {int(c['pipeline_interleaving'][i])}: it must divide the "
                f"blocks per processor (and be 1 with PP=1)")
    if name == "optimizer_sharding_requires_dp_gt_1":
        return "We perform optimizer sharding with DP > 1"
    if name == "tp_overlap_requires_tp_gt_1":
        return "We perform TP comm overlap with TP > 1"
    if name == "seq_par_ag_redo_requires_rs_ag_without_full_recompute":
        return "seq_par_ag_redo needs tensor_par_comm_type rs_ag and activation_recompute other than full"
    if name == "dp_overlap_requires_training_and_dp_gt_1":
        return "We only perform DP comm overlap during training with DP > 1"
    if name == "optimizer_offload_requires_training":
        return "We only perform optimizer offloading during training"
    if name == "network_index_out_of_range":
        return f"network index out of range: the system has {len(system.networks)} networks"
    if name in ("network_tier_too_small_for_parallelism", "network_tier_must_be_filled"):
        for k, net in enumerate(system.networks):
            size = 1
            used = False
            for par, idx in ((tp, c["tensor_par_net"][i]), (pp, c["pipeline_par_net"][i]), (dp, c["data_par_net"][i])):
                if par > 1 and idx == k:
                    size *= par
                    used = True
            if used and size > net.size:
                return f"Network tier{k} isn't big enough ({size} > {net.size} endpoints)"
            if used and net.must_be_filled and net.size % size != 0:
                return f"Network tier{k} isn't fully used ({size} does not divide {net.size})"
    if name == "offload_needs_at_least_3_blocks_per_proc":
        return "Offloading requires each processor to handle at least 3 blocks"
    if name == "batch_seq_not_divisible_by_tp":
        return f"We should split batch_seq={int(c['microbatch_size'][i]) * _get(model, 'seq', i)} between {tp} TP partitions evenly"
    if name == "model_dim_not_divisible_by_tp":
        for key, label in (("hidden", "hidden"), ("ffn", "feedforward"), ("heads", "attn_heads")):
            val = _get(model, key, i)
            if val % max(tp, 1):
                return f"We should split {label}={val} between {tp} TP partitions evenly"
    if name == "datatype_not_supported_by_system":
        return f"Unsupported type: {c['datatype'][i]} (system {system.name} has {', '.join(system.datatypes)})"
    if name == "invalid_execution_field":
        return "num_procs, tensor_par, pipeline_par, data_par, batch_size and microbatch_size must be > 0"
    return name


def _get(model: Any, key: str, i: int) -> int:
    if isinstance(model, ModelShape):
        return int(getattr(model, {"ffn": "ffn", "seq": "seq"}.get(key, key)))
    return int(np.broadcast_to(np.asarray(model[key]), (i + 1,))[i])


def check_feasible(stats: Mapping[str, np.ndarray], exe: Executions, model: Any, system: System, i: int = 0) -> None:
    """Raise a one-line :class:`DseError` if execution ``i`` is infeasible."""
    code = int(stats["error"][i])
    if code:
        err = DseError(f"{ERRORS[code]}: {error_message(code, stats, i, exe, model, system)}")
        err.category = ERRORS[code]  # type: ignore[attr-defined]
        raise err
