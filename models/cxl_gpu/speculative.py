"""Speculative read (SR): the SSD endpoint's internal-DRAM hit rate by access pattern and
SR policy, and the DevLoad-driven SR size (digest M6; paper 003:L136-162, L248-262).

Demand misses of the internal DRAM (a 4 KiB fill per miss, ``paths.FILL_B``) are removed
in four steps, one per policy of the paper's ablation (Fig 9d):

1. **No SR** (``cxl``): a miss fills the whole 4 KiB page, so later accesses to it hit --
   but only once the fill has arrived.  A streaming warp keeps the memory queue full of
   requests to the page in flight, so of the page's 64 lines the first ``queue`` are
   misses: ``h0 = sigma x (1 - queue / 64)``.  Seq streams touch every line
   (``sigma = 1``, a definition, not a fit); Around reuses part of the page
   (``sigma_around``); Rand hits only by re-reference, in proportion to the cache size
   (``sigma_rand`` at the 1.5 GB internal DRAM of the study).
2. **CXL-NAIVE**: every load first sends a 64 B ``MemSpecRd`` from the SR queue, ahead of
   its demand, which waits behind the memory queue.  The miss becomes a hit when that lead
   exceeds the flash read: ``tau = 1 - exp(-lead / t_flash)``, so slow media hide less.
   ``lead`` is per pattern (how full the queues run) and scales with the queue depth.
3. **CXL-DYN**: the SR covers ``g`` bytes (256-1024 B) forward, so a later access within
   ``g`` ahead finds its line prefetched: coverage ``fwd x (1 - 64 / g)`` (Seq: ``fwd = 1``).
   The bytes an SR brings that are never used (``waste``) pollute the cache and take
   reuse hits away: ``h0 x (1 - pollution x waste_share x g / 1024 x 1.5 GB / C)``.
4. **CXL-SR**: the address window also reaches ``g`` behind the address (rounded to 256 B),
   covering the backward neighbours of non-monotonic patterns: ``bwd x (1 - 64 / g)``
   (Seq: none behind; Rand: as many as ahead).

The miss fraction of each step multiplies the previous one.  The per-pattern constants are
fitted to Fig 9d (see ``calibration.toml``); the Seq column is not fitted.

DevLoad (003:L148-154): the endpoint reports its load; the SR size grows on light load and
shrinks on overload, so on average it settles where the flash backend's utilization meets
the moderate-overload threshold: ``g = clip((theta x BW / rate - fill bytes) / SR issue,
256, g_max)``.
"""

from __future__ import annotations

import numpy as np

from dse.units import CACHELINE_B
from models.cxl_gpu import paths
from models.cxl_gpu.fitted import CAL

POLICIES = ("none", "naive", "dyn", "sr")
#: Policies (codes into :data:`POLICIES`) that send speculative reads (steps 2-4 above),
#: that size them (``g`` bytes, steps 3-4) and that add the backward address window (step 4).
SENDS_SR = tuple(POLICIES.index(k) for k in ("naive", "dyn", "sr"))
SIZES_SR = tuple(POLICIES.index(k) for k in ("dyn", "sr"))
WINDOWED = (POLICIES.index("sr"),)
#: Pattern indices (into ``paths.PATTERNS`` and the per-pattern constants).
SEQ, RAND = paths.PATTERNS.index("seq"), paths.PATTERNS.index("rand")
#: SR size of CXL-NAIVE: the 64 B of one request (003:L250).
NAIVE_GRAN_B = 64.0
#: Smallest and largest DevLoad SR size (003:L152).
SR_GRAN_MIN_B = 256.0
SR_GRAN_MAX_B = 1024.0
#: Internal DRAM of the study's SSD endpoint, GiB (983 ZET: 1.5 GB, sibling digest
#: cxl-prefetch.md L1329, suggested by the CXL-GPU digest ambiguity 7).
IDRAM_REF_GIB = 1.5
#: Queue depth the per-pattern lead times were fitted at (003:L138).
QUEUE_REF = 32.0


def _pattern_constants() -> dict[str, np.ndarray]:
    sr = CAL["sr"]
    return {
        "sigma": np.array([1.0, sr["sigma_around"], sr["sigma_rand"]]),
        "lead_ns": np.array([sr["lead_seq_ns"], sr["lead_around_ns"], sr["lead_rand_ns"]]),
        "fwd": np.array([1.0, sr["fwd_around"], sr["fwd_rand"]]),
        "bwd": np.array([0.0, sr["bwd_around"], sr["fwd_rand"]]),
    }



def sr_lookahead_req(queue: np.ndarray, chains: np.ndarray) -> np.ndarray:
    """Requests an SR reader sees ahead of a demand whose address comes from loaded data
    (pointer chasing: graph kernels, BFS).  The lead of a ``MemSpecRd`` over its demand is
    the demand's wait behind the queue (digest M6: ``L ~ W_q``, up to 32 entries, 003:L138).
    A computed address (Seq, Around) can enter the SR queue as soon as the warp issues it,
    so the queue runs full; a data-dependent one is known only when the load before it in
    its chain returns, so at most one request per independent chain is queued and the SR
    sees ``min(queue, chains)`` requests ahead.  With one chain the SR goes out with its
    demand and hides nothing; with as many chains as queue entries it sees as far as for a
    stream.  (The address window, [a - g, a + g], looks around the *current* address; for a
    chase the next address is wherever the pointer goes, which ``fwd_rand`` covers.)"""
    return np.minimum(np.asarray(queue, np.float64), np.maximum(np.asarray(chains, np.float64), 1.0))


