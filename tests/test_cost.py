"""Cost block: BOM, amortization, energy cost, TCO, dated price tables."""

from __future__ import annotations

import numpy as np
import pytest

from dse import units
from dse.errors import DseError
from models.blocks import cost as K


def test_every_price_row_has_date_and_source():
    for name in K.PRICE_TABLES:
        rows = K._rows(name)
        assert rows, name
        for r in rows:
            assert r["date"].strip() and r["source"].strip(), (name, r)
    df = K.price_table("components")
    assert df.height == len(K._rows("components"))
    assert df["usd_per_unit"].min() > 0


def test_bom_sums_and_espresso_bill():
    lines = [K.BomLine("a", 2, 10.0, "2025", "test"), K.BomLine("b", 0.5, 4.0, "2025", "test")]
    assert K.bom_total_usd(lines) == pytest.approx(22.0)
    assert K.bom_frame(lines)["total_usd"].sum() == pytest.approx(22.0)
    # Espresso (research/espresso.md M6): 2 TiB conventional SSD = $147.60, Espresso
    # (half the controller + DRAM, +10 % CXL premium) = $119.52, a 19.0 % saving
    cap_gb = 2048
    conv = [
        K.bom_line("nand_espresso", cap_gb),
        K.bom_line("dram_ddr4", 2.0),  # 1 GB DRAM per TB
        K.bom_line("ssd_controller_enterprise", 1),
        K.bom_line("ssd_other", 1),
    ]
    assert K.bom_total_usd(conv) == pytest.approx(147.60, abs=0.01)
    prem = 1 + K.component_price("cxl_premium_frac").value
    espresso = [
        K.bom_line("nand_espresso", cap_gb),
        K.bom_line("dram_ddr4", 2.0 * 0.5 * prem),
        K.bom_line("ssd_controller_enterprise", 0.5 * prem),
        K.bom_line("ssd_other", 1),
    ]
    assert K.bom_total_usd(espresso) == pytest.approx(119.52, abs=0.01)
    assert 1 - K.bom_total_usd(espresso) / K.bom_total_usd(conv) == pytest.approx(0.190, abs=0.001)
    with pytest.raises(DseError, match="source"):
        K.BomLine("x", 1, 1.0)
    with pytest.raises(DseError, match="quantity"):
        K.BomLine("x", -1, 1.0, "2025", "s")
    with pytest.raises(DseError, match="unknown component"):
        K.bom_line("unobtainium", 1)


def test_amortization_identities():
    # straight line
    assert K.amortized_capex_usd_per_year(1000, 4) == pytest.approx(250)
    # annuity: the present value of the payments equals the capex
    for r in (0.03, 0.08, 0.15):
        for n in (3, 5, 7):
            pay = K.amortized_capex_usd_per_year(1000, n, r)
            pv = sum(pay / (1 + r) ** t for t in range(1, n + 1))
            assert pv == pytest.approx(1000)
            assert pay > 1000 / n  # financing costs something
    # the rate -> 0 limit is straight line
    assert K.amortized_capex_usd_per_year(1000, 5, 1e-9) == pytest.approx(200, rel=1e-6)
    # vectorized over rates and years
    grid = K.capital_recovery_factor(np.array([[0.0], [0.05]]), np.array([2, 4, 8]))
    assert grid.shape == (2, 3) and np.all(np.diff(grid, axis=1) < 0)
    with pytest.raises(DseError):
        K.capital_recovery_factor(0.05, 0)


