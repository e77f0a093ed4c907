"""Cache block: working-set / Zipf, Che's LRU approximation, streams, libCacheSim."""

from __future__ import annotations

import numpy as np
import pytest

from dse.errors import DseError
from models.blocks import cache as C


def _zipf_trace(n_objects: int, alpha: float, n_requests: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    p = np.arange(1, n_objects + 1, dtype=float) ** -alpha
    return rng.choice(n_objects, size=n_requests, p=p / p.sum())


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.8, 0.9999, 1.0, 1.3, 2.0])
@pytest.mark.parametrize("n", [1, 3, 11, 12, 100, 5000])
def test_generalized_harmonic_exact(alpha, n):
    exact = float((np.arange(1, n + 1, dtype=float) ** -alpha).sum())
    assert C.generalized_harmonic(n, alpha) == pytest.approx(exact, rel=1e-8)


def test_hit_rates_in_unit_interval_and_monotone_in_cache_size():
    sizes = np.concatenate([[0.0, 0.3, 1.0], np.geomspace(2, 2e6, 60)])
    for alpha in (0.0, 0.6, 1.0, 1.4):
        for f in (C.zipf_hit_rate, C.che_lru_hit_rate):
            h = f(sizes, 1e6, alpha)
            assert np.all((h >= 0) & (h <= 1))
            assert np.all(np.diff(h) >= -1e-12), (f.__name__, alpha)
            assert h[0] == 0.0 and h[-1] == 1.0  # empty cache, cache >= footprint
    # the working-set model is the IRM optimum: LRU never beats it
    c = np.geomspace(1, 1e5, 30)
    assert np.all(C.che_lru_hit_rate(c, 1e6, 0.9) <= C.zipf_hit_rate(c, 1e6, 0.9) + 1e-9)
    # more skew, more hits
    a = np.linspace(0, 1.5, 16)
    assert np.all(np.diff(C.zipf_hit_rate(1000, 1e6, a)) > 0)


def test_uniform_reuse_closed_forms():
    assert C.zipf_hit_rate(250, 1000, 0.0) == pytest.approx(0.25)
    # Che with uniform popularity: hit = 1 - exp(-T/N) = C/N exactly
    assert C.che_lru_hit_rate(250, 1000, 0.0) == pytest.approx(0.25, rel=1e-6)
    assert C.working_set_hit_rate(16 * 2**30, 64 * 2**30, 0.0, 4096) == pytest.approx(0.25)


@pytest.mark.parametrize("alpha", [0.6, 0.8, 1.0, 1.2])
def test_che_matches_exact_lru_simulation(alpha):
    n_obj = 2000
    trace = _zipf_trace(n_obj, alpha, 200_000)
    warm = 20_000
    for cache_obj in (20, 100, 400, 1000):
        sim = C.simulate_lru_hit_rate(trace, cache_obj)
        # exclude the cold-start misses of the warm-up from the simulated rate
        cold = C.simulate_lru_hit_rate(trace[:warm], cache_obj)
        steady = (sim * trace.size - cold * warm) / (trace.size - warm)
        che = float(C.che_lru_hit_rate(cache_obj, n_obj, alpha))
        assert che == pytest.approx(steady, rel=0.04, abs=0.004), (alpha, cache_obj, che, steady)


def test_che_vectorized_equals_pointwise_and_scales_to_billions():
    c = np.array([10.0, 1e3, 1e5])
    a = np.array([0.7, 0.9, 1.1])
    vec = C.che_lru_hit_rate(c, 1e9, a)
    pts = [float(C.che_lru_hit_rate(ci, 1e9, ai)) for ci, ai in zip(c, a)]
    np.testing.assert_allclose(vec, pts, rtol=1e-10)
    t = C.che_characteristic_time(c, 1e9, a)
    assert np.all(t >= c)  # occupancy(T) <= T


def test_input_errors():
    with pytest.raises(DseError):
        C.zipf_hit_rate(10, 0, 0.8)
    with pytest.raises(DseError):
        C.zipf_hit_rate(-1, 10, 0.8)
    with pytest.raises(DseError):
        C.che_lru_hit_rate(10, 100, -0.5)
    with pytest.raises(DseError, match="trigger"):
        C.stream_hit_rate(64, trigger="sometimes")


