"""Claims files, `dse validate`, the pilot's claims, the CLI's one-line errors,
`dse optimize` and `dse describe/eval/models`."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from dse.claims import evaluate_claims

GOOD = """
model: cxl-expander
claims:
  - id: bw-x8
    source: test
    scenarios:
      a: {lanes: 8}
      b: {lanes: 16}
    expr: "b.link_bw_gbps / a.link_bw_gbps"
    expected: 2.0
    tolerance: 0.01
  - id: sweep-mean
    source: test
    headline: false
    scenarios:
      s: {lanes: [4, 8, 16]}
    expr: "max(s.link_bw_gbps) / min(s.link_bw_gbps)"
    expected: 4.0
    tolerance: 0.01
"""


def test_claims_file_from_anywhere(tmp_path, cli):
    f = tmp_path / "c.yaml"
    f.write_text(GOOD)
    res = evaluate_claims(f)
    assert [r.passed for r in res] == [True, True]
    assert res[0].value == pytest.approx(2.0)
    code, out, _ = cli("validate", "--claims", f)
    assert code == 0 and "bw-x8" in out and "headline claims: 1/1" in out


def test_failing_headline_claim_exits_nonzero(tmp_path, cli):
    f = tmp_path / "c.yaml"
    f.write_text(GOOD.replace("expected: 2.0", "expected: 3.0"))
    code, out, _ = cli("validate", "--claims", f)
    assert code == 1 and "FAIL" in out
    # a failing non-headline claim only fails with --strict
    f.write_text(GOOD.replace("expected: 4.0", "expected: 9.0"))
    assert cli("validate", "--claims", f)[0] == 0
    assert cli("validate", "--claims", f, "--strict")[0] == 1


@pytest.mark.parametrize(
    "text, words",
    [
        (GOOD.replace("expr:", "exprr:", 1), "claims[bw-x8]"),
        (GOOD.replace("lanes: 8}", "lanes: 9}", 1), "allowed: one of 4, 8, 16"),
        (GOOD.replace("b.link_bw_gbps", "c.link_bw_gbps", 1), "unknown scenario value"),
        (GOOD.replace("id: sweep-mean", "id: bw-x8"), "repeated"),
        ("claims: [", "invalid YAML"),
    ],
)
def test_bad_claims_files(tmp_path, cli, text, words):
    f = tmp_path / "c.yaml"
    f.write_text(text)
    code, _, err = cli("validate", "--claims", f)
    assert code == 2 and words in err and err.count("\n") == 1


def test_pilot_headline_claims_hold(cli):
    from dse.claims import claims_files

    (_, f), = claims_files("cxl-expander")
    res = evaluate_claims(f)
    assert all(r.passed for r in res if r.headline)
    by = {r.id: r.value for r in res}
    assert by["asic-latency-vs-local-ddr"] == pytest.approx(2.18, rel=0.10)
    assert by["fpga-latency-vs-local-ddr"] == pytest.approx(2.88, rel=0.10)
    assert by["cz120-bandwidth"] == pytest.approx(36.0, rel=0.10)
    code, out, _ = cli("validate", "cxl-expander", "--json")
    assert code == 0 and {d["id"] for d in json.loads(out)} >= set(by)


def test_describe_eval_models(cli):
    code, out, _ = cli("describe", "cxl-expander", "--json")
    d = json.loads(out)
    assert code == 0 and all(p["source"] for p in d["params"])
    code, out, _ = cli("eval", "cxl-expander", "lanes=16", "ctrl_latency_ns=0.1us", "--json")
    m = json.loads(out)
    assert code == 0 and m["idle_read_latency_ns"] > m["local_dram_latency_ns"]
    code, out, _ = cli("models", "--json")
    assert code == 0 and "cxl-expander" in {r["name"] for r in json.loads(out)}


@pytest.mark.parametrize(
    "args, words",
    [
        (["eval", "nosuch"], "unknown model"),
        (["describe", "cxl-expandr"], "did you mean: cxl-expander"),
        (["eval", "cxl-expander", "lanes=12"], "allowed: one of 4, 8, 16"),
        (["eval", "cxl-expander", "ctrl_latency_ns=9999"], "out of bounds"),
        (["eval", "cxl-expander", "ctrl_latency_ns=5GB/s"], "takes ns"),
        (["eval", "cxl-expander", "lanes"], "expected key=value"),
        (["sweep", "spaces/nosuch.toml"], "no such space file"),
        (["optimize", "nosuch"], "unknown problem"),
        (["optimize", "cxl-expander-provision", "bogus=1"], "no input 'bogus'"),
        (["optimize", "cxl-expander-provision", "max_latency_ns=50"], "no expander meets"),
        (["check-reference", "tape", "x.csv"], "unknown block"),
    ],
)
def test_cli_errors_are_one_line_exit_2(cli, args, words):
    code, _, err = cli(*args)
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and words in err, err


@pytest.mark.parametrize(
    "args, words",
    [(["sweep", "--bogus"], "No such option: --bogus"), (["check-reference"], "Missing argument"), (["eval"], "Missing argument")],
)
def test_usage_errors_are_one_line_naming_the_help(cli, args, words):
    code, _, err = cli(*args)
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert words in err and "--help`" in err and "Traceback" not in err, err


def test_optimize_provision_is_optimal_and_meets_targets(cli):
    from dse.optimize import solve

    sol = solve("cxl-expander-provision", {"capacity_gib": 3000, "bandwidth_gbps": 250, "host_lanes": 64, "max_devices": 12})
    s = sol.summary
    assert s["total capacity (GiB)"] >= 3000 and s["total bandwidth (GB/s)"] >= 250
    assert s["lanes used"] <= 64 and s["devices"] <= 12
    assert s["LP relaxation bound (USD)"] <= sol.objective + 1e-6
    if isinstance(s["greedy heuristic (USD)"], float):
        assert s["greedy heuristic (USD)"] >= sol.objective - 1e-6
    code, out, _ = cli("optimize", "cxl-expander-provision", "capacity_gib=1024", "bandwidth_gbps=50", "--json")
    assert code == 0 and json.loads(out)["status"] == "optimal"
    code, _, err = cli("optimize", "cxl-expander-provision", "capacity_gib=100000", "max_devices=2")
    assert code == 2 and "infeasible" in err


def test_help_is_fast_and_lazy():
    """`dse --help` must not import the heavy libraries."""
    code = (
        "import sys; from dse.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('ray', 'optuna', 'cvxpy', 'altair', 'polars', 'scipy', 'pyarrow', 'moocore') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    assert out.stdout.strip().splitlines()[-1] == "HEAVY=", f"heavy imports at --help: {out.stdout[-300:]}"