def hit_rates(
    policy: np.ndarray, weights: tuple[np.ndarray, ...], gran_b: np.ndarray, window: np.ndarray,
    miss_ns: np.ndarray, queue: np.ndarray, idram_gib: np.ndarray, consts: dict[str, np.ndarray] | None = None,
    rand_queue: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Internal-DRAM hit rate of a workload (pattern shares ``weights`` = (seq, around, rand))
    under SR ``policy`` (codes into :data:`POLICIES`), SR size ``gran_b``, address window on
    or off, flash read ``miss_ns`` and memory-queue depth ``queue``.

    ``rand_queue`` (default ``queue``): the requests an SR sees ahead of a Rand (graph,
    data-dependent) access, :func:`sr_lookahead_req`; the Rand lead scales with it.

    Returns ``hit`` (0..1), ``miss_seq`` (the part of the misses that belong to Seq
    streams), ``sr_b`` (speculative-read bytes the backend reads per access)
    and ``waste_frac`` (share of SR bytes never used)."""
    k = _pattern_constants() if consts is None else consts
    has_sr = np.isin(policy, SENDS_SR).astype(np.float64)
    spatial = np.isin(policy, SIZES_SR)
    win = (np.isin(policy, WINDOWED) & window).astype(np.float64)
    g = np.where(spatial, gran_b, NAIVE_GRAN_B)
    span = 1.0 - CACHELINE_B / g  # share of an SR beyond the demanded line (0 for NAIVE)
    inflight = np.maximum(0.0, 1.0 - queue / paths.FILL_LINES)
    cap = idram_gib / IDRAM_REF_GIB
    # SR bytes never used pollute the cache in proportion to their size and share
    pollute = CAL["sr"]["pollution"] * span * g / (SR_GRAN_MAX_B * cap)
    lead_scale = queue / (QUEUE_REF * np.maximum(miss_ns, 1e-9))
    lead_scale_rand = lead_scale if rand_queue is None else rand_queue / (QUEUE_REF * np.maximum(miss_ns, 1e-9))
    hit = 0.0
    sr_b = 0.0
    waste_b = 0.0
    for j in range(len(paths.PATTERNS)):
        w = weights[j]
        fwd = k["fwd"][j] * span
        bwd = k["bwd"][j] * span * win
        waste_share = np.maximum(1.0 - k["fwd"][j] - k["bwd"][j] * win, 0.0)
        # Rand hits by re-reference, in proportion to the cache size (working-set model)
        h0 = np.minimum(1.0, k["sigma"][j] * cap) if j == RAND else k["sigma"][j] * inflight
        h0 = h0 * np.clip(1.0 - pollute * waste_share, 0.0, 1.0)
        tau = has_sr * (1.0 - np.exp(-k["lead_ns"][j] * (lead_scale_rand if j == RAND else lead_scale)))
        miss = (1.0 - h0) * (1.0 - tau) * (1.0 - fwd) * (1.0 - bwd)
        hit = hit + w * (1.0 - miss)
        if j == SEQ:
            miss_seq = w * miss
        # one SR per access that an earlier SR did not already cover (the ring buffer drops
        # repeats), each reading g bytes
        sr_w = w * has_sr * np.maximum(1.0 - fwd - bwd, CACHELINE_B / g) * g
        sr_b = sr_b + sr_w
        waste_b = waste_b + sr_w * waste_share * span
    with np.errstate(divide="ignore", invalid="ignore"):
        waste_frac = np.where(sr_b > 0, waste_b / np.maximum(sr_b, 1e-30), 0.0)
    return {"hit": hit, "miss_seq": miss_seq, "sr_b": sr_b, "waste_frac": waste_frac}


def devload_gran_b(
    gran_max_b: np.ndarray, theta: np.ndarray, backend_gbps: np.ndarray, access_per_ns: np.ndarray,
    fill_b_per_access: np.ndarray, sr_b_per_access_at_max: np.ndarray,
) -> np.ndarray:
    """SR size DevLoad settles at: the largest ``g <= gran_max_b`` (at least 256 B) that
    keeps the backend's utilization at or under ``theta``.  SR bytes are taken as
    proportional to ``g`` (one SR of ``g`` bytes per uncovered access)."""
    per_b = sr_b_per_access_at_max / np.maximum(gran_max_b, 1.0)
    budget = theta * backend_gbps / np.maximum(access_per_ns, 1e-30) - fill_b_per_access
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(per_b > 0, budget / np.maximum(per_b, 1e-30), gran_max_b)
    return np.clip(g, SR_GRAN_MIN_B, gran_max_b)
