"""Best training execution for a model on N processors: Calculon's search, bounded and streamed.

The space is Calculon's ``llm-optimal-execution`` space (:mod:`models.blocks.llm.space`),
visited shape by shape -- never materialized whole -- in two passes:

1. **Bound** (:mod:`models.blocks.llm.bound`): per (knob, microbatch) of each shape, exact
   memory feasibility and validity, Calculon's ``-m`` rule (for each knob combination, stop
   increasing the microbatch at the first size with no feasible network placement) and an
   upper bound of the sample rate over all placements.  This needs no batch time, so the
   rule keeps exactly the rows an exhaustive ``-m`` search keeps.
2. **Evaluate, best bound first**: shape parts in decreasing order of their best bound; in a
   part, rows whose bound can still reach the current k-th best rate get a per-row bound and
   then, best bound first and in growing batches, the full evaluation.  A part (or row) whose
   bound is below the k-th best rate is skipped; once the best remaining part bound is below
   it, the search is over and the answer is proven.

The winner and top-k equal the exhaustive search's (:func:`search_exhaustive`), ties broken
by position in the exhaustive order as its stable sort does.  ``max_seconds`` stops early
with the best found so far (``complete`` False).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models.blocks.llm import training
from models.blocks.llm.bound import Context, MemoryRows, Rows, exact_rates, expand, memory_rows, net_ok
from models.blocks.llm.executions import Executions
from models.blocks.llm.hardware import System, canonical_dtype
from models.blocks.llm.models import ModelShape
from models.blocks.llm.space import Shape, SpaceOptions, shapes
from models.blocks.llm.transformer import BlockInputs, build_block
from models.blocks.llm.training import evaluate


@dataclass
class SearchResult:
    """Top executions (best first) and the bookkeeping of the search."""

    best: list[dict[str, Any]]  # each: {"sample_rate", "execution", "stats", "mfu", "hfu"}
    candidates: int  # configurations in the space (Calculon's count without -m)
    evaluated: int  # configurations Calculon's search would evaluate (with -m)
    feasible: int  # feasible among those
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)
    exact: int = 0  # configurations given the full evaluation
    pruned: int = 0  # feasible configurations skipped on their bound
    complete: bool = True  # False: stopped by max_seconds, best so far not proven optimal
    unvisited: int = 0  # feasible configurations neither evaluated nor pruned (stopped early)

    @property
    def best_sample_rate(self) -> float:
        return float(self.best[0]["sample_rate"]) if self.best else float("nan")

    @property
    def note(self) -> str:
        if self.complete:
            return ""
        bounded = self.extra.get("bounded", self.candidates)
        rest = "" if bounded >= self.candidates else (
            f"; only {bounded:,} of {self.candidates:,} configurations bounded, counts cover those")
        return ("stopped at the time limit: best found so far, not proven optimal "
                f"({self.unvisited:,} feasible configurations neither evaluated nor pruned{rest})")


@dataclass
class SearchProgress:
    """A snapshot for a progress display."""

    phase: str  # "bound" or "evaluate"
    rows_done: int
    rows_total: int
    feasible: int
    exact: int
    pruned: int
    best_rate: float


@dataclass
class _Part:
    shape_index: int
    k0: int
    k1: int
    best_ub: float
    feasible: int
    mem: MemoryRows | None  # kept while the cache has room


class _TopK:
    """The k best rows by (sample rate desc, exhaustive index asc) and the rate to beat."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.rate = np.zeros(0)
        self.gidx = np.zeros(0, dtype=np.int64)
        self.where = np.zeros((0, 4), dtype=np.int64)  # shape index, knob, microbatch, placement

    @property
    def threshold(self) -> float:
        return float(self.rate[-1]) if len(self.rate) >= self.k else -np.inf

    def offer(self, si: int, rows: Rows, rate: np.ndarray) -> None:
        where = np.column_stack([np.full(len(rows.ik), si), rows.ik, rows.im, rows.ip])
        r, g, w = np.concatenate([self.rate, rate]), np.concatenate([self.gidx, rows.gidx]), np.vstack([self.where, where])
        order = np.lexsort((g, -r))[: self.k]
        self.rate, self.gidx, self.where = r[order], g[order], w[order]


