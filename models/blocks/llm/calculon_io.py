"""Read Calculon's JSON files (models, systems, executions) as they are.

Formats (see ``results/reference/calculon/README.md`` and its ``inputs/`` folder):

* model: ``hidden, feedforward, seq_size, attn_heads, attn_size, num_blocks``;
* system: ``matrix``/``vector`` (per datatype ``tflops`` and ``gflops_efficiency``),
  ``mem1``/``mem2`` (``GiB``, ``GBps``, ``MB_efficiency``), ``processing_mode`` and
  ``networks`` (``bandwidth`` GB/s, ``efficiency``, ``size``, ``latency`` s, ``ops`` with
  ``[scalar, offset]``, ``must_be_filled``, ``processor_usage``);
* execution: the 23 fields of :data:`EXECUTION_FIELDS`.

Errors name the file, the key and what is allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dse import units
from dse.errors import DseError, allowed_list
from models.blocks.llm.hardware import (
    NET_OPS,
    EfficiencyTable,
    Engine,
    MemoryTier,
    Network,
    System,
    load_json,
)
from models.blocks.llm.models import ModelShape

EXECUTION_FIELDS: tuple[str, ...] = (
    "num_procs", "tensor_par", "pipeline_par", "data_par", "tensor_par_net",
    "pipeline_par_net", "data_par_net", "batch_size", "microbatch_size",
    "datatype", "fused_activation", "attention_type", "activation_recompute",
    "pipeline_interleaving", "optimizer_sharding", "tensor_par_comm_type",
    "tensor_par_overlap", "seq_par_ag_redo", "data_par_overlap",
    "weight_offload", "activations_offload", "optimizer_offload", "training",
)

MODEL_FIELDS = ("hidden", "feedforward", "seq_size", "attn_heads", "attn_size", "num_blocks")


def _need(cfg: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in cfg:
        raise DseError(f"{where}: missing key {key!r}")
    return cfg[key]


def _num(cfg: Mapping[str, Any], key: str, where: str) -> float:
    v = _need(cfg, key, where)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise DseError(f"{where}: {key} must be a number, got {v!r}")
    return float(v)


def model_from_json(cfg: Mapping[str, Any] | str | Path, name: str | None = None) -> ModelShape:
    """A Calculon model JSON -> :class:`ModelShape` (multi-head, 51200-token vocabulary)."""
    data, stem = load_json(cfg)
    where = f"model {name or stem or '<dict>'}"
    vals = {}
    for k in MODEL_FIELDS:
        v = _need(data, k, where)
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise DseError(f"{where}: {k} must be a positive integer, got {v!r}")
        vals[k] = v
    return ModelShape(
        name=name or stem or "model",
        layers=vals["num_blocks"], hidden=vals["hidden"], ffn=vals["feedforward"],
        heads=vals["attn_heads"], kv_heads=vals["attn_heads"], head_dim=vals["attn_size"],
        vocab=51200, seq=vals["seq_size"],
        source=f"Calculon model file {name or stem or ''}".strip(),
    )


def _engines(block: Any, where: str) -> dict[str, Engine]:
    if not isinstance(block, Mapping) or not block:
        raise DseError(f"{where}: must map datatype -> {{tflops, gflops_efficiency}}")
    out = {}
    for dtype, spec in block.items():
        w = f"{where}.{dtype}"
        tflops = _num(spec, "tflops", w)
        table = EfficiencyTable.from_rows(_need(spec, "gflops_efficiency", w), 1e9)
        out[str(dtype)] = Engine(tflops * 1e12, table)
    return out


def _memory(spec: Any, name: str, kind: str, where: str) -> MemoryTier:
    if not isinstance(spec, Mapping):
        raise DseError(f"{where}: must be an object with GiB, GBps, MB_efficiency")
    return MemoryTier(
        name=name,
        capacity_bytes=_num(spec, "GiB", where) * units.GIB,
        bandwidth_Bps=_num(spec, "GBps", where) * units.GB,
        efficiency=EfficiencyTable.from_rows(_need(spec, "MB_efficiency", where), 1e6),
        kind=kind,
        source="Calculon system file",
    )


def _network(spec: Any, i: int, where: str) -> Network:
    w = f"{where}.networks[{i}]"
    if not isinstance(spec, Mapping):
        raise DseError(f"{w}: must be an object")
    ops_in = _need(spec, "ops", w)
    if not isinstance(ops_in, Mapping) or set(ops_in) != set(NET_OPS):
        raise DseError(f"{w}.ops: must have exactly {allowed_list(NET_OPS)}")
    ops = {}
    for op, pair in ops_in.items():
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise DseError(f"{w}.ops.{op}: must be [scalar, offset]")
        scalar, offset = pair
        if op == "p2p":
            if offset is not None:
                raise DseError(f"{w}.ops.p2p: offset must be null")
            offset = 0.0
        elif offset is None:
            raise DseError(f"{w}.ops.{op}: collectives need an offset")
        if not scalar or scalar <= 0:
            raise DseError(f"{w}.ops.{op}: scalar must be > 0")
        ops[op] = (float(scalar), float(offset))
    return Network(
        bandwidth_Bps=_num(spec, "bandwidth", w) * units.GB,
        efficiency=_num(spec, "efficiency", w),
        size=int(_num(spec, "size", w)),
        latency_s=_num(spec, "latency", w),
        ops=ops,
        must_be_filled=bool(_need(spec, "must_be_filled", w)),
        processor_usage=_num(spec, "processor_usage", w),
        name=f"net{i}",
    )


def system_from_json(cfg: Mapping[str, Any] | str | Path, name: str | None = None) -> System:
    """A Calculon system JSON -> :class:`System` (mem1 -> tier 0 'hbm', mem2 -> tier 1)."""
    data, stem = load_json(cfg)
    nm = name or stem or "system"
    where = f"system {nm}"
    matrix = _engines(_need(data, "matrix", where), f"{where}.matrix")
    vector = _engines(_need(data, "vector", where), f"{where}.vector")
    mem1 = _memory(_need(data, "mem1", where), "mem1", "hbm", f"{where}.mem1")
    mem2 = _memory(_need(data, "mem2", where), "mem2", "host_dram", f"{where}.mem2")
    mode = _need(data, "processing_mode", where)
    if mode not in ("roofline", "no_overlap"):
        raise DseError(f"{where}: processing_mode {mode!r} not allowed; allowed: roofline, no_overlap")
    nets = _need(data, "networks", where)
    if not isinstance(nets, list) or not nets:
        raise DseError(f"{where}: networks must be a non-empty list")
    networks = tuple(_network(n, i, where) for i, n in enumerate(nets))
    return System(nm, matrix, vector, (mem1, mem2), networks, mode, source=f"Calculon system file {nm}")


def execution_from_json(cfg: Mapping[str, Any] | str | Path) -> dict[str, Any]:
    """A Calculon execution JSON -> dict of the 23 fields (checked for presence and type)."""
    data, stem = load_json(cfg)
    where = f"execution {stem or '<dict>'}"
    missing = [k for k in EXECUTION_FIELDS if k not in data]
    extra = [k for k in data if k not in EXECUTION_FIELDS]
    if missing:
        raise DseError(f"{where}: missing {', '.join(missing)}")
    if extra:
        raise DseError(f"{where}: unknown keys {', '.join(extra)}; allowed: {allowed_list(EXECUTION_FIELDS, 30)}")
    return {k: data[k] for k in EXECUTION_FIELDS}
