"""CPU baselines of the IKS article: FAISS flat ENNS and HNSW on the host (digest §1, §5).

The host is one socket with 8 x DDR5-4000 channels (the article's emulation server, and the
companion ASPLOS paper's Xeon 4416+); its memory comes from the dram block.

* **CPU ENNS** (FAISS ``IndexFlatIP``): a roofline -- the corpus streamed once per batch at
  a fraction of the socket's sustainable bandwidth, or the inner products at a fraction of
  the cores' AVX-512 fp32 rate.
* **CPU HNSW** (FAISS ``IndexHNSWFlat``): latency-bound graph walk.  A query expands about
  ``efSearch`` candidates at layer 0; each expansion reads the node's neighbour list (one
  DRAM miss) and scores the ~M neighbours not yet visited (2M links, about half already
  seen).  A distance costs a DRAM miss for the vector's first line, the rest of the vector
  at the bandwidth one core sustains (its L1 fill buffers over the miss latency, Little's
  law) and the dot product.  FAISS searches the queries of a batch in parallel, one query
  per thread.

The article prints no CPU times (digest §7 item 10).  The three efficiencies are fitted to
the companion paper's measurements on the same class of host (ASPLOS'25, ``asplos.csv``):
the scan fraction to the batch-1 CPU/IKS ratio (13.4x), the fp32 fraction to the batch-16
ratio (27.9x), and a slowdown of FAISS HNSW over the latency-bound walk to "HNSW only 2.5x
faster than CPU ENNS" (50 GB, batch 16).  That paper names two efSearch values for the HNSW
configuration of that statement (10000 in its §3.2, 2048 in its Fig. 11 caption); the fit
follows §3.2 and ``hnsw_fit_ef`` selects the other reading.
"""

from __future__ import annotations

import numpy as np

from dse.units import CACHELINE_B, GB, MS_PER_S, NS_PER_S
from models.blocks import dram
from models.blocks.calibration import per_calibration
from models.iks.device import HZ_PER_GHZ
from models.iks.rag import read_csv

# ----------------------------------------------------------------------------- host socket
#: The host's DIMMs: DDR5-4000 (digest §1; ASPLOS Table 2).  Assumption: the dram block's
#: DDR5-4800 cycle counts at tCK = 0.5 ns (JEDEC 4000 bins differ by a few cycles).
HOST_DIMM = dram.timing("DDR5-4800", tck_ns=0.5)
#: DDR5 channels per socket.  Source: Intel ARK (Xeon Gold 6554S and Xeon 4416+: 8 channels).
HOST_CHANNELS = 8
#: Core-to-memory-controller path of a Xeon, both directions, ns.  Same assumption as the
#: cxl-expander model's host_path_ns (local DDR5 idle ~110 ns, Intel MLC measurements).
HOST_PATH_NS = 42.0
#: Outstanding L1 misses per core (fill buffers).  Source: Intel optimization reference
#: manual, Golden Cove / Raptor Cove cores (16 L1D fill buffers).
FILL_BUFFERS = 16
#: Cores per socket of the article's emulation server.  Source: Intel ARK, Xeon Gold 6554S (36 cores).
HOST_CORES = 36
#: fp32 flops per cycle per core: 2 AVX-512 FMA ports x 16 lanes x 2.  Source: Intel
#: optimization reference manual (Golden Cove server cores).
FLOPS_PER_CYCLE = 64.0
#: All-core AVX-512 clock, GHz.  Assumption: ~2.0 GHz (4416+ base 2.0 GHz, 6554S base 2.2 GHz;
#: the AVX-512 licence runs lower).
AVX512_GHZ = 2.0
#: Embedding shape of the companion paper's corpus: BERT-base 768-d, 16-bit (ASPLOS §3; its
#: simulator artifact runs d = 768 with 32,552,084 vectors for 50 GB).
FIT_DIM = 768
FIT_ELEM_B = 2
#: FAISS IndexHNSWFlat stores float32 vectors.
FIT_HNSW_ELEM_B = 4


def _asplos() -> dict[str, float]:
    return {r["quantity"]: float(r["value"]) for r in read_csv("asplos.csv")}


ASPLOS = _asplos()


def _flops(corpus_gb, dim, elem_b, batch) -> np.ndarray:
    vectors = np.asarray(corpus_gb, dtype=np.float64) * GB / (np.asarray(dim) * np.asarray(elem_b))
    return 2.0 * vectors * dim * batch


