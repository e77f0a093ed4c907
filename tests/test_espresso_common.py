"""espresso on the kv-object family scale: work_per_s, capex_usd, power_w, op_latency_us."""

from __future__ import annotations

import numpy as np
import pytest

from models.blocks.cost import component_price
from models.espresso.model import NO_BORROWER, Espresso


@pytest.fixture(scope="module")
def model() -> Espresso:
    return Espresso()


def test_default_point_is_the_jbofs_borrowers(model):
    out = model.point()
    assert out["work_per_s"] == pytest.approx(out["iops"] * 6)  # 12 SSDs, 6 lenders
    assert out["op_latency_us"] == pytest.approx(out["latency_us"])
    # borrowers + the DPU's 150 W + switch + enclosure; lenders idle
    assert out["power_w"] > 6 * out["ssd_power_w"] + 150.0
    assert 150.0 <= out["power_w"] <= 600.0
    assert np.isfinite(out["usd_per_work"]) and out["usd_per_work"] > 0


def test_rates_are_those_of_a_jbof_of_nvme_ssds(model):
    # 4 KiB random reads: each PCIe 6.0 x2 SSD does 100k-1M, six busy ones 0.6M-6M
    out = model.point(size_from="value_b", value_b=4096.0, pattern="random")
    assert 1e5 <= out["iops"] <= 1e6
    assert 6e5 <= out["work_per_s"] <= 6e6


def test_family_knob_maps_onto_the_request_size(model):
    article = model.point(io_size_kib=64.0)
    family = model.point(size_from="value_b", value_b=64.0 * 1024.0)
    for k in ("work_per_s", "op_latency_us", "capex_usd", "power_w"):
        assert family[k] == pytest.approx(article[k]), k
    # traces keep their own sizes whatever the knob
    t0 = model.point(workload="ali0")
    t1 = model.point(workload="ali0", size_from="value_b", value_b=8.0)
    assert t1["work_per_s"] == pytest.approx(t0["work_per_s"])


def test_bigger_requests_mean_fewer_operations(model):
    sizes = np.asarray([4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 16.0 * 1048576.0])
    for design in ("conv", "shrunk", "espresso"):
        w = model.run({"design": design, "size_from": "value_b", "value_b": sizes})["work_per_s"]
        assert np.all(np.diff(w) <= 1e-9), design
        assert w[-1] < w[0] / 100.0


def test_capex_is_the_ssds_plus_the_dpu_switch_and_enclosure(model):
    out = model.point()
    rest = component_price("dpu_bluefield3").value + component_price("cxl_switch").value + 2000.0
    assert out["capex_usd"] == pytest.approx(12 * out["bom_usd"] + rest)
    # one more SSD (as a lender) adds its BOM and nothing else
    more = model.point(jbof_ssds=13, lenders=7)
    assert more["capex_usd"] - out["capex_usd"] == pytest.approx(out["bom_usd"])
    # DPU DRAM beyond the card's 16 GB is priced as DDR5
    dram = model.point(host_dram_gb=32.0)
    assert dram["capex_usd"] - out["capex_usd"] == pytest.approx(16.0 * component_price("dram_ddr5").value)


def test_a_jbof_without_borrowers_is_infeasible_with_a_reason(model):
    ev = model.run_full({"lenders": np.asarray([12.0, 6.0])})
    assert ev.feasible.tolist() == [False, True]
    assert ev.reason_of(0) == NO_BORROWER
