"""dockerssd-llm: claims, the swap-fault fit, the pool step against the LLM block, invariants."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from dse.claims import evaluate_claims
from models.blocks.llm import MODELS, System, inference, simple_network, tier
from models.dockerssd import pool
from models.dockerssd.llm import LLMS, SHAPES

CLAIMS = registry.model_dir("dockerssd-llm") / "claims.yaml"
FIG5 = {"nodes": 128, "batch": 128, "seq_len": 32768, "enforce_capacity": False}


@pytest.fixture(scope="module")
def model():
    return registry.get("dockerssd-llm")


@pytest.fixture(scope="module")
def results():
    return {r.id: r for r in evaluate_claims(CLAIMS) if r.model == "dockerssd-llm"}


def test_the_headline_claims_are_the_articles(results):
    # that they hold: tests/test_claims_all.py
    head = {r.id for r in results.values() if r.headline}
    assert head == {"llm-dc-vs-hc", "llm-hc-vs-hn", "llm-dc-vs-dn", "llm-xover-lamda", "llm-xover-megatron",
                    "llm-long-seq-limit"}


def test_predicted_secondary_claims(results):
    for cid in ("llm-dn-vs-hn", "llm-opt-cache", "llm-size-trend"):
        assert results[cid].passed, (cid, results[cid].value)


def test_fit_reproduces_the_shipped_swap_fault(model):
    from models.dockerssd.calibration import fit_llm

    assert model.param_map()["swap_fault_us"].default == pytest.approx(fit_llm()["swap_fault_us"], rel=0.01)


def _shape(name):
    i = LLMS.index(name)
    return {k: v[i] for k, v in SHAPES.items() if k not in ("params", "kv_bytes_per_token")}


@pytest.mark.parametrize("cache", [True, False])
@pytest.mark.parametrize("tp,pp", [(1, 1), (8, 1), (4, 4), (16, 2)])
@pytest.mark.parametrize("b,prompt", [(1, 1000), (8, 4000)])
def test_pool_step_is_the_block_inference_step(cache, tp, pp, b, prompt):
    """On one memory tier, pool.step equals models.blocks.llm.inference's decode step."""
    net = simple_network(size=128, bandwidth_gbps=8.0, latency_s=5e-6)
    sysm = System.simple("x", matrix_tflops={"float16": 0.4}, vector_tflops={"float16": 0.4}, mem_gib=1e6,
                         mem_gbps=50.0, networks=[net])
    ref = inference(MODELS["gpt3-175B"], sysm, batch=b, prompt=prompt, gen=1, tp=tp, pp=pp, kv_cache=cache)
    got = pool.step(_shape("gpt3-175B"), nodes=tp * pp, batch=b, ctx=prompt + 1, kv_cache=cache, flops_per_s=0.4e12,
                    fast_cap_b=1e6 * 2**30, fast_bps=50e9, slow_cap_b=0.0, slow_bps=1e9, kv_second_tier=False,
                    net_bps=8e9, net_latency_s=5e-6, pairs=((tp, pp),), microbatch=False)
    for mine, theirs in (("step_s", "tpot_s"), ("compute_s", "step_compute_s"), ("memory_s", "step_memory_s"),
                         ("comm_s", "step_comm_s")):
        assert got[mine][0] == pytest.approx(float(ref[theirs]), rel=1e-9, abs=1e-15), mine


@pytest.mark.parametrize("tp,pp", [(4, 1), (8, 2)])
def test_pool_step_spills_like_the_block_on_dram_plus_swap(tp, pp):
    """Two tiers (20 GiB DRAM + a swap tier with page faults), short prompt: the block's
    placement and this one agree to 1% (they differ only in the activation working set)."""
    sw = tier("swap", 400.0, 3.0, page_fault_s=3.5e-6)
    sysm = System.simple("x", matrix_tflops={"float16": 0.4}, vector_tflops={"float16": 0.4}, mem_gib=20.0,
                         mem_gbps=50.0, networks=[simple_network(size=128, bandwidth_gbps=8.0, latency_s=5e-6)],
                         extra_tiers=[sw])
    ref = inference(MODELS["gpt3-175B"], sysm, batch=1, prompt=64, gen=1, tp=tp, pp=pp)
    got = pool.step(_shape("gpt3-175B"), nodes=tp * pp, batch=1, ctx=65, kv_cache=True, flops_per_s=0.4e12,
                    fast_cap_b=20 * 2**30, fast_bps=50e9, slow_cap_b=400 * 2**30, slow_bps=sw.effective_bandwidth_Bps,
                    kv_second_tier=False, net_bps=8e9, net_latency_s=5e-6, pairs=((tp, pp),), microbatch=False)
    assert got["step_s"][0] == pytest.approx(float(ref["tpot_s"]), rel=0.01)


def test_swap_bandwidth_is_the_block_swap_tier():
    from models.dockerssd.llm import swap_bw_gbps

    t = tier("swap", 400.0, 3.0, page_fault_s=3.5e-6)
    assert swap_bw_gbps(3.0, 3.5) == pytest.approx(t.effective_bandwidth_Bps / 1e9, rel=1e-12)


def test_search_returns_the_fastest_layout():
    shape = _shape("lamda-137B")
    kw = dict(nodes=64, batch=[1, 64, 300], ctx=[4096, 32768, 512], kv_cache=[True, False, True], flops_per_s=2e11,
              fast_cap_b=64e9, fast_bps=49e9, slow_cap_b=400e9, slow_bps=0.9e9, kv_second_tier=True, net_bps=7.9e9,
              net_latency_s=5e-6)
    best = pool.step(shape, **kw)["step_s"]
    each = np.stack([pool.step(shape, pairs=((t, p),), **kw)["step_s"] for t, p in zip(pool.TP_CAND, pool.PP_CAND)])
    np.testing.assert_allclose(best, np.nanmin(each, axis=0), rtol=1e-12)


