"""Calibration is state passed by mode, never frozen at import: switching it in one
process gives every model exactly what a fresh process under that calibration gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from dse import registry

SCRIPT = """
import json, sys
import numpy as np
from dse import bench, registry
out = {}
for name in registry.names():
    model = registry.get(name)
    m = model.run(bench.random_inputs(model, 64, seed=5), checked=True)
    out[name] = {k: [None if not np.isfinite(x) else float(x) for x in v] for k, v in m.items()}
print(json.dumps(out))
"""


def _fresh(mode: str) -> dict:
    env = {**os.environ, "DSE_CALIBRATION": mode, "PYTHONPATH": str(registry.project_root())}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.slow
def test_switching_calibration_in_one_process_matches_a_fresh_process(monkeypatch):
    from dse import bench
    from models.blocks import calibration

    fresh = {mode: _fresh(mode) for mode in ("shipped", "none")}
    differs = [n for n in fresh["none"] if fresh["none"][n] != fresh["shipped"][n]]
    assert len(differs) >= 5, "calibration should move several models"
    for mode in ("shipped", "none", "shipped"):  # import under one, switch, switch back
        monkeypatch.setenv("DSE_CALIBRATION", mode)
        stale = []
        for name in registry.names():
            model = registry.get(name)
            m = model.run(bench.random_inputs(model, 64, seed=5), checked=True)
            got = {k: [None if not np.isfinite(x) else float(x) for x in v] for k, v in m.items()}
            if got != fresh[mode][name]:
                stale.append(name)
        assert not stale, f"under {mode!r} these models kept another calibration's tables: {stale}"
    calibration.clear_cache()


def test_a_calibration_is_a_value_with_a_content_hash(tmp_path, monkeypatch):
    import shutil

    from models.blocks import calibration

    monkeypatch.delenv("DSE_CALIBRATION", raising=False)
    shipped = calibration.current()
    assert shipped.mode == "shipped" and {n for n, _ in shipped.files} >= {"dram.toml", "flash.toml"}
    assert calibration.of("none").files == () and calibration.of("none").sha256 != shipped.sha256
    # a copy of the shipped fits has the same content hash; touching one number changes it
    copy = tmp_path / "cal"
    shutil.copytree(calibration.shipped_folder(), copy)
    assert calibration.of(str(copy)).sha256 == shipped.sha256
    text = (copy / "dram.toml").read_text()
    (copy / "dram.toml").write_text(text.replace("k_write = ", "k_write = 1", 1) if "k_write = " in text else text + "\n# x\n")
    assert calibration.of(str(copy)).sha256 != shipped.sha256
    assert calibration.mode() == "shipped"  # asking never changes what is in force


def test_run_under_a_calibration_object_matches_running_in_that_mode(monkeypatch):
    from dse import bench
    from models.blocks import calibration

    monkeypatch.delenv("DSE_CALIBRATION", raising=False)
    model = registry.get("cxl-expander")
    inputs = bench.random_inputs(model, 256, seed=4)
    none = calibration.of("none")
    under = model.run(inputs, checked=True, calibration=none)
    assert calibration.mode() == "shipped"
    monkeypatch.setenv("DSE_CALIBRATION", "none")
    plain = model.run(inputs, checked=True)
    assert all(np.array_equal(under[k], plain[k], equal_nan=True) for k in plain)
    monkeypatch.setenv("DSE_CALIBRATION", "shipped")
    shipped = model.run(inputs, checked=True)
    assert any(not np.array_equal(under[k], shipped[k], equal_nan=True) for k in plain)
    full = model.run_full(inputs, checked=True, calibration="none")
    assert all(np.array_equal(full.metrics[k], plain[k], equal_nan=True) for k in plain)
