"""Comparison spaces: several architectures of one workload family in one result set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from dse import registry
from dse.errors import DseError
from dse.sweep.run import SweepOptions, run_sweep

TOYS = {"toy-fast": "kv_toys:FastBox", "toy-slow": "kv_toys:SlowBox", "toy-none": "kv_toys:NoFamily"}

SPACE = """
description = "toy object stores"
[compare]
family = "kv-object"
[workload]
value_b = [512, 4096, 65536]
[arch.fast]
model = "toy-fast"
knobs = { drives = [1, 2, 4] }
[arch.slow]
model = "toy-slow"
knobs = { drives = [1, 8, 16], design = ["plain", "fancy"] }
paper_design = { source = "toy article", drives = 8, design = "plain" }
[objectives]
usd_per_work = "min"
op_latency_us = "min"
"""


@pytest.fixture()
def toys(monkeypatch: pytest.MonkeyPatch) -> None:
    import models

    monkeypatch.syspath_prepend(str(Path(__file__).parent / "toys"))
    monkeypatch.setattr(models, "REGISTRY", {**models.REGISTRY, **TOYS})
    registry.refresh()
    yield
    registry.refresh()


def _write(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "cmp.toml"
    f.write_text(text)
    return f


def _sweep(tmp_path: Path, text: str = SPACE) -> Path:
    out = tmp_path / "out"
    run_sweep(_write(tmp_path, text), SweepOptions(out=out, progress=False))
    return out


def test_comparison_joins_archs_with_an_arch_column_and_a_joint_front(toys: None, tmp_path: Path) -> None:
    out = _sweep(tmp_path)
    points = pl.read_parquet(out / "points.parquet")
    assert points["arch"].value_counts().sort("arch").rows() == [("fast", 9), ("slow", 18)]
    assert {"value_b", "drives", "design", "usd_per_work", "op_latency_us", "tco_usd", "feasible"} <= set(points.columns)
    assert points.filter(pl.col("arch") == "fast")["design"].null_count() == 9  # a knob the arch does not sweep
    front = pl.read_parquet(out / "pareto.parquet")
    # the fast box wins on latency, the slow one on cost: both are on the joint front
    assert set(front["arch"]) == {"fast", "slow"}
    best_cost = points.filter(pl.col("feasible")).sort("usd_per_work").row(0, named=True)
    assert best_cost["arch"] == "slow"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kind"] == "comparison" and manifest["family"]["name"] == "kv-object"
    assert manifest["pareto_by_arch"]["fast"] + manifest["pareto_by_arch"]["slow"] == len(front)
    # per-architecture results with their own fronts, and the paper design assessed there
    sub = json.loads((out / "arch" / "slow" / "manifest.json").read_text())
    assert sub["paper_design"]["design"]["drives"] == 8
    assert sub["paper_design"]["on_front"] is False  # fancy with 8 drives dominates it
    assert (out / "arch" / "fast" / "pareto.parquet").exists()


def test_comparison_resume_returns_the_finished_study(toys: None, tmp_path: Path) -> None:
    out = _sweep(tmp_path)
    before = (out / "points.parquet").read_bytes()
    res = run_sweep(tmp_path / "cmp.toml", SweepOptions(out=out, progress=False, resume=True))
    assert res.manifest["kind"] == "comparison"
    assert (out / "points.parquet").read_bytes() == before
    with pytest.raises(DseError, match="already exists"):
        run_sweep(tmp_path / "cmp.toml", SweepOptions(out=out, progress=False))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('model = "toy-slow"', 'model = "toy-none"'), "arch.slow.model: toy-none serves no workload family, not kv-object"),
        (("value_b = [512, 4096, 65536]", "context_tokens = [1024]"), "workload.context_tokens: not a kv-object workload knob"),
        (('usd_per_work = "min"', 'amat_ns = "min"'), "objectives.amat_ns: not a common metric"),
        (("drives = [1, 2, 4]", "drivez = [1]"), "arch.fast.knobs.drivez: model toy-fast has no parameter"),
        (('family = "kv-object"', 'family = "kv"'), "compare.family: unknown workload family 'kv'"),
        (("knobs = { drives = [1, 2, 4] }", "knobs = { value_b = [1] }"), "arch.fast: value_b is the shared workload knob"),
    ],
)
def test_bad_comparison_is_one_line_and_writes_nothing(toys: None, tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    out = tmp_path / "out"
    with pytest.raises(DseError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_sweep(_write(tmp_path, SPACE.replace(*edit)), SweepOptions(out=out, progress=False))
    assert not out.exists()


def test_comparison_refuses_optuna(toys: None, tmp_path: Path) -> None:
    with pytest.raises(DseError, match="a comparison sweeps by"):
        run_sweep(_write(tmp_path, SPACE), SweepOptions(out=tmp_path / "o", progress=False, strategy="optuna"))
    assert not (tmp_path / "o").exists()


def test_compare_names_the_winner_per_workload_point_and_the_margin(toys: None, tmp_path: Path) -> None:
    from dse.compare_report import report

    out = _sweep(tmp_path)
    rep = report(out)
    points = pl.read_parquet(out / "points.parquet").filter(pl.col("feasible"))
    wins = {(r["value_b"], r["objective"]): r for r in rep["wins"]}
    assert len(wins) == 3 * 2
    for vb in (512, 4096, 65536):
        at = points.filter(pl.col("value_b") == vb)
        for metric in ("usd_per_work", "op_latency_us"):
            best = at.group_by("arch").agg(pl.col(metric).min()).sort(metric)
            row = wins[(vb, metric)]
            assert row["winner"] == best["arch"][0] and row["runner_up"] == best["arch"][1]
            assert row["margin_x"] == pytest.approx(best[metric][1] / best[metric][0])
    assert wins[(4096, "op_latency_us")]["winner"] == "fast"
    assert wins[(4096, "usd_per_work")]["winner"] == "slow"
    assert rep["paper_designs"]["slow"]["dominated_by"] >= 1


def test_compare_cli_prints_json_and_refuses_a_plain_study(toys: None, tmp_path: Path, cli: Any) -> None:
    out = _sweep(tmp_path)
    code, stdout, _ = cli("compare", out, "--json")
    assert code == 0 and json.loads(stdout)["kind"] == "comparison"
    code, stdout, _ = cli("compare", out)
    assert "who wins where" in stdout and "paper design (toy article) is dominated" in stdout
    plain = tmp_path / "plain"
    run_sweep(_write(tmp_path, 'model = "toy-fast"\n[knobs]\ndrives = [1, 2]\n[objectives]\nusd_per_work = "min"\n'),
              SweepOptions(out=plain, progress=False))
    code, _, stderr = cli("compare", plain)
    assert code == 2 and "nothing to compare" in stderr


def test_dashboard_has_a_comparison_page_with_the_joint_front_and_the_winners(toys: None, tmp_path: Path) -> None:
    from dse.dashboard.build import build_site

    out = _sweep(tmp_path)
    pages = build_site([out], tmp_path / "site", calibration=False, progress=False)
    page = next(p for p in pages if p.name.startswith("study-"))
    html = page.read_text()
    assert "joint Pareto front" in html and "who wins on usd per work" in html
    assert "The papers&#x27; designs" in html or "The papers' designs" in html
    assert "dominated by" in html


def test_reproduce_a_named_comparison_validates_each_architecture_model(toys: None, tmp_path: Path) -> None:
    from dse.commands.reproduce import models_of

    out = _sweep(tmp_path)
    assert sorted(models_of(json.loads((out / "manifest.json").read_text()))) == ["toy-fast", "toy-slow"]


def test_compare_uq_says_how_sure_each_win_is(toys: None, tmp_path: Path, cli: Any) -> None:
    from dse.compare_report import report

    out = _sweep(tmp_path)
    rep = report(out, uq=64, seed=1, width=0.3)
    rows = {(r["value_b"], r["objective"]): r for r in rep["wins"]}
    # the fast box's latency edge (20 vs 90 us fixed costs) survives any +-30 % draw
    assert rows[(4096, "op_latency_us")]["p_win"] == 1.0
    for r in rep["wins"]:
        assert 0.0 <= r["p_win"] <= 1.0 and r["p_win"] + (r["p_win_runner_up"] or 0.0) <= 1.0 + 1e-12
    code, _, err = cli("compare", out, "--uq", "1")
    assert code == 2 and "--uq 1" in err
    # the comparison file changed after the sweep: refused, not silently re-evaluated
    (tmp_path / "cmp.toml").write_text(SPACE + "\n# edited\n")
    code, _, err = cli("compare", out, "--uq", "8")
    assert code == 2 and "changed since the sweep" in err
