"""`dse dashboard build` never deletes what it did not write, and bad input or a damaged
results folder is one line and exit 2 with nothing touched."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest





@pytest.fixture
def fast(monkeypatch):
    """Skip the slow parts of a build that these tests do not look at: the 2 MB Vega
    bundle, every model's claims and the model figures."""
    import dse.claims
    import dse.dashboard.build as build

    monkeypatch.setattr(build, "_write_bundle", lambda path: path.write_text("/* bundle */", encoding="utf-8"))
    monkeypatch.setattr(build, "_models_with_claims", lambda: set())
    monkeypatch.setattr(build, "add_model_figures", lambda page, model: None)
    monkeypatch.setattr(dse.claims, "evaluate_claims", lambda f: [])


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` (folders as None) with its bytes."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames:
            out[os.path.relpath(os.path.join(dirpath, n), root)] = None
        for n in filenames:
            p = os.path.join(dirpath, n)
            out[os.path.relpath(p, root)] = None if os.path.islink(p) else Path(p).read_bytes()
    return out


def one_line_error(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)


def build(cli, *args):
    return cli("dashboard", "build", "--no-calibration", *map(str, args))


# ------------------------------------------------------------------ refused --out
def test_out_that_is_the_results_folder_is_refused_and_nothing_deleted(cli, res, tmp_path):
    before = snapshot(tmp_path)
    code, _, err = build(cli, res, "--out", res)
    one_line_error(code, err, "results folder")
    assert snapshot(tmp_path) == before
    assert {"points.parquet", "pareto.parquet", "manifest.json"} <= {p.name for p in res.iterdir()}


@pytest.mark.parametrize("marker", ["manifest.json", "points.parquet", ".incomplete", ".parts"])
def test_out_that_is_another_results_folder_is_refused(cli, res, tmp_path, marker):
    other = tmp_path / "other"
    other.mkdir()
    (other / marker).mkdir() if marker == ".parts" else (other / marker).write_text("x")
    before = snapshot(tmp_path)
    code, _, err = build(cli, res, "--out", other)
    one_line_error(code, err, "results folder", marker)
    assert snapshot(tmp_path) == before


def test_out_that_is_a_users_folder_is_refused_and_the_file_kept(cli, res, tmp_path):
    user = tmp_path / "mine"
    user.mkdir()
    (user / "notes.txt").write_text("my notes")
    before = snapshot(tmp_path)
    code, _, err = build(cli, res, "--out", user)
    one_line_error(code, err, "not empty", ".dse-site")
    assert snapshot(tmp_path) == before


def test_out_that_is_a_file_is_refused_and_not_renamed(cli, res, tmp_path):
    f = tmp_path / "some" / "file.txt"
    f.parent.mkdir()
    f.write_text("keep me")
    before = snapshot(tmp_path)
    for out in (f, f / "site"):
        code, _, err = build(cli, res, "--out", out)
        one_line_error(code, err, "is a file")
    assert snapshot(tmp_path) == before


def test_out_that_is_the_current_folder_or_above_an_input_is_refused(cli, res, tmp_path, monkeypatch):
    monkeypatch.chdir(res)
    before = snapshot(tmp_path)
    for out in (".", "..", str(tmp_path), "/"):
        code, _, err = build(cli, res, "--out", out)
        one_line_error(code, err, f"--out {out} ")
    assert snapshot(tmp_path) == before
    monkeypatch.chdir(tmp_path.parent)
    code, _, err = build(cli, res, "--out", tmp_path)  # holds the input
    one_line_error(code, err, "holds the results folder")
    assert snapshot(tmp_path) == before


def test_out_that_is_a_symbolic_link_is_refused(cli, res, tmp_path):
    (tmp_path / "target").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "target")
    before = snapshot(tmp_path)
    code, _, err = build(cli, res, "--out", tmp_path / "link")
    one_line_error(code, err, "symbolic link")
    assert snapshot(tmp_path) == before


# ------------------------------------------------------------------ building and replacing
def test_a_site_carries_a_marker_and_a_rebuild_replaces_only_it(cli, res, tmp_path, fast):
    site = tmp_path / "new" / "deep" / "site"
    code, _, err = build(cli, res, "--out", site)
    assert code == 0, err
    marker = json.loads((site / ".dse-site").read_text())
    assert set(marker["files"]) == {"index.html", "study-s.html", "assets/vega-bundle.js", "assets/study-s-pareto.csv",
                                    "assets/study-s-pareto.parquet"}
    (site / "index.html").write_text("edited by hand")  # a file it wrote: replaced
    code, _, err = build(cli, res, "--out", site)
    assert code == 0, err
    assert "cxl-dse studies" in (site / "index.html").read_text()
    assert sorted(p.name for p in site.parent.iterdir()) == ["site"]  # no temp or backup left
    # a file the build did not write: refused, and the site is left as it was
    (site / "assets" / "logo.svg").write_text("<svg/>")
    before = snapshot(tmp_path)
    code, _, err = build(cli, res, "--out", site)
    one_line_error(code, err, "assets/logo.svg", "did not write")
    assert snapshot(tmp_path) == before


def test_an_empty_folder_is_accepted(cli, res, tmp_path, fast):
    (tmp_path / "empty").mkdir()
    code, _, err = build(cli, res, "--out", tmp_path / "empty")
    assert code == 0, err
    assert (tmp_path / "empty" / ".dse-site").is_file() and (tmp_path / "empty" / "index.html").is_file()


def test_a_site_from_before_the_marker_is_recognized_by_its_shape(cli, res, tmp_path, fast):
    old = tmp_path / "site"
    (old / "assets").mkdir(parents=True)
    (old / "assets" / "vega-bundle.js").write_text("/* old */")
    (old / "index.html").write_text("<title>cxl-dse studies · cxl-dse</title>")
    (old / "study-x.html").write_text("old study")
    code, _, err = build(cli, res, "--out", old)
    assert code == 0, err
    assert not (old / "study-x.html").exists() and (old / ".dse-site").exists()
    # the same shape with someone else's index.html is not ours
    other = tmp_path / "other"
    other.mkdir()
    (other / "index.html").write_text("<title>my page</title>")
    before = snapshot(tmp_path)
    code, _, err = build(cli, res, "--out", other)
    one_line_error(code, err, "not empty")
    assert snapshot(tmp_path) == before


def test_a_failed_build_keeps_the_previous_site_and_leaves_no_temp(res, tmp_path, fast, monkeypatch):
    import dse.dashboard.build as build_mod

    site = tmp_path / "out" / "site"
    build_mod.build_site([res], site, calibration=False, progress=False)
    before = snapshot(tmp_path)

    def boom(*a, **k):
        raise RuntimeError("boom")

    with monkeypatch.context() as m:
        m.setattr(build_mod, "study_page", boom)
        with pytest.raises(RuntimeError):
            build_mod.build_site([res], site, calibration=False, progress=False)
    assert snapshot(tmp_path) == before

    # the final rename fails: the previous site is put back, nothing else is left
    real_rename = os.rename

    def failing_rename(src, dst):
        if Path(src).name.endswith(".tmp") and Path(dst) == site:
            raise OSError(28, "No space left on device", str(src), None, str(dst))
        return real_rename(src, dst)

    with monkeypatch.context() as m:
        m.setattr(build_mod.os, "rename", failing_rename)
        with pytest.raises(Exception) as info:
            build_mod.build_site([res], site, calibration=False, progress=False)
    from dse.errors import DseError

    assert isinstance(info.value, DseError) and "No space left" in str(info.value)
    assert snapshot(tmp_path) == before


def test_a_failed_build_into_a_new_path_removes_the_folders_it_made(res, tmp_path, fast, monkeypatch):
    import dse.dashboard.build as build_mod

    monkeypatch.setattr(build_mod, "study_page", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("boom")))
    before = snapshot(tmp_path)
    with pytest.raises(RuntimeError):
        build_mod.build_site([res], tmp_path / "a" / "b" / "site", calibration=False, progress=False)
    assert snapshot(tmp_path) == before


# ------------------------------------------------------------------ damaged results folders
def _truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


DAMAGE = {
    "points truncated": ("points.parquet", _truncate),
    "points garbage": ("points.parquet", lambda p: p.write_bytes(b"not a parquet file\n" * 40)),
    "points empty": ("points.parquet", lambda p: p.write_bytes(b"")),
    "points a folder": ("points.parquet", lambda p: (p.unlink(), p.mkdir())),
    "pareto garbage": ("pareto.parquet", lambda p: p.write_bytes(b"\x00" * 100)),
    "pareto missing": ("pareto.parquet", lambda p: p.unlink()),
    "manifest invalid": ("manifest.json", lambda p: p.write_text('{"space": {"name": ')),
    "manifest not utf-8": ("manifest.json", lambda p: p.write_bytes(b"\xff\xfe{}")),
    "manifest a list": ("manifest.json", lambda p: p.write_text("[1, 2]")),
    "manifest without rows": (
        "manifest.json",
        lambda p: p.write_text(json.dumps({k: v for k, v in json.loads(p.read_text()).items() if k != "rows"})),
    ),
    "manifest knobs not a list": (
        "manifest.json",
        lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "knobs": 3})),
    ),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_results_folder_is_one_line_naming_the_file(cli, res, tmp_path, case):
    name, damage = DAMAGE[case]
    damage(res / name)
    before = snapshot(tmp_path)
    code, _, err = build(cli, res, "--out", tmp_path / "site")
    one_line_error(code, err, name)
    assert "unreadable" in err or "no such file" in err
    assert snapshot(tmp_path) == before


def test_a_manifest_that_does_not_match_the_tables_is_one_line(cli, res, tmp_path):
    m = json.loads((res / "manifest.json").read_text())
    (res / "manifest.json").write_text(json.dumps({**m, "knobs": m["knobs"] + ["no_such_knob"]}))
    code, _, err = build(cli, res, "--out", tmp_path / "site")
    one_line_error(code, err, "no_such_knob", "points.parquet")
    (res / "manifest.json").write_text(json.dumps({**m, "model": {**m["model"], "name": "nosuch"}}))
    code, _, err = build(cli, res, "--out", tmp_path / "site")
    one_line_error(code, err, "'nosuch' is not registered", "manifest.json")
    assert not (tmp_path / "site").exists()


def test_study_names_cannot_leave_the_site_or_its_script(cli, res, tmp_path, fast):
    m = json.loads((res / "manifest.json").read_text())
    m["space"]["name"] = "../../x</script><script>alert(1)"
    m.pop("calibration"), m.pop("git"), m.pop("created")  # informational: shown as '?'
    (res / "manifest.json").write_text(json.dumps(m))
    code, _, err = build(cli, res, "--out", tmp_path / "site")
    assert code == 0, err
    files = {p.name for p in (tmp_path / "site").iterdir()}
    assert any(f.startswith("study-") and "/" not in f for f in files)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res", "site"]
    for f in (tmp_path / "site").glob("*.html"):
        assert "<script>alert" not in f.read_text()


def test_inline_chart_data_cannot_close_the_script():
    from dse.dashboard.html import Page

    page = Page("t", "t.html")
    page.chart({"data": {"values": [{"media": "</script><script>alert(1)</script>"}]}})
    text = page.render([])
    assert text.count("</script>") == 2  # the bundle's tag and the page's own
    assert "<script>alert" not in text


def test_claims_chart_keeps_every_value_positive_on_its_log_axis():
    """An interval from 0 (bandslim's [0, 0.999]) or a negative expectation put values <= 0
    on the log axis: 16-19 console errors per page and dots piled at the edge."""
    from dse.claims import ClaimResult
    from dse.dashboard.build import claims_chart

    def claim(expected, value, tol="±10%"):
        return ClaimResult("c", "m", "s", "", True, expected, value, 0.0, tol, True, "", "")

    chart = claims_chart([claim((0.0, 0.999), 0.4), claim(-25.6, -25.6), claim(2.0, 2.1, "±150%"), claim((0, 2), 1.0)])
    recs = chart.to_dict()["layer"][0]["data"]["values"] if "layer" in chart.to_dict() else chart.to_dict()["data"]["values"]
    assert len(recs) == 4
    for r in recs:
        assert r["band_lo"] > 0 and r["band_hi"] >= r["band_lo"] and r["ratio"] > 0, r
    neg = recs[1]
    assert neg["band_lo"] == pytest.approx(0.9) and neg["band_hi"] == pytest.approx(1.1)


def test_front_explorer_without_a_label_knob_and_with_a_knob_named_design():
    """The linked front view: a front with only numeric knobs (no colouring knob), and one
    whose knob is called 'design' (it clashed with the row id)."""
    import polars as pl

    from dse.dashboard.charts import front_explorer

    numeric = pl.DataFrame({"a_ns": [1.0, 2.0, 3.0], "b_usd": [3.0, 2.0, 1.0], "k": [1.0, 2.0, 4.0]})
    spec = front_explorer(numeric, {"a_ns": "min", "b_usd": "min"}, ["k"]).to_dict()
    assert len(spec["vconcat"]) == 2
    named = numeric.with_columns(pl.Series("design", ["x", "y", "x"]))
    spec = front_explorer(named, {"a_ns": "min", "b_usd": "min"}, ["design", "k"]).to_dict()
    assert "design" in str(spec["vconcat"][0]["encoding"]["color"])
