"""Best-execution search against Calculon's llm-optimal-execution (optimal.csv)."""

from __future__ import annotations

import csv

import pytest

from models.blocks.llm.calculon_io import model_from_json, system_from_json
from models.blocks.llm.reference import SHIPPED
from models.blocks.llm.search import candidates, search

with (SHIPPED / "optimal.csv").open() as fh:
    OPT = [r for r in csv.DictReader(fh)]
BEST = [r for r in OPT if r["rank"] == "1"]


@pytest.mark.parametrize("row", BEST, ids=[r["search_id"] for r in BEST])
def test_best_sample_rate_matches_calculon(row: dict[str, str]) -> None:
    inputs = SHIPPED / "inputs"
    m = model_from_json(inputs / "models" / f"{row['model']}.json")
    s = system_from_json(inputs / "systems" / f"{row['system']}.json")
    res = search(m, int(row["num_procs"]), int(row["max_batch_size"]), s, row["datatype"], top_n=3)
    ref = float(row["sample_rate_samples_per_s"])
    assert abs(res.best_sample_rate / ref - 1) < 0.01
    # the same -m search visits the same configurations
    assert res.evaluated == int(row["configs_evaluated"])
    assert res.feasible == int(row["configs_feasible"])
    top3 = sorted((float(r["sample_rate_samples_per_s"]) for r in OPT if r["search_id"] == row["search_id"]),
                  reverse=True)
    assert [round(b["sample_rate"], 6) for b in res.best] == [round(x, 6) for x in top3]


def test_full_search_is_no_worse_than_mbs_break() -> None:
    inputs = SHIPPED / "inputs"
    m = model_from_json(inputs / "models" / "gpt3-175B.json")
    s = system_from_json(inputs / "systems" / "h100_80g_nvl8.json")
    a = search(m, 1031, 1031, s, mbs_break=True)
    b = search(m, 1031, 1031, s, mbs_break=False)
    assert b.best_sample_rate >= a.best_sample_rate
    assert b.evaluated >= a.evaluated


def test_candidates_respect_calculon_rules() -> None:
    inputs = SHIPPED / "inputs"
    m = model_from_json(inputs / "models" / "megatron-22B.json")
    s = system_from_json(inputs / "systems" / "a100_80g.json")
    exe, group, rank = candidates(m, 64, 512, s)
    c = exe.cols
    assert (c["tensor_par"] * c["pipeline_par"] * c["data_par"] == 64).all()
    assert (m.layers % c["pipeline_par"] == 0).all()
    assert (c["batch_size"] % c["data_par"] == 0).all()
    assert not (c["seq_par_ag_redo"] & (c["tensor_par_comm_type"] != 2)).any()
    assert not (c["activations_offload"] & (c["activation_recompute"] == 2)).any()
    assert len(group) == exe.n == len(rank)


def test_no_legal_split_is_a_clear_error() -> None:
    from dse.errors import DseError

    inputs = SHIPPED / "inputs"
    m = model_from_json(inputs / "models" / "megatron-22B.json")
    s = system_from_json(inputs / "systems" / "a100_80g.json")
    with pytest.raises(DseError, match="no legal"):
        search(m, 1031, 4, s)  # 1031 is prime: only DP=1031, above the max batch
