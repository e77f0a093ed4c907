"""LLM inference: prefill, then autoregressive decode with or without a KV cache.

Calculon models a forward pass of whole sequences only (``training=false``).  Serving
needs more, in the same spirit (per-layer flops and bytes, efficiency-by-size tables,
network collectives):

* **Prefill** of ``prompt`` tokens per sequence: every block's GEMMs run on ``batch*prompt``
  rows; the attention score/context matmuls cost ``prompt**2`` per head (causal masking
  is not exploited, as in Calculon); the LM head runs for the last position only.
  TTFT = prefill time (+ the encoder for encoder-decoder models).
* **Decode with a KV cache**: one token per sequence per step; weights are streamed once
  per step and the cache of the context is read (and one token's K/V written).
  TPOT = time of one step at the mean context; the total over ``gen`` steps is summed
  exactly for step times quadratic in the context (three-point rule).
* **Decode without a KV cache**: every step recomputes the forward over the whole
  context (``O(n**2)`` over the generation).

Per step, the time of a pipeline stage is ``compute (+) memory + TP communication``, where
compute is ``sum flops/(peak*eff(flops))`` per GEMM (matrix engine) and per
elementwise op (vector engine), memory is the placement's tier transfer time
(:mod:`models.blocks.llm.placement`; weights, KV cache and activations over the device's
tiers, OS swap with its page-fault cost) and ``(+)`` is the system's processing mode
(``no_overlap``: sum, ``roofline``: max).  TP adds two all-reduces of the activations per
block; PP stages run one after another for a step (no cross-step pipelining) and add one
point-to-point message per boundary.

Inputs may be columns (batch, prompt, gen, TP, PP): one call evaluates a whole sweep.  The
computation is :func:`models.blocks.llm.step.inference_columns` (its stages: layer costs,
sizes, placement, passes, prefill, decode), which also takes hardware columns; this
function is its one-System form.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.blocks.llm.hardware import DTYPE_BYTES, System, canonical_dtype
from models.blocks.llm.models import ModelShape
from models.blocks.llm.step import StepSystem, inference_columns


def inference(
    model: ModelShape, system: System, *, batch: Any = 1, prompt: Any = None, gen: Any = 128, tp: Any = 1,
    pp: Any = 1, datatype: str = "float16", kv_cache: bool = True, placement: str = "greedy",
    overlap: str = "sum", net: int = 0, pipeline_net: int | None = None, encoder_chunks: Any = 1,
    raise_infeasible: bool = True,
) -> dict[str, np.ndarray]:
    """Serve ``batch`` sequences of ``prompt`` tokens, generating ``gen`` tokens each.

    Returns columns: ``ttft_s``, ``tpot_s``, ``decode_s`` (all ``gen`` steps),
    ``tokens_per_s`` (``batch*gen`` over TTFT + decode), ``decode_tokens_per_s``
    (``batch/tpot``), per-device bytes (``weight_bytes``, ``kv_bytes``, ``act_bytes``,
    ``mem_bytes``), bytes held per tier (``tier_<name>_bytes``), the decode step's split
    (``step_compute_s``, ``step_memory_s``, ``step_comm_s``), ``step_flops`` and
    ``step_bytes`` per device, and ``feasible``.  ``placement`` is ``greedy`` or ``lp``
    (one configuration); ``overlap`` is how tier transfers combine (``sum``/``max``).
    """
    datatype = canonical_dtype(datatype)
    hw = StepSystem.from_system(system, datatype, net=net, pipeline_net=pipeline_net)
    return inference_columns(model, hw, batch=batch, prompt=prompt, gen=gen, tp=tp, pp=pp,
                             bpe=float(DTYPE_BYTES[datatype]), kv_cache=kv_cache, placement=placement,
                             overlap=overlap, encoder_chunks=encoder_chunks, raise_infeasible=raise_infeasible)
