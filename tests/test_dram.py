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
    for std in ("DDR4-3200", "DDR5-5600"):  # bus-limited random traffic pays the turnarounds
        assert dram.saturation_bw_gbps(std, "random", 0.5) < dram.saturation_bw_gbps(std, "random", 1.0)
    # activate-limited random traffic hides them (DRAMsim3 HBM2: 7.87 / 7.83 / 7.82 GB/s)
    assert dram.saturation_bw_gbps("HBM2", "random", 0.5) <= dram.saturation_bw_gbps("HBM2", "random", 1.0)
    for std in ("DDR4-3200", "DDR5-5600", "HBM2"):
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


def test_gddr6_follows_from_its_config():
    """GDDR6 has no reference runs here; its saturation follows from the .ini: bank groups
    disabled, so every column slot is tCCD_S = 3 cycles of 0.66 ns for a 256-B request
    (129.3 GB/s); a stream loses tRP + tRFC = 150 of every tREFI = 11862 cycles to refresh;
    half writes add (r2w 10 + w2r 24 - 2 slots) per 32-write drain; random traffic is
    limited to 32 activates per t32AW = 420 cycles."""
    g = ini("GDDR6_8Gb_x16.ini")
    peak = 256 / (3 * 0.66)
    keep = 1 - 150 / 11862
    assert dram.peak_bw_gbps(g) == pytest.approx(peak)
    assert float(dram.saturation_bw_gbps(g, "stream", 1.0)) == pytest.approx(peak * keep, rel=0.01)
    assert float(dram.saturation_bw_gbps(g, "stream", 0.5)) == pytest.approx(
        256 / ((3 + 0.5 * 28 / 32) * 0.66) * keep, rel=0.01)
    assert float(dram.saturation_bw_gbps(g, "random", 1.0)) == pytest.approx(256 / (420 / 32 * 0.66) * keep, rel=0.01)
    # idle random read: row conflict tRP + tRCD + CL + burst + 1 = 74 cycles, plus refresh
    assert float(dram.idle_latency_ns(g, "random")) == pytest.approx(74 * 0.66, rel=0.05)


def test_same_bank_stream_window():
    """DDR4 with column bits lowest keeps 128 lines in one bank: back-to-back reads there
    need tCCD_L = 8 cycles, except while the next bank is in the controller window (32-entry
    read queue + 8-entry bank queue) -- 704 cycles per 128 lines, 5.5 per line; DRAMsim3
    reaches 16.9 GB/s."""
    d = ini("DDR4_8Gb_x8_3200.ini")
    sat = float(dram.saturation_bw_gbps(d, "stream", 1.0, cal=CAL))
    assert sat == pytest.approx(64 / (5.5 * 0.63) * (1 - 582 / 12480), rel=0.01)
    assert sat == pytest.approx(16.89, rel=0.06)