def test_kv_cache_wins_at_long_context(model):
    for host in (True, False):
        nc, c = ("h_nocache", "h_cache") if host else ("d_nocache", "d_cache")
        for s in (1024, 8192, 32768):
            a = model.point(config=nc, llm="gpt3-175B", nodes=64, batch=64, seq_len=s)["time_per_token_s"]
            b = model.point(config=c, llm="gpt3-175B", nodes=64, batch=64, seq_len=s)["time_per_token_s"]
            assert b < a / 10


def test_no_cache_gap_is_the_clock_ratio(model):
    hn = model.point(config="h_nocache", llm="gopher-280B", **FIG5)["time_per_token_s"]
    dn = model.point(config="d_nocache", llm="gopher-280B", **FIG5)["time_per_token_s"]
    assert dn / hn == pytest.approx(3.8 / 2.2, rel=0.05)


def test_more_flash_bandwidth_never_slower(model):
    seqs = [256, 4096, 32768]
    base = model.run({"config": "d_cache", "seq_len": seqs})["time_per_token_s"]
    for k, v in (("flash_channels", 24), ("flash_channel_gbps", 2.4), ("flash_chips_per_channel", 8), ("dev_dram_gb", 8)):
        t = model.run({"config": "d_cache", "seq_len": seqs, k: v})["time_per_token_s"]
        assert np.all(t <= base * (1 + 1e-12)), k


def test_page_faults_only_slow_the_swap_config(model):
    seqs = [256, 4096, 32768]
    cheap = model.run({"config": "h_cache", "seq_len": seqs, "swap_fault_us": 1.0})["time_per_token_s"]
    dear = model.run({"config": "h_cache", "seq_len": seqs, "swap_fault_us": 10.0})["time_per_token_s"]
    assert np.all(dear > cheap)
    d1 = model.point(config="d_cache", swap_fault_us=1.0)["time_per_token_s"]
    d2 = model.point(config="d_cache", swap_fault_us=10.0)["time_per_token_s"]
    assert d1 == d2


def test_capacity_check(model):
    # megatron-1T at 32K, one sequence per node: 429 GB of KV per node, over the 400-GB DockerSSD
    on = model.point(config="d_cache", llm="megatron-1T", nodes=128, batch=128, seq_len=32768)
    off = model.point(config="d_cache", llm="megatron-1T", **FIG5)
    assert np.isnan(on["time_per_token_s"])
    assert np.isfinite(off["time_per_token_s"]) and off["fits_frac"] == 0.0
    assert off["kv_per_node_gb"] == pytest.approx(128 * 25600 * 2 * 32768 * 2 / 1e9 / 1, rel=0.01)
    # without a slow tier the hosts must hold the weights: megatron needs 64+ hosts of 64 GB
    assert np.isnan(model.point(config="h_nocache", llm="megatron-1T", nodes=32, batch=32)["time_per_token_s"])
    assert np.isfinite(model.point(config="h_nocache", llm="megatron-1T", nodes=64, batch=64)["time_per_token_s"])


def test_pool_bom(model):
    c = {n: model.point(config="d_cache", nodes=n)["pool_capex_usd"] for n in (16, 32, 64, 128)}
    assert c[16] < c[32] < c[64] < c[128]
    h = model.point(config="h_cache", nodes=16)["pool_capex_usd"]
    hn = model.point(config="h_nocache", nodes=16)["pool_capex_usd"]
    assert c[16] < hn < h
    e = model.point(config="d_cache", dev_cores=12)["pool_capex_usd"]
    assert e > c[16]


def test_crossover_finder():
    from models.dockerssd.llm import crossover_seq_len

    lamda = crossover_seq_len("lamda-137B", 128)
    mega = crossover_seq_len("megatron-1T", 128, enforce_capacity=False)
    assert 128 <= lamda <= 512 and 512 <= mega <= 2048
    # bigger pools stream less weight per node from flash, so D-Cache wins earlier
    assert crossover_seq_len("lamda-137B", 16) > crossover_seq_len("lamda-137B", 64) > lamda
    # palm-540B's weights overflow 16 hosts' DRAM into swap: D-Cache wins at any length
    assert crossover_seq_len("palm-540B", 16, enforce_capacity=False) == 16.0


def test_long_sequence_speedup_tracks_the_swap_fault_cost(model):
    """The 9.5x asymptote is the anchor of swap_fault_us: the speedup grows with the fault cost, and
    a fault costing the link block's Linux block-I/O path alone (4.5 us) already lands past 9.5x + 15%."""
    from models.blocks import link

    block_io_us = float(link.NVME_STACK_SUBMIT_NS[0] + link.NVME_STACK_COMPLETE_NS[0] + link.NVME_COMPLETION_NS[0]) / 1e3
    kw = {"llm": "lamda-137B", "nodes": 128, "batch": 128, "seq_len": 131072, "enforce_capacity": False,
          "swap_fault_us": [2.0, 3.53, block_io_us]}
    ratio = model.run({"config": "h_cache", **kw})["time_per_token_s"] / model.run({"config": "d_cache", **kw})["time_per_token_s"]
    assert np.all(np.diff(ratio) > 0)
    assert ratio[2] > 9.5 * 1.15
