import warnings

import numpy as np
import pytest

from models.blocks import flash, mqsim_io
from models.blocks.flash import chip, open_loop
from models.blocks.flash_fit import shipped_dir


def cfg(name):
    return mqsim_io.read_ssd_config(shipped_dir() / "configs" / name)


def test_config_reader():
    e = cfg("espresso_tlc_fob.xml")
    assert (e.channels, e.chips_per_channel, e.planes_per_die, e.page_bytes) == (8, 8, 4, 16384)
    assert e.tr_us == (30.0, 45.0, 60.0) and e.channel_gbps == pytest.approx(2.4)
    assert e.pcie_gbps == pytest.approx(3.938 * 4 * 128 / 156, rel=1e-6)
    d = cfg("mqsim_default.xml")
    assert not d.ideal_mapping and d.units == 32 and d.cell == "MLC"


def test_tlc_page_mix_matches_mqsim():
    mix = flash.page_type_mix("TLC", 96)
    assert np.allclose(np.array(mix) * 96, [36, 32, 28])
    a = flash.config_arrays(cfg("espresso_tlc_fob.xml"))
    assert a["tr_mean"] == pytest.approx(43.75) and a["tprog_mean"] == pytest.approx(285.0)


def test_unloaded_latency_matches_qd1_rows():
    e = cfg("espresso_tlc_fob.xml")
    assert float(flash.unloaded_latency_us(e, 4096, 1.0)) == pytest.approx(45.85, rel=0.05)
    assert float(flash.unloaded_latency_us(e, 4096, 0.0)) == pytest.approx(286.3, rel=0.05)
    assert float(flash.unloaded_latency_us(e, 262144, 1.0, "sequential")) == pytest.approx(77.8, rel=0.08)


def test_saturation_bounds():
    e = cfg("espresso_tlc_fob.xml")
    # 4 KiB random reads are die bound: above MQSim's 1.56M IOPS served at a 1.61M offered
    # load (40000 reads in 25857 commands, 1.55 pages per multi-plane command), below 2.5M
    # (64 dies x 1 / 46 us x 1.8 pages per command); big reads PCIe bound (12.92 GB/s)
    assert 1.5e6 < float(flash.saturation_iops(e, 4096, 1.0)) < 2.5e6
    bw = float(flash.saturation_bw_gbps(e, 262144, 1.0, "sequential"))
    assert bw == pytest.approx(12.92, rel=0.02)
    assert flash.saturation_iops(e, 4096, 0.0) < flash.saturation_iops(e, 4096, 1.0)


def test_closed_and_open_loop_shapes():
    e = "espresso_tlc"
    x, lat = flash.closed_loop(e, np.array([1, 4, 16, 64, 256]), 4096, 1.0)
    assert np.all(np.diff(x) > 0) and np.all(np.diff(lat) >= 0)
    # Little (up to the die/channel overlap correction of a few us)
    assert np.allclose(np.array([1, 4, 16, 64, 256]) / (x / 1e6), lat, rtol=0.05)
    sat = float(flash.saturation_iops(e, 4096, 1.0))
    assert x[-1] <= sat * 1.0001
    ol = flash.open_loop_latency_us(e, np.array([0.1, 0.5, 0.9, 1.1]) * sat, 4096, 1.0)
    assert np.all(np.diff(ol[:3]) > 0) and np.isinf(ol[3]) and not np.isnan(ol).any()


def test_gc_write_amplification():
    # greedy, 7 % spare: a = 1/0.93; WA from the Lambert-W form; random is a/(a-1)
    a = 1 / 0.93
    assert float(flash.gc_write_amplification(0.07, policy="random")) == pytest.approx(a / (a - 1))
    g = float(flash.gc_write_amplification(0.07))
    assert 1 < g < a / (a - 1)
    # more over-provisioning or less fill never raises WA
    ops = np.linspace(0.05, 0.5, 10)
    assert np.all(np.diff(flash.gc_write_amplification(ops)) < 0)
    assert flash.gc_write_amplification(0.07, fill=0.5) < g
    d = float(flash.gc_write_amplification(0.07, policy="d_choices", d=7))
    assert g < d < a / (a - 1)
    # GC slows writes
    assert flash.saturation_iops("espresso_tlc", 16384, 0.0, wa=2.0) < flash.saturation_iops("espresso_tlc", 16384, 0.0)


