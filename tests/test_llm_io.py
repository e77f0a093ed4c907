"""Calculon JSON reading, the CLI and its error messages."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from dse.cli import main
from dse.errors import DseError
from models.blocks.llm.calculon_io import EXECUTION_FIELDS, execution_from_json, model_from_json, system_from_json
from models.blocks.llm.executions import Executions
from models.blocks.llm.hardware import EfficiencyTable
from models.blocks.llm.models import MODELS, get_model
from models.blocks.llm.reference import SHIPPED
from models.blocks.llm.training import ERRORS, check_feasible, evaluate

INP = SHIPPED / "inputs"
EXAMPLE = INP / "examples" / "3072_t4_p64_d12_mbs4_full.json"


def test_efficiency_table_is_calculons_piecewise_lookup() -> None:
    t = EfficiencyTable.from_rows([[128, 0.95], [16, 0.9], [1, 0.6], [0, 0.1]], 1e9)
    sizes = np.array([0, 0.5e9, 1e9, 15.9e9, 16e9, 127e9, 128e9, 1e15])
    assert list(t(sizes)) == [0.1, 0.1, 0.6, 0.6, 0.9, 0.9, 0.95, 0.95]
    with pytest.raises(DseError):
        EfficiencyTable.from_rows([[1, 0.5], [16, 0.9], [0, 0.1]], 1)


def test_readme_example_matches_calculon() -> None:
    m = model_from_json(INP / "models" / "megatron-1T.json")
    s = system_from_json(INP / "systems" / "a100_80g.json")
    st = evaluate(m, s, Executions.from_records([execution_from_json(EXAMPLE)]))
    assert abs(st["total_time"][0] - 131.9006) < 1e-3
    assert abs(st["sample_rate"][0] - 23.29) < 5e-3


def test_cli_run_json(capsys) -> None:
    rc = main(["llm", "run", str(INP / "models" / "megatron-1T.json"), str(EXAMPLE),
               str(INP / "systems" / "a100_80g.json"), "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    for k in ("batch_time_s", "sample_rate", "tier1_bytes", "tier2_bytes", "breakdown_s"):
        assert k in out
    assert abs(out["batch_time_s"] - 131.9006) < 1e-3
    assert abs(sum(out["breakdown_s"].values()) - out["batch_time_s"]) < 1e-9


def test_cli_run_text_and_search(capsys) -> None:
    assert main(["llm", "run", str(INP / "models" / "megatron-1T.json"), str(EXAMPLE),
                 str(INP / "systems" / "a100_80g.json")]) == 0
    assert "sample rate" in capsys.readouterr().out
    assert main(["llm", "search", str(INP / "models" / "gpt3-175B.json"), "1031", "1031",
                 str(INP / "systems" / "h100_80g_nvl8.json"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert abs(out["best"][0]["sample_rate"] - 58.3283) < 1e-3


def test_cli_infer_and_models(capsys) -> None:
    assert main(["llm", "infer", "llama-3-8B", str(INP / "systems" / "h100_80g_nvl8.json"), "--json",
                 "--prompt", "1024"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ttft_s"] > 0 and out["tpot_s"] > 0 and out["feasible"]
    assert main(["llm", "models"]) == 0
    assert "llama-3-70B" in capsys.readouterr().out


def _error_rows() -> list[dict[str, str]]:
    with (SHIPPED / "runs.csv").open() as fh:
        return [r for r in csv.DictReader(fh) if r["feasible"] == "false"]


def _conv(k: str, v: str):
    if v in ("true", "false"):
        return v == "true"
    try:
        return int(v)
    except ValueError:
        return v


@pytest.mark.parametrize("row", _error_rows()[:40], ids=lambda r: f"{r['run_id']}-{r['error_category']}")
def test_invalid_executions_give_calculons_error_category(row, tmp_path: Path, capsys) -> None:
    exe = {k: _conv(k, row[k]) for k in EXECUTION_FIELDS}
    p = tmp_path / "exe.json"
    p.write_text(json.dumps(exe))
    rc = main(["llm", "run", str(INP / "models" / f"{row['model']}.json"), str(p),
               str(INP / "systems" / f"{row['system']}.json")])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1
    assert err.startswith(f"error: {row['error_category']}:")


def test_capacity_message_uses_calculons_wording() -> None:
    m = model_from_json(INP / "models" / "megatron-1T.json")
    s = system_from_json(INP / "systems" / "a100_80g.json")
    exe = Executions.from_columns(tensor_par=8, pipeline_par=1, data_par=1, batch_size=8,
                                  activation_recompute="full", tensor_par_comm_type="rs_ag")
    st = evaluate(m, s, exe)
    assert ERRORS[st["error"][0]] == "mem_tier1_capacity_exceeded"
    with pytest.raises(DseError, match=r"Mem tier1 needs .* TiB but only has 80\.000 GiB"):
        check_feasible(st, exe, m, s)


def test_bad_inputs_are_one_line_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(DseError, match="invalid JSON"):
        model_from_json(bad)
    with pytest.raises(DseError, match="missing key 'hidden'"):
        model_from_json({"feedforward": 1})
    with pytest.raises(DseError, match="activation_recompute='some'"):
        Executions.from_columns(tensor_par=1, pipeline_par=1, data_par=1, batch_size=1, activation_recompute="some")
    with pytest.raises(DseError, match="unknown datatype"):
        Executions.from_columns(tensor_par=1, pipeline_par=1, data_par=1, batch_size=1, datatype="int3")
    ex = json.loads(EXAMPLE.read_text())
    ex.pop("training")
    with pytest.raises(DseError, match="missing training"):
        execution_from_json(ex)


def test_model_table() -> None:
    assert abs(get_model("llama-3-8B").params / 1e9 - 8.03) < 0.05
    assert abs(get_model("llama-3-70B").params / 1e9 - 70.6) < 0.3
    assert abs(get_model("gpt3-175B").params / 1e9 - 175) < 2
    assert get_model("llama-3-70B").attention == "grouped"
    assert get_model("lamda").name == "lamda-137B"
    for m in MODELS.values():
        assert m.source
    with pytest.raises(DseError, match="unknown model"):
        get_model("gpt-17")


def test_grouped_and_multiquery_attention_shrink_kv_projection_work() -> None:
    s = system_from_json(INP / "systems" / "h100_80g_nvl8.json")
    m = get_model("llama-3-70B")
    kw = dict(tensor_par=8, pipeline_par=1, data_par=1, batch_size=8, microbatch_size=1,
              activation_recompute="full", tensor_par_comm_type="rs_ag")
    gqa = evaluate(m, s, Executions.from_columns(**kw))
    mha = evaluate(m.with_(kv_heads=m.heads), s, Executions.from_columns(**kw))
    assert gqa["weight_space"][0] < mha["weight_space"][0]
    assert gqa["total_time"][0] < mha["total_time"][0]
