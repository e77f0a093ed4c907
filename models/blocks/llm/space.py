"""The training-execution search space, enumerated shape by shape (never materialized whole).

The space is the one Calculon's ``llm-optimal-execution`` enumerates (calculon-ai/calculon
``calculon/llm/optimal_execution.py``): TP (divisors of N that divide hidden and heads), PP
(divisors of ``min(N/TP, blocks)`` that divide the block count), DP = N/(TP*PP), pipeline
interleaving (divisors of blocks/PP), the batch (largest multiple of DP not above
``max_batch``), then per (TP, PP, interleaving) -- a :class:`Shape` -- every combination of
the knobs (activation recompute, optimizer sharding, TP communication type, all-gather redo,
DP overlap, TP overlap, the three offload flags, fused activation), microbatch size (divisors
of the local batch with ``mbs*seq`` divisible by TP) and the network tier of each parallel
dimension.

A shape's rows are ``knobs x microbatches x placements`` in that (row-major) order, and
shapes follow Calculon's loop order, so ``Shape.offset + local index`` is a row's position in
the exhaustive enumeration (used to break ties exactly as an exhaustive search does).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dse.errors import DseError, allowed_list
from models.blocks.llm.hardware import System
from models.blocks.llm.models import ModelShape

#: columns of :attr:`Shape.knobs`
KNOB_COLUMNS = ("activation_recompute", "optimizer_sharding", "tensor_par_comm_type", "seq_par_ag_redo",
                "data_par_overlap", "tensor_par_overlap", "weight_offload", "activations_offload",
                "optimizer_offload", "fused_activation")
#: the knobs the per-block accumulators depend on (with TP, its network and the microbatch)
BLOCK_KNOBS = (0, 1, 2, 3, 5, 9)
_BOOL_KNOBS = (1, 3, 4, 6, 7, 8, 9)


def divisors(x: int) -> list[int]:
    """Divisors of ``x`` in ascending order."""
    small, large = [], []
    for d in range(1, math.isqrt(x) + 1):
        if x % d == 0:
            small.append(d)
            if d != x // d:
                large.append(x // d)
    return small + large[::-1]


@dataclass(frozen=True)
class SpaceOptions:
    """What the enumeration allows beyond the model and processor count."""

    fused: tuple[bool, ...] = (True,)
    allow_tp_overlap: bool = True
    allow_dp_overlap: bool = True
    training: bool = True
    tp: int | None = None  # fixed dimensions (None: searched)
    pp: int | None = None
    dp: int | None = None


@dataclass(frozen=True, eq=False)
class Shape:
    """One (TP, PP, DP, interleaving): its knob rows, microbatch sizes and network placements."""

    tp: int
    pp: int
    dp: int
    interleave: int
    batch: int
    mbs: np.ndarray  # ascending microbatch sizes
    knobs: np.ndarray  # (k, 10) int64, columns KNOB_COLUMNS
    placements: np.ndarray  # (p, 3) int64: TP, PP, DP network index
    offset: int  # exhaustive-order index of this shape's first row

    @property
    def rows(self) -> int:
        return len(self.knobs) * len(self.mbs) * len(self.placements)

    def columns(self, num_procs: int, ik: np.ndarray, im: np.ndarray, ip: np.ndarray) -> dict[str, Any]:
        """Execution columns of the rows (knob ``ik``, microbatch ``im``, placement ``ip``)."""
        k = self.knobs[ik]
        pl = self.placements[ip]
        cols: dict[str, Any] = {
            "num_procs": num_procs, "tensor_par": self.tp, "pipeline_par": self.pp, "data_par": self.dp,
            "tensor_par_net": pl[:, 0], "pipeline_par_net": pl[:, 1], "data_par_net": pl[:, 2],
            "batch_size": self.batch, "microbatch_size": self.mbs[im], "pipeline_interleaving": self.interleave,
        }
        for j, name in enumerate(KNOB_COLUMNS):
            cols[name] = k[:, j].astype(bool) if j in _BOOL_KNOBS else k[:, j]
        return cols


def _knobs(tp: int, dp: int, has_mem2: bool, opt: SpaceOptions) -> np.ndarray:
    knobs = []
    for rec, shard, comm in itertools.product((2, 1, 0), (True, False) if dp > 1 else (False,), (0, 1, 2)):
        if not opt.training and rec != 0:
            continue
        can_redo = comm == 2 and rec != 2
        for rest in itertools.product(
                (True, False) if can_redo else (False,),
                (True, False) if dp > 1 and opt.allow_dp_overlap and opt.training else (False,),
                (0, 1, 2) if tp > 1 and opt.allow_tp_overlap else (0,),
                (True, False) if has_mem2 else (False,),
                (True, False) if has_mem2 and rec != 2 else (False,),
                (True, False) if has_mem2 and opt.training else (False,),
                opt.fused):
            knobs.append((rec, shard, comm, *rest))
    return np.asarray(knobs, dtype=np.int64).reshape(-1, len(KNOB_COLUMNS))


def _splits(model: ModelShape, num_procs: int, opt: SpaceOptions) -> list[tuple[int, int, int]]:
    """(TP, PP, DP) in Calculon's loop order, before the batch is considered."""
    out = []
    for tp in divisors(num_procs):
        if model.hidden % tp or model.heads % tp or (opt.tp is not None and tp != opt.tp):
            continue
        for pp in divisors(min(num_procs // tp, model.layers)):
            if num_procs % (tp * pp) or model.layers % pp or (opt.pp is not None and pp != opt.pp):
                continue
            dp = num_procs // (tp * pp)
            if opt.dp is None or dp == opt.dp:
                out.append((tp, pp, dp))
    return out


def _microbatches(model: ModelShape, tp: int, local: int) -> np.ndarray:
    return np.asarray([c for c in divisors(local) if (c * model.seq) % tp == 0], dtype=np.int64)


def shapes(model: ModelShape, num_procs: int, max_batch: int, system: System,
           opt: SpaceOptions = SpaceOptions()) -> list[Shape]:
    """Every shape of the space in exhaustive order; a one-line DseError when there is none."""
    check_request(model, num_procs, max_batch, opt)
    nets = len(system.networks)
    has_mem2 = system.mem2.capacity_bytes > 0
    out: list[Shape] = []
    offset = 0
    for tp, pp, dp in _splits(model, num_procs, opt):
        if dp > max_batch:
            continue
        batch = (max_batch // dp) * dp
        mbs = _microbatches(model, tp, batch // dp)
        if not len(mbs):
            continue
        knobs = _knobs(tp, dp, has_mem2, opt)
        placements = np.asarray(list(itertools.product(range(nets) if tp > 1 else (0,), range(nets) if pp > 1 else (0,),
                                                       range(nets) if dp > 1 else (0,))), dtype=np.int64)
        for ppint in ([1] if pp == 1 else divisors(model.layers // pp)):
            s = Shape(tp, pp, dp, ppint, batch, mbs, knobs, placements, offset)
            out.append(s)
            offset += s.rows
    if not out:
        raise DseError(explain_empty(model, num_procs, max_batch, opt))
    return out


# --------------------------------------------------------------------------- bad input
def legal_tp(model: ModelShape, num_procs: int) -> list[int]:
    return [t for t in divisors(num_procs) if model.hidden % t == 0 and model.heads % t == 0]


def check_request(model: ModelShape, num_procs: int, max_batch: int, opt: SpaceOptions) -> None:
    """One-line DseErrors for a request that cannot have a legal split, saying what would be legal."""
    if num_procs <= 0 or max_batch <= 0:
        raise DseError(f"num_procs and max_batch must be positive (got {num_procs} and {max_batch})")
    name = model.name or "the model"
    if opt.tp is not None and opt.tp not in legal_tp(model, num_procs):
        raise DseError(f"--tp {opt.tp} must divide {num_procs} processors, the {model.heads} attention heads and "
                       f"hidden size {model.hidden} of {name}; legal TP: {allowed_list(legal_tp(model, num_procs))}")
    if opt.dp is not None and (opt.dp <= 0 or num_procs % opt.dp):
        raise DseError(f"--dp {opt.dp} must divide {num_procs} processors; legal DP: "
                       f"{allowed_list(divisors(num_procs))}")
    if opt.dp is not None and opt.dp > max_batch:
        raise DseError(f"max batch {max_batch} is below --dp {opt.dp}: each data-parallel replica needs at least one "
                       f"sample; use a max batch of at least {opt.dp} or --dp <= {max_batch}")
    if opt.pp is not None:
        tps = [opt.tp] if opt.tp is not None else legal_tp(model, num_procs)
        ok = sorted({p for t in tps for p in divisors(min(num_procs // t, model.layers)) if model.layers % p == 0
                     and (num_procs // t) % p == 0})
        if opt.pp not in ok:
            raise DseError(f"--pp {opt.pp} must divide the {model.layers} blocks of {name} and {num_procs} "
                           f"processors / TP; legal PP: {allowed_list(ok) or 'none'}")
    fixed = {k: v for k, v in (("tp", opt.tp), ("pp", opt.pp), ("dp", opt.dp)) if v is not None}
    prod = math.prod(fixed.values())
    if len(fixed) == 3 and prod != num_procs or len(fixed) == 2 and num_procs % prod:
        shown = " x ".join(f"--{k} {v}" for k, v in fixed.items())
        raise DseError(f"{shown} = {prod}, which {'is not' if len(fixed) == 3 else 'does not divide'} the "
                       f"{num_procs} processors")


def _has_shape(model: ModelShape, num_procs: int, max_batch: int, opt: SpaceOptions) -> bool:
    for tp, _pp, dp in _splits(model, num_procs, opt):
        if dp <= max_batch and len(_microbatches(model, tp, (max_batch // dp * dp) // dp)):
            return True
    return False


def nearest_counts(model: ModelShape, num_procs: int, max_batch: int, opt: SpaceOptions,
                   reach: int = 4096) -> list[int]:
    """The nearest processor counts below and above ``num_procs`` that have a legal split."""
    free = SpaceOptions(opt.fused, opt.allow_tp_overlap, opt.allow_dp_overlap, opt.training, opt.tp, opt.pp)
    found = []
    for step in (-1, 1):
        for d in range(1, reach + 1):
            n = num_procs + step * d
            if n <= 0:
                break
            if _has_shape(model, n, max_batch, free):
                found.append(n)
                break
    return found


def explain_empty(model: ModelShape, num_procs: int, max_batch: int, opt: SpaceOptions) -> str:
    """Why no (TP, PP, DP) split is legal, and what would be."""
    name = model.name or "the model"
    splits = _splits(model, num_procs, opt)
    if splits:
        dp_min = min(dp for _, _, dp in splits)
        tp, pp, _ = next(s for s in splits if s[2] == dp_min)
        if dp_min > max_batch:
            near = nearest_counts(model, num_procs, max_batch, opt)
            return (f"no legal (TP, PP, DP) split of {num_procs} processors for {name}: max batch {max_batch} is below "
                    f"the smallest data parallelism DP={dp_min} (TP={tp}, PP={pp}); use a max batch of at least "
                    f"{dp_min}, or a processor count that splits: {', '.join(map(str, near)) or 'none within reach'}")
        return (f"no legal (TP, PP, DP) split of {num_procs} processors for {name} with max batch {max_batch}: no "
                f"microbatch size times sequence {model.seq} divides evenly over TP")
    near = nearest_counts(model, num_procs, max_batch, opt)
    fixed = "".join(f" with --{k} {v}" for k, v in (("tp", opt.tp), ("pp", opt.pp)) if v is not None)
    return (f"no legal (TP, PP, DP) split of {num_procs} processors for {name} with max batch {max_batch}{fixed}: TP "
            f"must divide {num_procs}, the {model.heads} heads and hidden {model.hidden}, PP the {model.layers} blocks, "
            f"DP = {num_procs}/(TP*PP) at most the max batch; nearest processor counts that work: "
            f"{', '.join(map(str, near)) or 'none within reach'}")
