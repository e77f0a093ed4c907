"""`dse llm search`: counts, MFU/HFU, memory, fixed dimensions, time limit and bad input."""

from __future__ import annotations

import json

import pytest

from dse.cli import main
from models.blocks.llm.reference import SHIPPED

SYS = str(SHIPPED / "inputs" / "systems" / "a100_80g.json")


def _search(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["llm", "search", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_json_has_counts_utilization_and_memory(capsys) -> None:
    rc, out, _ = _search(capsys, "turing-530B", "5128", "2520", SYS, "--json", "--top", "3")
    assert rc == 0
    res = json.loads(out)
    assert (res["configs"], res["evaluated"], res["feasible"]) == (10944, 8112, 1080)  # Calculon's S1 counts
    assert res["pruned"] + res["exact_evaluations"] == res["feasible"] and res["complete"] and res["note"] == ""
    assert len(res["best"]) == 3
    b = res["best"][0]
    assert abs(b["sample_rate"] - 111.1605) < 1e-3
    assert 0.4 < b["mfu"] <= b["hfu"] < 1
    tiers = b["memory"]["tiers"]
    assert tiers[0]["used_bytes"] <= tiers[0]["capacity_bytes"] and tiers[1]["tier"] == 2
    assert set(b["memory"]["breakdown_bytes"]) >= {"weight_space", "optimizer_space"}


def test_text_table_and_fixed_dimensions(capsys) -> None:
    rc, out, _ = _search(capsys, "gpt3-175B", "1024", "1536", SYS, "--tp", "8", "--pp", "4", "--top", "2")
    assert rc == 0
    assert "MFU" in out and "HFU" in out and "pruned on their bound" in out and "memory per processor" in out
    rows = [ln.split() for ln in out.splitlines() if ln[:2] in ("1 ", "2 ")]
    assert len(rows) == 2 and all(r[5:7] == ["8", "4"] for r in rows)


def test_time_limit_says_not_proven(capsys) -> None:
    rc, out, _ = _search(capsys, "gpt3-175B", "512", "512", SYS, "--max-seconds", "0", "--json")
    res = json.loads(out)
    assert rc == 0 and not res["complete"] and "not proven optimal" in res["note"] and res["best"]


@pytest.mark.parametrize(("args", "needle"), [
    # a prime processor count: only DP=1031, above the batch; the nearest counts that split
    (["megatron-22B", "1031", "4"], "no legal .*DP=1031.*processor count that splits: 1024"),
    # TP 8 and DP 1 leave PP = 128, more than the 96 blocks
    (["gpt3-175B", "1024", "1536", "--tp", "8", "--dp", "1"], "no legal .*nearest processor counts that work: \\d+"),
    (["gpt3-175B", "1024", "1536", "--tp", "3"], "--tp 3 must divide .* 96 attention heads.*legal TP: 1, 2, 4, 8, 16, 32"),
    (["gpt3-175B", "1024", "1536", "--pp", "5"], "--pp 5 must divide the 96 blocks.*legal PP: 1, 2, 4"),
    (["gpt3-175B", "1024", "1536", "--dp", "3"], "--dp 3 must divide 1024.*legal DP: 1, 2, 4"),
    (["gpt3-175B", "1024", "8", "--dp", "16"], "max batch 8 is below --dp 16.*at least 16"),
    (["gpt3-175B", "1024", "1536", "--tp", "8", "--pp", "4", "--dp", "16"], "= 512, which is not the 1024"),
    (["gpt3-175B", "0", "8"], "must be positive"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args: list[str], needle: str) -> None:
    import re

    rc, out, err = _search(capsys, *args[:3], SYS, *args[3:])
    assert rc == 2 and out == ""
    line = err.strip()
    assert line.startswith("error: ") and "\n" not in line
    assert re.search(needle, line), line


def test_batch_below_every_dp_names_the_smallest(capsys) -> None:
    # 1031 is prime and shares no factor with megatron-22B's heads or blocks: only TP=PP=1
    rc, _, err = _search(capsys, "megatron-22B", "1031", "1000", SYS)
    assert rc == 2 and "smallest data parallelism DP=1031" in err and "at least 1031" in err


def test_bench_search_rows_report_time_and_memory(monkeypatch) -> None:
    from dse import bench

    monkeypatch.setattr(bench, "LLM_SEARCH_CASES", bench.LLM_SEARCH_CASES[-1:])  # the README search only
    (row,) = bench.llm_search_rows()
    assert row.kind == "search" and "turing-530B" in row.name and row.meets
    assert "peak RSS" in row.detail and "10,944 configs" in row.detail
