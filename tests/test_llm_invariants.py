"""Sanity invariants of the LLM block: roofline, memory-bound decode, monotonicity."""

from __future__ import annotations

import numpy as np
import pytest

from models.blocks.llm import get_model, inference, train_step
from models.blocks.llm.calculon_io import system_from_json
from models.blocks.llm.hardware import DTYPE_BYTES
from models.blocks.llm.reference import SHIPPED
from models.blocks.llm.search import candidates
from models.blocks.llm.training import evaluate

SYS = SHIPPED / "inputs" / "systems"


@pytest.fixture(scope="module")
def a100():
    return system_from_json(SYS / "a100_80g.json")


@pytest.fixture(scope="module")
def h100():
    return system_from_json(SYS / "h100_80g_nvl8.json")


def _space(a100):
    m = get_model("megatron-22B")
    exe, _, _ = candidates(m, 64, 256, a100)
    return m, exe.take(np.arange(0, exe.n, 7))


def test_training_never_above_roofline(a100) -> None:
    m, exe = _space(a100)
    st = evaluate(m, a100, exe)
    ok = st["feasible"]
    assert ok.sum() > 100
    # useful flops of the whole batch over its time can never beat the matrix peak
    assert np.all(st["total_efficiency"][ok] <= 1.0 + 1e-12)
    assert np.all(st["compute_efficiency"][ok] <= 1.0 + 1e-12)
    peak = a100.peak_flops("float16")
    done = st["blocks_per_proc"] * st["num_microbatches"] * st["useful_flops"]
    assert np.all(done[ok] / st["total_time"][ok] <= peak * (1 + 1e-12))


def test_more_hbm_bandwidth_never_slower(a100) -> None:
    m, exe = _space(a100)
    base = evaluate(m, a100, exe)
    fast = a100.with_mem(0, bandwidth_Bps=a100.mem1.bandwidth_Bps * 2)
    st = evaluate(m, fast, exe)
    ok = base["feasible"]
    assert np.all(st["total_time"][ok] <= base["total_time"][ok] * (1 + 1e-12))


def test_more_capacity_never_hurts(a100) -> None:
    m, exe = _space(a100)
    base = evaluate(m, a100, exe)
    big = a100.with_mem(0, capacity_bytes=a100.mem1.capacity_bytes * 4).with_mem(
        1, capacity_bytes=a100.mem2.capacity_bytes * 4)
    st = evaluate(m, big, exe)
    assert np.all(st["feasible"][base["feasible"]])
    assert st["feasible"].sum() >= base["feasible"].sum()
    ok = base["feasible"]
    assert np.allclose(st["total_time"][ok], base["total_time"][ok])


def test_faster_offload_tier_never_slower(a100) -> None:
    m = get_model("gpt3-175B")
    kw = dict(tensor_par=8, pipeline_par=8, data_par=8, batch_size=1024, microbatch_size=1, pipeline_par_net=1,
              data_par_net=1, activation_recompute="attn_only", tensor_par_comm_type="rs_ag",
              tensor_par_overlap="pipe", weight_offload=True, activations_offload=True, optimizer_offload=True,
              optimizer_sharding=True)
    slow = train_step(m, a100, **kw)
    fast = train_step(m, a100.with_mem(1, bandwidth_Bps=a100.mem2.bandwidth_Bps * 10), **kw)
    assert fast["total_time"][0] <= slow["total_time"][0]
    assert fast["fw_offload_exposed_time"][0] + fast["bw_offload_exposed_time"][0] <= \
        slow["fw_offload_exposed_time"][0] + slow["bw_offload_exposed_time"][0]


def test_decode_is_memory_bound_at_batch_1(h100) -> None:
    for name, tp in (("llama-3-8B", 1), ("llama-3-70B", 8), ("lamda-137B", 8)):
        r = inference(get_model(name), h100, batch=1, prompt=512, gen=64, tp=tp, raise_infeasible=False)
        assert r["step_memory_s"] > 5 * r["step_compute_s"], name
        # and the weights stream at no more than the HBM bandwidth
        assert r["tpot_s"] >= r["weight_bytes"] / h100.mem1.bandwidth_Bps


