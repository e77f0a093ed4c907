"""iks: IKS, a compute-enabled CXL memory expander for RAG retrieval (Quinn, Patel,
Alian, IEEE Micro 2025; digest shared/research/iks.md).

The request path of one retrieval batch, top-down:

1. The corpus (``corpus_gb``, ``embed_dim``-element vectors of ``elem_b`` bytes) is
   sharded over ``n_devices`` IKS; on each, page colouring puts it on ``enns_channels`` of
   the 64 LPDDR channels (8 packages x 8 channels, device.py, dram block).
2. The CPU offloads the batch's query vectors through one of three interfaces
   (ring buffer, CXL.mem, CXL.cache; offload.py, link block).
3. Each NMA streams its package's vectors once per 64 queries and scores them on its
   64 PEs; a pass is bounded by memory (channels x peak x eta) or compute (68 vectors per
   PE per D cycles), top-K insertion hidden under the MACs (enns.py).
4. The CPU merges the partial top-K lists (enns.py).
5. Multitenancy: a CPU tenant (Memcached) in IKS memory either owns the other channels
   (spatial) or shares all of them (temporal), which costs ENNS a share of channel time
   and the tenant queueing behind the stream (tenancy.py, dram block).
6. Baselines: the same batch by FAISS flat search or HNSW on the host CPU (baselines.py).
7. RAG: query embedding + retrieval + generation with FiD-T5 / Llama-3-8B / -70B on
   H100s (rag.py, LLM block); throughput, TTFT, cost per query and power (costs.py,
   cost and energy blocks).

Variants: ``retriever`` in {iks, cpu_enns, cpu_hnsw}.  Fitted constants: eta
(calibration.py, fitted to Table 1's solo search time) and the CPU baselines' three
efficiencies (baselines.py, fitted to the companion ASPLOS'25 paper's CPU measurements).
"""

from __future__ import annotations

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import GB, GIB, KB, MS_PER_S, NS_PER_S, S_PER_HOUR, US_PER_S
from models.blocks import cost, dram, link, workload
from models.iks import baselines, calibration, costs, device, enns, offload, rag, tenancy

RETRIEVERS = ("iks", "cpu_enns", "cpu_hnsw")
#: Link generations the article's x16 CXL link may run on (link block parameter group).
LINK_GENS = ("pcie5", "pcie6")
HOST_LINKS = ("cxl", "nma_uplinks")
PIPELININGS = ("pipelined", "serial")
#: Infeasible points (``run_full``'s reasons) and where IKS-side metrics do not apply.
NO_FIT = "corpus shard larger than the IKS ENNS channels hold (corpus / n_devices > enns_channels x channel capacity)"
NO_TENANT_CHANNEL = "spatial tenancy with every channel given to ENNS leaves the CPU tenant none"
TENANT_SATURATED = "the CPU tenant's traffic saturates its IKS channels"
NO_GEN_FIT = "the generator does not fit the GPUs' memory at this batch and passage count (LLM block)"
IKS_NA = "retriever cpu_enns / cpu_hnsw where IKS could not hold the corpus or serve the tenant"
#: Queries per million, for the cost per million queries.
QUERIES_PER_MQUERY = 1e6

# ----------------------------------------------------------------------------- system boundary
# (vector-search family: host server(s) + their DRAM + IKS devices; retrieval only)
#: A host server (cost block component host_server_2s: a dual-socket x86 server without DRAM
#: or data drives) and its power near full load (host_server_2s_power_w).
HOST_USD = cost.component_price("host_server_2s").value
HOST_W = float(workload.host_server(0.0)["power_w"])
#: Host DRAM price, $/GiB (cost block dram_ddr5) and power per GiB (dram_power_w_per_gib).
HOST_DRAM_USD_PER_GIB = cost.component_price("dram_ddr5").value
HOST_DRAM_W_PER_GIB = workload.DRAM_W_PER_GIB
#: Bytes per HNSW graph link: FAISS stores layer-0 neighbours as 32-bit ids, 2M per node.
HNSW_LINK_B = 4.0
#: Infeasible points of the family boundary.
NO_HOST_FIT = "corpus (and HNSW graph) larger than the host DRAM the servers can hold (hosts x host_max_dram_gib)"

