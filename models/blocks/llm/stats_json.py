"""Calculon's stats JSON (``calculon llm ... stats.json``) from this block's values.

:func:`calculon_stats` returns a dict with exactly the keys, in the order, of Calculon's
``Llm.get_stats_json(False)`` (:data:`CALCULON_STATS_KEYS`, the 96 keys of the commit in
``results/reference/calculon/README.md``), so a Calculon user can diff the two files key by
key.  Per-block values (``block_*``, ``baseblock_*``, ``edgeblock_*``) are for one block
and one microbatch; the others are for processor 0 and one global batch, as in Calculon.
Units are Calculon's: seconds, bytes, flops, bytes/s.

A key whose quantity this block does not compute is ``null``; one more top-level key,
:data:`MARKER` (``"cxl_dse"``), says which keys are null and why, and marks the file as
written by this tool (:func:`write_stats` overwrites only such files).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dse import jsonsafe, store
from dse.errors import DseError

MARKER = "cxl_dse"

#: Calculon's stats keys, in its order (``Llm.get_stats_fields()``).
CALCULON_STATS_KEYS: tuple[str, ...] = (
    "block_fw_flops", "block_fw_flops_time", "block_fw_mem_accessed", "block_fw_mem_time", "block_fw_time",
    "baseblock_fw_tp_time", "edgeblock_fw_tp_time", "baseblock_fw_tp_time_exposed", "edgeblock_fw_tp_time_exposed",
    "block_re_flops", "block_re_flops_time", "block_re_mem_accessed", "block_re_mem_time", "block_re_time",
    "baseblock_recomm_time", "edgeblock_recomm_time", "baseblock_recomm_time_exposed",
    "edgeblock_recomm_time_exposed",
    "block_agrad_flops", "block_agrad_flops_time", "block_agrad_mem_accessed", "block_agrad_mem_time",
    "block_agrad_time", "baseblock_agrad_tp_time", "edgeblock_agrad_tp_time", "baseblock_agrad_tp_time_exposed",
    "edgeblock_agrad_tp_time_exposed",
    "block_wgrad_flops", "block_wgrad_flops_time", "block_wgrad_mem_accessed", "block_wgrad_mem_time",
    "block_wgrad_time",
    "block_optim_flops", "block_optim_flops_time", "block_optim_mem_accessed", "block_optim_mem_time",
    "block_optim_time",
    "baseblock_fw_tp_size", "edgeblock_fw_tp_size", "baseblock_bw_tp_size", "edgeblock_bw_tp_size",
    "baseblock_recomm_size", "edgeblock_recomm_size", "block_fw_pp_size", "block_bw_pp_size", "block_dp_size",
    "tp_bw_overlap_req", "dp_bw_overlap_req_chunk", "dp_bw_overlap_req_tail",
    "block_weight_space", "block_act_working_space", "block_act_storage_space", "block_act_checkpoint_size",
    "block_weight_grad_space", "block_weight_grad_space_no_sharding", "block_act_grad_space",
    "block_optimizer_space",
    "weight_space_with_offload", "act_space_with_offload", "act_checkpoint_size_with_offload",
    "act_grad_space_with_offload", "weight_grad_space_with_offload", "optimizer_space_with_offload",
    "weight_space", "act_space", "act_checkpoint_size", "act_grad_space", "weight_grad_space", "optimizer_space",
    "fw_time", "bw_time", "optim_step_time", "recompute_time", "recomm_link_time", "recomm_exposed_time",
    "bubble_time", "tp_comm_link_time", "pp_comm_link_time", "dp_comm_link_time", "tp_comm_exposed_time",
    "pp_comm_exposed_time", "dp_comm_exposed_time", "fw_offload_exposed_time", "bw_offload_exposed_time",
    "total_time", "act_offload_bw_req", "weight_offload_bw_req", "optim_offload_bw_req", "offload_mem_bw_req",
    "proc_mem_tier1_cap_req", "proc_mem_tier2_cap_req", "useful_flops", "compute_efficiency",
    "system_efficiency", "total_efficiency", "sample_rate",
)

#: keys this block does not compute -> why (they are written as null)
NOT_MODELLED: dict[str, str] = {
    **{k: "not modelled: the block costs TP communication time per block but does not report its message bytes"
       for k in ("baseblock_fw_tp_size", "edgeblock_fw_tp_size", "baseblock_bw_tp_size", "edgeblock_bw_tp_size",
                 "baseblock_recomm_size", "edgeblock_recomm_size")},
    "tp_bw_overlap_req": "not modelled: the network bandwidth needed to hide TP communication is not computed",
    "dp_bw_overlap_req_chunk": "not modelled: the network bandwidth needed to hide DP communication is not computed",
    "dp_bw_overlap_req_tail": "not modelled: the network bandwidth needed to hide DP communication is not computed",
}

#: our block-accumulator name (:func:`models.blocks.llm.training.block_stats`) per Calculon key
_BLOCK: dict[str, str] = {
    "block_fw_flops": "fw_flops", "block_fw_flops_time": "fw_ft", "block_fw_mem_accessed": "fw_mem",
    "block_fw_mem_time": "fw_mt", "block_fw_time": "fw_time",
    "baseblock_fw_tp_time": "fw_tp_b", "edgeblock_fw_tp_time": "fw_tp_e",
    "baseblock_fw_tp_time_exposed": "fw_exp_b", "edgeblock_fw_tp_time_exposed": "fw_exp_e",
    "block_re_flops": "re_flops", "block_re_flops_time": "re_ft", "block_re_mem_accessed": "re_mem",
    "block_re_mem_time": "re_mt", "block_re_time": "re_time",
    "baseblock_recomm_time": "recomm_b", "edgeblock_recomm_time": "recomm_e",
    "baseblock_recomm_time_exposed": "recomm_exp_b", "edgeblock_recomm_time_exposed": "recomm_exp_e",
    "block_agrad_flops": "ag_flops", "block_agrad_flops_time": "ag_ft", "block_agrad_mem_accessed": "ag_mem",
    "block_agrad_mem_time": "ag_mt", "block_agrad_time": "ag_time",
    "baseblock_agrad_tp_time": "ag_tp_b", "edgeblock_agrad_tp_time": "ag_tp_e",
    "baseblock_agrad_tp_time_exposed": "ag_exp_b", "edgeblock_agrad_tp_time_exposed": "ag_exp_e",
    "block_wgrad_flops": "wg_flops", "block_wgrad_flops_time": "wg_ft", "block_wgrad_mem_accessed": "wg_mem",
    "block_wgrad_mem_time": "wg_mt", "block_wgrad_time": "wg_time",
    "block_optim_flops": "op_flops", "block_optim_flops_time": "op_ft", "block_optim_mem_accessed": "op_mem",
    "block_optim_mem_time": "op_mt", "block_optim_time": "op_time",
    "block_weight_space": "weight", "block_act_working_space": "act_work", "block_act_storage_space": "act_store",
    "block_weight_grad_space": "w_grad", "block_weight_grad_space_no_sharding": "w_grad_ns",
    "block_act_grad_space": "act_grad", "block_optimizer_space": "optim",
}

#: our :func:`models.blocks.llm.training.evaluate` column per Calculon key (same quantity)
_BATCH: dict[str, str] = {
    **{k: k for k in (
        "weight_space", "act_space", "act_checkpoint_size", "act_grad_space", "weight_grad_space", "optimizer_space",
        "fw_time", "bw_time", "optim_step_time", "recompute_time", "recomm_link_time", "recomm_exposed_time",
        "bubble_time", "tp_comm_link_time", "pp_comm_link_time", "dp_comm_link_time", "tp_comm_exposed_time",
        "pp_comm_exposed_time", "dp_comm_exposed_time", "fw_offload_exposed_time", "bw_offload_exposed_time",
        "total_time", "act_offload_bw_req", "weight_offload_bw_req", "optim_offload_bw_req", "useful_flops",
        "compute_efficiency", "system_efficiency", "total_efficiency", "sample_rate")},
    "offload_mem_bw_req": "offload_bw_req",
    "proc_mem_tier1_cap_req": "mem_tier1_bytes",
    "proc_mem_tier2_cap_req": "mem_tier2_bytes",
}

_FORWARD_ONLY_NULL = "null as in Calculon: no activation checkpoints in a forward-only run (training=false)"


def _scalar(x: Any) -> float:
    return float(np.asarray(x).reshape(-1)[0])


def calculon_stats(model: Any, system: Any, execution: Mapping[str, Any]) -> dict[str, Any]:
    """Calculon's stats dict for one (model, system, execution), plus the :data:`MARKER` entry.

    ``execution`` is the 23-field dict of a Calculon execution JSON.  Raises
    :class:`DseError` (one line, Calculon's message where it has one) when the execution
    is infeasible: Calculon writes no stats then either.
    """
    from models.blocks.llm.executions import Executions
    from models.blocks.llm.training import batch_stats, block_stats, check_feasible, prepare

    exe = Executions.from_records([dict(execution)])
    rows = prepare(model, system, exe)
    blk = block_stats(rows)
    st = batch_stats(blk, rows)
    check_feasible(st, exe, model, system)
    e = exe.record(0)
    training = bool(e["training"])
    full = e["activation_recompute"] == "full"
    comm = e["tensor_par_comm_type"]
    tp, pp, dp = int(e["tensor_par"]), int(e["pipeline_par"]), int(e["data_par"])
    b = {k: _scalar(v) for k, v in blk.items()}
    v: dict[str, Any] = {k: None for k in CALCULON_STATS_KEYS}
    for key, ours in _BLOCK.items():
        v[key] = b[ours]
    for key, ours in _BATCH.items():
        v[key] = _scalar(st[ours])

    # derived from the execution and the block's values, as Calculon defines them
    from models.blocks.llm.hardware import DTYPE_BYTES

    bpe = float(DTYPE_BYTES[str(e["datatype"])])
    tokens = int(e["microbatch_size"]) * int(model.seq)
    hidden = int(model.hidden)
    ckpt = float(tokens * hidden * bpe) if (training and full) else 0.0
    v["block_act_checkpoint_size"] = ckpt
    # pipeline message: the activation of one microbatch, 1/TP of it with sequence parallelism
    pp_elems = (tokens // max(tp, 1) if comm != "ar" else tokens) * hidden
    v["block_fw_pp_size"] = pp_elems * bpe if pp > 1 else 0.0
    v["block_bw_pp_size"] = v["block_fw_pp_size"] if training else 0.0
    v["block_dp_size"] = b["weight"] if (training and dp > 1) else 0.0
    # what tier 1 keeps of each part when that part is offloaded (two blocks' worth)
    v["weight_space_with_offload"] = 2 * b["weight"]
    v["act_space_with_offload"] = b["act_work"] + (0.0 if full else b["act_store"])
    v["act_checkpoint_size_with_offload"] = 2 * ckpt if training else None
    v["act_grad_space_with_offload"] = b["act_grad"]
    v["weight_grad_space_with_offload"] = b["w_grad_ns"] + b["w_grad"] if training else 0.0
    v["optimizer_space_with_offload"] = 2 * b["optim"]

    null: dict[str, str] = {}
    for k in CALCULON_STATS_KEYS:
        x = v[k]
        if k in NOT_MODELLED:
            v[k] = None
            null[k] = NOT_MODELLED[k]
        elif x is None:
            null[k] = _FORWARD_ONLY_NULL
        elif not math.isfinite(x):
            v[k] = None
            null[k] = f"not a finite number ({x}); JSON has none"
    out = dict(v)
    out[MARKER] = {
        "tool": "cxl-dse (dse llm run --out)",
        "format": "Calculon llm stats JSON (get_stats_json, no layers); every Calculon key is present",
        "model": getattr(model, "name", ""), "system": getattr(system, "name", ""),
        "execution": e,
        "keys_filled": len(CALCULON_STATS_KEYS) - len(null),
        "keys_null": len(null),
        "null_keys": null,
    }
    return out


def _written_by_us(path: Path) -> bool:
    try:
        with path.open() as fh:
            data = json.load(fh)
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and isinstance(data.get(MARKER), dict)


def check_target(path: Path | str) -> Path:
    """The output path if it may be written: not a folder, its folder exists, and it is
    either new or a stats file this tool wrote (:data:`MARKER`).  Else a one-line DseError."""
    p = Path(path)
    if p.is_dir():
        raise DseError(f"--out {p}: is a folder; give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise DseError(f"--out {p}: folder {parent} does not exist")
    if p.exists() and not _written_by_us(p):
        raise DseError(f"--out {p}: exists and was not written by dse (no {MARKER!r} key); not overwritten")
    return p


def write_stats(path: Path | str, stats: Mapping[str, Any]) -> Path:
    """Write ``stats`` as JSON to ``path`` atomically (temporary file in the same folder,
    then ``os.replace``), after :func:`check_target`."""
    p = check_target(path)
    text = jsonsafe.dumps(dict(stats)) + "\n"
    store.atomic_write_text(p, text)
    return p
