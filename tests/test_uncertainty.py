"""Uncertainty on every default, `dse uq` and `dse sensitivity` (SALib)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dse import registry
from dse.model import Metric, Model, Param
from dse.uncertainty import Uncertainty, draws, from_source, summarize, uncertainty_of


@pytest.mark.parametrize("name", registry.names())
def test_every_parameter_has_an_uncertainty_that_holds_its_default(name):
    model = registry.get(name)
    varied = 0
    for p in model.params:
        u = uncertainty_of(model, p)
        assert u.reason, (name, p.name)
        if u.dist != "exact":
            varied += 1
            assert u.contains(float(p.default)), (name, p.name, u)
            if p.bounds is not None:
                assert p.bounds[0] <= u.low <= u.high <= p.bounds[1], (name, p.name, u)
    assert varied >= 3, f"{name}: only {varied} uncertain inputs"


def _p(source, default=10.0, bounds=(0.0, 100.0)):
    return Param("x_ns", default, source, bounds=bounds)


def test_width_follows_the_source_kind():
    assert from_source(_p("assumption: a guess")).dist == "loguniform"
    u = from_source(_p("assumption: a guess"))
    assert u.low == pytest.approx(10 / 1.5) and u.high == pytest.approx(15)
    assert from_source(_p("fitted (calibrate.py) to Fig. 3")).dist == "normal"
    ds = from_source(_p("Micron datasheet"))
    assert (ds.low, ds.high) == pytest.approx((9.5, 10.5))
    paper = from_source(_p("Table 2 of the article"))
    assert (paper.low, paper.high) == pytest.approx((8.5, 11.5))
    assert from_source(_p("Table 2", default=0.0)).dist == "exact"
    assert from_source(Param("lanes", 8, "spec", choices=(4, 8, 16))).dist == "exact"
    # clipped to the bounds, so the default stays inside
    frac = from_source(Param("hit_frac", 0.95, "Table 2", bounds=(0.0, 1.0)))
    assert frac.high == 1.0 and frac.contains(0.95)


def test_a_stated_uncertainty_must_hold_the_default():
    with pytest.raises(ValueError, match="outside its uncertainty"):
        Param("x_ns", 5.0, "a source", bounds=(0, 10), uncertainty=Uncertainty("uniform", "r", 6.0, 8.0))
    with pytest.raises(ValueError):
        Uncertainty("uniform", "negative width", 8.0, 6.0)
    with pytest.raises(ValueError):
        Uncertainty("normal", "no sd", 1.0, 2.0, sd=-1.0)


def test_draws_are_seeded_paired_and_inside_bounds():
    model = registry.get("cxl-expander")
    a = draws(model, {"lanes": 16.0}, 512, seed=7)
    b = draws(model, {"lanes": 4.0}, 512, seed=7)
    varied = [k for k, v in a.items() if isinstance(v, np.ndarray)]
    assert varied and "lanes" not in varied
    for k in varied:  # common random numbers: the same draws for both designs
        np.testing.assert_array_equal(a[k], b[k])
        model.coerce(k, a[k])  # raises if a draw left the parameter's bounds
    c = draws(model, {"lanes": 16.0}, 512, seed=8)
    assert any(not np.array_equal(a[k], c[k]) for k in varied)


def test_summarize_percentiles_and_feasibility():
    x = np.arange(101, dtype=float)
    s = summarize({"m": x})["m"]
    assert (s["p5"], s["p50"], s["p95"], s["mean"]) == pytest.approx((5, 50, 95, 50))
    s = summarize({"m": x}, feasible=x < 50)["m"]
    assert s["p95"] < 50


# ----------------------------------------------------------------------------- Ishigami
DOMAIN = Uncertainty("uniform", "the function's domain", -math.pi, math.pi)


class Ishigami(Model):
    name = "ishigami-test"
    summary = "Ishigami function (a = 7, b = 0.1)"
    params = tuple(Param(f"x{i}", 0.0, "test function", bounds=(-math.pi, math.pi), uncertainty=DOMAIN) for i in (1, 2, 3))
    metrics = (Metric("y"),)

    def evaluate(self, p):
        return {"y": np.sin(p.x1) + 7 * np.sin(p.x2) ** 2 + 0.1 * p.x3**4 * np.sin(p.x1)}


def test_sobol_indices_of_ishigami_match_the_closed_form():
    from dse import sensitivity

    a, b = 7.0, 0.1
    v1 = 0.5 * (1 + b * math.pi**4 / 5) ** 2
    v2 = a**2 / 8
    v13 = b**2 * math.pi**8 * (1 / 18 - 1 / 50)
    var = v1 + v2 + v13
    s1 = {"x1": v1 / var, "x2": v2 / var, "x3": 0.0}
    st = {"x1": (v1 + v13) / var, "x2": v2 / var, "x3": v13 / var}
    model = Ishigami()
    factors = sensitivity.factors_from_uncertainty(model, {})
    res = sensitivity.analyze(model, "y", factors, {}, method="sobol", base_samples=1 << 13, seed=1)
    for r in res.rows:
        n = r["name"]
        assert abs(r["S1"] - s1[n]) <= max(r["S1_conf"], 0.01) + 0.01, (n, r, s1[n])
        assert abs(r["ST"] - st[n]) <= max(r["ST_conf"], 0.01) + 0.01, (n, r, st[n])
    assert [r["name"] for r in res.rows][0] == "x1"  # largest total index first


def test_morris_screening_ranks_the_inactive_input_last():
    from dse import sensitivity

    model = Ishigami()
    res = sensitivity.analyze(model, "y", sensitivity.factors_from_uncertainty(model, {}), {}, method="morris",
                              base_samples=256, seed=0)
    assert res.rows[-1]["name"] in ("x3", "x1") and res.rows[0]["name"] == "x2"


# ----------------------------------------------------------------------------- CLI
def test_uq_json_and_paired_comparison(cli):
    code, out, err = cli("uq", "cxl-expander", "lanes=16", "--samples", "256", "--against", "lanes=4", "--json")
    assert code == 0, err
    doc = json.loads(out)
    bw = doc["metrics"]["bw_gbps"]
    assert bw["p5"] <= bw["p50"] <= bw["p95"]
    # x16 has 4x the link of x4 under every draw: it wins on bandwidth in all of them
    assert doc["against"]["bw_gbps"]["a_better_share"] == 1.0
    assert doc["against"]["bw_gbps"]["median_ratio_a_over_b"] > 1.5


def test_sensitivity_over_a_space_and_the_uncertain_defaults(cli):
    code, out, err = cli("sensitivity", "cxl-expander", "--metric", "usd_per_gib", "--space", "spaces/cxl_expander.toml",
                         "--base-samples", "256", "--json")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert rows[0]["name"] == "media"  # the medium decides $/GiB, not the link
    code, out, err = cli("sensitivity", "expand", "--metric", "time_ns_per_kinst", "--method", "morris",
                         "--base-samples", "32", "--json")
    assert code == 0, err


@pytest.mark.parametrize(
    "args, contains",
    [
        (["uq", "cxl-expander", "--samples", "1"], "--samples"),
        (["uq", "cxl-expander", "--width", "-0.3"], "--width"),
        (["uq", "cxl-expander", "--seed", "-1"], "--seed"),
        (["uq", "cxl-expander", "lanes=5"], "lanes"),
        (["sensitivity", "cxl-expander", "--metric", "nosuch"], "no metric"),
        (["sensitivity", "cxl-expander"], "--metric"),
        (["sensitivity", "cxl-expander", "--metric", "bw_gbps", "--method", "fast"], "--method"),
        (["sensitivity", "cxl-expander", "--metric", "bw_gbps", "--base-samples", "2"], "--base-samples"),
        (["sensitivity", "expand", "--metric", "time_ns_per_kinst", "--space", "spaces/cxl_expander.toml"], "sweeps model"),
    ],
)
def test_uq_bad_input_is_one_line(cli, tmp_path, args, contains):
    from tests.test_reliability import assert_refused

    assert_refused(cli, tmp_path, *args, contains=contains)


def test_validate_shows_the_models_interval(cli):
    code, out, err = cli("validate", "cxl-expander", "--uq", "8", "--json")
    assert code == 0, err
    rows = {r["id"]: r for r in json.loads(out)}
    asic = rows["asic-latency-vs-local-ddr"]
    assert asic["p5"] < asic["value"] < asic["p95"]  # latencies move with their uncertain parts
    assert isinstance(asic["inside"], bool)
    assert all(r["p5"] <= r["p95"] for r in rows.values())
    code, _, err = cli("validate", "cxl-expander", "--uq", "1")
    assert code == 2 and "--uq" in err


# ----------------------------------------------------------------------------- robust fronts
ROBUST_SPACE = """
model = "cxl-expander"
[knobs]
lanes = [4, 16]
ctrl_latency_ns = { range = [40, 250], steps = 3 }
[fixed]
media = "hbm2e"
[objectives]
bw_gbps = "max"
usd_per_gib = "min"
[sweep]
strategy = "grid"
"""


def test_robust_sweep_p_pareto_is_one_for_a_dominating_point_and_zero_for_a_dominated_one(cli, space_file, tmp_path):
    import polars as pl

    out = tmp_path / "rob"
    code, _, err = cli("sweep", space_file(ROBUST_SPACE), "--uncertainty", "32", "--out", out, "-q")
    assert code == 0, err
    df = pl.read_parquet(out / "points.parquet").sort("point_id")
    # x16 has 4x the link bandwidth at the same $/GiB in every draw (paired draws)
    assert set(df.filter(pl.col("lanes") == 16)["p_pareto"].to_list()) == {1.0}
    assert set(df.filter(pl.col("lanes") == 4)["p_pareto"].to_list()) == {0.0}
    for k in ("bw_gbps", "usd_per_gib"):
        assert (df[f"{k}_p5"] <= df[f"{k}_p50"]).all() and (df[f"{k}_p50"] <= df[f"{k}_p95"]).all()
        assert (df[f"{k}_p5"] < df[f"{k}_p95"]).any()  # the draws move the objectives
    assert df["feasible_share"].min() >= 0 and df["feasible_share"].max() <= 1
    code, q, err = cli("query", out, "--where", "p_pareto > 0.8", "--columns", "lanes,p_pareto", "--format", "json")
    assert code == 0, err
    assert {r["lanes"] for r in json.loads(q)} == {16}


@pytest.mark.parametrize("args, contains", [(["--uncertainty", "1"], "--uncertainty"),
                                            (["--uncertainty", "8", "--strategy", "optuna"], "--uncertainty")])
def test_robust_sweep_bad_input(cli, space_file, tmp_path, args, contains):
    from tests.test_reliability import assert_refused

    space = space_file(ROBUST_SPACE)
    assert_refused(cli, tmp_path, "sweep", space, "--out", tmp_path / "o", "-q", *args, contains=contains)
