"""Energy block: link pJ/bit, DRAM IDD method, flash operations."""

from __future__ import annotations

import numpy as np
import pytest

from dse.errors import DseError
from models.blocks import energy as E


def test_link_energy():
    assert E.link_energy_pj(1, "cxl_phy") == pytest.approx(48.0)  # 8 bits x 6 pJ/bit (Espresso)
    assert E.link_energy_pj(64, pj_per_bit=1.0) == pytest.approx(512.0)
    assert E.link_pj_per_bit("ucie_advanced") < E.link_pj_per_bit("ucie_standard") < E.link_pj_per_bit("pcie_phy")
    for value, source in E.LINK_PJ_PER_BIT.values():
        assert value > 0 and source
    with pytest.raises(DseError, match="link kind"):
        E.link_pj_per_bit("smoke_signals")


def test_dram_idd_method_by_hand():
    # DDR4-3200 (DRAMsim3 config): one x8 device, VDD 1.2 V, tCK 0.63 ns
    s = E.dram_standard("ddr4-3200")
    e = E.dram_op_energy(s.vdd_v, s.idd0_ma, s.idd2n_ma, s.idd3n_ma, s.idd4r_ma, s.idd4w_ma, s.idd5_ma,
                         s.tck_ns, s.tras_ck, s.trp_ck, s.trfc_ck, s.trefi_ck, s.burst_ck, 1)
    trc = (52 + 22) * 0.63
    assert e["act_pj"] == pytest.approx(1.2 * (57 * trc - 52 * 52 * 0.63 - 37 * 22 * 0.63))
    assert e["read_pj"] == pytest.approx(1.2 * (168 - 52) * 4 * 0.63)
    assert e["refresh_w"] == pytest.approx(1.2 * (250 - 52) * 1e-3 * 560 / 12480)
    # a rank of 8 devices reads a 64 B line; the row miss costs more than the hit
    hit = E.dram_energy_per_bit_pj("DDR4-3200", 1.0)
    miss = E.dram_energy_per_bit_pj("DDR4-3200", 0.0)
    assert hit < miss
    assert 3 < hit < 10 and 8 < miss < 22  # core only; Espresso's 22 pJ/bit includes I/O


def test_dram_standards_sensible():
    per_bit = {k: float(E.dram_energy_per_bit_pj(k, 0.5, 0.7)) for k in E.DRAM_STANDARDS}
    assert per_bit["HBM2"] < per_bit["DDR4-3200"]  # short in-package wires, wide interface
    assert per_bit["DDR5-4800"] < per_bit["DDR4-3200"]  # lower VDD, half the devices per access
    for k, spec in E.DRAM_STANDARDS.items():
        assert spec.source
        e = E.dram_standard_energy(k)
        assert all(np.all(v >= 0) for v in e.values())
    # published whole-access figures keep HBM far below DDR
    assert E.DRAM_ACCESS_PJ_PER_BIT["hbm2"][0] < E.DRAM_ACCESS_PJ_PER_BIT["gddr5"][0] < E.DRAM_ACCESS_PJ_PER_BIT["ddr4"][0]


def test_dram_power_monotone():
    bw = np.linspace(0, 25, 11)
    p = E.dram_power_w("DDR4-3200", bw, 0.5, 0.7)
    assert np.all(np.diff(p) > 0)
    idle = E.dram_power_w("DDR4-3200", 0.0, open_bank_frac=0.0)
    e = E.dram_standard_energy("DDR4-3200")
    assert idle == pytest.approx(e["refresh_w"] + e["precharge_standby_w"])
    # more row hits, less power at the same bandwidth
    assert E.dram_power_w("DDR4-3200", 10, 0.9) < E.dram_power_w("DDR4-3200", 10, 0.1)
    with pytest.raises(DseError):
        E.dram_energy_per_bit_pj("DDR4-3200", 1.5)
    with pytest.raises(DseError, match="DRAM standard"):
        E.dram_standard("DDR9")


def test_flash_energy():
    # Espresso: 3.3 V x 25 mA; a 60 us TLC MSB read = 4.95 uJ in the array
    assert E.flash_op_energy_uj(60) == pytest.approx(3.3 * 0.025 * 60)
    read = E.flash_page_energy_uj("read", 60, 16384, 1200)
    prog = E.flash_page_energy_uj("program", 400, 16384, 1200)
    erase = E.flash_page_energy_uj("erase", 3000)
    assert read < prog < erase
    # the channel transfer: 16 KiB at 1200 MB/s = 13.65 us at 1.2 V x 25 mA
    assert read - E.flash_op_energy_uj(60) == pytest.approx(1.2 * 0.025 * 16384 / 1200)
    # pJ/bit: tens for reads, hundreds for programs (TLC)
    assert 20 < E.flash_energy_per_bit_pj("read", 60) < 80
    assert 150 < E.flash_energy_per_bit_pj("program", 400) < 400
    # vectorized over latencies, monotone
    t = np.array([3.0, 30.0, 60.0])
    assert np.all(np.diff(E.flash_page_energy_uj("read", t)) > 0)
    assert E.flash_idle_power_w(64) < E.flash_idle_power_w(64, bus_idle=True)
    with pytest.raises(DseError, match="flash op"):
        E.flash_page_energy_uj("trim", 10)
