"""dockerssd-llm on the llm-serve family scale: output tokens/s, TTFT, pool capex and power."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.dockerssd import llm as dl


@pytest.fixture(scope="module")
def model():
    return registry.get("dockerssd-llm")


def test_family_declaration(model):
    assert model.family == "llm-serve"
    assert model.workload_param("context_tokens") == "seq_len"
    assert model.workload_param("model_params_b") == "model_params_b"
    assert model.workload_param("output_tokens") == "output_tokens"
    assert "pool" in model.boundary


def test_default_point_is_plausible(model):
    """70B (LaMDA-shaped, 69 B), 32K context, 256 output tokens, 16 DockerSSDs, 16 sequences.
    TTFT = the prompt's flops over the pool's flop rate (16 x 6 cores x 16 flops x 2.2 GHz)
    within 2x; capex and power are the pool's; work is below the decode-only rate."""
    o = model.point()
    assert o["llm_params_b"] == pytest.approx(70.0, rel=0.05)
    prompt = 32768 - 256
    flops = 2 * o["llm_params_b"] * 1e9 * prompt * 16
    rate = 16 * 6 * 16 * 2.2e9
    assert 0.5 < o["ttft_ms"] / 1e3 / (flops / rate) < 2.0
    assert o["capex_usd"] == o["pool_capex_usd"]
    assert 0.5 * o["pool_power_w"] < o["power_w"] < 1.5 * o["pool_power_w"]
    assert 0 < o["work_per_s"] < o["tokens_per_s"]
    assert o["work_per_s"] == pytest.approx(16 * 256 / (o["ttft_ms"] / 1e3 + 255 * o["time_per_token_s"]))


def test_usd_per_work_matches_cost_per_mtoken_without_prefill_or_upkeep(model):
    o = model.point(upkeep_frac_per_year=0.0, output_tokens=65536, seq_len=65536 + 128)
    assert o["usd_per_work"] == pytest.approx(o["cost_per_mtoken_usd"], rel=0.01)


def test_larger_model_and_context_fewer_tokens(model):
    sizes = model.run({"model_params_b": np.asarray([8.0, 70.0, 175.0, 540.0]), "nodes": 128, "batch": 128,
                       "enforce_capacity": False})
    assert np.all(np.diff(sizes["work_per_s"]) < 0)
    assert np.all(np.diff(sizes["ttft_ms"]) > 0)
    ctx = model.run({"seq_len": np.asarray([2048.0, 8192.0, 32768.0])})
    assert np.all(np.diff(ctx["work_per_s"]) < 0) and np.all(np.diff(ctx["ttft_ms"]) > 0)
    # more output tokens per request: the prefill is spread over more of them
    out = model.run({"output_tokens": np.asarray([16.0, 256.0, 4096.0])})["work_per_s"]
    assert np.all(np.diff(out) > 0)


def test_named_llm_wins_over_model_params_b(model):
    a = model.point(llm="lamda-137B", model_params_b=8.0)
    b = model.point(llm="lamda-137B", model_params_b=1000.0)
    assert a["work_per_s"] == b["work_per_s"] and a["llm_params_b"] == pytest.approx(137.97, rel=1e-3)


def test_capex_includes_the_hosts_of_the_pool(model):
    d = model.point(config="d_cache", nodes=128)
    assert d["capex_usd"] > 128 * float(np.asarray(dl.hw.ssd_usd(400.0, 2.0, 6)))  # + hosts + switches
    h = model.point(config="h_cache", nodes=16)
    assert h["capex_usd"] > 16 * float(np.asarray(dl.hw.host_usd(64.0)))


def test_infeasible_points_carry_a_reason(model):
    ev = model.run_full({"config": "h_nocache", "llm": "megatron-1T", "nodes": [32.0, 64.0], "batch": [32.0, 64.0]})
    assert ev.reason_of(0) == dl.NO_LAYOUT_FITS
    assert ev.feasible[1]
