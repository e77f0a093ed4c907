"""expand: the access-pattern, mix and switch-port mechanisms (its out-of-fit errors: test_out_of_fit.py)."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.blocks import link
from models.expand import model as mod

@pytest.fixture(scope="module")
def m():
    return registry.get("expand")


def test_rule_accuracy_capped_on_irregular_patterns(m):
    # L1243: rule-based prefetchers reach at most 76% on irregular patterns (Table 4 Rule1: 82%)
    r = m.point(design="rule1", workload="pr")
    assert r["hidden_miss_frac"] == pytest.approx(0.76 * mod.HOST_TIMELY_FRAC, rel=1e-9)


def test_offset_prefetcher_runs_ahead_on_stencils(m):
    # lbm is a stencil: 256 lines x its ~1.8 us inter-miss gap covers the ~4.7 us miss path
    st = m.point(design="rule1", workload="lbm")
    assert st["hidden_miss_frac"] == pytest.approx(1 - 0.18 * mod.STRUCTURED_RESIDUAL_FRAC, rel=1e-9)
    # mcf is structured but not fixed-offset: the host timely share applies
    mcf = m.point(design="rule1", workload="mcf")
    assert mcf["hidden_miss_frac"] == pytest.approx((1 - 0.18 * mod.STRUCTURED_RESIDUAL_FRAC) * mod.HOST_TIMELY_FRAC)
    # Rule2 is not an offset prefetcher: no run-ahead on the stencil
    assert m.point(design="rule2", workload="lbm")["hidden_miss_frac"] < st["hidden_miss_frac"] * mod.HOST_TIMELY_FRAC + 1e-9


def test_mix_interleaving_hurts_global_stream_prefetchers_only(m):
    mpki = np.array([mod.MPKI[w] for w in mod.MIXES["mix_graph"]])
    same = float(np.sum((mpki / mpki.sum()) ** 2))
    assert same == pytest.approx(0.35, abs=0.01)
    # ML1 trains on the global miss stream: accuracy x P(same benchmark); graph pattern: coverage = accuracy
    assert m.point(design="ml1", workload="mix_graph")["hidden_miss_frac"] == pytest.approx(0.88 * same * mod.HOST_TIMELY_FRAC)
    # ExPAND uses the PC (M7): its hidden share is unchanged by the mix
    assert m.point(design="expand", workload="mix_graph")["hidden_miss_frac"] == pytest.approx(0.92)
    # a mix's time is the mean of its members' (equal instructions per core), members sharing the internal DRAM
    assert m.point(design="nopf", workload="mix_cc_tc")["time_ns_per_kinst"] > 0


def test_single_workload_rows_unchanged_by_a_mix_in_the_batch(m):
    alone = m.point(design="expand", workload="sssp")["time_ns_per_kinst"]
    batch = m.run({"design": ["expand", "expand"], "workload": ["sssp", "mix_graph"]})["time_ns_per_kinst"]
    assert batch[0] == alone


def test_switch_ports_queue_every_access(m):
    assert m.point(design="expand", workload="pr", switch_levels=0, switch_fanout=8)["switch_wait_ns"] == 0.0
    r = m.point(design="expand", workload="pr", switch_levels=2, switch_fanout=8)
    bw = float(link.cxl_mem_bw_gbps(6, 8, 1, 0.99))
    s = 64.0 / bw
    rho = 8 * r["link_util_frac"]
    # M/D/1 wait (P-K, scv 0) per level, two levels
    assert r["switch_wait_ns"] == pytest.approx(2 * rho * s / (2 * (1 - rho)), rel=0.02)
    # the hidden accesses pay it too: ExPAND's time rises with the fanout at a fixed switch depth
    t1 = m.point(design="expand", workload="pr", switch_levels=2, switch_fanout=1)["time_ns_per_kinst"]
    assert r["time_ns_per_kinst"] > t1
    ev = m.run_full({"design": "expand", "workload": "sssp", "switch_levels": 2, "switch_fanout": 64})
    assert ev.reason_of(0) == mod.SWITCH_SATURATED
