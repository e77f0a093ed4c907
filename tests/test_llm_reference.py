"""The LLM block against Calculon's own outputs (results/reference/calculon)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from models.blocks.llm.reference import SHIPPED, check_reference, comparison_table, evaluate_rows, summarize
from models.blocks.llm.training import TIME_PARTS

RUNS = SHIPPED / "runs.csv"


@pytest.fixture(scope="module")
def table() -> pl.DataFrame:
    t, _, _ = check_reference(RUNS)
    return t


def test_batch_time_median_error_within_10pct(table: pl.DataFrame) -> None:
    s = summarize(table)
    assert s["both_feasible"] >= 350
    assert s["median_abs_time_err_pct"] < 10.0
    # the method is Calculon's, so the agreement is in fact exact up to rounding
    assert s["mape_time_pct"] < 1e-6
    assert s["max_abs_time_err_pct"] < 1e-6


def test_tier_memory_within_10pct(table: pl.DataFrame) -> None:
    s = summarize(table)
    assert s["median_abs_tier1_err_pct"] < 10.0
    assert s["mean_abs_tier1_err_pct"] < 10.0
    assert s["mean_abs_tier2_err_pct"] < 10.0
    # capacity failures keep Calculon's requirement too
    cap = table.filter(pl.col("calculon_error").str.starts_with("mem_tier"))
    assert cap.height > 0
    assert np.allclose(cap["ours_tier1_bytes"].to_numpy(), cap["calculon_tier1_bytes"].to_numpy(), rtol=1e-9)


def test_feasibility_agrees_on_95pct(table: pl.DataFrame) -> None:
    s = summarize(table)
    assert s["feasibility_agreement_pct"] >= 95.0
    assert s["error_category_agreement_pct"] >= 95.0


def test_check_reference_signature() -> None:
    t, mape, n = check_reference(RUNS)
    assert isinstance(t, pl.DataFrame)
    assert {"run_id", "ours_time_s", "calculon_time_s", "ours_tier1_bytes", "calculon_tier1_bytes",
            "feasibility_agree"} <= set(t.columns)
    assert n == t.filter(pl.col("calculon_feasible") & pl.col("ours_feasible")).height
    assert mape >= 0


def test_identities_hold() -> None:
    rows, ours = evaluate_rows(RUNS)
    ok = ours["error"] == 0
    assert ok.sum() > 300
    assert np.all(np.isfinite(ours["total_time"][ok]))
    batch = np.asarray([float(r["batch_size"]) for r in rows])
    assert np.allclose(ours["sample_rate"][ok], batch[ok] / ours["total_time"][ok])


def test_time_parts_sum_to_total() -> None:
    from models.blocks.llm import get_model, train_step
    from models.blocks.llm.calculon_io import system_from_json

    s = system_from_json(SHIPPED / "inputs" / "systems" / "a100_80g.json")
    st = train_step(get_model("gpt3-175B"), s, tensor_par=8, pipeline_par=[8, 16], data_par=[8, 4], batch_size=512,
                    microbatch_size=1, activation_recompute="full", tensor_par_comm_type="rs_ag",
                    optimizer_sharding=True, pipeline_par_net=1, data_par_net=1)
    total = sum(st[k] for k in TIME_PARTS)
    assert np.allclose(total, st["total_time"])
    assert np.all(st["pp_comm_exposed_time"] == st["pp_comm_link_time"])


def test_subset_file_and_base_system_fallback(tmp_path: Path) -> None:
    """A held-out style file: a subset of rows, one system renamed (rebuilt from base_system)."""
    with RUNS.open() as fh:
        rows = list(csv.DictReader(fh))
    pick = [r for i, r in enumerate(rows) if i % 7 == 0]
    for r in pick:
        if r["system"] == "a100_80g_cxl1T64":
            r["system"] = "a100_custom_mem2"  # no JSON: rebuilt from a100_80g + mem2 columns
    out = tmp_path / "held.csv"
    with out.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(pick)
    t, mape, n = check_reference(out)
    assert t.height == len(pick)
    assert n > 0 and mape < 1e-6
    assert t["feasibility_agree"].all()


def test_bad_file_is_a_one_line_error(tmp_path: Path) -> None:
    from dse.errors import DseError

    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(DseError, match="runs.csv format"):
        check_reference(p)
    with pytest.raises(DseError, match="cannot read"):
        check_reference(tmp_path / "missing.csv")


def test_comparison_table_columns() -> None:
    rows, ours = evaluate_rows(RUNS)
    t = comparison_table(rows[:5], {k: v[:5] for k, v in ours.items()})
    assert t.height == 5
