"""Best training execution for a model on N processors, searched as columns.

The space is the one Calculon's ``llm-optimal-execution`` enumerates
(calculon-ai/calculon ``calculon/llm/optimal_execution.py``): TP (divisors of N that
divide hidden and heads), PP (divisors of ``min(N/TP, blocks)`` that divide the block
count), DP = N/(TP*PP), pipeline interleaving (divisors of blocks/PP), the batch (largest
multiple of DP not above ``max_batch``), activation recompute, optimizer sharding, TP
communication type, all-gather redo, DP/TP overlap, the three offload flags, fused
activation, microbatch size (divisors of the local batch with ``mbs*seq`` divisible by TP)
and the network tier of each parallel dimension.

Instead of looping over configurations, every candidate is built as a row of
:class:`~models.blocks.llm.executions.Executions` and evaluated in one vectorized pass
(chunked to bound memory).  Calculon's ``-m`` rule (for each knob combination, stop
increasing the microbatch at the first size with no feasible network placement) is
applied afterwards on the evaluated columns, so the winner is the one Calculon's ``-m``
search reports; ``mbs_break=False`` searches everything.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dse.errors import DseError
from models.blocks.llm.executions import Executions
from models.blocks.llm.hardware import System, canonical_dtype
from models.blocks.llm.models import ModelShape
from models.blocks.llm.training import evaluate


def _divisors(x: int) -> list[int]:
    return [d for d in range(1, x + 1) if x % d == 0]


def _batch_for(dp: int, max_batch: int) -> int | None:
    if dp > max_batch:
        return None
    return (max_batch // dp) * dp


@dataclass
class SearchResult:
    """Top executions (best first) and the bookkeeping of the search."""

    best: list[dict[str, Any]]  # each: {"sample_rate", "execution", "stats"}
    candidates: int  # configurations built and evaluated
    evaluated: int  # configurations Calculon's search would evaluate (with -m)
    feasible: int  # feasible among those
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def best_sample_rate(self) -> float:
        return float(self.best[0]["sample_rate"]) if self.best else float("nan")


def candidates(
    model: ModelShape, num_procs: int, max_batch: int, system: System, datatype: str = "float16", *,
    fused: tuple[bool, ...] = (True,), allow_tp_overlap: bool = True, allow_dp_overlap: bool = True,
    training: bool = True,
) -> tuple[Executions, np.ndarray, np.ndarray]:
    """All candidate executions, plus a knob-combination id and microbatch rank per row."""
    if num_procs <= 0 or max_batch <= 0:
        raise DseError("num_procs and max_batch must be positive")
    datatype = canonical_dtype(datatype)
    nets = len(system.networks)
    has_mem2 = system.mem2.capacity_bytes > 0
    blocks, seq = model.layers, model.seq
    parts: dict[str, list[np.ndarray]] = {}
    groups: list[np.ndarray] = []
    ranks: list[np.ndarray] = []
    gid = 0
    for tp in _divisors(num_procs):
        if model.hidden % tp or model.heads % tp:
            continue
        max_pp = min(num_procs // tp, blocks)
        for pp in _divisors(max_pp):
            if num_procs % (tp * pp) or blocks % pp:
                continue
            dp = num_procs // (tp * pp)
            batch = _batch_for(dp, max_batch)
            if batch is None:
                continue
            local = batch // dp
            mbs_list = [c for c in _divisors(local) if (c * seq) % tp == 0]
            if not mbs_list:
                continue
            ints = [1] if pp == 1 else _divisors(blocks // pp)
            knobs = []
            for rec, shard, comm in itertools.product((2, 1, 0), (True, False) if dp > 1 else (False,), (0, 1, 2)):
                can_redo = comm == 2 and rec != 2
                for redo, dpo, tpo, wo, ao, oo, fu in itertools.product(
                        (True, False) if can_redo else (False,),
                        (True, False) if dp > 1 and allow_dp_overlap and training else (False,),
                        (0, 1, 2) if tp > 1 and allow_tp_overlap else (0,),
                        (True, False) if has_mem2 else (False,),
                        (True, False) if has_mem2 and rec != 2 else (False,),
                        (True, False) if has_mem2 and training else (False,),
                        fused):
                    if not training and rec != 0:
                        continue
                    knobs.append((rec, shard, comm, redo, dpo, tpo, wo, ao, oo, fu))
            K = np.asarray(knobs, dtype=np.int64)  # (k, 10)
            nets_t = range(nets) if tp > 1 else (0,)
            nets_p = range(nets) if pp > 1 else (0,)
            nets_d = range(nets) if dp > 1 else (0,)
            placements = np.asarray(list(itertools.product(nets_t, nets_p, nets_d)), dtype=np.int64)
            for ppint in ints:
                nk, nm, npl = len(K), len(mbs_list), len(placements)
                ik, im, ip = np.meshgrid(np.arange(nk), np.arange(nm), np.arange(npl), indexing="ij")
                ik, im, ip = ik.ravel(), im.ravel(), ip.ravel()
                rows = len(ik)
                cols = {
                    "num_procs": np.full(rows, num_procs), "tensor_par": np.full(rows, tp),
                    "pipeline_par": np.full(rows, pp), "data_par": np.full(rows, dp),
                    "tensor_par_net": placements[ip, 0], "pipeline_par_net": placements[ip, 1],
                    "data_par_net": placements[ip, 2], "batch_size": np.full(rows, batch),
                    "microbatch_size": np.asarray(mbs_list)[im], "pipeline_interleaving": np.full(rows, ppint),
                    "activation_recompute": K[ik, 0], "optimizer_sharding": K[ik, 1].astype(bool),
                    "tensor_par_comm_type": K[ik, 2], "seq_par_ag_redo": K[ik, 3].astype(bool),
                    "data_par_overlap": K[ik, 4].astype(bool), "tensor_par_overlap": K[ik, 5],
                    "weight_offload": K[ik, 6].astype(bool), "activations_offload": K[ik, 7].astype(bool),
                    "optimizer_offload": K[ik, 8].astype(bool), "fused_activation": K[ik, 9].astype(bool),
                }
                for k, v in cols.items():
                    parts.setdefault(k, []).append(v)
                groups.append(gid + ik)
                ranks.append(im)
                gid += nk
    if not groups:
        raise DseError(f"no legal (TP, PP, DP) split of {num_procs} processors for {model.name} "
                       f"with max batch {max_batch}")
    n = sum(len(g) for g in groups)
    cols = {k: np.concatenate(v) for k, v in parts.items()}
    exe = Executions.from_columns(
        n, **cols, datatype=datatype, attention_type="multihead", training=training,
    )
    return exe, np.concatenate(groups), np.concatenate(ranks)


def search(
    model: ModelShape, num_procs: int, max_batch: int, system: System, datatype: str = "float16", *,
    top_n: int = 1, mbs_break: bool = True, fused: tuple[bool, ...] = (True,), allow_tp_overlap: bool = True,
    allow_dp_overlap: bool = True, chunk: int = 262144,
) -> SearchResult:
    """Best executions by sample rate (training, Calculon's search space and ``-m`` rule)."""
    t0 = time.perf_counter()
    exe, group, rank = candidates(model, num_procs, max_batch, system, datatype, fused=fused,
                                  allow_tp_overlap=allow_tp_overlap, allow_dp_overlap=allow_dp_overlap)
    n = exe.n
    rate = np.empty(n)
    feas = np.empty(n, dtype=bool)
    for s in range(0, n, chunk):
        sub = exe.take(slice(s, s + chunk))
        st = evaluate(model, system, sub)
        rate[s:s + chunk] = st["sample_rate"]
        feas[s:s + chunk] = st["feasible"]
    allowed = np.ones(n, dtype=bool)
    if mbs_break:
        G = int(group.max()) + 1
        R = int(rank.max()) + 1
        any_ok = np.zeros(G * R, dtype=bool)
        np.logical_or.at(any_ok, group * R + rank, feas)
        exists = np.zeros(G * R, dtype=bool)
        exists[group * R + rank] = True
        ok = (any_ok | ~exists).reshape(G, R)  # missing ranks never stop the scan
        ok_and_exists = any_ok.reshape(G, R)
        # first existing rank without a feasible placement
        stop = np.where(~ok_and_exists & exists.reshape(G, R), np.arange(R)[None, :], R).min(axis=1)
        del ok
        allowed = rank <= stop[group]
    good = allowed & feas
    order = np.nonzero(good)[0]
    order = order[np.argsort(-rate[order], kind="stable")][:top_n]
    best = []
    if len(order):
        st = evaluate(model, system, exe.take(order))
        for j, i in enumerate(order):
            best.append({"sample_rate": float(rate[i]), "execution": exe.record(int(i)),
                         "stats": {k: (float(v[j]) if np.ndim(v) else v) for k, v in st.items()}})
    return SearchResult(best, n, int(allowed.sum()), int(good.sum()), time.perf_counter() - t0)
