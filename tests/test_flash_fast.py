"""The fast closed-loop solver (flash.closed_solve) against the closed loop read as written
(flash_reference.closed_response solved by bisection), and the fast open loop against
flash_reference.open_reference."""

import numpy as np
import polars as pl
import pytest

import flash_reference as ref_model
from models.blocks import flash, flash_fit, mqsim_io
from models.blocks.flash.request import request_terms


def _bisect(a, r, qd, k):
    lo, hi = np.zeros(np.shape(qd)), np.full(np.shape(qd), 10.0)  # requests per us
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        up = ref_model.closed_response(a, r, mid, qd, k) > mid
        lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
    return 0.5 * (lo + hi)


@pytest.mark.parametrize("config", ["espresso_tlc_fob.xml", "mqsim_default.xml"])
def test_closed_loop_matches_bisection(config):
    df = flash_fit.load_reference().filter(pl.col("mode") == "closed_loop_qd")
    df = df.filter(pl.col("cfg_path").str.ends_with(config))
    a = flash.config_arrays(mqsim_io.read_ssd_config(df["cfg_path"][0]))
    k = flash.constants()
    size = df["request_size_B"].cast(float).to_numpy()
    rf = df["read_fraction"].cast(float).to_numpy()
    seq = (df["pattern"] == "sequential").to_numpy()
    qd = df["queue_depth"].cast(float).to_numpy()
    ref = _bisect(a, request_terms(a, size, rf, seq, 1.0), qd, k) * 1e6
    fast, _ = flash.closed_loop(a, qd, size, rf, seq, cal=k)
    assert seq.any() and (rf == 0.7).any()
    np.testing.assert_allclose(fast, ref, rtol=1e-7)


def test_open_loop_matches_reference():
    a = flash.config_arrays(flash.config("mqsim_default"))
    k = flash.constants()
    for size, rf, pattern in [(4096, 0.7, "random"), (65536, 0.0, "sequential"), (16384, 1.0, "random")]:
        lam = np.linspace(0.05, 0.7, 12) * float(flash.saturation_iops(a, size, rf, pattern, cal=k))
        fast = flash.open_loop_latency_us(a, lam, size, rf, pattern, cal=k)
        ref, over = ref_model.open_reference(a, request_terms(a, size, rf, np.asarray(pattern == "sequential"), 1.0), lam / 1e6, k)
        ok = ~over
        assert ok.sum() >= 8
        np.testing.assert_allclose(fast[ok], ref[ok], rtol=1e-9)
