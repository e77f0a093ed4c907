"""Benchmark cases of the memory/storage closed-form blocks (queueing, dram, flash).

``bench_cases() -> list[tuple[str, Callable[[], int]]]``: each callable does one unit of
vectorized work on 100,000 design points and returns the number of evaluations done."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

N = 100_000


def bench_cases() -> list[tuple[str, Callable[[], int]]]:
    from models.blocks import dram, flash, queueing

    rng = np.random.default_rng(0)
    lam = rng.uniform(0.0, 0.9, N)
    servers = rng.integers(1, 16, N)
    ddr5 = dram.timing("DDR5-4800")
    t = {k: v for k, v in ddr5.as_arrays().items()}
    k_dram = dram.constants()
    util = rng.uniform(0.0, 0.95, N)
    rf = rng.choice([0.5, 0.7, 1.0], N)
    stream = rng.random(N) < 0.5
    k_flash = flash.constants()
    esp = flash.config_arrays("espresso_tlc")
    iops = rng.uniform(1e4, 1e6, N)
    sizes = rng.choice([4096.0, 16384.0, 65536.0], N)

    def mm1() -> int:
        queueing.mm1_response(lam, 1.0)
        return N

    def mmc() -> int:
        queueing.mmc_wait(lam * 8, 1.0, 8)
        return N

    def mg1() -> int:
        queueing.mg1_wait(lam, 1.0, 0.5)
        return N

    def dram_loaded() -> int:
        # one standard and pattern, utilization and read fraction vary (a typical sweep)
        dram.evaluate_core(t, False, rf, util * 20.0, k_dram, want_idle=False)
        return N

    def flash_open() -> int:
        flash.open_loop_latency_us(esp, iops, 4096.0, rf, False, cal=k_flash)
        return N

    def flash_sat() -> int:
        flash.saturation_iops(esp, sizes, rf, False, cal=k_flash)
        return N

    return [("queueing.mm1_response", mm1), ("queueing.mmc_wait", mmc), ("queueing.mg1_wait", mg1),
            ("dram.loaded_latency", dram_loaded), ("flash.open_loop_latency", flash_open),
            ("flash.saturation_iops", flash_sat)]


if __name__ == "__main__":  # pragma: no cover
    import time

    for name, fn in bench_cases():
        fn()
        t0 = time.perf_counter()
        reps = 0
        n = 0
        while time.perf_counter() - t0 < 0.5:
            n += fn()
            reps += 1
        dt = time.perf_counter() - t0
        print(f"{name:<28} {n / dt:12.3e} evals/s")
