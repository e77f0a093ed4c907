"""cxl-ssd on the mem-analytics scale: one host + the memory that holds the footprint."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.blocks import workload
from models.cxl_ssd import model as cs


@pytest.fixture(scope="module")
def m():
    return registry.get("cxl-ssd")


@pytest.fixture(scope="module")
def designs(m):
    return {d: m.point(design=d) for d in cs.DESIGNS}


def test_default_points_are_physically_plausible(designs):
    o = designs
    # host DDR at the article's Table 1a timings ~50-120 ns; DDR behind CXL ~150-300 ns;
    # a Z-NAND read (3 us tR + firmware) a few us; the PCIe BAR adds its round trip
    assert 40.0 < o["dram"]["access_latency_ns"] < 120.0
    assert 150.0 < o["cxl_dram"]["access_latency_ns"] < 300.0
    assert 3_000.0 < o["cxl_ssd"]["access_latency_ns"] < 10_000.0
    assert o["pcie_ssd"]["access_latency_ns"] > o["cxl_ssd"]["access_latency_ns"]
    for d in o.values():
        assert 300.0 < d["power_w"] < 1000.0  # one 2-socket server and a few devices
        assert 8_000.0 < d["capex_usd"] < 20_000.0
        assert d["work_per_s"] > 0
    assert o["dram"]["work_per_s"] > o["cxl_dram"]["work_per_s"] > o["cxl_ssd"]["work_per_s"] > o["pcie_ssd"]["work_per_s"]
    # random lines give the annotations nothing to keep: ASSD = SSD for this query
    assert o["cxl_assd"]["work_per_s"] == pytest.approx(o["cxl_ssd"]["work_per_s"])


def test_pcie_bar_keeps_one_access_in_flight(designs):
    d = designs["pcie_ssd"]
    q = workload.mem_queries_per_s(d["access_latency_ns"], d["system_bw_gbps"], mlp=1.0)
    assert d["work_per_s"] == pytest.approx(float(q))
    c = designs["cxl_ssd"]
    assert c["work_per_s"] == pytest.approx(float(workload.mem_queries_per_s(c["access_latency_ns"], c["system_bw_gbps"])))


def test_capex_is_host_plus_devices(m, designs):
    host = float(workload.host_server(0.0)["capex_usd"])
    for d in ("cxl_dram", "pcie_ssd", "cxl_ssd"):
        o = designs[d]
        assert o["device_count"] == 8.0  # 256 GiB on 32 GiB devices
        assert o["capex_usd"] == pytest.approx(host + 8 * o["device_usd"]), d
        more = m.point(design=d, footprint_gib=256.0 + 32.0)  # one device more
        assert more["capex_usd"] - o["capex_usd"] == pytest.approx(o["device_usd"]), d
    dram = designs["dram"]
    assert dram["device_count"] == 0.0
    assert dram["capex_usd"] == pytest.approx(host + 256.0 * m.param_map()["dram_usd_per_gib"].default)


def test_bigger_footprint_costs_more(m):
    fp = np.array([16.0, 64.0, 256.0, 512.0])
    for d in cs.DESIGNS:
        out = m.run({"design": d, "footprint_gib": fp})
        assert np.all(np.diff(out["capex_usd"]) > 0), d
        assert np.all(np.diff(out["power_w"]) > 0), d


def test_infeasible_points_carry_a_reason(m):
    ev = m.run_full({"design": ["dram", "cxl_ssd", "cxl_ssd"], "footprint_gib": [8192.0, 2048.0, 2048.0],
                     "switch_hops": [0, 0, 1]})
    assert ev.feasible.tolist() == [False, False, True]
    assert ev.reason_of(0) == cs.TOO_MUCH_DRAM
    assert ev.reason_of(1) == cs.TOO_MANY_DEVICES  # 64 devices on 16 x4 ports; one switch level fans out 4x
