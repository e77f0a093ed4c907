"""directcxl: calibration anchors (its claims: tests/test_claims_all.py) and the invariants of the access paths."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.directcxl import calibration as cal

REAL = ["dlrm", "memdb", "ligra_mis", "ligra_bfs", "ligra_cc", "ligra_bc"]


@pytest.fixture(scope="module")
def m():
    return registry.get("directcxl")


def test_stage_times_reproduce_the_cycle_anchors(m):
    cxl = m.point(path="directcxl", workload="ubench")
    assert cxl["load_latency_cyc"] == pytest.approx(328.0, rel=1e-9)
    assert cxl["fabric_share_frac"] == pytest.approx(0.778, rel=1e-9)
    assert cxl["phy_share_frac"] == pytest.approx(0.28, rel=1e-9)
    nosw = m.point(path="directcxl", workload="ubench", switch_levels=0)
    assert cxl["load_latency_cyc"] / nosw["load_latency_cyc"] == pytest.approx(1.54, rel=1e-9)
    assert m.point(path="local", workload="ubench")["load_latency_cyc"] == pytest.approx(60.0, rel=1e-9)
    assert m.point(path="directcxl", workload="ubench", payload_b=4096)["llc_share_frac"] == pytest.approx(0.67, rel=1e-9)
    rdma = m.point(path="rdma", workload="ubench")
    assert rdma["load_latency_cyc"] == pytest.approx(2705.0, rel=1e-9)
    assert rdma["best_load_cyc"] == pytest.approx(2027.0, rel=1e-9)
    assert m.point(path="rdma", workload="ubench", payload_b=4096)["copy_share_frac"] == pytest.approx(0.289, rel=1e-6)


def test_stages_keep_their_clock_domains(m):
    # doubling the IP clock halves only the IP stages: 163 - 92 PHY = RP/EP + switch IP cycles
    base = m.point(path="directcxl", workload="ubench")["load_latency_ns"]
    fast_ip = m.point(path="directcxl", workload="ubench", ip_clock_mhz=500)["load_latency_ns"]
    ip_ns = (cal.RP_EP_IP_CYC + cal.SWITCH_IP_CYC) / cal.PROTO_IP_MHZ * 1e3
    assert base - fast_ip == pytest.approx(ip_ns / 2, rel=1e-9)


def test_more_switch_levels_never_faster(m):
    lv = np.arange(0, 5)
    for platform in ("fpga", "asic"):
        out = m.run({"path": "directcxl", "workload": "dlrm", "switch_levels": lv, "platform": platform})
        assert np.all(np.diff(out["load_latency_ns"]) > 0)
        assert np.all(np.diff(out["time_vs_local_x"]) >= 0)


def test_more_mshrs_never_slower_and_bandwidth_is_mshr_bound(m):
    mshr = np.array([1, 2, 4, 8, 16, 32, 64])
    out = m.run({"path": "directcxl", "workload": "ubench", "payload_b": 4096, "llc_mshr": mshr})
    assert np.all(np.diff(out["payload_latency_ns"]) <= 0)
    assert out["bw_gbps"][-1] > 2 * out["bw_gbps"][0]


def test_path_ordering_on_real_workloads(m):
    t = {p: m.run({"path": p, "workload": REAL})["time_vs_local_x"] for p in ("local", "directcxl", "swap", "rdma")}
    assert np.allclose(t["local"], 1.0)
    assert np.all(t["directcxl"] > 1.0)
    assert np.all(t["swap"] > t["directcxl"])
    assert np.all(t["rdma"] > t["directcxl"])


def test_cache_hit_is_dram_like_only_for_load_store_paths(m):
    for p in ("local", "directcxl", "swap", "tpp"):
        assert m.point(path=p, workload="ubench")["hit_latency_cyc"] == pytest.approx(cal.L1_HIT_CYC)
    for p in ("rdma", "kvs"):
        assert m.point(path=p, workload="ubench")["hit_latency_cyc"] > 100 * cal.L1_HIT_CYC


def test_more_local_memory_never_slows_swap(m):
    mib = np.array([10.0, 100.0, 1000.0, 10000.0])
    out = m.run({"path": "swap", "workload": "memdb", "local_mem_mib": mib})
    assert np.all(np.diff(out["time_vs_local_x"]) < 0)


def test_asic_projection_is_faster_than_the_fpga(m):
    fpga = m.point(path="directcxl", workload="ubench")
    asic = m.point(path="directcxl", workload="ubench", platform="asic", cpu_clock_mhz=3000)
    assert asic["load_latency_ns"] < fpga["load_latency_ns"] / 5
    # an ASIC CXL load through one switch lands in the few-hundred-ns range (Pond-class numbers)
    assert 150 < asic["load_latency_ns"] < 500


def test_cost_cxl_pool_cheaper_than_rdma_pool_and_grows_with_capacity(m):
    cap = np.array([256.0, 1024.0, 4096.0])
    cxl = m.run({"path": "directcxl", "pool_capacity_gib": cap})
    rdma = m.run({"path": "swap", "pool_capacity_gib": cap})
    assert np.all(cxl["pool_capex_usd"] < rdma["pool_capex_usd"])
    assert np.all(np.diff(cxl["pool_capex_usd"]) > 0)
    assert np.all(cxl["pool_tco_usd"] > cxl["pool_capex_usd"])


def test_fitted_constants_reproduce():
    refit = cal.fit()
    shipped = cal.fitted()
    for k, v in refit.items():
        assert v == pytest.approx(shipped[k], rel=1e-3), k
