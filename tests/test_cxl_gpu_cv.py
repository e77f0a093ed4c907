"""cxl-gpu: claim kinds, leave-one-anchor-out (cv.py), the ideal-is-a-bound invariant and
speculative reads on pointer-chasing kernels (issue "Predict beyond the fit")."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from dse import registry
from dse.claims import load_claims
from models.cxl_gpu import cv, paths, speculative
from models.cxl_gpu import workloads as wl
from models.cxl_gpu.fitted import CAL

CLAIMS = Path(cv.__file__).resolve().parent / "claims.yaml"


@pytest.fixture(scope="module")
def model():
    return registry.get("cxl-gpu")


def test_claim_kinds_name_every_fitted_constant():
    kinds = {c.id: c.kind for c in load_claims(CLAIMS).claims}
    anchors = {k for k, v in kinds.items() if v == "anchor"}
    assert anchors == set(cv.ANCHORS)
    assert {k for k, v in kinds.items() if v == "echo"} == {
        "ctrl_latency_abs", "ctrl_latency_vs_smt_tpp", "hit_cxl_rand", "compute_vs_load_mem_accesses"}
    for cid in ("cxl_slowdown_load", "cxlsr_vs_cxl_znand", "hit_cxl_seq", "hit_dyn_seq", "micro_abstract_vs_gds"):
        assert kinds[cid] == "prediction"


#: anchor -> (paper value, out-of-fit value the refit gives).  The numbers can fail: a
#: change to the model, the blocks or the fit moves them.
OUT_OF_FIT = {
    "cxl_slowdown_compute": (2.3, 2.210), "cxl_slowdown_store": (6.8, 4.766), "uvm_vs_gpudram": (52.7, 47.64),
    "naive_vs_gpudram": (6.6, 5.080), "sr_gain_1d_vector": (15.6, 39.83), "ds_vs_sr_store": (62.8, 100.5),
    "hit_cxl_around": (31.2, 27.50), "hit_naive_seq": (88.4, 64.94), "hit_naive_around": (56.0, 63.78),
    "hit_naive_rand": (32.1, 59.89), "hit_dyn_around": (57.4, 72.23), "hit_dyn_rand": (34.0, 29.14),
    "hit_rand_max_gran": (30.7, 29.81), "hit_sr_around": (75.8, 59.07),
}


def test_left_out_values_and_median():
    before = {s: dict(v) for s, v in CAL.items()}
    errs = []
    for aid, (paper, expect) in OUT_OF_FIT.items():
        v = cv.left_out(aid)
        assert v == pytest.approx(expect, rel=2e-3), aid
        errs.append(abs(v - paper) / paper * 100)
    assert {s: dict(v) for s, v in CAL.items()} == before  # every refit restored
    # the model's out-of-fit error: 22.6 % (target 20 %: the per-cell SR constants carry
    # what their own Fig 9d cell says and little else)
    assert float(np.median(errs)) == pytest.approx(22.6, abs=0.1)
    # the DRAM endpoint's compute class predicts within 5 %, UVM within 10 %
    assert errs[0] < 5 and errs[2] < 10


def test_left_out_rejects_a_prediction():
    with pytest.raises(KeyError):
        cv.left_out("cxl_slowdown_load")


def test_a_priori_gc_interval_is_one_block_per_plane():
    # 64 dies x 2 planes x 768 pages x 4 KiB x (1 - 86 % valid) = 0.051 GiB
    assert cv._gc_interval_prior_gib() == pytest.approx(0.0512, abs=1e-3)


# ----------------------------------------------------------------------------- the ideal
def test_no_design_beats_its_ideal_without_adding_request_slots(model):
    """slowdown_x >= 1 unless the design keeps more requests in flight than GPU-DRAM's
    32-entry local queue (mlp_vs_ideal_x > 1: more root ports or deeper queues add
    latency-bound bandwidth the ideal lacks).  The issue's 0.945 (ctrl_rt_ns=20, DRAM
    endpoint) is such a point: two root ports, 64 requests in flight against 32."""
    grid = list(itertools.product(("gpu_dram", "uvm", "cxl", "cxl_naive", "cxl_sr", "cxl_ds"), ("dram", "znand"),
                                  (20.0, 80.0), (1, 2, 4), (16, 32, 64), (1, 2), (8, 16, 64)))
    cols = {k: [] for k in ("design", "media", "ctrl_rt_ns", "root_ports", "queue_entries", "eps_per_port", "gpu_local_gib")}
    for row in grid:
        for k, v in zip(cols, row):
            cols[k].append(v)
    for w in ("vadd", "gemm", "bfs", "gnn"):
        out = model.run({**cols, "workload": w, "ep_capacity_gib": 256.0})
        s, mlp = out["slowdown_x"], out["mlp_vs_ideal_x"]
        ok = np.isfinite(s)
        assert np.all(s[ok & (mlp <= 1.0)] >= 1.0 - 1e-12), w
        assert np.all(mlp[ok & (s < 1.0)] > 1.0), w
    two = model.point(design="cxl", media="dram", ctrl_rt_ns=20.0, root_ports=2, workload="gnn")
    assert two["slowdown_x"] < 1.0 and two["mlp_vs_ideal_x"] == 2.0
    one = model.point(design="cxl", media="dram", ctrl_rt_ns=20.0, workload="gnn")
    assert one["slowdown_x"] > 1.0 and one["mlp_vs_ideal_x"] == 1.0


# ----------------------------------------------------------------------------- pointer chasing
def test_sr_lookahead_follows_the_chains_of_a_pointer_chase(model):
    """Digest M6: an SR's lead is its demand's wait behind the queue (L ~ W_q).  A
    data-dependent address is queued only when its chain's previous load returns, so the
    SR sees min(queue, chains) requests ahead; one chain leaves it no lead."""
    assert speculative.sr_lookahead_req(32, np.array([1, 8, 32, 64])).tolist() == [1.0, 8.0, 32.0, 32.0]
    chains = np.array([1, 2, 4, 8, 16, 32, 64])
    r = model.run({"design": "cxl_naive", "media": "znand", "workload": "bfs", "pointer_chains": chains})
    h = r["idram_hit_frac"]
    assert np.all(np.diff(h) >= 0) and h[-1] == h[-2]  # saturates once the chains fill the queue
    assert r["sr_lookahead_req"].tolist() == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 32.0]
    none = model.point(design="cxl", media="znand", workload="bfs")["idram_hit_frac"]
    # one chain: the SR leads its demand by one queue slot (1/32 of the full lead) and
    # hides almost none of the 3.4 us Z-NAND read: NAIVE's Rand hit falls back to ~CXL's 10 %
    assert h[0] == pytest.approx(none, abs=0.01) and h[-1] > none + 0.2
    # computed (Seq) addresses do not depend on the chains
    v = model.run({"design": "cxl_sr", "media": "znand", "workload": "vadd", "pointer_chains": chains})
    assert np.ptp(v["slowdown_x"]) == 0.0
    s = model.run({"design": "cxl_sr", "media": "znand", "workload": "path", "pointer_chains": chains})["slowdown_x"]
    assert np.all(np.diff(s) <= 0) and s[0] > 1.1 * s[-1]


def test_default_chains_fill_the_queue():
    # the claims run at the default: 64 chains >= the 32-entry queue, so the SR sees a full
    # queue on Rand as on Seq and no claim moves
    assert paths.GPU_MAX_OUTSTANDING >= 32
    assert registry.get("cxl-gpu").param_map()["pointer_chains"].default == paths.GPU_MAX_OUTSTANDING
    assert set(wl.NAMES) >= {"bfs", "path"}