def test_energy_cost_and_tco_identities():
    # 1 kW for a year at PUE 1.5 and $0.10/kWh
    assert K.energy_cost_usd(1000, units.HOURS_PER_YEAR, 1.5, 0.10) == pytest.approx(1.5 * units.HOURS_PER_YEAR * 0.10)
    assert K.energy_kwh(500, 2, 1.0) == pytest.approx(1.0)
    # TCO (rate 0) = capex + energy + opex over the lifetime
    capex, power, years = 20000.0, 800.0, 5.0
    tco = K.tco_usd(capex, power, years, pue=1.2, usd_per_kwh=0.08, opex_usd_per_year=300)
    energy = K.energy_cost_usd(power, units.HOURS_PER_YEAR * years, 1.2, 0.08)
    assert tco == pytest.approx(capex + energy + 300 * years)
    # more capex, more power or a higher PUE never cheaper
    base = K.tco_usd(capex, power, years)
    assert K.tco_usd(capex * 1.1, power, years) > base
    assert K.tco_usd(capex, power * 1.1, years) > base
    assert K.tco_usd(capex, power, years, pue=2.0) > base
    # financing: a positive cost of capital raises the TCO
    assert K.tco_usd(capex, power, years, rate=0.07) > base
    # vectorized, and the default electricity / PUE come from the dated table
    v = K.tco_usd(np.array([1e4, 2e4, 4e4]), np.array([100.0, 200.0, 400.0]), 4)
    assert v.shape == (3,) and np.all(np.diff(v) > 0)
    assert K.USD_PER_KWH == K.energy_default("electricity_commercial_us")
    assert 1.0 <= K.PUE < 2.5
    with pytest.raises(DseError, match="PUE"):
        K.energy_cost_usd(100, 10, 0.9)


def test_object_storage_tiers_and_costs():
    tiers = K.object_storage_tiers("aws")
    names = K.storage_tier_names()
    for want in ("frequent", "infrequent", "one_zone", "archive_instant", "archive_flexible", "deep_archive"):
        assert want in names
    # colder tiers: cheaper storage, longer minimum duration, slower first byte
    by = {t.tier: t for t in tiers}
    chain = ["frequent", "infrequent", "archive_instant", "archive_flexible", "deep_archive"]
    store = [by[t].storage_usd_per_gb_month for t in chain]
    assert store == sorted(store, reverse=True)
    assert by["deep_archive"].first_byte_latency_s > by["archive_flexible"].first_byte_latency_s > by["frequent"].first_byte_latency_s
    # NCS paper: Infrequent beats Frequent below (0.021 - 0.0125) / 0.01 = 0.85 reads/month
    # (research/ncs.md M1, at the >500 TB "Frequent" price)
    reads = np.array([0.5, 0.84, 0.86, 2.0])
    freq = K.object_storage_cost_usd(1e6, 12, reads, "frequent_500tb", objects=0, writes=0)
    infreq = K.object_storage_cost_usd(1e6, 12, reads, "infrequent", objects=0, writes=0)
    np.testing.assert_array_equal(infreq < freq, [True, True, False, False])
    # minimum storage duration: one month of Deep Archive is billed as 180 days
    one_month = K.object_storage_cost_usd(1000, 1, 0, "deep_archive", objects=0, writes=0)
    assert one_month == pytest.approx(1000 * 0.00099 * 180 / units.DAYS_PER_MONTH)
    # tiers as codes (vectorized) equal tiers as labels
    codes = np.arange(len(names))
    np.testing.assert_allclose(
        K.object_storage_cost_usd(100, 6, 1, codes), [K.object_storage_cost_usd(100, 6, 1, n) for n in names]
    )
    with pytest.raises(DseError, match="storage tier"):
        K.object_storage_cost_usd(1, 1, 0, "glacier_ultra")


def test_instance_and_component_prices():
    assert K.instance_price_usd_per_hour("p5.48xlarge") > K.instance_price_usd_per_hour("p4d.24xlarge") > 1
    assert K.instance_price_usd_per_hour("g6e.xlarge", "spot") == pytest.approx(0.185)
    with pytest.raises(DseError, match="instance"):
        K.instance_price_usd_per_hour("p9.huge")
    # NAND by cell type: more bits per cell, cheaper per GB; HBM dearer than DDR5
    p = {k: K.component_price(k).value for k in ("nand_slc", "nand_mlc", "nand_tlc", "nand_qlc")}
    assert p["nand_slc"] > p["nand_mlc"] > p["nand_tlc"] > p["nand_qlc"]
    assert K.component_price("dram_hbm").value > K.component_price("dram_ddr5").value
    assert K.component_price("dram_ddr5").unit == "usd_per_gib"
