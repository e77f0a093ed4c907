"""directcxl on the mem-analytics scale: hosts + the memory that holds the footprint."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.blocks import workload
from models.directcxl import model as dc
from models.directcxl.ops import PATHS

#: The ASIC projection the comparison uses (spaces/directcxl.toml).
ASIC = {"platform": "asic", "cpu_clock_mhz": 3000.0, "rdma_link_gbit_s": 100.0}


@pytest.fixture(scope="module")
def m():
    return registry.get("directcxl")


def _at(m, **kw):
    return m.point(**{**ASIC, **kw})


def test_asic_paths_are_physically_plausible(m):
    local, cxl, rdma, swap = (_at(m, path=p) for p in ("local", "directcxl", "rdma", "swap"))
    # local DRAM ~50-130 ns, CXL through a switch ~200-400 ns, an RDMA pool a few us
    assert 50.0 < local["access_latency_ns"] < 130.0
    assert 200.0 < cxl["access_latency_ns"] < 400.0
    assert 1_000.0 < rdma["access_latency_ns"] < 10_000.0
    assert swap["access_latency_ns"] > rdma["access_latency_ns"]  # a 4 KB page and a kernel fault per miss
    for d in (local, cxl, rdma, swap):
        # four 2-socket hosts: 4 x (300-1000 W), plus the pool
        assert 4 * 300.0 < d["power_w"] < 4 * 1000.0
        assert d["work_per_s"] > 0
    assert local["work_per_s"] > cxl["work_per_s"] > rdma["work_per_s"] > swap["work_per_s"]
    assert local["usd_per_work"] < cxl["usd_per_work"] < rdma["usd_per_work"] < swap["usd_per_work"]


def test_work_follows_the_workload_block(m):
    d = _at(m, path="directcxl")
    q = float(workload.mem_queries_per_s(d["access_latency_ns"], d["host_bw_gbps"]))
    assert d["work_per_s"] == pytest.approx(4 * q)


def test_boundary_is_hosts_plus_pool(m):
    for path in PATHS:
        d = _at(m, path=path)
        host = workload.host_server(100.0 / 1024.0)  # local_mem_mib per host
        assert d["capex_usd"] == pytest.approx(4 * float(host["capex_usd"]) + d["pool_capex_usd"]), path
        assert d["power_w"] == pytest.approx(4 * float(host["power_w"]) + d["pool_power_w"]), path
    # one host more adds a server (and, on an RDMA pool, its RNIC)
    a, b = _at(m, path="directcxl", hosts=4), _at(m, path="directcxl", hosts=5)
    assert b["capex_usd"] - a["capex_usd"] == pytest.approx(float(workload.host_server(100.0 / 1024.0)["capex_usd"]) + (b["pool_capex_usd"] - a["pool_capex_usd"]))


def test_footprint_knob_is_the_pool_capacity(m):
    assert m.workload_param("footprint_gib") == "pool_capacity_gib"
    fp = np.array([64.0, 256.0, 1024.0, 4096.0])
    for path in PATHS:
        out = m.run({**ASIC, "path": path, "pool_capacity_gib": fp})
        assert np.all(np.diff(out["capex_usd"]) > 0), path
        assert np.all(np.diff(out["power_w"]) > 0), path


def test_infeasible_points_carry_a_reason(m):
    ev = m.run_full({**ASIC, "path": ["local", "directcxl"], "pool_capacity_gib": 65536.0, "hosts": 4})
    assert ev.feasible.tolist() == [False, True]
    assert ev.reason_of(0) == dc.TOO_MUCH_LOCAL_DRAM