class _Run:
    """Counters, the top-k, the deadline and the progress callback of one search."""

    def __init__(self, top_n: int, total: int, deadline: float, progress: Callable[[SearchProgress], None] | None) -> None:
        self.top = _TopK(top_n)
        self.total, self.deadline, self.progress = total, deadline, progress
        self.rows_done = self.evaluated = self.feasible = self.exact = self.pending = 0
        self.complete = True
        self._last = 0.0

    def late(self) -> bool:
        return time.perf_counter() > self.deadline

    def emit(self, phase: str, force: bool = False) -> None:
        now = time.perf_counter()
        if self.progress is None or (not force and now - self._last < 0.1):
            return
        self._last = now
        best = float(self.top.rate[0]) if len(self.top.rate) else float("nan")
        pruned = self.feasible - self.exact - self.pending
        self.progress(SearchProgress(phase, self.rows_done, self.total, self.feasible, self.exact, pruned, best))


def search(
    model: ModelShape, num_procs: int, max_batch: int, system: System, datatype: str = "float16", *,
    top_n: int = 1, mbs_break: bool = True, fused: tuple[bool, ...] = (True,), allow_tp_overlap: bool = True,
    allow_dp_overlap: bool = True, tp: int | None = None, pp: int | None = None, dp: int | None = None,
    max_seconds: float | None = None, progress: Callable[[SearchProgress], None] | None = None,
    part_rows: int = 1 << 16, mem_cache_rows: int = 1 << 22, chunk: int | None = None,
) -> SearchResult:
    """Best executions by sample rate (training, Calculon's space and ``-m`` rule), bounded."""
    del chunk  # kept for callers of the exhaustive version
    t0 = time.perf_counter()
    opt = SpaceOptions(fused, allow_tp_overlap, allow_dp_overlap, True, tp, pp, dp)
    system.engines(datatype)  # a one-line error for a datatype the system lacks
    shp = shapes(model, num_procs, max_batch, system, opt)
    ctx = Context(model, system, canonical_dtype(datatype), num_procs)
    deadline = np.inf if max_seconds is None else t0 + max_seconds
    run = _Run(max(int(top_n), 1), sum(s.rows for s in shp), deadline, progress)
    parts = _bound_pass(ctx, shp, mbs_break, run, part_rows, mem_cache_rows)
    _evaluate_pass(ctx, shp, parts, mbs_break, run)
    run.emit("evaluate", force=True)
    best = _best_records(ctx, shp, run.top)
    if run.complete:
        run.pending = 0  # the parts never visited were all bounded below the k best
    return SearchResult(best, run.total, run.evaluated, run.feasible, time.perf_counter() - t0,
                        {"shapes": len(shp), "parts": len(parts), "bounded": run.rows_done}, run.exact,
                        run.feasible - run.exact - run.pending, run.complete, run.pending)


