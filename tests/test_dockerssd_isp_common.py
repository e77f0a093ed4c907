"""dockerssd-isp on the kv-object family scale: work_per_s, capex_usd, power_w, op_latency_us."""

from __future__ import annotations

import numpy as np
import pytest

from models.dockerssd import hardware as hw
from models.dockerssd.isp import NO_ISP_POOL, WL, WORKLOADS, DockerSsdIsp


@pytest.fixture(scope="module")
def model() -> DockerSsdIsp:
    return DockerSsdIsp()


def _io_count(workload: str) -> float:
    return float(WL["io_count"][WORKLOADS.index(workload)])


def test_work_is_the_workloads_ios_over_its_run_time(model):
    for design in ("host", "pisp_v", "d_virtfw"):
        out = model.point(design=design)
        assert out["work_per_s"] * out["latency_s"] == pytest.approx(_io_count("embed_rm1"))
        assert out["op_latency_us"] * out["work_per_s"] == pytest.approx(1e6)
    # the article's 1.2x of D-VirtFW over the host shows as 1.2x the operations per second
    d, h = model.point(), model.point(design="host")
    assert d["work_per_s"] / h["work_per_s"] == pytest.approx(d["speedup_vs_host_x"])


def test_plausible_rates_and_power(model):
    for wl in ("embed_rm1", "rocksdb_read", "nginx_filedown"):
        for design in ("host", "d_virtfw"):
            out = model.point(workload=wl, design=design)
            assert 1e3 <= out["work_per_s"] <= 1e6, (wl, design)  # one SSD's workload I/Os
            # a small server + one SSD: 50-300 W; in-storage runs leave the host idling
            assert 50.0 <= out["power_w"] <= 300.0, (wl, design)
        assert model.point(workload=wl)["power_w"] < model.point(workload=wl, design="host")["power_w"]


def test_family_knob_recuts_the_workloads_bytes(model):
    avg_b = float(WL["io_gb"][0] * 1e9 / WL["io_count"][0])
    a = model.point(design="d_fullos")
    f = model.point(design="d_fullos", size_from="value_b", value_b=avg_b)
    assert f["work_per_s"] == pytest.approx(a["work_per_s"], rel=1e-4)
    assert f["latency_s"] == pytest.approx(a["latency_s"], rel=1e-4)
    # unselected, the knob changes nothing
    assert model.point(value_b=8.0)["latency_s"] == pytest.approx(model.point()["latency_s"])


def test_bigger_ios_mean_fewer_operations(model):
    sizes = np.asarray([512.0, 4096.0, 65536.0, 1048576.0, 16.0 * 1048576.0])
    for design in ("host", "pisp_v", "d_virtfw"):
        w = model.run({"design": design, "size_from": "value_b", "value_b": sizes})["work_per_s"]
        assert np.all(np.diff(w) < 0.0), design


def test_capex_holds_the_host_and_the_ssd(model):
    host = float(hw.host_usd(hw.HOST_DRAM_GB))
    d = model.point()
    assert d["capex_usd"] == pytest.approx(host + d["device_usd"])
    assert model.point(design="host")["capex_usd"] == pytest.approx(host + float(hw.ssd_usd(hw.SSD_CAPACITY_GB, hw.DEV_DRAM_GB)))
    # more SSD DRAM adds its price; D-Naive's second processor adds a controller
    assert model.point(dev_dram_gb=4.0)["capex_usd"] - d["capex_usd"] == pytest.approx(float(hw.dram_usd(2.0)))
    assert model.point(design="d_naive")["capex_usd"] - d["capex_usd"] == pytest.approx(hw.SSD_CONTROLLER_USD)


def test_no_isp_pool_is_infeasible_with_a_reason(model):
    ev = model.run_full({"dev_dram_gb": np.asarray([0.5, 2.0])})
    assert ev.feasible.tolist() == [False, True]
    assert ev.reason_of(0) == NO_ISP_POOL
