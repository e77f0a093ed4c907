"""The bounded, streamed search equals the exhaustive one; its bound is a true lower bound."""

from __future__ import annotations

import csv
import dataclasses

import numpy as np
import pytest

from models.blocks.llm import training
from models.blocks.llm.bound import Context, exact_rates, expand, memory_rows, net_ok
from models.blocks.llm.calculon_io import model_from_json, system_from_json
from models.blocks.llm.executions import Executions
from models.blocks.llm.models import ModelShape, get_model
from models.blocks.llm.reference import SHIPPED
from models.blocks.llm.search import model_flops_per_sample, search, search_exhaustive
from models.blocks.llm.space import SpaceOptions, shapes

INP = SHIPPED / "inputs"
SYSTEMS = ("a100_80g", "a100_80g_cxl1T64", "a100_80g_cxl4T32", "h100_80g_nvl8", "h100_80g_nvl8_cxl1T64",
           "h100_80g_nvl8_cxl4T32")
with (SHIPPED / "optimal.csv").open() as fh:
    SEARCHES = {r["search_id"]: r for r in csv.DictReader(fh) if r["rank"] == "1"}


def _same(a, b) -> None:
    """Equal winners and top-k (executions and sample rates, in order) and equal counts."""
    assert (a.evaluated, a.feasible, a.candidates) == (b.evaluated, b.feasible, b.candidates)
    assert [x["sample_rate"] for x in a.best] == [x["sample_rate"] for x in b.best]
    assert [x["execution"] for x in a.best] == [x["execution"] for x in b.best]


@pytest.mark.parametrize("sid", sorted(SEARCHES))
def test_every_calculon_search_equals_exhaustive(sid: str) -> None:
    row = SEARCHES[sid]
    m = model_from_json(INP / "models" / f"{row['model']}.json")
    s = system_from_json(INP / "systems" / f"{row['system']}.json")
    args = (m, int(row["num_procs"]), int(row["max_batch_size"]), s, row["datatype"])
    for mbs_break in (True, False):
        a = search(*args, top_n=5, mbs_break=mbs_break)
        _same(a, search_exhaustive(*args, top_n=5, mbs_break=mbs_break))
        assert a.complete and a.pruned + a.exact == a.feasible
    assert a.exact < a.feasible or a.feasible <= 256  # the bound pruned (beyond the first batch)


