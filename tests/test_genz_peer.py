"""GenZ, a peer LLM-serving model, tabulated beside ours (results/reference/genz).

The table is a peer's output, not ground truth: these tests check that it is there, well
formed and physically plausible, and (when GenZ is installed) that GenZ still reproduces it."""

from __future__ import annotations

import csv
import math
import re
import sys
from collections import defaultdict

import pytest

from models.blocks.llm import genz_peer

CSV_PATH = genz_peer.OUT_DIR / genz_peer.CSV_NAME
README = genz_peer.OUT_DIR / "README.md"
INTS = ("tp", "batch", "input_tokens", "output_tokens")
FLOATS = ("genz_prefill_ms", "genz_decode_ms_per_token", "genz_decode_tokens_per_s", "genz_s_per_config")


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    assert CSV_PATH.exists(), "regenerate with: python -m models.blocks.llm.genz_peer"
    with CSV_PATH.open(encoding="utf-8") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == genz_peer.COLUMNS
        out = list(reader)
    for r in out:
        for k in INTS:
            r[k] = int(r[k])
        for k in FLOATS:
            r[k] = float(r[k])
    return out


def test_table_covers_the_grid(rows):
    assert 100 <= len(rows) <= len(genz_peer.grid())
    assert {r["model"] for r in rows} == set(genz_peer.GENZ_MODELS)
    assert {r["gpu"] for r in rows} == set(genz_peer.GENZ_SYSTEMS)
    assert {r["tp"] for r in rows} == {1, 2, 4, 8}
    assert {r["dtype"] for r in rows} == {"bf16"} and {r["output_tokens"] for r in rows} == {256}
    keys = [tuple(r[k] for k in genz_peer.COLUMNS[:7]) for r in rows]
    assert len(set(keys)) == len(keys)
    # 70B in bf16 (~140 GB of weights) cannot sit on one 80 GB GPU
    assert not any(r["model"] == "llama2-70b" and r["tp"] == 1 for r in rows)


def test_numbers_are_plausible(rows):
    for r in rows:
        assert all(math.isfinite(r[k]) and r[k] > 0 for k in FLOATS), r
        assert r["genz_decode_tokens_per_s"] == pytest.approx(1e3 * r["batch"] / r["genz_decode_ms_per_token"], rel=1e-9)
    big = [r for r in rows if (r["model"], r["gpu"], r["tp"], r["batch"]) == ("llama2-70b", "h100_sxm", 8, 1)]
    assert big and all(5.0 <= r["genz_decode_ms_per_token"] <= 50.0 for r in big)
    # H100 faster than A100 for the same configuration
    a100 = {tuple(r[k] for k in ("model", "tp", "batch", "input_tokens")): r for r in rows if r["gpu"] == "a100_sxm"}
    for r in rows:
        twin = a100.get(tuple(r[k] for k in ("model", "tp", "batch", "input_tokens")))
        if r["gpu"] == "h100_sxm" and twin:
            assert r["genz_prefill_ms"] < twin["genz_prefill_ms"]
            assert r["genz_decode_ms_per_token"] < twin["genz_decode_ms_per_token"]


def test_prefill_grows_with_prompt_and_throughput_with_batch(rows):
    by_prompt, by_batch = defaultdict(list), defaultdict(list)
    for r in rows:
        by_prompt[(r["model"], r["gpu"], r["tp"], r["batch"])].append((r["input_tokens"], r["genz_prefill_ms"]))
        by_batch[(r["model"], r["gpu"], r["tp"], r["input_tokens"])].append((r["batch"], r["genz_decode_tokens_per_s"]))
    for series in (*by_prompt.values(), *by_batch.values()):
        ys = [y for _, y in sorted(series)]
        assert all(b > a for a, b in zip(ys, ys[1:])), series


def test_readme_says_what_it_is(rows):
    text = README.read_text(encoding="utf-8")
    assert "not a measurement" in text and "python -m models.blocks.llm.genz_peer" in text
    assert re.search(r"genz-llm \d+\.\d+\.\d+", text)
    assert f"{len(rows)} rows" in text


def _table_version() -> str:
    m = re.search(r"genz-llm (\d+\.\d+\.\d+)", README.read_text(encoding="utf-8"))
    assert m
    return m.group(1)


def test_live_genz_reproduces_a_row(rows):
    pytest.importorskip("GenZ", reason="GenZ is not installed: pip install genz-llm")
    if genz_peer.genz_version() != _table_version():
        pytest.skip(f"table made with genz-llm {_table_version()}, installed {genz_peer.genz_version()}: regenerate it")
    want = next(r for r in rows if (r["model"], r["gpu"], r["tp"], r["batch"], r["input_tokens"])
                == ("llama2-70b", "h100_sxm", 8, 1, 2048))
    cfg = {k: want[k] for k in genz_peer.COLUMNS[:7]}
    got, unfit = genz_peer.genz_rows([cfg, dict(cfg, tp=1)])
    assert got["fits"] and not unfit["fits"] and "not fit" in unfit["genz_error"]
    for k in FLOATS[:3]:
        assert got[k] == pytest.approx(want[k], rel=1e-6), k


def test_clear_error_without_genz(monkeypatch):
    monkeypatch.setitem(sys.modules, "GenZ", None)  # makes `import GenZ` fail
    assert not genz_peer.available()
    with pytest.raises(ImportError, match="pip install genz-llm"):
        genz_peer.genz_rows([])
    with pytest.raises(SystemExit, match="pip install genz-llm"):
        genz_peer.main()
    from dse import bench

    (row,) = bench.peer_rows(0.01, only="genz.")
    assert row.kind == "peer" and row.rate_per_s == 0 and "pip install genz-llm" in row.detail