#: The ASPLOS CPU ENNS fit at 512 GB: the batch-1 time is memory-bound (one pass, trivial
#: flops), the batch-16 time compute-bound (the same pass, 16x the flops).
_FIT_CORPUS_GB = 512.0
_T_IKS_S = ASPLOS["iks_512gb_ms"] / MS_PER_S
_T_B1_S = ASPLOS["cpu_enns_x_b1"] * _T_IKS_S
_T_B16_S = ASPLOS["cpu_enns_x_b16"] * _T_IKS_S


def _fit_gemm_eff() -> float:
    """The fp32 fraction that reproduces the ASPLOS batch-16 CPU/IKS ratio at 512 GB."""
    peak = ASPLOS["asplos_host_cores"] * FLOPS_PER_CYCLE * AVX512_GHZ * HZ_PER_GHZ
    return float(_flops(_FIT_CORPUS_GB, FIT_DIM, FIT_ELEM_B, 16.0)) / (_T_B16_S * peak)


#: Fraction of the cores' AVX-512 fp32 rate FAISS's blocked inner products reach.  Fitted:
#: ASPLOS batch-16 CPU ENNS = 27.9 x 470.6 ms at 512 GB on 16 cores; ~0.30.
GEMM_EFF = _fit_gemm_eff()


@per_calibration
def host_memory() -> dict[str, float]:
    """The socket's memory (dram block, under the calibration in force):

    * ``stream_gbps`` -- sustainable stream bandwidth of the socket, GB/s (read-only stream);
    * ``miss_ns`` -- load-to-use latency of a random DRAM miss on the host (dram block +
      host path);
    * ``scan_eff`` -- fraction of ``stream_gbps`` FAISS's flat scan reaches.  Fitted: ASPLOS
      batch-1 CPU ENNS = 13.4 x 470.6 ms at 512 GB (asplos.csv); ~0.34 (FAISS stores fp32,
      so twice the bytes may be what the socket actually moves)."""
    stream_gbps = HOST_CHANNELS * float(dram.saturation_bw_gbps(HOST_DIMM, "stream", 1.0))
    return {
        "stream_gbps": stream_gbps,
        "miss_ns": HOST_PATH_NS + float(dram.idle_latency_ns(HOST_DIMM, "random")),
        "scan_eff": _FIT_CORPUS_GB / (_T_B1_S * stream_gbps),
    }


def cpu_enns_s(corpus_gb, dim, elem_b, batch, threads=HOST_CORES) -> np.ndarray:
    """One batch of flat inner-product search over the whole corpus on one socket (s)."""
    mem = host_memory()
    memory_s = corpus_gb * GB / (mem["stream_gbps"] * mem["scan_eff"] * GB)
    compute_s = _flops(corpus_gb, dim, elem_b, batch) / (
        np.asarray(threads, dtype=np.float64) * FLOPS_PER_CYCLE * AVX512_GHZ * HZ_PER_GHZ * GEMM_EFF)
    return np.maximum(memory_s, compute_s)


# ----------------------------------------------------------------------------- HNSW graph depth and recall
#: Hops of the greedy (ef = 1) search on each upper layer.  Assumption: HNSW's construction
#: keeps the hops per layer bounded by a constant independent of N (Malkov & Yashunin, IEEE
#: TPAMI 2018, §4); a few, range 1-10.
UPPER_LAYER_HOPS = 4.0
#: Vectors of the article's corpus: the DPR Wikipedia split, 21,015,324 passages (Karpukhin
#: et al., EMNLP 2020, §4.1; digest §5 builds the corpus following DPR).
DPR_PASSAGES = 21_015_324.0
#: Recall@32 of the article's HNSW operating point (Fig. 3, ~L2967), taken to be its Fig. 8
#: configuration efSearch = 4096 (~L3159) on the DPR corpus (assumption: the article
#: names one HNSW configuration).
RECALL_REF = 0.95
EF_REF = 4096.0
#: Exponent of the recall curve's miss rate in the search breadth, 1 - recall ~ ef^-beta.
#: Assumption: published HNSW recall-vs-efSearch curves (FAISS and hnswlib benchmarks) are
#: close to straight lines of log(1 - recall) against log(ef) with slopes of about -0.3 to
#: -1 on dense text/image embeddings; 0.5, range 0.3-1.
RECALL_BETA = 0.5


def hnsw_levels(n_vectors, m) -> np.ndarray:
    """Expected layers above layer 0 of an HNSW graph of ``n_vectors``: the level multiplier
    mL = 1 / ln M gives ln N / ln M levels (Malkov & Yashunin, TPAMI 2018, §4)."""
    n = np.maximum(np.asarray(n_vectors, dtype=np.float64), 2.0)
    return np.log(n) / np.log(np.maximum(np.asarray(m, dtype=np.float64), 2.0))


