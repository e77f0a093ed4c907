"""bandslim: the protocol arithmetic, invariants of the transfer modes (its claims:
tests/test_claims_all.py)."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry

SIZES = np.asarray([4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192], dtype=float)


@pytest.fixture(scope="module")
def model():
    return registry.get("bandslim")


def test_command_traffic_is_the_nvme_spec_sizes(model):
    # one command: 64 B SQE + 16 B CQE + 4 B SQ doorbell + 4 B CQ doorbell
    assert model.point(mode="piggyback", value_b=35)["traffic_per_put_b"] == pytest.approx(88.0)
    # 36 B needs a second command; 35 + 56 = 91 B still fits in two, 92 B needs three
    assert model.point(mode="piggyback", value_b=91)["cmds_per_put_count"] == 2
    assert model.point(mode="piggyback", value_b=92)["cmds_per_put_count"] == 3
    # Baseline: one command plus a whole page, then a PRP list beyond two pages
    assert model.point(mode="baseline", value_b=1)["traffic_per_put_b"] == pytest.approx(88 + 4096)
    assert model.point(mode="baseline", value_b=3 * 4096)["traffic_per_put_b"] == pytest.approx(88 + 3 * 4096 + 3 * 8)


def test_mixgraph_table_matches_the_article(model):
    from models.bandslim import workloads

    # kvssd.md §5: W(M) has a 1 KB maximum and ~70% of values below 35 B
    assert workloads.fraction_below("wm", 35) == pytest.approx(0.70, abs=0.03)
    assert workloads.fraction_below("wm", 1025) == pytest.approx(1.0)
    # W(B): 8 B / 2 KB at 9:1
    assert model.point(workload="wb", mode="baseline")["mean_value_b"] == pytest.approx(0.9 * 8 + 0.1 * 2048)


def test_fitted_constant_reproduces(model):
    from models.bandslim.calibration import fit_dma_eff_frac

    default = model.param_map()["dma_eff_frac"].default
    assert fit_dma_eff_frac() == pytest.approx(default, rel=0.01)


def test_more_link_never_slower(model):
    for mode in ("baseline", "piggyback", "adaptive_p"):
        lat = model.run({"mode": mode, "value_b": 4096.0, "lanes": np.asarray([1, 2, 4, 8, 16], dtype=float)})["put_latency_us"]
        assert np.all(np.diff(lat) <= 1e-9)
        lat = model.run({"mode": mode, "value_b": 4096.0, "pcie_gen": np.asarray([2, 3, 4, 5, 6], dtype=float)})["put_latency_us"]
        assert np.all(np.diff(lat) <= 1e-9)


def test_bigger_values_never_cheaper(model):
    for mode in ("baseline", "piggyback"):
        out = model.run({"mode": mode, "value_b": SIZES})
        assert np.all(np.diff(out["traffic_per_put_b"]) >= 0)
        assert np.all(np.diff(out["put_latency_us"]) >= -1e-9)
    cxl = model.run({"mode": "cxl", "pcie_gen": 5, "value_b": SIZES})
    assert np.all(np.diff(cxl["traffic_per_put_b"]) >= 0)


def test_raising_alpha_trades_latency_for_traffic(model):
    alphas = np.asarray([1, 2, 4, 8], dtype=float)
    out = model.run({"mode": "adaptive_p", "workload": "wm", "tau_b": 64.0, "alpha_x": alphas})
    assert np.all(np.diff(out["traffic_per_put_b"]) <= 0)
    assert np.all(np.diff(out["put_latency_us"]) >= 0)


def test_adaptive_at_its_threshold_beats_both_pure_modes(model):
    for gen in (2, 5):
        tau = model.point(mode="piggyback", pcie_gen=gen)["tau_opt_b"]
        ad = model.run({"mode": "adaptive_p", "pcie_gen": gen, "tau_b": tau, "value_b": SIZES})["put_latency_us"]
        pb = model.run({"mode": "piggyback", "pcie_gen": gen, "value_b": SIZES})["put_latency_us"]
        base = model.run({"mode": "baseline", "pcie_gen": gen, "value_b": SIZES})["put_latency_us"]
        assert np.all(ad <= np.minimum(pb, base) + 1e-9)


def test_cxl_needs_a_cxl_link(model):
    assert np.isnan(model.point(mode="cxl", pcie_gen=4)["put_latency_us"])
    assert np.isnan(model.point(mode="adaptive_c", pcie_gen=6, cxl_flit="68B")["put_latency_us"])
    assert np.isfinite(model.point(mode="adaptive_c", pcie_gen=6, cxl_flit="256B")["put_latency_us"])
    # the CXL parts carry the cost block's CXL premium
    assert model.point(mode="cxl", pcie_gen=5)["device_usd"] > model.point(mode="piggyback", pcie_gen=5)["device_usd"]


def test_capacity_never_cheaper(model):
    usd = model.run({"capacity_tb": np.asarray([0.5, 1, 2, 4, 8], dtype=float)})["device_usd"]
    assert np.all(np.diff(usd) > 0)
