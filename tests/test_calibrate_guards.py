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
