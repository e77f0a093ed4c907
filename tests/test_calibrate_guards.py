"""`dse calibrate --against` refuses fits it cannot make honestly, in one line."""

from __future__ import annotations

import shutil
from pathlib import Path

REF = Path(__file__).resolve().parents[1] / "results" / "reference" / "dramsim3"


def test_too_few_runs_are_refused_and_nothing_is_written(tmp_path: Path, cli) -> None:
    lines = (REF / "runs.csv").read_text().splitlines()
    (tmp_path / "runs.csv").write_text("\n".join(lines[:3]) + "\n")
    for ini in REF.glob("*.ini"):
        shutil.copy(ini, tmp_path / ini.name)
    code, _, err = cli("calibrate", "dram", "--against", tmp_path / "runs.csv", "--out", tmp_path / "cal")
    assert code == 2 and "2 usable runs to fit 5 constants" in err and "need at least 15" in err
    assert not (tmp_path / "cal").exists()


def test_a_raw_output_file_is_read_not_a_traceback(tmp_path: Path, cli) -> None:
    raw = next((REF / "raw").glob("*.json"))
    code, _, err = cli("calibrate", "dram", "--against", raw, "--out", tmp_path / "cal")
    assert code == 2 and "1 usable runs" in err and "Traceback" not in err


def test_an_unreadable_file_is_one_line(tmp_path: Path, cli) -> None:
    bad = tmp_path / "runs.csv"
    bad.write_text("not,a,runs,file\n1,2,3,4\n")
    code, _, err = cli("calibrate", "flash", "--against", bad, "--out", tmp_path / "cal")
    assert code == 2 and "--against" in err and len(err.strip().splitlines()) == 1


def test_add_fits_the_users_runs_together_with_the_shipped_set(tmp_path: Path, cli) -> None:
    import tomllib

    raw = next((REF / "raw").glob("*.json"))
    code, out, err = cli("calibrate", "dram", "--against", raw, "--add", "--out", tmp_path / "cal")
    assert code == 0, err
    doc = tomllib.loads((tmp_path / "cal" / "dram.toml").read_text())
    shipped = tomllib.loads((REF.parents[1] / "calibration" / "dram.toml").read_text())
    # one raw run more than the shipped set: alone it was refused (1 run), added it is counted
    assert doc["error"]["all"]["n"] == shipped["error"]["all"]["n"] + 1
    assert doc["reference"] == f"shipped reference + {raw}"
    assert set(doc["constants"]) == set(shipped["constants"])


def test_add_needs_against_and_nothing_is_written(tmp_path: Path, cli) -> None:
    code, _, err = cli("calibrate", "flash", "--add", "--out", tmp_path / "cal")
    assert code == 2 and "--add" in err and "--against" in err and err.count("\n") == 1
    assert not (tmp_path / "cal").exists()