def _random_case(rng: np.random.Generator) -> tuple[ModelShape, object, int, int, dict]:
    heads = int(rng.choice([4, 8, 12, 16]))
    hidden = heads * int(rng.choice([32, 64, 96]))
    model = ModelShape("rand", int(rng.choice([4, 6, 8, 12])), hidden, int(rng.choice([2, 4])) * hidden, heads, heads,
                       hidden // heads, 1000, int(rng.choice([256, 512, 1024])))
    sys_ = system_from_json(INP / "systems" / f"{rng.choice(SYSTEMS)}.json")
    # tight memory so capacity, offload and the -m rule all matter
    sys_ = sys_.with_mem(0, capacity_bytes=float(rng.uniform(0.02, 1.0)) * 2**30)
    if sys_.mem2.capacity_bytes > 0:
        sys_ = sys_.with_mem(1, capacity_bytes=float(rng.uniform(0.05, 4.0)) * 2**30,
                             bandwidth_Bps=float(rng.choice([1e9, 32e9])))
    if rng.random() < 0.3:
        sys_ = dataclasses.replace(sys_, processing_mode="roofline")
    procs = int(rng.choice([4, 6, 8, 12, 16, 24, 32]))
    opts = {"top_n": int(rng.integers(1, 7)), "mbs_break": bool(rng.random() < 0.5),
            "fused": (True, False) if rng.random() < 0.3 else (True,),
            "allow_tp_overlap": bool(rng.random() < 0.8), "allow_dp_overlap": bool(rng.random() < 0.8)}
    return model, sys_, procs, int(rng.integers(max(1, procs // 4), 65)), opts


def test_random_small_spaces_equal_exhaustive() -> None:
    rng = np.random.default_rng(24)
    done = breaks_bite = 0
    while done < 30:
        model, sys_, procs, batch, opts = _random_case(rng)
        try:
            size = sum(s.rows for s in shapes(model, procs, batch, sys_, SpaceOptions(
                opts["fused"], opts["allow_tp_overlap"], opts["allow_dp_overlap"])))
        except Exception:
            continue
        if size > 40_000:
            continue
        a = search(model, procs, batch, sys_, **opts)
        b = search_exhaustive(model, procs, batch, sys_, **opts)
        _same(a, b)
        breaks_bite += opts["mbs_break"] and b.evaluated < b.candidates
        done += 1
    assert breaks_bite >= 5  # the -m rule removed rows in several cases


SMALL = ModelShape("small", 8, 1024, 4096, 16, 16, 64, 1000, 512)


def _hbm_only(name: str):
    s = system_from_json(INP / "systems" / f"{name}.json")
    return s.with_tiers(s.mem1)


def test_mbs_break_rule_is_kept_exactly_under_pruning(monkeypatch) -> None:
    """The -m rule depends on feasibility only, which the bound pass computes exactly for every
    (knob, microbatch) before any pruning.  Calculon's memory grows with the microbatch, so the
    rule normally drops only infeasible rows; here microbatch 2 is made infeasible so the rule
    also drops feasible larger microbatches, and both answers must still match."""
    real = training._capacity

    def no_mbs_2(a, v):
        out = real(a, v)
        out["mem_tier1_bytes"] = np.where(v["mbs"] == 2, np.inf, out["mem_tier1_bytes"])
        return out

    monkeypatch.setattr(training, "_capacity", no_mbs_2)
    args = (SMALL, 8, 16, _hbm_only("a100_80g"))
    with_rule = search_exhaustive(*args, top_n=4, mbs_break=True)
    without = search_exhaustive(*args, top_n=4, mbs_break=False)
    assert with_rule.feasible < without.feasible  # feasible rows behind the stop
    assert with_rule.best_sample_rate < without.best_sample_rate
    _same(search(*args, top_n=4, mbs_break=True), with_rule)
    _same(search(*args, top_n=4, mbs_break=False), without)


def _bound_checked_rows(model, sys_, procs, batch) -> int:
    ctx = Context(model, sys_, "float16", procs)
    n = 0
    for shape in shapes(model, procs, batch, sys_):
        ok_pl = net_ok(ctx, shape)
        mem = memory_rows(ctx, shape, 0, len(shape.knobs), ok_pl, mbs_break=False)
        rows = expand(ctx, shape, mem, ok_pl, -np.inf)
        if not len(rows.ub):
            continue
        rate, feasible = exact_rates(ctx, shape, rows)
        assert feasible.all()
        assert (rate <= rows.ub).all()  # sample rate <= batch / lower bound
        # the per-memory-row bound holds for every placement of the row
        pos = {(k, i): u for k, i, u in zip(mem.ik, mem.im, mem.ub)}
        assert all(u <= pos[(k, i)] for k, i, u in zip(rows.ik, rows.im, rows.ub))
        # staged evaluation == evaluate(), element for element
        cols = shape.columns(procs, rows.ik, rows.im, rows.ip)
        st = training.evaluate(model, sys_, ctx.executions(cols, len(rows.ik)))
        assert np.array_equal(st["sample_rate"], rate)
        n += len(rate)
    return n


@pytest.mark.parametrize("seed", range(6))
def test_bound_is_a_lower_bound_of_batch_time(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(50):
        model, sys_, procs, batch, _ = _random_case(rng)
        try:
            if sum(s.rows for s in shapes(model, procs, batch, sys_)) <= 40_000:
                break
        except Exception:
            continue
    assert _bound_checked_rows(model, sys_, procs, batch) > 0


def test_bound_on_a_production_slice() -> None:
    """gpt3-175B on 64 A100s with CXL offload: every feasible row of two shapes."""
    m = get_model("gpt3-175B")
    s = system_from_json(INP / "systems" / "a100_80g_cxl1T64.json")
    assert _bound_checked_rows(m, s, 64, 8) > 1000


def test_fixed_dimensions_equal_exhaustive_restricted() -> None:
    s = _hbm_only("h100_80g_nvl8")
    for fix in ({"tp": 2}, {"pp": 4}, {"dp": 2}, {"tp": 4, "pp": 2}):
        a = search(SMALL, 16, 16, s, top_n=3, **fix)
        _same(a, search_exhaustive(SMALL, 16, 16, s, top_n=3, **fix))
        for k, v in fix.items():
            name = {"tp": "tensor_par", "pp": "pipeline_par", "dp": "data_par"}[k]
            assert all(b["execution"][name] == v for b in a.best)


def test_time_limit_returns_best_so_far_unproven() -> None:
    m = get_model("gpt3-175B")
    s = system_from_json(INP / "systems" / "a100_80g.json")
    seen = []
    res = search(m, 512, 512, s, max_seconds=0.0, progress=seen.append)
    assert res.best and not res.complete and "not proven optimal" in res.note
    full = search(m, 512, 512, s)
    assert full.complete and full.note == "" and full.best_sample_rate >= res.best_sample_rate
    assert seen and seen[-1].rows_done <= seen[-1].rows_total


def test_streaming_keeps_memory_small() -> None:
    """A 1.9 M-configuration space is bounded and searched with little Python-heap memory."""
    import tracemalloc

    m = get_model("gpt3-175B")
    s = system_from_json(INP / "systems" / "a100_80g.json")
    tracemalloc.start()
    res = search(m, 256, 512, s)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert res.candidates > 1_000_000 and peak < 200e6


def test_mfu_and_hfu() -> None:
    m = get_model("gpt3-175B")
    s = system_from_json(INP / "systems" / "h100_80g_nvl8.json")
    b = search(m, 1031, 1031, s).best[0]
    per_sample = model_flops_per_sample(m, s)
    h, sq, L = m.hidden, m.seq, m.layers
    megatron = 72 * sq * L * h * h * (1 + sq / (6 * h))  # Narayanan et al. SC'21, blocks only
    assert abs(per_sample / megatron - 1) < 0.02
    peak = s.peak_flops("float16")
    assert b["mfu"] == pytest.approx(per_sample * b["sample_rate"] / (1031 * peak))
    assert 0 < b["mfu"] <= b["hfu"] <= 1
    # attn_only recompute adds the attention-score work: HFU above MFU
    assert b["execution"]["activation_recompute"] == "attn_only" and b["hfu"] > b["mfu"]


def test_model_flops_do_not_depend_on_the_execution() -> None:
    m = get_model("megatron-22B")
    s = system_from_json(INP / "systems" / "a100_80g.json")
    exe = Executions.from_columns(tensor_par=8, pipeline_par=1, data_par=1, batch_size=4, microbatch_size=2)
    acc = training.block_stats(training.prepare(m, s, exe))
    per_sample_tp8 = float(acc["fw_flops"][0] + acc["ag_flops"][0] + acc["wg_flops"][0]) * 8 / 2 * m.layers
    assert per_sample_tp8 == pytest.approx(model_flops_per_sample(m, s), rel=0.01)  # TP adds only reductions
