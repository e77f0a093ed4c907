"""One writer for the architecture packages' fitted.toml (models.blocks.fit_harness.write_fitted):
exact round trip, the [uncertainty] table kept while the fit is unchanged, recomputed or
dropped when it changed, atomic, and every package's calibration writes its shipped constants."""

from __future__ import annotations

import importlib
import shutil
import tomllib
from pathlib import Path

import pytest

from dse import fit_uncertainty as fu
from dse.registry import project_root
from models.blocks import fit_harness as fh

ROOT = project_root()

TABLES = {
    "fitted": {"a_frac": 0.1 + 0.2, "big_cyc": 6999.287650808482, "tiny": 2.4165601e-26, "four": 4.0, "n": 3,
               "flag": True, "neg": -1e-5},
    "texts": {"source": 'Fig. 5(a) "quoted" \\ back, §4 FS² — it\'s\ttabbed', "rows": ["x", "y"]},
    "odd key table": {"a.b": 1.5, "kind of": "x"},
    "errors": [{"id": "r1", "measured": 22714.0, "error_frac": 0.0588}, {"id": "r2", "measured": 3450.0, "error_frac": -0.124}],
}
SD = {fu.N_KEY: 2.0, "a_frac": 0.05}


def test_fitted_toml_round_trips_the_tables_exactly():
    text = fh.fitted_toml(TABLES, ("line one", "", "line three"))
    assert text.startswith("# line one\n#\n# line three\n\n[fitted]\n")
    doc = tomllib.loads(text)
    assert doc == TABLES
    assert isinstance(doc["fitted"]["four"], float) and isinstance(doc["fitted"]["n"], int)
    assert "\n[[errors]]\n" in text and text.count("[[errors]]") == 2


def test_fitted_toml_digits_comments_and_refusals():
    text = fh.fitted_toml({"t": {"value": 1.0176772049, "target": 4.0, "achieved": 0.46401123}}, digits=8,
                          digits_of={"target": 6, "achieved": 6}, comments={"t": ("above t",)})
    assert text == "# above t\n[t]\nvalue = 1.0176772\ntarget = 4.0\nachieved = 0.464011\n"
    with pytest.raises(ValueError, match="uncertainty"):
        fh.fitted_toml({"uncertainty": {"a": 1.0}})
    with pytest.raises(ValueError, match="not tables"):
        fh.fitted_toml({"t": {"sub": {"a": 1.0}}})


def _with_sd(path: Path) -> str:
    fh.write_fitted(path, TABLES, ("h",), package=None)
    text = fu.with_table(path.read_text(), SD)
    path.write_text(text)
    return text


def test_writer_keeps_the_uncertainty_table_while_the_fit_is_unchanged(tmp_path, monkeypatch):
    p = tmp_path / "fitted.toml"
    before = _with_sd(p)
    monkeypatch.setattr(fu, "compute", lambda pkg: pytest.fail("recomputed an unchanged fit"))
    # rounding noise of a refit (1e-13 relative) is the same constant: the file's value stays
    noisy = {**TABLES, "fitted": {**TABLES["fitted"], "big_cyc": TABLES["fitted"]["big_cyc"] * (1 + 1e-13)}}
    fh.write_fitted(p, noisy, ("h",), package="pkg")
    assert p.read_text() == before
    assert tomllib.loads(p.read_text())[fu.TABLE] == SD


def test_writer_recomputes_or_drops_the_table_when_the_fit_changed(tmp_path, monkeypatch, capsys):
    p = tmp_path / "fitted.toml"
    _with_sd(p)
    changed = {**TABLES, "fitted": {**TABLES["fitted"], "a_frac": 0.31}}
    monkeypatch.setattr(fu, "compute", lambda pkg: {fu.N_KEY: 2.0, "a_frac": 0.07, "pkg_was": float(pkg == "pkg")})
    fh.write_fitted(p, changed, ("h",), package="pkg")
    doc = tomllib.loads(p.read_text())
    assert doc["fitted"]["a_frac"] == 0.31 and doc[fu.TABLE] == {fu.N_KEY: 2.0, "a_frac": 0.07, "pkg_was": 1.0}
    assert p.read_text().count(fu.COMMENT) == 1
    fh.write_fitted(p, TABLES, ("h",), package="pkg", recompute_sd=False)
    assert fu.TABLE not in tomllib.loads(p.read_text())
    assert "python -m dse.fit_uncertainty pkg" in capsys.readouterr().err


def test_a_failure_mid_write_leaves_the_old_file(tmp_path, monkeypatch):
    p = tmp_path / "fitted.toml"
    before = _with_sd(p)
    real = Path.write_text

    def half_then_fail(self, text, *a, **kw):
        real(self, text[: len(text) // 2], *a, **kw)
        raise OSError("disk full")

    monkeypatch.setattr(Path, "write_text", half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        fh.write_fitted(p, {**TABLES, "fitted": {**TABLES["fitted"], "a_frac": 0.5}}, ("h",), package=None)
    monkeypatch.undo()
    assert p.read_text() == before
    assert [f.name for f in tmp_path.iterdir()] == ["fitted.toml"]  # no temporary file left


def _write(pkg: str, path: Path) -> None:
    """Fit and write like ``python -m models.<pkg>.calibration``, into ``path``."""
    cal = importlib.import_module(f"models.{pkg}.calibration")
    if pkg in ("directcxl", "ginkgo"):
        cal.write_fitted(cal.fit(), path, recompute_sd=False)
    elif pkg == "fs2":
        f = cal.fit()
        cal.write(f, cal.compute_ns(f), path, recompute_sd=False)
    else:
        cal.write(cal.fit(), path, recompute_sd=False)


@pytest.mark.parametrize("pkg", [pytest.param(p, marks=pytest.mark.slow) if p == "espresso" else p for p in fu.PACKAGES])
def test_each_calibration_writes_the_shipped_constants(pkg, tmp_path):
    shipped = ROOT / "models" / pkg / "fitted.toml"
    p = tmp_path / "fitted.toml"
    shutil.copy(shipped, p)
    _write(pkg, p)
    got, want = tomllib.loads(p.read_text()), tomllib.loads(shipped.read_text())
    assert got == want  # the fitted values, and the [uncertainty] table kept (no recompute asked)
    assert p.read_text().count(fu.COMMENT) == 1