def test_named_configs():
    for name, c in flash.CONFIGS.items():
        assert c.source
        assert float(flash.unloaded_latency_us(name, 4096, 1.0)) > 0
    assert flash.config("dockerssd_mlc").channels * flash.config("dockerssd_mlc").chips_per_channel == 48


def test_znand_follows_from_its_config():
    """znand_like has no reference runs here; the espresso geometry with SLC timings makes
    reads PCIe-bound.  MQSim sends a 4 KiB read's data as 32 TLPs of 128 + 28 B over 4
    lanes of 3.938 GB/s (316.9 ns) plus the SQE read request (2.0 ns) and the 16-B CQE
    (2.8 ns): 3.11 M IOPS at most; 64 KiB: 5076 ns, 197 k IOPS.  QD1 4 KiB read: read
    command 0.29 us + tR 3 us + 4 KiB at 2.4 GB/s 1.71 us + the PCIe messages 0.33 us."""
    z = cfg("znand_like_fob.xml")
    assert float(flash.saturation_iops(z, 4096, 1.0)) == pytest.approx(1e9 / 321.7, rel=0.03)
    assert float(flash.saturation_iops(z, 65536, 1.0)) == pytest.approx(1e9 / 5075.6, rel=0.03)
    assert float(flash.unloaded_latency_us(z, 4096, 1.0)) == pytest.approx(0.29 + 3 + 4096 / 2400 + 0.33, rel=0.03)
    # writes are bound by the 64 chips' program time (100 us + command and 4 KiB data in)
    assert float(flash.saturation_iops(z, 4096, 0.0)) < 64 / (100 + 0.361 + 1.707) * 1e6 * 1.2


def test_pcie_message_time():
    # 4096 B: 32 full TLPs -> 4992 B on the wire over 4 lanes of 3.938 GB/s
    assert float(flash.pcie_message_us(4096, 4, 3.938)) == pytest.approx(4992 / 4 / 3.938 / 1e3)
    # 16 B: one partial TLP of 16 + 28 B
    assert float(flash.pcie_message_us(16, 4, 3.938)) == pytest.approx(44 / 4 / 3.938 / 1e3)


def test_read_rounds_mlc_reads_only():
    """MQSim's scheduler (commands only to an idle channel, data-out first) puts chips with
    queued reads in step: on equal-tR MLC 4 KiB random reads lose ~20 % of throughput, and
    the chip-round bound (tR + every chip's data-out per read op) holds; writes and a
    controller without rounds are not affected."""
    from dataclasses import replace

    c = flash.config("mqsim_default")
    assert c.read_rounds and mqsim_io.read_ssd_config(shipped_dir() / "configs" / "mqsim_default.xml").read_rounds
    off = replace(c, read_rounds=False)
    on_r, off_r = float(flash.saturation_iops(c, 4096, 1.0)), float(flash.saturation_iops(off, 4096, 1.0))
    assert 0.72 < on_r / off_r < 0.88
    # full rounds: 32 chips, 2 ops (mapping + data) per request, each tR + 4 chips' data-out
    x_data = 4096 / (c.channel_gbps * 1e3)  # us
    x_map = flash.MAP_READ_B / (c.channel_gbps * 1e3)
    round_us = 75.0 + c.chips_per_channel * ((x_data + x_map) / 2 + flash.READ_CMD_US)
    bound = 32 / (2 * round_us) * 1e6
    assert on_r > 0.95 * bound  # the model sits at or above the fully synchronized bound
    assert on_r < 1.2 * bound
    w_on, w_off = float(flash.saturation_iops(c, 4096, 0.0)), float(flash.saturation_iops(off, 4096, 0.0))
    assert abs(w_on / w_off - 1) < 0.02  # only the writes' mapping reads join rounds
    # TLC page types spread tR (sd 12 us against 2-us transfers): rounds barely bind
    e = flash.config("espresso_tlc")
    e_on, e_off = (float(flash.saturation_iops(x, 4096, 1.0)) for x in (e, replace(e, read_rounds=False)))
    assert 0.9 < e_on / e_off < 1.0


