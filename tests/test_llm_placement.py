"""Placement of weights / KV / activations across memory tiers: greedy vs exact LP."""

from __future__ import annotations

import numpy as np
import pytest

from dse.errors import DseError
from models.blocks.llm.hardware import tier
from models.blocks.llm.placement import place

GIB = 2**30
TIERS = [tier("hbm", 80, 3000), tier("cxl", 256, 64, name="cxl"), tier("ssd", 2000, 7, name="ssd")]


@pytest.mark.parametrize("sizes", [
    {"weights": 140 * GIB, "kv_cache": 20 * GIB, "activations": 2 * GIB},
    {"weights": 30 * GIB, "kv_cache": 300 * GIB, "activations": 5 * GIB},
    {"weights": 60 * GIB, "kv_cache": 10 * GIB, "activations": 1 * GIB},
])
def test_greedy_matches_lp_for_serial_tiers(sizes) -> None:
    traffic = {"weights": sizes["weights"], "kv_cache": 0.7 * sizes["kv_cache"], "activations": 8 * sizes["activations"]}
    g = place(sizes, traffic, TIERS, method="greedy", overlap="sum")
    lp = place(sizes, traffic, TIERS, method="lp", overlap="sum")
    assert np.isclose(g.time_s[0], lp.time_s[0], rtol=1e-5)
    for t in TIERS:
        assert g.used_bytes[t.name][0] <= t.capacity_bytes * (1 + 1e-9)


def test_lp_beats_or_ties_greedy_for_parallel_tiers() -> None:
    sizes = {"weights": 70 * GIB, "kv_cache": 40 * GIB, "activations": 1 * GIB}
    traffic = {"weights": 70 * GIB, "kv_cache": 40 * GIB, "activations": 8 * GIB}
    g = place(sizes, traffic, TIERS, method="greedy", overlap="max")
    lp = place(sizes, traffic, TIERS, method="lp", overlap="max")
    assert lp.time_s[0] <= g.time_s[0] * (1 + 1e-6)


def test_greedy_is_vectorized() -> None:
    w = np.array([10, 100, 300]) * GIB
    p = place({"weights": w, "kv_cache": 5 * GIB}, {"weights": w, "kv_cache": 5 * GIB}, TIERS)
    assert p.time_s.shape == (3,)
    assert np.all(np.diff(p.time_s) > 0)
    assert np.allclose(p.fractions["weights"]["hbm"][0], 1.0)


def test_infeasible_placement_names_what_and_how_much() -> None:
    with pytest.raises(DseError, match=r"weights 4\.000 TiB.*needed per device.*hbm 80\.000 GiB"):
        place({"weights": 4096 * GIB, "kv_cache": 1 * GIB}, {"weights": 1.0, "kv_cache": 1.0}, TIERS)
    p = place({"weights": 4096 * GIB}, {"weights": 1.0}, TIERS, raise_infeasible=False)
    assert not p.feasible[0]


def test_swap_page_faults_lower_effective_bandwidth() -> None:
    swap = tier("swap", 400, 7.0, page_fault_s=20e-6, page_bytes=4096)
    plain = tier("ssd", 400, 7.0)
    assert swap.effective_bandwidth_Bps < plain.effective_bandwidth_Bps
    assert np.isclose(swap.effective_bandwidth_Bps, 4096 / (20e-6 + 4096 / 7e9))
    assert swap.time(1e9) > plain.time(1e9)


def test_pinned_object_stays_in_its_tier() -> None:
    p = place({"weights": 50 * GIB, "activations": 1 * GIB}, {"weights": 50 * GIB, "activations": 1.0}, TIERS,
              pinned={"activations": "hbm"})
    assert p.fractions["activations"]["hbm"][0] == 1.0


def test_inference_lp_placement_matches_greedy() -> None:
    from models.blocks.llm import System, get_model, inference, simple_network

    sys_ = System.simple("gpu+cxl", matrix_tflops={"float16": 1000}, mem_gib=80, mem_gbps=3000,
                         extra_tiers=[tier("cxl", 512, 64, name="cxl")], networks=[simple_network(size=8)])
    m = get_model("llama-3-70B")
    g = inference(m, sys_, batch=8, prompt=4096, gen=256, placement="greedy")
    lp = inference(m, sys_, batch=8, prompt=4096, gen=256, placement="lp")
    assert g["tier_cxl_bytes"] > 0  # 141 GB of weights spill to the CXL expander
    assert np.isclose(g["tpot_s"], lp["tpot_s"], rtol=1e-4)


def test_lp_placement_of_decode_traffic_is_never_worse_than_greedy():
    """The LP places one decode step's traffic (not the prefill working set), so with
    overlapping tiers it can only match or beat the greedy placement."""
    from models.blocks.llm import System, get_model, inference
    from models.blocks.llm.hardware import tier

    sys_ = System.simple(
        "gpu+cxl", matrix_tflops={"float16": 900.0}, mem_gib=80.0, mem_gbps=3000.0,
        extra_tiers=[tier("cxl", 1024.0, 64.0)],
    )
    for name in ("megatron-5B", "gpt3-13B"):
        m = get_model(name)
        kw = dict(batch=8, prompt=1024, gen=128)
        g = inference(m, sys_, placement="greedy", overlap="max", **kw)
        lp = inference(m, sys_, placement="lp", overlap="max", **kw)
        # the LP minimizes a linear model of one decode step's memory time (one efficiency per
        # tier, mean-context KV traffic); measured by the full step model it stays within 2%
        # of greedy (it was 2.4x slower when it placed the prefill working set's traffic)
        assert float(np.ravel(lp["step_memory_s"])[0]) <= 1.02 * float(np.ravel(g["step_memory_s"])[0]), name
        assert float(np.ravel(lp["tpot_s"])[0]) <= 1.02 * float(np.ravel(g["tpot_s"])[0]), name
