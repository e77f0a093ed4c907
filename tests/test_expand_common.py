"""expand: the mem-analytics common metrics (work_per_s, capex_usd, power_w, access_latency_ns)."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.blocks import workload
from models.blocks.cost import component_price


@pytest.fixture(scope="module")
def m():
    return registry.get("expand")


def test_default_point_is_physically_plausible(m):
    o = m.point()
    host = workload.host_server(32.0)
    # one host and one 2 TB CXL-SSD: more than the bare host, less than the host + $5k
    assert host["capex_usd"] < o["capex_usd"] < host["capex_usd"] + 5000.0
    assert host["power_w"] < o["power_w"] < host["power_w"] + 100.0
    # a CXL-SSD miss is slower than a DRAM read but faster than an unhidden Z-NAND read
    assert 90.0 < o["access_latency_ns"] < 3500.0
    # bandwidth-bound: the queries cannot move more 64 B lines than the system delivers
    assert o["work_per_s"] * workload.ACCESSES_PER_QUERY * 64 / 1e9 <= o["system_bw_gbps"] * (1 + 1e-9)
    assert 0.0 < o["work_per_s"] < 1e4
    assert o["usd_per_work"] > 0.0 and np.isfinite(o["usd_per_work"])


def test_local_dram_is_faster_per_query_than_the_cxl_ssd(m):
    local, ssd = m.point(design="local_dram"), m.point(design="nopf")
    assert local["access_latency_ns"] < ssd["access_latency_ns"]
    assert local["work_per_s"] > ssd["work_per_s"]
    assert local["ssd_count"] == 0.0 and ssd["ssd_count"] == 1.0


def test_bigger_footprint_more_capex_and_devices(m):
    out = m.run({"footprint_gib": np.array([64.0, 256.0, 4096.0, 65536.0])})
    assert np.all(np.diff(out["capex_usd"]) > 0)
    assert np.all(np.diff(out["ssd_count"]) >= 0) and out["ssd_count"][-1] > 1
    assert np.all(np.diff(out["power_w"]) >= 0)
    local = m.run({"design": "local_dram", "footprint_gib": np.array([64.0, 1024.0])})
    assert local["capex_usd"][1] > local["capex_usd"][0] and local["power_w"][1] > local["power_w"][0]


def test_prefetching_hides_latency_at_the_footprint(m):
    assert m.point(design="expand")["access_latency_ns"] < m.point(design="nopf")["access_latency_ns"]


def test_boundary_includes_host_ssd_and_switches(m):
    o0, o2 = m.point(switch_levels=0), m.point(switch_levels=2)
    assert o2["capex_usd"] - o0["capex_usd"] == pytest.approx(2 * component_price("cxl_switch").value)
    assert o2["power_w"] - o0["power_w"] == pytest.approx(2 * component_price("cxl_switch_power_w").value)
    # the host server is inside: its price moves capex one for one
    assert o0["capex_usd"] > component_price("host_server_2s").value


def test_infeasible_point_carries_a_reason(m):
    ev = m.run_full({"link_gen": np.array(["pcie6", "pcie5"]), "flit_mode": "68B"})
    assert ev.feasible.tolist() == [False, True]
    assert "68" in ev.reason_of(0)


def test_article_metrics_ignore_the_family_knob(m):
    a, b = m.point(footprint_gib=16.0), m.point(footprint_gib=4096.0)
    for k in ("time_ns_per_kinst", "speedup_vs_nopf_x", "memory_usd", "e2e_latency_ns"):
        assert a[k] == b[k]


def test_local_dram_beyond_the_host_is_infeasible_with_a_reason(m):
    ev = m.run_full({"design": np.array(["local_dram", "expand"]), "footprint_gib": 8192.0})
    assert ev.feasible.tolist() == [False, True]
    assert "host_max_dram_gib" in ev.reason_of(0)