#: CXL.mem bandwidth the CPU tenant's GET-heavy traffic can use, per (gen, lanes) of
#: offload.combo (link block, default flit mode of the generation).
TENANT_LINK_GBPS = np.array([float(link.cxl_mem_bw_gbps(g, w, None, device.TENANT_READ_FRAC))
                             for g in offload.GENS for w in offload.LANES])

# defaults of the Table 1 scenario (used for the eta fit as well)
DEFAULT_DIM = 768
DEFAULT_ELEM_B = 2
DEFAULT_TOP_K = 32
# Param default (eta_frac) and its source text: fitted at import, under the shipped calibration.
ETA_FIT = calibration.fit_eta(dim=DEFAULT_DIM, elem_b=DEFAULT_ELEM_B, top_k=DEFAULT_TOP_K,
                              interface=offload.INTERFACES.index("cxl_cache"), gen=5, lanes=16)
_ETA_SOURCE = (
    "fitted to Table 1's solo ENNS time (313 ms, 256 GB, 64 channels; the spatial column's 612 ms "
    f"alone would give {ETA_FIT['eta_per_row'][1]:.3f}); "
    "digest §7 ambiguity 5 (emulation platform; dram-block LPDDR5X stream fraction "
    f"{ETA_FIT['dram_stream_frac']:.3f})"
)


