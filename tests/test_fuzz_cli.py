"""Fuzzing the CLI with hypothesis: random bad space files, arguments and query strings.

Whatever the input, `dse` exits 0 or 2; for 2 it prints exactly one line on stderr, no
traceback, and leaves the folder as it was."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import SMALL_SPACE

FUZZ = settings(
    max_examples=int(os.environ.get("DSE_FUZZ_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,  # the same examples on every run: a CI failure reproduces here
)


def run_cli(args: list[str], cwd: Path) -> tuple[int, str, str]:
    from dse.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in args])
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


def snapshot(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*")}


def check(args: list[str], root: Path) -> int:
    before = snapshot(root)
    code, out, err = run_cli(args, root)
    assert code in (0, 2), (args, code, err[-2000:])
    assert "Traceback" not in err, (args, err)
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, err)
        assert snapshot(root) == before, (args, "a refused command changed files")
    return code


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A folder with a small finished study (``res``) and its space file."""
    from dse.sweep.run import SweepOptions, run_sweep

    root = tmp_path_factory.mktemp("fuzz")
    (root / "small.toml").write_text(SMALL_SPACE)
    run_sweep(root / "small.toml", SweepOptions(out=root / "res", progress=False))
    return root


# ----------------------------------------------------------------------------- space files
numbers = st.one_of(
    st.integers(-(10**15), 10**15),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, -1, 1e12, 1e-10, 0.5]),
)
toml_value = st.one_of(
    numbers.map(lambda v: "nan" if v != v else ("inf" if v == float("inf") else ("-inf" if v == -float("inf") else repr(v)))),
    st.sampled_from(['"ddr5_4800"', '"x"', "true", "false", "[]", "[true]", '["ddr4_3200", "ddr4_3200"]', "[4, 8]", '""']),
)
knob_names = st.sampled_from(["lanes", "media", "ctrl_latency_ns", "capacity_gib", "switch_hops", "read_frac", "bogus", ""])
range_opts = st.fixed_dictionaries(
    {},
    optional={
        "range": st.tuples(toml_value, toml_value).map(lambda t: f"[{t[0]}, {t[1]}]"),
        "log_range": st.tuples(toml_value, toml_value).map(lambda t: f"[{t[0]}, {t[1]}]"),
        "steps": toml_value,
        "step": toml_value,
        "integer": st.sampled_from(["true", "false", "1"]),
        "colour": toml_value,
    },
)


@st.composite
def space_text(draw) -> str:
    lines = [f'model = {draw(st.sampled_from(["cxl-expander", "nosuch", "", "1"])).__repr__().replace(chr(39), chr(34))}']
    lines.append("[knobs]")
    for _ in range(draw(st.integers(0, 3))):
        name = draw(knob_names) or '""'
        if draw(st.booleans()):
            opts = draw(range_opts)
            lines.append(f"{name} = {{ {', '.join(f'{k} = {v}' for k, v in opts.items())} }}")
        else:
            lines.append(f"{name} = {draw(toml_value)}")
    lines.append("[objectives]")
    lines.append(f'{draw(st.sampled_from(["usd_per_gib", "bw_gbps", "nosuch"]))} = "{draw(st.sampled_from(["min", "max", "up"]))}"')
    if draw(st.booleans()):
        lines.append("[constraints]")
        lines.append(f'c = "{draw(st.sampled_from(["bw_gbps > 1", "bw_gbps >", "__import__(1)", "x < 2", "1"]))}"')
    if draw(st.booleans()):
        lines.append("[sweep]")
        lines.append(f"{draw(st.sampled_from(['trials', 'seed', 'batch', 'strategy', 'nope']))} = {draw(toml_value)}")
    return "\n".join(lines) + "\n"


@FUZZ
@given(text=space_text())
def test_fuzz_space_files(workdir, text):
    f = workdir / "fuzz.toml"
    f.write_text(text)
    out = workdir / "fuzz_out"
    code = check(["sweep", "fuzz.toml", "--out", "fuzz_out", "-q", "--strategy", "sobol", "--trials", "16"], workdir)
    if code == 0:
        import shutil

        shutil.rmtree(out)


# ----------------------------------------------------------------------------- arguments
option_values = st.sampled_from(["-1", "0", "1", "3", "abc", "", "nan", "inf", "1e12", "1000000000000", "-3", "ü", "--"])


@st.composite
def sweep_args(draw) -> list[str]:
    args = ["sweep", draw(st.sampled_from(["small.toml", "res", "nosuch.toml", ".", "small.toml"]))]
    for _ in range(draw(st.integers(0, 4))):
        opt = draw(st.sampled_from(["--trials", "--seed", "--batch", "--workers", "--strategy", "--sampler", "--backend", "--address", "--storage", "--bogus"]))
        args += [opt, draw(option_values)]
    if draw(st.booleans()):
        args.append("--resume")
    # bounded work: never more than a few hundred points, never into the checkout
    return args + ["--out", draw(st.sampled_from(["fz", "res", "small.toml"])), "-q"]


@FUZZ
@given(args=sweep_args())
def test_fuzz_sweep_arguments(workdir, args):
    if "--trials" in args:  # a valid large count would just run; keep runs short
        i = args.index("--trials")
        if args[i + 1].isdigit() and 1000 < int(args[i + 1]) <= 10**10:
            args[i + 1] = "5"
    code = check(args, workdir)
    if code == 0 and (workdir / "fz").exists():
        import shutil

        shutil.rmtree(workdir / "fz")


@st.composite
def eval_args(draw) -> list[str]:
    cmd = draw(st.sampled_from(["eval", "describe", "optimize", "validate"]))
    name = draw(st.sampled_from(["cxl-expander", "espresso", "iks", "nosuch", "cxl-expander-provision", ""]))
    keys = ["lanes", "media", "ctrl_latency_ns", "ctrl_latency_us", "flit_mode", "link_gen", "capacity_gib", "bandwidth_gbps", "x"]
    values = ["4", "16", "68B", "256B", "pcie6", "nan", "inf", "-1", "1e30", "true", "ddr5_4800", "0.2us", "3GB", "", "a,b", "1,2"]
    args = [cmd, name]
    for _ in range(draw(st.integers(0, 3))):
        args.append(f"{draw(st.sampled_from(keys))}={draw(st.sampled_from(values))}")
    if draw(st.booleans()):
        args.append("--json")
    return args


@FUZZ
@given(args=eval_args())
def test_fuzz_model_commands(workdir, args):
    if args[0] == "validate" and not args[1]:
        args = ["validate", "cxl-expander"]  # all models' claims: slow, and covered elsewhere
    check(args, workdir)


# ----------------------------------------------------------------------------- queries
expr_text = st.text(alphabet="abcdefgilnoprstuw_ <>=!+-*/%().,'\"0123456789e[]{}:", max_size=80)
columns = st.sampled_from(["bw_gbps", "usd_per_gib", "media", "lanes", "nosuch", "loaded_read_latency_ns", ""])


@FUZZ
@given(where=expr_text, col=columns, top=st.sampled_from(["-1", "0", "3", "x"]))
def test_fuzz_query_strings(workdir, where, col, top):
    check(["query", "res", "--where", where, "--minimize", col, "--top", top], workdir)
    check(["query", "res", "--columns", f"{col},{where}"], workdir)
