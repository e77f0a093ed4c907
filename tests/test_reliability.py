"""Bad input and interrupted runs: one line and exit 2, nothing written, nothing lost.

Each test here failed on the code before the reliability work (issue: the tool attacked
by a careless or hostile user)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import SMALL_SPACE


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def assert_refused(cli, root: Path, *args: str, contains: str = "") -> str:
    """exit 2, exactly one line on stderr, no traceback, no new file under ``root``."""
    before = _files(root)
    code, out, err = cli(*args)
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    assert contains in err, err
    assert _files(root) == before, "a refused command wrote or removed files"
    return err


# ----------------------------------------------------------------------------- options
@pytest.mark.parametrize(
    "args, contains",
    [
        (["--seed", "-1"], "--seed -1"),
        (["--strategy", "optuna", "--batch", "-3", "--trials", "10"], "--batch -3"),
        (["--strategy", "optuna", "--batch", "0", "--trials", "10"], "--batch 0"),
        (["--strategy", "sobol", "--trials", "0"], "--trials 0"),
        (["--strategy", "sobol", "--trials", "1000000000000"], "limit"),
        (["--strategy", "optuna", "--trials", "1000000000000"], "limit"),
        (["--strategy", "random", "--trials", "1000000000000"], "limit"),
        (["--strategy", "sobol", "--trials", "2000000000"], "Sobol"),
        (["--workers", "0"], "--workers 0"),
        (["--workers", "2"], "--backend ray"),
        (["--trials", "abc"], "--trials"),
    ],
)
def test_sweep_options_out_of_range_are_refused(cli, space_file, tmp_path, args, contains):
    space = space_file()
    assert_refused(cli, tmp_path, "sweep", space, "--out", tmp_path / "out", "-q", *args, contains=contains)


def test_sweep_of_a_folder_is_refused(cli, tmp_path):
    assert_refused(cli, tmp_path, "sweep", tmp_path, contains="is a folder")


def test_out_at_a_file_is_refused_and_the_file_kept(cli, space_file, tmp_path):
    space = space_file()
    f = tmp_path / "notes.txt"
    f.write_text("mine")
    assert_refused(cli, tmp_path, "sweep", space, "--out", f, "-q", contains="is a file")
    assert_refused(cli, tmp_path, "sweep", space, "--out", f / "sub", "-q", contains="cannot be created")
    assert f.read_text() == "mine"


def test_out_at_an_unwritable_path_is_refused(cli, space_file, tmp_path):
    assert_refused(cli, tmp_path, "sweep", space_file(), "--out", "/proc/no-such-dir/out", "-q", contains="--out")


def test_missing_argument_is_one_line(cli, tmp_path):
    assert_refused(cli, tmp_path, "sweep", contains="Missing argument")


# ----------------------------------------------------------------------------- space files
@pytest.mark.parametrize(
    "knob, contains",
    [
        ("ctrl_latency_ns = { range = [40, inf], steps = 4 }", "finite"),
        ("ctrl_latency_ns = { range = [40, 250], steps = 1e12 }", "allowed per knob"),
        ("ctrl_latency_ns = { range = [40, 250], step = 1e-10 }", "allowed per knob"),
        ("ctrl_latency_ns = [true]", "not true/false"),
        ("switch_hops = { range = [0.1, 0.4], integer = true }", "no integer"),
    ],
)
def test_bad_knobs_are_refused_before_allocating(cli, space_file, tmp_path, knob, contains):
    text = SMALL_SPACE.replace("ctrl_latency_ns = { range = [40, 250], steps = 8 }", knob)
    space = space_file(text)
    assert_refused(cli, tmp_path, "sweep", space, "--out", tmp_path / "out", "-q", contains=contains)


def test_integer_range_stays_inside_its_bounds(space_file):
    from dse.space import load_space
    from dse.sweep.evaluate import sample_inputs

    text = SMALL_SPACE.replace(
        "ctrl_latency_ns = { range = [40, 250], steps = 8 }",
        "switch_hops = { range = [0.5, 3.7], steps = 4, integer = true }",
    )
    space = load_space(space_file(text))
    knob = next(k for k in space.knobs if k.name == "switch_hops")
    assert knob.values.tolist() == [1.0, 2.0, 3.0]
    u = sample_inputs(space, "sobol", 0, 0, 1024)["switch_hops"]
    assert set(np.unique(u).tolist()) <= {1.0, 2.0, 3.0}


def test_negative_seed_in_a_space_is_refused(cli, space_file, tmp_path):
    space = space_file(SMALL_SPACE.replace("seed = 3", "seed = -1"))
    assert_refused(cli, tmp_path, "sweep", space, "--out", tmp_path / "out", "-q", contains="sweep.seed")


# ----------------------------------------------------------------------------- eval, optimize, validate
@pytest.mark.parametrize(
    "assignments, contains",
    [
        (["lanes=4", "lanes=16"], "given twice"),
        (["ctrl_latency_ns=100", "ctrl_latency_us=0.2"], "given twice"),
        (["ctrl_latency_ns=true"], "not true/false"),
    ],
)
def test_eval_refuses_ambiguous_input(cli, tmp_path, assignments, contains):
    assert_refused(cli, tmp_path, "eval", "cxl-expander", *assignments, contains=contains)


def test_calibration_folder_without_fits_is_refused(cli, tmp_path):
    (tmp_path / "cal").mkdir()
    assert_refused(cli, tmp_path, "--calibration", tmp_path / "cal", "eval", "cxl-expander", contains="no fit file")


@pytest.mark.parametrize("value", ["nan", "inf", "-5"])
def test_optimize_refuses_non_finite_inputs(cli, tmp_path, value):
    assert_refused(cli, tmp_path, "optimize", "cxl-expander-provision", f"bandwidth_gbps={value}", contains="bandwidth_gbps")


def test_optimize_badly_scaled_input_is_one_line(cli, tmp_path):
    assert_refused(cli, tmp_path, "optimize", "cxl-expander-provision", "bandwidth_gbps=1e30", contains="no answer")


def test_validate_claims_folder_and_nan_expected(cli, tmp_path):
    from dse.registry import project_root

    assert_refused(cli, tmp_path, "validate", "--claims", tmp_path, contains="not a file")
    text = (project_root() / "models" / "cxl_expander" / "claims.yaml").read_text()
    import re

    bad = tmp_path / "claims.yaml"
    bad.write_text(re.sub(r"expected: [^\n]+", "expected: .nan", text, count=1))
    assert_refused(cli, tmp_path, "validate", "--claims", bad, contains="finite")


# ----------------------------------------------------------------------------- folder lock, temp names
def test_a_locked_results_folder_is_refused(cli, space_file, tmp_path):
    from dse import store

    out = tmp_path / "out"
    space = space_file()
    with store.ResultsDir(out).lock():
        before = _files(tmp_path)
        code, _, err = cli("sweep", space, "--out", out, "-q")
        assert code == 2 and "another dse process" in err
        code, _, err = cli("sweep", space, "--out", out, "-q", "--resume")
        assert code == 2 and "another dse process" in err
        assert _files(tmp_path) == before
    code, _, _ = cli("sweep", space_file(), "--out", out, "-q")
    assert code == 0 and (out / "points.parquet").exists()


def test_finalize_never_touches_another_runs_temp_file(space_file, tmp_path):
    from dse import store
    from dse.space import load_space
    from dse.sweep.evaluate import evaluate_chunk
    from dse.sweep.run import finalize
    from dse.sweep.evaluate import Chunk

    space = load_space(space_file())
    results = store.ResultsDir(tmp_path / "out")
    results.parts_dir.mkdir(parents=True)
    store.write_parquet(results.part_path(0), evaluate_chunk(space, "grid", 0, Chunk(0, 0, 500)))
    foreign = results.path / ".points.parquet.tmp"  # the fixed name the old code used
    foreign.write_bytes(b"another run's half-written file")
    summary = finalize(space, results)
    assert summary["points"] == 500
    assert foreign.read_bytes() == b"another run's half-written file"


def test_manifest_is_not_written_over_an_unreadable_points_file(cli, space_file, tmp_path, monkeypatch):
    from dse import store

    def broken(path, rows):
        raise RuntimeError(f"{path} does not read back")

    monkeypatch.setattr(store, "verify_parquet", broken)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="does not read back"):
        cli("sweep", space_file(), "--out", out, "-q")
    assert not (out / "manifest.json").exists()
    assert (out / ".incomplete").exists()  # the saved parts stay for --resume
    monkeypatch.undo()
    code, _, _ = cli("sweep", space_file(), "--out", out, "-q", "--resume")
    assert code == 0 and (out / "manifest.json").exists()


def test_verify_parquet_reads_the_file_back(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dse import store

    good = tmp_path / "good.parquet"
    pq.write_table(pa.table({"a": np.arange(10)}), good)
    store.verify_parquet(good, 10)
    with pytest.raises(RuntimeError, match="rows"):
        store.verify_parquet(good, 11)
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(good.read_bytes()[:-20] + b"\0" * 20)
    with pytest.raises(RuntimeError, match="does not read back"):
        store.verify_parquet(bad, 10)


# ----------------------------------------------------------------------------- interrupts
def test_a_swallowed_interrupt_never_writes_a_result(cli, space_file, tmp_path, monkeypatch):
    """scipy once caught the KeyboardInterrupt of a Ctrl-C while loading Sobol direction
    numbers; the sweep went on and exited 0 with 100,000 identical points."""
    import dse.sweep.evaluate as ev

    real = ev.sample_inputs

    def swallowing(*a, **k):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            import time

            time.sleep(0.2)
        except KeyboardInterrupt:
            pass  # what the library did
        return real(*a, **k)

    monkeypatch.setattr(ev, "sample_inputs", swallowing)
    out = tmp_path / "out"
    code, _, err = cli("sweep", space_file(), "--strategy", "sobol", "--trials", "300", "--out", out, "-q")
    assert code == 130 and "interrupted" in err
    assert not (out / "points.parquet").exists() and not (out / "manifest.json").exists()


def test_swallowed_interrupt_between_chunks_keeps_saved_parts_only(space_file, tmp_path, monkeypatch):
    import dse.sweep.evaluate as ev
    from dse.sweep.run import SweepOptions, run_sweep

    real = ev.sample_inputs
    calls = []

    def swallowing(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            try:
                os.kill(os.getpid(), signal.SIGINT)
                import time

                time.sleep(0.2)
            except KeyboardInterrupt:
                pass
        return real(*a, **k)

    monkeypatch.setattr(ev, "sample_inputs", swallowing)
    out = tmp_path / "out"
    opts = SweepOptions(strategy="sobol", trials=300, out=out, progress=False, chunk_points=100)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(space_file(), opts)
    assert sorted(p.name for p in (out / ".parts").iterdir()) == ["part-0000000.parquet"]
    monkeypatch.undo()
    res = run_sweep(space_file(), SweepOptions(strategy="sobol", trials=300, out=out, progress=False, chunk_points=100, resume=True))
    import polars as pl

    ids = pl.read_parquet(res.path / "points.parquet")["point_id"].to_list()
    assert sorted(ids) == list(range(300))


def test_json_of_the_manifest_is_strict(cli, space_file, tmp_path):
    out = tmp_path / "out"
    assert cli("sweep", space_file(), "--out", out, "-q")[0] == 0
    json.loads((out / "manifest.json").read_text(), parse_constant=lambda c: pytest.fail(f"bare {c} in JSON"))


# ----------------------------------------------------------------------------- resume fingerprint
def test_resume_refuses_after_the_model_code_changed(cli, space_file, tmp_path, monkeypatch):
    """`--resume` after a model change or a recalibration silently mixed old and new chunks."""
    from dse import registry
    from dse.sweep.run import SweepOptions, run_sweep

    space = space_file()
    out = tmp_path / "out"
    import dse.sweep.evaluate as ev

    real = ev.evaluate_chunk
    calls = []

    def die_after_one(*a, **k):
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(ev, "evaluate_chunk", die_after_one)
    import dse.sweep.run as run

    monkeypatch.setattr(run, "evaluate_chunk", die_after_one)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(space, SweepOptions(out=out, progress=False, chunk_points=100))
    monkeypatch.setattr(run, "evaluate_chunk", real)
    real_fp = registry.code_fingerprint
    monkeypatch.setattr(registry, "code_fingerprint", lambda name: {**real_fp(name), "package_sha256": "edited"})
    before = _files(tmp_path)
    code, _, err = cli("sweep", space, "--out", out, "-q", "--resume")
    assert code == 2 and "code or fitted constants changed" in err, err
    assert _files(tmp_path) == before
    monkeypatch.setattr(registry, "code_fingerprint", real_fp)
    code, _, err = cli("sweep", space, "--out", out, "-q", "--resume")
    assert code == 0, err


def test_manifest_records_code_and_calibration_hashes(cli, space_file, tmp_path):
    out = tmp_path / "out"
    assert cli("sweep", space_file(), "--out", out, "-q")[0] == 0
    m = json.loads((out / "manifest.json").read_text())
    code = m["model"]["code"]
    assert len(code["package_sha256"]) == 16 and len(code["blocks_sha256"]) == 16
    assert set(m["calibration"]["files"]) == {"dram.toml", "flash.toml"}
    assert m["fingerprint"]["calibration_files"] == m["calibration"]["files"]
