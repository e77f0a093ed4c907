"""iks-channel-split: the convex channel split against the article's half/half heuristic."""

from __future__ import annotations

import math

import pytest

from dse import optimize
from dse.errors import DseError


def _row(sol, tenant):
    return next(r for r in sol.rows if r["tenant"] == tenant)


def test_default_split_beats_the_half_split_and_meets_the_slo():
    sol = optimize.solve("iks-channel-split", {})
    assert sol.status == "optimal"
    t0, enns = _row(sol, 0), _row(sol, "enns")
    # footprint 64 GB needs 8 channels of 8 GB; the 195 us SLO allows fewer
    assert t0["channels"] == 8
    assert enns["channels"] == 56
    assert t0["p99_us"] <= 195.0
    # QPS scales with ENNS channels: 56 / 32 = 1.75
    assert sol.summary["gain_over_heuristic_pct"] == pytest.approx(75.0, abs=0.5)
    assert sol.summary["enns_qps_model"] == pytest.approx(sol.objective, rel=0.01)
    assert sol.objective <= sol.summary["enns_qps_lp_bound"] + 1e-6


def test_tighter_slo_gives_the_tenant_more_channels():
    loose = optimize.solve("iks-channel-split", {"tenant_slo_p99_us": 195.0, "tenant_footprint_gb": 8.0})
    tight = optimize.solve("iks-channel-split", {"tenant_slo_p99_us": 192.0, "tenant_footprint_gb": 8.0})
    assert _row(tight, 0)["channels"] > _row(loose, 0)["channels"]
    assert tight.objective < loose.objective
    for sol, slo in ((loose, 195.0), (tight, 192.0)):
        assert _row(sol, 0)["p99_us"] <= slo
        # one channel fewer would break the SLO (the integer split is tight) unless the
        # footprint or the 1-channel floor binds
        n = _row(sol, 0)["channels"]
        from models.iks import device
        from models.iks.optimize import _tenant_p99_us

        sat = float(device.tech_table()["random_sat_gbps"][0])
        if n > 1:
            assert _tenant_p99_us(n - 1, 64.0, 32.0, 191.0, 0, sat) > slo


def test_several_tenants_and_devices():
    sol = optimize.solve("iks-channel-split", {
        "n_devices": 2, "corpus_gb": 600.0, "tenant_bw_gbps": [64.0, 32.0, 16.0],
        "tenant_slo_p99_us": [193.0, 195.0, 200.0], "tenant_footprint_gb": [100.0, 64.0, 200.0],
        "tenant_device": [0, 0, 1],
    })
    assert sol.status == "optimal"
    by_dev = {0: 0, 1: 0}
    for r in sol.rows:
        by_dev[r["device"]] += r["channels"]
    assert by_dev == {0: 64, 1: 64}
    assert _row(sol, 2)["channels"] == 25  # 200 GB footprint / 8 GB
    # the half split cannot hold a 600-GB corpus on 2 x 32 channels
    assert sol.summary["heuristic_fits_corpus"] is False
    assert math.isnan(sol.summary["enns_qps_heuristic_half_split"])


def test_infeasible_and_bad_inputs():
    sol = optimize.solve("iks-channel-split", {"corpus_gb": 500.0, "tenant_footprint_gb": 100.0})
    assert sol.status != "optimal"
    with pytest.raises(DseError, match="one per tenant"):
        optimize.solve("iks-channel-split", {"tenant_bw_gbps": [1.0, 2.0], "tenant_slo_p99_us": [200.0, 200.0, 200.0]})
    with pytest.raises(DseError, match="below what its solo run"):
        optimize.solve("iks-channel-split", {"tenant_slo_p99_us": 150.0})
