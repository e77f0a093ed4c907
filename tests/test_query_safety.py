"""`dse query` on damaged folders, oversized expressions, bad numbers and garbage: one
line and exit 2, never a traceback."""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest

from dse.errors import DseError
from dse.expr import MAX_CHARS, MAX_DEPTH, MAX_NODES, Expr




def one_line_error(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)


# ------------------------------------------------------------------ damaged folders
def _truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


DAMAGE = {
    "points truncated": ("points.parquet", _truncate, []),
    "points garbage": ("points.parquet", lambda p: p.write_bytes(b"garbage" * 50), []),
    "points empty": ("points.parquet", lambda p: p.write_bytes(b""), []),
    "pareto garbage": ("pareto.parquet", lambda p: p.write_bytes(b"PAR1" + b"\x00" * 60), ["--pareto"]),
    "pareto missing": ("pareto.parquet", lambda p: p.unlink(), ["--pareto"]),
    "manifest invalid": ("manifest.json", lambda p: p.write_text("{not json"), []),
    "manifest a string": ("manifest.json", lambda p: p.write_text('"hello"'), []),
    "manifest without objectives": (
        "manifest.json",
        lambda p: p.write_text(json.dumps({k: v for k, v in json.loads(p.read_text()).items() if k != "objectives"})),
        [],
    ),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_results_folder_is_one_line_naming_the_file(cli, res, case):
    name, damage, args = DAMAGE[case]
    damage(res / name)
    code, _, err = cli("query", res, *args)
    one_line_error(code, err, name)
    assert "unreadable" in err or "no such file" in err
    assert "re-run the sweep" in err


def test_damage_inside_the_data_is_one_line_naming_the_file(cli, res):
    # a readable footer over damaged pages: the read fails, not the schema
    p = res / "points.parquet"
    data = bytearray(p.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little") + 8
    data[4 : len(data) - footer] = b"\xa5" * (len(data) - footer - 4)
    p.write_bytes(bytes(data))
    code, _, err = cli("query", res, "--top", "0", "--minimize", "usd_per_gib")
    one_line_error(code, err, "points.parquet", "unreadable")


# ------------------------------------------------------------------ oversized expressions
HUGE = {
    "14000 terms": " + ".join(["x"] * 14000),
    "5000 deep parens": "(" * 5000 + "1" + ")" * 5000,
    "1900 unary minus": "-" * 1900 + "lanes",
    "500 terms": " + ".join(["lanes"] * 300),
    "400 ands": " and ".join(["lanes > 1"] * 150),
    "chained comparison": " < ".join(["lanes"] * 400),
    "dotted": ".".join(["a"] * 600),
    "power tower": "**".join(["2"] * 600),
    "null byte": "lanes\x00 > 1",
    "lone surrogate": "lanes > '\ud800'",
    "huge integer": "lanes < " + "9" * 30,
}


@pytest.mark.parametrize("case", sorted(HUGE))
def test_oversized_or_unparsable_expressions_are_one_line(cli, res, case):
    for opt in ("--where", "--minimize"):
        code, _, err = cli("query", res, opt, HUGE[case])
        one_line_error(code, err, opt)
        assert len(err) < 800


def test_the_bounds_are_stated_and_expressions_within_them_work():
    with pytest.raises(DseError, match=f"at most {MAX_CHARS:,} are allowed"):
        Expr("x" * (MAX_CHARS + 1))
    with pytest.raises(DseError, match=f"at most {MAX_DEPTH} levels"):
        Expr("(" * 120 + "x" + " + x)" * 120)  # nesting counted through the operators
    with pytest.raises(DseError, match=f"at most {MAX_NODES:,}"):
        Expr("min(" + ",".join(["x"] * (MAX_CHARS // 2 - 3)) + ")")  # a Name is two nodes (name, context)
    # just inside the bounds: numpy and Polars agree, no recursion trouble
    text = " + ".join(["a"] * (MAX_DEPTH - 5))
    e = Expr(text)
    df = pl.DataFrame({"a": [1.0, 2.0]})
    assert e.evaluate({"a": df["a"].to_numpy()}).tolist() == df.select(e.to_polars().alias("r"))["r"].to_list()
    assert Expr(" or ".join(f"a == {i}" for i in range(40))).names == {"a"}


# ------------------------------------------------------------------ numbers
def test_negative_top_is_refused_and_zero_means_all(cli, res):
    for top in ("-1", "-100"):
        code, _, err = cli("query", res, "--top", top)
        one_line_error(code, err, "--top")
    feasible = pl.read_parquet(res / "points.parquet").filter(pl.col("feasible")).height
    for top in ("0", str(10**30)):
        code, out, err = cli("query", res, "--top", top, "--format", "csv")
        assert code == 0, err
        assert len(out.strip().splitlines()) == feasible + 1


def test_columns_edge_cases_are_one_line(cli, res):
    for cols, words in [("lanes,lanes", "twice"), ("lanes,,bw_gbps", "no column ''"), ("nosuch", "no column 'nosuch'")]:
        code, _, err = cli("query", res, "--columns", cols)
        one_line_error(code, err, "--columns", words)
    code, out, err = cli("query", res, "--columns", " lanes , bw_gbps ", "--format", "csv", "--top", "2")
    assert code == 0 and out.splitlines()[0] == "lanes,bw_gbps", err


# ------------------------------------------------------------------ fuzz
TOKENS = [
    "lanes", "media", "bw_gbps", "usd_per_gib", "loaded_read_latency_ns", "feasible", "nosuch", "a.b", "x.__class__",
    "+", "-", "*", "/", "//", "%", "**", "<", "<=", ">", ">=", "==", "!=", "=", "and", "or", "not", "in", "&", "|",
    "~", "^", "(", ")", "[", "]", "{", "}", ",", ":", ";", ".", "'", '"', "'ddr5_4800'", "0", "1", "-1", "1e308",
    "1e-308", "nan", "inf", "9" * 25, "0x1f", "1_000", "True", "None", "abs", "sqrt", "log", "exp", "min", "max",
    "mean", "gmean", "median", "sum", "lambda", "__import__", "open", "if", "else", "for", "@", "$", "\\", "\n",
    "\t", "\x00", "é", "μs", "🙂", "\ud800", "  ",
]


def _garbage(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.6:
        return " ".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 12)))
    if kind < 0.85:
        return "".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 20)))
    return "".join(chr(rng.randint(1, 0x2FFF)) for _ in range(rng.randint(1, 40)))


