"""LLM on a CXL tier: the largest model a GPU can train or serve at a given fraction of
GPU-DRAM speed when a CXL expander is its second memory tier, and what that costs.

The question of issue 4, answered with the LLM block (``models/blocks/llm``):

* The GPU is Calculon's H100 system (``results/reference/calculon/inputs/systems/
  h100_80g_nvl8.json``: compute, efficiency tables, 80 GiB HBM at 3.07 TB/s).
* **GPU-DRAM** (the ideal) gives that HBM unlimited capacity.
* **CXL** keeps the 80 GiB of HBM and adds the expander as tier 2: capacity
  ``root_ports x ep_capacity_gib``; bandwidth the smaller of the CXL.mem links (link block,
  all reads) and the endpoints' media (dram block for DRAM endpoints; flash block
  sequential reads for SSD endpoints, where SR turns streaming reads into internal-DRAM
  hits).
* **Serving** (``mode="serve"``): the LLM block's ``inference`` places weights, KV cache
  and activations over the two tiers with its CVXPY linear program (``method="lp"``) and,
  as the heuristic to compare, greedy fastest-tier-first; the gap is reported.  Tier
  transfers add up (``overlap="sum"``): the block's per-step bytes and its placement
  traffic agree only in that mode (with ``"max"`` the LP is steered by the prefill's
  activation working set).  Speed = tokens/s over the ideal's tokens/s.
* **Training** (``mode="train"``): Calculon's method (``train_step``) with weights,
  activations and optimizer state offloaded to tier 2, all candidate models in one
  vectorized call.  Speed = samples/s over the ideal's.

Candidates are the block's decoder-only models (5 B to 1 T parameters).  The answer is the
largest one at ``speed_frac`` or better, the largest of those that needs the CXL tier at
all, and the expansion's price per billion parameters of that model (price from the
cxl-gpu model's cost path).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from dse import registry
from dse.errors import DseError, allowed_list
from dse.optimize import Solution
from dse.units import GB, GIB
from models.cxl_gpu import paths

#: Calculon's H100 system file, shipped with the project.
SYSTEM_FILE = registry.project_root() / "results/reference/calculon/inputs/systems/h100_80g_nvl8.json"
#: Capacity standing in for "unlimited" HBM in the GPU-DRAM ideal, GiB.
IDEAL_HBM_GIB = 1.0e6
MODES = ("serve", "train")


def _system() -> Any:
    from models.blocks.llm import System

    return System.from_calculon(SYSTEM_FILE)


def candidates() -> list[Any]:
    """The LLM block's decoder-only models, smallest first."""
    from models.blocks.llm import MODELS

    return sorted((m for m in MODELS.values() if m.encoder_layers == 0), key=lambda m: m.params)


def expander(media: str, link_gen: str, lanes: int, root_ports: int, ep_capacity_gib: float) -> dict[str, float]:
    """Capacity (GiB) and streaming read bandwidth (GB/s) of the CXL tier."""
    from models.blocks import flash, link

    link_bw = float(link.cxl_mem_bw_gbps(link_gen, lanes, paths.GEN_FLIT[link_gen], 1.0)) * root_ports
    if media == "dram":
        media_bw = paths.calibrated_media()["dram_ep_bw_gbps"] * root_ports
    else:
        cfg = paths.MEDIA_ROWS[media]["flash_config"]
        media_bw = float(flash.saturation_bw_gbps(cfg, paths.FILL_B, 1.0, "sequential")) * root_ports
    return {"capacity_gib": root_ports * ep_capacity_gib, "bw_gbps": min(link_bw, media_bw),
            "link_gbps": link_bw, "media_gbps": media_bw}


def _check(name: str, value: Any, allowed: tuple[Any, ...]) -> None:
    if value not in allowed:
        raise DseError(f"{name}={value!r} is not allowed; allowed: {allowed_list(allowed)}")