def test_stream_and_prefetch():
    # no prefetch: 8 B accesses with stride 8 over 64 B lines hit 7 times in 8
    assert C.stream_hit_rate(8, 8, 64, 0) == pytest.approx(7 / 8)
    assert C.stream_hit_rate(64, 8, 64, 0) == 0.0
    assert C.stream_hit_rate(4096, 8, 64, 8) == 0.0  # page-sized stride: prefetcher gives up
    # prefetching helps, more degree never hurts, tagged beats trigger-on-miss
    deg = np.arange(0, 9)
    miss_trig = C.stream_hit_rate(64, 8, 64, deg, trigger="miss")
    tagged = C.stream_hit_rate(64, 8, 64, deg, trigger="tagged")
    assert np.all(np.diff(miss_trig) >= 0)
    assert np.all(tagged >= miss_trig - 1e-12)
    # trigger-on-miss of degree d: 1 miss in d + 1 lines (minus per-page training)
    assert C.stream_hit_rate(64, 64, 64, 3, trigger="miss", train_misses=0) == pytest.approx(3 / 4)
    # tagged: only the training misses of each 4 KiB page (64 lines) remain
    assert C.stream_hit_rate(64, 64, 64, 4, trigger="tagged") == pytest.approx(1 - 2 / 64)
    # larger granularity, more spatial hits
    assert C.stream_hit_rate(8, 8, 256, 0) > C.stream_hit_rate(8, 8, 64, 0)
    assert C.prefetch_exposed_frac(4, 10, 80) == pytest.approx(0.5)
    assert C.prefetch_exposed_frac(16, 10, 80) == 0.0
    assert C.amat_ns(0.9, 80, 400) == pytest.approx(112)


def test_trace_hit_rate_with_libcachesim(tmp_path):
    pytest.importorskip("libcachesim")
    trace = _zipf_trace(1000, 0.8, 50_000, seed=11)
    sizes = np.array([10, 50, 200, 800])
    got = C.trace_hit_rate(trace, sizes * 64, "lru", addresses=False)
    exact = [C.simulate_lru_hit_rate(trace, int(s)) for s in sizes]
    np.testing.assert_allclose(got, exact, atol=1e-9)
    assert np.all(np.diff(got) > 0)
    # addresses are mapped to 64 B lines: two addresses in one line are one object
    addr = trace * 64 + 8
    assert C.trace_hit_rate(addr, 200 * 64, "lru") == pytest.approx(exact[2])
    # Belady (optimal) >= LRU >= 0; FIFO runs; the same trace from a file
    assert C.trace_hit_rate(trace, 200 * 64, "belady", addresses=False) >= got[2] - 1e-12
    assert 0 < C.trace_hit_rate(trace, 200 * 64, "fifo", addresses=False) < 1
    path = C.write_oracle_trace(trace, tmp_path / "z.oracleGeneral.bin", obj_size_b=64)
    assert C.trace_hit_rate(str(path), 200 * 64, "lru") == pytest.approx(exact[2])
    np.save(tmp_path / "z.npy", trace)
    assert C.trace_hit_rate(str(tmp_path / "z.npy"), 200 * 64, addresses=False) == pytest.approx(exact[2])
    txt = tmp_path / "z.txt"
    txt.write_text("\n".join(str(int(x) + 1) for x in trace) + "\n")
    plain = C.trace_hit_rate(str(txt), 200, "lru")  # plain text: unit-size objects
    assert plain == pytest.approx(exact[2], abs=1e-9)
    csv = tmp_path / "z.csv"
    csv.write_text("time,id,size\n" + "".join(f"{i},{int(x) + 1},64\n" for i, x in enumerate(trace)))
    params = dict(time_field=1, obj_id_field=2, obj_size_field=3, has_header=True, delimiter=",")
    assert C.trace_hit_rate(str(csv), 200 * 64, reader_params=params) == pytest.approx(exact[2])
    with pytest.raises(DseError, match="reader parameter"):
        C.trace_hit_rate(str(csv), 200 * 64, reader_params={"colour": 1})
    with pytest.raises(DseError, match="policy"):
        C.trace_hit_rate(trace, 100, "mru")
    with pytest.raises(DseError, match="does not exist"):
        C.trace_hit_rate(str(tmp_path / "missing.csv"), 100)
