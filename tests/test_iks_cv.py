"""iks: leave-one-anchor-out error, HNSW recall / breadth / graph depth, TTFT parts, smooth generation."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from dse.claims import evaluate_claims
from dse.crossval import cross_validate, median_abs
from dse.units import GB
from models.iks import baselines as b
from models.iks import rag

CLAIMS = registry.model_dir("iks") / "claims.yaml"


@pytest.fixture(scope="module")
def model():
    return registry.get("iks")


def test_out_of_fit_error():
    rows = cross_validate(CLAIMS, evaluate_claims(CLAIMS))
    by = {r.id: r for r in rows}
    assert set(by) == {"t1-solo-search-ms", "t1-solo-qps"}
    # eta from the spatial column predicts the solo column within the 612/313 vs 2.0 residual
    assert by["t1-solo-search-ms"].out_of_fit_value == pytest.approx(306.0, rel=0.01)
    assert abs(by["t1-solo-qps"].out_of_fit_error_pct) < 3.0
    assert median_abs(rows)["iks"] < 5.0


# ------------------------------------------------------------------ HNSW recall and cost
def test_recall_curve_anchor_and_shape():
    assert b.hnsw_recall(4096, b.DPR_PASSAGES) == pytest.approx(0.95)  # Fig. 3 / Fig. 8 (~L2967, ~L3159)
    ef = np.array([64, 256, 1024, 4096, 16384], dtype=float)
    r = b.hnsw_recall(ef, b.DPR_PASSAGES)
    assert np.all(np.diff(r) > 0) and r[-1] < 1.0
    # miss rate ~ ef^-0.5: 4x the breadth halves the misses
    np.testing.assert_allclose((1 - r[:-1]) / (1 - r[1:]), 2.0, rtol=1e-9)
    # the inverse gives back the breadth
    np.testing.assert_allclose(b.hnsw_ef_for_recall(r, b.DPR_PASSAGES), ef, rtol=1e-9)


def test_bigger_graph_is_deeper_slower_and_less_accurate():
    n = np.array([1e6, 1e7, 1e8, 1e9])
    t = b.hnsw_walk_s(4096, 32, 768, 4, n)
    assert np.all(np.diff(t) > 0)  # more layers to descend (ln N / ln M)
    np.testing.assert_allclose(np.diff(b.hnsw_levels(n, 32)), np.log(10) / np.log(32))
    assert np.all(np.diff(b.hnsw_recall(4096, n)) < 0)
    # at a fixed recall the breadth, and so the time, grows as log N
    ef = b.hnsw_ef_for_recall(0.95, n)
    np.testing.assert_allclose(ef / np.log(n), 4096 / np.log(b.DPR_PASSAGES), rtol=1e-9)


def test_model_hnsw_time_grows_with_corpus(model):
    r = model.run({"retriever": "cpu_hnsw", "corpus_gb": [10.0, 100.0, 1000.0], "n_devices": 0})
    assert np.all(np.diff(r["query_latency_ms"]) > 0)
    assert np.all(np.diff(r["recall_frac"]) < 0)


def test_equal_recall_costs_breadth(model):
    """HNSW asked for a higher recall searches wider and takes longer (the ef it needs)."""
    r = model.run({"retriever": "cpu_hnsw", "corpus_gb": 50.0, "hnsw_recall_target_frac": [0.9, 0.95, 0.99]})
    np.testing.assert_allclose(r["recall_frac"], [0.9, 0.95, 0.99], rtol=1e-9)
    assert np.all(np.diff(r["hnsw_ef_used"]) > 0) and np.all(np.diff(r["query_latency_ms"]) > 0)
    vectors = 50.0 * GB / (768 * 2)
    assert r["hnsw_ef_used"][1] == pytest.approx(4096 * np.log(vectors) / np.log(b.DPR_PASSAGES), rel=1e-9)
    # fewer passages needed at higher recall: less generation
    assert np.all(np.diff(r["gen_ms"]) <= 1e-9)


# ------------------------------------------------------------------ TTFT parts, smooth generation
def test_ttft_parts_for_every_pipeline(model):
    for pipe in rag.PIPELINES:
        r = model.run({"pipeline": pipe, "retriever": ["iks", "cpu_enns", "cpu_hnsw"], "corpus_gb": 50.0})
        np.testing.assert_allclose(r["ttft_ms"], r["ttft_retrieval_ms"] + r["prefill_ms"], rtol=1e-12)
        np.testing.assert_allclose(r["gen_ms"], r["prefill_ms"] + r["decode_ms"], rtol=1e-12)
        np.testing.assert_allclose(r["ttft_retrieval_ms"], r["retrieval_ms"], rtol=1e-12)
        assert np.all(r["prefill_ms"] > 0) and np.all(r["decode_ms"] > 0)


@pytest.mark.parametrize("pipe", rag.PIPELINES)
def test_generation_is_smooth_in_passages(model, pipe):
    """Generation time rises with K, continuously, and never faster than attention's K^2:
    the batch runs in waves when its prompts overflow HBM instead of spilling to host."""
    x = np.geomspace(1, 8, 31)[:-1]  # K = top_k x hnsw_docs_x, 1 .. 64 densely
    top = np.repeat([1.0, 8.0], x.size)
    k = top * np.tile(x, 2)
    g = model.run({"pipeline": pipe, "top_k": top, "hnsw_docs_x": np.tile(x, 2), "retriever": "cpu_hnsw",
                   "corpus_gb": 50.0})["gen_ms"]
    assert not np.isnan(g).any()
    assert np.all(np.diff(g) > 0)
    elasticity = np.diff(np.log(g)) / np.diff(np.log(k))
    assert elasticity.max() <= 2.0, elasticity.max()
    # neighbouring table points: no step larger than the K ratio squared
    tab = rag.generation_table()["gen_s"][rag.PIPELINES.index(pipe), rag.BATCHES.index(16)]
    ks = np.asarray(rag.TABLE_KS, dtype=float)
    fin = ~np.isnan(tab)
    assert np.all(tab[fin][1:] / tab[fin][:-1] <= (ks[fin][1:] / ks[fin][:-1]) ** 2)
