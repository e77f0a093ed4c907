"""iks on the vector-search family scale: work, capex, power, latency, feasibility."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry, units
from dse.model import NO_WORK
from models.iks import model as iks_model


@pytest.fixture(scope="module")
def model():
    return registry.get("iks")


def test_family_declaration(model):
    assert model.family == "vector-search"
    assert model.workload_param("vector_dim") == "embed_dim"
    assert model.workload_param("corpus_vectors") == "corpus_vectors"
    assert "host" in model.boundary and "IKS" in model.boundary


def test_default_point_is_plausible(model):
    """1e8 768-d fp16 vectors (154 GB): one IKS + one host; IKS answers 50-200 queries/s in
    batches of 16 (Table 1: 51 q/s at 256 GB, so ~85 at 154 GB), CPU flat search 5-20x fewer,
    capex of a server plus one IKS (~$9-15k), a few hundred watts."""
    o = {r: model.point(retriever=r) for r in iks_model.RETRIEVERS}
    iks = o["iks"]
    assert iks["iks_count"] == 1.0 and iks["host_count"] == 1.0
    assert 50.0 < iks["work_per_s"] < 200.0
    assert iks["query_latency_ms"] == pytest.approx(16 / iks["work_per_s"] * 1e3)
    assert 9_000.0 < iks["capex_usd"] < 15_000.0
    assert 150.0 < iks["power_w"] < 600.0
    assert 5.0 < iks["work_per_s"] / o["cpu_enns"]["work_per_s"] < 20.0
    assert iks["usd_per_work"] < o["cpu_enns"]["usd_per_work"]
    # usd_per_work = TCO over the queries of the period, per million
    years = model.param_map()["years"].default
    assert iks["usd_per_work"] == pytest.approx(iks["tco_usd"] / (iks["work_per_s"] * years * units.HOURS_PER_YEAR * 3600) * 1e6)


def test_hnsw_recall_below_exact(model):
    # 0.95 at efSearch 4096 on the DPR corpus (21 M vectors); a little lower on a larger graph
    assert 0.9 < model.point(retriever="cpu_hnsw")["recall_frac"] <= 0.95
    assert model.point(retriever="iks")["recall_frac"] == 1.0
    assert model.point(retriever="cpu_enns")["recall_frac"] == 1.0


def test_larger_corpus_fewer_qps_or_more_devices(model):
    n = np.asarray([1e7, 1e8, 3e8, 1e9, 3e9])
    for r in ("iks", "cpu_enns"):
        out = model.run({"retriever": r, "corpus_vectors": n, "n_devices": 0})
        assert np.all(np.diff(out["work_per_s"]) <= 1e-9), r
        assert np.all(np.diff(out["capex_usd"]) >= 0), r
    iks = model.run({"retriever": "iks", "corpus_vectors": n, "n_devices": 0})
    assert iks["iks_count"].tolist() == [1, 1, 1, 3, 9]  # 512 GB each: 15 GB .. 4.6 TB
    # with the one IKS of the default, a corpus beyond 512 GB is infeasible, with its reason
    ev = model.run_full({"corpus_vectors": n})
    assert ev.feasible.tolist() == [True, True, True, False, False]
    assert ev.reason_of(3) == iks_model.NO_FIT
    assert iks["host_count"][-1] == 2  # 8 IKS per host
    hnsw = model.run({"retriever": "cpu_hnsw", "corpus_vectors": n})
    assert np.all(np.diff(hnsw["host_dram_gib"]) > 0) and hnsw["host_count"][-1] > 1
    # wider vectors: more bytes, fewer queries/s
    dims = model.run({"embed_dim": np.asarray([256.0, 768, 2048])})["work_per_s"]
    assert np.all(np.diff(dims) < 0)


def test_capex_includes_the_host(model):
    o = model.point()
    iks_usd = o["device_usd"]
    host_usd = iks_model.HOST_USD + 128.0 * iks_model.HOST_DRAM_USD_PER_GIB
    assert o["capex_usd"] == pytest.approx(iks_usd + host_usd)
    cpu = model.point(retriever="cpu_enns")
    assert cpu["capex_usd"] > iks_model.HOST_USD + cpu["host_dram_gib"] * iks_model.HOST_DRAM_USD_PER_GIB * 0.999
    assert cpu["host_dram_gib"] > 128.0 + 1e8 * 768 * 2 / 2**30 * 0.999


def test_article_corpus_wins_when_set(model):
    a = model.point(corpus_gb=256.0, corpus_vectors=1e4)
    b = model.point(corpus_gb=256.0, corpus_vectors=1e10)
    assert a["work_per_s"] == b["work_per_s"]
    assert model.point(corpus_gb=256.0, n_devices=1)["search_ms"] == pytest.approx(313.0, rel=0.1)


def test_infeasible_points_carry_a_reason(model):
    ev = model.run_full({"corpus_gb": [256.0, 600.0], "n_devices": [1.0, 1.0]})
    assert ev.feasible.tolist() == [True, False]
    assert ev.reason_of(1) == iks_model.NO_FIT
    ev = model.run_full({"retriever": "cpu_enns", "host_max_dram_gib": 64.0, "host_base_dram_gib": 128.0})
    assert ev.reason_of(0) == iks_model.NO_HOST_FIT
    assert NO_WORK not in (ev.reason_of(0) or "")
