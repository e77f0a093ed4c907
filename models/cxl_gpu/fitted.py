"""The fitted constants of the CXL-GPU model, read from ``calibration.toml`` (written by
``python -m models.cxl_gpu.calibration``, which says what each constant was fitted to)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

CALIBRATION_FILE = Path(__file__).resolve().parent / "calibration.toml"


def load(path: Path = CALIBRATION_FILE) -> dict[str, Any]:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


#: Sections: gpu, uvm, ssd, sr, gc (each key a number; ``fitted_to`` strings beside them).
CAL: dict[str, Any] = load()
