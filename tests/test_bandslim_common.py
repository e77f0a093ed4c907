"""bandslim on the kv-object family scale: work_per_s, capex_usd, power_w, op_latency_us."""

from __future__ import annotations

import numpy as np
import pytest

from models.bandslim.model import CXL_NEEDS_GEN5, BandSlim
from models.blocks import workload


@pytest.fixture(scope="module")
def model() -> BandSlim:
    return BandSlim()


def test_default_point_is_the_articles_qd1_rate(model):
    out = model.point()
    assert out["work_per_s"] == pytest.approx(out["put_rate_kiops"] * 1000.0)
    assert out["op_latency_us"] == pytest.approx(out["put_latency_us"])
    assert np.isfinite(out["usd_per_work"]) and out["usd_per_work"] > 0


def test_rates_are_those_of_an_nvme_ssd(model):
    # QD1 on the FPGA OpenSSD (Gen2 x8): one 4 KiB PUT takes 10-100 us -> 10k-100k PUT/s
    qd1 = model.point(value_b=4096, mode="baseline")
    assert 1e4 <= qd1["work_per_s"] <= 1e5
    # a queue of 32 on an ASIC-class controller (1 us per command) and a Gen5 link: an
    # enterprise NVMe SSD does 100k-1M 4 KiB operations per second
    deep = model.point(value_b=4096, mode="baseline", queue_depth=32, pcie_gen=5, fw_cmd_us=1.0)
    assert 1e5 <= deep["work_per_s"] <= 1e6
    # Little: 32 in flight at that rate
    assert deep["op_latency_us"] == pytest.approx(32 / deep["work_per_s"] * 1e6)


def test_more_queue_depth_never_slows_and_saturates(model):
    qd = np.asarray([1.0, 2.0, 4.0, 16.0, 64.0, 256.0])
    out = model.run({"value_b": 4096.0, "queue_depth": qd})
    w = out["work_per_s"]
    assert np.all(np.diff(w) >= -1e-9)
    assert w[-1] == pytest.approx(w[-2])  # bounded by the SSD, not by the queue
    assert np.all(out["op_latency_us"] >= out["put_latency_us"] - 1e-9)


def test_bigger_values_mean_fewer_puts(model):
    sizes = np.asarray([64.0, 512.0, 4096.0, 65536.0, 1048576.0, 64.0 * 1048576.0])
    for mode in ("baseline", "piggyback", "adaptive_p"):
        w = model.run({"mode": mode, "value_b": sizes})["work_per_s"]
        assert np.all(np.diff(w) <= 0.0), mode
        assert w[-1] < w[0] / 100.0


def test_capex_is_the_host_plus_the_ssd(model):
    out = model.point()
    host = workload.host_server(64.0)
    assert out["capex_usd"] == pytest.approx(float(host["capex_usd"]) + out["device_usd"])
    assert out["power_w"] == pytest.approx(float(host["power_w"]) + 10.0)
    # a dual-socket server draws 300-1000 W; the system costs a server plus a drive
    assert 300.0 <= out["power_w"] <= 1000.0
    assert 5e3 <= out["capex_usd"] <= 5e4
    # more NAND changes capex by the NAND (and its DRAM), not by a host
    big = model.point(capacity_tb=2.0)
    assert big["capex_usd"] - out["capex_usd"] == pytest.approx(big["device_usd"] - out["device_usd"])
    assert 0 < big["capex_usd"] - out["capex_usd"] < 200.0


def test_cxl_below_gen5_is_infeasible_with_a_reason(model):
    ev = model.run_full({"mode": "cxl", "pcie_gen": np.asarray([2.0, 5.0])})
    assert ev.feasible.tolist() == [False, True]
    assert ev.reason_of(0) == CXL_NEEDS_GEN5
    assert np.isfinite(ev.metrics["work_per_s"][1]) and ev.metrics["work_per_s"][1] > 0
