"""Benchmark cases for the link, cache, cost and energy blocks.

``bench_cases()`` returns ``(name, fn)`` pairs; each ``fn()`` does one unit of vectorized
work on inputs built beforehand and returns the number of design points it evaluated, so
the caller (``dse bench``) can time it and report evaluations per second.  The
closed-form blocks target at least 1e7 evaluations/s on one core; Che's LRU approximation
solves a root per point and is reported separately (``cache.che_lru_hit_rate``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

N_POINTS = 1_000_000
N_CHE_POINTS = 2_000


Case = tuple[str, Callable[[], int]]


def bench_inputs(n: int = N_POINTS, seed: int = 0) -> dict[str, np.ndarray]:
    """The random inputs of every case, drawn in one fixed order from one generator."""
    from models.blocks import cost  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    v: dict[str, np.ndarray] = {}
    v["gen"] = rng.integers(3, 7, n).astype(np.float64)  # PCIe 3.0 .. 6.0 as numbers
    v["gen5"] = np.full(n, 5.0)
    v["lanes"] = rng.choice(np.array([1.0, 2.0, 4.0, 8.0, 16.0]), n)
    v["read_frac"] = rng.random(n)
    v["flit"] = rng.integers(0, 3, n)
    v["flit_ok"] = np.where(v["gen"] >= 6, np.maximum(v["flit"], 1), v["flit"])
    v["n_sw"] = rng.integers(0, 3, n).astype(np.float64)
    v["io_b"] = rng.choice(np.array([512.0, 4096.0, 16384.0, 131072.0]), n)
    v["cache_obj"] = rng.random(n) * 1e6 + 1.0
    v["alpha"] = rng.random(n) * 1.4
    v["stride"] = rng.choice(np.array([8.0, 16.0, 64.0, 256.0, 4096.0]), n)
    v["degree"] = rng.integers(0, 8, n).astype(np.float64)
    v["capex"] = rng.random(n) * 1e5
    v["power"] = rng.random(n) * 2e3
    v["years"] = rng.integers(3, 7, n).astype(np.float64)
    v["size_gb"] = rng.random(n) * 1e4
    v["reads"] = rng.random(n) * 3
    v["tiers"] = rng.integers(0, len(cost.storage_tier_names()), n)
    v["vdd"] = 1.0 + 0.3 * rng.random(n)
    v["t_op"] = 20.0 + 400.0 * rng.random(n)
    v["c_che"] = rng.random(N_CHE_POINTS) * 1e5 + 1.0
    v["a_che"] = rng.random(N_CHE_POINTS) * 1.4
    return v


def link_cases(v: dict[str, np.ndarray], n: int) -> list[Case]:
    """The link block: raw and CXL.mem bandwidth, round trips, NVMe and RDMA overheads."""
    from models.blocks import link  # noqa: PLC0415

    def raw_bw() -> int:
        link.raw_bw_gbps(v["gen"], v["lanes"])
        return n

    def cxl_eff() -> int:
        link.cxl_mem_efficiency(v["flit"], v["read_frac"])
        return n

    def cxl_bw() -> int:
        link.cxl_mem_bw_gbps(v["gen"], v["lanes"], v["flit_ok"], v["read_frac"])
        return n

    def cxl_rt() -> int:
        link.cxl_round_trip_ns(v["gen5"], v["lanes"], None, n_switches=v["n_sw"], n_retimers=v["n_sw"])
        return n

    def nvme() -> int:
        link.nvme_command_overhead_ns(v["io_b"], v["gen"], v["lanes"])
        return n

    def rdma() -> int:
        link.rdma_round_trip_ns(v["io_b"], "read", 100.0, v["n_sw"])
        return n

    return [
        ("link.raw_bw_gbps", raw_bw),
        ("link.cxl_mem_efficiency", cxl_eff),
        ("link.cxl_mem_bw_gbps", cxl_bw),
        ("link.cxl_round_trip_ns", cxl_rt),
        ("link.nvme_command_overhead_ns", nvme),
        ("link.rdma_round_trip_ns", rdma),
    ]


def cache_cases(v: dict[str, np.ndarray], n: int) -> list[Case]:
    """The cache block: Zipf and working-set hit rates, stream prefetch, Che's LRU root."""
    from models.blocks import cache  # noqa: PLC0415

    def zipf() -> int:
        cache.zipf_hit_rate(v["cache_obj"], 1e9, v["alpha"])
        return n

    def zipf_fixed() -> int:
        cache.working_set_hit_rate(v["cache_obj"] * 64.0, 64e9, 0.9)
        return n

    def stream() -> int:
        cache.stream_hit_rate(v["stride"], 8.0, 64.0, v["degree"])
        return n

    def che() -> int:
        cache.che_lru_hit_rate(v["c_che"], 1e6, v["a_che"])
        return N_CHE_POINTS

    return [
        ("cache.zipf_hit_rate (alpha per point)", zipf),
        ("cache.working_set_hit_rate (one workload)", zipf_fixed),
        ("cache.stream_hit_rate", stream),
        ("cache.che_lru_hit_rate", che),
    ]


def cost_energy_cases(v: dict[str, np.ndarray], n: int) -> list[Case]:
    """The cost and energy blocks: TCO, object-storage bills, DRAM and flash operation energy."""
    from models.blocks import cost, energy  # noqa: PLC0415

    def tco() -> int:
        cost.tco_usd(v["capex"], v["power"], v["years"], rate=0.05)
        return n

    def s3() -> int:
        cost.object_storage_cost_usd(v["size_gb"], 12.0, v["reads"], v["tiers"])
        return n

    def dram_e() -> int:
        energy.dram_op_energy(v["vdd"], 57.0, 37.0, 52.0, 168.0, 150.0, 250.0, 0.63, 52.0, 22.0, 560.0, 12480.0, 4.0, 8.0)
        return n

    def flash_e() -> int:
        energy.flash_page_energy_uj("read", v["t_op"], 16384.0, 1200.0)
        return n

    return [
        ("cost.tco_usd", tco),
        ("cost.object_storage_cost_usd", s3),
        ("energy.dram_op_energy", dram_e),
        ("energy.flash_page_energy_uj", flash_e),
    ]


def bench_cases(n: int = N_POINTS, seed: int = 0) -> list[Case]:
    v = bench_inputs(n, seed)
    return [*link_cases(v, n), *cache_cases(v, n), *cost_energy_cases(v, n)]


def run(repeat: int = 3) -> list[tuple[str, float]]:
    """Time every case (best of ``repeat``); returns (name, evaluations per second)."""
    out = []
    for name, fn in bench_cases():
        fn()  # warm up
        best = float("inf")
        count = 0
        for _ in range(repeat):
            t0 = time.perf_counter()
            count = fn()
            best = min(best, time.perf_counter() - t0)
        out.append((name, count / best))
    return out


if __name__ == "__main__":  # pragma: no cover
    for name, rate in run():
        print(f"{name:34s} {rate:14,.0f} evals/s")
