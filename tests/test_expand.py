"""expand: headline claims, invariants of the prefetch mechanism, and the fitted constants."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from dse.claims import evaluate_claims
from models.expand import calibration, model as mod


@pytest.fixture(scope="module")
def m():
    return registry.get("expand")


@pytest.fixture(scope="module")
def claims():
    return {c.id: c for c in evaluate_claims(registry.model_dir("expand") / "claims.yaml")}


def test_spec_and_ml_headlines(claims):
    # the paper's numbers, at the claims' tolerance
    assert claims["abs-spec-14.7x"].value == pytest.approx(14.7, rel=0.15)
    assert claims["expand-vs-ml"].value == pytest.approx(2.4, rel=0.15)


def test_graph_headline_stays_documented(claims):
    # claims.yaml: with Table 4's 92% hidden, Fig. 1a's 3.9x and the 48% gap imply ~11x, not
    # 9.0x; the model sits between the two and must not drift further from the article
    assert 9.0 < claims["abs-graph-9x"].value < 11.0


def test_anchors_hold(claims):
    for cid in ("f1a-perfect", "f1a-slow", "ml-vs-nopf", "expand-range-top"):
        assert claims[cid].passed, cid


def test_fitted_constants_match_their_fit():
    fit = calibration.fit_all()
    for name in ("CPI_CORE", "DRAM_REUSE_ALPHA", "STRUCTURED_RESIDUAL_FRAC", "HOST_TIMELY_FRAC"):
        assert fit[name] == pytest.approx(getattr(mod, name), rel=0.005), name


def test_structured_patterns_are_covered_better(m):
    # the same prefetcher hides more of a structured (SPEC) workload's misses than of a graph's,
    # and residual 1 falls back to Fig. 1a's coverage = accuracy
    for d in ("rule2", "ml1", "expand"):
        spec = m.point(design=d, workload="mcf")["hidden_miss_frac"]
        graph = m.point(design=d, workload="sssp")["hidden_miss_frac"]
        assert spec > graph
    plain = m.point(design="expand", workload="mcf", structured_residual_frac=1.0)["hidden_miss_frac"]
    assert plain == pytest.approx(m.point(design="expand", workload="sssp")["hidden_miss_frac"])
    assert plain == pytest.approx(0.92)


def test_prefetcher_ordering_follows_accuracy(m):
    # single benchmarks (in a mix the PC-localized Rule2 overtakes the global-stream ones, M7)
    w = list(mod.GRAPH + mod.SPEC)
    t = {d: m.run({"design": d, "workload": w})["time_ns_per_kinst"] for d in ("nopf", "rule2", "rule1", "ml1", "ml2", "expand")}
    assert np.all(t["rule2"] < t["nopf"])
    assert np.all(t["rule1"] < t["rule2"])
    # the offset prefetcher runs ahead on the stencils (L1333: rule prefetchers do well on
    # structured SPEC patterns) and beats ML1 there; elsewhere accuracy orders them
    stencil = np.array([mod.PATTERN[x] == "stencil" for x in w])
    assert np.all(t["ml1"][~stencil] < t["rule1"][~stencil])
    assert np.all(t["rule1"][stencil] < t["ml1"][stencil])
    assert np.all(t["ml2"] <= t["ml1"])
    assert np.all(t["expand"] < t["ml2"])


def test_effectiveness_curve_is_monotone_and_steep_at_the_top(m):
    e = np.linspace(0.0, 1.0, 11)
    t = m.run({"design": "ideal", "workload": "pr", "effectiveness_frac": e})["time_ns_per_kinst"]
    assert np.all(np.diff(t) < 0)
    speed = t[0] / t
    assert speed[-1] / speed[-2] > speed[5] / speed[4]  # gains grow toward 100%


def test_topology_awareness_protects_against_switch_levels(m):
    lv = np.arange(5)
    aware = m.run({"design": "expand", "workload": "tc", "switch_levels": lv})["time_ns_per_kinst"]
    unaware = m.run({"design": "expand", "workload": "tc", "switch_levels": lv, "topology_aware": False})["time_ns_per_kinst"]
    assert np.all(np.diff(aware) > 0) and np.all(np.diff(unaware) > 0)
    assert aware[0] == pytest.approx(unaware[0])
    assert np.all(aware[1:] < unaware[1:])


def test_faster_media_never_slower(m):
    for design in ("nopf", "expand"):
        t = [m.point(design=design, workload="sssp", media=x)["time_ns_per_kinst"] for x in ("znand", "pmem", "dram")]
        assert t[0] > t[1] > t[2]


def test_more_internal_dram_never_slower(m):
    t = m.run({"design": "nopf", "workload": "pr", "ssd_dram_gb": np.array([0.5, 1.5, 8.0, 32.0])})["time_ns_per_kinst"]
    assert np.all(np.diff(t) < 0)


def test_ssd_memory_is_cheaper_than_local_dram_at_scale(m):
    # a whole device (controller, internal DRAM) is paid for a small working set; from a few
    # hundred GB the cheaper media win
    scale = np.array([1.0, 4.0, 16.0])
    ssd = m.run({"design": "expand", "workload": "sssp", "working_set_scale": scale})["usd_per_gib"]
    local = m.run({"design": "local_dram", "workload": "sssp", "working_set_scale": scale})["usd_per_gib"]
    assert np.all(ssd < local)
    small = m.point(design="expand", workload="lbm")["usd_per_gib"]
    assert small > ssd[0]


def test_graph_headline_reading_checks(m):
    # claims.yaml abs-graph-9x: the miss is not a baseline or averaging artefact
    graph = list(mod.GRAPH)
    ex = m.run({"design": "expand", "workload": graph})
    s = ex["speedup_vs_nopf_x"]
    gmean, amean, hmean = float(np.exp(np.mean(np.log(s)))), float(np.mean(s)), float(len(s) / np.sum(1.0 / s))
    assert amean / hmean < 1.01 and hmean <= gmean <= amean  # the four speedups are too alike to matter
    # against a host-side prefetcher ExPAND is 2.4x-5.6x, far from 9x: the 9x is over NoPrefetch
    for d in ("rule1", "rule2", "ml1", "ml2"):
        r = m.run({"design": d, "workload": graph})
        ratio = float(np.exp(np.mean(np.log(r["time_ns_per_kinst"] / ex["time_ns_per_kinst"]))))
        assert 2.0 < ratio < 6.0, (d, ratio)
    # prefetch traffic (useful + useless) leaves the CXL link mostly idle
    assert float(np.max(ex["link_util_frac"])) < 0.10


def test_pmem_backend_near_the_articles_ratio():
    # L1414: Z-NAND is 6x slower than PMEM; the flash block's two back ends give ~5.4x per 64 B read
    ratio = mod.MEDIA_READ_NS["znand"] / mod.MEDIA_READ_NS["pmem"]
    assert 5.0 < ratio < 6.0


def test_fig1a_up_to_read_as_maxima_does_not_close_the_graph_headline(m):
    # claims.yaml abs-graph-9x: reading Fig. 1a's "up to 3.9x" as the best graph workload (SSSP)
    # instead of the mean makes the core time so large that even no internal-DRAM reuse keeps the
    # mean slowdown at 80% effectiveness below the article's 4.5x, and the worst workload above it
    graph = list(mod.GRAPH)

    def perfect_gap(cpi):
        r = m.run({"design": "ideal", "workload": graph, "effectiveness_frac": 1.0, "cpi_core": cpi})
        return calibration.PERFECT_VS_LOCAL - float(np.max(1.0 / r["slowdown_vs_local_x"]))

    cpi = calibration._bisect(perfect_gap, 0.1, 4.0)
    assert cpi == pytest.approx(1.229, rel=0.01)
    r = m.run({"design": "ideal", "workload": graph, "effectiveness_frac": 0.8, "cpi_core": cpi, "dram_reuse_alpha": 0.0})
    s = r["slowdown_vs_local_x"]
    assert float(np.exp(np.mean(np.log(s)))) < calibration.EFF80_VS_LOCAL < float(np.max(s))
