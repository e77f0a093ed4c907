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
halvings, so a batch of 32k points costs a few hundred numpy passes.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

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


def shape_columns(family: str, params_b: Any) -> dict[str, np.ndarray]:
    """Shape of a ``params_b``-billion model of ``family``: exact at the published sizes,
    interpolated log-log between them (extrapolated with the end segment's slope), so a
    swept model size moves the KV bytes per token and the attention FLOPs smoothly.
    Returns ``layers``, ``hidden``, ``kv_heads``, ``kv_dim`` (KV heads x head dim) and
    ``attn_dim`` (query heads x head dim)."""
    t = _family_table(family)
    x = np.log(np.asarray(params_b, dtype=np.float64))
    xs = np.log(t["params_b"])
    out = {}
    for k in ("layers", "hidden", "kv_heads", "kv_dim", "attn_dim"):
        ys = np.log(t[k])
        if len(xs) == 1:
            out[k] = np.broadcast_to(t[k][0], x.shape).astype(np.float64)
            continue
        y = np.interp(x, xs, ys)
        lo = x < xs[0]
        hi = x > xs[-1]
        slope_lo = (ys[1] - ys[0]) / (xs[1] - xs[0])
        slope_hi = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2])
        y = np.where(lo, ys[0] + slope_lo * (x - xs[0]), y)
        y = np.where(hi, ys[-1] + slope_hi * (x - xs[-1]), y)
        out[k] = np.exp(y)
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
        with np.errstate(divide="ignore", invalid="ignore"):
            kv_cap = (self.H + self.tier_bytes) / self.s
            budget = self.C * self.O / (self.P + self.O)
        return np.minimum(np.minimum(_f(max_batch), kv_cap), budget)

    def at(self, B: np.ndarray) -> dict[str, np.ndarray]:
        """Every steady-state quantity at mean batch ``B``."""
        P, O = self.P, self.O
        kv = B * self.s
        over = np.maximum(kv - self.H, 0.0)
        over = np.where(over > 1e-9 * kv, over, 0.0)  # rounding at the HBM boundary is no overflow
        hbm = self.t_w + (kv + over) * self.kv_read
        with np.errstate(divide="ignore", invalid="ignore"):
            tier = np.where(over > 0.0, over / self.tier_Bps + self.tier_lat, 0.0)
        gemm_d = (B + self.m_half) * self.lin_tok
        comp = gemm_d + B * self.att_dec
        q = np.maximum(np.minimum(self.C - B, np.maximum(P, B * P / O)), 1.0)
        m_pf = self.kvb * (1.0 + np.maximum(P / q - 1.0, 0.0) * 0.5) * self.kv_read  # KV write + earlier-chunk reads
        t_d = self.overhead + np.maximum(np.maximum(comp, hbm), tier)
        comp_m = comp + q * (self.lin_tok + self.att_pf)
        t_m = self.overhead + np.maximum(np.maximum(comp_m, hbm + q * m_pf), tier)
        f = np.minimum(B * P / (O * q), 1.0)
        t = (1.0 - f) * t_d + f * t_m
        lam = B / (O * t)
        return {"B": B, "q": q, "f": f, "t_d": t_d, "t_m": t_m, "t": t, "lam": lam, "over": over, "kv": kv}


#: Log-spaced fractions of the batch cap scanned for the best batch, and golden-section steps.
SCAN = np.geomspace(1e-3, 1.0, 16)
GOLDEN_STEPS = 20
_INVPHI = (np.sqrt(5.0) - 1.0) / 2.0


def _best_batch(s: _Step, B_cap: np.ndarray) -> np.ndarray:
    """The batch that maximizes the request rate, at most ``B_cap``.  Without a KV tier the
    rate grows with the batch up to the cap; with one, past the point where streaming the
    tier binds, each added sequence slows every step by its KV over the tier's link and the
    rate falls again -- an engine admits no more than the best batch (scan, then golden
    section on the bracket)."""
    rates = s.at(np.maximum(np.multiply.outer(SCAN, B_cap), 1e-12))["lam"]  # every scan fraction in one call
    i = np.argmax(rates, axis=0)
    a = B_cap * SCAN[np.maximum(i - 1, 0)]
    b = B_cap * SCAN[np.minimum(i + 1, len(SCAN) - 1)]
    for _ in range(GOLDEN_STEPS):
        c = b - _INVPHI * (b - a)
        d = a + _INVPHI * (b - a)
        lam_c, lam_d = s.at(np.maximum(np.stack([c, d]), 1e-12))["lam"]  # both probes in one call
        left = lam_c >= lam_d
        b = np.where(left, d, b)
        a = np.where(left, a, c)
    mid = 0.5 * (a + b)
    at_cap = rates[-1] >= s.at(np.maximum(mid, 1e-12))["lam"]
    return np.where(at_cap, B_cap, mid)


