"""cxl-expander on the mem-analytics scale: one host + its local DRAM + CXL expanders."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.blocks import workload
from models.cxl_expander import model as cx


@pytest.fixture(scope="module")
def m():
    return registry.get("cxl-expander")


def test_default_point_is_physically_plausible(m):
    d = m.point()
    # local DDR5 ~100-120 ns, a CXL expander 200-300 ns; the mix sits between them
    assert 95.0 < d["local_dram_latency_ns"] < 125.0
    assert 200.0 < d["loaded_read_latency_ns"] < 300.0
    assert d["local_dram_latency_ns"] < d["access_latency_ns"] < d["loaded_read_latency_ns"]
    # a 2-socket server with a few hundred GiB and one expander: 300-1000 W, ~10 k$
    assert 300.0 < d["power_w"] < 1000.0
    assert 8_000.0 < d["capex_usd"] < 20_000.0
    assert d["expander_count"] == 1.0  # 256 GiB footprint - 128 GiB local -> one 256 GiB device
    assert d["work_per_s"] > 0 and d["usd_per_work"] > 0
    # the local-only baseline: DDR5 latency, ~0.5 TB/s of a 16-channel host
    loc = m.point(placement="local_only")
    assert loc["access_latency_ns"] == pytest.approx(d["local_dram_latency_ns"])
    assert 350.0 < loc["system_bw_gbps"] < 615.0  # below 16 x 38.4 GB/s peak
    assert loc["expander_count"] == 0.0


def test_work_follows_the_workload_block(m):
    d = m.point()
    assert d["work_per_s"] == pytest.approx(float(workload.mem_queries_per_s(d["access_latency_ns"], d["system_bw_gbps"])))


def test_bigger_footprint_costs_more(m):
    fp = np.array([64.0, 256.0, 1024.0, 4096.0])
    for placement in cx.PLACEMENTS:
        out = m.run({"footprint_gib": fp, "placement": placement})
        assert np.all(np.diff(out["capex_usd"]) >= 0), placement
        assert np.all(np.diff(out["power_w"]) >= 0), placement
    tiered = m.run({"footprint_gib": fp})
    assert np.all(np.diff(tiered["expander_count"]) > 0)
    assert np.all(np.diff(tiered["access_latency_ns"]) > 0)  # more of the footprint on CXL


def test_capex_includes_the_host_and_each_expander_at_its_price(m):
    one = m.point(footprint_gib=256.0)
    two = m.point(footprint_gib=384.0)  # 128 GiB local + 256 GiB: still one device
    assert two["expander_count"] == one["expander_count"] == 1.0
    three = m.point(footprint_gib=512.0)  # 384 GiB on CXL -> two devices
    assert three["expander_count"] == 2.0
    assert three["capex_usd"] - one["capex_usd"] == pytest.approx(one["device_usd"])
    # a second device: its own power plus its DIMMs' capacity-proportional power (model._system)
    assert three["power_w"] - one["power_w"] == pytest.approx(one["device_power_w"] + 256.0 * workload.DRAM_W_PER_GIB)
    host = workload.host_server(128.0)
    assert one["capex_usd"] == pytest.approx(float(host["capex_usd"]) + one["device_usd"])


def test_local_only_bills_the_whole_footprint_in_dimms(m):
    a, b = m.point(placement="local_only", footprint_gib=256.0), m.point(placement="local_only", footprint_gib=512.0)
    assert b["capex_usd"] - a["capex_usd"] == pytest.approx(256.0 * float(workload.host_server(1.0)["capex_usd"] - workload.host_server(0.0)["capex_usd"]))


def test_infeasible_points_carry_a_reason(m):
    ev = m.run_full({"placement": ["local_only", "tiered", "tiered"], "footprint_gib": [65536.0, 65536.0, 256.0]})
    assert ev.feasible.tolist() == [False, False, True]
    assert ev.reason_of(0) == cx.TOO_MUCH_LOCAL_DRAM
    assert ev.reason_of(1) == cx.TOO_MANY_EXPANDERS  # 256 devices on 64 lanes
    # a switch fans the same lanes out to more devices
    # 2304 - 128 GiB local -> 9 devices: 64 lanes take 8 direct x8 devices, 16 behind switches
    assert not m.run_full({"footprint_gib": 2304.0}).feasible[0]
    assert m.run_full({"footprint_gib": 2304.0, "switch_hops": 1}).feasible[0]
