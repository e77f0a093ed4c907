"""ginkgo: the invariants of the DRAM-cache / metadata mechanisms."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.ginkgo import calibration as cal


@pytest.fixture(scope="module")
def m():
    return registry.get("ginkgo")


def test_miss_ratio_ordering(m):
    for w in ("btree", "pr"):
        miss = {s: m.point(scheme=s, workload=w)["miss_frac"] for s in ("ideal", "unison", "ginkgo", "alloy")}
        assert miss["ideal"] <= miss["unison"] <= miss["ginkgo"] < miss["alloy"]


def test_more_dram_never_more_misses(m):
    ratio = np.array([0.0625, 0.125, 0.25, 0.5, 1.0])
    for s in ("alloy", "unison", "ginkgo"):
        miss = m.run({"scheme": s, "workload": "btree", "dram_to_cxl_ratio": ratio})["miss_frac"]
        assert np.all(np.diff(miss) <= 1e-12)
        assert miss[-1] < 1e-6 or s == "alloy"


def test_more_sram_never_more_double_reads(m):
    kib = np.array([4.0, 16.0, 64.0, 256.0, 1024.0])
    for s in ("unison", "ginkgo"):
        for w in ("btree", "pr"):
            dr = m.run({"scheme": s, "workload": w, "mc_sram_kib": kib})["double_read_frac"]
            assert np.all(np.diff(dr) <= 1e-12)
    assert np.all(m.run({"scheme": "alloy", "mc_sram_kib": kib})["double_read_frac"] == 0)


def test_amat_grows_with_cxl_latency_and_index_cost(m):
    lat = np.array([100.0, 200.0, 400.0])
    assert np.all(np.diff(m.run({"scheme": "ginkgo", "cxl_latency_ns": lat})["amat_ns"]) > 0)
    base = m.point(scheme="ginkgo")["amat_ns"]
    assert m.point(scheme="ginkgo", index_compute_ns=5)["amat_ns"] == pytest.approx(base + 5)
    assert m.point(scheme="alloy", index_compute_ns=5)["amat_ns"] == pytest.approx(m.point(scheme="alloy")["amat_ns"])


def test_metadata_sizes(m):
    assert m.point(scheme="unison", workload="btree")["metadata_b"] == pytest.approx(512 * 2**20)
    assert m.point(scheme="unison", workload="pr")["metadata_b"] == pytest.approx(256 * 2**20)
    assert m.point(scheme="ginkgo", workload="btree")["metadata_b"] == pytest.approx(80 * 1024)
    assert m.point(scheme="alloy")["metadata_b"] == 0
    # Ginkgo's metadata fits the 64 kB SRAM's order of magnitude; Unison's is thousands of times larger
    assert m.point(scheme="unison")["metadata_over_sram_x"] > 1000 * m.point(scheme="ginkgo")["metadata_over_sram_x"]


def test_cost_grows_with_capacity_and_dram_share(m):
    r = m.run({"scheme": "ginkgo", "dram_to_cxl_ratio": np.array([0.125, 0.25, 0.5])})
    assert np.all(np.diff(r["memory_usd"]) > 0)
    s = m.run({"scheme": "ginkgo", "capacity_scale": np.array([0.5, 1.0, 2.0])})
    assert np.all(np.diff(s["memory_usd"]) > 0)


def test_fitted_constants_reproduce():
    refit = cal.fit()
    shipped = cal.fitted()
    for w, d in refit.items():
        for k, v in d.items():
            assert v == pytest.approx(shipped[w][k], rel=1e-3, abs=1e-6), (w, k)


def test_fitted_table_holds_workloads_and_globals_only():
    """fitted.toml's [uncertainty] table (fit sds) is not read as a workload's constants."""
    from models.ginkgo import calibration as gcal
    from models.ginkgo.model import WORKLOADS

    table = gcal.fitted()
    assert set(table) == set(WORKLOADS) | {"global"}
    assert all("." not in k for d in table.values() for k in d)
