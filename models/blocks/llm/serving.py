"""LLM serving layer: continuous batching with chunked prefill, vectorized over design points.

What a serving engine (vLLM, TensorRT-LLM, SGLang) does at steady state, in closed form:

* **Iterations.**  The engine runs one iteration (a forward pass) after another.  Every
  iteration decodes one token for each of the ``B`` running sequences; some iterations also
  carry a prefill *chunk* of ``q`` prompt tokens (chunked prefill, Sarathi-Serve,
  Agrawal et al. OSDI'24; vLLM ``max_num_batched_tokens`` = the token budget ``C`` that the
  decodes and the chunk share).  An iteration costs a roofline over three resources plus a
  fixed overhead ``o`` (scheduling, launches, the tensor-parallel all-reduce latencies)::

      T_d(B) = o + max(G(B),              t_w + t_kv(B),          t_tier(B))   decode only
      T_m(B) = o + max(G(B) + q t_pf,     t_w + t_kv(B) + q m_pf, t_tier(B))   with a chunk

  ``G(B) = (B + m) g_tok + B a_dec``: the linear layers' GEMMs of ``B`` token rows
  (``g_tok`` = 2 x params FLOPs per token) run at ``eff_flops`` x ``M / (M + m)`` of the
  datatype's peak -- an efficiency-by-size curve in the manner of Calculon's tables, which
  is the same as charging ``m = gemm_half_rows`` extra rows per iteration (small-batch
  decode GEMMs are inefficient, prefill chunks of thousands of rows are not); ``a_dec``:
  attention, ``4 L heads head_dim`` FLOPs per token per context token, FlashAttention-style
  (no quadratic activation buffer), plus the ring all-reduce of two activations per layer
  over the TP link.  ``t_pf``: the same per prefill token (a causal prefill sees half its
  prompt on average).  ``t_w``: the weights read once per iteration from HBM; ``t_kv``:
  every running sequence's KV cache (``s`` bytes each on average: prompt + half the
  output); ``m_pf``: writing the chunk's KV and re-reading its prompt's earlier chunks.
  HBM runs at ``eff_hbm`` of its bandwidth.  ``eff_flops``, ``eff_hbm`` and
  ``gemm_half_rows`` are the fitted constants (models/llm_serve/calibration.py).

* **KV tiers.**  KV beyond the HBM left after the weights (``H``) lives in a slower tier
  and is streamed over its link every decode step (every step reads every token's KV, so
  no part of it is hotter than another: a static split is the best placement, and HBM
  holds a share ``H / (B s)``).  The stream overlaps the HBM reads (layer-wise prefetch),
  so the tier is a third roofline term ``t_tier(B) = max(0, B s - H) / bw_tier`` plus one
  access latency per layer (the fetch a layer waits for before its prefetch runs); the
  streamed bytes also land in HBM and are read from there (``2 x`` in ``t_kv``).

* **Steady state.**  Each request brings ``P`` prompt tokens and leaves after ``O``
  output tokens, so the prefill tokens per iteration are ``B P / O``.  A chunk holds
  ``q = min(C - B, max(P, B P / O))`` tokens (one prompt, several, or a slice of a long
  one) and a fraction ``f = B P / (O q)`` of the iterations carry one.  The mean step is
  ``T(B) = (1 - f) T_d + f T_m`` and the request rate the batch sustains is
  ``lambda(B) = B / (O T(B))`` (Little's law), increasing in ``B``.  ``B`` is capped by the
  engine (``max_batch``), by the KV capacity ``(H + tier) / s`` and by the token budget
  (``f <= 1``: ``B <= C O / (P + O)``); the capacity is the largest ``lambda(B)`` below the
  cap (with a KV tier the rate falls again once streaming the tier binds, so the engine
  admits only up to that best batch).  For an offered
  rate the batch is found by bisection on ``lambda(B)``; for a closed loop of
  ``concurrency`` clients (benchmarks that keep N requests in flight) on
  ``lambda(B) (TTFT + (O - 1) T) = N``.

* **Latencies.**  Prompts queue for the chunk slot, FIFO: an M/D/1 station whose service
  is the prompt's share of chunk iterations, ``S = (P / q) T_m`` (utilization
  ``lambda S = f T_m / T <= 1``; Poisson arrivals as in MLPerf's server scenario).  TTFT =
  the residual of the iteration in flight (``T / 2`` once the engine is busy) + the M/D/1
  wait (mean and the queueing block's exponential-tail quantiles) + ``max(1, P / q)``
  chunk iterations.  Inter-token latency is ``T_d`` for a token from a decode-only step and
  ``T_m`` from a step with a chunk; a share ``f`` of the tokens come from the latter, so
  ITL p50/p99 are ``T_m`` where ``f`` exceeds 0.5/0.01 and ``T_d`` otherwise (the bimodal
  ITL of chunked prefill); TPOT = ``T``.

Everything is numpy on columns (scalars broadcast); the bisection is a fixed number of
halvings, so a batch of 32k points costs a few hundred numpy passes.  A few points cost
numpy's per-call overhead instead, so the golden section and the bisection evaluate several
steps' every possible probe in one stacked call (``golden_max``, ``bisect``: bit for bit
the results of the step-by-step loops), and a batch where no point holds a sequence skips
both searches.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Callable

import numpy as np

from models.blocks import queueing

HERE = Path(__file__).resolve().parent
#: Halvings of the batch bisection: B_cap / 2**40 is far below one sequence.
BISECT_STEPS = 40
#: Bytes of one activation element on the tensor-parallel all-reduce (bf16 activations).
ACT_BYTES = 2.0
#: Bytes per element of the datatypes the serving layer takes.
DTYPE_BYTES: dict[str, float] = {"fp16": 2.0, "bf16": 2.0, "fp8": 1.0}


# ----------------------------------------------------------------------------- tables
@cache
def architectures() -> tuple[dict[str, Any], ...]:
    """Published transformer shapes (``architectures.csv``: Llama-2 7/13/70B, Llama-3 8/70B,
    Llama-3.1 405B), one dict per row, numbers parsed."""
    with open(HERE / "architectures.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for k in ("params_b", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab"):
            r[k] = float(r[k])
    return tuple(rows)


def families() -> tuple[str, ...]:
    return tuple(dict.fromkeys(r["family"] for r in architectures()))


@cache
def _family_table(family: str) -> dict[str, np.ndarray]:
    rows = sorted((r for r in architectures() if r["family"] == family), key=lambda r: r["params_b"])
    cols = {k: np.asarray([r[k] for r in rows]) for k in ("params_b", "layers", "hidden", "heads", "kv_heads", "head_dim")}
    cols["kv_dim"] = cols["kv_heads"] * cols["head_dim"]
    cols["attn_dim"] = cols["heads"] * cols["head_dim"]
    return cols


SHAPE_KEYS = ("layers", "hidden", "kv_heads", "kv_dim", "attn_dim")


@cache
def _family_fit(family: str) -> dict[str, Any]:
    """The log-log interpolation's constants of ``family``: log sizes ``xs``, per shape
    column its logs (``ys``, one row each) and end-segment slopes (column vectors)."""
    t = _family_table(family)
    xs = np.log(t["params_b"])
    ys = [np.log(t[k]) for k in SHAPE_KEYS]
    if len(xs) == 1:  # one published size: its shape, whatever the size
        return {"xs": xs, "only": [t[k][0] for k in SHAPE_KEYS]}
    lo = [(y[1] - y[0]) / (xs[1] - xs[0]) for y in ys]
    hi = [(y[-1] - y[-2]) / (xs[-1] - xs[-2]) for y in ys]
    return {"xs": xs, "ys": ys, "y0": np.array([y[0] for y in ys]), "y1": np.array([y[-1] for y in ys]),
            "slope_lo": np.array(lo), "slope_hi": np.array(hi)}


def shape_columns(family: str, params_b: Any) -> dict[str, np.ndarray]:
    """Shape of a ``params_b``-billion model of ``family``: exact at the published sizes,
    interpolated log-log between them (extrapolated with the end segment's slope), so a
    swept model size moves the KV bytes per token and the attention FLOPs smoothly.
    Returns ``layers``, ``hidden``, ``kv_heads``, ``kv_dim`` (KV heads x head dim) and
    ``attn_dim`` (query heads x head dim).  The five columns go through the ends' segments
    and ``exp`` as one stacked array."""
    fit = _family_fit(family)
    x = np.log(np.asarray(params_b, dtype=np.float64))
    xs = fit["xs"]
    if len(xs) == 1:
        out = {k: np.broadcast_to(v, x.shape).astype(np.float64) for k, v in zip(SHAPE_KEYS, fit["only"])}
    else:
        col = (len(SHAPE_KEYS),) + (1,) * x.ndim  # per-column constants against the points' axes
        y = np.array([np.interp(x, xs, ys) for ys in fit["ys"]])
        y = np.where(x < xs[0], fit["y0"].reshape(col) + fit["slope_lo"].reshape(col) * (x - xs[0]), y)
        y = np.where(x > xs[-1], fit["y1"].reshape(col) + fit["slope_hi"].reshape(col) * (x - xs[-1]), y)
        out = dict(zip(SHAPE_KEYS, np.exp(y)))
    out["kv_heads"] = np.maximum(out["kv_heads"], 1.0)
    return out


def kv_bytes_per_token(layers: Any, kv_dim: Any, kv_bytes: Any) -> np.ndarray:
    """KV-cache bytes one token adds across all layers (K and V)."""
    return 2.0 * np.asarray(layers, np.float64) * np.asarray(kv_dim, np.float64) * np.asarray(kv_bytes, np.float64)


@dataclass(frozen=True)
class Gpu:
    """One accelerator's datasheet numbers (``gpus.csv``)."""

    name: str
    tflops_bf16: float
    tflops_fp8: float
    hbm_gib: float
    hbm_gbps: float
    nvlink_gbps: float
    host_link_gen: str
    host_link_lanes: int
    source: str


@cache
def gpus() -> dict[str, Gpu]:
    with open(HERE / "gpus.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return {r["gpu"]: Gpu(r["gpu"], float(r["tflops_bf16"]), float(r["tflops_fp8"]), float(r["hbm_gib"]),
                          float(r["hbm_gbps"]), float(r["nvlink_gbps"]), r["host_link_gen"], int(r["host_link_lanes"]),
                          r["source"]) for r in rows}


