"""ncs: claim kinds, the leave-one-anchor-out refit and the popularity skew statistic."""

from __future__ import annotations

import pytest

from dse.claims import evaluate_claims
from dse.crossval import cross_validate, median_abs
from models.ncs import calibration as cal
from models.ncs import cv, popularity
from models.ncs.model import Ncs


def test_kinds_and_full_fit() -> None:
    kinds = {r.id: r.kind for r in evaluate_claims(cv.CLAIMS)}
    assert {k for k, v in kinds.items() if v == "anchor"} == set(cal.ANCHORS)
    assert {k for k, v in kinds.items() if v == "echo"} == {"downscale-saving-34pct", "infrequent-breakeven", "pipelined-near-baseline"}
    d = Ncs.defaults()
    for k, v in cal.fit().items():
        assert v == pytest.approx(d[k], rel=1e-12)


def test_out_of_fit_errors() -> None:
    rows = {r.id: r for r in cross_validate(cv.CLAIMS, evaluate_claims(cv.CLAIMS))}
    oof = {k: r.out_of_fit_error_pct for k, r in rows.items()}
    assert oof["tco-max-45d"] == pytest.approx(2.8, abs=0.5)  # a-priori busy fraction 1
    assert oof["coverage-78pct"] == pytest.approx(-2.5, abs=0.5)  # McGrady sigma
    assert oof["baseline-coverage-50pct"] == pytest.approx(8.9, abs=0.5)
    # two stage times from one Fig 6(d) number and a fetch/SR pipeline a priori
    assert oof["restore-pipelining"] == pytest.approx(22.7, abs=1)
    assert oof["restore-no-pipelining"] == pytest.approx(-58.7, abs=1)
    assert median_abs(list(rows.values()))["ncs"] == pytest.approx(8.9, abs=0.5) and median_abs(list(rows.values()))["ncs"] <= 20


def test_skew_statistic() -> None:
    m = Ncs()
    mc = m.point(popularity="mcgrady_lognormal")
    # the McGrady sigma is solved from the top-3.67% share: the statistic returns it
    assert mc["top_view_share_frac"] == pytest.approx(0.9361, abs=1e-9)
    cf = m.point()
    assert cf["top_view_share_frac"] == pytest.approx(0.8517, abs=1e-3)
    # monotone in the share of videos; a wider lognormal is more skewed (Gini)
    assert m.point(top_video_frac=0.1)["top_view_share_frac"] > cf["top_view_share_frac"]
    assert mc["views_gini"] > cf["views_gini"]
    # Gini closed form against a numeric Lorenz curve of the same lognormal
    import numpy as np
    from scipy.special import ndtr, ndtri

    sigma = popularity.POPULARITY["coverage_fit_lognormal"][1]
    p = np.linspace(0, 1, 200001)[1:-1]
    lorenz = ndtr(ndtri(p) - sigma)
    assert cf["views_gini"] == pytest.approx(1 - 2 * np.trapezoid(lorenz, p), abs=2e-3)