class Iks(Model):
    name = "iks"
    version = "1"
    summary = "IKS near-memory ENNS in a CXL expander: search time, offload tax, multitenancy, RAG QPS/TTFT, cost, power"
    source = "Quinn, Patel, Alian, 'Compute-Enabled CXL Memory Expansion for Efficient RAG', IEEE Micro 2025 (shared/research/iks.md)"
    variant_param = "retriever"
    params = (
        # --- what runs the retrieval, and where
        Param("retriever", "iks", "IKS vs the article's CPU baselines (ENNS and HNSW on FAISS, digest §1)",
              choices=RETRIEVERS),
        Param("corpus_gb", 0.0,
              "0: the vector-search workload's corpus_vectors x embed_dim x elem_b; the article's scenarios set it "
              "(Table 1: 256 GB, ~L3146; claims.yaml base)", bounds=(0.0, 1e7),
              doc="vector corpus size over all IKS devices; when > 0 it wins over corpus_vectors"),
        *knob_params("vector-search", "corpus_vectors"),
        Param("embed_dim", DEFAULT_DIM, "digest §7 ambiguity 1 default: D = 768 (DPR BERT-base); the vector-search "
              "workload's vector_dim", bounds=(16, 8192), integer=True),
        Param("elem_b", DEFAULT_ELEM_B, "digest §7 ambiguity 1 default: fp16 (68 x 2 B = 136 B/cycle matches 136 GB/s)",
              choices=(1, 2, 4)),
        Param("batch", 16, "batch 16 in Table 1 (inferred), Fig. 7 and Fig. 8 (~L3156, L3159)", choices=rag.BATCHES),
        Param("top_k", DEFAULT_TOP_K, "assumption: K = 32, the Recall@32 operating point of Fig. 3 (~L2967)",
              choices=rag.TOP_KS, doc="neighbours returned per query = passages given to the generator"),
        Param("n_devices", 1, "one IKS in Table 1; multi-IKS scale-out (digest §1); 0: the fewest IKS whose ENNS "
              "channels hold the corpus", bounds=(0, 4096), integer=True,
              doc="IKS devices the corpus is sharded over; 0 = as many as the corpus needs"),
        # --- IKS hardware
        Param("lpddr", "lpddr5x_8533", "IKS uses LPDDR5X packages (~L2952), 17 GB/s x16 channels (~L3103)",
              choices=device.TECHS),
        Param("enns_channels", 64, "Table 1 solo: all 64 channels to ENNS; spatial MT: half (~L3146)",
              bounds=(1, 64), integer=True, doc="channels per IKS holding the ENNS corpus"),
        Param("eta_frac", round(ETA_FIT["eta"], 4), _ETA_SOURCE, bounds=(0.05, 1.0),
              doc="achieved fraction of peak channel bandwidth while streaming the corpus"),
        Param("nma_clock_ghz", 1.0, "digest §7 ambiguity 2 default: 1 GHz", bounds=(0.2, 4.0)),
        Param("topk_cycles_per_score", 1.0, "assumption: a pipelined insertion unit takes one score per cycle",
              bounds=(0.25, 64.0), doc="top-K unit cycles per inserted score"),
        # --- CPU-IKS interface and link
        Param("interface", "cxl_cache", "IKS uses CXL.cache for its coherent registers and scratchpads (digest §1)",
              choices=offload.INTERFACES),
        Param("ring_path", "pcie",
              "pcie: a real device's DMA engine (link block); dsa_emulation: the article's measurement platform, "
              "whose ring buffer runs on the host's Intel DSA (~L3111, digest §1; offload.py, dsa.csv)",
              choices=offload.RING_PATHS, doc="what executes the ring buffer's DMA steps (interface ring_buffer only)"),
        *link.params(gens=LINK_GENS, lanes=offload.LANES, default_gen="pcie5", default_lanes=16, source={
            "link_gen": "x16 PCIe Gen5 / CXL link (~L3094)", "lanes": "x16 PCIe Gen5 link (~L3094)"}),
        Param("offload_ctx_kb", 0.0, "0: the batch's query vectors + a command line (Fig. 6 sweeps the context)",
              bounds=(0.0, 4096.0), doc="offload context size; 0 = derived from the batch"),
        # --- multitenancy
        Param("tenancy", "solo", "Table 1 columns (solo, spatial MT) and Fig. 7 (temporal MT)", choices=tenancy.MODES),
        Param("host_link", "cxl", "cxl: the modelled CXL.mem link; nma_uplinks: the emulation's 8 GB/s per NMA (~L3126)",
              choices=HOST_LINKS, doc="what caps the CPU tenant's traffic to IKS memory"),
        Param("tenant_bw_gbps", device.PACKAGES * device.NMA_UPLINK_GBPS,
              "assumption: Memcached drives its memory traffic up to the emulation's uplink throttle, 8 NMAs x 8 GB/s (~L3126)",
              bounds=(0.0, 512.0), doc="CPU tenant's memory traffic to IKS memory (capped by the host link)"),
        Param("tenant_accesses", 32, "assumption: ~32 dependent DRAM misses in IKS memory per Memcached request (hash bucket, item, key, value lines)",
              bounds=(1, 2000), integer=True),
        Param("tenant_solo_p50_us", 111.0, "Table 1 Memcached P50, solo run (~L3151); anchor", bounds=(1.0, 100000.0)),
        Param("tenant_solo_p99_us", 191.0, "Table 1 Memcached P99, solo run (~L3152); anchor", bounds=(1.0, 100000.0)),
        Param("enns_offered_qps", 32.0, "Fig. 7 fixes ENNS at 32 QPS (~L3156)", bounds=(0.01, 100000.0),
              doc="ENNS load offered next to the tenant (sets how often ENNS passes run)"),
        # --- CPU baselines
        Param("hnsw_ef", 4096, "Fig. 8 efSearch = 4096 (~L3159)", bounds=(16, 16384), integer=True,
              doc="HNSW search breadth (used unless hnsw_recall_target_frac is set)"),
        Param("hnsw_recall_target_frac", 0.0,
              "0: search at hnsw_ef; else the efSearch that reaches this Recall@K (baselines.hnsw_ef_for_recall), to "
              "compare HNSW and exact search at equal recall (digest §2 mechanism 8, §6 sweep 'HNSW efSearch (speed vs recall)')",
              bounds=(0.0, 0.999), doc="Recall@K HNSW must reach; 0 = use hnsw_ef"),
        Param("hnsw_m", 32, "HNSW M = 32 (~L3134)", bounds=(4, 128), integer=True),
        Param("hnsw_elem_b", 4, "FAISS IndexHNSWFlat stores float32 vectors", choices=(1, 2, 4)),
        Param("hnsw_docs_x", 0.0,
              "0: 1 / recall_frac of the HNSW search (0.95 at efSearch 4096 on the DPR corpus, Fig. 3, ~L2967): passages HNSW "
              "sends per exact-search passage for the same relevant ones",
              bounds=(0.0, 10.0), doc="passages the generator gets from HNSW per passage from exact search; 0 = 1 / recall"),
        Param("hnsw_fit_ef", int(baselines.ASPLOS["hnsw_fit_ef_text"]),
              "efSearch of the companion paper's ANNS-2 (2.5x faster than CPU ENNS) that the HNSW time is fitted to: "
              "10000 per ASPLOS'25 §3.2 (default: the section that states the 2.5x); 4096 if the article's Fig. 8 HNSW "
              "is ANNS-2; 2048 per ASPLOS Fig. 11's caption (baselines.py)",
              choices=tuple(int(baselines.ASPLOS[k]) for k in ("hnsw_fit_ef_text", "hnsw_fit_ef_micro", "hnsw_fit_ef_fig11")),
              doc="which reading of the companion paper's contradictory efSearch values the HNSW cost is fitted to"),
        Param("cpu_threads", baselines.HOST_CORES, "one thread per core of a 36-core Xeon Gold 6554S socket (Intel ARK), the article's emulation host",
              bounds=(1, 256), integer=True),
        # --- RAG pipeline
        Param("pipeline", "fid_t5", "Fig. 8 pipelines: FiD-T5, Llama-3-8B, Llama-3-70B (~L2967)", choices=rag.PIPELINES),
        Param("pipelining", "serial",
              "companion paper ASPLOS'25 §6.2: a batch is retrieved, then generated, before the next batch starts "
              "(settles digest §7 ambiguity 8, whose default was pipelined)",
              choices=PIPELININGS),
        # --- cost
        Param("nma_usd", costs.NMA_USD, "assumption: NMA die priced like an enterprise SSD controller (cost block)",
              bounds=(0.0, 5000.0)),
        Param("iks_amortize_years", 3.0, "assumption: 3-year server depreciation", bounds=(1.0, 10.0),
              doc="amortization of the IKS in cost_per_mquery_usd (the family TCO uses years)"),
        # --- vector-search system boundary (host servers + DRAM + IKS)
        Param("iks_per_host", 8, "assumption: a dual-socket server's ~160 PCIe 5.0 lanes take about 8 x16 CXL devices "
              "next to its NICs and boot drive", bounds=(1, 64), integer=True),
        Param("host_base_dram_gib", 128.0, "assumption: OS, the retrieval service and its query buffers, per host",
              bounds=(0.0, 8192.0)),
        *dram.params("host_", max_dram_gib=4096.0,
                     source="assumption: 2 sockets x 8 DDR5 channels x 2 DIMMs x 128 GiB RDIMMs",
                     bounds={"max_dram_gib": (64.0, 65536.0)},
                     doc={"max_dram_gib": "DRAM one host server holds (the CPU baselines keep the corpus there)"}),
    )
    metrics = (
        Metric("search_ms", "min", "ENNS batch on IKS: engine + top-K merge + offload tax", nan_means=IKS_NA),
        Metric("enns_qps", "max", "IKS ENNS queries per second (batch / search time)", nan_means=IKS_NA),
        Metric("memory_ms", None, "memory-bound time of one batch's passes", nan_means=IKS_NA),
        Metric("compute_ms", None, "compute-bound time of one batch's passes (incl. exposed top-K insertion)", nan_means=IKS_NA),
        Metric("enns_overhead_pct", "min", "search time over the same point run solo, minus 1", nan_means=IKS_NA),
        Metric("offload_us", "min", "offload tax of the interface"),
        Metric("context_kb", None, "context moved per offload (query vectors + command, or offload_ctx_kb)"),
        Metric("int_bw_gbps", "max", "peak internal bandwidth of one IKS"),
        Metric("ext_bw_gbps", None, "raw host link bandwidth per direction"),
        Metric("int_ext_bw_x", "max", "internal over external bandwidth"),
        Metric("tenant_p50_us", "min", "CPU tenant median latency", nan_means=IKS_NA),
        Metric("tenant_p99_us", "min", "CPU tenant P99 latency", nan_means=IKS_NA),
        Metric("tenant_rps_x", "max", "CPU tenant throughput relative to its solo run", nan_means=IKS_NA),
        Metric("tenant_util_frac", None, "CPU tenant's utilization of its channels", nan_means=IKS_NA),
        Metric("retrieval_ms", "min", "query embedding + retrieval of one batch with the chosen retriever"),
        Metric("gen_ms", "min", "generation of one batch: prefill + decode (LLM block; prefill_ms + decode_ms)"),
        Metric("ttft_ms", "min", "time to first token: ttft_retrieval_ms + prefill_ms"),
        Metric("ttft_retrieval_ms", "min", "retrieval part of the TTFT: query embedding + search of the batch"),
        Metric("prefill_ms", "min", "prefill part of the TTFT (mean over the batch's requests, waves included)"),
        Metric("decode_ms", "min", "generation after the first token: gen_ms - prefill_ms"),
        Metric("hnsw_ef_used", None, "efSearch the HNSW baseline runs at (hnsw_ef, or the one reaching hnsw_recall_target_frac)"),
        Metric("rag_qps", "max", "end-to-end RAG queries per second"),
        Metric("retrieval_share_frac", "min", "retrieval share of the per-batch pipeline time"),
        Metric("free_capacity_gb", "max", "IKS capacity left as ordinary CXL memory (0 stranded)", nan_means=IKS_NA),
        Metric("device_usd", "min", "bill of materials of one IKS"),
        Metric("rag_power_w", "min", "RAG system: GPUs + host socket + IKS devices at the operating point"),
        Metric("cost_per_mquery_usd", "min", "rented GPUs + amortized IKS per million RAG queries"),
        # vector-search family (retrieval only; work_per_s, capex_usd, power_w are added by the engine)
        Metric("query_latency_ms", "min", "retrieval latency of a query: its batch's search (offload + engine + merge, "
               "or the CPU search); no query embedding"),
        Metric("recall_frac", "max", "Recall@K against exact search: 1 for IKS and CPU ENNS; HNSW's from its efSearch and "
               "graph size (baselines.hnsw_recall)"),
        Metric("iks_count", None, "IKS devices the corpus is sharded over (0 for the CPU baselines)"),
        Metric("host_count", None, "host servers in the boundary"),
        Metric("host_dram_gib", None, "DRAM of all host servers"),
    )
    family = "vector-search"
    family_fixed = {"n_devices": 0}
    workload_map = {"vector_dim": "embed_dim"}
    boundary = ("retrieval system: host server(s) with their DRAM (sized to the corpus for the CPU baselines) "
                "plus the IKS devices; no GPUs, no query encoder")

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        tech = p.pick("lpddr", {k: i for i, k in enumerate(device.TECHS)})
        mode = p.pick("tenancy", {k: i for i, k in enumerate(tenancy.MODES)})
        gen = link.from_batch(p).gen  # PCIe generation number (5, 6)
        link_ix = offload.combo(gen, p.lanes)  # (generation, lanes) row of the link tables
        is_iks = p.is_("retriever", "iks")
        is_hnsw = p.is_("retriever", "cpu_hnsw")
        peak = device.tech_table()["peak_gbps"][tech]
        rsat = device.tech_table()["random_sat_gbps"][tech]

        place = _corpus_placement(p, mode)
        tenant_bw, share = _tenant_traffic(p, mode, link_ix, rsat)
        ctx_b, tax_s = _offload_tax(p, gen, link_ix)
        s = _enns_search(p, place, peak, share, tax_s)
        ten = _tenant_latency(p, mode, tech, rsat, tenant_bw, s["search_s"])
        tenant_ok = place["tenant_has_channels"] & (ten["util_frac"] < 1.0)
        cpu = _cpu_baselines(p, place["corpus_gb"], is_hnsw)
        search_any_s = np.where(is_iks, s["search_s"], np.where(is_hnsw, cpu["hnsw_s"], cpu["cpu_enns_s"]))
        pipe = _rag_pipeline(p, is_hnsw, cpu["hnsw_recall"], search_any_s)
        bill = _rag_cost_power(p, is_iks, place, s, pipe, search_any_s)
        system = _vector_search_system(p, is_iks, place, s, cpu, bill)

        search_s, gen_s, retrieval_s = s["search_s"], pipe["gen_s"], pipe["retrieval_s"]
        int_bw = device.CHANNELS * peak
        ext_bw = offload.RAW_GBPS[link_ix]
        fits = place["fits"]
        ok = np.where(fits & tenant_ok, 1.0, np.nan)
        iks_ok = np.where(is_iks, ok, 1.0)
        return {
            "infeasible": {NO_FIT: is_iks & ~fits, NO_HOST_FIT: ~cpu["host_fits"],
                           NO_TENANT_CHANNEL: is_iks & ~place["tenant_has_channels"],
                           TENANT_SATURATED: is_iks & ~tenant_ok, NO_GEN_FIT: np.isnan(gen_s)},
            "search_ms": search_s * MS_PER_S * ok,
            "enns_qps": p.batch / search_s * ok,
            "memory_ms": s["memory_s"] * MS_PER_S * ok,
            "compute_ms": s["compute_s"] * MS_PER_S * ok,
            "enns_overhead_pct": (search_s / s["solo_s"] - 1.0) * 100.0 * ok,
            "offload_us": tax_s * US_PER_S,
            "context_kb": ctx_b / KB,
            "int_bw_gbps": int_bw,
            "ext_bw_gbps": ext_bw,
            "int_ext_bw_x": int_bw / ext_bw,
            "tenant_p50_us": ten["p50_us"] * ok,
            "tenant_p99_us": ten["p99_us"] * ok,
            "tenant_rps_x": ten["rps_x"] * ok,
            "tenant_util_frac": ten["util_frac"] * ok,
            "retrieval_ms": retrieval_s * MS_PER_S * iks_ok,
            "gen_ms": gen_s * MS_PER_S,
            "ttft_ms": (retrieval_s + pipe["ttft_s"]) * MS_PER_S * iks_ok,
            "ttft_retrieval_ms": retrieval_s * MS_PER_S * iks_ok,
            "prefill_ms": pipe["ttft_s"] * MS_PER_S,
            "decode_ms": (gen_s - pipe["ttft_s"]) * MS_PER_S,
            "hnsw_ef_used": cpu["hnsw_ef"],
            "rag_qps": pipe["rag_qps"] * iks_ok,
            "retrieval_share_frac": retrieval_s / (retrieval_s + gen_s) * iks_ok,
            "free_capacity_gb": (place["n_dev"] * device.DEVICE_CAPACITY_GB - place["corpus_gb"]) * ok,
            "device_usd": bill["dev_usd"],
            "rag_power_w": bill["power_w"] * iks_ok,
            "cost_per_mquery_usd": bill["per_hour"] / (pipe["rag_qps"] * S_PER_HOUR) * QUERIES_PER_MQUERY * iks_ok,
            "work_per_s": p.batch / search_any_s * iks_ok,
            "capex_usd": system["capex"] * iks_ok,
            "power_w": system["power"] * iks_ok,
            "query_latency_ms": search_any_s * MS_PER_S * iks_ok,
            "recall_frac": np.where(is_hnsw, cpu["hnsw_recall"], 1.0),
            "iks_count": bill["n_iks"] * iks_ok,
            "host_count": system["hosts"] * iks_ok,
            "host_dram_gib": system["dram_gib"] * iks_ok,
        }


