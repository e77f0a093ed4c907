"""rdio: claim kinds, the leave-one-anchor-out refit, the per-block RPC vs direct latency and
the closed loop's saturation point."""

from __future__ import annotations

import pytest

from dse.claims import evaluate_claims
from dse.crossval import cross_validate, median_abs
from models.rdio import calibration, cv
from models.rdio.model import RdIO

CLAIMS = cv.CLAIMS


@pytest.fixture(scope="module")
def rows():  # noqa: ANN201
    return {r.id: r for r in cross_validate(CLAIMS, evaluate_claims(CLAIMS, only_model="rdio"))}


def test_anchors_are_the_calibration_observations(rows) -> None:  # noqa: ANN001
    assert set(rows) == set(calibration.ANCHORS)
    assert set(calibration.ANCHOR_OBSERVATION.values()) == {name for name, _ in calibration.TARGETS}


def test_full_fit_is_the_shipped_defaults() -> None:
    d = RdIO.defaults()
    for k, v in calibration.fit().items():
        assert v == pytest.approx(d[k], rel=2e-3, abs=1e-6)


def test_out_of_fit_errors(rows) -> None:  # noqa: ANN001
    oof = {k: r.out_of_fit_error_pct for k, r in rows.items()}
    # rpc_cpu_us a priori (50 us) is close to its fit: cpu_read is predicted from the rest
    assert abs(oof["cpu_read"]) < 5
    assert oof["write_blocks_breakdown"] == pytest.approx(rows["write_blocks_breakdown"].in_fit_error_pct, abs=0.5)
    # the a-priori SIMD Reed-Solomon and hash rates are ~2x faster than the fit: the drops shrink
    assert oof["minio_failure_drop"] == pytest.approx(-58.5, abs=3)
    assert oof["cpu_write"] == pytest.approx(51.2, abs=3)
    assert oof["filemap_cache_gain_small"] == pytest.approx(106.3, abs=5)
    assert median_abs(list(rows.values()))["rdio"] == pytest.approx(51.2, abs=3)


def test_double_transfer_per_block() -> None:
    m = RdIO()
    mi = m.point(system="minio", object_kb=24, threads=1)
    # the direct path is the same volume read in both systems; the RPC path adds the call
    # (CPU at both ends), the TCP exchange and TCP CPU per byte at both ends
    ri = m.point(system="minrdio", object_kb=24, threads=1)
    assert mi["block_direct_read_us"] == pytest.approx(ri["block_direct_read_us"])
    assert mi["block_rpc_read_us"] - mi["block_direct_read_us"] > 2 * RdIO.defaults()["rpc_cpu_us"]
    # the calibration's 4 KiB ratio and the metric at a 4 KiB shard agree
    assert mi["double_transfer_x"] == pytest.approx(calibration.double_transfer_ratio(), rel=0.06)
    # larger blocks: the TCP CPU per byte grows the gap
    big = m.point(system="minio", object_kb=6 * 1024, threads=1)
    assert big["double_transfer_x"] > mi["double_transfer_x"]


def test_saturation_threads_is_the_closed_loop_knee() -> None:
    m = RdIO()
    kw = dict(system="minio", workload="ycsb_load", object_kb=100, dataset_gb=80)
    n_star = m.point(threads=64, **kw)["saturation_threads"]
    x_max = m.point(threads=1024, **kw)["throughput_kiops"]
    x1 = m.point(threads=1, **kw)["throughput_kiops"]
    # the light-load line (N x X(1)) meets the bound X_max at N*
    assert n_star * x1 == pytest.approx(x_max, rel=0.01)
    assert m.point(threads=int(n_star / 2), **kw)["throughput_kiops"] < 0.75 * x_max
    assert m.point(threads=int(4 * n_star), **kw)["throughput_kiops"] > 0.95 * x_max
    # request-handling CPU does not scale with the object
    a, b = (m.point(system="minio", object_kb=kb)["gateway_request_cpu_us"] for kb in (4, 65536))
    assert a == b