def _check_inputs(mode: str, speed_frac: float, media: str, link_gen: str, lanes: int, root_ports: int,
                  ep_capacity_gib: float) -> None:
    _check("mode", mode, MODES)
    _check("media", media, paths.MEDIA)
    _check("link_gen", link_gen, paths.LINK_GENS)
    _check("lanes", int(lanes), paths.LANES)
    if not 0 < float(speed_frac) <= 1:
        raise DseError(f"speed_frac={speed_frac} is not allowed; allowed: 0 < speed_frac <= 1")
    if int(root_ports) < 1 or float(ep_capacity_gib) <= 0:
        raise DseError("root_ports must be >= 1 and ep_capacity_gib > 0")


def tier_systems(ep: dict[str, float], media: str, link_gen: str, lanes: int, root_ports: int) -> tuple[Any, Any]:
    """The GPU-DRAM ideal (unlimited HBM) and the GPU with the CXL expander as tier 2."""
    from models.blocks.llm import tier

    base = _system()
    hbm = base.tiers[0]
    ideal = base.with_tiers(replace(hbm, capacity_bytes=IDEAL_HBM_GIB * GIB))
    cxl_tier = tier("cxl", ep["capacity_gib"], ep["bw_gbps"], name="cxl",
                    source=f"{root_ports} x {media} endpoint(s) on {link_gen} x{lanes}")
    return ideal, base.with_tiers(hbm, cxl_tier)


def serve_rows(models: list[Any], ideal: Any, cxl: Any, speed_frac: float, batch: int, prompt: int,
               gen: int) -> tuple[list[dict[str, Any]], list[float]]:
    """Per candidate: tokens/s with the CXL tier (placement LP and greedy) over the ideal's;
    and the LP's gain over greedy (%) where both are feasible."""
    from models.blocks.llm import inference

    rows: list[dict[str, Any]] = []
    gaps: list[float] = []
    for m in models:
        kw = dict(batch=batch, prompt=prompt, gen=gen, datatype="float16", overlap="sum", raise_infeasible=False)
        r0 = inference(m, ideal, **kw)
        rg = inference(m, cxl, placement="greedy", **kw)
        rl = inference(m, cxl, placement="lp", **kw)
        ok = bool(rl["feasible"]) and bool(r0["feasible"])
        frac_l = float(rl["tokens_per_s"] / r0["tokens_per_s"]) if ok else 0.0
        frac_g = float(rg["tokens_per_s"] / r0["tokens_per_s"]) if bool(rg["feasible"]) else 0.0
        if ok and frac_g > 0:
            gaps.append((frac_l / frac_g - 1.0) * 100.0)
        rows.append({"model": m.name, "params_b": m.params / 1e9, "mem_gib": float(r0["mem_bytes"]) / GIB,
                     "cxl_gib": float(rl["tier_cxl_bytes"]) / GIB if ok else float("nan"),
                     "speed_frac": frac_l, "greedy_speed_frac": frac_g, "meets": ok and frac_l >= speed_frac})
    return rows, gaps


def train_rows(models: list[Any], ideal: Any, cxl: Any, speed_frac: float, train_batch: int) -> list[dict[str, Any]]:
    """Per candidate: samples/s with weights, activations and optimizer state offloaded to the
    CXL tier over the ideal's (all candidates in one vectorized call per system)."""
    from models.blocks.llm import train_step

    shapes = {k: np.array([getattr(m, f) for m in models]) for k, f in
              (("hidden", "hidden"), ("ffn", "ffn"), ("seq", "seq"), ("heads", "heads"), ("head_dim", "head_dim"),
               ("layers", "layers"), ("kv_heads", "kv_heads"))}
    common = dict(num_procs=1, tensor_par=1, pipeline_par=1, data_par=1, batch_size=train_batch, microbatch_size=1,
                  datatype="float16", activation_recompute="full")
    r0 = train_step(shapes, ideal, **common)
    r1 = train_step(shapes, cxl, weight_offload=True, activations_offload=True, optimizer_offload=True, **common)
    rows = []
    for i, m in enumerate(models):
        ok = int(r0["error"][i]) == 0 and int(r1["error"][i]) == 0
        frac = float(r1["sample_rate"][i] / r0["sample_rate"][i]) if ok else 0.0
        need = float(r0["mem_tier1_bytes"][i]) / GIB
        rows.append({"model": m.name, "params_b": m.params / 1e9, "mem_gib": need,
                     "cxl_gib": float(r1["mem_tier2_bytes"][i]) / GIB if ok else float("nan"),
                     "speed_frac": frac, "meets": ok and frac >= speed_frac})
    return rows


