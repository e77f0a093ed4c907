"""``dse llm run ... --out FILE``: Calculon's stats JSON, every one of its keys.

The expected values below are Calculon's own ``get_stats_json`` output (commit in
``results/reference/calculon/README.md``) for two shipped reference runs of ``runs.csv``:
302 (gpt3-175B training, TP8 PP2 DP4, weight/activation/optimizer offload to a 1 TiB,
64 GB/s second tier) and 308 (the same layout forward-only with weight offload).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from dse.cli import main
from models.blocks.llm.calculon_io import EXECUTION_FIELDS
from models.blocks.llm.executions import BOOL_FIELDS, INT_FIELDS
from models.blocks.llm.reference import SHIPPED
from models.blocks.llm.stats_json import CALCULON_STATS_KEYS, MARKER, NOT_MODELLED

INP = SHIPPED / "inputs"

# Calculon's stats for runs.csv run_id 302 and 308 (its key order; None where Calculon writes null)
CALCULON: dict[str, dict[str, object]] = {
    "302": {
        "block_fw_flops": 953954598912, "block_fw_flops_time": 0.0033425801017004046,
        "block_fw_mem_accessed": 1554087936, "block_fw_mem_time": 0.0008690986666666666,
        "block_fw_time": 0.004566981293670239, "baseblock_fw_tp_time": 0.0014007290092307692,
        "edgeblock_fw_tp_time": 0.0014007290092307692, "baseblock_fw_tp_time_exposed": 0.00019931968156862754,
        "edgeblock_fw_tp_time_exposed": 0.00019931968156862754, "block_re_flops": 735077990400,
        "block_re_flops_time": 0.0026358101609716598, "block_re_mem_accessed": 1579302912,
        "block_re_mem_time": 0.0008609386666666666, "block_re_time": 0.00041474625641025643,
        "baseblock_recomm_time": 0.00034877070769230773, "edgeblock_recomm_time": 0.00034877070769230773,
        "baseblock_recomm_time_exposed": 4.359633846153847e-05, "edgeblock_recomm_time_exposed": 4.359633846153847e-05,
        "block_agrad_flops": 979988643840, "block_agrad_flops_time": 0.003422343575204678,
        "block_agrad_mem_accessed": 1428258816, "block_agrad_mem_time": 0.0008008319999999999,
        "block_agrad_time": 0.004578848630969384, "baseblock_agrad_tp_time": 0.0014007290092307694,
        "edgeblock_agrad_tp_time": 0.0014007290092307694, "baseblock_agrad_tp_time_exposed": 0.00019684947849170443,
        "edgeblock_agrad_tp_time_exposed": 0.00019684947849170443, "block_wgrad_flops": 927756976128,
        "block_wgrad_flops_time": 0.003150072302726046, "block_wgrad_mem_accessed": 591495168,
        "block_wgrad_mem_time": 0.000329792, "block_wgrad_time": 0.0035692367965721996,
        "block_optim_flops": 622989312.0,
        "block_optim_flops_time": 7.987042461538462e-05, "block_optim_mem_accessed": 679624704.0,
        "block_optim_mem_time": 0.00037502399999999995, "block_optim_time": 0.0004548944246153846,
        "baseblock_fw_tp_size": 201326592, "edgeblock_fw_tp_size": 201326592, "baseblock_bw_tp_size": 201326592,
        "edgeblock_bw_tp_size": 201326592, "baseblock_recomm_size": 50331648, "edgeblock_recomm_size": 50331648,
        "block_fw_pp_size": 6291456, "block_bw_pp_size": 6291456, "block_dp_size": 453083136,
        "tp_bw_overlap_req": 155390625000.0, "dp_bw_overlap_req_chunk": 0, "dp_bw_overlap_req_tail": 46570676052.61492,
        "block_weight_space": 453083136, "block_act_working_space": 333447168, "block_act_storage_space": 81788928,
        "block_act_checkpoint_size": 0, "block_weight_grad_space": 113270784.0,
        "block_weight_grad_space_no_sharding": 906166272, "block_act_grad_space": 358612992,
        "block_optimizer_space": 679624704.0, "weight_space_with_offload": 906166272,
        "act_space_with_offload": 415236096, "act_checkpoint_size_with_offload": 0,
        "act_grad_space_with_offload": 358612992, "weight_grad_space_with_offload": 1019437056.0,
        "optimizer_space_with_offload": 1359249408.0, "weight_space": 21747990528, "act_space": 8103395328,
        "act_checkpoint_size": 0, "act_grad_space": 358612992, "weight_grad_space": 6229893120.0,
        "optimizer_space": 32621985792.0, "fw_time": 14.029766534154973, "bw_time": 25.030918433407745,
        "optim_step_time": 0.021834932381538462, "recompute_time": 1.2741004996923078,
        "recomm_link_time": 1.0714236140307694, "recomm_exposed_time": 0.13392795175384617,
        "bubble_time": 1.4124971385263159, "tp_comm_link_time": 8.606079032713847,
        "pp_comm_link_time": 0.038351394133333334, "dp_comm_link_time": 1.9350747135999997,
        "tp_comm_exposed_time": 1.2170316597053399, "pp_comm_exposed_time": 0.038351394133333334,
        "dp_comm_exposed_time": 1.0391762162821812, "fw_offload_exposed_time": 10.901240419420587,
        "bw_offload_exposed_time": 37.77447997341608, "total_time": 92.87332515287426,
        "act_offload_bw_req": 20986574861.689598, "weight_offload_bw_req": 116258561944.14346,
        "optim_offload_bw_req": 103340452935.41122, "offload_mem_bw_req": 158289015378.67377,
        "proc_mem_tier1_cap_req": 4058701824.0, "proc_mem_tier2_cap_req": 67910369280.0,
        "useful_flops": 2862323208192.0,
        "compute_efficiency": 0.721112014717231, "system_efficiency": 0.42081533998715376,
        "total_efficiency": 0.30345499764205297, "sample_rate": 2.756442709234442,
    },
    "308": {
        "block_fw_flops": 953998639104.0, "block_fw_flops_time": 0.0033916976090688257,
        "block_fw_mem_accessed": 2057404416, "block_fw_mem_time": 0.0011728853333333332,
        "block_fw_time": 0.004340483430607288, "baseblock_fw_tp_time": 0.0016191823425641028,
        "edgeblock_fw_tp_time": 0.0016191823425641028, "baseblock_fw_tp_time_exposed": 0.0016191823425641028,
        "edgeblock_fw_tp_time_exposed": 0.0016191823425641028, "block_re_flops": 0, "block_re_flops_time": 0,
        "block_re_mem_accessed": 0, "block_re_mem_time": 0, "block_re_time": 0, "baseblock_recomm_time": 0,
        "edgeblock_recomm_time": 0, "baseblock_recomm_time_exposed": 0, "edgeblock_recomm_time_exposed": 0,
        "block_agrad_flops": 0, "block_agrad_flops_time": 0, "block_agrad_mem_accessed": 0, "block_agrad_mem_time": 0,
        "block_agrad_time": 0, "baseblock_agrad_tp_time": 0, "edgeblock_agrad_tp_time": 0,
        "baseblock_agrad_tp_time_exposed": 0, "edgeblock_agrad_tp_time_exposed": 0, "block_wgrad_flops": 0,
        "block_wgrad_flops_time": 0, "block_wgrad_mem_accessed": 0, "block_wgrad_mem_time": 0, "block_wgrad_time": 0,
        "block_optim_flops": 0, "block_optim_flops_time": 0, "block_optim_mem_accessed": 0, "block_optim_mem_time": 0,
        "block_optim_time": 0, "baseblock_fw_tp_size": 201326592, "edgeblock_fw_tp_size": 201326592,
        "baseblock_bw_tp_size": 0, "edgeblock_bw_tp_size": 0, "baseblock_recomm_size": 0, "edgeblock_recomm_size": 0,
        "block_fw_pp_size": 6291456, "block_bw_pp_size": 0, "block_dp_size": 0, "tp_bw_overlap_req": 0,
        "dp_bw_overlap_req_chunk": 0, "dp_bw_overlap_req_tail": 0, "block_weight_space": 453083136,
        "block_act_working_space": 446693376.0, "block_act_storage_space": 635437056.0, "block_act_checkpoint_size": 0,
        "block_weight_grad_space": 0, "block_weight_grad_space_no_sharding": 0, "block_act_grad_space": 0,
        "block_optimizer_space": 0, "weight_space_with_offload": 906166272, "act_space_with_offload": 1082130432.0,
        "act_checkpoint_size_with_offload": None, "act_grad_space_with_offload": 0, "weight_grad_space_with_offload": 0,
        "optimizer_space_with_offload": 0, "weight_space": 21747990528, "act_space": 446693376.0,
        "act_checkpoint_size": 0, "act_grad_space": 0, "weight_grad_space": 0, "optimizer_space": 0,
        "fw_time": 3.3334912747063967, "bw_time": 0, "optim_step_time": 0, "recompute_time": 0, "recomm_link_time": 0,
        "recomm_exposed_time": 0, "bubble_time": 0.41401570863157894, "tp_comm_link_time": 1.2435320390892308,
        "pp_comm_link_time": 0.004793924266666667, "dp_comm_link_time": 0, "tp_comm_exposed_time": 1.2435320390892308,
        "pp_comm_exposed_time": 0.004793924266666667, "dp_comm_exposed_time": 0,
        "fw_offload_exposed_time": 2.042114100042968, "bw_offload_exposed_time": 0, "total_time": 7.037947046736841,
        "act_offload_bw_req": 132748318830.66222, "weight_offload_bw_req": 94653001468.21198, "optim_offload_bw_req": 0,
        "offload_mem_bw_req": 94653001468.21198, "proc_mem_tier1_cap_req": 1352859648.0,
        "proc_mem_tier2_cap_req": 21747990528, "useful_flops": 953998639104.0, "compute_efficiency": 0.7044579238074283,
        "system_efficiency": 0.47364540434443547, "total_efficiency": 0.3336632581654109,
        "sample_rate": 9.093560888565328,
    },
}


def _row(run_id: str) -> dict[str, str]:
    with (SHIPPED / "runs.csv").open(newline="") as fh:
        return next(r for r in csv.DictReader(fh) if r["run_id"] == run_id)


def _args(tmp_path: Path, run_id: str) -> list[str]:
    """``dse llm run`` arguments (model, execution, system) of a shipped reference run."""
    r = _row(run_id)
    exe = {}
    for k in EXECUTION_FIELDS:
        v = r[k]
        exe[k] = int(v) if k in INT_FIELDS else (v == "true") if k in BOOL_FIELDS else v
    f = tmp_path / f"exe_{run_id}.json"
    f.write_text(json.dumps(exe))
    return ["llm", "run", str(INP / "models" / f"{r['model']}.json"), str(f),
            str(INP / "systems" / f"{r['system']}.json")]


def _write(tmp_path: Path, run_id: str, out: Path) -> int:
    return main([*_args(tmp_path, run_id), "--out", str(out)])


def _keys(obj: object, prefix: str = "") -> set[str]:
    """Every key path of a JSON value, recursively."""
    if isinstance(obj, dict):
        return {p for k, v in obj.items() for p in {prefix + k} | _keys(v, prefix + k + ".")}
    if isinstance(obj, list):
        return {p for i, v in enumerate(obj) for p in _keys(v, f"{prefix}{i}.")}
    return set()


def test_key_list_is_calculons() -> None:
    for want in CALCULON.values():
        assert tuple(want) == CALCULON_STATS_KEYS
    assert len(CALCULON_STATS_KEYS) == 96


@pytest.mark.parametrize("run_id", ["302", "308"])
def test_stats_json_has_calculons_keys_and_values(tmp_path: Path, run_id: str, capsys) -> None:
    out = tmp_path / "stats.json"
    assert _write(tmp_path, run_id, out) == 0
    assert "keys filled" in capsys.readouterr().err
    ours = json.loads(out.read_text())  # round-trips with json.load
    want = CALCULON[run_id]
    info = ours.pop(MARKER)
    # exactly Calculon's keys (recursively), in its order
    assert _keys(ours) == _keys(want)
    assert list(ours) == list(want)
    # null keys: the ones we do not model, plus those Calculon itself writes as null
    nulls = {k for k, v in ours.items() if v is None}
    assert nulls == set(info["null_keys"])
    assert set(NOT_MODELLED) <= nulls
    assert nulls - set(NOT_MODELLED) == {k for k, v in want.items() if v is None}
    assert all("not modelled" in info["null_keys"][k] for k in NOT_MODELLED)
    assert info["keys_filled"] + info["keys_null"] == len(CALCULON_STATS_KEYS)
    assert info["keys_null"] == len(nulls)
    # every value we fill agrees with Calculon (the block reproduces these runs to rounding;
    # reference.py's MAPE over all shipped runs is far below the few % allowed for batch time)
    for k, v in ours.items():
        if v is not None:
            assert v == pytest.approx(want[k], rel=1e-6, abs=1e-12), k
    assert ours["total_time"] == pytest.approx(float(_row(run_id)["total_time_s"]), rel=1e-6)
    assert ours["sample_rate"] == pytest.approx(float(_row(run_id)["sample_rate_samples_per_s"]), rel=1e-6)
    assert info["execution"]["training"] is (run_id == "302")


def test_counts_of_filled_and_null_keys(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    assert _write(tmp_path, "302", out) == 0
    info = json.loads(out.read_text())[MARKER]
    assert (info["keys_filled"], info["keys_null"]) == (87, 9)
    assert _write(tmp_path, "308", out) == 0  # overwrites a file this tool wrote
    info = json.loads(out.read_text())[MARKER]
    assert (info["keys_filled"], info["keys_null"]) == (86, 10)  # + act_checkpoint_size_with_offload
    assert "act_checkpoint_size_with_offload" in info["null_keys"]


def test_refusals_write_nothing(tmp_path: Path, capsys) -> None:
    args = _args(tmp_path, "302")
    before = sorted(p.name for p in tmp_path.iterdir())
    # a folder
    assert main([*args, "--out", str(tmp_path)]) == 2
    # a missing parent folder
    assert main([*args, "--out", str(tmp_path / "no" / "s.json")]) == 2
    assert not (tmp_path / "no").exists()
    # an existing file this tool did not write (JSON without the marker, and not JSON)
    foreign = tmp_path / "calculon_stats.json"
    foreign.write_text(json.dumps({"total_time": 1.0}))
    other = tmp_path / "notes.txt"
    other.write_text("keep me\n")
    assert main([*args, "--out", str(foreign)]) == 2
    assert main([*args, "--out", str(other)]) == 2
    assert json.loads(foreign.read_text()) == {"total_time": 1.0}
    assert other.read_text() == "keep me\n"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("error: --out ") for line in err)
    # nothing else appeared (no temporary files left behind)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before + [foreign.name, other.name])


def test_infeasible_run_writes_nothing(tmp_path: Path, capsys) -> None:
    # run 282: Calculon refuses it ("Mem tier1 needs 329.836 GiB but only has 80.000 GiB")
    assert _row("282")["error_category"] == "mem_tier1_capacity_exceeded"
    out = tmp_path / "s.json"
    assert _write(tmp_path, "282", out) == 2
    assert "Mem tier1 needs 329.836 GiB" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exe_282.json"]


def test_json_stdout_unchanged_with_out(tmp_path: Path, capsys) -> None:
    out = tmp_path / "s.json"
    assert main([*_args(tmp_path, "302"), "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    written = json.loads(out.read_text())
    assert printed["batch_time_s"] == written["total_time"]
    assert printed["tier1_bytes"] == written["proc_mem_tier1_cap_req"]
