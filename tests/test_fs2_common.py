"""fs2: the mem-analytics common metrics (work_per_s, capex_usd, power_w, access_latency_ns)."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.blocks import workload
from models.blocks.cost import component_price


@pytest.fixture(scope="module")
def m():
    return registry.get("fs2")


def test_default_point_is_physically_plausible(m):
    o = m.point()
    host = workload.host_server(32.0)
    # the host, 64 endpoints with 256 GiB of DRAM and a few dozen switches: tens of k$, ~1-3 kW
    assert host["capex_usd"] + 256 * component_price("dram_ddr5").value < o["capex_usd"] < 100_000.0
    assert 1000.0 < o["power_w"] < 3000.0
    # a miss crosses switches (150 ns each) to its home: slower than a local access, under 10 us
    assert o["local_latency_ns"] < o["access_latency_ns"] < 10_000.0
    assert 0.0 < o["work_per_s"] and np.isfinite(o["usd_per_work"])


def test_fs2_beats_vanilla_for_the_family_query(m):
    fs2, van = m.point(design="fs2"), m.point(design="vanilla")
    assert fs2["access_latency_ns"] < van["access_latency_ns"]
    assert fs2["work_per_s"] > van["work_per_s"]
    assert fs2["usd_per_work"] < van["usd_per_work"]


def test_bigger_footprint_more_capex_and_slower_accesses(m):
    out = m.run({"footprint_gib": np.array([16.0, 256.0, 4096.0, 65536.0])})
    assert np.all(np.diff(out["capex_usd"]) > 0)
    assert np.all(np.diff(out["power_w"]) > 0)
    assert np.all(np.diff(out["access_latency_ns"]) > 0)  # the caches cover less of it
    assert np.all(np.diff(out["work_per_s"]) < 0)


def test_boundary_includes_host_endpoints_and_switches(m):
    o = m.point(design="vanilla")
    n_sw = o["n_switches_count"]
    expected = (workload.host_server(32.0)["capex_usd"] + n_sw * component_price("cxl_switch").value
                + 64 * component_price("cxl_memory_controller").value + 256 * component_price("dram_ddr5").value)
    assert o["capex_usd"] == pytest.approx(expected)
    more = m.point(design="vanilla", n_devices=128)
    assert more["capex_usd"] > o["capex_usd"]


def test_article_metrics_ignore_the_family_knob(m):
    a, b = m.point(footprint_gib=16.0), m.point(footprint_gib=4096.0)
    for k in ("speedup_x", "amat_ns", "throughput_per_s", "fabric_usd", "fabric_power_w"):
        assert a[k] == b[k]


def test_sweep_points_are_feasible_and_finite(m):
    rng = np.random.default_rng(0)
    ev = m.run_full({"design": rng.choice(["vanilla", "fs2_switch", "fs2_topology", "fs2_sched", "fs2"], 64),
                     "n_devices": rng.choice([16, 64, 256], 64), "footprint_gib": rng.uniform(1.0, 1e5, 64)})
    assert ev.feasible.all()
    for k in ("work_per_s", "capex_usd", "power_w", "usd_per_work", "access_latency_ns"):
        assert np.all(np.isfinite(ev.metrics[k])) and np.all(ev.metrics[k] > 0)
