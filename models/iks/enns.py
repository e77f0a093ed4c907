"""Exact nearest-neighbour search (ENNS) on the IKS NMAs (digest §2 mechanisms 2-4).

A batch of up to 64 queries is scored in one pass over the corpus: every NMA streams the
embedding vectors of its own package once and broadcasts them to its 64 PEs, one query
per PE (output-stationary, batch reuse).  A pass is limited by the slower of

* memory: the shard's bytes over the ENNS channels' bandwidth, ``channels x peak x eta``
  (eta: the achieved fraction of peak, fitted to Table 1, see ``calibration.py``), less
  the share of channel time a temporal co-tenant takes;
* compute: each PE scores 68 vectors every D cycles, so an NMA consumes ``68 x b`` bytes
  per cycle (136 B/cycle at fp16 = the package's 136 GB/s at 1 GHz);
* top-K insertion: 68 scores per PE per group enter a sorted list; hidden while the
  insertion takes no longer than the D cycles of the next group.

The CPU then merges the partial top-K lists of every active NMA of every IKS.
"""

from __future__ import annotations

import numpy as np

from dse.units import B_PER_S_PER_GBPS, GB, NS_PER_S
from models.iks import device

#: CPU time per candidate entry in the final merge of the NMAs' partial top-K lists, ns.
#: Assumption: a heap merge touches each (score, id) pair a few cycles at ~3 GHz.
MERGE_NS_PER_ENTRY = 1.0


def active_nmas(enns_channels) -> np.ndarray:
    """NMAs holding ENNS data: page colouring spreads the ENNS channels evenly over the
    packages (assumption), so all 8 work once ENNS has 8 channels or more."""
    return np.minimum(device.PACKAGES, np.asarray(enns_channels, dtype=np.float64))


def search_s(
    shard_gb, dim, elem_b, batch, top_k, enns_channels, peak_gbps, eta, cotenant_share, clock_ghz,
    topk_cycles_per_score, n_devices,
) -> dict[str, np.ndarray]:
    """Time (s) of one ENNS batch on one IKS holding ``shard_gb`` of the corpus.

    Returns ``memory_s``, ``compute_s`` (compute + exposed top-K insertion), ``engine_s``
    (the max of the two) and ``merge_s`` (the CPU's final top-K merge)."""
    passes = np.ceil(np.asarray(batch, dtype=np.float64) / device.QUERIES_PER_PASS)
    bw_gbps = enns_channels * peak_gbps * eta * (1.0 - cotenant_share)
    memory_s = passes * shard_gb / bw_gbps
    nmas = active_nmas(enns_channels)
    vectors_per_nma = device.corpus_vectors(shard_gb, dim, elem_b) / nmas
    groups = vectors_per_nma / device.VECTORS_PER_GROUP
    hz = clock_ghz * device.HZ_PER_GHZ
    # each group: D cycles of MACs; the top-K unit needs 68 x cycles/score and hides under them
    exposed_topk_cyc = np.maximum(device.VECTORS_PER_GROUP * topk_cycles_per_score - dim, 0.0)
    compute_s = passes * groups * (dim + exposed_topk_cyc) / hz
    # CPU merge of nmas x devices partial lists of K entries for every query
    merge_s = batch * nmas * n_devices * top_k * MERGE_NS_PER_ENTRY / NS_PER_S
    return {
        "memory_s": memory_s,
        "compute_s": compute_s,
        "engine_s": np.maximum(memory_s, compute_s),
        "merge_s": merge_s,
    }


def achieved_bw_gbps(shard_gb, engine_s, batch) -> np.ndarray:
    """Corpus bytes streamed per second of engine time (GB/s)."""
    passes = np.ceil(np.asarray(batch, dtype=np.float64) / device.QUERIES_PER_PASS)
    return passes * shard_gb * GB / engine_s / B_PER_S_PER_GBPS