def _ttft_parts(st: dict[str, np.ndarray], P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TTFT's fixed part (residual of the iteration in flight + the prompt's chunk
    iterations) and the chunk slot's service time."""
    q, t_m, t = st["q"], st["t_m"], st["t"]
    service = P / q * t_m
    prefill = np.maximum(1.0, P / q) * t_m
    residual = 0.5 * t * np.minimum(st["B"], 1.0)
    return residual + prefill, service


def _ttft_mean(st: dict[str, np.ndarray], P: np.ndarray) -> np.ndarray:
    """Mean TTFT (s): the fixed part + the M/D/1 wait for the chunk slot."""
    base, service = _ttft_parts(st, P)
    return base + queueing.md1_wait(st["lam"], service)


def _ttft(st: dict[str, np.ndarray], P: np.ndarray) -> dict[str, np.ndarray]:
    """TTFT (s): residual of the iteration in flight + M/D/1 wait for the chunk slot + the
    prompt's chunk iterations; mean, p50 and p99."""
    lam = st["lam"]
    base, service = _ttft_parts(st, P)
    return {
        "mean": base + queueing.md1_wait(lam, service),
        "p50": base + queueing.mg1_wait_percentile(lam, service, 0.5, scv=0.0),
        "p99": base + queueing.mg1_wait_percentile(lam, service, 0.99, scv=0.0),
    }


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


def _serve(k: dict[str, Any]) -> dict[str, Any]:
    s = _Step(**k)
    n = np.broadcast_shapes(*(np.shape(v) for v in k.values()))
    P = np.broadcast_to(s.P, n)
    B_cap = np.broadcast_to(np.maximum(s.cap(k["max_batch"]), 0.0), n).astype(np.float64)
    kv_fits = np.broadcast_to(s.s_max <= s.H + s.tier_bytes, n)
    B_cap = np.where(kv_fits & np.broadcast_to(s.weights_fit, n), B_cap, 0.0)
    B_best = _best_batch(s, B_cap)
    cap_rate = np.where(B_cap > 0, s.at(np.maximum(B_best, 1e-12))["lam"], 0.0)
    rate = np.broadcast_to(_f(k.get("request_rate", 0.0)), n)
    conc = np.broadcast_to(_f(k.get("concurrency", 0.0)), n)
    closed = conc > 0
    target = np.where(rate > 0, rate, _f(k.get("load_frac", 1.0)) * cap_rate)
    within = closed | (target <= cap_rate * (1.0 + 1e-9))
    # bisection on the batch: lambda(B) = target (open loop) or N(B) = concurrency (closed)
    lo = np.zeros(n)
    hi = B_best.copy()
    for _ in range(BISECT_STEPS):
        mid = 0.5 * (lo + hi)
        st = s.at(mid)
        lam = st["lam"]
        if closed.any():
            ttft = _ttft_mean(st, P)
            inflight = lam * (ttft + (s.O - 1.0) * st["t"])
            below = np.where(closed, inflight < conc, lam < target)
        else:
            below = lam < target
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    B = np.where(within, 0.5 * (lo + hi), B_best)
    st = s.at(np.maximum(B, 1e-12))
    lat = _ttft(st, P)
    lam = np.where(B_cap > 0, st["lam"], 0.0)
    if closed.any():  # clients beyond a full engine wait for admission: Little's law gives their TTFT
        cyc = np.where(lam > 0, conc / np.where(lam > 0, lam, 1.0), np.inf)
        excess = np.where(closed, np.maximum(cyc - (s.O - 1.0) * st["t"] - lat["mean"], 0.0), 0.0)
        lat = {key: v + excess for key, v in lat.items()}
    f = st["f"]
    itl_p50 = np.where(f > 0.5, st["t_m"], st["t_d"])
    itl_p99 = np.where(f > 0.01, st["t_m"], st["t_d"])
    flops = lam * (P * s.flops_pf + s.O * s.flops_dec)
    with np.errstate(divide="ignore", invalid="ignore"):
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
        "kv_seq_bytes": np.broadcast_to(s.s_max, n),
        "hbm_kv_bytes": np.broadcast_to(s.H, n),
        "util": util,
        "weights_fit": np.broadcast_to(s.weights_fit, n),
        "kv_fits": kv_fits,
        "prompt_ok": P >= 1.0,
        "within_capacity": within,
    }


__all__ = ["DTYPE_BYTES", "Gpu", "architectures", "families", "gpus", "kv_bytes_per_token", "serve", "shape_columns"]
