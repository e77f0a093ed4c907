import numpy as np
import pytest

from models.blocks import queueing as q


def test_mm1_identities():
    lam, s = 0.5, 1.0
    assert q.mm1_wait(lam, s) == pytest.approx(1.0)
    assert q.mm1_response(lam, s) == pytest.approx(2.0)
    # response time is exponential with rate mu - lam
    assert q.mm1_response_percentile(lam, s, 0.5) == pytest.approx(np.log(2) * 2.0)
    # P(W > t) = rho exp(-(mu-lam) t): the median wait of rho=0.5 is 0 (atom)
    assert q.mm1_wait_percentile(lam, s, 0.5) == 0.0
    assert q.mm1_wait_percentile(lam, s, 0.9) == pytest.approx(np.log(0.5 / 0.1) / 0.5)


def test_saturation_is_inf_not_nan():
    for f in (q.mm1_wait, q.mm1_response, q.md1_wait):
        out = f(np.array([0.5, 1.0, 2.0]), 1.0)
        assert np.isfinite(out[0]) and np.isinf(out[1]) and np.isinf(out[2])
        assert not np.isnan(out).any()
    assert np.isinf(q.mmc_wait(4.0, 1.0, 4))
    assert q.saturation_throughput(2.0, 4) == pytest.approx(2.0)


def test_erlang_c_known_values():
    # textbook values: C(2, 1.5) = 0.642857, C(5, 4) = 0.554113
    assert q.erlang_c(2, 1.5) == pytest.approx(0.6428571, rel=1e-6)
    assert q.erlang_c(5, 4.0) == pytest.approx(0.5541126, rel=1e-6)
    # vectorized path (different server counts) agrees with the recursion
    v = q.erlang_c(np.array([2, 5, 50]), np.array([1.5, 4.0, 45.0]))
    assert v[0] == pytest.approx(q.erlang_c(2, 1.5)) and v[2] == pytest.approx(q.erlang_c(50, 45.0))
    # stable for large c
    assert 0 < q.erlang_c(500, 490.0) < 1


def test_mmc_reduces_to_mm1():
    lam = np.linspace(0.05, 0.95, 10)
    assert np.allclose(q.mmc_wait(lam, 1.0, 1), q.mm1_wait(lam, 1.0))
    assert np.allclose(q.mmc_wait_percentile(lam, 1.0, 1, 0.99), q.mm1_wait_percentile(lam, 1.0, 0.99))


def test_pk_formula():
    lam, s = 0.8, 1.0
    assert q.mg1_wait(lam, s, 1.0) == pytest.approx(q.mm1_wait(lam, s))
    assert q.md1_wait(lam, s) == pytest.approx(0.5 * q.mm1_wait(lam, s))
    assert q.mg1_wait_percentile(lam, s, 0.99, 1.0) == pytest.approx(q.mm1_wait_percentile(lam, s, 0.99))


def test_mva_single_station_and_bounds():
    # one station, no think: X = 1/D, R = N D
    x, r, qq = q.mva(np.array([2.0]), 5)
    assert x == pytest.approx(0.5) and r == pytest.approx(10.0)
    # balanced network of K stations: X(N) = N / ((N + K - 1) D)
    k, d, n = 4, 1.0, np.array([1, 2, 8, 32])
    x, r, _ = q.mva(np.full(k, d), n)
    assert np.allclose(x, n / ((n + k - 1) * d))
    # multiplicity: 4 copies of one station equal 4 explicit stations
    xm, rm, _ = q.mva(np.array([d]), n, multiplicity=np.array([k]))
    assert np.allclose(xm, x) and np.allclose(rm, r)
    # throughput never exceeds the bottleneck bound and grows with N
    x, _, _ = q.mva(np.array([1.0, 0.5, 0.25]), np.arange(1, 50), think=3.0)
    assert np.all(np.diff(x) >= -1e-12) and np.all(x <= 1.0 + 1e-12)


def test_schweitzer_close_to_exact():
    d = np.array([1.0, 0.7, 0.4])
    for n in (1, 5, 20, 100):
        xe, re, _ = q.mva(d, n, think=2.0)
        xa, ra, _ = q.mva_schweitzer(d, n, think=2.0)
        assert xa == pytest.approx(xe, rel=0.06)
