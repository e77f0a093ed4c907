"""flexmem: the vm-host common metrics (work_per_s, capex_usd, power_w, startup_s)."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.flexmem import model as mod


@pytest.fixture(scope="module")
def m():
    return registry.get("flexmem")


def test_default_point_is_physically_plausible(m):
    o = m.point()
    # 100,000 VM-hours per hour
    assert o["work_per_s"] == pytest.approx(100_000 / 3600.0)
    # 4 GiB guests on 1 TiB hosts: a few hundred per host, not more than the RAM allows
    assert 100 < o["fleet_vms_per_host"] <= (1024 - 8) / 4
    hosts = o["fleet_hosts_count"]
    assert hosts == np.ceil(100_000 / o["fleet_vms_per_host"])
    # a host is ~$10-20k and draws 200-600 W
    assert 10_000 < o["capex_usd"] / hosts < 20_000
    assert 200 < o["power_w"] / hosts < 600
    # a VM-hour costs cents at most, not dollars
    assert 0.0 < o["usd_per_work"] < 0.05
    assert 0.1 < o["startup_s"] < 10.0


def test_more_memory_per_vm_more_hosts_and_capex(m):
    out = m.run({"vm_mem_gib": np.array([0.5, 4.0, 16.0, 128.0])})
    assert np.all(np.diff(out["fleet_hosts_count"]) > 0)
    assert np.all(np.diff(out["capex_usd"]) > 0)
    assert np.all(np.diff(out["usd_per_work"]) > 0)


def test_more_vms_more_hosts(m):
    out = m.run({"fleet_vms": np.array([1000, 10_000, 100_000])})
    assert np.all(np.diff(out["fleet_hosts_count"]) > 0)
    assert np.all(np.diff(out["work_per_s"]) > 0)


def test_flexmem_needs_no_more_hosts_than_virtio(m):
    for gib in (0.125, 4.0):
        flex, blk = m.point(vm_type="flexmem", vm_mem_gib=gib), m.point(vm_type="virtio_blk", vm_mem_gib=gib)
        assert flex["fleet_hosts_count"] <= blk["fleet_hosts_count"]
    small = m.point(vm_type="flexmem", vm_mem_gib=0.125), m.point(vm_type="virtio_blk", vm_mem_gib=0.125)
    assert small[0]["fleet_hosts_count"] < small[1]["fleet_hosts_count"]


def test_boundary_is_the_hosts(m):
    o = m.point()
    server = mod.CPUS_PER_HOST * mod.CPU_USD + mod.SERVER_BASE_USD + 1024.0 * m.param_map()["dram_usd_per_gib"].default
    assert o["capex_usd"] == pytest.approx(o["fleet_hosts_count"] * server)


def test_a_vm_that_does_not_fit_a_host_is_infeasible(m):
    ev = m.run_full({"vm_mem_gib": np.array([4.0, 2048.0])})
    assert ev.feasible.tolist() == [True, False]
    assert ev.reason_of(1) == mod.VM_OVER_HOST
    # the article's own sizing too: hosts_for_fleet no longer counts one VM per host
    ev = m.run_full({"host_ram_gib": np.array([1024.0, 16.0]), "host_reserved_gib": 15.99})
    assert ev.feasible.tolist() == [True, False]
    assert ev.reason_of(1) == mod.VM_OVER_HOST


def test_vm_memory_below_its_image_pages_is_infeasible(m):
    ev = m.run_full({"vm_mem_gib": 0.125, "touched_image_mib": np.array([40.0, 1000.0])})
    assert ev.feasible.tolist() == [True, False]
    assert ev.reason_of(1) == mod.VM_MEM_TOO_SMALL


def test_article_metrics_ignore_the_family_knob(m):
    a, b = m.point(vm_mem_gib=0.5), m.point(vm_mem_gib=64.0)
    for k in ("mem_per_vm_mib", "max_vms_per_host", "startup_s", "hosts_for_fleet", "tco_usd_per_vm_year"):
        assert a[k] == b[k]
