"""The safe expression language, and `dse query` over a results folder."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from dse.errors import DseError
from dse.expr import Expr
from dse.sweep.run import SweepOptions, run_sweep

EXPRESSIONS = [
    "a < 3",
    "a + b * 2 >= 7 and not (b == 1)",
    "abs(a - b) <= 2 or a > 4",
    "sqrt(a) + log(b + 1) > 1",
    "max(a, b) - min(a, b) < 3",
    "1 < a <= 4",
    "(a % 2 == 0) | (b // 2 == 1)",
    "a ** 2 != b",
]


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_numpy_and_polars_agree(text):
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 6, 200).astype(float), rng.integers(0, 6, 200).astype(float)
    e = Expr(text)
    got_np = np.asarray(e.evaluate({"a": a, "b": b}), dtype=bool)
    got_pl = pl.DataFrame({"a": a, "b": b}).select(e.to_polars().alias("r"))["r"].to_numpy()
    np.testing.assert_array_equal(got_np, got_pl)
    assert e.names <= {"a", "b"} and "a" in e.names


@pytest.mark.parametrize(
    "text",
    ["__import__('os').system('true')", "a.__class__", "open('x')", "lambda: 1", "[x for x in a]", "a if b else 1", "a[0]", "a; b", ""],
)
def test_unsafe_or_unsupported_expressions_are_refused(text):
    with pytest.raises(DseError):
        e = Expr(text)
        e.evaluate({"a": np.ones(3), "b": np.ones(3)})


def test_reductions_and_dotted_names():
    env = {"x.lat_ns": np.array([1.0, 4.0]), "y.lat_ns": np.array([2.0, 2.0])}
    assert Expr("gmean(y.lat_ns / x.lat_ns)").evaluate(env) == pytest.approx(np.sqrt(2.0 * 0.5))
    assert Expr("max(x.lat_ns)").evaluate(env) == 4.0
    assert Expr("mean(x.lat_ns) + min(y.lat_ns)").evaluate(env) == 4.5


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from tests.conftest import SMALL_SPACE

    d = tmp_path_factory.mktemp("q")
    space = d / "s.toml"
    space.write_text(SMALL_SPACE)
    run_sweep(space, SweepOptions(out=d / "out", progress=False))
    return d / "out"


def test_query_filters_sorts_and_limits(results, cli):
    from dse.query import run_query

    df = run_query(results, where="loaded_read_latency_ns < 400 and media == 'ddr5_4800'", minimize=["usd_per_gib"], top=5)
    assert df.height == 5
    assert (df["loaded_read_latency_ns"] < 400).all() and (df["media"] == "ddr5_4800").all()
    assert df["usd_per_gib"].is_sorted()
    allrows = pl.read_parquet(results / "points.parquet").filter(
        pl.col("feasible") & (pl.col("loaded_read_latency_ns") < 400) & (pl.col("media") == "ddr5_4800")
    )
    assert df["usd_per_gib"][0] == pytest.approx(allrows["usd_per_gib"].min())
    front = run_query(results, pareto_only=True, top=0)
    assert front.height == pl.read_parquet(results / "pareto.parquet").height
    code, out, _ = cli("query", results, "--where", "lanes in [4, 8]", "--maximize", "bw_gbps", "--top", "3", "--format", "csv")
    assert code == 0
    lines = out.strip().splitlines()
    assert len(lines) == 4 and lines[0].startswith("lanes,")


@pytest.mark.parametrize(
    "args, words",
    [
        (["--where", "latency < 3"], "unknown column 'latency'"),
        (["--where", "loaded_read_latency_ns <"], "cannot parse"),
        (["--where", "exec('x')"], "unknown function"),
        (["--minimize", "nosuch"], "unknown column"),
        (["--format", "xml"], "allowed: table, csv, json"),
    ],
)
def test_query_errors_are_one_line_exit_2(results, cli, args, words):
    code, _, err = cli("query", results, *args)
    assert code == 2 and words in err and err.count("\n") == 1


def test_query_on_a_missing_folder(cli, tmp_path):
    code, _, err = cli("query", tmp_path / "nothing")
    assert code == 2 and "no such results folder" in err
