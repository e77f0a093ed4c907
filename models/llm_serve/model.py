"""llm-serve: one LLM serving system (GPUs, a host, a KV-cache tier) at an offered load.

The request path (models/blocks/llm/serving.py has the equations):

1. A request of ``context_tokens`` (prompt + ``output_tokens``) arrives; its prompt waits
   for the engine's prefill chunk slot (M/D/1, Poisson arrivals) and is processed in chunks
   that share iterations with the decodes of the running batch (continuous batching with
   chunked prefill) -> TTFT.
2. Every iteration reads the weights once from HBM and every running sequence's KV cache;
   ``gpus`` GPUs split both by tensor parallelism (an all-reduce per layer half over
   NVLink).  The iteration time is a roofline of compute, HBM and the KV tier, plus a
   fixed overhead -> inter-token latency, and with Little's law the throughput.
3. The KV cache fills the HBM left after the weights; what does not fit lives in the
   ``kv_tier`` and is streamed to the GPUs every decode step:

   ``hbm``            no tier: more KV room only with more GPUs (``gpus``);
   ``host_dram``      the host's DDR5 (dram block), read by the GPUs over their PCIe links
                      (link block DMA bandwidth);
   ``cxl_expander``   CXL Type-3 DDR5 expanders behind the host (link block CXL.mem
                      bandwidth of each device's link, dram block media), read by the GPUs
                      over their PCIe links;
   ``cxl_gpu``        CXL memory attached to each GPU's own CXL port (the CXL-GPU design):
                      no host hop, one device per GPU at least;
   ``dockerssd_pool`` a pool of DockerSSDs holding KV on their flash, read as memory (flash
                      block, dockerssd_mlc configuration, large sequential reads);
   ``nvme``           TLC NVMe SSDs read by GPUDirect-style DMA (flash block, a PCIe 5.0 x4
                      TLC configuration).

   The tier's bandwidth is the smaller of its devices' sum and the links into the GPUs;
   its latency is the block's unloaded access latency (one per layer per step).
4. Cost: GPUs + one dual-socket host (+ its DRAM) + the tier's devices, priced from the cost
   block's component table; power: GPUs between idle and board power by utilization, the
   host, the tier devices.

Three constants are fitted to published serving measurements (``calibration.py`` ->
``fitted.toml``): the achieved fraction of peak FLOP/s, of HBM bandwidth, and the GEMM
rows at which an iteration reaches half that FLOP/s (efficiency by size).
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import GB, GIB, MIB, MS_PER_S, NS_PER_S, US_PER_S
from models.blocks import cost, dram, flash, link
from models.blocks.calibration import per_calibration
from models.blocks.llm import serving
from models.blocks.workload import DRAM_W_PER_GIB, host_server

HERE = Path(__file__).resolve().parent
GPUS = tuple(serving.gpus())
ARCHS = serving.families()
DTYPES = ("bf16", "fp16", "fp8")
TIERS = ("hbm", "host_dram", "cxl_expander", "cxl_gpu", "dockerssd_pool", "nvme")

#: Host DRAM behind the tiers: DDR5-4800 DIMMs (dram block).
HOST_DRAM = "DDR5-4800"
#: Flash-block configurations of the SSD tiers.
DOCKERSSD_FLASH = "dockerssd_mlc"
NVME_FLASH = "espresso_ssd"
#: KV pages stream as large sequential reads (1 MiB): the dies, not the commands, bound them.
STREAM_B = float(MIB)
#: Capacity of one DockerSSD, GB: 400 GB per device (research/dockerssd.md, L1066).
DOCKERSSD_GB = 400.0
#: Host DRAM for the OS, the engine and the tokenizer, GiB (assumption: 256 GiB, a modest
#: share of the 1-2 TiB an 8-GPU server usually carries).
HOST_BASE_DRAM_GIB = 256.0


@cache
def fitted() -> dict[str, Any]:
    """The fitted constants (``fitted.toml``)."""
    with open(HERE / "fitted.toml", "rb") as fh:
        return tomllib.load(fh)


def _fit(name: str) -> float:
    return float(fitted()["constants"][name])


_FIT_SRC = "fitted: models/llm_serve/fitted.toml (scipy least squares on the 'fit' rows of measurements.csv; see calibration.py)"


@per_calibration
def tier_devices() -> dict[str, dict[str, float]]:
    """Per tier: one device's capacity (GiB), bandwidth (GB/s), latency (s), price ($),
    power (W), and the link into each GPU (GB/s); from the link, dram, flash and cost blocks."""
    ddr5_ch = float(dram.saturation_bw_gbps(HOST_DRAM, "stream"))
    ddr5_ns = float(dram.idle_latency_ns(HOST_DRAM))
    dram_usd = cost.component_price("dram_ddr5").value
    dram_w = DRAM_W_PER_GIB
    ctrl_usd = cost.component_price("cxl_memory_controller").value
    ctrl_w = cost.component_price("cxl_memory_controller_power_w").value
    ssd_w = cost.component_price("nvme_ssd_power_w").value
    ssd_ctrl = cost.component_price("ssd_controller_enterprise").value + cost.component_price("ssd_other").value
    cxl_x8 = float(link.cxl_mem_bw_gbps("pcie5", 8))
    cxl_x16 = float(link.cxl_mem_bw_gbps("pcie5", 16))
    dssd = flash.config(DOCKERSSD_FLASH)
    nvme = flash.config(NVME_FLASH)
    nvme_ns = float(link.nvme_command_overhead_ns(4096.0, "pcie5", 4))
    exp_gib = 256.0
    exp_ch = 2.0
    return {
        "hbm": {"gib": 1.0, "gbps": 0.0, "lat_s": 0.0, "usd": 0.0, "w": 0.0, "w_per_gib": 0.0, "usd_per_gib": 0.0},
        # the host's DIMMs: capacity priced per GiB, bandwidth of the host's channels
        "host_dram": {"gib": 1.0, "gbps": 0.0, "lat_s": (link.PCIE_DMA_READ_RT_NS + ddr5_ns) / NS_PER_S,
                      "usd": 0.0, "w": 0.0, "w_per_gib": dram_w, "usd_per_gib": dram_usd},
        # a 256 GiB E3.S-class expander: PCIe 5.0 x8 CXL.mem link, two DDR5-4800 channels
        "cxl_expander": {"gib": exp_gib, "gbps": min(cxl_x8, exp_ch * ddr5_ch),
                         "lat_s": (link.PCIE_DMA_READ_RT_NS + float(link.cxl_round_trip_ns("pcie5", 8)) + ddr5_ns) / NS_PER_S,
                         "usd": ctrl_usd, "w": ctrl_w, "w_per_gib": dram_w, "usd_per_gib": dram_usd},
        # CXL-GPU: an expander on each GPU's own x16 CXL port, four DDR5 channels to fill it
        "cxl_gpu": {"gib": exp_gib, "gbps": min(cxl_x16, 2.0 * exp_ch * ddr5_ch),
                    "lat_s": (float(link.cxl_round_trip_ns("pcie5", 16)) + ddr5_ns) / NS_PER_S,
                    "usd": ctrl_usd, "w": ctrl_w, "w_per_gib": dram_w, "usd_per_gib": dram_usd},
        "dockerssd_pool": {"gib": DOCKERSSD_GB * GB / GIB,
                           "gbps": float(flash.saturation_bw_gbps(dssd, STREAM_B, 1.0, "sequential")),
                           "lat_s": (float(flash.unloaded_latency_us(dssd, 4096.0)) / US_PER_S + nvme_ns / NS_PER_S),
                           "usd": ssd_ctrl + DOCKERSSD_GB * cost.component_price("nand_mlc").value
                           + 2.0 * cost.component_price("dram_ddr4").value,
                           "w": ssd_w, "w_per_gib": 0.0, "usd_per_gib": 0.0},
        "nvme": {"gib": 0.0, "gbps": float(flash.saturation_bw_gbps(nvme, STREAM_B, 1.0, "sequential")),
                 "lat_s": float(flash.unloaded_latency_us(nvme, 4096.0)) / US_PER_S + nvme_ns / NS_PER_S,
                 "usd": ssd_ctrl, "w": ssd_w, "w_per_gib": 0.0, "usd_per_gib": 0.0},
        "_": {"ddr5_channel_gbps": ddr5_ch, "cxl_port_gbps": cxl_x16},
    }


@per_calibration
def tables() -> dict[str, dict[str, float]]:
    """Every lookup table ``evaluate`` takes, built once per calibration (the link block is
    calibrated): per GPU, the ``gpus.csv`` fields, ``host_link_gbps`` (its PCIe link's DMA
    bandwidth), ``tp_link_gbps`` (all-reduce bandwidth per GPU: NVLink per direction, else
    the PCIe link), ``gpu_usd`` / ``gpu_w`` (cost block); per tier, ``dev_<field>`` of
    ``tier_devices``; and ``consts`` (the tiers' shared numbers, the NVMe NAND price)."""
    specs = serving.gpus()
    out = {f: {g: float(getattr(s, f)) for g, s in specs.items()} for f in ("tflops_bf16", "tflops_fp8", "hbm_gib", "hbm_gbps")}
    out["host_link_gbps"] = {g: float(link.pcie_dma_bw_gbps(s.host_link_gen, s.host_link_lanes, STREAM_B))
                             for g, s in specs.items()}
    out["tp_link_gbps"] = {g: (s.nvlink_gbps if s.nvlink_gbps > 0 else out["host_link_gbps"][g])
                           for g, s in specs.items()}
    out["gpu_usd"] = {k: cost.component_price(f"gpu_{k}").value for k in GPUS}
    out["gpu_w"] = {k: cost.component_price(f"gpu_{k}_power_w").value for k in GPUS}
    t = tier_devices()
    for f in ("usd", "w", "usd_per_gib", "w_per_gib", "gib", "gbps", "lat_s"):
        out[f"dev_{f}"] = {k: v[f] for k, v in t.items() if k != "_"}
    out["consts"] = {**t["_"], "nand_tlc_usd": cost.component_price("nand_tlc").value}
    return out


class LlmServe(Model):
    name = "llm-serve"
    version = "1"
    summary = "LLM serving system: continuous batching with chunked prefill on TP GPUs, KV cache over HBM or a tier (host DRAM, CXL, DockerSSD, NVMe)"
    source = "serving layer models/blocks/llm/serving.py; calibrated on TensorRT-LLM and NVIDIA NIM published H100/H200 measurements"
    family = "llm-serve"
    boundary = "the GPU boards, one dual-socket host server with its DRAM, and the KV tier's devices (no HGX baseboard, NICs or rack)"
    variant_param = "kv_tier"
    params = (
        Param("kv_tier", "hbm", "assumption: KV in HBM only, the baseline serving setup", choices=TIERS,
              doc="where KV beyond the HBM left after the weights lives"),
        Param("gpu", "h100_sxm", "assumption: H100 SXM, the MLPerf Inference datacenter reference GPU", choices=GPUS,
              doc="accelerator (models/blocks/llm/gpus.csv, datasheets)"),
        Param("gpus", 8.0, "assumption: one 8-GPU HGX node, tensor parallel within NVLink", choices=(1.0, 2.0, 4.0, 8.0),
              doc="tensor-parallel GPUs of one engine instance"),
        Param("arch", "llama-3", "Llama-3 family shapes (models/blocks/llm/architectures.csv)", choices=ARCHS,
              doc="architecture family whose published shapes set layers, KV heads and head size"),
        *knob_params("llm-serve"),
        Param("weight_dtype", "bf16", "assumption: weights as released (BF16)", choices=DTYPES),
        Param("kv_dtype", "bf16", "assumption: KV cache in the activation datatype (BF16)", choices=DTYPES),
        Param("tier_capacity_gib", 2048.0, "assumption: 2 TiB of KV tier, the host memory of a typical 8-GPU server",
              bounds=(0.0, 262144.0), doc="capacity of the KV tier (ignored for kv_tier=hbm)"),
        Param("host_channels", 16.0, "assumption: two sockets x 8 DDR5 channels (Sapphire Rapids class)", bounds=(1.0, 48.0),
              integer=True, doc="host DDR5 channels (bandwidth of the host_dram tier)"),
        Param("nvme_drive_gb", 3840.0, "assumption: 3.84 TB, a common enterprise TLC NVMe capacity", bounds=(240.0, 61440.0),
              doc="capacity of one NVMe SSD of the nvme tier"),
        Param("request_rate_per_s", 0.0, "assumption: 0 = run at load_frac of the capacity", bounds=(0.0, 1e6),
              doc="offered requests/s (Poisson); 0 = load_frac x capacity"),
        Param("load_frac", 0.8, "assumption: 80 % of capacity keeps the prompt queue short", bounds=(0.0, 1.0),
              doc="offered load as a share of the capacity when request_rate_per_s = 0 (1 = offline max throughput)"),
        Param("concurrency", 0.0, "assumption: 0 = open loop (request_rate_per_s / load_frac)", bounds=(0.0, 65536.0),
              doc="> 0: a closed loop of this many clients, each with one request in flight (benchmark tools)"),
        Param("chunk_tokens", 8192.0, "TensorRT-LLM default max_num_tokens = 8192 (LLM API); vLLM uses 8192-16384 with chunked prefill",
              bounds=(256.0, 131072.0), doc="token budget of one iteration (decodes + prefill chunk)"),
        Param("max_batch", 2048.0, "TensorRT-LLM default max_batch_size = 2048 (LLM API)", bounds=(1.0, 65536.0),
              doc="most sequences the engine runs at once"),
        Param("hbm_usable_frac", 0.9, "vLLM gpu_memory_utilization and TensorRT-LLM kv_cache_free_gpu_mem_fraction default 0.9",
              bounds=(0.1, 1.0), doc="share of HBM the engine takes"),
        Param("hbm_reserve_gib", 2.0, "assumption: CUDA context, workspaces and activations of one iteration (FlashAttention: no quadratic buffer) take ~2 GiB",
              bounds=(0.0, 64.0)),
        Param("eff_flops_frac", _fit("eff_flops_frac"), _FIT_SRC, bounds=(0.05, 1.0), doc="achieved share of peak FLOP/s"),
        Param("eff_hbm_frac", _fit("eff_hbm_frac"), _FIT_SRC, bounds=(0.05, 1.0), doc="achieved share of HBM bandwidth"),
        Param("gemm_half_rows", _fit("gemm_half_rows"), _FIT_SRC, bounds=(0.0, 100000.0),
              doc="token rows at which an iteration's GEMMs reach half of eff_flops_frac (efficiency by size)"),
        Param("step_overhead_ms", 0.5, "assumption: ~0.5 ms of scheduling and launches per iteration with CUDA graphs; "
              "fitting it as a fourth constant gave 0.51 ms and no smaller error", bounds=(0.0, 100.0),
              doc="fixed cost of one iteration (scheduling, kernel launches, sampling)"),
        Param("allreduce_latency_us", 8.0, "assumption: small-message all-reduce over NVLink takes ~5-10 us (nccl-tests order of magnitude)",
              bounds=(0.0, 1000.0), doc="latency of one tensor-parallel all-reduce (two per layer per iteration)"),
        Param("gpu_idle_frac", 0.12, "assumption: an idle H100 SXM draws ~80-90 W of its 700 W (nvidia-smi readings)",
              bounds=(0.0, 1.0), doc="GPU power at zero load as a share of its board power"),
    )
    metrics = (
        Metric("ttft_ms", "min", "mean time to first token at the offered load",
               inf_means="the offered load is the capacity (load_frac = 1): the prompt queue grows without bound"),
        Metric("ttft_p50_ms", "min", "median TTFT", inf_means="the offered load is the capacity"),
        Metric("ttft_p99_ms", "min", "99th-percentile TTFT", inf_means="the offered load is the capacity"),
        Metric("itl_ms", "min", "median inter-token latency"),
        Metric("itl_p99_ms", "min", "99th-percentile inter-token latency (steps that carry a prefill chunk)"),
        Metric("tpot_ms", "min", "mean time per output token (mean iteration time)"),
        Metric("mfu_frac", "max", "model FLOPs achieved / peak FLOP/s of the GPUs"),
        Metric("capacity_tokens_per_s", "max", "output tokens/s at full load"),
        Metric("requests_per_s", "max", "requests served per second"),
        Metric("batch", None, "mean number of running (decoding) sequences"),
        Metric("kv_gib_per_seq", None, "KV cache of one request at full context"),
        Metric("hbm_kv_gib", None, "KV the HBM holds after the weights (all GPUs)"),
        Metric("kv_tier_frac", None, "share of the KV read from the tier each step"),
        Metric("tier_bw_gbps", None, "bandwidth of the KV tier into the GPUs"),
        Metric("tier_devices", None, "devices of the KV tier (DIMM GiB count as one for host_dram)"),
        Metric("tokens_per_s_per_gpu", "max", "output tokens/s per GPU"),
    )

    def evaluate(self, p: Batch) -> dict[str, Any]:
        g = np.asarray(p.gpus, dtype=np.float64)
        tab = tables()
        gpu_peak_bf16 = p.pick("gpu", tab["tflops_bf16"]) * 1e12
        gpu_peak_fp8 = p.pick("gpu", tab["tflops_fp8"]) * 1e12
        wbytes = p.pick("weight_dtype", serving.DTYPE_BYTES)
        kbytes = p.pick("kv_dtype", serving.DTYPE_BYTES)
        peak_lin = np.where(p.is_("weight_dtype", "fp8"), gpu_peak_fp8, gpu_peak_bf16)
        peak_att = np.where(p.is_("kv_dtype", "fp8"), gpu_peak_fp8, gpu_peak_bf16)
        params_b = np.asarray(p.model_params_b, dtype=np.float64)
        shape = self._shapes(p, params_b)
        out_tok = np.asarray(p.output_tokens, dtype=np.float64)
        prompt = np.asarray(p.context_tokens, dtype=np.float64) - out_tok

        tier = self._tier(p, g, tab)
        r = serving.serve(
            gpus=g, params=params_b * 1e9, layers=shape["layers"], hidden=shape["hidden"], kv_heads=shape["kv_heads"],
            kv_dim=shape["kv_dim"], attn_dim=shape["attn_dim"], weight_bytes=wbytes, kv_bytes=kbytes,
            peak_linear_flops=peak_lin, peak_attn_flops=peak_att,
            hbm_bytes=p.pick("gpu", tab["hbm_gib"]) * GIB, hbm_Bps=p.pick("gpu", tab["hbm_gbps"]) * GB,
            hbm_usable_frac=p.hbm_usable_frac, hbm_reserve_bytes=np.asarray(p.hbm_reserve_gib) * GIB,
            link_Bps=p.pick("gpu", tab["tp_link_gbps"]) * GB,
            tier_bytes=tier["bytes"], tier_Bps=tier["Bps"], tier_latency_s=tier["lat_s"],
            prompt=np.maximum(prompt, 1.0), output=out_tok, chunk_tokens=p.chunk_tokens, max_batch=p.max_batch,
            eff_flops=p.eff_flops_frac, eff_hbm=p.eff_hbm_frac, gemm_half_rows=p.gemm_half_rows, step_overhead_s=np.asarray(p.step_overhead_ms) / MS_PER_S,
            allreduce_latency_s=np.asarray(p.allreduce_latency_us) / US_PER_S,
            request_rate=p.request_rate_per_s, concurrency=p.concurrency, load_frac=p.load_frac,
        )
        tokens = r["tokens_per_s"]
        capex, power = self._cost(p, g, tier, r["util"], tab)
        ms = MS_PER_S
        return {
            "work_per_s": tokens,
            "capex_usd": capex,
            "power_w": power,
            "ttft_ms": r["ttft_s"] * ms,
            "ttft_p50_ms": r["ttft_p50_s"] * ms,
            "ttft_p99_ms": r["ttft_p99_s"] * ms,
            "itl_ms": r["itl_p50_s"] * ms,
            "itl_p99_ms": r["itl_p99_s"] * ms,
            "tpot_ms": r["tpot_s"] * ms,
            "mfu_frac": r["mfu"],
            "capacity_tokens_per_s": r["capacity_rate"] * out_tok,
            "requests_per_s": r["request_rate"],
            "batch": r["batch"],
            "kv_gib_per_seq": r["kv_seq_bytes"] / GIB,
            "hbm_kv_gib": r["hbm_kv_bytes"] / GIB,
            "kv_tier_frac": r["kv_tier_frac"],
            "tier_bw_gbps": tier["Bps"] / GB,
            "tier_devices": tier["devices"],
            "tokens_per_s_per_gpu": tokens / g,
            "infeasible": {
                "prompt is empty: output_tokens >= context_tokens": ~np.asarray(prompt >= 1.0),
                "weights do not fit the GPUs' HBM (add GPUs or use fp8 weights)": ~np.asarray(r["weights_fit"]),
                "KV cache of one request does not fit HBM plus the KV tier": ~np.asarray(r["kv_fits"]),
                "offered request rate exceeds the system's capacity": ~np.asarray(r["within_capacity"]),
            },
        }

    # ------------------------------------------------------------------ pieces
    @staticmethod
    def _shapes(p: Batch, params_b: np.ndarray) -> dict[str, np.ndarray]:
        n = np.broadcast_shapes(np.shape(params_b), np.shape(p.arch))
        groups = p.groups("arch")
        if len(groups) == 1:
            return serving.shape_columns(groups[0][0], params_b)
        out = {k: np.empty(n) for k in ("layers", "hidden", "kv_heads", "kv_dim", "attn_dim")}
        for fam, idx in groups:
            sh = serving.shape_columns(fam, np.broadcast_to(params_b, n)[idx])
            for k in out:
                out[k][idx] = sh[k]
        return out

    @staticmethod
    def _tier(p: Batch, g: np.ndarray, pt: dict[str, dict[str, float]]) -> dict[str, np.ndarray]:
        """Capacity (bytes), bandwidth (B/s), latency (s), devices, and per-device cost of the KV tier."""
        cap_gib = np.where(p.is_("kv_tier", "hbm"), 0.0, np.asarray(p.tier_capacity_gib, dtype=np.float64))
        dev_gib = p.pick("kv_tier", pt["dev_gib"])
        dev_gib = np.where(p.is_("kv_tier", "nvme"), np.asarray(p.nvme_drive_gb) * GB / GIB, dev_gib)
        devices = np.ceil(cap_gib / np.where(dev_gib > 0, dev_gib, 1.0))
        is_cxl_gpu = p.is_("kv_tier", "cxl_gpu")
        devices = np.where(is_cxl_gpu, np.maximum(np.ceil(devices / g), 1.0) * g, devices)  # one expander per GPU at least
        devices = np.where(p.is_("kv_tier", "hbm") | (cap_gib <= 0), 0.0, devices)
        dev_gbps = p.pick("kv_tier", pt["dev_gbps"])
        host_link = p.pick("gpu", pt["host_link_gbps"]) * g
        into_gpus = np.where(is_cxl_gpu, pt["consts"]["cxl_port_gbps"] * g, host_link)
        host_dram_gbps = np.minimum(np.asarray(p.host_channels) * pt["consts"]["ddr5_channel_gbps"], host_link)
        bw = np.where(p.is_("kv_tier", "host_dram"), host_dram_gbps, np.minimum(devices * dev_gbps, into_gpus))
        host_dram = p.is_("kv_tier", "host_dram")
        devices = np.where(host_dram & (cap_gib > 0), 1.0, devices)
        return {
            "bytes": cap_gib * GIB,
            "Bps": np.where(cap_gib > 0, bw, 0.0) * GB,
            "lat_s": p.pick("kv_tier", pt["dev_lat_s"]),
            "devices": devices,
            "cap_gib": cap_gib,
            "host_dram_gib": np.where(host_dram, cap_gib, 0.0),
        }

    @staticmethod
    def _cost(p: Batch, g: np.ndarray, tier: dict[str, np.ndarray], util: np.ndarray,
              pt: dict[str, dict[str, float]]) -> tuple[np.ndarray, np.ndarray]:
        gpu_usd = p.pick("gpu", pt["gpu_usd"])
        gpu_w = p.pick("gpu", pt["gpu_w"])
        host = host_server(HOST_BASE_DRAM_GIB + tier["host_dram_gib"])
        other = ~p.is_("kv_tier", "host_dram")
        dev_usd = p.pick("kv_tier", pt["dev_usd"])
        dev_w = p.pick("kv_tier", pt["dev_w"])
        gib_usd = p.pick("kv_tier", pt["dev_usd_per_gib"])
        gib_w = p.pick("kv_tier", pt["dev_w_per_gib"])
        nvme_usd = np.where(p.is_("kv_tier", "nvme"), np.asarray(p.nvme_drive_gb) * pt["consts"]["nand_tlc_usd"], 0.0)
        tier_usd = np.where(other, tier["devices"] * (dev_usd + nvme_usd) + tier["cap_gib"] * gib_usd, 0.0)
        tier_w = np.where(other, tier["devices"] * dev_w + tier["cap_gib"] * gib_w, 0.0)
        idle = np.asarray(p.gpu_idle_frac)
        capex = g * gpu_usd + host["capex_usd"] + tier_usd
        power = g * gpu_w * (idle + (1.0 - idle) * util) + host["power_w"] + tier_w
        return capex, power
