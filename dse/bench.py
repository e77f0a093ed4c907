"""`dse bench`: evaluations per second per model and block, sweep throughput, peak
memory, and CLI start-up time.  Numbers are measured, never asserted in tests.

Each case is run repeatedly for at least ``min_seconds`` and the best rate of the
repeats is reported (the least disturbed by other work on a shared machine)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dse import registry

# Targets from the issues (evaluations or points per second).
MODEL_TARGETS_PER_S: dict[str, float] = {"cxl-expander": 2e6, "dockerssd-llm": 1e4}
DEFAULT_MODEL_TARGET_PER_S = 1e6
BLOCK_TARGET_PER_S = 1e7
BLOCK_CASE_MODULES = (
    "models.blocks.basic_bench",
    "models.blocks.mem_bench",
    "models.blocks.llm.bench",
)
BLOCK_CASE_TARGETS = {"llm.train_eval": 1e5}
#: Block cases that are not closed forms, so the issue's 1e7/s target for closed-form
#: blocks does not apply; reported without a target, with what makes them iterative.
ITERATIVE_BLOCK_CASES = {
    "cache.che_lru_hit_rate": "iterative: Che's characteristic time per point, 256 rank groups",
    "flash.open_loop_latency": "queueing network: per-stage waits of host, channel, die and plane queues",
    "flash.saturation_iops": "iterative: closed-network fixed point per point",
}
BENCH_POINTS = 1 << 17


@dataclass
class BenchRow:
    kind: str
    name: str
    rate_per_s: float
    target_per_s: float | None
    detail: str = ""

    @property
    def meets(self) -> bool | None:
        return None if self.target_per_s is None else self.rate_per_s >= self.target_per_s


def time_case(fn: Callable[[], int], min_seconds: float = 0.5, max_repeats: int = 50) -> float:
    """Best evaluations/s over repeats lasting at least ``min_seconds`` in all."""
    fn()  # warm-up (imports, caches)
    best = 0.0
    start = time.perf_counter()
    for _ in range(max_repeats):
        t0 = time.perf_counter()
        n = fn()
        dt = time.perf_counter() - t0
        if dt > 0:
            best = max(best, n / dt)
        if time.perf_counter() - start >= min_seconds:
            break
    return best


def random_inputs(model: Any, n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """n random design points inside every parameter's bounds or choices."""
    rng = np.random.default_rng(seed)
    cols: dict[str, np.ndarray] = {}
    for p in model.params:
        if p.choices is not None:
            idx = rng.integers(0, len(p.choices), n)
            if p.categorical:
                cols[p.name] = idx.astype(np.int64)
            else:
                cols[p.name] = np.asarray(p.choices, dtype=np.float64)[idx]
        elif p.bounds is not None:
            lo, hi = p.bounds
            v = rng.uniform(lo, hi, n)
            cols[p.name] = np.round(v) if p.integer else v
    return cols


def model_case(name: str, n: int = BENCH_POINTS) -> Callable[[], int]:
    model = registry.get(name)
    cols = random_inputs(model, n)

    def run() -> int:
        model.run(cols, checked=True)
        return n

    return run


def model_rows(names: list[str], min_seconds: float) -> list[BenchRow]:
    rows = []
    for name in names:
        cls = registry.model_class(name)
        n = getattr(cls, "bench_points", BENCH_POINTS)
        rate = time_case(model_case(name, n), min_seconds)
        rows.append(
            BenchRow("model", name, rate, MODEL_TARGETS_PER_S.get(name, DEFAULT_MODEL_TARGET_PER_S), f"{n:,} random points per call")
        )
    return rows


def block_rows(min_seconds: float, only: str | None = None) -> list[BenchRow]:
    rows = []
    for modname in BLOCK_CASE_MODULES:
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError:
            continue
        for case, fn in mod.bench_cases():
            if only and not case.startswith(only):
                continue
            target = BLOCK_CASE_TARGETS.get(case)
            if target is None and not modname.endswith("llm.bench") and case not in ITERATIVE_BLOCK_CASES:
                target = BLOCK_TARGET_PER_S
            rows.append(BenchRow("block", case, time_case(fn, min_seconds), target, ITERATIVE_BLOCK_CASES.get(case, "")))
    return rows


def sweep_row(points: int = 1_000_000) -> BenchRow:
    """A grid sweep of ``points`` points of the pilot model, Pareto and Parquet write
    included, in a fresh process; reports wall time and peak resident memory."""
    with tempfile.TemporaryDirectory() as tmp:
        space = Path(tmp) / "bench_grid.toml"
        space.write_text(_bench_space(points), encoding="utf-8")
        out = Path(tmp) / "out"
        code = (
            "import resource, time, sys\n"
            "from pathlib import Path\n"
            "t=time.perf_counter()\n"
            "from dse.sweep.run import run_sweep, SweepOptions\n"
            f"r=run_sweep({str(space)!r}, SweepOptions(out=Path({str(out)!r}), progress=False))\n"
            "wall=time.perf_counter()-t\n"
            "rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "print(wall, rss, r.manifest['rows']['points'])\n"
        )
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
        if res.returncode != 0:
            raise RuntimeError(f"sweep benchmark failed: {res.stderr.strip().splitlines()[-1:]}")
        wall_s, rss_kib, n = res.stdout.split()
    wall = float(wall_s)
    peak_gib = int(rss_kib) / (1024**2)
    return BenchRow(
        "sweep",
        f"grid {int(n):,} points (cxl-expander) + Pareto + Parquet",
        int(n) / wall,
        None,
        f"wall {wall:.2f} s (target <= 10 s), peak RSS {peak_gib:.2f} GiB (target <= 2 GiB)",
    )


def _bench_space(points: int) -> str:
    # 5 knobs whose product is close to `points`
    side = max(2, round(points ** (1 / 3) / 2))
    return f"""model = "cxl-expander"
description = "benchmark grid"
[knobs]
lanes = [4, 8, 16]
ctrl_latency_ns = {{ range = [40, 250], steps = {side} }}
offered_load_frac = {{ range = [0.05, 0.95], steps = {side} }}
capacity_gib = {{ log_range = [64, 4096], steps = {max(2, -(-points // (3 * side * side * 4)))} }}
media = ["ddr4_3200", "ddr5_4800", "ddr5_5600", "lpddr5x_8533"]
[objectives]
loaded_read_latency_ns = "min"
bw_gbps = "max"
usd_per_gib = "min"
"""


def help_row() -> BenchRow:
    exe = Path(sys.executable).with_name("dse")
    cmd = [str(exe), "--help"] if exe.exists() else [sys.executable, "-m", "dse.cli", "--help"]
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, timeout=60, env={**os.environ, "COLUMNS": "100"})
        best = min(best, time.perf_counter() - t0)
    return BenchRow("cli", "dse --help", 1.0 / best, 2.0, f"{best * 1000:.0f} ms (target <= 500 ms)")
