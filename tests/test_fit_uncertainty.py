"""Fitted constants carry their uncertainty from the fit (issue 20).

Block fits (DRAM, flash): Jacobian standard errors, ``[uncertainty]`` in
results/calibration/*.toml.  Model fits (fitted.toml of six packages): jackknife over the
leave-one-out refits of their anchors, ``[uncertainty]`` in each fitted.toml, and
``dse.uncertainty`` gives those parameters ``normal(sd from the fit)``."""

from __future__ import annotations

import json
import math
import shutil
import tomllib
from pathlib import Path

import numpy as np
import pytest

from dse import fit_uncertainty as fu
from dse.registry import project_root
from models.blocks import fit_harness

ROOT = project_root()
CAL = ROOT / "results" / "calibration"
#: model package -> a registered model it serves
MODELS = {"directcxl": "directcxl", "espresso": "espresso", "fs2": "fs2", "ginkgo": "ginkgo", "mhj": "mhj",
          "llm_serve": "llm-serve"}


# ----------------------------------------------------------------------------- the estimators
def test_jacobian_sd_matches_the_analytic_standard_error_of_a_linear_fit():
    """y = a + b x + N(0, sigma): the Jacobian sd equals sigma sqrt(diag((X^T X)^-1))."""
    from scipy.optimize import least_squares

    rng = np.random.default_rng(7)
    n, sigma = 400, 0.3
    x = rng.uniform(0, 10, n)
    y = 1.5 + 0.8 * x + rng.normal(0, sigma, n)

    def resid(p):
        return p[0] + p[1] * x - y

    res = least_squares(resid, np.array([0.0, 0.0]))
    sd = fit_harness.jacobian_sd(resid, res.x)
    X = np.column_stack([np.ones(n), x])
    analytic = sigma * np.sqrt(np.diag(np.linalg.inv(X.T @ X)))
    np.testing.assert_allclose(sd, analytic, rtol=0.2)
    # the robust loss with a scale far above the noise is the linear fit
    sd_soft = fit_harness.jacobian_sd(resid, res.x, "soft_l1", f_scale=100.0)
    np.testing.assert_allclose(sd_soft, sd, rtol=1e-3)


def test_jacobian_sd_holds_a_constant_at_its_bound():
    x = np.linspace(0, 1, 50)

    def resid(p):
        return p[0] + 0.0 * p[1] * x - np.sin(7 * x)

    sd = fit_harness.jacobian_sd(resid, np.array([0.1, 3.0]), lo=np.array([-1.0, 0.0]), hi=np.array([1.0, 3.0]))
    assert np.isfinite(sd[0]) and sd[0] > 0
    assert math.isinf(sd[1])  # flat and at its bound: nothing pins it
    t = fit_harness.uncertainty_table(("a", "b"), [0.1, 3.0], sd, 50, [-1.0, 0.0], [1.0, 3.0])
    assert t["at_bound"] == ["b"]


def test_jackknife_sd_of_a_mean_is_its_standard_error():
    rng = np.random.default_rng(3)
    data = rng.normal(5.0, 2.0, 300)
    loo = np.array([[np.delete(data, i).mean()] for i in range(data.size)])
    sd = fu.jackknife_sd(loo)[0]
    assert sd == pytest.approx(data.std(ddof=1) / math.sqrt(data.size), rel=1e-9)
    assert sd == pytest.approx(2.0 / math.sqrt(data.size), rel=0.2)
    with pytest.raises(ValueError):
        fu.jackknife_sd(np.ones((1, 2)))


def test_too_few_runs_guard():
    assert fit_harness.too_few(5, ("a", "b"))
    assert not fit_harness.too_few(6, ("a", "b"))


# ----------------------------------------------------------------------------- block fits
@pytest.mark.parametrize("block", ["dram", "flash"])
def test_shipped_block_calibration_has_an_sd_for_every_fitted_constant(block):
    doc = tomllib.loads((CAL / f"{block}.toml").read_text())
    u = doc["uncertainty"]
    assert u["method"].startswith("jacobian") and u["n"] > 100
    for k in doc["fitted_constants"]:
        sd = u["sd"][k]
        assert sd > 0 and math.isfinite(sd), k
        v = doc["constants"][k]
        assert v - 4 * sd <= v <= v + 4 * sd
    # the well-pinned constants are known to a few percent
    well = {"dram": "k_ref", "flash": "k_mp"}[block]
    assert u["sd"][well] < 0.1 * doc["constants"][well]


@pytest.mark.parametrize("block", ["dram", "flash"])
def test_block_uncertainty_is_recomputed_at_the_shipped_constants(block, tmp_path):
    """Rewriting the table keeps every other line and gives the same sds."""
    shutil.copy(CAL / f"{block}.toml", tmp_path / f"{block}.toml")
    before = tomllib.loads((tmp_path / f"{block}.toml").read_text())
    table = fit_harness.add_shipped_uncertainty(block, tmp_path)
    after = tomllib.loads((tmp_path / f"{block}.toml").read_text())
    for k in before:
        if k != "uncertainty":
            assert after[k] == before[k], k
    for k, sd in before["uncertainty"]["sd"].items():
        assert table["sd"][k] == pytest.approx(sd, rel=1e-4), k