def test_inference_never_above_roofline(h100) -> None:
    m = get_model("llama-3-8B")
    b = np.array([1, 8, 32, 64, 128])  # all fit in HBM (larger batches spill the KV cache to mem2)
    r = inference(m, h100, batch=b, prompt=1024, gen=128)
    peak = h100.peak_flops("float16")
    assert np.all(r["step_flops"] / r["step_s"] <= peak)
    assert np.all(r["step_bytes"] / r["step_s"] <= h100.mem1.bandwidth_Bps * (1 + 1e-9))
    # throughput grows with batch but per-token latency does not shrink
    assert np.all(np.diff(r["decode_tokens_per_s"]) > 0)
    assert np.all(np.diff(r["tpot_s"]) >= 0)


def test_more_hbm_bandwidth_never_slower_inference(h100) -> None:
    m = get_model("llama-3-8B")
    slow = inference(m, h100, batch=[1, 16], prompt=2048, gen=256)
    fast = inference(m, h100.with_mem(0, bandwidth_Bps=h100.mem1.bandwidth_Bps * 1.5), batch=[1, 16], prompt=2048,
                     gen=256)
    assert np.all(fast["tpot_s"] <= slow["tpot_s"]) and np.all(fast["ttft_s"] <= slow["ttft_s"])


def test_no_kv_cache_is_quadratic(h100) -> None:
    m = get_model("llama-3-8B")
    g = np.array([256, 512, 1024, 2048])
    cache = inference(m, h100, batch=1, prompt=128, gen=g, kv_cache=True)
    nocache = inference(m, h100, batch=1, prompt=128, gen=g, kv_cache=False)
    assert np.all(nocache["decode_s"] > cache["decode_s"])
    # doubling the generation roughly doubles the cached total but more than doubles without a cache
    r_c = cache["decode_s"][1:] / cache["decode_s"][:-1]
    r_n = nocache["decode_s"][1:] / nocache["decode_s"][:-1]
    assert np.all(r_c < 2.2) and np.all(r_n > r_c)
    assert r_n[-1] > 2.5


def test_kv_cache_size_gqa(h100) -> None:
    m = get_model("llama-3-70B")
    r = inference(m, h100, batch=4, prompt=1000, gen=24, tp=8)
    per_token = m.kv_bytes_per_token(DTYPE_BYTES["float16"])  # 2*80*8*128*2 = 327680 bytes
    assert per_token == 327680
    assert np.isclose(r["kv_bytes"], 4 * 1024 * per_token / 8)


def test_capacity_spills_to_second_tier(a100) -> None:
    """A model that does not fit HBM runs from mem2 at mem2's pace (and only if it fits there)."""
    m = get_model("gpt3-175B")
    r = inference(m, a100, batch=1, prompt=256, gen=32, tp=1)
    assert r["tier_mem2_bytes"] > 0
    assert r["tpot_s"] > (r["tier_mem2_bytes"] / a100.mem2.bandwidth_Bps) * 0.99


def test_model_shapes_as_columns(a100) -> None:
    """One call evaluates several model shapes (e.g. 'largest model that fits')."""
    hidden = np.array([4096, 6144, 8192, 12288])
    model = {"hidden": hidden, "ffn": 4 * hidden, "seq": 2048, "heads": hidden // 128, "head_dim": 128,
             "layers": 48}
    st = train_step(model, a100, tensor_par=8, pipeline_par=1, data_par=1, batch_size=8,
                    activation_recompute="full", tensor_par_comm_type="rs_ag")
    assert np.all(np.diff(st["total_time"]) > 0)
    assert np.all(np.diff(st["mem_tier1_bytes"]) > 0)
    # the same numbers one shape at a time
    one = train_step({k: (v[2] if np.ndim(v) else v) for k, v in model.items()}, a100, tensor_par=8,
                     pipeline_par=1, data_par=1, batch_size=8, activation_recompute="full",
                     tensor_par_comm_type="rs_ag")
    assert np.isclose(one["total_time"][0], st["total_time"][2])
