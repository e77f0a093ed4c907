"""The LLM block's batch-native inference step (models/blocks/llm/step.py): hardware as
columns gives what a loop over one System per design gives, and the pool built on it."""

from __future__ import annotations

import numpy as np
import pytest

from dse.errors import DseError
from models.blocks.llm import MODELS, MemoryTier, System, inference, simple_network, tier
from models.blocks.llm.step import (StepSystem, held_sizes, inference_columns, place_columns, schedule,
                                    shape_columns)

N_SYSTEMS = 50
GIB = 2**30


def _designs(seed: int = 11) -> dict[str, np.ndarray]:
    """Varied hardware and configurations: flops, HBM, a second tier (DRAM or OS swap with
    page faults), network, batch, prompt, generation, TP, PP."""
    rng = np.random.default_rng(seed)
    n = N_SYSTEMS
    return {
        "tflops": rng.uniform(5.0, 1000.0, n), "vec_tflops": rng.uniform(1.0, 100.0, n),
        "hbm_gib": rng.choice([2.0, 16.0, 80.0, 192.0], n), "hbm_gbps": rng.uniform(100.0, 5000.0, n),
        "t2_gib": rng.choice([0.0, 64.0, 512.0, 4096.0], n), "t2_gbps": rng.uniform(1.0, 200.0, n),
        "t2_fault_us": rng.choice([0.0, 2.0, 30.0], n), "net_gbps": rng.uniform(5.0, 900.0, n),
        "net_latency_us": rng.uniform(0.0, 20.0, n), "batch": rng.integers(1, 64, n).astype(float),
        "prompt": rng.integers(1, 8192, n).astype(float), "gen": rng.choice([0.0, 1.0, 33.0, 512.0], n),
        "tp": rng.choice([1.0, 2.0, 4.0, 8.0], n), "pp": rng.choice([1.0, 2.0, 3.0], n),
    }


def _system(d: dict[str, np.ndarray], i: int) -> System:
    swap = d["t2_fault_us"][i] > 0
    t2 = tier("swap" if swap else "host_dram", float(d["t2_gib"][i]), float(d["t2_gbps"][i]), name="t2",
              page_fault_s=float(d["t2_fault_us"][i]) * 1e-6)
    net = simple_network(size=64, bandwidth_gbps=float(d["net_gbps"][i]), latency_s=float(d["net_latency_us"][i]) * 1e-6)
    return System.simple(f"s{i}", matrix_tflops={"float16": float(d["tflops"][i])},
                         vector_tflops={"float16": float(d["vec_tflops"][i])}, mem_gib=float(d["hbm_gib"][i]),
                         mem_gbps=float(d["hbm_gbps"][i]), extra_tiers=[t2], networks=[net])


def _columns(d: dict[str, np.ndarray], mode: str = "no_overlap") -> StepSystem:
    """The same hardware as columns (each tier's effective bandwidth, page faults included)."""
    t2_bw = np.array([_system(d, i).tiers[1].effective_bandwidth_Bps for i in range(N_SYSTEMS)])
    return StepSystem.columns(flops_per_s=d["tflops"] * 1e12, vector_flops_per_s=d["vec_tflops"] * 1e12,
                              tiers=(("hbm", d["hbm_gib"] * GIB, d["hbm_gbps"] * 1e9), ("t2", d["t2_gib"] * GIB, t2_bw)),
                              net_bps=d["net_gbps"] * 1e9, net_latency_s=d["net_latency_us"] * 1e-6, processing_mode=mode)


@pytest.mark.parametrize("model,kv_cache,placement,overlap", [
    ("gpt3-175B", True, "greedy", "sum"),
    ("llama-3-8B", True, "greedy", "max"),
    ("llama-3-70B", False, "greedy", "sum"),
    ("fid-t5-base", True, "greedy", "sum"),
    ("gpt3-175B", True, "ordered", "sum"),
])
def test_batch_equals_a_loop_over_systems(model, kv_cache, placement, overlap):
    d = _designs()
    m = MODELS[model]
    tp = np.where(m.heads % d["tp"] == 0, d["tp"], 1.0)
    kw = dict(kv_cache=kv_cache, placement=placement, overlap=overlap, raise_infeasible=False)
    got = inference_columns(m, _columns(d), batch=d["batch"], prompt=d["prompt"], gen=d["gen"], tp=tp, pp=d["pp"], **kw)
    assert got["feasible"].any()
    if model == "gpt3-175B":
        assert not got["feasible"].all()  # the designs straddle the capacity limit
    for i in range(N_SYSTEMS):
        ref = inference(m, _system(d, i), batch=d["batch"][i], prompt=d["prompt"][i], gen=d["gen"][i], tp=tp[i],
                        pp=d["pp"][i], **kw)
        for k, v in ref.items():
            if k == "tier_hbm_bytes" or k == "tier_t2_bytes" or k == "feasible":
                assert got[k][i] == pytest.approx(float(v), rel=1e-9, abs=1e-6), (i, k)
            else:
                np.testing.assert_allclose(got[k][i], v, rtol=1e-9, atol=0.0, err_msg=f"{i} {k}")


