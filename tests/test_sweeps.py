"""Sweeps: grid, quasi-random, Optuna, results folders, resume after a crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from dse.errors import DseError
from dse.sweep.run import SweepOptions, run_sweep


def _dominates(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(a <= b) and np.any(a < b))


def _min_matrix(df: pl.DataFrame, objectives: dict[str, str]) -> np.ndarray:
    return np.column_stack([(-1 if d == "max" else 1) * df[k].to_numpy() for k, d in objectives.items()])


def test_grid_sweep_writes_points_front_and_manifest(space_file, tmp_path):
    out = tmp_path / "grid"
    res = run_sweep(space_file(), SweepOptions(out=out, progress=False, chunk_points=200))
    pts = pl.read_parquet(out / "points.parquet")
    front = pl.read_parquet(out / "pareto.parquet")
    m = json.loads((out / "manifest.json").read_text())
    assert pts.height == 3 * 3 * 8 * 5 * 5 == m["rows"]["points"]
    assert sorted(pts["point_id"].to_list()) == list(range(pts.height))  # every point exactly once
    assert m["rows"]["feasible"] == int(pts["feasible"].sum())
    assert pts.filter(~pl.col("ok_slo"))["loaded_read_latency_ns"].min() > 600
    # Pareto: no front point dominates another; every feasible point is weakly dominated by the front
    objs = m["objectives"]
    fm = _min_matrix(front, objs)
    for i in range(len(fm)):
        assert not any(_dominates(fm[j], fm[i]) for j in range(len(fm)) if j != i)
    feas = _min_matrix(pts.filter(pl.col("feasible")), objs)
    covered = [(fm <= row + 1e-12).all(axis=1).any() for row in feas[:: max(1, len(feas) // 300)]]
    assert all(covered)
    assert front["feasible"].all()
    for key in ("space", "model", "calibration", "git", "seed", "strategy", "timings_s", "rows", "hypervolume"):
        assert key in m
    assert m["space"]["sha256"] and m["model"]["name"] == "cxl-expander"
    assert 0 < m["hypervolume"] <= 1.1 ** 3
    # only the folder's lock file (kept: removing it would race a waiting writer)
    assert [p.name for p in out.glob(".*")] == [".lock"], "temporary files left behind"
    assert res.path == out


def test_rerun_without_resume_refuses_and_keeps_results(space_file, tmp_path, cli):
    out = tmp_path / "g"
    space = space_file()
    run_sweep(space, SweepOptions(out=out, progress=False))
    before = (out / "points.parquet").stat().st_mtime_ns
    code, _, err = cli("sweep", space, "--out", out, "-q")
    assert code == 2 and "already exists" in err and "--resume" in err
    assert (out / "points.parquet").stat().st_mtime_ns == before


def test_grid_resume_skips_saved_chunks(space_file, tmp_path, monkeypatch):
    """A grid sweep that dies after some chunks continues from the saved parts."""
    from dse.sweep import run as run_mod

    out = tmp_path / "r"
    space = space_file()
    calls = {"n": 0}
    real = run_mod.evaluate_chunk

    def failing(*a, **k):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(run_mod, "evaluate_chunk", failing)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(space, SweepOptions(out=out, progress=False, chunk_points=200))
    assert (out / ".incomplete").exists() and len(list((out / ".parts").glob("part-*"))) == 3
    monkeypatch.setattr(run_mod, "evaluate_chunk", real)
    res = run_sweep(space, SweepOptions(out=out, progress=False, chunk_points=200, resume=True))
    assert res.manifest["run"]["chunks_resumed"] == 3
    pts = pl.read_parquet(out / "points.parquet")
    assert sorted(pts["point_id"].to_list()) == list(range(1800))
    assert not (out / ".incomplete").exists()


@pytest.mark.parametrize("strategy", ["sobol", "random"])
def test_sampling_is_seeded_and_in_bounds(space_file, tmp_path, strategy):
    space = space_file()
    a = run_sweep(space, SweepOptions(strategy=strategy, trials=300, out=tmp_path / "a", progress=False, chunk_points=128))
    b = run_sweep(space, SweepOptions(strategy=strategy, trials=300, out=tmp_path / "b", progress=False))
    pa_, pb_ = (pl.read_parquet(r.path / "points.parquet") for r in (a, b))
    assert pa_.height == pb_.height == 300
    # the same points whatever the chunking
    assert pa_.select("ctrl_latency_ns", "capacity_gib").equals(pb_.select("ctrl_latency_ns", "capacity_gib"))
    assert pa_["ctrl_latency_ns"].min() >= 40 and pa_["ctrl_latency_ns"].max() <= 250
    assert pa_["ctrl_latency_ns"].n_unique() > 250  # continuous, not the 8-step grid
    assert set(pa_["lanes"].unique().to_list()) == {4, 8, 16}
    c = run_sweep(space, SweepOptions(strategy=strategy, trials=300, seed=99, out=tmp_path / "c", progress=False))
    assert not pl.read_parquet(c.path / "points.parquet")["ctrl_latency_ns"].equals(pa_["ctrl_latency_ns"])


@pytest.mark.parametrize("sampler", ["nsga2", "tpe"])
def test_optuna_multiobjective(space_file, tmp_path, sampler):
    res = run_sweep(
        space_file(), SweepOptions(strategy="optuna", sampler=sampler, trials=48, batch=16, out=tmp_path / sampler, progress=False)
    )
    pts = pl.read_parquet(res.path / "points.parquet")
    assert pts.height == 48
    assert (res.path / "study.journal").exists()
    assert res.manifest["rows"]["pareto"] >= 1
    assert pts["point_id"].n_unique() == 48


def test_optuna_gp_sampler_or_clear_error(space_file, tmp_path):
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(DseError, match="PyTorch"):
            run_sweep(space_file(), SweepOptions(strategy="optuna", sampler="gp", trials=8, out=tmp_path / "gp", progress=False))
        assert not (tmp_path / "gp").exists()
        return
    res = run_sweep(space_file(), SweepOptions(strategy="optuna", sampler="gp", trials=14, batch=7, out=tmp_path / "gp", progress=False))
    assert pl.read_parquet(res.path / "points.parquet").height == 14


def test_optuna_sqlite_storage(space_file, tmp_path):
    url = f"sqlite:///{tmp_path / 'study.db'}"
    res = run_sweep(space_file(), SweepOptions(strategy="optuna", trials=20, batch=10, storage=url, out=tmp_path / "s", progress=False))
    assert res.manifest["run"]["storage"] == "rdb"
    assert (tmp_path / "study.db").exists()


def test_optuna_resume_after_kill_9(space_file, tmp_path):
    """kill -9 mid-study, then --resume: completed trials kept, none repeated."""
    import optuna

    space = space_file()
    out = tmp_path / "opt"
    cmd = [sys.executable, "-m", "dse.cli", "sweep", str(space), "--strategy", "optuna", "--trials", "600",
           "--batch", "4", "--out", str(out), "-q"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    journal = out / "study.journal"
    completed_before: dict[int, dict] = {}
    deadline = time.time() + 120
    try:
        while time.time() < deadline:
            time.sleep(0.3)
            if proc.poll() is not None:
                pytest.fail(f"the study finished before it could be killed: {proc.stderr.read().decode()[-500:]}")
            if not journal.exists():
                continue
            storage = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(str(journal)))
            studies = optuna.get_all_study_summaries(storage)
            if not studies:
                continue
            st = optuna.load_study(study_name=studies[0].study_name, storage=storage)
            done = st.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
            if len(done) >= 40:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                completed_before = {t.number: t.params for t in done}
                break
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert completed_before, "did not get to kill the study"
    assert not (out / "manifest.json").exists() and (out / ".incomplete").exists()
    res = run_sweep(space, SweepOptions(strategy="optuna", trials=600, batch=4, out=out, resume=True, progress=False))
    pts = pl.read_parquet(out / "points.parquet")
    ids = pts["point_id"].to_list()
    assert len(ids) == len(set(ids))  # nothing repeated
    assert set(completed_before) <= set(ids)  # nothing completed was lost
    assert res.manifest["run"]["trials_before_resume"] >= len(completed_before)
    assert len(ids) >= 600
    by_id = {r["point_id"]: r for r in pts.iter_rows(named=True)}
    for number, params in list(completed_before.items())[:20]:
        assert by_id[number]["ctrl_latency_ns"] == pytest.approx(params["ctrl_latency_ns"])


def test_bad_storage_url_exits_2_and_writes_nothing(space_file, tmp_path, cli):
    out = tmp_path / "o"
    code, _, err = cli("sweep", space_file(), "--strategy", "optuna", "--storage", "postgresql://u@127.0.0.1:1/none", "--out", out, "-q")
    assert code == 2 and "--storage" in err and "cannot be used" in err
    assert not out.exists()
    code, _, err = cli("sweep", space_file(), "--strategy", "optuna", "--storage", "redis://x", "--out", out, "-q")
    assert code == 2 and "allowed forms" in err
    assert not out.exists()


def test_unreachable_ray_address_exits_2_and_writes_nothing(space_file, tmp_path, cli):
    out = tmp_path / "o"
    code, _, err = cli("sweep", space_file(), "--backend", "ray", "--address", "127.0.0.1:1", "--out", out, "-q")
    assert code == 2 and "cannot reach Ray at 127.0.0.1:1" in err
    assert not out.exists()
    code, _, err = cli("sweep", space_file(), "--address", "127.0.0.1:1", "--out", out, "-q")
    assert code == 2 and "--backend ray" in err


def test_parquet_files_describe_themselves(space_file, tmp_path):
    """Objectives, units, model and code hashes, fixed values and calibration ride in the
    Parquet key-value metadata, for readers that never open manifest.json."""
    import json

    import pyarrow.parquet as pq

    from dse.sweep.run import PARQUET_META_KEY, SweepOptions, run_sweep
    from tests.conftest import SMALL_SPACE

    text = SMALL_SPACE.replace("[objectives]", '[fixed]\nlink_gen = "pcie6"\nflit_mode = "256B"\n[objectives]')
    res = run_sweep(space_file(text), SweepOptions(out=tmp_path / "o", progress=False))
    manifest = json.loads((res.path / "manifest.json").read_text())
    for name in ("points.parquet", "pareto.parquet"):
        doc = json.loads(pq.read_schema(res.path / name).metadata[PARQUET_META_KEY])
        assert doc["objectives"] == manifest["objectives"]
        assert doc["fixed"] == {"link_gen": "pcie6", "flit_mode": "256B"}  # labels, not codes
        assert doc["units"]["loaded_read_latency_ns"] == "ns" and doc["units"]["usd_per_gib"] == "usd_per_gib"
        assert doc["model"]["code"] == manifest["model"]["code"]
        assert doc["calibration"]["files"] == manifest["calibration"]["files"]
