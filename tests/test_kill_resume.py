"""kill -9 at random moments, then --resume: every point exactly once (grid and sobol,
local; the Optuna and Ray cases are in test_optuna_recovery.py / test_ray_backend.py)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import SMALL_SPACE

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("kill")]

REPETITIONS = int(os.environ.get("DSE_KILL_REPETITIONS", "20"))
POINTS = 3000  # small chunks: a kill lands between, during and after chunk writes
CHUNK = 150

RUNNER = """
import sys
from dse.sweep.run import SweepOptions, run_sweep
strategy, out = sys.argv[1], sys.argv[2]
run_sweep("small.toml", SweepOptions(strategy=strategy, trials={points}, out=out, progress=False,
                                     chunk_points={chunk}, resume=len(sys.argv) > 3))
print("done", flush=True)
"""


def _reference(tmp: Path, strategy: str):
    import polars as pl

    from dse.sweep.run import SweepOptions, run_sweep

    space = tmp / "small.toml"
    res = run_sweep(space, SweepOptions(strategy=strategy, trials=POINTS, out=tmp / f"ref-{strategy}", progress=False, chunk_points=1000))
    return pl.read_parquet(res.path / "points.parquet").sort("point_id")


def test_kill_9_then_resume_gives_every_point_once(tmp_path):
    import polars as pl

    from dse.registry import project_root

    text = SMALL_SPACE.replace("capacity_gib = { log_range = [64, 1024], steps = 5 }", "capacity_gib = { log_range = [64, 1024], steps = 6 }")
    (tmp_path / "small.toml").write_text(text)  # 3 x 3 x 8 x 5 x 6 = 2160 grid points
    (tmp_path / "run.py").write_text(RUNNER.format(points=POINTS, chunk=CHUNK))
    refs = {s: _reference(tmp_path, s) for s in ("grid", "sobol")}
    rng = random.Random(20261127)
    env = {**os.environ, "PYTHONPATH": str(project_root())}
    for rep in range(REPETITIONS):
        strategy = ("grid", "sobol")[rep % 2]
        out = f"out-{rep}"  # relative, as a user types it
        proc = subprocess.Popen([sys.executable, "run.py", strategy, out], cwd=tmp_path, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 2.0))  # from start-up to after the end
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done = subprocess.run([sys.executable, "run.py", strategy, out, "resume"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (rep, done.stderr[-2000:])
        got = pl.read_parquet(tmp_path / out / "points.parquet").sort("point_id")
        ref = refs[strategy]
        assert got["point_id"].to_list() == ref["point_id"].to_list(), rep
        for col in ("usd_per_gib", "bw_gbps"):
            np.testing.assert_array_equal(got[col].to_numpy(), ref[col].to_numpy())
        assert not (tmp_path / out / ".incomplete").exists() and not (tmp_path / out / ".parts").exists()
        assert not list((tmp_path / out).glob(".*.tmp")), "a dead run's temp file was left behind"