def test_fuzz_query_options_give_a_result_or_one_error_line(res, capsys):
    from dse.cli import main

    rng = random.Random(20240611)
    outcomes = {0: 0, 2: 0}
    for i in range(200):
        args = ["query", str(res)]
        for opt in rng.sample(["--where", "--minimize", "--maximize", "--columns"], rng.randint(1, 3)):
            args += [opt, _garbage(rng)]
        if rng.random() < 0.3:
            args += ["--top", str(rng.choice([-5, -1, 0, 1, 3, 10**20]))]
        if rng.random() < 0.2:
            args += [rng.choice(["--pareto", "--all"])]
        args += ["--format", rng.choice(["csv", "json", "table"])]
        try:
            code = main(args)
        except BaseException as exc:  # noqa: BLE001 - any escape is the failure being looked for
            pytest.fail(f"run {i}: {args[2:]!r} raised {type(exc).__name__}: {exc}")
        err = capsys.readouterr().err
        assert code in (0, 2), (args[2:], code, err)
        if code == 2:
            assert err.count("\n") == 1 and err.startswith("error: "), (args[2:], err)
        assert "Traceback" not in err, (args[2:], err)
        outcomes[code] += 1
    assert outcomes[2] > 100  # most garbage is refused ...
    assert outcomes[0] > 0  # ... and some of it is a valid query
