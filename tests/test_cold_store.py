"""cold-store: the cold-storage baseline (self-hosted HDD, LTO-9 tape, S3 tiers) in numbers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dse import units
from models.blocks import cost
from models.cold_store.model import MEDIA, S_PER_MONTH, ColdStore

M = ColdStore()


def _at(media: str, **kw: float) -> dict[str, float]:
    return M.point(media=media, **kw)


def test_defaults_are_the_family_workload_and_every_media_is_feasible():
    ev = M.run_full({"media": list(MEDIA)})
    assert ev.feasible.all()
    assert np.allclose(ev.metrics["work_per_s"], 10000.0 / S_PER_MONTH)


def test_hdd_capex_per_tb_is_in_the_nearline_range():
    hdd = _at("hdd")
    assert 10.0 <= hdd["capex_usd_per_tb"] <= 30.0
    # 10 PB x 1.25 raw on 22 TB drives: 569 drives in 10 sixty-bay servers
    assert hdd["drives_count"] == 569 and hdd["servers_count"] == 10
    assert hdd["capex_usd"] == pytest.approx(569 * 22 * 15.0 + 10 * 5950.0)


def test_tape_is_cheaper_than_hdd_at_10_pb_but_not_at_1_pb():
    assert _at("tape")["usd_per_work"] < 0.8 * _at("hdd")["usd_per_work"]
    assert _at("tape", stored_tb=1000.0)["usd_per_work"] > _at("hdd", stored_tb=1000.0)["usd_per_work"]
    # and the gap widens with scale: the library's fixed cost spreads
    ratio = lambda tb: _at("hdd", stored_tb=tb)["usd_per_work"] / _at("tape", stored_tb=tb)["usd_per_work"]  # noqa: E731
    assert ratio(1e5) > ratio(1e4) > 1.0


def test_cost_ordering_at_10_pb():
    usd = {m: _at(m)["usd_per_work"] for m in MEDIA}
    order = ["tape", "hdd", "s3_deep_archive", "s3_archive_flexible", "s3_archive_instant", "s3_infrequent", "s3_frequent"]
    assert [usd[m] for m in order] == sorted(usd.values())
    # Deep Archive: US$0.99 storage + 1% a month retrieved at US$0.02/GB + requests
    assert 1.1 < usd["s3_deep_archive"] < 1.3


def test_restore_latency_seconds_minutes_hours():
    assert _at("hdd")["restore_latency_s"] < 10.0
    assert 60.0 <= _at("tape")["restore_latency_s"] <= 600.0
    assert _at("s3_archive_flexible")["restore_latency_s"] >= 3 * 3600.0
    assert _at("s3_deep_archive")["restore_latency_s"] >= 12 * 3600.0
    assert _at("s3_archive_instant")["restore_latency_s"] < 60.0


def test_doubling_stored_tb_roughly_doubles_capex_and_power():
    one, two = _at("hdd", stored_tb=10000.0), _at("hdd", stored_tb=20000.0)
    assert 1.9 < two["capex_usd"] / one["capex_usd"] < 2.1
    # tape: the library frame (1,584 slots, ~28 PB raw) and the drives are a fixed cost at 10 PB;
    # from 100 PB on the cartridges and frames dominate and capex roughly doubles too
    t1, t2 = _at("tape", stored_tb=10000.0), _at("tape", stored_tb=20000.0)
    assert 1.2 < t2["capex_usd"] / t1["capex_usd"] < 1.6
    t1, t2 = _at("tape", stored_tb=1e5), _at("tape", stored_tb=2e5)
    assert 1.8 < t2["capex_usd"] / t1["capex_usd"] < 2.1
    h1, h2 = _at("hdd", stored_tb=10000.0), _at("hdd", stored_tb=20000.0)
    assert 1.9 < h2["power_w"] / h1["power_w"] < 2.1


def test_power_scales_with_drives_and_servers():
    for tb in (1000.0, 10000.0, 50000.0):
        h = _at("hdd", stored_tb=tb)
        assert h["power_w"] == pytest.approx(h["drives_count"] * 7.0 + h["servers_count"] * 150.0)
    t = _at("tape")
    # one frame and four mostly idle drives: cartridges on the shelf draw nothing
    assert 95.0 + 4 * 18.0 <= t["power_w"] < 95.0 + 4 * 37.0
    assert _at("hdd")["power_w"] > 20.0 * t["power_w"]


def test_more_restores_buy_more_tape_drives_and_cost_more():
    calm, busy = _at("tape"), _at("tape", restores_per_tb_month=1.0)
    # 10 PB x 100% a month = 3.8 GB/s; at 400 MB/s x 50% that is 20 drives, two frames (14 drives each)
    assert calm["drives_count"] == 4 and busy["drives_count"] == 20 and busy["servers_count"] == 2
    assert busy["usd_per_work"] > calm["usd_per_work"]
    assert busy["drive_util_frac"] <= 0.5


def test_redundancy_and_refresh_scale_the_purchase():
    base, wide = _at("hdd"), _at("hdd", redundancy_x=2.0)
    assert wide["drives_count"] / base["drives_count"] == pytest.approx(1.6, rel=0.01)
    # bought once: a period past the media's service life is infeasible, with its reason
    ev = M.run_full({"media": ["hdd", "hdd", "tape", "tape", "s3_deep_archive"], "years": [5.0, 6.0, 7.0, 8.0, 30.0]})
    assert ev.feasible.tolist() == [True, False, True, False, True]
    assert "hdd_life_years" in ev.reason_of(1) and "tape_refresh_years" in ev.reason_of(3)
    # a store is at least one 8+2 stripe
    assert _at("hdd", stored_tb=1.0)["drives_count"] == 10


def test_cloud_tiers_have_no_capex_or_power_and_bill_the_cost_block_price():
    for media, tier in (("s3_deep_archive", "deep_archive"), ("s3_infrequent", "infrequent")):
        c = _at(media)
        assert c["capex_usd"] == 0.0 and c["power_w"] == 0.0
        bill = cost.object_storage_cost_usd(10000.0 * 1000.0, 60.0, 0.01, tier, objects=10000.0 * 1000.0)
        assert c["opex_usd_per_year"] == pytest.approx(float(bill) / 5.0)
    # S3 Standard above 500 TB a month at the lower marginal rate
    assert _at("s3_frequent", stored_tb=100.0)["usd_per_work"] == pytest.approx(23.0, rel=0.01)
    assert _at("s3_frequent")["usd_per_work"] == pytest.approx(21.0, rel=0.01)
    egress = _at("s3_deep_archive", cloud_egress_usd_per_gb=0.09)["usd_per_work"] - _at("s3_deep_archive")["usd_per_work"]
    assert egress == pytest.approx(0.01 * 1000.0 * 0.09)  # 1% of a TB a month at US$0.09/GB


def test_usd_per_work_includes_opex():
    months = 5.0 * 12.0
    for media in MEDIA:
        c = _at(media)
        energy = c["power_w"] * units.HOURS_PER_YEAR * M.param_map()["pue"].default / 1000.0 * M.param_map()["usd_per_kwh"].default
        tco = c["capex_usd"] + 5.0 * (energy + 0.05 * c["capex_usd"] + c["opex_usd_per_year"])
        assert c["usd_per_work"] == pytest.approx(tco / (10000.0 * months)), media


def test_more_capacity_never_costs_less_in_total():
    tb = np.geomspace(1.0, 1e6, 60)
    for media in MEDIA:
        tco = M.run({"media": media, "stored_tb": tb})["tco_usd"]
        assert np.all(np.diff(tco) >= -1e-6), media


def test_validate_cold_store_passes(cli):
    code, out, _ = cli("validate", "cold-store", "--json")
    assert code == 0
    rows = json.loads(out)
    assert {r["id"] for r in rows} >= {"hdd-below-disk-cloud-price", "tape-below-hdd-at-pb-scale", "tape-restore-minutes"}
    assert all(r["passed"] for r in rows)


def test_space_and_figures():
    from dse.space import load_space
    from dse.registry import project_root
    from models.cold_store.figures import figures

    s = load_space(project_root() / "spaces" / "cold_store.toml")
    assert s.model.name == "cold-store" and s.grid_size == 7 * 4 * 3 * 4 * 3
    assert set(s.objectives) == {"usd_per_work", "restore_latency_s", "power_w"}
    assert len(figures()) == 2