# ----------------------------------------------------------------------------- the layer
def _f(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


class _Step:
    """Per-point constants of the iteration-time roofline (seconds, bytes)."""

    def __init__(self, **k: Any) -> None:
        g = _f(k["gpus"])
        P, O = _f(k["prompt"]), _f(k["output"])
        L = _f(k["layers"])
        eff_f, eff_b = _f(k["eff_flops"]), _f(k["eff_hbm"])
        self.P, self.O, self.C = P, O, _f(k["chunk_tokens"])
        params = _f(k["params"])
        self.kvb = kv_bytes_per_token(L, k["kv_dim"], k["kv_bytes"])
        self.rep = np.maximum(1.0, g / _f(k["kv_heads"]))  # KV heads replicated when TP > KV heads
        ctx_dec = P + 0.5 * O
        self.s = ctx_dec * self.kvb  # mean KV bytes of a decoding sequence
        self.s_max = (P + O) * self.kvb
        multi = g > 1
        link = np.where(multi, _f(k["link_Bps"]), 1.0)
        comm_tok = np.where(multi, 2.0 * L * _f(k["hidden"]) * ACT_BYTES * 2.0 * (g - 1.0) / g / link, 0.0)
        att = 4.0 * L * _f(k["attn_dim"])
        self.flops_dec = 2.0 * params + att * ctx_dec
        self.flops_pf = 2.0 * params + att * 0.5 * P
        # GEMM time of one token's linear layers at eff_flops; an iteration's GEMMs of M token
        # rows run at eff_flops * M / (M + gemm_half_rows) (efficiency by size, as Calculon's
        # tables): i.e. they cost as if they had gemm_half_rows more rows.
        self.lin_tok = 2.0 * params / (g * _f(k["peak_linear_flops"]) * eff_f)
        self.m_half = _f(k["gemm_half_rows"])
        r_att = g * _f(k["peak_attn_flops"]) * eff_f
        self.att_dec = att * ctx_dec / r_att + comm_tok
        self.att_pf = att * 0.5 * P / r_att + comm_tok
        self.pf_tok = self.lin_tok + self.att_pf  # one prefill token's compute time
        self.overhead = _f(k["step_overhead_s"]) + np.where(multi, 2.0 * L * _f(k["allreduce_latency_s"]), 0.0)
        bw = _f(k["hbm_Bps"]) * eff_b  # per GPU
        self.per_gpu_bw = bw
        self.weights_per_gpu = params * _f(k["weight_bytes"]) / g
        free = _f(k["hbm_bytes"]) * _f(k["hbm_usable_frac"]) - _f(k["hbm_reserve_bytes"]) - self.weights_per_gpu
        self.weights_fit = free >= 0.0
        self.H = np.maximum(free, 0.0) * g / self.rep  # KV bytes HBM holds, whole system
        self.t_w = self.weights_per_gpu / bw
        self.kv_read = self.rep / (g * bw)  # seconds per KV byte read from HBM (system-wide bytes)
        self.tier_bytes = _f(k["tier_bytes"])
        self.tier_Bps = _f(k["tier_Bps"])
        self.tier_lat = L * _f(k.get("tier_latency_s", 0.0))  # one dependent fetch per layer
        self.gpus = g
        self.peak_lin_total = g * _f(k["peak_linear_flops"])

    def cap(self, max_batch: Any) -> np.ndarray:
        """Largest mean batch: engine cap, KV capacity (HBM + tier), token budget."""
        kv_cap = (self.H + self.tier_bytes) / self.s  # serve() ignores the divisions by zero
        budget = self.C * self.O / (self.P + self.O)
        return np.minimum(np.minimum(_f(max_batch), kv_cap), budget)

    def at(self, B: np.ndarray) -> dict[str, np.ndarray]:
        """Every steady-state quantity at mean batch ``B`` (any shape that broadcasts with
        the point columns: the searches stack many probes per point).  Called inside
        ``serve``'s errstate, which silences the masked divisions by zero."""
        P, O = self.P, self.O
        kv = B * self.s
        over = kv - self.H
        spill = over > 1e-9 * kv  # rounding at the HBM boundary is no overflow (kv >= 0: spill implies over > 0)
        over = np.where(spill, over, 0.0)
        hbm = self.t_w + (kv + over) * self.kv_read
        # the tier term where KV overflows HBM (no tier: 0 / 0, masked); 0 where none does
        tier = np.where(spill, over / self.tier_Bps + self.tier_lat, 0.0) if spill.any() else 0.0
        gemm_d = (B + self.m_half) * self.lin_tok
        comp = gemm_d + B * self.att_dec
        BP = B * P
        q = np.maximum(np.minimum(self.C - B, np.maximum(P, BP / O)), 1.0)
        chunks = P / q  # chunk iterations of one prompt
        m_pf = self.kvb * (1.0 + np.maximum(chunks - 1.0, 0.0) * 0.5) * self.kv_read  # KV write + earlier-chunk reads
        t_d = self.overhead + np.maximum(np.maximum(comp, hbm), tier)
        comp_m = comp + q * self.pf_tok
        t_m = self.overhead + np.maximum(np.maximum(comp_m, hbm + q * m_pf), tier)
        f = np.minimum(BP / (O * q), 1.0)
        t = (1.0 - f) * t_d + f * t_m
        lam = B / (O * t)
        return {"B": B, "q": q, "chunks": chunks, "f": f, "t_d": t_d, "t_m": t_m, "t": t, "lam": lam, "over": over, "kv": kv}


#: Log-spaced fractions of the batch cap scanned for the best batch, and golden-section steps.
SCAN = np.geomspace(1e-3, 1.0, 16)
assert SCAN[-1] == 1.0  # the scan's last probe is the cap itself (_best_batch reuses its rate)
GOLDEN_STEPS = 20
_INVPHI = (np.sqrt(5.0) - 1.0) / 2.0
#: Speculative search (``bisect``, ``golden_max``): one stacked call evaluates the next
#: ``depth`` steps' every possible probe, at most ``PROBE_BUDGET`` values (probes x points)
#: and ``BISECT_DEPTH`` / ``GOLDEN_DEPTH`` steps; a single point takes 8 or 7 steps per
#: call, a large sweep one (numpy's per-call overhead dominates the small calls).
PROBE_BUDGET = 4096
BISECT_DEPTH = 8
GOLDEN_DEPTH = 7


@cache
def _depths(points: int, per_step: int, steps: int, max_depth: int) -> tuple[int, ...]:
    """Steps each round unrolls: as few rounds as the deepest tree allowed takes (``2**d - 1``
    states of ``per_step`` probes each for ``points`` points within ``PROBE_BUDGET``, at most
    ``max_depth``), the steps spread evenly over them."""
    d = 1
    while d < min(max_depth, steps) and per_step * ((2 << d) - 1) * points <= PROBE_BUDGET:
        d += 1
    rounds = -(-steps // d)
    return tuple(steps // rounds + (r < steps % rounds) for r in range(rounds))


@cache
def tree_paths(depth: int, grid: bool) -> tuple[np.ndarray, np.ndarray]:
    """Root paths of the ``2**depth`` leaves of a binary decision tree, as two
    ``(depth, 2**depth)`` tables: the node each leaf's path visits at each level, and the
    branch it takes there (True: the second child; with a trailing axis for the columns).
    ``grid=False``: nodes in level order (level ``l`` holds rows ``2**l - 1 ...``) with the
    children of level ``l`` appended as ``[all first children, all second children]``, so
    leaf ``j``'s branch at level ``l`` is bit ``l`` of ``j``.  ``grid=True``: the tree of a
    bisection, nodes numbered by their place among the ``2**depth - 1`` interior points of
    the bisection grid and leaf ``j`` the bracket between grid points ``j`` and ``j + 1``."""
    leaf = np.arange(1 << depth)
    lev = np.arange(depth)[:, None]
    if grid:
        span = depth - lev  # log2 of the leaves under a node of level l
        nodes = ((leaf >> span << 1) + 1 << span - 1) - 1
        return nodes, ((leaf >> (span - 1)) & 1).astype(bool)[:, :, None]
    nodes = (1 << lev) - 1 + (leaf & ((1 << lev) - 1))
    return nodes, ((leaf >> lev) & 1).astype(bool)[:, :, None]


def tree_leaf(second: np.ndarray, depth: int, grid: bool) -> np.ndarray:
    """Leaf that walking the tree from the root reaches, per column of ``second`` (one
    row per node, True: take the second child; shape ``(nodes, m)``).  The walk is
    sequential, but the leaf it reaches is the only one whose every branch agrees with the
    decision at the node where it is taken (any other leaf leaves the walk's path at some
    node, by the branch the walk did not take), so it is found in a few array operations."""
    nodes, bits = tree_paths(depth, grid)
    return np.logical_and.reduce(second[nodes] == bits, axis=0).argmax(axis=0)


def _pick(rows: np.ndarray, idx: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``rows[..., idx[..., c], c]``: for each column ``c`` (the trailing axes, shaped
    ``shape``) the entry that ``idx`` picks on the axis before them; axes of ``rows`` ahead
    of that one, then axes of ``idx`` ahead of its columns, stay (several picks in one)."""
    k = rows.ndim - len(shape) - 1  # axes ahead of the choices
    flat = rows.reshape(rows.shape[:k + 1] + (-1,))
    out = flat[..., idx, np.arange(flat.shape[-1])]
    return out.reshape(out.shape[:-1] + shape)


#: Offsets of a bracket's two ends on the bisection grid.
_ENDS = np.array([[0], [1]])


def bisect(below: Callable[[np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray,
           steps: int) -> tuple[np.ndarray, np.ndarray]:
    """``steps`` halvings of the bracket ``[lo, hi]``, bit for bit those of the loop::

        mid = 0.5 * (lo + hi);  lo, hi = (mid, hi) if below(mid) else (lo, mid)

    ``below`` maps probes shaped ``(k,) + lo.shape`` to booleans.  Each round takes the
    next ``d`` halvings at once: the bisection grid of ``2**d + 1`` points, each interior
    point made as ``0.5 * (left + right)`` of the two points that bracket it at its level
    -- the very operands the loop would add there, so every probe equals the loop's
    midpoint exactly -- goes into one ``below`` call, and ``tree_leaf`` picks the bracket
    the loop's walk ends in.  No monotonicity is assumed: where ``below`` flips back and
    forth (rounding noise on a flat rate curve) the result is still the loop's.  A round of
    one halving (a large batch) is the loop's step itself."""
    shape = lo.shape
    for depth in _depths(lo.size, 1, steps, BISECT_DEPTH):
        if depth == 1:
            mid = 0.5 * (lo + hi)
            right = below(mid[None])[0]
            lo, hi = np.where(right, mid, lo), np.where(right, hi, mid)
            continue
        n = 1 << depth
        grid = np.empty((n + 1,) + shape)
        grid[0], grid[n] = lo, hi
        h = n
        while h > 1:  # level by level: the midpoints of the brackets of width h
            mid = grid[h // 2::h]
            np.add(grid[0:n:h], grid[h::h], out=mid)
            np.multiply(mid, 0.5, out=mid)
            h //= 2
        j = tree_leaf(below(grid[1:n]).reshape(n - 1, -1), depth, grid=True)
        lo, hi = _pick(grid, j + _ENDS, shape)
    return lo, hi


def golden_max(lam: Callable[[np.ndarray], np.ndarray], a: np.ndarray, b: np.ndarray,
               steps: int) -> tuple[np.ndarray, np.ndarray]:
    """``steps`` golden-section steps toward the maximum of ``lam`` on ``[a, b]``, bit for
    bit those of the loop::

        c = b - INVPHI (b - a);  d = a + INVPHI (b - a)
        a, b = (a, d) if lam(c) >= lam(d) else (c, b)

    then the final bracket's midpoint ``0.5 (a + b)`` and ``lam`` there.  ``lam`` maps
    probes shaped ``(k, j) + a.shape`` to rates.  Each round unrolls the next ``d`` steps
    (``golden_round``); a round of one step (a large batch) is the loop's step itself."""
    depths = _depths(a.size, 2, steps, GOLDEN_DEPTH)
    mid = lam_mid = None
    for r, d in enumerate(depths):
        if d > 1:
            a, b, mid, lam_mid = golden_round(lam, a, b, d, r == len(depths) - 1)
            continue
        c = b - _INVPHI * (b - a)
        e = a + _INVPHI * (b - a)
        lam_c, lam_d = lam(np.stack([c, e])[:, None])[:, 0]
        left = lam_c >= lam_d
        a, b = np.where(left, a, c), np.where(left, e, b)
    if mid is None:  # the last round was the loop's step (or there were no steps)
        mid = 0.5 * (a + b)
        lam_mid = lam(mid[None, None])[0, 0]
    return mid, lam_mid


def golden_round(lam: Callable[[np.ndarray], np.ndarray], a: np.ndarray, b: np.ndarray, depth: int,
                 with_mid: bool) -> tuple[np.ndarray, ...]:
    """``depth`` golden-section steps (``golden_max``'s loop) from ``[a, b]`` in one ``lam``
    call: the ``2**depth - 1`` brackets the loop can reach, each with its two probes
    computed from its own ``(a, b)`` as the loop computes them, level by level, go into
    one call, and ``tree_leaf`` picks the bracket the loop ends in.  Returns that bracket
    and, ``with_mid``, its midpoint and ``lam`` there (every final bracket's midpoint rides
    along in the call), else ``None`` twice."""
    shape = a.shape
    n = 1 << depth
    buf = np.empty((4, n) + shape)  # rows: every c, every d (tree order from 1), the midpoints, the b
    A, E, B = buf[0], buf[1], buf[3]  # A[:2**l]: the a of level l's brackets (its c then land at A[2**l:])
    A[0], B[0], E[0] = a, b, a  # E[0] is a spare probe, never read
    t = np.empty((n // 2,) + shape)
    m = 1
    while m < n:  # level by level: every reachable bracket and its two probes
        w = np.subtract(B[:m], A[:m], out=t[:m])
        np.multiply(_INVPHI, w, out=w)
        np.subtract(B[:m], w, out=A[m:2 * m])  # c; the second children are (c, b)
        np.add(A[:m], w, out=E[m:2 * m])  # d; the first children are (a, d)
        B[m:2 * m] = B[:m]
        B[:m] = E[m:2 * m]
        m *= 2
    if with_mid:
        np.multiply(0.5, np.add(A, B), out=buf[2])
    rates = lam(buf[:2 + with_mid])
    j = tree_leaf(~(rates[0, 1:] >= rates[1, 1:]).reshape(n - 1, -1), depth, grid=False)
    a, b = _pick(buf[::3], j, shape)
    if not with_mid:
        return a, b, None, None
    return a, b, _pick(buf[2], j, shape), _pick(rates[2], j, shape)


def _best_batch(s: _Step, B_cap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The batch that maximizes the request rate, at most ``B_cap``, and that rate.  Without
    a KV tier the rate grows with the batch up to the cap; with one, past the point where
    streaming the tier binds, each added sequence slows every step by its KV over the
    tier's link and the rate falls again -- an engine admits no more than the best batch
    (scan, then golden section on the bracket)."""
    rates = s.at(np.maximum(np.multiply.outer(SCAN, B_cap), 1e-12))["lam"]  # every scan fraction in one call
    i = np.argmax(rates, axis=0)
    a = B_cap * SCAN[np.maximum(i - 1, 0)]
    b = B_cap * SCAN[np.minimum(i + 1, len(SCAN) - 1)]
    mid, lam_mid = golden_max(lambda x: s.at(np.maximum(x, 1e-12))["lam"], a, b, GOLDEN_STEPS)
    at_cap = rates[-1] >= lam_mid
    return np.where(at_cap, B_cap, mid), np.where(at_cap, rates[-1], lam_mid)  # rates[-1]: the rate at B_cap


def _ttft_parts(st: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """TTFT's fixed part (residual of the iteration in flight + the prompt's chunk
    iterations) and the chunk slot's service time."""
    chunks, t_m, t = st["chunks"], st["t_m"], st["t"]
    service = chunks * t_m
    prefill = np.maximum(1.0, chunks) * t_m
    residual = 0.5 * t * np.minimum(st["B"], 1.0)
    return residual + prefill, service


def _ttft_mean(st: dict[str, np.ndarray]) -> np.ndarray:
    """Mean TTFT (s): the fixed part + the M/D/1 wait for the chunk slot."""
    base, service = _ttft_parts(st)
    return base + queueing.md1_wait(st["lam"], service)


#: The TTFT quantiles reported (one stacked queueing call).
TTFT_QUANTILES = np.array([0.5, 0.99])


def _ttft(st: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """TTFT (s): residual of the iteration in flight + M/D/1 wait for the chunk slot + the
    prompt's chunk iterations; mean, p50 and p99."""
    lam = st["lam"]
    base, service = _ttft_parts(st)
    quantiles = TTFT_QUANTILES.reshape((2,) + (1,) * np.ndim(base))
    p50, p99 = base + queueing.mg1_wait_percentile(lam, service, quantiles, scv=0.0)
    return {"mean": base + queueing.md1_wait(lam, service), "p50": p50, "p99": p99}


def serve(**k: Any) -> dict[str, Any]:
    """Steady state of one engine instance serving fixed-length requests.

    Keyword arguments (scalars or columns; SI base units: seconds, bytes, B/s, FLOP/s):
    ``gpus`` (tensor-parallel degree), ``params``, ``layers``, ``hidden``, ``kv_heads``,
    ``kv_dim``, ``attn_dim``, ``weight_bytes`` and ``kv_bytes`` (per element),
    ``peak_linear_flops`` / ``peak_attn_flops`` (per GPU, at the weights' / KV's datatype),
    ``hbm_bytes``, ``hbm_Bps``, ``hbm_usable_frac``, ``hbm_reserve_bytes`` (per GPU),
    ``link_Bps`` (TP all-reduce bandwidth per GPU), ``tier_bytes`` / ``tier_Bps`` (the KV
    tier, whole system; 0 bytes for none), ``tier_latency_s`` (one access), ``prompt`` and ``output`` tokens,
    ``chunk_tokens``, ``max_batch``, ``eff_flops``, ``eff_hbm``, ``gemm_half_rows``, ``step_overhead_s``,
    ``allreduce_latency_s``, and the load: ``request_rate`` (requests/s; 0 = ``load_frac``
    of the capacity) or ``concurrency`` (> 0: a closed loop of that many clients).

    Returns columns: ``tokens_per_s`` (output), ``request_rate``, ``capacity_rate``,
    ``batch``, ``ttft_s`` / ``ttft_p50_s`` / ``ttft_p99_s``, ``itl_p50_s`` / ``itl_p99_s``,
    ``tpot_s``, ``mfu``, ``kv_tier_frac`` (share of KV read from the tier), ``kv_seq_bytes``
    (one request's KV at full context), ``hbm_kv_bytes``, ``util`` (load / capacity), and
    masks ``weights_fit``, ``kv_fits``, ``prompt_ok``, ``within_capacity``.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _serve(k)


def _full(x: Any, n: tuple[int, ...]) -> np.ndarray:
    """``x`` as an array of shape ``n`` (itself when it has that shape already)."""
    if isinstance(x, np.ndarray) and x.shape == n:
        return x
    return np.asarray(x) if n == () else np.broadcast_to(x, n)


def _shape(k: dict[str, Any]) -> tuple[int, ...]:
    """The broadcast shape of the keyword columns."""
    shapes = {v.shape if isinstance(v, (np.ndarray, np.generic)) else () if isinstance(v, (float, int)) else np.shape(v)
              for v in k.values()}
    return shapes.pop() if len(shapes) == 1 else np.broadcast_shapes(*shapes)


def _serve(k: dict[str, Any]) -> dict[str, Any]:
    n = _shape(k)
    s = _Step(**k)
    P = _full(s.P, n)
    B_cap = _full(np.maximum(s.cap(k["max_batch"]), 0.0), n).astype(np.float64)
    kv_fits = _full(s.s_max <= s.H + s.tier_bytes, n)
    B_cap = np.where(kv_fits & s.weights_fit, B_cap, 0.0)
    # no point holds a sequence (the weights or one request's KV do not fit): the searches
    # below would run on [0, 0] and leave it there, so they are skipped
    search = bool(B_cap.any())
    B_best, best_rate = _best_batch(s, B_cap) if search else (B_cap, B_cap)
    cap_rate = np.where(B_cap > 0, best_rate, 0.0)
    rate = _full(_f(k.get("request_rate", 0.0)), n)
    conc = _full(_f(k.get("concurrency", 0.0)), n)
    closed = conc > 0
    target = np.where(rate > 0, rate, _f(k.get("load_frac", 1.0)) * cap_rate)
    within = closed | (target <= cap_rate * (1.0 + 1e-9))
    any_closed, all_closed = bool(closed.any()), bool(closed.all())

    def below(mid: np.ndarray) -> np.ndarray:
        """lambda(B) < target (open loop) or N(B) < concurrency (closed) at each probe."""
        st = s.at(mid)
        lam = st["lam"]
        if not any_closed:
            return lam < target
        inflight = lam * (_ttft_mean(st) + (s.O - 1.0) * st["t"])
        return inflight < conc if all_closed else np.where(closed, inflight < conc, lam < target)

    # bisection on the batch: lambda(B) = target (open loop) or N(B) = concurrency (closed)
    # (only where some point is within capacity: the others keep B_best)
    lo, hi = bisect(below, np.zeros(n), B_best.copy(), BISECT_STEPS) if search and within.any() else (np.zeros(n), B_best)
    B = np.where(within, 0.5 * (lo + hi), B_best)
    st = s.at(np.maximum(B, 1e-12))
    lat = _ttft(st)
    lam = np.where(B_cap > 0, st["lam"], 0.0)
    if any_closed:  # clients beyond a full engine wait for admission: Little's law gives their TTFT
        cyc = np.where(lam > 0, conc / np.where(lam > 0, lam, 1.0), np.inf)
        excess = np.where(closed, np.maximum(cyc - (s.O - 1.0) * st["t"] - lat["mean"], 0.0), 0.0)
        lat = {key: v + excess for key, v in lat.items()}
    f = st["f"]
    itl_p50 = np.where(f > 0.5, st["t_m"], st["t_d"])
    itl_p99 = np.where(f > 0.01, st["t_m"], st["t_d"])
    flops = lam * (P * s.flops_pf + s.O * s.flops_dec)
    tier_frac = np.where(st["kv"] > 0, st["over"] / st["kv"], 0.0)
    util = np.where(cap_rate > 0, lam / cap_rate, 0.0)
    return {
        "tokens_per_s": lam * s.O,
        "request_rate": lam,
        "capacity_rate": cap_rate,
        "batch": B,
        "ttft_s": lat["mean"],
        "ttft_p50_s": lat["p50"],
        "ttft_p99_s": lat["p99"],
        "itl_p50_s": itl_p50,
        "itl_p99_s": itl_p99,
        "tpot_s": st["t"],
        "mfu": flops / s.peak_lin_total,
        "kv_tier_frac": tier_frac,
        "kv_seq_bytes": _full(s.s_max, n),
        "hbm_kv_bytes": _full(s.H, n),
        "util": util,
        "weights_fit": _full(s.weights_fit, n),
        "kv_fits": kv_fits,
        "prompt_ok": P >= 1.0,
        "within_capacity": within,
    }


__all__ = ["DTYPE_BYTES", "Gpu", "architectures", "families", "gpus", "kv_bytes_per_token", "serve", "shape_columns"]
