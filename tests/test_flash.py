import numpy as np
import pytest

from models.blocks import flash, mqsim_io
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
    a = flash._cfg_arrays(cfg("espresso_tlc_fob.xml"))
    assert a["tr_mean"] == pytest.approx(43.75) and a["tprog_mean"] == pytest.approx(285.0)


def test_unloaded_latency_matches_qd1_rows():
    e = cfg("espresso_tlc_fob.xml")
    assert float(flash.unloaded_latency_us(e, 4096, 1.0)) == pytest.approx(45.85, rel=0.05)
    assert float(flash.unloaded_latency_us(e, 4096, 0.0)) == pytest.approx(286.3, rel=0.05)
    assert float(flash.unloaded_latency_us(e, 262144, 1.0, "sequential")) == pytest.approx(77.8, rel=0.08)


def test_saturation_bounds():
    e = cfg("espresso_tlc_fob.xml")
    # 4 KiB random reads are die bound (~64 / 46 us), big reads PCIe bound (12.92 GB/s)
    assert 1.1e6 < float(flash.saturation_iops(e, 4096, 1.0)) < 1.8e6
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
