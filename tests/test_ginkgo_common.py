"""ginkgo on the mem-analytics scale: one host, its DRAM cache and CXL memory for the footprint."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.blocks import cost, workload
from models.ginkgo import model as gk


@pytest.fixture(scope="module")
def m():
    return registry.get("ginkgo")


def test_default_point_is_physically_plausible(m):
    d = m.point()
    # AMAT between the DRAM cache (80-100 ns) and CXL memory behind a probe plus a metadata
    # read (90 + 200 + 113 ns): random lines give the index metadata no locality
    assert 90.0 < d["access_latency_ns"] < 90.0 + 200.0 + 113.6
    # the article's metric stays at the article's capacity, the family one at footprint_gib
    assert d["amat_ns"] == pytest.approx(m.point(footprint_gib=1.0)["amat_ns"])
    assert d["cxl_device_count"] == 1.0
    # a 2-socket server with 64 GiB DRAM cache + 256 GiB CXL: 300-1000 W, ~10 k$
    assert 300.0 < d["power_w"] < 1000.0
    assert 8_000.0 < d["capex_usd"] < 20_000.0
    assert d["work_per_s"] == pytest.approx(float(workload.mem_queries_per_s(d["access_latency_ns"], d["system_bw_gbps"])))


def test_index_schemes_on_random_lines(m):
    out = {s: m.point(scheme=s) for s in gk.SCHEMES}
    # uniform random lines: a quarter of the footprint in DRAM hits a quarter of the time
    assert out["ideal"]["access_latency_ns"] == pytest.approx(0.25 * 90.0 + 0.75 * (90.0 + 200.0))
    assert all(out["ideal"]["access_latency_ns"] <= o["access_latency_ns"] for o in out.values())
    # Ginkgo's per-huge-page metadata (640 kB at 256 GiB) overflows the 64 kB SRAM without
    # locality: it pays double reads Alloy (no metadata) does not ...
    assert out["ginkgo"]["access_latency_ns"] > out["alloy"]["access_latency_ns"]
    # ... but misses less than direct-mapped Alloy, so it moves less over the CXL devices
    assert out["ginkgo"]["work_per_s"] > out["alloy"]["work_per_s"]
    # same hardware: same capex whatever the index
    assert out["ginkgo"]["capex_usd"] == pytest.approx(out["alloy"]["capex_usd"])


def test_bigger_footprint_costs_more(m):
    fp = np.array([16.0, 64.0, 256.0, 1024.0, 2048.0])
    out = m.run({"footprint_gib": fp})
    assert np.all(np.diff(out["capex_usd"]) > 0)
    assert np.all(np.diff(out["power_w"]) > 0)
    assert np.all(np.diff(out["cxl_device_count"]) >= 0)


def test_capex_is_host_plus_dram_cache_plus_cxl_memory(m):
    d = m.point(footprint_gib=512.0)
    dram = cost.component_price("dram_ddr5").value
    mem = 128.0 * dram + 512.0 * dram * (1.0 + cost.component_price("cxl_premium_frac").value)
    assert d["capex_usd"] == pytest.approx(float(workload.host_server(0.0)["capex_usd"]) + mem)
    # a larger DRAM share buys DRAM at the plain price
    e = m.point(footprint_gib=512.0, dram_to_cxl_ratio=0.5)
    assert e["capex_usd"] - d["capex_usd"] == pytest.approx(128.0 * dram)


def test_infeasible_points_carry_a_reason(m):
    ev = m.run_full({"footprint_gib": [2048.0, 65536.0, 256.0], "dram_to_cxl_ratio": [0.25, 0.01, 0.25]})
    assert ev.feasible.tolist() == [True, False, True]
    assert ev.reason_of(1) == gk.TOO_MANY_DEVICES
    ev = m.run_full({"footprint_gib": 16384.0, "dram_to_cxl_ratio": 0.5})
    assert not ev.feasible[0] and ev.reason_of(0) == gk.TOO_MUCH_DRAM
