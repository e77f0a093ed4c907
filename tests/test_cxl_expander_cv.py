"""cxl-expander: claim kinds, leave-one-anchor-out, and the latency/bandwidth invariants
of issue "Predict beyond the fit"."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from dse import registry
from dse.claims import evaluate_claims, load_claims
from dse.crossval import cross_validate, median_abs
from models.blocks import dram
from models.cxl_expander import cv
from models.cxl_expander import model as cx

CLAIMS = Path(cx.__file__).resolve().parent / "claims.yaml"


@pytest.fixture(scope="module")
def m():
    return registry.get("cxl-expander")


def test_claim_kinds():
    kinds = {c.id: c.kind for c in load_claims(CLAIMS).claims}
    assert kinds == {"asic-latency-vs-local-ddr": "prediction", "fpga-latency-vs-local-ddr": "prediction",
                     "cz120-bandwidth": "prediction", "pond-added-latency": "anchor", "smt-tpp-round-trip": "echo"}


def test_left_out_pond_uses_the_a_priori_port_latency():
    # 4 ports x 13.6 ns + ~9.5 ns of serialization and flight: 64 ns, 8.6 % under Pond's 70 ns
    v = cv.left_out("pond-added-latency")
    assert v == pytest.approx(63.97, abs=0.05)
    rows = cross_validate(CLAIMS, evaluate_claims(CLAIMS))
    assert [r.id for r in rows] == ["pond-added-latency"]
    assert rows[0].out_of_fit_error_pct == pytest.approx((63.97 - 70.0) / 70.0 * 100, abs=0.1)
    assert median_abs(rows)["cxl-expander"] <= 20.0
    with pytest.raises(KeyError):
        cv.left_out("cz120-bandwidth")


LOADS = np.array([0.0, 1e-4, 1e-3, 0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.99])


def test_loaded_latency_never_below_idle(m):
    """Loaded >= idle at every load, for every medium, link, pattern and read mix (the
    issue's point: 1 % load, 90 % reads, DDR5-4800, PCIe 5 x8 gave 222 ns loaded, 239 idle)."""
    for media, gen, lanes, pattern, rf in itertools.product(cx.MEDIA, ("pcie4", "pcie5", "pcie6"), (4, 8, 16),
                                                          cx.PATTERNS, (0.5, 0.9, 1.0)):
        flit = "256B" if gen == "pcie6" else "68B"
        out = m.run({"media": media, "link_gen": gen, "lanes": lanes, "flit_mode": flit, "pattern": pattern,
                     "read_frac": rf, "offered_load_frac": LOADS})
        idle, loaded = out["idle_read_latency_ns"], out["loaded_read_latency_ns"]
        assert np.all(loaded >= idle - 1e-9), (media, gen, lanes, pattern, rf, loaded - idle)
        assert np.all(np.diff(loaded) >= -1e-9) or pattern == "stream", (media, gen, lanes, rf)


def test_issue_point_loaded_above_idle(m):
    d = m.point(offered_load_frac=0.01, read_frac=0.9, media="ddr5_4800", lanes=8)
    assert d["idle_read_latency_ns"] == pytest.approx(238.85, abs=0.1)
    assert d["idle_read_latency_ns"] <= d["loaded_read_latency_ns"] < d["idle_read_latency_ns"] + 1.0
    # the local reference is still the ~110 ns of an MLC-class measurement
    assert d["local_dram_latency_ns"] == pytest.approx(109.4, abs=0.1)


def test_idle_random_access_finds_its_bank_closed():
    t = dram.timing("DDR5-4800")
    # tRCD + CL + 1 controller cycle + burst, plus the mean refresh wait -- no tRP
    no_trp = float(dram.idle_latency_ns(t, "random")) - t.trp * t.tck_ns
    assert cx.media_idle_ns("DDR5-4800", "random") == pytest.approx(no_trp, abs=1e-6)
    assert cx.media_idle_ns("DDR5-4800", "stream") == pytest.approx(float(dram.idle_latency_ns(t, "stream")))


def test_media_bw_is_ddr5_4800_peak_per_channel_not_per_subchannel(m):
    peak = dram.peak_bw_gbps("DDR5-4800")
    assert peak == pytest.approx(38.4, rel=0.01)  # JESD79-5: 4800 MT/s x 8 B per DIMM channel
    for ch in (1, 2, 4):
        for pattern in cx.PATTERNS:
            d = m.point(media="ddr5_4800", channels=ch, pattern=pattern, read_frac=1.0)
            assert 0.8 * ch * peak < d["media_bw_gbps"] <= ch * peak, (ch, pattern)
    two = m.point(media="ddr5_4800", channels=2)
    assert two["media_bw_gbps"] < 2 * peak  # was 124.8-130 GB/s against a 76.8 GB/s peak
    assert two["media_bw_gbps"] == pytest.approx(float(cx.media_bw_gbps("ddr5_4800", "random", 0.67, 2)))
    for media in cx.MEDIA:
        d = m.point(media=media, channels=1, pattern="stream", read_frac=1.0)
        assert d["media_bw_gbps"] <= dram.peak_bw_gbps(cx.MEDIA_STANDARD[media]) * (1 + 1e-9), media
