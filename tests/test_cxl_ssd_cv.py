"""cxl-ssd: posted BAR writes and miss intensity (its out-of-fit errors: test_out_of_fit.py)."""

from __future__ import annotations

import pytest

from dse import registry
from models.blocks import memssd
from models.cxl_ssd import model as mod, workloads as wl

@pytest.fixture(scope="module")
def m():
    return registry.get("cxl-ssd")


def test_posted_bar_writes_save_the_round_trip(m):
    # PCIe memory writes are posted: with the firmware the bottleneck (~2.8 us per write vs
    # ~0.25 ns of compute per instruction) a store costs the firmware's write time, i.e. the
    # blocking store's round trip less the link round trip (link block, x4 PCIe 6.0, ~100 ns)
    i = wl.NAMES.index("gcc")
    a_wr = mod.PCIE_REGION_FRAC * wl.STORE_FRAC[i]
    rt = float(memssd.cxl_path_ns(6, 4, 1, 0))
    post = m.point(design="pcie_ssd", workload="gcc", store_path="posted")["time_ns_per_kop"]
    block = m.point(design="pcie_ssd", workload="gcc", store_path="blocking")["time_ns_per_kop"]
    assert block - post == pytest.approx(1000 * (a_wr * rt + 1.0 / mod.FREQ_GHZ), rel=1e-6)
    # a fast device (BAR time near the link's): the core no longer waits for stores at all
    fast = dict(design="pcie_ssd", workload="lbm", pcie_bar_ns=150.0, cpi_core=4.0)
    t_post = m.point(store_path="posted", **fast)["time_ns_per_kop"]
    t_block = m.point(store_path="blocking", **fast)["time_ns_per_kop"]
    assert t_post < t_block


def test_cacheable_write_backs_load_the_port(m):
    post = m.point(design="cxl_ssd", workload="lbm", store_path="posted")["port_util_frac"]
    block = m.point(design="cxl_ssd", workload="lbm", store_path="blocking")["port_util_frac"]
    # lbm: 16.4% loads, 38.5% stores; each store miss (1 - q of the misses) comes back as a write-back
    q = 16.4 / (16.4 + 38.5)
    assert post / block == pytest.approx(1 + (1 - q), rel=1e-6)


def test_miss_intensity_sensitivity(m):
    w = list(wl.NAMES)
    p1 = m.run({"design": "pcie_ssd", "workload": w, "mpki_scale": 1.0})["time_ns_per_kop"]
    p3 = m.run({"design": "pcie_ssd", "workload": w, "mpki_scale": 3.0})["time_ns_per_kop"]
    assert (p3 == p1).all()  # F L190: PCIe-SSD is insensitive to MPKI
    s1 = p1 / m.run({"design": "cxl_ssd", "workload": w, "mpki_scale": 1.0})["time_ns_per_kop"]
    s3 = p3 / m.run({"design": "cxl_ssd", "workload": w, "mpki_scale": 3.0})["time_ns_per_kop"]
    assert (s3 < s1).all()  # F L196: the CXL-SSD's gain shrinks as misses grow (12.2x low, 9.6x high)


def test_lsq_overlap_mlp(m):
    # Table 1a: 64-entry LSQ; gcc: 3.08 MPKI, 28% loads, 14% stores
    q = 28.0 / 42.0
    mlp = 1 + 64 * 3.08e-3 * q / 0.42
    assert mlp == pytest.approx(1.313, abs=1e-3)
    r = {o: m.point(design="dram", workload="gcc", miss_overlap=o)["time_ns_per_kop"] for o in ("serial", "lsq")}
    core = 1000 * 1.0 / mod.FREQ_GHZ
    assert (r["serial"] - core) / (r["lsq"] - core) == pytest.approx(mlp, rel=1e-6)
