"""Shared fixtures: writing space files, running the CLI in-process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")

SMALL_SPACE = """
model = "cxl-expander"
description = "test space"
[knobs]
lanes = [4, 8, 16]
media = ["ddr4_3200", "ddr5_4800", "lpddr5x_8533"]
ctrl_latency_ns = { range = [40, 250], steps = 8 }
offered_load_frac = { range = [0.1, 0.9], steps = 5 }
capacity_gib = { log_range = [64, 1024], steps = 5 }
[objectives]
loaded_read_latency_ns = "min"
bw_gbps = "max"
usd_per_gib = "min"
[constraints]
slo = "loaded_read_latency_ns <= 600"
[sweep]
trials = 64
seed = 3
"""


@pytest.fixture
def space_file(tmp_path: Path):
    """Write a space file (default: a small valid cxl-expander space) and return its path."""

    def write(text: str = SMALL_SPACE, name: str = "small.toml") -> Path:
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        return p

    return write


@pytest.fixture
def cli(capsys):
    """Run `dse ARGS...` in-process; returns (exit code, stdout, stderr)."""
    from dse.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


@pytest.fixture(scope="session")
def small_study(tmp_path_factory) -> Path:
    """A finished grid sweep of :data:`SMALL_SPACE` (read-only: copy it to damage it)."""
    from dse.sweep.run import SweepOptions, run_sweep

    d = tmp_path_factory.mktemp("small-study")
    (d / "s.toml").write_text(SMALL_SPACE)
    return run_sweep(d / "s.toml", SweepOptions(out=d / "res", progress=False)).path


@pytest.fixture
def res(small_study, tmp_path) -> Path:
    """A private copy of :func:`small_study`, to damage or to point ``--out`` at."""
    import shutil

    return Path(shutil.copytree(small_study, tmp_path / "res"))

