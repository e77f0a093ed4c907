"""mhj: the mem-analytics common metrics (work_per_s, capex_usd, power_w, access_latency_ns)."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.blocks import workload
from models.mhj import memory
from models.mhj import model as mod


@pytest.fixture(scope="module")
def m():
    return registry.get("mhj")


def test_default_point_is_physically_plausible(m):
    o = m.point()  # MHJ on CXL local memory, one node, 256 GiB
    host = workload.host_server(512.0 * 1e9 / 2**30)
    # one host with 512 GB plus one 512 GB pool device: above the host, below host + $5k
    assert host["capex_usd"] < o["capex_usd"] < host["capex_usd"] + 5000.0
    assert host["power_w"] < o["power_w"] < host["power_w"] + 50.0
    assert o["access_latency_ns"] == pytest.approx(memory.CLM_NS)
    # the pool's 13 GB/s bounds the query rate
    assert o["work_per_s"] * workload.ACCESSES_PER_QUERY * 64 / 1e9 <= memory.CLM_READ_GBPS * (1 + 1e-9)
    assert o["work_per_s"] > 0 and np.isfinite(o["usd_per_work"])


def test_local_dram_schemes_are_faster_on_the_random_access_query(m):
    shj, mhj = m.point(scheme="shj"), m.point(scheme="mhj")
    assert shj["access_latency_ns"] < mhj["access_latency_ns"]
    assert shj["work_per_s"] > mhj["work_per_s"]
    assert shj["pool_devices_count"] == 0.0 and mhj["pool_devices_count"] == 1.0


def test_bigger_footprint_more_capex(m):
    for scheme in ("mhj", "shj"):
        out = m.run({"scheme": scheme, "pool": "asic", "footprint_gib": np.array([256.0, 1024.0, 2048.0, 4096.0])})
        assert np.all(np.diff(out["capex_usd"]) > 0), scheme
        assert np.all(np.diff(out["power_w"]) > 0), scheme


def test_more_nodes_more_hosts_in_the_boundary(m):
    one, two = m.point(scheme="mhj", pool="asic", nodes=1), m.point(scheme="mhj", pool="asic", nodes=2)
    pm = m.param_map()
    host = workload.host_server(0.0)["capex_usd"] + pm["node_dram_gib"].default * pm["dram_usd_per_gib"].default
    assert two["capex_usd"] - one["capex_usd"] == pytest.approx(host)
    assert two["work_per_s"] >= one["work_per_s"]


def test_infeasible_points_carry_a_reason(m):
    ev = m.run_full({"scheme": np.array(["shj", "mhj", "mhj"]), "pool": np.array(["asic", "asic", "clm"]),
                     "nodes": np.array([1, 1, 2]), "footprint_gib": 8192.0})
    assert ev.feasible.tolist() == [False, True, False]
    assert ev.reason_of(0) == mod.FOOTPRINT_OVER_NODES
    assert ev.reason_of(2) == mod.CLM_NOT_SHARED


def test_article_metrics_ignore_the_family_knob(m):
    a, b = m.point(footprint_gib=16.0), m.point(footprint_gib=2048.0)
    for k in ("query_s", "speedup_vs_shj_x", "usd_per_query", "pool_usd"):
        assert a[k] == b[k]