# ----------------------------------------------------------------------------- stages of evaluate
#: Named columns one stage hands to the next.
Cols = dict[str, np.ndarray]


def _corpus_placement(p: Batch, mode: np.ndarray) -> Cols:
    """1. Corpus placement: even shards over the IKS, each on the ENNS channels of its device."""
    # the article's corpus_gb wins when set; else the workload's vectors x dim x element size
    corpus_gb = np.where(p.corpus_gb > 0, p.corpus_gb, p.corpus_vectors * p.embed_dim * p.elem_b / GB)
    n_dev = np.where(p.n_devices > 0, p.n_devices,
                     np.maximum(1.0, np.ceil(corpus_gb / (p.enns_channels * device.CHANNEL_CAPACITY_GB) - 1e-9)))
    shard_gb = corpus_gb / n_dev
    fits = np.asarray(shard_gb <= p.enns_channels * device.CHANNEL_CAPACITY_GB)  # array: ~ is a logical not
    tenant_has_channels = np.asarray((mode != tenancy.SPATIAL) | (p.enns_channels < device.CHANNELS))
    return {"corpus_gb": corpus_gb, "n_dev": n_dev, "shard_gb": shard_gb, "fits": fits,
            "tenant_has_channels": tenant_has_channels}


def _tenant_traffic(p: Batch, mode: np.ndarray, link_ix: np.ndarray, rsat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """5a. The CPU tenant's traffic, capped by the host path, and the channel share it takes from ENNS."""
    link_cap = TENANT_LINK_GBPS[link_ix]
    host_cap = np.where(p.is_("host_link", "nma_uplinks"), device.PACKAGES * device.NMA_UPLINK_GBPS, link_cap)
    tenant_bw = np.minimum(p.tenant_bw_gbps, host_cap)
    return tenant_bw, tenancy.cotenant_share(mode, tenant_bw, rsat)


def _offload_tax(p: Batch, gen: np.ndarray, link_ix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2. Offload tax (link block): the batch's context bytes and the time to hand it over and read results."""
    iface = p.pick("interface", {k: i for i, k in enumerate(offload.INTERFACES)})
    nmas = enns.active_nmas(p.enns_channels)
    ctx_b = np.where(p.offload_ctx_kb > 0, p.offload_ctx_kb * KB, offload.context_b(p.batch, p.embed_dim, p.elem_b))
    res_b = offload.result_b(p.batch, p.top_k, nmas)
    ring_path = p.pick("ring_path", {k: i for i, k in enumerate(offload.RING_PATHS)})
    return ctx_b, offload.tax_ns(iface, ctx_b, res_b, gen, p.lanes, ring_path, link_ix) / NS_PER_S


def _enns_search(p: Batch, place: Cols, peak: np.ndarray, share: np.ndarray, tax_s: np.ndarray) -> Cols:
    """3-4. ENNS passes and the top-K merge, in this tenancy and solo."""
    s = enns.search_s(place["shard_gb"], p.embed_dim, p.elem_b, p.batch, p.top_k, p.enns_channels, peak, p.eta_frac,
                      share, p.nma_clock_ghz, p.topk_cycles_per_score, place["n_dev"])
    search_s = s["engine_s"] + s["merge_s"] + tax_s
    solo_engine_s = np.maximum(s["memory_s"] * (1.0 - share), s["compute_s"])
    solo_s = solo_engine_s + s["merge_s"] + tax_s
    return {**s, "search_s": search_s, "solo_s": solo_s}


def _tenant_latency(p: Batch, mode: np.ndarray, tech: np.ndarray, rsat: np.ndarray, tenant_bw: np.ndarray,
                    search_s: np.ndarray) -> Cols:
    """5b. The CPU tenant's latency while ENNS streams for its duty cycle."""
    duty = np.minimum(1.0, p.enns_offered_qps / p.batch * search_s)
    return tenancy.tenant_latency(mode, tech, p.enns_channels, tenant_bw, rsat, device.tech_table()["row_drain_ns"][tech],
                                  p.tenant_accesses, p.tenant_solo_p50_us, p.tenant_solo_p99_us, duty)


def _cpu_baselines(p: Batch, corpus_gb: np.ndarray, is_hnsw: np.ndarray) -> Cols:
    """6. CPU baselines: flat search and HNSW on host servers holding the corpus in DRAM."""
    # the corpus (and HNSW's float32 vectors + layer-0 links) in host DRAM, over as many host
    # servers as that DRAM needs; flat search scans each host's shard
    vectors = corpus_gb * GB / (p.embed_dim * p.elem_b)
    hnsw_gib = vectors * (p.embed_dim * p.hnsw_elem_b + 2.0 * p.hnsw_m * HNSW_LINK_B) / GIB
    cpu_need_gib = np.where(is_hnsw, hnsw_gib, corpus_gb * GB / GIB)
    usable_gib = p.host_max_dram_gib - p.host_base_dram_gib
    host_fits = np.asarray(usable_gib > 0)
    cpu_hosts = np.maximum(1.0, np.ceil(cpu_need_gib / np.maximum(usable_gib, 1e-9) - 1e-9))
    cpu_enns_s = baselines.cpu_enns_s(corpus_gb / cpu_hosts, p.embed_dim, p.elem_b, p.batch, p.cpu_threads)
    # HNSW: one graph per host shard; its breadth is given, or set by the recall to reach
    graph_vectors = vectors / cpu_hosts
    hnsw_ef = np.where(p.hnsw_recall_target_frac > 0, baselines.hnsw_ef_for_recall(p.hnsw_recall_target_frac, graph_vectors),
                       p.hnsw_ef)
    hnsw_recall = hnsw_s = np.nan  # read at HNSW points only: computed when the batch has some
    if np.any(is_hnsw):
        hnsw_recall = baselines.hnsw_recall(hnsw_ef, graph_vectors)
        hnsw_s = baselines.cpu_hnsw_s(p.batch, hnsw_ef, p.hnsw_m, p.embed_dim, p.hnsw_elem_b, p.cpu_threads,
                                      p.hnsw_fit_ef, graph_vectors)
    return {"cpu_need_gib": cpu_need_gib, "host_fits": host_fits, "cpu_hosts": cpu_hosts, "cpu_enns_s": cpu_enns_s,
            "hnsw_ef": hnsw_ef, "hnsw_recall": hnsw_recall, "hnsw_s": hnsw_s}


def _rag_pipeline(p: Batch, is_hnsw: np.ndarray, hnsw_recall: np.ndarray, search_any_s: np.ndarray) -> Cols:
    """7. RAG pipeline (LLM block tables): embedding + retrieval, then generation, serial or pipelined."""
    pipe = p.pick("pipeline", {k: i for i, k in enumerate(rag.PIPELINES)})
    docs_x = np.where(p.hnsw_docs_x > 0, p.hnsw_docs_x, 1.0 / np.maximum(hnsw_recall, 1e-3))
    k_docs = np.where(is_hnsw, p.top_k * docs_x, p.top_k)
    g = rag.lookup(pipe, p.batch, k_docs)
    retrieval_s = g["embed_s"] + search_any_s
    gen_s = g["gen_s"]
    serial = p.is_("pipelining", "serial")
    stage_s = np.where(serial, retrieval_s + gen_s, np.maximum(retrieval_s, gen_s))
    rag_qps = p.batch / stage_s
    return {"pipe": pipe, "retrieval_s": retrieval_s, "gen_s": gen_s, "ttft_s": g["ttft_s"], "rag_qps": rag_qps,
            "batches_per_s": rag_qps / p.batch}


def _rag_cost_power(p: Batch, is_iks: np.ndarray, place: Cols, s: Cols, pipe: Cols, search_any_s: np.ndarray) -> Cols:
    """RAG cost and power: GPUs, the IKS devices and the host CPU at their duty cycles (costs.py)."""
    batches_per_s = pipe["batches_per_s"]
    n_iks = np.where(is_iks, place["n_dev"], 0.0)
    passes = np.ceil(p.batch / device.QUERIES_PER_PASS)
    stream_gbps = batches_per_s * passes * place["shard_gb"]
    iks_duty = np.minimum(1.0, batches_per_s * s["engine_s"])
    dev_w = costs.device_power_w(stream_gbps, iks_duty)
    dev_usd = costs.device_capex_usd(p.nma_usd)
    gpus = rag.gpus(pipe["pipe"])
    per_hour = costs.hourly_usd(gpus, n_iks, dev_usd, dev_w, p.iks_amortize_years)
    gen_duty = np.minimum(1.0, batches_per_s * pipe["gen_s"])
    cpu_duty = np.where(is_iks, 0.0, np.minimum(1.0, batches_per_s * search_any_s))
    power_w = (gpus * (costs.GPU_IDLE_W + (costs.GPU_BUSY_W - costs.GPU_IDLE_W) * gen_duty)
               + costs.CPU_IDLE_W + (costs.CPU_BUSY_W - costs.CPU_IDLE_W) * cpu_duty + n_iks * dev_w)
    return {"n_iks": n_iks, "passes": passes, "dev_usd": dev_usd, "per_hour": per_hour, "power_w": power_w}


def _vector_search_system(p: Batch, is_iks: np.ndarray, place: Cols, s: Cols, cpu: Cols, bill: Cols) -> Cols:
    """Vector-search boundary: retrieval batches back to back on host server(s) + DRAM + IKS."""
    n_iks, search_s = bill["n_iks"], s["search_s"]
    ret_passes_gbps = bill["passes"] * place["shard_gb"] / search_s
    ret_dev_w = costs.device_power_w(ret_passes_gbps, s["engine_s"] / search_s)
    hosts = np.where(is_iks, np.ceil(n_iks / p.iks_per_host - 1e-9), cpu["cpu_hosts"])
    dram_gib = hosts * p.host_base_dram_gib + np.where(is_iks, 0.0, cpu["cpu_need_gib"])
    idle = costs.CPU_IDLE_W / costs.CPU_BUSY_W
    host_duty = np.where(is_iks, s["merge_s"] / search_s, 1.0)
    capex = hosts * HOST_USD + dram_gib * HOST_DRAM_USD_PER_GIB + n_iks * bill["dev_usd"]
    power = (hosts * HOST_W * (idle + (1.0 - idle) * host_duty) + dram_gib * HOST_DRAM_W_PER_GIB
             + n_iks * ret_dev_w)
    return {"hosts": hosts, "dram_gib": dram_gib, "capex": capex, "power": power}