def _knob_slices(shape: Shape, part_rows: int) -> list[tuple[int, int]]:
    per_knob = len(shape.mbs) * len(shape.placements)
    step = max(1, part_rows // per_knob)
    return [(k, min(k + step, len(shape.knobs))) for k in range(0, len(shape.knobs), step)]


def _bound_pass(ctx: Context, shp: list[Shape], mbs_break: bool, run: _Run, part_rows: int,
                cache_rows: int) -> list[_Part]:
    """Feasibility, the -m rule and a bound for every part; the parts that hold feasible rows."""
    parts: list[_Part] = []
    cached = 0
    for si, shape in enumerate(shp):
        ok_pl = net_ok(ctx, shape)
        for k0, k1 in _knob_slices(shape, part_rows):
            mem = memory_rows(ctx, shape, k0, k1, ok_pl, mbs_break)
            run.evaluated += mem.evaluated
            run.feasible += mem.feasible
            run.pending += mem.feasible
            run.rows_done += (k1 - k0) * len(shape.mbs) * len(shape.placements)
            if mem.feasible:
                keep = cached + len(mem.ub) <= cache_rows
                cached += len(mem.ub) if keep else 0
                parts.append(_Part(si, k0, k1, float(np.max(mem.ub)), mem.feasible, mem if keep else None))
            run.emit("bound")
            if run.late() and parts:
                run.complete = False
                return parts
    return parts


def _evaluate_pass(ctx: Context, shp: list[Shape], parts: list[_Part], mbs_break: bool, run: _Run) -> None:
    """Full evaluations, best part bound first, until no bound can beat the k-th best rate."""
    first = True
    for part in sorted(parts, key=lambda p: (-p.best_ub, p.shape_index, p.k0)):
        if part.best_ub < run.top.threshold:
            break  # every remaining part is bounded below the k best: proven
        if run.late() and not first:
            run.complete = False
            return
        shape = shp[part.shape_index]
        ok_pl = net_ok(ctx, shape)
        mem = part.mem or memory_rows(ctx, shape, part.k0, part.k1, ok_pl, mbs_break)
        part.mem = None
        _evaluate_part(ctx, part.shape_index, shape, expand(ctx, shape, mem, ok_pl, run.top.threshold), run)
        if not run.complete:
            return
        run.pending -= part.feasible
        first = False


def _evaluate_part(ctx: Context, si: int, shape: Shape, rows: Rows, run: _Run, batch: int = 256,
                   max_batch: int = 16384) -> None:
    j = 0
    while j < len(rows.ub) and not rows.ub[j] < run.top.threshold:
        sub = rows.take(slice(j, j + batch))
        sub = sub.take(~(sub.ub < run.top.threshold))
        rate, feasible = exact_rates(ctx, shape, sub)
        if not feasible.all():  # the bound pass said feasible: the two must agree
            raise AssertionError("bound pass and full evaluation disagree on feasibility")
        run.top.offer(si, sub, rate)
        run.exact += len(rate)
        run.emit("evaluate")
        j += batch
        batch = min(2 * batch, max_batch)
        if run.late():
            run.complete = False
            return


def _best_records(ctx: Context, shp: list[Shape], top: _TopK) -> list[dict[str, Any]]:
    """The top rows through :func:`training.evaluate` itself, with MFU and HFU."""
    out = []
    for rate, (si, ik, im, ip) in zip(top.rate, top.where):
        shape = shp[int(si)]
        cols = shape.columns(ctx.num_procs, np.array([ik]), np.array([im]), np.array([ip]))
        exe = ctx.executions(cols, 1)
        st = evaluate(ctx.model, ctx.system, exe)
        stats = {k: (float(v[0]) if np.ndim(v) else v) for k, v in st.items()}
        if stats["sample_rate"] != rate:
            raise AssertionError("staged and direct evaluation disagree")
        mfu, hfu = utilization(ctx.model, ctx.system, exe, stats)
        out.append({"sample_rate": float(rate), "execution": exe.record(0), "stats": stats, "mfu": mfu, "hfu": hfu})
    return out


# --------------------------------------------------------------------------- utilization
def model_flops_per_sample(model: ModelShape, system: System, datatype: str = "float16") -> float:
    """Training FLOPs of one sample through every block (forward, activation and weight gradient;
    no recompute, no TP replication): the numerator of MFU."""
    exe = Executions.from_columns(tensor_par=1, pipeline_par=1, data_par=1, batch_size=1, microbatch_size=1,
                                  datatype=canonical_dtype(datatype))
    acc = training.block_stats(training.prepare(model, system, exe))
    return float(acc["fw_flops"][0] + acc["ag_flops"][0] + acc["wg_flops"][0]) * model.layers


def recompute_flops(model: ModelShape, exe: Executions) -> float:
    """Forward FLOPs per block and microbatch (one processor) redone by activation recompute."""
    c = {k: v[:1] for k, v in exe.cols.items()}
    blk = BlockInputs(mbs=c["microbatch_size"], seq=model.seq, hidden=model.hidden, ffn=model.ffn, heads=model.heads,
                      head_dim=model.head_dim, kv_heads=model.kv_heads, tp=c["tensor_par"],
                      recompute=c["activation_recompute"], comm=c["tensor_par_comm_type"],
                      overlap=c["tensor_par_overlap"], redo=c["seq_par_ag_redo"], fused=c["fused_activation"],
                      gated=model.gated_mlp)
    total = 0.0
    for ly in build_block(blk):
        on = np.asarray(ly.active, dtype=bool) & np.asarray(ly.recompute, dtype=bool) & c["training"]
        total += float(np.sum(np.where(on, ly.fw, 0.0)))
    return total


def utilization(model: ModelShape, system: System, exe: Executions, stats: dict[str, Any]) -> tuple[float, float]:
    """(MFU, HFU) of one evaluated execution.

    MFU = model FLOPs per sample x sample rate / (processors x matrix peak); HFU counts what each
    processor executes per batch instead: its blocks' forward, backward and recompute FLOPs
    (TP-replicated work included) over batch time x peak."""
    dtype = str(exe["datatype"][0])
    peak = system.peak_flops(dtype)
    procs = int(exe["num_procs"][0])
    mfu = model_flops_per_sample(model, system, dtype) * stats["sample_rate"] / (procs * peak)
    acc = training.block_stats(training.prepare(model, system, exe))
    per_block = float(acc["fw_flops"][0] + acc["ag_flops"][0] + acc["wg_flops"][0]) + recompute_flops(model, exe)
    done = stats["blocks_per_proc"] * stats["num_microbatches"] * per_block
    return float(mfu), float(done / (stats["total_time"] * peak))


# --------------------------------------------------------------------------- exhaustive reference
def candidates(
    model: ModelShape, num_procs: int, max_batch: int, system: System, datatype: str = "float16", *,
    fused: tuple[bool, ...] = (True,), allow_tp_overlap: bool = True, allow_dp_overlap: bool = True,
    training: bool = True, tp: int | None = None, pp: int | None = None, dp: int | None = None,
) -> tuple[Executions, np.ndarray, np.ndarray]:
    """All candidate executions materialized (small spaces), a knob-combination id and microbatch rank per row."""
    opt = SpaceOptions(fused, allow_tp_overlap, allow_dp_overlap, training, tp, pp, dp)
    parts: dict[str, list[np.ndarray]] = {}
    groups, ranks = [], []
    gid = 0
    for shape in shapes(model, num_procs, max_batch, system, opt):
        nk, nm, npl = len(shape.knobs), len(shape.mbs), len(shape.placements)
        ik, im, ip = (a.ravel() for a in np.meshgrid(np.arange(nk), np.arange(nm), np.arange(npl), indexing="ij"))
        for k, v in shape.columns(num_procs, ik, im, ip).items():
            parts.setdefault(k, []).append(np.broadcast_to(v, ik.shape))
        groups.append(gid + ik)
        ranks.append(im)
        gid += nk
    cols = {k: np.concatenate(v) for k, v in parts.items()}
    n = sum(len(g) for g in groups)
    exe = Executions.from_columns(n, **cols, datatype=canonical_dtype(datatype), attention_type="multihead",
                                  training=training)
    return exe, np.concatenate(groups), np.concatenate(ranks)


def search_exhaustive(
    model: ModelShape, num_procs: int, max_batch: int, system: System, datatype: str = "float16", *,
    top_n: int = 1, mbs_break: bool = True, fused: tuple[bool, ...] = (True,), allow_tp_overlap: bool = True,
    allow_dp_overlap: bool = True, tp: int | None = None, pp: int | None = None, dp: int | None = None,
    chunk: int = 262144,
) -> SearchResult:
    """Every candidate materialized and fully evaluated (the reference the bounded search must equal)."""
    t0 = time.perf_counter()
    exe, group, rank = candidates(model, num_procs, max_batch, system, datatype, fused=fused,
                                  allow_tp_overlap=allow_tp_overlap, allow_dp_overlap=allow_dp_overlap, tp=tp, pp=pp,
                                  dp=dp)
    n = exe.n
    rate = np.empty(n)
    feas = np.empty(n, dtype=bool)
    for s in range(0, n, chunk):
        st = evaluate(model, system, exe.take(slice(s, s + chunk)))
        rate[s:s + chunk] = st["sample_rate"]
        feas[s:s + chunk] = st["feasible"]
    allowed = np.ones(n, dtype=bool)
    if mbs_break:
        G, R = int(group.max()) + 1, int(rank.max()) + 1
        any_ok = np.zeros(G * R, dtype=bool)
        np.logical_or.at(any_ok, group * R + rank, feas)
        exists = np.zeros(G * R, dtype=bool)
        exists[group * R + rank] = True
        # first existing rank without a feasible placement stops the scan
        stop = np.where(~any_ok.reshape(G, R) & exists.reshape(G, R), np.arange(R)[None, :], R).min(axis=1)
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
    return SearchResult(best, n, int(allowed.sum()), int(good.sum()), time.perf_counter() - t0, exact=n)