def test_random_merging_scales_with_page_offsets():
    """A queued random page joins the head's multi-plane command only at the head's page
    offset: with twice the pages per block the merging per queued page halves, and so
    does the throughput gain it gives at depth (mqsim_default's 256-page blocks merge
    less than espresso's 96-page blocks at the same constant)."""
    from dataclasses import replace

    e = flash.config("espresso_tlc")
    base = chip.rand_merge(1.0, 4, 96)
    assert float(chip.rand_merge(1.0, 4, 192)) == pytest.approx(base / 2)
    shallow = float(flash.saturation_iops(replace(e, pages_per_block=e.pages_per_block * 8), 4096, 1.0))
    deep = float(flash.saturation_iops(e, 4096, 1.0))
    assert deep > shallow * 1.05


def test_saturation_above_threshold_is_inf_without_changing_the_rest():
    rng = np.random.default_rng(1)
    e = flash.config("espresso_tlc")
    size = rng.choice([4096, 16384, 65536, 262144], 2000).astype(float)
    rf, seq = rng.choice([0.0, 0.7, 1.0], 2000), rng.random(2000) < 0.5
    x = flash.saturation_iops(e, size, rf, seq)
    thr = x * rng.uniform(0.5, 1.5, 2000)
    y = flash.saturation_iops(e, size, rf, seq, above_iops=thr)
    below, over = x < thr * (1 - 1e-6), x > thr * (1 + 1e-6)
    assert below.sum() > 500 and over.sum() > 500
    np.testing.assert_allclose(y[below], x[below], rtol=1e-7)
    assert np.all(np.isinf(y[over]))


def test_open_loop_stream_finds_its_backlog():
    """A sequential write stream above its capacity without multi-plane merging needs a
    standing backlog to merge: the open loop finds that fixed point (the wait solved as
    W = W'(W)) instead of overshooting from an empty queue, so the latency stays finite
    and rises with the load up to saturation (espresso_tlc, 64 KiB: an iteration from
    zero returned inf from 30 % of saturation)."""
    sat = float(flash.saturation_iops("espresso_tlc", 65536, 0.0, "sequential"))
    frac = np.linspace(0.05, 0.95, 19)
    lat = flash.open_loop_latency_us("espresso_tlc", frac * sat, 65536, 0.0, "sequential")
    assert np.all(np.isfinite(lat))
    assert np.all(np.diff(lat) > 0)
    assert lat[0] == pytest.approx(float(flash.unloaded_latency_us("espresso_tlc", 65536, 0.0, "sequential")), rel=0.05)
    # no load: the unloaded latency, without warnings (the bound on the wait stays finite)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        idle = flash.open_loop_latency_us("espresso_tlc", 0.0, 65536, 0.7, "sequential")
    assert float(idle) == pytest.approx(float(flash.unloaded_latency_us("espresso_tlc", 65536, 0.7, "sequential")), rel=1e-9)
    # beyond the capacity with every plane merged it is over
    assert not np.isfinite(flash.open_loop_latency_us("espresso_tlc", 1.2 * sat, 65536, 0.0, "sequential"))


def test_wait_root_solves_a_falling_map():
    """The open loop's root finder on W = c / (1 + W) (root (sqrt(1 + 4c) - 1) / 2), per
    point, with a point whose root is the bound and one without a wait."""
    c = np.array([0.5, 3.0, 100.0, 1e6, 0.0])
    w_max = np.array([10.0, 10.0, 1e4, 50.0, 10.0])
    w = open_loop.wait_root(lambda x: c / (1.0 + x), w_max, 60)
    exact = np.minimum((np.sqrt(1.0 + 4.0 * c) - 1.0) / 2.0, w_max)
    np.testing.assert_allclose(w, exact, rtol=1e-9)
