"""dockerssd-llm: LLM inference on a pool of hosts or of DockerSSDs (article Figs. 5-6).

Four pools of N nodes (16-128, L1062), one per configuration (L1066-1068):

    h_nocache   N hosts, 64 GB DRAM each, no KV cache: every token recomputes the
                context (O(n^2) per sequence); everything must fit in DRAM
    h_cache     the same hosts plus a 400-GB SSD each as Linux swap that holds the KV
                cache: every KV page read pays a page fault (swap tier of the LLM block)
    d_nocache   N DockerSSDs (2.2-GHz cores, 2 GB DRAM, 400 GB of flash), no KV cache;
                weights spill from DRAM to flash
    d_cache     the DockerSSDs keep the KV cache on their own flash, read "as local
                memory" (L1088): the flash back end's bandwidth, no page faults

Per point: a decode step at context ``seq_len`` (one new token for each of the ``batch``
sequences) for every (TP, PP, DP) split of the pool, the fastest feasible split kept
(``pool.step``; the article's parallelism search, L1072).  Compute is the node's cores x
flops per cycle x clock, so the DockerSSD's compute is the host's x 2.2/3.8 (digest
ambiguity 2).  Memory tiers: host DRAM (dram block), swap (flash block behind the host's
link, page-fault cost of the LLM block's swap tier), DockerSSD flash (flash block,
saturation bandwidth of large reads).  Cost through the cost block, energy through the
energy block.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import BITS_PER_BYTE, GB, HOURS_PER_YEAR, J_PER_PJ, MS_PER_S, S_PER_HOUR, US_PER_S
from models.blocks import calibration, cost, link
from models.blocks.calibration import per_calibration
from models.blocks.llm import MODELS
from models.dockerssd import hardware as hw
from models.dockerssd import pool

CONFIGS = ("h_nocache", "h_cache", "d_nocache", "d_cache")
LLMS = tuple(r["llm"] for r in hw.llm_table())
#: ``llm`` choice that sizes the model from the llm-serve workload's ``model_params_b``.
BY_PARAMS = "by_params"
NODES = (16, 32, 64, 128)
KV_PLACEMENTS = ("second_tier", "fastest_first")
SWAP_LINKS = ("pcie3", "pcie4", "pcie5")

#: fp16 weights and KV cache (digest ambiguity 7).
BYTES_PER_ELEM = 2.0
#: Request size the flash back end streams weights and KV pages in when it serves them as
#: memory.  Assumption: large sequential reads (1 MiB), so the dies, not the commands, bound it.
FLASH_STREAM_B = 1 << 20
#: Swap page, bytes: Linux swaps 4-KiB pages (the LLM block's swap tier default).
SWAP_PAGE_B = 4096.0
#: Lanes of the H-Cache swap SSD's link.  Assumption: a x4 NVMe SSD.
SWAP_LANES = 4
TOKENS_PER_MTOKEN = 1e6


def _shape_columns() -> dict[str, np.ndarray]:
    """Per-LLM shape constants from the LLM block, in ``LLMS`` order."""
    rows = []
    for r in hw.llm_table():
        m = MODELS[r["block_model"]]
        if int(r["gated_mlp"]):
            m = m.with_(gated_mlp=True)
        rows.append({"layers": m.layers, "hidden": m.hidden, "ffn": m.ffn, "ffn_in": m.ffn * (2 if m.gated_mlp else 1),
                     "heads": m.heads, "kv_heads": m.kv_heads, "head_dim": m.head_dim, "vocab": m.vocab,
                     "params": m.params, "kv_bytes_per_token": m.kv_bytes_per_token(BYTES_PER_ELEM)})
    return {k: np.asarray([row[k] for row in rows], dtype=np.float64) for k in rows[0]}


SHAPES = _shape_columns()
#: Parameters outside the layers (embedding + LM head) and per layer, of each LLM.
_EMB_PARAMS = SHAPES["vocab"] * SHAPES["hidden"]
_LAYER_PARAMS = (SHAPES["params"] - _EMB_PARAMS) / SHAPES["layers"]


def sized_shape(code: Any, params_b: Any) -> dict[str, np.ndarray]:
    """Shape columns per point: the article's LLM of code ``code``, or (code ``len(LLMS)``,
    ``llm = by_params``) the LLM nearest in size to ``params_b`` (log scale) with its layer
    count scaled so that the parameters come to ``params_b`` (at least one layer).  Also
    ``params``: the parameters of the shape used."""
    code = np.asarray(code)
    target = np.asarray(params_b, dtype=np.float64) * 1e9
    near = np.argmin(np.abs(np.log(SHAPES["params"])[None, :] - np.log(np.atleast_1d(target))[:, None]), axis=1)
    near = near.reshape(np.shape(target))
    by = code == len(LLMS)
    idx = np.where(by, near, np.minimum(code, len(LLMS) - 1))
    out = {k: v[idx] for k, v in SHAPES.items()}
    layers = np.maximum(1.0, np.round((target - _EMB_PARAMS[near]) / _LAYER_PARAMS[near]))
    out["layers"] = np.where(by, layers, out["layers"])
    out["params"] = np.where(by, _EMB_PARAMS[near] + layers * _LAYER_PARAMS[near], out["params"])
    return out


def swap_bw_gbps(dev_gbps: Any, fault_us: Any, page_b: float = SWAP_PAGE_B) -> np.ndarray:
    """Effective bandwidth of OS swap: every page pays a fault on top of its transfer (the LLM
    block's ``MemoryTier.effective_bandwidth_Bps``, written for columns)."""
    dev = np.asarray(dev_gbps, dtype=np.float64) * GB
    return page_b / (np.asarray(fault_us, dtype=np.float64) / US_PER_S + page_b / dev) / GB


#: TP-only layouts (PP = 1): what the search would have without pipeline parallelism.
TP_ONLY = tuple((t, 1) for t in pool.POW2)
#: The TP-only layouts among the search's candidates.
TP_ONLY_MASK = (pool.PP_CAND == 1)[None, :]


def pipeline_gain(m: dict[str, np.ndarray], st: dict[str, np.ndarray], ctx: Any, kv_cache: Any,
                  **hw_args: Any) -> dict[str, np.ndarray]:
    """Why pipeline parallelism wins across pool nodes (paper L1072-1082: the parallelism
    search; digest section 3: megatron-1T's ~2 TB of weights need >= 32 hosts of 64 GB).

    TP divides a layer's weights, KV cache and activations over the nodes of a replica, but
    only up to the head count (TP must divide it), its KV stops shrinking at the KV-head count
    (``pool.step``: K/V columns per device >= one head), its h-wide activations are held on every
    rank and it pays two all-reduces per layer; PP divides whole layers, with no such cap, for
    the price of the pipeline bubble (``b + PP - 1`` slots) and one message per stage boundary.
    So where the KV cache, weights and activations of the fastest TP-only layout exceed a
    node's tiers, only PP makes the pool fit (or keeps a spill off the slow tier).  Returns
    ``pp_gain_x`` = best TP-only step / best step (1: PP buys nothing; NaN: no TP-only layout
    fits) and ``tp_only_fits``."""
    hw = {k: v for k, v in hw_args.items() if k not in ("relax", "bytes_per_elem")}
    lay = pool.layouts(pool.columns(m, ctx=ctx, kv_cache=kv_cache, **hw), hw_args.get("bytes_per_elem", BYTES_PER_ELEM),
                       (pool.TP_CAND, pool.PP_CAND))
    return pipeline_gain_of(lay, st)


def pipeline_gain_of(lay: dict[str, Any], st: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """:func:`pipeline_gain` from the layouts ``pool.layouts`` already evaluated (the TP-only
    ones are among them)."""
    only = pool.best(lay, False, keep=TP_ONLY_MASK, time_only=True)
    return {"pp_gain_x": only["step_s"] / st["step_s"], "tp_only_fits": np.isfinite(only["step_s"]).astype(np.float64)}


def pool_kv(m: dict[str, np.ndarray], st: dict[str, np.ndarray], *, nodes: Any, batch: Any, ctx: Any, kv_cache: Any,
            fast_cap_b: Any, slow_cap_b: Any, bytes_per_elem: float) -> dict[str, np.ndarray]:
    """Pool-level KV cache and idle replicas of the chosen layout (paper L1074: one sequence per
    node; L1100: the cache grows linearly with batch; digest M6: KV(t) = 2 L n_kv d b t B).

    ``kv_pool_gb``: the cache the whole pool holds, every sequence's context on every layer, K
    and V, counting the copies TP keeps when it splits beyond the KV heads (``max(kv_heads,
    TP)``); ``kv_pool_capacity_gb``: what the nodes' tiers leave for it after the layout's
    weights and activations, summed over the nodes that hold a sequence.  A replica (TP x PP
    nodes) gets ``ceil(batch / DP)`` sequences; when the batch is smaller than DP, ``DP -
    batch`` replicas get none and idle (``idle_replica_count``, ``idle_node_frac``): the search
    still counts their power and cost, it just has no work for them."""
    tp, pp, dp = st["tp"], st["pp"], st["dp"]
    per_tok_layer = 2.0 * np.maximum(m["kv_heads"], tp) * m["head_dim"] * bytes_per_elem
    kv_pool = np.where(np.asarray(kv_cache) > 0.5, batch * ctx * m["layers"] * per_tok_layer, 0.0)
    busy = np.minimum(dp, batch)
    left = np.maximum(np.asarray(fast_cap_b) + np.asarray(slow_cap_b) - st["weights_b"] - st["act_b"], 0.0)
    return {"kv_pool_gb": kv_pool / 1e9, "kv_pool_capacity_gb": busy * tp * pp * left / 1e9,
            "replica_count": dp, "idle_replica_count": dp - busy, "idle_node_frac": (dp - busy) / dp}


def decode_and_prefill(m: dict[str, np.ndarray], n: int, *, ctx: Any, prompt: Any, kv_cache: Any, relax: Any,
                       **hw_args: Any) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The best decode step at ``ctx`` (``pool.step``), the best prefill of ``prompt`` tokens (a
    step without a KV cache) and :func:`pipeline_gain` of the decode, for ``n`` points: one
    layout search over the points stacked twice (decode rows, then prefill rows)."""
    def twice(x: Any, second: Any = None) -> np.ndarray:
        a = np.asarray(x, dtype=np.float64)
        if second is None and a.size == 1:
            return a
        b = a if second is None else np.asarray(second, dtype=np.float64)
        return np.concatenate((np.broadcast_to(a, (n,)), np.broadcast_to(b, (n,))))

    cols = pool.columns({k: twice(v) for k, v in m.items()}, ctx=twice(ctx, prompt), kv_cache=twice(kv_cache, 0.0),
                        **{k: twice(v) for k, v in hw_args.items()})
    lay = pool.layouts(cols, BYTES_PER_ELEM, (pool.TP_CAND, pool.PP_CAND))
    both = pool.best(lay, twice(relax).reshape(-1, 1) > 0.5)
    st = {k: v[:n] for k, v in both.items()}
    pre = {k: v[n:] for k, v in both.items()}
    only = pool.best(lay, False, keep=TP_ONLY_MASK, time_only=True)["step_s"][:n]
    pipe = {"pp_gain_x": only / st["step_s"], "tp_only_fits": np.isfinite(only).astype(np.float64)}
    return st, pre, pipe


#: Infeasible points (``run_full``'s reasons): with enforce_capacity, no TP x PP layout holds
#: the weights, KV cache and activations in the nodes' DRAM and slow tier.
NO_LAYOUT_FITS = "no TP x PP layout fits the nodes' memory tiers (weights + KV cache + activations)"
NO_PREFILL_FITS = "no TP x PP layout fits the prompt's prefill (weights + activations of the whole prompt)"


class DockerSsdLlm(Model):
    name = "dockerssd-llm"
    version = "1"
    summary = "LLM inference on host pools (with/without swap KV cache) vs DockerSSD pools: per-token time, BOM, energy"
    source = "DockerSSD, IEEE Micro 2025 (DOI 10.1109/MM.2025.3574261), Figs. 5-6; research/dockerssd.md"
    variant_param = "config"
    #: the parallelism search evaluates 36 (TP, PP) candidates per point
    bench_points = 16384
    #: points per evaluation slice: (points x 72 layouts) temporaries stay cache-sized (measured best on a 512-KB L2)
    eval_chunk = 1024
    params = (
        Param("config", "d_cache", "the four configurations of Figs. 5-6 (L1066-1068)", choices=CONFIGS),
        Param("llm", BY_PARAMS,
              "by_params: the llm-serve workload's model_params_b (the study's LLM nearest in size, layers scaled to "
              "it); or one of the eight LLMs of the study (L1062) by name, shapes from the LLM block (the claims name them)",
              choices=(*LLMS, BY_PARAMS)),
        *knob_params("llm-serve", "model_params_b", "output_tokens"),
        Param("nodes", 16, "16-128 hosts or DockerSSDs per pool (L1062)", choices=NODES),
        Param("seq_len", 32768.0, "sequence length 32K in Fig. 5 (L1074); swept in Fig. 6a/b; the llm-serve workload's "
              "context_tokens", bounds=(1.0, 1048576.0),
              doc="context tokens at the decode step (cached tokens, or recomputed ones without a cache)"),
        Param("batch", 16.0, "one sequence per node (L1074) at the default 16 nodes; 1-512 in Fig. 6c/d (L1100)",
              bounds=(1.0, 4096.0), integer=True, doc="sequences decoded together by the whole pool"),
        Param("host_cores", 6, "assumption: as many cores as the DockerSSD, so clocks are the only compute gap (digest ambiguity 2)",
              bounds=(1, 128), integer=True),
        Param("host_clock_ghz", hw.HOST_CLOCK_GHZ, "3.8-GHz host CPU (L1007, L1094)", bounds=(1.0, 6.0)),
        Param("dev_cores", hw.DEV_CORES, "six RISC-V cores (L1007; digest ambiguity 13)", bounds=(1, 64), integer=True),
        Param("dev_clock_ghz", hw.DEV_CLOCK_GHZ, "2.2-GHz SSD processor (L1009, L1094)", bounds=(0.5, 5.0)),
        Param("flops_per_cycle", 16.0,
              "assumption: fp16 FMA throughput of one core per cycle, the same for host and device (digest ambiguity 2): "
              "a 256-bit FMA pipe (8 lanes x 2 flops)", bounds=(1.0, 1024.0)),
        Param("host_dram_gb", hw.HOST_DRAM_GB, "64 GB DRAM per host (L1066)", bounds=(8.0, 2048.0)),
        Param("host_dram_gbps", hw.DDR4_CHANNEL_GBPS * hw.HOST_DRAM_CHANNELS,
              "dram block: DDR4-3200 stream bandwidth x 2 channels (assumption: two 32-GB DIMMs)", bounds=(1.0, 1000.0)),
        Param("swap_ssd_gb", hw.SSD_CAPACITY_GB, "400-GB SSD as Linux swap per host (L1066)", bounds=(0.0, 16000.0)),
        Param("swap_link", "pcie4", "assumption: a PCIe 4.0 x4 NVMe SSD as the swap device", choices=SWAP_LINKS),
        Param("swap_fault_us", 2.34,
              "fitted: per-page cost of a Linux swap-in beyond the transfer, fitted so that D-Cache/H-Cache at long "
              "sequences meets the article's ~9.5x asymptote (L1094; models/dockerssd/calibration.py)", bounds=(0.0, 1000.0),
              doc="page-fault time per 4-KiB swap page, the swap tier's page_fault_s"),
        Param("dev_dram_gb", hw.DEV_DRAM_GB, "2 GB DRAM per DockerSSD (L1009)", bounds=(0.25, 256.0)),
        Param("dev_dram_gbps", hw.DEV_DRAM_GBPS, "dram block: DDR4-3200 stream bandwidth of a x32 interface (assumption)",
              bounds=(1.0, 1000.0)),
        Param("dev_flash_gb", hw.SSD_CAPACITY_GB, "400 GB of storage per DockerSSD (L1068)", bounds=(16.0, 16000.0)),
        Param("flash_channels", hw.FLASH_CHANNELS, "12 flash channels (L1009)", bounds=(1, 64), integer=True),
        Param("flash_chips_per_channel", hw.FLASH_CHIPS_PER_CHANNEL, "48 MLC packages over 12 channels (L1009)",
              bounds=(1, 32), integer=True),
        Param("flash_channel_gbps", hw.FLASH_CHANNEL_GBPS, "flash block dockerssd_mlc (assumption: 1.2 GB/s channels)",
              bounds=(0.1, 10.0)),
        Param("net_gbps", float(link.raw_bw_gbps("pcie4", 4)),
              "assumption: the same effective bandwidth for hosts and DockerSSDs (digest ambiguity 4): a PCIe 4.0 x4 port "
              "(link block)", bounds=(0.1, 1000.0)),
        Param("net_latency_us", 5.0, "assumption: one message through a switch plus software, a few us (link block RDMA/PCIe class)",
              bounds=(0.0, 1000.0)),
        Param("kv_placement", "second_tier",
              "the article keeps the KV cache on the swap SSD (H-Cache) or on flash (D-Cache) (L1066-1068)", choices=KV_PLACEMENTS),
        Param("enforce_capacity", True,
              "assumption: a point where no layout fits the nodes' tiers is infeasible (NaN); False times the fastest "
              "layout with its overflow at the slow tier's bandwidth",
              choices=(True, False)),
        Param("lifetime_years", 5.0, "assumption: 5-year server depreciation", bounds=(1.0, 10.0)),
    )
    metrics = (
        Metric("time_per_token_s", "min", "decode step at the context: every sequence gets its next token"),
        Metric("tokens_per_s", "max", "batch / time per token"),
        Metric("compute_s", None, "compute part of the step (critical path)"),
        Metric("memory_s", None, "memory part of the step (tier transfers)"),
        Metric("comm_s", None, "TP all-reduces and PP messages of the step"),
        Metric("tp_count", None, "tensor-parallel degree of the best split"),
        Metric("pp_count", None, "pipeline-parallel degree of the best split"),
        Metric("dp_count", None, "data-parallel degree of the best split"),
        Metric("microbatch_count", None, "1: a replica's sequences go through the stages together; b: one per microbatch, pipelined"),
        Metric("kv_per_node_gb", None, "KV cache held by one node"),
        Metric("mem_per_node_gb", None, "weights + KV + activations held by one node"),
        Metric("fits_frac", None, "1 when the best layout fits the node's tiers, 0 when it does not"),
        Metric("slow_tier_frac", None, "share of a node's bytes per step read from the slow tier (swap / flash)"),
        Metric("pool_capex_usd", "min", "bill of materials of the pool (cost block)"),
        Metric("pool_power_w", "min", "pool power while decoding"),
        Metric("energy_per_token_j", "min", "pool energy per generated token"),
        Metric("cost_per_mtoken_usd", "min", "TCO (amortized capex + energy) per million tokens at full load"),
        # llm-serve family (work_per_s, capex_usd, power_w are added by the engine)
        Metric("ttft_ms", "min", "time to first token: the batch's prefill of the prompt (seq_len - output_tokens tokens)"),
        Metric("llm_params_b", None, "parameters of the LLM shape evaluated, billions"),
        Metric("pp_gain_x", None, "best TP-only (PP = 1) step / best step: what pipeline parallelism buys (pipeline_gain)",
               nan_means="no TP-only layout fits the nodes' memory tiers: only pipeline parallelism fits"),
        Metric("tp_only_fits", None, "1 when some TP-only (PP = 1) layout fits the nodes' tiers, else 0"),
        Metric("kv_pool_gb", None, "KV cache held by the whole pool (every sequence, layer, K and V; TP copies included)"),
        Metric("kv_pool_capacity_gb", None, "tier capacity the busy nodes leave for the KV cache after weights and activations"),
        Metric("replica_count", None, "data-parallel replicas of the chosen layout (= dp_count)"),
        Metric("idle_replica_count", None, "replicas without a sequence (batch < DP): powered, no work"),
        Metric("idle_node_frac", None, "share of the pool's nodes in idle replicas"),
    )
    family = "llm-serve"
    workload_map = {"context_tokens": "seq_len"}
    boundary = ("the pool: its hosts (DRAM, swap SSDs) or its DockerSSDs with their cores and DRAM, the hosts that "
                "house them and the PCIe switches between them (pool_capex_usd / pool_power_w)")

    def evaluate(self, p: Batch) -> dict[str, Any]:
        m = sized_shape(p.llm, p.model_params_b)
        llm_params = m.pop("params")
        is_dev, cache, host_cache = _config_flags(p)
        fast_cap, fast_gbps, slow_cap, slow_gbps = _memory_tiers(p, is_dev, host_cache)
        hw_args = _hw_args(p, _flops_per_s(p, is_dev), fast_cap, fast_gbps, slow_cap, slow_gbps)

        # --- decode: one token step of the pool at the context, its pipelining and KV spread;
        # prefill (llm-serve): the prompt's tokens all at once, as a step without a KV cache
        # computes its context (writing the cache it leaves is not timed)
        prompt = np.maximum(p.seq_len - p.output_tokens, 1.0)
        st, pre, pipe = decode_and_prefill(m, p.n, ctx=p.seq_len, prompt=prompt, kv_cache=cache, **hw_args)
        t = st["step_s"]
        kv = pool_kv(m, st, nodes=p.nodes, batch=p.batch, ctx=p.seq_len, kv_cache=cache, fast_cap_b=fast_cap,
                     slow_cap_b=slow_cap, bytes_per_elem=BYTES_PER_ELEM)
        t_pre = pre["step_s"]

        capex = _pool_capex_usd(p, is_dev, host_cache)
        step_j, pre_j = _pool_energy_j(p, is_dev, host_cache, st, pre)
        power = step_j / t
        # a request: its prefill (first token), then output_tokens - 1 decode steps at the context
        decodes = p.output_tokens - 1.0
        request_s = t_pre + decodes * t
        energy_tok = step_j / p.batch
        tokens_per_s = p.batch / t
        tco_year = cost.tco_usd_per_year(capex, np.nan_to_num(power), p.lifetime_years)
        tokens_year = tokens_per_s * S_PER_HOUR * HOURS_PER_YEAR
        usd_per_mtok = tco_year / tokens_year * TOKENS_PER_MTOKEN

        total_b = st["fast_traffic_b"] + st["slow_traffic_b"]
        return {
            "infeasible": {NO_LAYOUT_FITS: np.isnan(t), NO_PREFILL_FITS: np.isnan(t_pre)},  # pool.step: NaN where no layout is taken
            "time_per_token_s": t,
            "tokens_per_s": tokens_per_s,
            "compute_s": st["compute_s"],
            "memory_s": st["memory_s"],
            "comm_s": st["comm_s"],
            "tp_count": st["tp"], "pp_count": st["pp"], "dp_count": st["dp"], "microbatch_count": st["microbatches"],
            "kv_per_node_gb": st["kv_b"] / GB,
            "mem_per_node_gb": st["need_b"] / GB,
            "fits_frac": np.where(np.isfinite(t), st["feasible"], np.nan),
            "slow_tier_frac": st["slow_traffic_b"] / total_b,
            "pool_capex_usd": capex,
            "pool_power_w": power,
            "energy_per_token_j": energy_tok,
            "cost_per_mtoken_usd": usd_per_mtok,
            "ttft_ms": t_pre * MS_PER_S,
            "llm_params_b": llm_params / 1e9,
            **pipe, **kv,
            "work_per_s": p.batch * p.output_tokens / request_s,
            "capex_usd": capex,
            "power_w": (pre_j + decodes * step_j) / request_s,
        }


def _config_flags(p: Batch) -> tuple[Any, Any, Any]:
    """Which configuration each point runs: on the DockerSSDs (D-*), with a KV cache, with a host swap SSD (H-Cache)."""
    is_dev = p.is_("config", "d_nocache") | p.is_("config", "d_cache")
    cache = p.is_("config", "h_cache") | p.is_("config", "d_cache")
    host_cache = p.is_("config", "h_cache")
    return is_dev, cache, host_cache


def _flops_per_s(p: Batch, is_dev: Any) -> np.ndarray:
    """Compute of a node: cores x flops/cycle x clock (2.2 vs 3.8 GHz, L1094)."""
    f_host = p.host_cores * p.flops_per_cycle * p.host_clock_ghz * hw.HZ_PER_GHZ
    f_dev = p.dev_cores * p.flops_per_cycle * p.dev_clock_ghz * hw.HZ_PER_GHZ
    return np.where(is_dev, f_dev, f_host)


#: Calls of at most this many points use the memo of :func:`flash_stream_gbps`.
FLASH_MEMO_POINTS = 16
#: Geometries the memo keeps before it starts over.
FLASH_MEMO_MAX = 4096
_FLASH_MEMO: dict[tuple[Any, ...], float] = {}


def flash_stream_gbps(channels: Any, chips_per_channel: Any, channel_gbps: Any) -> np.ndarray:
    """Saturation bandwidth (GB/s) of the DockerSSD's flash back end streaming large reads
    (flash block: an iterative closed-network solve).  Calls of a few points (a sequential
    sampler's, one at a time) are memoized per geometry and calibration in force; the
    block's value for a point does not depend on the other points of its call, so the memo
    changes no result."""
    cols = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (channels, chips_per_channel, channel_gbps)))
    if cols[0].size > FLASH_MEMO_POINTS:
        return hw.flash_bw_gbps(hw.flash_arrays(*cols), FLASH_STREAM_B, 1.0, True)
    state = calibration.state()
    keys = [(state, *map(float, k)) for k in zip(*(c.ravel() for c in cols))]
    missing = [k for k in dict.fromkeys(keys) if k not in _FLASH_MEMO]
    if missing:
        if len(_FLASH_MEMO) + len(missing) > FLASH_MEMO_MAX:
            _FLASH_MEMO.clear()
        geo = [np.array([k[i] for k in missing]) for i in (1, 2, 3)]
        vals = np.atleast_1d(hw.flash_bw_gbps(hw.flash_arrays(*geo), FLASH_STREAM_B, 1.0, True))
        _FLASH_MEMO.update(zip(missing, map(float, vals)))
    return np.array([_FLASH_MEMO[k] for k in keys], dtype=np.float64).reshape(cols[0].shape)


def _memory_tiers(p: Batch, is_dev: Any, host_cache: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Memory tiers of a node, capacity and bandwidth: fast = DRAM; slow = swap SSD (H-Cache) or flash (D-*)."""
    flash_gbps = flash_stream_gbps(p.flash_channels, p.flash_chips_per_channel, p.flash_channel_gbps)
    swap_dev_gbps = np.minimum(_swap_flash_gbps(),
                               p.pick("swap_link", {g: _LINK_GBPS[g] for g in SWAP_LINKS}))
    swap_gbps = swap_bw_gbps(swap_dev_gbps, p.swap_fault_us)
    fast_cap = np.where(is_dev, p.dev_dram_gb, p.host_dram_gb) * GB
    fast_gbps = np.where(is_dev, p.dev_dram_gbps, p.host_dram_gbps)
    slow_cap = np.where(is_dev, p.dev_flash_gb, np.where(host_cache, p.swap_ssd_gb, 0.0)) * GB
    slow_gbps = np.where(is_dev, flash_gbps, swap_gbps)
    return fast_cap, fast_gbps, slow_cap, slow_gbps


def _hw_args(p: Batch, flops_per_s: np.ndarray, fast_cap: np.ndarray, fast_gbps: np.ndarray, slow_cap: np.ndarray,
             slow_gbps: np.ndarray) -> dict[str, Any]:
    """The pool's hardware as pool.step takes it: nodes, batch, compute, tiers, network, KV placement, relax."""
    return dict(nodes=p.nodes, batch=p.batch, flops_per_s=flops_per_s,
                fast_cap_b=fast_cap, fast_bps=fast_gbps * GB, slow_cap_b=slow_cap, slow_bps=slow_gbps * GB,
                kv_second_tier=p.is_("kv_placement", "second_tier"), net_bps=p.net_gbps * GB,
                net_latency_s=p.net_latency_us / US_PER_S,
                relax=p.is_("enforce_capacity", False))


def _pool_capex_usd(p: Batch, is_dev: Any, host_cache: Any) -> np.ndarray:
    """Bill of materials of the pool (cost block prices; hw.* assumptions)."""
    n = p.nodes
    host = hw.host_usd(p.host_dram_gb)
    swap_ssd = hw.ssd_usd(p.swap_ssd_gb, hw.DEV_DRAM_GB)
    dssd = hw.ssd_usd(p.dev_flash_gb, p.dev_dram_gb, p.dev_cores)
    d_pool = (n * dssd + np.ceil(n / hw.SSDS_PER_SWITCH) * hw.SWITCH_USD
              + np.ceil(n / hw.SSDS_PER_HOST) * host)
    h_pool = n * (host + np.where(host_cache, swap_ssd, 0.0))
    return np.where(is_dev, d_pool, h_pool)


def _pool_energy_j(p: Batch, is_dev: Any, host_cache: Any, st: dict[str, np.ndarray],
                   pre: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Energy of a decode step and of the prefill: static power x time + traffic x per-bit energy (energy block; hw.*)."""
    n = p.nodes
    t, t_pre = st["step_s"], pre["step_s"]
    host_w = hw.HOST_PLATFORM_W + hw.core_power_w(p.host_cores, p.host_clock_ghz, hw.HOST_CORE_W, hw.HOST_CLOCK_GHZ)
    dev_w = hw.DEV_BASE_W + hw.core_power_w(p.dev_cores, p.dev_clock_ghz, hw.DEV_CORE_W, hw.DEV_CLOCK_GHZ)
    static_w = np.where(is_dev, n * dev_w + np.ceil(n / hw.SSDS_PER_HOST) * host_w,
                        n * (host_w + np.where(host_cache, hw.SWAP_SSD_W, 0.0)))
    slow_pj = np.where(is_dev, _FLASH_PJ, _FLASH_PJ + hw.PCIE_PJ_PER_BIT + hw.DRAM_PJ_PER_BIT)
    dyn_j = n * BITS_PER_BYTE * J_PER_PJ * (st["fast_traffic_b"] * hw.DRAM_PJ_PER_BIT + st["slow_traffic_b"] * slow_pj
                                             + st["net_b"] * hw.PCIE_PJ_PER_BIT)
    step_j = static_w * t + dyn_j
    pre_j = static_w * t_pre + n * BITS_PER_BYTE * J_PER_PJ * (
        pre["fast_traffic_b"] * hw.DRAM_PJ_PER_BIT + pre["slow_traffic_b"] * slow_pj + pre["net_b"] * hw.PCIE_PJ_PER_BIT)
    return step_j, pre_j


def crossover_seq_len(llm: str, nodes: int = 128, batch: float | None = None, *, lo: float = 16.0, hi: float = 131072.0,
                      steps_per_octave: int = 16, **params: Any) -> float:
    """Sequence length at which D-Cache overtakes H-Cache (Fig. 6a/b) for one LLM and pool:
    both configurations on a log grid, the sign change of log(H/D) interpolated in log2(seq).
    ``batch`` defaults to one sequence per node (L1074); ``params`` go to both runs.  NaN when
    D-Cache never wins, ``lo`` when it always does."""
    m = DockerSsdLlm()
    seqs = 2.0 ** np.arange(np.log2(lo), np.log2(hi) + 1e-9, 1.0 / steps_per_octave)
    common = {"llm": llm, "nodes": nodes, "batch": nodes if batch is None else batch, "seq_len": seqs, **params}
    h = m.run({"config": "h_cache", **common})["time_per_token_s"]
    d = m.run({"config": "d_cache", **common})["time_per_token_s"]
    r = np.log(h / d)
    wins = np.nonzero(r > 0)[0]
    if not len(wins):
        return float("nan")
    j = int(wins[0])
    if j == 0:
        return float(seqs[0])
    x0, x1 = np.log2(seqs[j - 1]), np.log2(seqs[j])
    return float(2.0 ** (x0 + (x1 - x0) * (-r[j - 1]) / (r[j] - r[j - 1])))


@per_calibration
def _swap_flash_gbps() -> float:
    """flash block: the swap SSD is a DockerSSD-class drive (48 MLC dies) read in 4-KiB pages."""
    return float(hw.flash_bw_gbps(hw.flash_arrays(), SWAP_PAGE_B, 1.0, False))


_LINK_GBPS = {g: float(link.pcie_dma_bw_gbps(g, SWAP_LANES, SWAP_PAGE_B)) for g in SWAP_LINKS}
_FLASH_PJ = hw.flash_read_pj_per_bit()
