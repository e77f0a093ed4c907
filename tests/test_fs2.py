"""fs2: headline claims, fabric geometry, hit-ratio mechanics, invariants of the FS² schemes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dse import registry
from dse.claims import evaluate_claims

CLAIMS = Path(__file__).resolve().parents[1] / "models" / "fs2" / "claims.yaml"
WORKLOADS = ["dlrm_inf", "dlrm_train", "ycsb_a", "ycsb_b", "ycsb_d"]


@pytest.fixture(scope="module")
def model():
    return registry.get("fs2")


@pytest.fixture(scope="module")
def claims():
    return {r.id: r for r in evaluate_claims(CLAIMS)}


def test_predicted_single_ha_schemes(claims):
    # not fitted: topology (star instead of a 3-level tree) and the combination
    assert claims["topology_single"].value == pytest.approx(1.33, rel=0.15)
    assert claims["fs2_avg_single_ha"].value == pytest.approx(1.934, rel=0.15)


def test_tree_geometry_by_hand(model):
    # 64 devices, fanout 4: three levels, 16 + 4 + 1 switches
    v = model.point(design="vanilla", ha="single")
    assert v["mean_switches_count"] == pytest.approx(3.0)
    assert v["n_switches_count"] == pytest.approx(21.0)
    # distributed homes: 3/64 under the same leaf (1 switch), 12/64 under the same level-2
    # switch (3), 48/64 across the root (5), 1/64 the device itself (0)
    d = model.point(design="vanilla", ha="distributed")
    assert d["mean_switches_count"] == pytest.approx((3 * 1 + 12 * 3 + 48 * 5) / 64)


def test_table_lookup_equals_direct_geometry():
    from models.fs2 import fabric

    n = np.asarray([1, 5, 17, 64, 100, 256], dtype=float)
    f = np.asarray([4, 8, 16, 32, 4, 4], dtype=float)
    for dist in (False, True):
        d = np.full(n.shape, dist)
        for topo in fabric.TOPOLOGIES:
            a = fabric.geometry(topo, d, n, f, fabric.TABLE_LEVELS[topo])
            b = fabric.lookup(topo, d, n, f)
            for k in a.__dataclass_fields__:
                np.testing.assert_allclose(getattr(a, k), getattr(b, k), err_msg=f"{topo}.{k}")
            np.testing.assert_allclose(a.prob.sum(axis=1), 1.0)


def test_churn_survival():
    from models.fs2.locality import survive_frac

    assert survive_frac(1.0, 64.0, 0.05) == pytest.approx(1.0 / (1.0 + 0.05 * 63))
    assert survive_frac(64.0, 64.0, 0.5) == pytest.approx(1.0)  # nobody outside the subtree
    assert survive_frac(1.0, 64.0, 0.0) == pytest.approx(1.0)  # no writes, no churn


def test_hit_ratio_falls_with_devices(model):
    n = np.asarray([1, 4, 16, 64, 256], dtype=float)
    for w in WORKLOADS:
        hit = model.run({"design": "vanilla", "workload": w, "n_devices": n})["device_hit_frac"]
        assert np.all(np.diff(hit) < 0)


def test_vanilla_is_the_reference(model):
    out = model.run({"design": "vanilla", "workload": WORKLOADS, "ha": "distributed"})
    np.testing.assert_allclose(out["speedup_x"], 1.0)


def test_combined_design_beats_each_scheme(model):
    for ha in ("single", "distributed"):
        fs2 = model.run({"design": "fs2", "ha": ha, "workload": WORKLOADS})["speedup_x"]
        for d in ("fs2_switch", "fs2_topology", "fs2_sched"):
            alone = model.run({"design": d, "ha": ha, "workload": WORKLOADS})["speedup_x"]
            assert np.all(fs2 >= alone - 1e-12), d
            assert np.all(alone >= 1.0 - 1e-12), d


def test_more_switch_cache_never_slower_and_costs_more(model):
    mb = np.asarray([0, 6, 12, 24, 48, 96, 192], dtype=float)
    for w in WORKLOADS:
        out = model.run({"design": "fs2_switch", "workload": w, "switch_cache_mb": mb})
        assert np.all(np.diff(out["speedup_x"]) >= -1e-12)
        assert np.all(np.diff(out["fabric_usd"]) > 0)
        assert np.all(np.diff(out["fabric_power_w"]) > 0)
    # no cache: nothing to gain over vanilla
    assert model.point(design="fs2_switch", switch_cache_mb=0)["speedup_x"] == pytest.approx(1.0)


def test_faster_switches_and_links_never_slower(model):
    for key in ("switch_ns", "link_ns"):
        vals = np.asarray([20, 50, 100, 200, 400], dtype=float)
        for d in ("vanilla", "fs2"):
            amat = model.run({"design": d, key: vals, "ha": "distributed"})["amat_ns"]
            assert np.all(np.diff(amat) > 0), (key, d)


def test_switch_cache_power_and_area_scale_with_size(model):
    r = model.point(design="fs2_switch", switch_cache_mb=48)
    assert r["sw_cache_power_w"] == pytest.approx(2 * 3.35)
    assert r["sw_cache_area_mm2"] == pytest.approx(2 * 89.48)
    assert model.point(design="vanilla")["sw_cache_power_w"] == 0.0


def test_calibration_reproduces_fitted_constants(model):
    from models.fs2.calibration import fit

    got = fit()
    for k, v in got.items():
        assert model.param_map()[k].default == pytest.approx(v, rel=1e-4), k
