"""llm-serve: claim kinds and the out-of-fit error of its fit rows (dse validate llm-serve --cv)."""

from __future__ import annotations

import pytest

from dse.claims import evaluate_claims, pass_counts
from dse.crossval import cross_validate, median_abs
from models.llm_serve import cv
from models.llm_serve import calibration


@pytest.fixture(scope="module")
def results():
    return evaluate_claims(cv.CLAIMS_PATH)


def test_anchors_are_the_fit_rows(results):
    kinds = {r.id: r.kind for r in results}
    fit_rows = {f"fit-{r['id']}" for r in calibration.measurements() if r["role"] == "fit"}
    held = {f"held_out-{r['id']}" for r in calibration.measurements() if r["role"] == "held_out"}
    assert {k for k, v in kinds.items() if v == "anchor"} == fit_rows
    assert {kinds[k] for k in held} == {"prediction"}
    assert {k for k, v in kinds.items() if v == "echo"} == {"mechanism-kv-128k-70b-gqa", "mechanism-fp8-halves-kv"}
    assert pass_counts(results)["headline"] == (21, 21)


def test_fit_excludes_and_rejects_unknown_rows():
    full = calibration.fit()["constants"]
    without = calibration.fit(exclude={"trt-8b-h100-128-2048"})["constants"]
    assert without != full
    with pytest.raises(ValueError, match="no measurement"):
        calibration.fit(exclude={"fit-trt-8b-h100-128-2048"})
    with pytest.raises(ValueError, match="not an llm-serve anchor"):
        cv.measurement_id("held_out-trt-8b-h100-128-128")


def test_out_of_fit_errors(results):
    rows = {r.id: r for r in cross_validate(cv.CLAIMS_PATH, results)}
    expected = {
        "fit-trt-8b-h100-128-2048": 37.2, "fit-trt-8b-h100-2048-128": 6.2, "fit-trt-70b-h100x2-1000-1000": 33.5,
        "fit-trt-70b-h200-5000-500": -15.0, "fit-nim-70b-h100x2-5000-500-c1-ttft": 3.5,
        "fit-nim-70b-h100x2-5000-500-c1-itl": 14.3,
    }
    assert set(rows) == set(expected)
    for k, e in expected.items():
        assert rows[k].out_of_fit_error_pct == pytest.approx(e, abs=1.5), k
        assert abs(rows[k].out_of_fit_error_pct) >= abs(rows[k].in_fit_error_pct) - 0.5, k
    assert median_abs(list(rows.values()))["llm-serve"] == pytest.approx(14.7, abs=1.0)
    assert median_abs(list(rows.values()))["llm-serve"] <= 20.0
