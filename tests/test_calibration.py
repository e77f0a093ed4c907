import tomllib

import pytest

from models.blocks import calibration, dram


def test_modes(monkeypatch, tmp_path):
    monkeypatch.setenv("DSE_CALIBRATION", "none")
    calibration.clear_cache()
    assert calibration.load("dram") == {}
    assert dram.constants() == dram.DEFAULT_CONSTANTS
    doc = {"block": "dram", "constants": {"k_bank": 0.25}, "error": {"all": {"mape_pct": 1.0, "n": 3}}}
    path = calibration.save("dram", doc, tmp_path)
    assert tomllib.loads(path.read_text())["constants"]["k_bank"] == 0.25
    assert not list(tmp_path.glob("*.tmp"))
    monkeypatch.setenv("DSE_CALIBRATION", str(tmp_path))
    calibration.clear_cache()
    assert dram.constants()["k_bank"] == 0.25
    monkeypatch.setenv("DSE_CALIBRATION", "shipped")
    calibration.clear_cache()
    assert calibration.load("dram")["block"] == "dram"
    assert calibration.load("flash")["block"] == "flash"
    calibration.clear_cache()


def test_bad_folder(monkeypatch):
    from dse.errors import DseError

    monkeypatch.setenv("DSE_CALIBRATION", "/nonexistent/folder")
    calibration.clear_cache()
    with pytest.raises(DseError):
        calibration.load("dram")
    calibration.clear_cache()


def test_dumps_roundtrip():
    doc = {"a": 1, "b": "x\"y", "c": [1.5, 2], "t": {"u": {"v": True}, "w": float("inf")}}
    assert tomllib.loads(calibration.dumps(doc)) == doc


def test_calibrate_cli_writes_out(tmp_path):
    from dse.cli import main

    assert main(["calibrate", "dram", "--out", str(tmp_path)]) == 0
    doc = tomllib.loads((tmp_path / "dram.toml").read_text())
    assert doc["error"]["heldout_standards"]["mape_pct"] < 15
    calibration.clear_cache()


def test_mem_bench_cases():
    from models.blocks.mem_bench import bench_cases

    cases = bench_cases()
    assert len(cases) >= 5
    for name, fn in cases:
        assert fn() > 0, name
