"""espresso's mechanisms beyond the fit (models/espresso/mechanisms.py), each against its source."""

from __future__ import annotations

import numpy as np
import pytest

from models.blocks import link
from models.espresso import mechanisms as mech
from models.espresso import scenarios as sc
from models.espresso.model import PROC_W, REF_CORES


def test_usl_is_linear_by_default_and_follows_gunther() -> None:
    n = np.arange(1.0, 17.0)
    assert np.array_equal(mech.usl_cores(n, 0.0, 0.0), n)
    # Amdahl (kappa 0): C(n) -> 1 / sigma
    assert mech.usl_cores(1e9, 0.1, 0.0) == pytest.approx(10.0, rel=1e-6)
    # Gunther: with kappa > 0 the peak is at n* = sqrt((1 - sigma) / kappa)
    sigma, kappa = 0.05, 0.01
    c = mech.usl_cores(n, sigma, kappa)
    assert n[np.argmax(c)] == pytest.approx(np.sqrt((1 - sigma) / kappa), abs=0.5)


def test_core_contention_slows_a_processor_bound_ssd() -> None:
    base = sc.run("shrunk", sc.UTIL_256K)
    usl = sc.run("shrunk", sc.UTIL_256K, core_contention_frac=0.1)
    assert usl["core_scaling_frac"][0] == pytest.approx(1 / 1.2)
    assert usl["iops"][0] == pytest.approx(base["iops"][0] / 1.2, rel=1e-9)


def test_idle_lenders_leave_results_unchanged_and_busy_ones_lend_less() -> None:
    base = sc.run("espresso", sc.MICROBENCH_READS)
    idle = sc.run("espresso", sc.MICROBENCH_READS, lender_qd=0.0)
    assert np.array_equal(base["iops"], idle["iops"]) and not np.any(base["lender_slowdown_frac"])
    gains = [sc.run("espresso", sc.MICROBENCH_READS, lender_qd=q)["iops"].mean() for q in (1, 16, 32, 64)]
    assert all(a >= b for a, b in zip(gains, gains[1:])) and gains[-1] < gains[0]
    # Little: the lender's utilization is QD / its latency x its cycles per request
    x, u = mech.lender_own_load(16.0, 200.0, 5.0, 3e9)
    assert x == pytest.approx(16 / 200e-6) and u == pytest.approx(16 / 200e-6 * 5e3 / 3e9)


def test_lender_slowdown_is_cobhams_high_priority_wait() -> None:
    # equal services: W_1 = W_fcfs(rho) (1 - rho) / (1 - rho_1) (Cobham 1954), here with Sakasegawa's P_wait
    c, s, l_own, u1, u = 3.0, 10.0, 100.0, 0.2, 0.7
    e = np.sqrt(2 * (c + 1)) - 1
    w1 = u**e * s / (c * (1 - u)) * (1 - u) / (1 - u1)
    w0 = u1**e * s / (c * (1 - u1))
    want = 1 - (l_own + w0) / (l_own + w1)
    assert mech.lender_slowdown_frac(l_own, s, s, c, u1, u) == pytest.approx(want)


def test_queue_depth_limited_trace_gains_nothing_from_harvesting() -> None:
    trace = {"workload": "ali0", "trace_qd": 1.0}
    sh, esp = sc.run("shrunk", trace), sc.run("espresso", trace)
    assert esp["iops"][0] == pytest.approx(sh["iops"][0], rel=1e-9)
    assert esp["harvest_gain_cap_frac"][0] == pytest.approx(0.0, abs=1e-12)
    mb = sc.run("shrunk", sc.UTIL_256K)  # processor bound at QD64: harvesting could add
    assert mb["harvest_gain_cap_frac"][0] > 0.3


@pytest.mark.parametrize("design", ["conv", "oc", "shrunk", "vh", "proch", "espresso"])
def test_latency_breakdown_sums_to_the_qd1_latency(design: str) -> None:
    out = sc.run(design, sc.LATENCY_4K)
    total = sum(out[k] for k in mech.BREAKDOWN)
    assert total[0] == pytest.approx(out["qd1_latency_us"][0], rel=1e-12)
    assert out["lat_flash_us"][0] > 0 and out["lat_proc_us"][0] > 0


def test_coherence_energy_and_idle_lenders() -> None:
    sh = sc.run("shrunk", sc.UTIL_256K)
    esp = sc.run("espresso", sc.UTIL_256K)
    assert sh["coherence_energy_per_io_uj"][0] == 0.0
    # redirected share x mapping lines (64 units / 16 per line) x 128 B over the PHY at 6 pJ/bit (L217)
    want = esp["redirect_frac"][0] * 4 * 128 * 8 * 6e-12 * 1e6
    assert esp["coherence_energy_per_io_uj"][0] == pytest.approx(want, rel=1e-9)
    idle = sc.run("espresso", sc.UTIL_256K, lenders=6)
    u_l = idle["lender_proc_util_frac"][0]
    assert idle["lender_power_w"][0] - sh["lender_power_w"][0] == pytest.approx(
        0.1 * PROC_W * 3 / REF_CORES * ((1 - u_l) - (1 - sh["lender_proc_util_frac"][0])))


def test_controller_generation() -> None:
    assert mech.GEN4_READ_GBPS == pytest.approx(float(link.pcie_dma_bw_gbps(4, 4, 4096.0)))
    g5 = sc.run("conv", sc.UTIL_256K)
    g4 = sc.run("conv", sc.UTIL_256K, controller_gen=4)
    assert g4["throughput_gbps"][0] <= mech.GEN4_READ_GBPS * (1 + 1e-9) < g5["throughput_gbps"][0]
    b4 = sc.run("conv", {"capacity_tb": 4.0, "controller_gen": 4})
    assert b4["bom_compute_usd"][0] / b4["bom_usd"][0] == pytest.approx(0.232, rel=1e-9)  # Fig 3b, L76
