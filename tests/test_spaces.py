"""Space files: loading, and one-line errors that name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from dse.errors import DseError
from dse.space import load_space
from tests.conftest import SMALL_SPACE


def test_small_space_loads(space_file):
    s = load_space(space_file())
    assert s.model.name == "cxl-expander"
    assert s.grid_size == 3 * 3 * 8 * 5 * 5
    knob = {k.name: k for k in s.knobs}
    assert knob["capacity_gib"].values[0] == pytest.approx(64) and knob["capacity_gib"].values[-1] == pytest.approx(1024)
    assert knob["media"].categorical and list(knob["media"].labels) == ["ddr4_3200", "ddr5_4800", "lpddr5x_8533"]


@pytest.mark.parametrize(
    "edit, key, words",
    [
        (('model = "cxl-expander"', 'model = "nope"'), "model", "unknown model"),
        (("lanes = [4, 8, 16]", "lanes = [4, 12]"), "knobs.lanes", "allowed: one of 4, 8, 16"),
        (("lanes = [4, 8, 16]", "lane = [4]"), "knobs.lane", "no parameter"),
        (('loaded_read_latency_ns = "min"', 'loaded_read_latency_ns = "lowest"'), "objectives.loaded_read_latency_ns", "'min' or 'max'"),
        (('usd_per_gib = "min"', 'usd_per_gb = "min"'), "objectives.usd_per_gb", "not a metric"),
        (('slo = "loaded_read_latency_ns <= 600"', 'slo = "latency <= 600"'), "constraints.slo", "unknown metric or parameter"),
        (('slo = "loaded_read_latency_ns <= 600"', 'slo = "os.system(1)"'), "constraints.slo", "allowed"),
        (("steps = 8", "steps = 0"), "knobs.ctrl_latency_ns", "greater than or equal to 1"),
        (("range = [40, 250]", "range = [250, 40]"), "knobs.ctrl_latency_ns", "above high"),
        (("range = [40, 250]", "range = [-5, 250]"), "knobs.ctrl_latency_ns", "out of bounds"),
        (("[sweep]", "[sweeep]"), "sweeep", "unknown key"),
        (("trials = 64", "trails = 64"), "sweep.trails", "unknown key"),
        (("seed = 3", "seed = 3\nstrategy = \"annealing\""), "sweep.strategy", "grid"),
    ],
)
def test_bad_space_files_name_file_and_key(space_file, edit, key, words):
    old, new = edit
    assert old in SMALL_SPACE
    path = space_file(SMALL_SPACE.replace(old, new, 1))
    with pytest.raises(DseError) as exc:
        load_space(path)
    msg = str(exc.value)
    assert "\n" not in msg
    assert str(path) in msg and key in msg and words in msg, msg


def test_invalid_toml_and_missing_file(space_file, tmp_path: Path):
    with pytest.raises(DseError, match="invalid TOML"):
        load_space(space_file("model = \n"))
    with pytest.raises(DseError, match="no such space file"):
        load_space(tmp_path / "missing.toml")


def test_cli_bad_space_exits_2_and_writes_nothing(space_file, cli, tmp_path):
    path = space_file(SMALL_SPACE.replace("lanes = [4, 8, 16]", "lanes = [5]"))
    out = tmp_path / "out"
    code, _, err = cli("sweep", path, "--out", out, "-q")
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and "knobs.lanes" in err
    assert not out.exists()


def test_every_shipped_space_loads():
    from dse.registry import project_root

    spaces = sorted((project_root() / "spaces").glob("*.toml"))
    assert spaces, "no shipped spaces"
    from dse.comparison import is_comparison, load_comparison

    compared = 0
    for f in spaces:
        s = load_comparison(f) if is_comparison(f) else load_space(f)
        compared += is_comparison(f)
        assert s.objectives
        assert any(("usd" in o) or ("cost" in o) or ("tco" in o) for o in s.objectives), f"{f.name}: cost must be an objective"
    assert compared >= 5, "the five comparison spaces ship"


def test_a_comparison_file_given_where_one_space_is_expected_is_one_line():
    from dse.registry import project_root

    with pytest.raises(DseError, match=r"a comparison of several models \(\[compare\]\)"):
        load_space(project_root() / "spaces" / "compare_kv_object.toml")
