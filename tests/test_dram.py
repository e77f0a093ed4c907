import numpy as np
import pytest

from models.blocks import dram, dramsim3_io
from models.blocks.dram_fit import shipped_dir

CAL = dram.DEFAULT_CONSTANTS  # uncalibrated physics for the structural tests


def ini(name):
    return dramsim3_io.read_ini(shipped_dir() / name)


def test_ini_reader_derives_dramsim3_organisation():
    g = ini("GDDR6_8Gb_x16.ini")
    assert (g.bankgroups, g.banks_per_group, g.ranks, g.burst_cyc, g.request_bytes, g.t32aw) == (1, 16, 1, 1, 256, 420)
    assert g.stream_mode == 0 and g.lines_per_row == 128
    d = ini("DDR4_8Gb_x8_3200.ini")
    assert (d.ranks, d.burst_cyc, d.request_bytes, d.lines_per_row, d.stream_mode) == (2, 4, 64, 128, 0)
    assert ini("DDR4_8Gb_x8_3200_bgint.ini").stream_mode == 1
    h = ini("HBM2_8Gb_x128_1ch.ini")
    assert (h.burst_cyc, h.trcd, h.lines_per_row) == (2, 14, 32)
    l4 = ini("LPDDR4_8Gb_x16_2400.ini")
    assert (l4.request_bytes, l4.burst_cyc, l4.ranks) == (128, 8, 2)


def test_random_hbm2_is_activate_bound():
    """4 ACTs per tFAW = 30 cycles: one 64-B line per 7.5 ns = 8.5 GB/s, ~25 % of peak,
    less the refresh share."""
    h = ini("HBM2_8Gb_x128_1ch.ini")
    assert dram.peak_bw_gbps(h) == pytest.approx(32.0)
    sat = float(dram.saturation_bw_gbps(h, "random", 1.0, cal=CAL))
    assert sat == pytest.approx(64 / 7.5 * (1 - 260 / 3900), rel=0.02)
    assert 0.22 < float(dram.sustainable_fraction(h, "random", 1.0, cal=CAL)) < 0.27
    # streams are bus bound
    assert float(dram.sustainable_fraction(h, "stream", 1.0, cal=CAL)) > 0.9


def test_gddr6_random_limited_by_t32aw():
    g = ini("GDDR6_8Gb_x16.ini")
    sat = float(dram.saturation_bw_gbps(g, "random", 1.0))
    assert sat == pytest.approx(256 * 32 / (420 * 0.66), rel=0.05)  # ~29.6 GB/s


def test_latency_monotone_and_inf_at_saturation():
    for std in ("DDR4-3200", "DDR5-4800", "LPDDR5X-8533", "HBM2e", "GDDR6"):
        for pat in ("stream", "random"):
            u = np.linspace(0.05, 0.95, 30)  # below ~1 % load refresh leaves banks closed (faster)
            lat = dram.latency_at_utilization_ns(std, u, pat, 0.7)
            assert np.all(np.isfinite(lat)) and np.all(np.diff(lat) >= -1e-9)
            assert np.isinf(dram.latency_at_utilization_ns(std, 1.0, pat, 0.7))
            idle = float(dram.idle_latency_ns(std, pat))
            assert 10 < idle < 150


def test_writes_cost_bandwidth_and_rows_matter():
    for std in ("DDR4-3200", "DDR5-5600", "HBM2"):
        assert dram.saturation_bw_gbps(std, "random", 0.5) < dram.saturation_bw_gbps(std, "random", 1.0)
        assert dram.idle_latency_ns(std, "stream") < dram.idle_latency_ns(std, "random")
    assert float(dram.row_hit_rate("DDR4-3200", "stream", 10.0)) > 0.95
    assert float(dram.row_hit_rate("DDR4-3200", "random", 10.0)) == 0.0


def test_standards_have_sources_and_unknown_name_errors():
    from dse.errors import DseError

    for t in dram.STANDARDS.values():
        assert t.source
    with pytest.raises(DseError):
        dram.timing("DDR9")
    assert dram.timing("ddr4-3200", tck_ns=0.63).tck_ns == 0.63
