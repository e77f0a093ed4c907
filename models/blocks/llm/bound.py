"""Cheap work per candidate before the full evaluation: memory feasibility, Calculon's ``-m``
rule and a lower bound on batch time (as LLMCompass prunes on area/roofline first).

Everything per block and per microbatch (flops, times, TP exposure, bytes) depends only on TP,
its network, the microbatch and six knobs (recompute, sharding, TP comm type, redo, TP
overlap, fused activation; the sharding divisor is the shape's DP).  A :class:`BlockTable`
computes those once per distinct combination with :func:`training.block_stats` (a few thousand
rows for a whole shape family); rows gather from it.

* **Memory and validity** do not depend on the network placement, so they are computed per
  (knob, microbatch) -- "memory rows" -- with the same :func:`training.capacity` and validity
  code as :func:`training.evaluate`, and the placement only through the network-size checks.
  Feasibility is therefore exact, and so is the ``-m`` rule built on it (first microbatch of a
  knob combination with no feasible placement stops the scan): no time is needed for it, so
  pruning on time cannot change which rows the rule keeps.
* **The bound** is :func:`training.batch_time_lower_bound`: first per memory row with every
  network-dependent term at its minimum over the networks (a bound for all its placements),
  then per row.  Sample rate <= batch / bound.
* **The exact evaluation** of a row is :func:`training.batch_stats` on the gathered block
  accumulators: the numbers :func:`training.evaluate` gives, element for element.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.blocks.llm import training
from models.blocks.llm.executions import Executions
from models.blocks.llm.hardware import System
from models.blocks.llm.models import ModelShape
from models.blocks.llm.space import BLOCK_KNOBS, KNOB_COLUMNS, Shape

_MEMORY_KEYS = ("weight", "act_work", "act_store", "w_grad", "w_grad_ns", "act_grad", "optim")


class Context:
    """What every shape of one search shares: model, system, datatype and a cache of block tables."""

    def __init__(self, model: ModelShape, system: System, datatype: str, num_procs: int, training_: bool = True,
                 cache_size: int = 16) -> None:
        self.model, self.system, self.datatype, self.num_procs = model, system, datatype, num_procs
        self.training = training_
        self.nets = len(system.networks)
        self._tables: OrderedDict[tuple[int, int], BlockTable] = OrderedDict()
        self._cache_size = cache_size

    def executions(self, cols: dict[str, Any], n: int) -> Executions:
        return Executions.from_columns(n, **cols, datatype=self.datatype, attention_type="multihead",
                                       training=self.training)

    def table(self, shape: Shape) -> BlockTable:
        key = (shape.tp, shape.dp)
        tab = self._tables.get(key)
        if tab is None:
            tab = BlockTable(self, shape)
            self._tables[key] = tab
            if len(self._tables) > self._cache_size:
                self._tables.popitem(last=False)
        else:
            self._tables.move_to_end(key)
        return tab


class BlockTable:
    """Block accumulators of one (TP, DP) for every distinct block-knob combination, microbatch
    and TP network; indexed ``[combination, microbatch, TP-network position]``."""

    def __init__(self, ctx: Context, shape: Shape) -> None:
        uniq, inv = np.unique(shape.knobs[:, BLOCK_KNOBS], axis=0, return_inverse=True)
        self.kb = inv.ravel()  # knob row -> combination
        self.tns = np.unique(shape.placements[:, 0])
        self.tn_pos = np.zeros(ctx.nets, dtype=np.int64)
        self.tn_pos[self.tns] = np.arange(len(self.tns))
        nu, nm, nt = len(uniq), len(shape.mbs), len(self.tns)
        iu, im, it = (a.ravel() for a in np.meshgrid(np.arange(nu), np.arange(nm), np.arange(nt), indexing="ij"))
        mbs = shape.mbs[im]
        cols: dict[str, Any] = {"num_procs": shape.tp * shape.dp, "tensor_par": shape.tp, "pipeline_par": 1,
                                "data_par": shape.dp, "batch_size": shape.dp * mbs, "microbatch_size": mbs,
                                "tensor_par_net": self.tns[it]}
        for j, col in zip(BLOCK_KNOBS, uniq.T):
            name = KNOB_COLUMNS[j]
            cols[name] = col[iu].astype(bool) if name in ("optimizer_sharding", "seq_par_ag_redo",
                                                          "fused_activation") else col[iu]
        rows = training.prepare(ctx.model, ctx.system, ctx.executions(cols, len(iu)))
        acc = training.block_stats(rows)
        shp = (nu, nm, nt)
        self.acc = {k: v.reshape(shp) for k, v in acc.items()}
        self.terms = {k: v.reshape(shp) for k, v in training.bound_terms(acc).items()}
        self.terms_min = {k: v.min(axis=2) for k, v in self.terms.items()}  # over TP networks

    def gather(self, keys: Any, kb: np.ndarray, im: np.ndarray, tpos: np.ndarray | int) -> dict[str, np.ndarray]:
        return {k: self.acc[k][kb, im, tpos] for k in keys}


@dataclass
class MemoryRows:
    """Feasibility and the ``-m`` rule of one part of a shape (knob rows ``k0:k1`` x microbatches)."""

    ik: np.ndarray  # knob row of each feasible, allowed memory row
    im: np.ndarray  # microbatch index
    ub: np.ndarray  # sample-rate upper bound over all its placements
    evaluated: int  # rows in the search (-m rule applied), placements included
    feasible: int  # feasible among them


def net_ok(ctx: Context, shape: Shape) -> np.ndarray:
    """Placements that pass the network-size checks (the only checks that depend on them)."""
    pl = shape.placements
    n = len(pl)
    e = {"tp": np.full(n, shape.tp), "pp": np.full(n, shape.pp), "dp": np.full(n, shape.dp)}
    return training.network_ok(ctx.system, e["tp"], e["pp"], e["dp"], pl[:, 0], pl[:, 1], pl[:, 2])


def memory_rows(ctx: Context, shape: Shape, k0: int, k1: int, ok_pl: np.ndarray, mbs_break: bool) -> MemoryRows:
    """Exact feasibility of every (knob, microbatch) of knob rows ``k0:k1``, the ``-m`` rule, and
    a placement-free bound for the feasible, allowed ones."""
    nk, nm = k1 - k0, len(shape.mbs)
    ik, im = (a.ravel() for a in np.meshgrid(np.arange(k0, k1), np.arange(nm), indexing="ij"))
    tab = ctx.table(shape)
    pl0 = int(np.argmax(ok_pl))  # a legal placement, so only placement-free checks decide
    cols = shape.columns(ctx.num_procs, ik, im, np.full(len(ik), pl0))
    rows = training.prepare(ctx.model, ctx.system, ctx.executions(cols, len(ik)))
    kb = tab.kb[ik]
    cap = training.capacity(tab.gather(_MEMORY_KEYS, kb, im, 0), rows)
    fits = ~(cap["mem_tier1_bytes"] > ctx.system.mem1.capacity_bytes)
    fits &= ~(cap["mem_tier2_bytes"] > ctx.system.mem2.capacity_bytes)
    ok = ((rows["err"] == 0) & fits).reshape(nk, nm)
    any_pl = bool(ok_pl.any())
    if mbs_break:  # first microbatch with no feasible placement stops the scan (it is still tried)
        bad = ~(ok & any_pl)
        stop = np.where(bad.any(axis=1), bad.argmax(axis=1), nm)
        allowed = np.arange(nm)[None, :] <= stop[:, None]
    else:
        allowed = np.ones((nk, nm), dtype=bool)
    keep = (allowed & ok).ravel() & any_pl
    npl, nok = len(shape.placements), int(ok_pl.sum())
    sel = np.nonzero(keep)[0]
    ub = _memory_row_bound(ctx, shape, tab, rows, kb, im)[sel] if len(sel) else np.zeros(0)
    return MemoryRows(ik[sel], im[sel], ub, int(allowed.sum()) * npl, len(sel) * nok)


def _net_choices(ctx: Context, used: bool) -> range:
    return range(ctx.nets) if used else range(1)


def _memory_row_bound(ctx: Context, shape: Shape, tab: BlockTable, rows: dict[str, Any], kb: np.ndarray,
                      im: np.ndarray) -> np.ndarray:
    terms = {k: v[kb, im] for k, v in tab.terms_min.items()}
    n = len(kb)
    fw_pp = bw_pp = dp_t = np.full(n, np.inf)
    for k in np.unique(shape.placements[:, 1]):
        f, b = training.pp_message_times(ctx.system, np.full(n, k), rows)
        fw_pp, bw_pp = np.minimum(fw_pp, f), np.minimum(bw_pp, b)
    for k in np.unique(shape.placements[:, 2]):
        dp_t = np.minimum(dp_t, training.dp_reduce_time(ctx.system, np.full(n, k), terms["weight"], rows))
    lb = training.batch_time_lower_bound(terms, rows, fw_pp, bw_pp, dp_t)
    return _rate_bound(shape.batch, lb)


def _rate_bound(batch: int, lb: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(lb > 0, batch / lb, np.inf)


@dataclass
class Rows:
    """Candidate rows of a shape: knob, microbatch and placement index, exhaustive index, bound."""

    ik: np.ndarray
    im: np.ndarray
    ip: np.ndarray
    gidx: np.ndarray
    ub: np.ndarray

    def take(self, sel: Any) -> Rows:
        return Rows(self.ik[sel], self.im[sel], self.ip[sel], self.gidx[sel], self.ub[sel])


def expand(ctx: Context, shape: Shape, mem: MemoryRows, ok_pl: np.ndarray, threshold: float) -> Rows:
    """Rows (memory rows x legal placements) whose bound can still reach ``threshold``, with their
    per-row bound, best bound first (ties in exhaustive order)."""
    sel = np.nonzero(~(mem.ub < threshold))[0]
    pls = np.nonzero(ok_pl)[0]
    ik = np.repeat(mem.ik[sel], len(pls))
    im = np.repeat(mem.im[sel], len(pls))
    ip = np.tile(pls, len(sel))
    nm, npl = len(shape.mbs), len(shape.placements)
    gidx = shape.offset + (ik * nm + im) * npl + ip
    ub = row_bound(ctx, shape, ik, im, ip)
    rows = Rows(ik, im, ip, gidx, ub).take(~(ub < threshold))
    return rows.take(np.lexsort((rows.gidx, -rows.ub)))


def row_bound(ctx: Context, shape: Shape, ik: np.ndarray, im: np.ndarray, ip: np.ndarray) -> np.ndarray:
    """Upper bound of the sample rate of each row (batch / lower bound of its batch time)."""
    tab = ctx.table(shape)
    pl = shape.placements[ip]
    kb, tpos = tab.kb[ik], tab.tn_pos[pl[:, 0]]
    terms = {k: v[kb, im, tpos] for k, v in tab.terms.items()}
    rows = _light_rows(ctx, shape, ik, im)
    fw_pp, bw_pp = training.pp_message_times(ctx.system, pl[:, 1], rows)
    dp_t = training.dp_reduce_time(ctx.system, pl[:, 2], terms["weight"], rows)
    return _rate_bound(shape.batch, training.batch_time_lower_bound(terms, rows, fw_pp, bw_pp, dp_t))


def _light_rows(ctx: Context, shape: Shape, ik: np.ndarray, im: np.ndarray) -> dict[str, Any]:
    """The few per-row columns the bound reads, without the full preparation."""
    k = shape.knobs[ik]
    mbs = shape.mbs[im]
    local = shape.batch // shape.dp
    n = len(ik)
    return {"pp": np.full(n, shape.pp), "dp": np.full(n, shape.dp), "nmb": local // mbs,
            "bpp": np.full(n, -(-ctx.model.layers // shape.pp)), "interleave": np.full(n, shape.interleave),
            "training": np.full(n, ctx.training), "dp_ovl": k[:, 4].astype(bool), "sharding": k[:, 1].astype(bool),
            "comm": k[:, 2], "bs": mbs * ctx.model.seq, "safe_tp": np.full(n, shape.tp),
            "m": {"hidden": ctx.model.hidden}, "bpe": float(training.DTYPE_BYTES[ctx.datatype])}


def exact_rates(ctx: Context, shape: Shape, rows: Rows) -> tuple[np.ndarray, np.ndarray]:
    """Sample rate and feasibility of each row, as :func:`training.evaluate` computes them."""
    tab = ctx.table(shape)
    cols = shape.columns(ctx.num_procs, rows.ik, rows.im, rows.ip)
    prepared = training.prepare(ctx.model, ctx.system, ctx.executions(cols, len(rows.ik)))
    tpos = tab.tn_pos[shape.placements[rows.ip, 0]]
    block = tab.gather(tab.acc.keys(), tab.kb[rows.ik], rows.im, tpos)
    st = training.batch_stats(block, prepared)
    return st["sample_rate"], st["feasible"]