def test_roofline_mode_on_columns():
    d = _designs(seed=5)
    m = MODELS["llama-3-8B"]
    got = inference_columns(m, _columns(d, "roofline"), batch=d["batch"], prompt=d["prompt"], gen=d["gen"], tp=d["tp"],
                            pp=1.0, raise_infeasible=False)
    flat = inference_columns(m, _columns(d), batch=d["batch"], prompt=d["prompt"], gen=d["gen"], tp=d["tp"], pp=1.0,
                             raise_infeasible=False)
    i = 7
    s = _system(d, i)
    from dataclasses import replace
    ref = inference(m, replace(s, processing_mode="roofline"), batch=d["batch"][i], prompt=d["prompt"][i],
                    gen=d["gen"][i], tp=d["tp"][i], raise_infeasible=False)
    assert got["tpot_s"][i] == pytest.approx(float(ref["tpot_s"]), rel=1e-9)
    assert np.all(got["step_s"] <= flat["step_s"] * (1 + 1e-12))  # max(compute, memory) <= their sum


def test_infeasible_column_names_the_point():
    d = _designs()
    d["hbm_gib"][:] = 1.0
    d["t2_gib"][:] = 0.0
    with pytest.raises(DseError, match="placement infeasible.*hbm 1.000 GiB"):
        inference_columns(MODELS["gpt3-175B"], _columns(d), batch=d["batch"], prompt=d["prompt"], gen=d["gen"],
                          tp=d["tp"], pp=d["pp"])


def test_bad_options_are_one_line_errors():
    s = shape_columns(MODELS["gpt3-175B"])
    with pytest.raises(DseError, match="activations must be"):
        held_sizes(s, b=1.0, tp=1.0, pp=1.0, kv_tokens=1.0, cross_tokens=0.0, span=1.0, bpe=2.0, kv_cache=True,
                   activations="all")
    t = tier("hbm", 80, 2000)
    sizes = {"activations": 1.0, "weights": 1.0, "kv_cache": 1.0}
    with pytest.raises(DseError, match="needs two tiers"):
        place_columns(sizes, sizes, [t], method="ordered")
    with pytest.raises(DseError, match="placement must be one of"):
        place_columns(sizes, sizes, [t], method="best")
    hw = StepSystem.columns(flops_per_s=1e12, tiers=(("a", 1.0, 1.0),), net_bps=1e9, net_latency_s=0.0)
    with pytest.raises(DseError, match="schedule must be one of"):
        schedule({}, hw, pp=1.0, how="interleaved")


def test_ordered_placement_fills_the_first_tier_in_order():
    a = MemoryTier("fast", 10.0, 100e9)
    b = MemoryTier("slow", 100.0, 10e9, kind="host_dram")
    sizes = {"activations": np.array([4.0, 4.0]), "weights": np.array([5.0, 5.0]), "kv_cache": np.array([3.0, 3.0])}
    pl = place_columns(sizes, {}, [a, b], method="ordered", kv_last=np.array([False, True]))
    # activations and weights fit (9 of 10 bytes); the KV cache takes the last byte or goes to the slow tier
    np.testing.assert_allclose(pl["fractions"]["kv_cache"]["fast"], [1 / 3, 0.0])
    np.testing.assert_allclose(pl["used"]["slow"], [2.0, 3.0])
    assert pl["feasible"].all()


