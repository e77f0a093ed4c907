"""cxl-gpu on the gpu-kernel family scale: kernel runs per second, capex, power, feasibility."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.blocks.cost import component_price
from models.cxl_gpu import model as cg


@pytest.fixture(scope="module")
def model():
    return registry.get("cxl-gpu")


def test_family_declaration(model):
    assert model.family == "gpu-kernel"
    assert model.workload_param("footprint_gib") == "working_set_gib"
    assert "host" in model.boundary and "GPU" in model.boundary


def test_default_point_is_plausible(model):
    """80 GiB vadd on one GPU + host + a CXL DRAM endpoint: a run takes seconds on the
    article's simulated GPU (0.02-1 runs/s), capex a GPU plus a server (~$30-45k), ~1-1.5 kW;
    gpu_dram needs 10 GPUs of 8 GiB and is ~10x faster per run (slowdown 1 vs ~1.2, 10 GPUs)."""
    cxl = model.point(design="cxl")
    assert 0.02 < cxl["work_per_s"] < 1.0
    assert cxl["kernel_time_ms"] == pytest.approx(1e3 / cxl["work_per_s"])
    assert 30_000 < cxl["capex_usd"] < 45_000
    assert 1_000 < cxl["power_w"] < 1_500
    gd = model.point(design="gpu_dram")
    assert gd["gpu_count"] == 10.0
    assert gd["work_per_s"] / cxl["work_per_s"] == pytest.approx(10 * cxl["slowdown_x"], rel=1e-6)
    # the kernel time is instructions x time per instruction
    instr = 80 * 2**30 / 64 / (cxl["offchip_per_kinstr"] / 1e3)
    assert cxl["kernel_time_ms"] == pytest.approx(instr * cxl["time_per_instr_ns"] * 1e-6)


def test_larger_footprint_costs_more_and_runs_longer(model):
    fp = np.asarray([16.0, 64.0, 256.0, 1024.0])
    for d in ("gpu_dram", "uvm", "cxl", "cxl_ds"):
        media = "znand" if d == "cxl_ds" else "dram"
        r = model.run({"design": d, "media": media, "working_set_gib": fp})
        assert np.all(np.diff(r["capex_usd"]) > 0), d
        # gpu_dram adds GPUs with the footprint: each keeps its 8 GiB share, so the time holds
        assert np.all(np.diff(r["kernel_time_ms"]) >= 0 if d == "gpu_dram" else np.diff(r["kernel_time_ms"]) > 0), d
        assert np.all(r["work_per_s"] > 0), d
    g = model.run({"design": "gpu_dram", "working_set_gib": fp})
    assert g["gpu_count"].tolist() == [2, 8, 32, 128]


def test_capex_includes_gpu_and_host(model):
    o = model.point(design="cxl")
    p = model.param_map()
    host = component_price("host_server_2s").value + 256.0 * 2**30 / 1e9 * p["dram_usd_per_gb"].default
    assert o["capex_usd"] == pytest.approx(p["gpu_usd"].default + host + o["expansion_usd"])
    assert o["power_w"] > p["gpu_power_w"].default + component_price("host_server_2s_power_w").value


def test_endpoint_sized_to_the_footprint_by_default(model):
    o = model.point(design="cxl", working_set_gib=100.0)
    assert o["added_capacity_gib"] == pytest.approx(92.0)
    fixed = model.point(design="cxl", working_set_gib=100.0, ep_capacity_gib=512.0)
    assert fixed["capex_usd"] > o["capex_usd"]


def test_infeasible_points_carry_a_reason(model):
    ev = model.run_full({"design": ["cxl", "gds", "gpu_dram"], "media": ["dram", "dram", "dram"],
                         "working_set_gib": [1024.0, 80.0, 4096.0], "ep_capacity_gib": [256.0, 0.0, 0.0]})
    assert [ev.reason_of(i) for i in range(3)] == [cg.NO_FIT, cg.GDS_NEEDS_SSD, None]
    assert np.isnan(ev.metrics["work_per_s"][0])