def test_add_uncertainty_replaces_an_old_table(tmp_path):
    p = tmp_path / "x.toml"
    p.write_text('block = "x"\n\n[constants]\na = 1.0\n')
    fit_harness.add_uncertainty(p, {"method": "m", "n": 3, "at_bound": [], "sd": {"a": 0.5}})
    fit_harness.add_uncertainty(p, {"method": "m", "n": 3, "at_bound": [], "sd": {"a": 0.25}})
    doc = tomllib.loads(p.read_text())
    assert doc["constants"] == {"a": 1.0} and doc["uncertainty"]["sd"] == {"a": 0.25}
    assert p.read_text().count("[uncertainty]") == 1


# ----------------------------------------------------------------------------- model fits
def _fitted_values(pkg: str) -> dict[str, float]:
    doc = tomllib.loads((ROOT / "models" / pkg / "fitted.toml").read_text())
    doc.pop(fu.TABLE)
    if pkg == "directcxl":
        return {k: float(v) for k, v in doc["fitted"].items()}
    if pkg == "llm_serve":
        return {k: float(v) for k, v in doc["constants"].items()}
    if pkg == "ginkgo":
        return fu.flatten(doc)
    return {k: float(v["value"]) for k, v in doc.items() if isinstance(v, dict) and "value" in v
            and not k.endswith("_fig13b_ali0")}


@pytest.mark.parametrize("pkg", fu.PACKAGES)
def test_shipped_fitted_toml_has_a_jackknife_sd_for_every_constant(pkg):
    t = fu.fit_sd_table(str(ROOT / "models" / pkg / "fitted.toml"))
    assert t[fu.N_KEY] == len(fu.anchors(pkg)) >= 2
    for name, value in _fitted_values(pkg).items():
        assert name in t, name
        assert t[name] >= 0 and math.isfinite(t[name]), name


def test_jackknife_recomputes_the_shipped_table():
    for pkg in ("fs2", "mhj"):  # the quick refits
        shipped = fu.fit_sd_table(str(ROOT / "models" / pkg / "fitted.toml"))
        got = fu.compute(pkg)
        assert got.keys() == shipped.keys()
        for k in got:
            assert got[k] == pytest.approx(shipped[k], rel=1e-6, abs=1e-12), (pkg, k)


@pytest.mark.parametrize("pkg", fu.PACKAGES)
def test_fitted_parameters_get_the_fits_sd_and_the_default_lies_inside(pkg):
    from dse import registry
    from dse.uncertainty import FIT_SD_CAP_REL, uncertainty_of

    model = registry.get(MODELS[pkg])
    sds, n = fu.fit_sd(model)
    hits = 0
    for p in model.params:
        u = uncertainty_of(model, p)
        if not u.reason.startswith("fit: jackknife"):
            continue
        hits += 1
        assert f"over {n} targets" in u.reason
        assert u.dist == "normal" and u.contains(float(p.default)), p.name
        assert u.sd == pytest.approx(min(sds[p.name], FIT_SD_CAP_REL * abs(float(p.default))), rel=1e-12)
    assert hits >= 1


def test_write_keeps_every_other_line_and_replaces_the_table(tmp_path, monkeypatch):
    pkg_dir = tmp_path / "models" / "fake"
    pkg_dir.mkdir(parents=True)
    (pkg_dir / "fitted.toml").write_text("# a comment\n[fitted]\na = 1.5\n")
    monkeypatch.setattr(fu, "package_dir", lambda pkg: pkg_dir)
    fu.write("fake", {fu.N_KEY: 2.0, "a": 0.1})
    fu.write("fake", {fu.N_KEY: 2.0, "a": 0.2})
    text = (pkg_dir / "fitted.toml").read_text()
    assert text.startswith("# a comment\n[fitted]\na = 1.5\n") and text.count("\n[uncertainty]\n") == 1
    assert text.count(fu.COMMENT) == 1
    assert tomllib.loads(text)["uncertainty"]["a"] == 0.2


def test_describe_shows_the_fits_sd(cli):
    code, out, err = cli("describe", "llm-serve", "--json")
    assert code == 0, err
    params = {p["name"]: p for p in json.loads(out)["params"]}
    p = params["eff_flops_frac"]
    assert p["uncertainty_reason"].startswith("fit: jackknife over 6 targets")
    sd = fu.fit_sd_table(str(ROOT / "models" / "llm_serve" / "fitted.toml"))["eff_flops_frac"]
    assert f"normal sd {sd:.4g}" in p["uncertainty"]
