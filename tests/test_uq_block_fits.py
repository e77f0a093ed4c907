"""`dse uq` carries the calibrated blocks' own uncertainty: calibrations drawn from the
DRAM and flash fits' sds (``calibration.drawn_folders``), each over a share of the draws."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np

from dse import registry
from dse.model import Evaluation
from dse.uncertainty import run_draws
from models.blocks import calibration


def test_fit_spread_lists_the_fitted_constants_with_an_sd():
    spread = calibration.fit_spread()
    assert set(spread) == {"dram", "flash"}
    assert {"k_ref", "k_write"} <= set(spread["dram"]) and "p_smooth" not in spread["dram"]  # held at its bound
    value, sd = spread["flash"]["k_mp"]
    assert value > 0 and 0 < sd < value


def test_drawn_folders_hold_drawn_constants_and_vanish():
    spread = calibration.fit_spread()
    with calibration.drawn_folders(3, seed=5) as folders:
        assert len(folders) == 3
        drawn = []
        for f in folders:
            assert {p.name for p in Path(f).glob("*.toml")} >= {"dram.toml", "flash.toml"}
            doc = tomllib.loads((Path(f) / "flash.toml").read_text())
            drawn.append(doc["constants"]["k_mp"])
            assert doc["constants"]["k_ch"] == calibration.load("flash")["constants"]["k_ch"]  # no sd: unchanged
        assert len(set(drawn)) == 3 and all(v >= 0 for v in drawn)
        assert all(abs(v - spread["flash"]["k_mp"][0]) < 6 * spread["flash"]["k_mp"][1] for v in drawn)
        with calibration.using(folders[0]):
            assert calibration.load("flash")["constants"]["k_mp"] == drawn[0]
    assert not any(Path(f).exists() for f in folders)


def test_no_spread_without_a_calibration():
    with calibration.using("none"):
        assert calibration.fit_spread() == {}
        with calibration.drawn_folders(4) as folders:
            assert folders == []


def test_run_draws_varies_a_dram_backed_metric_between_calibrations():
    model = registry.get("cxl-expander")
    n = 16
    cols = {"read_frac": np.full(n, 0.67)}  # every knob at its default: only the fits vary
    plain, none_varied = run_draws(model, cols, n, fit_draws=0)
    ev, varied = run_draws(model, cols, n, fit_draws=8, seed=3)
    assert none_varied == [] and "dram.k_ref" in varied and "flash.k_mp" in varied
    lat0 = plain.metrics["loaded_read_latency_ns"]
    lat = ev.metrics["loaded_read_latency_ns"]
    assert np.ptp(lat0) == 0 and np.unique(lat).size == 8  # one value per drawn calibration
    assert lat.shape == (n,) and ev.feasible.all()


def test_evaluation_concat_merges_reason_codes():
    a = Evaluation({"m": np.array([1.0, 2.0])}, np.array([True, False]), np.array([-1, 0], np.int32), ("too hot",))
    b = Evaluation({"m": np.array([3.0, 4.0])}, np.array([False, False]), np.array([0, 1], np.int32), ("too big", "too hot"))
    ab = Evaluation.concat([a, b])
    assert ab.metrics["m"].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert [ab.reason_of(i) for i in range(4)] == [None, "too hot", "too big", "too hot"]
    assert ab.feasible.tolist() == [True, False, False, False]


def test_uq_command_reports_the_block_fits(cli):
    code, out, err = cli("uq", "cxl-expander", "--samples", "64", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["block_fits"]["draws"] == 8 and "dram.k_write" in doc["block_fits"]["varied"]
    code, out, _ = cli("uq", "cxl-expander", "--samples", "64", "--fit-draws", "0", "--json")
    assert code == 0 and json.loads(out)["block_fits"] == {"draws": 0, "varied": []}
    code, _, err = cli("uq", "cxl-expander", "--fit-draws", "65")
    assert code == 2 and "--fit-draws 65" in err
