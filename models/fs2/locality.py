"""Hit ratios of device caches and FS² switch caches (fs2.md §2 items 3 and 6).

* **Capacity.** Devices share one address space that grows with them (weak scaling: each
  device brings ``footprint_b`` of data, the paper's "cache visibility" falls as 1/N).
  Reuse follows a power law of skew ``alpha``; the hit rate of a cache of ``c`` bytes over
  ``N x footprint`` is the cache block's working-set model, H(c) / H(N x footprint) in
  64 B lines (computed from the block's generalized harmonic number so that one
  H(footprint) serves every cache level).
* **Coherence churn.** A cached line dies when a device outside the cache's subtree writes
  it.  For a cache serving ``k`` of ``N`` devices and a write share ``w``, the next access
  to a line comes from inside the subtree with probability ``k / (k + w (N - k))``; that is
  the fraction of capacity hits that survive.  A private cache is ``k = 1``; a switch
  cache at tree level i serves ``k = fanout^i`` devices, so it loses fewer lines.
* **Switch caches** are non-inclusive and sit above the device caches: the first ``i``
  levels on a request's path hold, together with the device cache, the lines a cache of
  ``device + i x switch`` bytes would, less their churn.  Only reads are served there:
  a write needs ownership, which only the HA grants (fs2.md §2 item 8).
* **FS²-scheduling** sends a share ``affinity`` of the requests to the device whose data
  they touch: those see the device's own footprint and no remote writers.
"""

from __future__ import annotations

import numpy as np

from dse.units import CACHELINE_B
from models.blocks import cache


def survive_frac(served: np.ndarray, n: np.ndarray, write_frac: np.ndarray) -> np.ndarray:
    """Share of a cache's capacity hits not lost to writes from outside its subtree."""
    outside = np.maximum(n - served, 0.0)
    return served / (served + write_frac * outside)


def _hit(h_cache: np.ndarray, h_foot: np.ndarray, cache_lines: np.ndarray, foot_lines: np.ndarray) -> np.ndarray:
    """Working-set hit rate H(C) / H(F) (cache block rule: C >= F hits always, C < 1 line
    holds a fraction of the top line)."""
    hit = np.where(cache_lines >= 1.0, h_cache, cache_lines) / h_foot
    return np.where(cache_lines >= foot_lines, 1.0, np.clip(hit, 0.0, 1.0))


def device_capacity_hits(dev_b, footprint_b, n, alpha) -> tuple[np.ndarray, np.ndarray]:
    """Capacity hit rate of a device cache over the shared footprint ``n x footprint``, and
    H(shared footprint) for :func:`switch_capacity_hits` (one cache-block call)."""
    lines = np.stack([dev_b, n * footprint_b], axis=1) / CACHELINE_B
    h = cache.generalized_harmonic(np.maximum(lines, 1.0), alpha[:, None])
    return _hit(h[:, 0], h[:, 1], lines[:, 0], lines[:, 1]), h[:, 1]


def own_capacity_hits(dev_b, footprint_b, alpha) -> np.ndarray:
    """Capacity hit rate of a device cache over the device's own footprint (the requests
    FS²-scheduling keeps on the device that owns their data)."""
    return cache.working_set_hit_rate(dev_b, footprint_b, alpha)


def switch_capacity_hits(dev_b, sw_b, footprint_b, n, alpha, h_shared, levels: int) -> np.ndarray:
    """(n, levels): capacity hit rate of the device cache plus i switch caches over the shared
    footprint, i = 1..levels (the same for every topology; churn is applied per topology)."""
    i = np.arange(1, levels + 1, dtype=np.float64)[None, :]
    lines = (dev_b[:, None] + sw_b[:, None] * i) / CACHELINE_B
    shared = (n * footprint_b / CACHELINE_B)[:, None]
    h = cache.generalized_harmonic(np.maximum(np.minimum(lines, shared), 1.0), alpha[:, None])
    return _hit(h, h_shared[:, None], lines, shared)


def miss_split(cap_hit, n, write_frac, affinity=0.0, own_hit=0.0) -> tuple[np.ndarray, np.ndarray]:
    """Device-cache misses split into capacity misses and coherence (invalidation) misses.

    A request spread over the shared footprint misses for capacity with 1 - ``cap_hit``;
    a line the cache would have held is gone because a device outside it wrote the line
    (an invalidation, fs2.md §2 items 1 and 8: SnpInv to the sharers, at a rate set by the
    write-sharing share) with ``cap_hit x (1 - survive_frac)``.  The ``affinity`` share
    FS²-scheduling keeps on the owning device sees only its own data and no remote writers:
    capacity misses ``1 - own_hit``, no coherence misses.  The two parts sum to the device
    miss ratio the model uses (1 - device_hit_frac)."""
    lost = cap_hit * (1.0 - survive_frac(1.0, n, write_frac))
    capacity = (1.0 - affinity) * (1.0 - cap_hit) + affinity * (1.0 - own_hit)
    return capacity, (1.0 - affinity) * lost