def test_microbatch_schedule_pipelines_one_sequence_at_a_time():
    """b sequences as b one-sequence microbatches over PP stages take (b + PP - 1) slots."""
    from models.blocks.llm.step import pass_breakdown

    s = shape_columns(MODELS["gpt3-175B"])
    hw = StepSystem.columns(flops_per_s=1e12, tiers=(("fast", 1e15, 100e9), ("slow", 1e15, 1e9)), net_bps=10e9,
                            net_latency_s=0.0)
    fr = {o: {"fast": 1.0, "slow": 0.0} for o in ("activations", "weights", "kv_cache")}
    b, pp, layers = 8.0, 4.0, 24.0
    br = pass_breakdown(s, hw, fr, b=b, new_tok=1.0, ctx=1000.0, cross=0.0, layers=layers, tp=1.0, pp=pp, bpe=2.0,
                        with_head=True, kv_read=layers * b * 1000.0 * 2 * 12288 * 2)
    mb = schedule(br, hw, pp=pp, how="microbatch", b=b, layers=layers, tp=1.0, fractions=fr)
    # a slot: one sequence's compute, the stage's weights and its own KV / activations, one
    # boundary message of one sequence (latency 0: a b-th of the batch's message time)
    one = br["compute_s"] / b + (br["weight_b"] + (br["kv_b"] + br["act_b"]) / b) / 100e9 + br["p2p_s"] / b
    assert float(mb["step_s"]) == pytest.approx((b + pp - 1) * float(one), rel=1e-12)


def test_pool_first_fastest_breaks_ties_by_candidate_order():
    from models.dockerssd.pool import TIE_REL, first_fastest

    t = np.array([[3.0, 2.0 * (1 + TIE_REL / 4), 2.0, np.inf], [np.inf] * 4, [5.0, 4.0, 4.0 * (1 - 1e-9), 9.0]])
    assert first_fastest(t).tolist() == [1, 0, 2]


def test_pool_step_equals_layouts_and_best():
    from models.dockerssd import pool
    from models.dockerssd.llm import LLMS, SHAPES

    i = LLMS.index("lamda-137B")
    shape = {k: v[i] for k, v in SHAPES.items() if k not in ("params", "kv_bytes_per_token")}
    kw = dict(nodes=[16, 64, 128], batch=[1, 64, 300], ctx=[4096, 32768, 512], kv_cache=[True, False, True],
              flops_per_s=2e11, fast_cap_b=64e9, fast_bps=49e9, slow_cap_b=400e9, slow_bps=0.9e9, kv_second_tier=True,
              net_bps=7.9e9, net_latency_s=5e-6)
    st = pool.step(shape, **kw)
    lay = pool.layouts(pool.columns(shape, **kw), 2.0, (pool.TP_CAND, pool.PP_CAND))
    again = pool.best(lay, np.zeros((1, 1), dtype=bool))
    for k in st:
        np.testing.assert_array_equal(st[k], again[k])
    # the TP-only search is the masked search over the same layouts
    only = pool.step(shape, pairs=tuple((t, 1) for t in pool.POW2), **kw)["step_s"]
    masked = pool.best(lay, False, keep=(pool.PP_CAND == 1)[None, :], time_only=True)["step_s"]
    np.testing.assert_array_equal(only, masked)


def test_flash_stream_memo_changes_nothing():
    from models.dockerssd import hardware as hw
    from models.dockerssd.llm import FLASH_STREAM_B, flash_stream_gbps

    rng = np.random.default_rng(2)
    ch, chips, gbps = rng.integers(1, 64, 40).astype(float), rng.integers(1, 32, 40).astype(float), rng.uniform(0.1, 10, 40)
    ref = hw.flash_bw_gbps(hw.flash_arrays(ch, chips, gbps), FLASH_STREAM_B, 1.0, True)
    one = np.array([flash_stream_gbps(ch[i:i + 1], chips[i:i + 1], gbps[i:i + 1])[0] for i in range(40)])
    np.testing.assert_array_equal(one, ref)
    np.testing.assert_array_equal(flash_stream_gbps(ch, chips, gbps), ref)  # a batch: no memo
    np.testing.assert_array_equal(flash_stream_gbps(ch[:3], chips[:3], gbps[:3]), ref[:3])  # memo hits


def test_flash_stream_memo_follows_the_calibration(monkeypatch):
    """The memo is keyed by the calibration in force: a switch (or a refit) recomputes."""
    from models.blocks import calibration
    from models.dockerssd import hardware as hw
    from models.dockerssd import llm

    calls = []
    real = hw.flash_bw_gbps
    monkeypatch.setattr(hw, "flash_bw_gbps", lambda *a, **k: calls.append(1) or real(*a, **k))
    geo = (np.array([13.0]), np.array([5.0]), np.array([1.7]))
    first = llm.flash_stream_gbps(*geo)
    llm.flash_stream_gbps(*geo)
    assert len(calls) == 1  # the second call is a memo hit
    monkeypatch.setattr(calibration, "state", lambda: ("another", 99))
    again = llm.flash_stream_gbps(*geo)
    assert len(calls) == 2 and again[0] == first[0]