def hnsw_recall(ef_search, n_vectors) -> np.ndarray:
    """Recall@K of HNSW at search breadth ``ef_search`` on a graph of ``n_vectors``.

    The miss rate falls as a power of the breadth, ``1 - R = (1 - R_ref) (ef_ref / ef')^beta``,
    anchored at the article's Recall@32 = 0.95 with efSearch 4096 on the DPR corpus.  A
    larger graph is deeper (ln N / ln M layers), so the same ef covers less of the query's
    neighbourhood: ``ef' = ef ln(N_ref) / ln(N)`` (the ef needed for a recall grows as log N,
    the HNSW paper's logarithmic search complexity at fixed accuracy)."""
    ef_eff = np.asarray(ef_search, dtype=np.float64) * np.log(DPR_PASSAGES) / np.log(np.maximum(n_vectors, 2.0))
    return np.clip(1.0 - (1.0 - RECALL_REF) * (EF_REF / ef_eff) ** RECALL_BETA, 0.0, 1.0)


def hnsw_ef_for_recall(recall, n_vectors) -> np.ndarray:
    """The efSearch at which :func:`hnsw_recall` reaches ``recall`` (< 1) on ``n_vectors``."""
    miss = np.maximum(1.0 - np.asarray(recall, dtype=np.float64), 1e-12)
    ef_eff = EF_REF * ((1.0 - RECALL_REF) / miss) ** (1.0 / RECALL_BETA)
    return ef_eff * np.log(np.maximum(n_vectors, 2.0)) / np.log(DPR_PASSAGES)


def hnsw_walk_s(ef_search, m, dim, elem_b, n_vectors=DPR_PASSAGES) -> np.ndarray:
    """Latency-bound estimate of one HNSW query on one core (s): the greedy descent through
    the upper layers (UPPER_LAYER_HOPS per layer, ln N / ln M layers) and ``efSearch``
    expansions at layer 0, each a neighbour-list miss + M distance evaluations."""
    miss_ns = host_memory()["miss_ns"]
    vec_b = np.asarray(dim, dtype=np.float64) * elem_b
    core_bw_b_per_ns = FILL_BUFFERS * CACHELINE_B / miss_ns
    dot_ns = 2.0 * np.asarray(dim, dtype=np.float64) / (FLOPS_PER_CYCLE * AVX512_GHZ)
    distance_ns = miss_ns + np.maximum(vec_b - CACHELINE_B, 0.0) / core_bw_b_per_ns + dot_ns
    expansion_ns = miss_ns + m * distance_ns
    expansions = np.asarray(ef_search, dtype=np.float64) + UPPER_LAYER_HOPS * hnsw_levels(n_vectors, m)
    return expansions * expansion_ns / NS_PER_S


def hnsw_slowdown(fit_ef) -> np.ndarray:
    """FAISS HNSW time over the latency-bound walk, fitted to ASPLOS's ANNS-2 being 2.5x
    faster than CPU ENNS (50 GB, batch 16, one query per thread on the 16-core host), for
    ANNS-2 run at efSearch ``fit_ef``."""
    c, b = ASPLOS["hnsw_fit_corpus_gb"], ASPLOS["hnsw_fit_batch"]
    enns_s = cpu_enns_s(c, FIT_DIM, FIT_ELEM_B, b, ASPLOS["asplos_host_cores"])
    hnsw_s = enns_s / ASPLOS["hnsw_x_over_cpu_enns"]  # one wave: 16 queries on 16 cores
    fit_vectors = c * GB / (FIT_DIM * FIT_ELEM_B)
    return hnsw_s / hnsw_walk_s(fit_ef, ASPLOS["hnsw_fit_m"], FIT_DIM, FIT_HNSW_ELEM_B, fit_vectors)


def cpu_hnsw_s(batch, ef_search, m, dim, elem_b, threads, fit_ef=ASPLOS["hnsw_fit_ef_text"],
               n_vectors=DPR_PASSAGES) -> np.ndarray:
    """One batch of HNSW queries over a graph of ``n_vectors``, ``threads`` queries at a time (s)."""
    waves = np.ceil(np.asarray(batch, dtype=np.float64) / np.maximum(threads, 1.0))
    return waves * hnsw_walk_s(ef_search, m, dim, elem_b, n_vectors) * hnsw_slowdown(fit_ef)
