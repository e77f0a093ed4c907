"""LLM performance block: Calculon-compatible training model, inference, search, placement.

The API (everything vectorized: pass columns, get columns back):

* ``ModelShape`` / ``MODELS`` / ``get_model(name)`` — transformer shapes with sources
  (Calculon's models, DockerSSD's LLM pool, Llama-3-8B/70B, FiD-T5 base/large).
* ``System`` (+ ``MemoryTier``, ``Network``, ``tier()``, ``simple_network()``) — compute peak
  per datatype with efficiency-by-size tables, memory tiers (HBM, host DRAM, CXL, SSD,
  flash, OS swap with page faults) and network tiers; ``System.from_calculon(path)`` reads
  Calculon's system JSON, ``System.simple(...)`` takes plain keyword values.
* ``train_step(model, system, tensor_par=..., pipeline_par=..., data_par=..., batch_size=...,
  ...)`` — one training (or forward-only) iteration per configuration with Calculon's
  method: time breakdown, ``total_time``, ``sample_rate``, tier-1/tier-2 bytes, ``error``.
  It reproduces Calculon's outputs (see ``reference.check_reference``).
* ``inference(model, system, batch=, prompt=, gen=, tp=, pp=, kv_cache=True)`` — TTFT, time
  per output token, tokens/s and per-device memory by tier, with or without a KV cache.
* ``inference_columns(model, StepSystem.columns(flops_per_s=..., tiers=[(name, capacity_b, bps),
  ...], net_bps=..., net_latency_s=...), batch=..., ...)`` — the same as ``inference`` with the
  hardware itself as columns (one design per point); ``inference`` is its one-System form
  (``StepSystem.from_system``).  Its stages (``layer_costs``, ``held_sizes``, ``place_columns``,
  ``pass_breakdown``, ``schedule``) are public in ``step.py`` for models that search layouts
  (``models/dockerssd/pool.py``).
* ``search(model, num_procs, max_batch, system)`` — best (TP, PP, DP, microbatch, recompute,
  offload, ...) execution by sample rate in Calculon's search space (``-m`` rule), streamed
  shape by shape with memory feasibility and a batch-time lower bound before the full
  evaluation; equal to ``search.search_exhaustive`` (which evaluates everything).
* ``place(sizes, traffic, tiers, method="greedy"|"lp")`` — weights/KV/activations over tiers.

Files: ``transformer.py`` (per-layer accounting), ``hardware.py``, ``training.py``,
``step.py`` (the batch-native inference step), ``inference.py``, ``placement.py``, ``search.py`` (with ``space.py``: the enumeration, and
``bound.py``: feasibility and bounds), ``calculon_io.py``, ``executions.py``,
``models.py``, ``reference.py`` (comparison with Calculon runs), ``bench.py``.
"""

from __future__ import annotations

from typing import Any

from models.blocks.llm.executions import Executions
from models.blocks.llm.hardware import EfficiencyTable, Engine, MemoryTier, Network, System, simple_network, tier
from models.blocks.llm.inference import inference
from models.blocks.llm.models import MODELS, ModelShape, get_model
from models.blocks.llm.placement import Placement, place
from models.blocks.llm.search import SearchResult, search
from models.blocks.llm.step import StepSystem, inference_columns
from models.blocks.llm.training import ERRORS, evaluate


def train_step(model: ModelShape | Any, system: System, **execution: Any) -> dict[str, Any]:
    """Evaluate training (``training=True``, the default) or forward-only executions.

    Keyword arguments are Calculon's execution fields as scalars or columns
    (``tensor_par``, ``pipeline_par``, ``data_par``, ``batch_size`` required; the rest
    default as in :data:`models.blocks.llm.executions.DEFAULTS`).
    """
    return evaluate(model, system, Executions.from_columns(**execution))


__all__ = [
    "ERRORS", "MODELS", "EfficiencyTable", "Engine", "Executions", "MemoryTier", "ModelShape", "Network",
    "Placement", "SearchResult", "StepSystem", "System", "evaluate", "get_model", "inference", "inference_columns",
    "place", "search", "simple_network", "tier", "train_step",
]