def largest_model(
    mode: str = "serve",
    speed_frac: float = 0.5,
    media: str = "dram",
    link_gen: str = "pcie5",
    lanes: int = 16,
    root_ports: int = 4,
    ep_capacity_gib: float = 512.0,
    batch: int = 8,
    prompt: int = 2048,
    gen: int = 256,
    train_batch: int = 64,
) -> Solution:
    """Largest LLM trainable or servable on one GPU with a CXL tier at >= speed_frac of GPU-DRAM speed, and its $ per B params."""
    _check_inputs(mode, speed_frac, media, link_gen, lanes, root_ports, ep_capacity_gib)
    root_ports, lanes = int(root_ports), int(lanes)
    ep = expander(media, link_gen, lanes, root_ports, float(ep_capacity_gib))
    ideal, cxl = tier_systems(ep, media, link_gen, lanes, root_ports)
    gaps: list[float] = []
    if mode == "serve":
        rows, gaps = serve_rows(candidates(), ideal, cxl, speed_frac, batch, prompt, gen)
    else:
        rows = train_rows(candidates(), ideal, cxl, speed_frac, train_batch)
    best = max((r for r in rows if r["meets"]), key=lambda r: r["params_b"], default=None)
    # the expansion only pays for models that do not fit in HBM alone
    beyond = max((r for r in rows if r["meets"] and r["cxl_gib"] > 0), key=lambda r: r["params_b"], default=None)
    price = _expansion_price(media, link_gen, lanes, root_ports, float(ep_capacity_gib))
    summary: dict[str, Any] = {
        "mode": mode,
        "cxl_capacity_gib": ep["capacity_gib"],
        "cxl_bw_gbps": ep["bw_gbps"],
        "expansion_usd": price["expansion_usd"],
        "expansion_power_w": price["power_w"],
        "largest_model": best["model"] if best else "none",
        "largest_model_using_cxl": beyond["model"] if beyond else "none (every model over HBM misses speed_frac)",
        "expansion_usd_per_b_params": price["expansion_usd"] / beyond["params_b"] if beyond else float("nan"),
    }
    if gaps:
        summary["lp_vs_greedy_speed_gap_max_pct"] = max(abs(g) for g in gaps)
    return Solution(
        problem="cxl-gpu-llm",
        status="optimal" if best else "infeasible",
        objective_name="largest_model_params_b",
        objective=best["params_b"] if best else 0.0,
        rows=rows,
        summary=summary,
        formulation=("serve: per candidate model, min over tier fractions of max(tier transfer times) s.t. capacity "
                     "(LLM block placement LP, CVXPY) vs greedy fastest-tier-first; train: Calculon offload model. "
                     "Largest model with speed >= speed_frac x GPU-DRAM."),
    )


def _expansion_price(media: str, link_gen: str, lanes: int, root_ports: int, ep_capacity_gib: float) -> dict[str, float]:
    """Price and power of the expansion, from the cxl-gpu model's cost path."""
    model = registry.get("cxl-gpu")
    design = "cxl" if media == "dram" else "cxl_sr"
    local = 80.0
    pt = model.point(design=design, media=media, link_gen=link_gen, lanes=lanes, root_ports=root_ports,
                     ep_capacity_gib=ep_capacity_gib, gpu_local_gib=local, working_set_gib=local + root_ports * ep_capacity_gib,
                     workload="gemm")
    return {"expansion_usd": pt["expansion_usd"], "power_w": pt["expansion_power_w"], "usd_per_gb": pt["usd_per_gb"],
            "capacity_gb": root_ports * ep_capacity_gib * GIB / GB}
