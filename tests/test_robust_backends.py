"""Robust sweeps (``--uncertainty N``) on the Ray backend: the same p_pareto and percentiles
as the local loop, on a one-node Ray cluster on loopback; Optuna refuses in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from dse.sweep.run import SweepOptions, run_sweep
from tests.ray_cluster import loopback_cluster

ROBUST_SPACE = """
model = "cxl-expander"
[knobs]
lanes = [4, 8, 16]
ctrl_latency_ns = { range = [40, 250], steps = 4 }
[fixed]
media = "hbm2e"
[objectives]
bw_gbps = "max"
usd_per_gib = "min"
loaded_read_latency_ns = "min"
[sweep]
strategy = "grid"
"""


@pytest.fixture(scope="module")
def one_node_cluster():
    """A Ray head on 127.0.0.1 with a temp dir of its own."""
    with loopback_cluster(nodes=1, cpus_per_node=2) as addr:
        yield addr


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_robust_sweep_on_ray_equals_local(one_node_cluster, tmp_path, space_file):
    space = space_file(ROBUST_SPACE)
    # small chunks: several Ray tasks, each saving its own per-draw front
    local = run_sweep(space, SweepOptions(out=tmp_path / "local", uncertainty=16, chunk_points=3, progress=False))
    ray = run_sweep(space, SweepOptions(out=tmp_path / "ray", uncertainty=16, chunk_points=3, progress=False,
                                        backend="ray", address=one_node_cluster))
    a = pl.read_parquet(Path(local.path) / "points.parquet").sort("point_id")
    b = pl.read_parquet(Path(ray.path) / "points.parquet").sort("point_id")
    assert a.height == b.height == 12
    cols = ["p_pareto", "feasible_share"] + [f"{k}_{q}" for k in ("bw_gbps", "usd_per_gib", "loaded_read_latency_ns")
                                             for q in ("p5", "p50", "p95")]
    for c in cols:
        np.testing.assert_array_equal(a[c].to_numpy(), b[c].to_numpy(), err_msg=c)
    p = b["p_pareto"].to_numpy()
    assert p.min() >= 0 and p.max() <= 1 and (p == 1.0).any() and (p < 1.0).any()


def test_robust_sweep_refuses_optuna_in_one_line(cli, space_file, tmp_path):
    from tests.test_reliability import assert_refused

    assert_refused(cli, tmp_path, "sweep", space_file(ROBUST_SPACE), "--strategy", "optuna", "--uncertainty", "8",
                   "--out", tmp_path / "o", "-q", contains="p50 over draws")


# ----------------------------------------------------------------------------- comparison
def test_robust_comparison_front(tmp_path):
    """spaces/compare_memory_expansion_robust.toml: per-arch percentiles, the joint p_pareto
    in [0, 1], and the dashboard page shows the robust joint front."""
    import json

    from dse.dashboard.build import build_site
    from dse.registry import project_root

    space = project_root() / "spaces" / "compare_memory_expansion_robust.toml"
    r = run_sweep(space, SweepOptions(out=tmp_path / "cmp", progress=False))
    df = pl.read_parquet(r.path / "points.parquet")
    p = df["p_pareto"].to_numpy()
    assert p.min() >= 0.0 and p.max() <= 1.0
    draws = 16
    assert np.allclose(p * draws, np.round(p * draws))  # a share of the 16 draws
    # every workload point has a design on its joint front in some draw
    assert df.group_by("footprint_gib").agg(pl.col("p_pareto").max())["p_pareto"].min() > 0
    for k in ("usd_per_work", "access_latency_ns", "power_w"):
        ok = df.filter(pl.col(f"{k}_p50").is_not_null())
        assert (ok[f"{k}_p5"] <= ok[f"{k}_p50"]).all() and (ok[f"{k}_p50"] <= ok[f"{k}_p95"]).all()
    # an architecture's own p_pareto is its sub-sweep's
    sub = pl.read_parquet(r.path / "arch" / "cxl_expander" / "points.parquet")
    np.testing.assert_array_equal(df.filter(pl.col("arch") == "cxl_expander")["p_pareto_arch"].to_numpy(),
                                  sub["p_pareto"].to_numpy())
    m = json.loads((r.path / "manifest.json").read_text())
    assert m["uncertainty"]["draws"] == draws
    assert m["uncertainty"]["robust_front"] == int((p >= 0.5).sum())
    pages = build_site([r.path], tmp_path / "site", calibration=False, progress=False)
    page = next(x for x in pages if x.name.startswith("study-compare_memory_expansion_robust"))
    assert "Robust joint front" in page.read_text()


def test_comparison_takes_uncertainty_from_the_command_line(cli, tmp_path):
    from dse.registry import project_root

    space = project_root() / "spaces" / "compare_memory_expansion.toml"
    code, _, err = cli("sweep", space, "--uncertainty", "4", "--out", tmp_path / "c", "-q")
    assert code == 0, err
    df = pl.read_parquet(tmp_path / "c" / "points.parquet")
    assert {"p_pareto", "p_pareto_arch", "usd_per_work_p95"} <= set(df.columns)
    assert set(np.unique(df["p_pareto"].to_numpy() * 4)) <= {0.0, 1.0, 2.0, 3.0, 4.0}
