"""mhj: headline claims, the shuffle/probe mechanics, the closed-loop memory, invariants."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dse import registry
from dse.claims import evaluate_claims

CLAIMS = Path(__file__).resolve().parents[1] / "models" / "mhj" / "claims.yaml"
SYNTHETIC = ["syn_store", "syn_catalog", "syn_web"]


@pytest.fixture(scope="module")
def model():
    return registry.get("mhj")


@pytest.fixture(scope="module")
def claims():
    return {r.id: r for r in evaluate_claims(CLAIMS)}


def test_fpga_slowdown_is_a_prediction_inside_the_range(claims):
    # not fitted: Table 1's 620 ns / 4.6 GB/s against 250 ns / 13 GB/s
    assert 1.8 <= claims["synth_csm_vs_clm"].value <= 2.1


def test_mhj_shuffles_only_the_build_side(model):
    # store_sales JOIN store_returns: 2,880 M + 288 M rows of 32 B
    shj = model.point(scheme="shj", workload="syn_store")
    mhj = model.point(scheme="mhj", workload="syn_store")
    assert shj["shuffle_gb"] == pytest.approx((2880e6 + 288e6) * 32 / 1e9)
    assert mhj["shuffle_gb"] == pytest.approx(288e6 * 32 / 1e9)


def test_small_build_side_is_broadcast(model):
    # Q55 joins small dimensions only: no shuffle for any scheme, one map copy per executor for BHJ
    for scheme in ("smj", "shj", "mhj"):
        assert model.point(scheme=scheme, workload="q55")["shuffle_gb"] == 0.0
    bhj = model.point(scheme="shj", workload="q55")["hashmap_gb"]
    mhj = model.point(scheme="mhj", workload="q55")["hashmap_gb"]
    assert bhj == pytest.approx(16 * mhj, rel=1e-6)


def test_closed_loop_memory_bounds():
    from models.mhj.memory import line_rate_per_ns

    k = np.asarray([1, 4, 16, 64, 256, 4096], dtype=float)
    lat, bw, think = 250.0, 13.0, 50.0
    lam = line_rate_per_ns(k, think, lat, bw)
    s = 64 / bw
    assert np.all(lam <= bw / 64 + 1e-12)  # never above the bandwidth
    assert np.all(lam <= k / (think + lat + s) + 1e-12)  # never above the no-queue rate
    assert np.all(np.diff(lam) > 0)
    assert lam[0] == pytest.approx(1 / (think + lat + s), rel=0.02)  # light load: no queue
    assert lam[-1] == pytest.approx(bw / 64, rel=0.01)  # heavy load: bandwidth bound


def test_device_ordering(model):
    # MHJ on the FPGA prototype is slower than on the ASIC estimate, which is no faster than CXL local
    for w in SYNTHETIC:
        t = {pool: model.point(scheme="mhj", pool=pool, workload=w)["query_s"] for pool in ("clm", "asic", "fpga")}
        assert t["fpga"] > t["asic"] >= t["clm"]
    assert model.point(scheme="mhj", pool="asic")["pool_latency_ns"] == pytest.approx(365.0)


def test_cxl_local_memory_is_single_host(model):
    assert np.isnan(model.point(scheme="mhj", pool="clm", nodes=2)["query_s"])
    assert np.isfinite(model.point(scheme="mhj", pool="fpga", nodes=2)["query_s"])


def test_map_must_fit_the_pool(model):
    # q78's maps (504 M rows x 72 B = 36 GB) do not fit a 16 GB pool
    assert np.isnan(model.point(scheme="mhj", workload="q78", pool_capacity_gb=16)["query_s"])
    assert np.isfinite(model.point(scheme="mhj", workload="q78", pool_capacity_gb=64)["query_s"])


def test_more_bandwidth_never_slower(model):
    g = np.asarray([0.5, 1, 2, 4, 8, 16], dtype=float)
    for scheme in ("smj", "shj", "mhj"):
        t = model.run({"scheme": scheme, "pool": "fpga", "shuffle_storage_gbps": g})["query_s"]
        assert np.all(np.diff(t) <= 1e-12)
        t = model.run({"scheme": scheme, "pool": "fpga", "nodes": 2, "net_gbit_s": np.asarray([10, 25, 100, 400.0])})["query_s"]
        assert np.all(np.diff(t) <= 1e-12)


def test_shj_scales_with_nodes_but_a_capped_pool_does_not(model):
    n = np.asarray([1, 2, 4], dtype=float)
    shj = model.run({"scheme": "shj", "nodes": n})["query_s"]
    csm = model.run({"scheme": "mhj", "pool": "fpga", "nodes": n})
    assert np.all(np.diff(shj) < 0)
    # the FPGA pool's bandwidth is shared by every host: the probe time does not shrink
    assert np.all(csm["pool_util_frac"] > 0.95)


def test_mhj_costs_a_pool(model):
    shj = model.point(scheme="shj")
    mhj = model.point(scheme="mhj")
    asic = model.point(scheme="mhj", pool="asic")
    assert shj["pool_usd"] == 0.0 and mhj["pool_usd"] > 0.0
    assert asic["pool_usd"] > mhj["pool_usd"]  # a switch and two retimers
    assert mhj["usd_per_hour"] > shj["usd_per_hour"]
    assert mhj["usd_per_query"] < shj["usd_per_query"]  # 2.5x faster pays for the pool


def test_calibration_reproduces_fitted_constants(model):
    from models.mhj.calibration import fit

    for k, v in fit().items():
        assert model.param_map()[k].default == pytest.approx(v, rel=1e-5), k


def test_task_execution_memory_is_sparks_unified_share():
    from models.mhj import spark

    # (20 GB - 300 MiB) x 0.6 / 4 running tasks
    assert spark.task_execution_memory_b(20e9, 4, 0.6) == pytest.approx((20e9 - 300 * 2**20) * 0.6 / 4)


def test_sort_spill_runs_and_bytes():
    from models.mhj.spark import sort_spill

    row_b, mem = 40.0, 6.8e9  # 68 B per record in the sort buffer -> 100 M rows per run
    rows = np.asarray([50e6, 100e6, 150e6, 250e6, 1000e6])
    spilled, runs = sort_spill(rows, row_b, mem, 24.0)
    np.testing.assert_allclose(runs, [1, 1, 2, 3, 10])
    # every full buffer goes to disk; the last run stays in memory
    np.testing.assert_allclose(spilled, [0, 0, 100e6, 200e6, 900e6])
    # more data per unit of memory: more runs and a larger spilled share
    assert np.all(np.diff(runs) >= 0) and np.all(np.diff(spilled / rows) >= 0)


def test_no_spill_at_the_articles_setup(model):
    # 20 GB executors, 200 partitions: the largest task (Q24: 15.8 M rows x 68 B = 1.08 GB) is a
    # third of its 2.95 GB, so no TPC-DS or synthetic sort spills
    from models.mhj.model import WORKLOADS

    out = model.run({"scheme": "smj", "workload": list(WORKLOADS)})
    assert np.all(out["spill_gb"] == 0.0)


def test_small_executors_make_smj_spill(model):
    from models.mhj import spark

    # syn_store, 5 GB executors: 702.8 MB per task against 15.84 M rows x 60 B = 950 MB -> 2 runs
    mem = np.asarray([20.0, 5.0, 2.0, 1.0])
    smj = model.run({"scheme": "smj", "workload": "syn_store", "executor_mem_gb": mem})
    shj = model.run({"scheme": "shj", "workload": "syn_store", "executor_mem_gb": mem})
    task_mem = (5e9 - 300 * 2**20) * 0.6 / 4
    expect_gb = 200 * (task_mem / 60.0) * (32 + spark.SPILL_RECORD_OVERHEAD_B) / 1e9
    assert smj["spill_gb"][0] == 0.0
    assert smj["spill_gb"][1] == pytest.approx(expect_gb, rel=1e-9)
    assert np.all(np.diff(smj["spill_gb"]) > 0)  # less memory, more spilled
    assert np.all(np.diff(smj["query_s"]) > 0)
    # one write + one read per spilled byte: the added time is the shuffle's storage round trip
    g = model.param_map()["shuffle_storage_gbps"].default
    added_s = smj["query_s"][1] - smj["query_s"][0]
    assert added_s == pytest.approx(expect_gb * (2.0 / 64 + 2.0 / g), rel=1e-6)
    # SHJ does not sort (at 1 GB its per-executor map of 1.15 GB no longer fits: infeasible)
    np.testing.assert_allclose(shj["query_s"][:3], shj["query_s"][0], rtol=1e-12)
    assert np.isnan(shj["query_s"][3])
    assert np.all(shj["spill_gb"] == 0.0)


def test_q50_build_side_is_one_month_of_store_returns():
    # Q50 filters the returns to one month (d2.d_year = 2001, d2.d_moy = 8); store_returns'
    # 287,999,764 SF1000 rows spread over five years are 4.8 M a month, not 288 M / 12
    from models.mhj.model import _W

    assert _W["build_mrows"]["q50"] == pytest.approx(287.999764 / 60, rel=0.01)
    assert _W["scan_mrows"]["q50"] == pytest.approx(_W["probe_mrows"]["q50"] + _W["build_mrows"]["q50"])
    # 4.8 M x 40 B = 192 MB: a shuffle join for the Spark schemes, not a broadcast
    shj = registry.get("mhj").point(scheme="shj", workload="q50")
    assert shj["shuffle_gb"] == pytest.approx((2880e6 + 4.8e6) * 40 / 1e9)
    # SHJ's map (rows + 32 B of slot each) plus one copy per executor of its 2 x 2 MB dimension maps
    assert shj["hashmap_gb"] == pytest.approx((4.8e6 * (40 + 32) + 16 * 2 * 2e6) / 1e9)


def test_space_sweeps_what_decides_smj_spill(tmp_path):
    from dse.registry import project_root
    from dse.space import load_space
    from dse.sweep.run import SweepOptions, run_sweep

    path = project_root() / "spaces" / "mhj.toml"
    s = load_space(path)
    assert "usd_per_query" in s.objectives
    knobs = {k.name: k for k in s.knobs}
    # Spark 3.4 defaults and the article's 20 GB executors are grid values
    assert {1.0, 20.0} <= set(knobs["executor_mem_gb"].values.tolist())
    assert 0.6 in knobs["spark_memory_fraction"].values.tolist()
    assert 200 in knobs["shuffle_partitions"].values.tolist()
    assert s.defaults.strategy == "sobol" and s.defaults.trials <= 300_000

    r = run_sweep(path, SweepOptions(trials=1024, out=tmp_path / "mhj", progress=False))
    import pyarrow.parquet as pq

    t = pq.read_table(r.path / "points.parquet").to_pydict()
    scheme = np.asarray([str(x) for x in t["scheme"]])
    spill = np.asarray(t["spill_gb"])
    mem = np.asarray(t["executor_mem_gb"])
    smj = scheme == "smj"
    assert np.all(spill[~smj] == 0.0)  # only SMJ sorts
    # the knobs reach both sides of the spill threshold, and smaller executors spill more often
    assert 0.0 < np.mean(spill[smj] > 0) < 1.0
    assert np.mean(spill[smj & (mem <= 2)] > 0) > np.mean(spill[smj & (mem >= 20)] > 0)
