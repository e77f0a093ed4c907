"""flexmem: the invariants of the memory, density and start-up mechanisms."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.flexmem import calibration as cal


@pytest.fixture(scope="module")
def m():
    return registry.get("flexmem")


def test_virtio_column_is_the_calibration(m):
    # virtio-blk's per-VM memory equals the Fig. 7 column total (96,129 KB)
    assert m.point(vm_type="virtio_blk")["mem_per_vm_mib"] == pytest.approx(96129 / 1024, rel=1e-9)
    # FlexMem's is a prediction close to its column (62,205 KB)
    assert m.point(vm_type="flexmem")["mem_per_vm_mib"] == pytest.approx(62205 / 1024, rel=0.02)


def test_pmem_overheads_are_the_struct_page_and_pte_ratios(m):
    r = m.point(vm_type="flexmem")
    assert r["pmem_guest_overhead_frac"] == pytest.approx(64 / 4096)
    assert r["pmem_host_overhead_frac"] == pytest.approx(4 / 4096)


def test_sharing_amortizes_with_more_resident_vms(m):
    n = np.array([1, 10, 100, 1000])
    flex = m.run({"vm_type": "flexmem", "resident_vms": n})["mem_per_vm_mib"]
    blk = m.run({"vm_type": "virtio_blk", "resident_vms": n})["mem_per_vm_mib"]
    assert np.all(np.diff(flex) < 0)
    assert np.allclose(blk, blk[0])
    # a single FlexMem VM carries the whole host copy and is worse than virtio-blk
    assert flex[0] > blk[0]


def test_larger_touched_set_widens_the_gap(m):
    touched = np.array([20.0, 40.0, 80.0])
    gap = m.run({"vm_type": "virtio_blk", "touched_image_mib": touched, "vm_ram_mib": 512})["mem_per_vm_mib"] - m.run(
        {"vm_type": "flexmem", "touched_image_mib": touched, "vm_ram_mib": 512})["mem_per_vm_mib"]
    assert np.all(np.diff(gap) > 0)


def test_density_follows_memory(m):
    ram = np.array([256.0, 512.0, 1024.0])
    out = m.run({"vm_type": "flexmem", "host_ram_gib": ram})
    assert np.all(np.diff(out["max_vms_per_host"]) > 0)
    assert np.all(np.diff(out["hosts_for_fleet"]) <= 0)


def test_start_up_ordering(m):
    for t in ("virtio_blk", "flexmem"):
        warm = m.point(vm_type=t, start="warm_local")["startup_s"]
        cold = m.point(vm_type=t, start="cold")["startup_s"]
        assert cold > warm
    assert m.point(vm_type="flexmem", start="warm_remote")["startup_s"] >= m.point(vm_type="flexmem")["startup_s"]
    bw = np.array([0.1, 1.0, 10.0])
    cold = m.run({"vm_type": "flexmem", "start": "cold", "registry_gbps": bw})["startup_s"]
    assert np.all(np.diff(cold) < 0)


def test_more_parallel_starts_never_faster(m):
    p = np.array([8, 32, 64, 256, 1024])
    for t in ("virtio_blk", "flexmem"):
        s = m.run({"vm_type": t, "parallel_vms": p})["startup_s"]
        assert np.all(np.diff(s) >= 0)


def test_vm_too_small_for_its_guest_is_infeasible(m):
    r = m.point(vm_type="virtio_blk", vm_ram_mib=40)
    assert np.isnan(r["mem_per_vm_mib"]) and np.isnan(r["startup_s"])


def test_registry_fit_closes_the_warm_cold_gain(m):
    warm = m.point(vm_type="flexmem")["startup_s"]
    cold = m.point(vm_type="flexmem", start="cold")["startup_s"]
    assert 1 - warm / cold == pytest.approx(cal.WARM_VS_COLD_GAIN, rel=1e-6)
