"""`dse query --group-by/--agg` (Polars group_by) and output that is never truncated."""

from __future__ import annotations

import io
import json

import polars as pl
import pytest


@pytest.fixture(scope="module")
def results(small_study):
    return small_study


def test_group_by_gives_one_row_per_group_with_each_objectives_best(cli, results):
    code, out, err = cli("query", results, "--group-by", "media", "--format", "json", "--top", "0")
    assert code == 0, err
    rows = json.loads(out)
    df = pl.read_parquet(results / "points.parquet").filter(pl.col("feasible"))
    assert sorted(r["media"] for r in rows) == sorted(df["media"].unique().cast(str).to_list())
    for r in rows:
        sub = df.filter(pl.col("media") == r["media"])
        assert r["count"] == sub.height
        assert r["min_usd_per_gib"] == pytest.approx(sub["usd_per_gib"].min())
        assert r["max_bw_gbps"] == pytest.approx(sub["bw_gbps"].max())


def test_explicit_aggregations_and_where(cli, results):
    code, out, err = cli("query", results, "--group-by", "media,lanes", "--agg", "mean:bw_gbps", "--agg", "count",
                         "--where", "lanes >= 8", "--format", "json", "--top", "0")
    assert code == 0, err
    rows = json.loads(out)
    assert {r["lanes"] for r in rows} == {8, 16} and set(rows[0]) == {"media", "lanes", "mean_bw_gbps", "count"}


@pytest.mark.parametrize("args, contains", [
    (["--group-by", "nosuch"], "--group-by"),
    (["--group-by", "media", "--agg", "sum:bw_gbps"], "unknown function"),
    (["--group-by", "media", "--agg", "min:nosuch"], "no column"),
    (["--group-by", "media", "--agg", "min:bw_gbps", "--agg", "min:bw_gbps"], "asked twice"),
    (["--agg", "min:bw_gbps"], "needs --group-by"),
])
def test_group_by_bad_input(cli, results, tmp_path, args, contains):
    from tests.test_reliability import assert_refused

    assert_refused(cli, tmp_path, "query", results, *args, contains=contains)


def test_piped_output_is_csv_with_full_values(cli, results):
    code, out, _ = cli("query", results, "--top", "3", "--columns", "media,usd_per_gib")
    assert code == 0
    df = pl.read_csv(io.StringIO(out))
    assert df.columns == ["media", "usd_per_gib"] and df.height == 3
    full = pl.read_parquet(results / "points.parquet").filter(pl.col("feasible"))["usd_per_gib"].head(3).to_list()
    assert df["usd_per_gib"].to_list() == full  # every digit, no "…"
