"""dse validate --cv and claim kinds (anchor, echo, prediction)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dse import registry
from dse.claims import evaluate_claims, pass_counts
from dse.crossval import cross_validate, median_abs

CLAIMS = Path(__file__).parent / "toys" / "toycv" / "claims.yaml"


@pytest.fixture()
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    import models

    monkeypatch.syspath_prepend(str(Path(__file__).parent / "toys"))
    monkeypatch.setattr(models, "REGISTRY", {**models.REGISTRY, "toy-line": "toycv.model:Line"})
    registry.refresh()
    yield
    registry.refresh()


def test_left_out_anchor_is_predicted_by_the_other(toy: None) -> None:
    rows = cross_validate(CLAIMS, evaluate_claims(CLAIMS))
    by_id = {r.id: r for r in rows}
    assert set(by_id) == {"a1", "a2"}  # predictions and echoes are not refitted
    # in fit the slope is 2.0 (mean of 1.8 and 2.2); without a1 it is 2.2, without a2 1.8
    assert by_id["a1"].in_fit_value == pytest.approx(2.0)
    assert by_id["a1"].out_of_fit_value == pytest.approx(2.2)
    assert by_id["a1"].out_of_fit_error_pct == pytest.approx((2.2 - 1.8) / 1.8 * 100)
    assert by_id["a2"].out_of_fit_value == pytest.approx(2 * 1.8)
    assert median_abs(rows)["toy-line"] == pytest.approx(statistics_median([22.22222, 18.181818]), rel=1e-4)


def statistics_median(v: list[float]) -> float:
    import statistics

    return statistics.median(v)


def test_echoes_are_not_counted_in_pass_rates(toy: None) -> None:
    res = evaluate_claims(CLAIMS)
    assert {r.id: r.kind for r in res} == {"a1": "anchor", "a2": "anchor", "p1": "prediction", "e1": "echo"}
    c = pass_counts(res)
    assert c["headline"] == (sum(r.passed for r in res if r.id in ("a1", "a2", "p1")), 3)
    assert c["other"] == (0, 0) and c["echo"] == (1, 1)


def test_validate_cv_prints_and_emits_json(toy: None, cli: Any) -> None:
    code, out, _ = cli("validate", "--claims", CLAIMS, "--cv")
    assert "leave-one-anchor-out" in out and "toy-line: median out-of-fit error 20.2%" in out
    assert "1 echoes" in out
    code, out, _ = cli("validate", "--claims", CLAIMS, "--cv", "--json")
    data = json.loads(out)
    assert {r["id"] for r in data["cv"]} == {"a1", "a2"}
    assert data["cv_median_abs_error_pct"]["toy-line"] == pytest.approx(20.2020, rel=1e-3)


def test_a_model_without_cv_module_reports_in_fit_only(cli: Any) -> None:
    code, out, _ = cli("validate", "bandslim", "--cv")
    assert "leave-one-anchor-out" in out or "no anchor claims" in out


def test_the_site_index_shows_out_of_fit_error() -> None:
    from dse.dashboard.build import Validation

    # mhj: two anchors, each constant pinned by its own (calibration.PRIORS when left out)
    assert Validation(cv=True).out_of_fit("mhj") == "117.8%"
    assert Validation(cv=True).out_of_fit("cold-store") == "no anchors"
    assert Validation(cv=False).out_of_fit("mhj") == ""


def test_a_study_page_shows_in_fit_and_out_of_fit_error() -> None:
    from dse.dashboard.build import Validation, add_validation
    from dse.dashboard.html import Page

    v = Validation(cv=True)
    page = Page("t", "t.html")
    add_validation(page, v.results("mhj"), v.cv_rows("mhj"))
    html = "".join(page.blocks)
    assert "out-of-fit error" in html and "(in fit)" in html
    assert "+229" in html or "+228" in html  # tpcds_geomean_vs_shj without its own anchor (calibration.PRIORS)
