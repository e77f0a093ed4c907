"""Fronts of studies with the same objectives are scored in one shared box, so the
numbers compare across studies (issue 21: hypervolume explained or replaced)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dse import pareto


def test_shared_box_scores_of_three_known_fronts():
    a = np.array([[0.0, 1.0], [1.0, 0.0]])
    b = np.array([[0.5, 0.5], [2.0, 2.0]])
    c = np.array([[1.0, 1.0]])
    s = pareto.shared_box_scores({"a": a, "b": b, "c": c})
    # the box runs from (0, 0) to (2, 2): a covers 1.1^2 - 0.5^2 of the 1.1-reference square
    assert s["a"]["hypervolume_shared"] == pytest.approx(1.21 - 0.25)
    assert s["b"]["hypervolume_shared"] == pytest.approx(0.85 ** 2)
    assert s["c"]["hypervolume_shared"] == pytest.approx(0.6 ** 2)
    # joint front: a's two points and b's (0.5, 0.5); c's (1, 1) is dominated by b's
    assert [s[k]["joint_share"] for k in "abc"] == pytest.approx([2 / 3, 1 / 3, 0.0])
    assert [s[k]["undominated_frac"] for k in "abc"] == pytest.approx([1.0, 0.5, 0.0])


def test_a_front_scored_alone_fills_its_own_box_like_the_own_bounds_hypervolume():
    f = np.array([[0.0, 1.0], [0.3, 0.4], [1.0, 0.0]])
    s = pareto.shared_box_scores({"only": f, "empty": np.empty((0, 2))})
    assert s["only"]["hypervolume_shared"] == pytest.approx(pareto.hypervolume(f, f.min(axis=0), f.max(axis=0)))
    assert s["only"]["joint_share"] == 1.0 and s["empty"]["hypervolume_shared"] == 0.0


def test_the_index_compares_two_studies_with_the_same_objectives(small_study, tmp_path, cli, monkeypatch):
    import shutil

    import dse.claims
    import dse.dashboard.build as build

    monkeypatch.setattr(build, "_write_bundle", lambda path: path.write_text("/* bundle */", encoding="utf-8"))
    monkeypatch.setattr(build, "_models_with_claims", lambda: set())
    monkeypatch.setattr(build, "add_model_figures", lambda page, model: None)
    monkeypatch.setattr(dse.claims, "evaluate_claims", lambda f: [])
    second = shutil.copytree(small_study, tmp_path / "copy")
    code, _, err = cli("dashboard", "build", "--no-calibration", small_study, second, "--out", tmp_path / "site")
    assert code == 0, err
    html = (tmp_path / "site" / "index.html").read_text()
    assert "Fronts compared" in html and "hypervolume (shared box)" in html
    # two copies of one front: each brings half the joint front and none dominates the other
    import re

    cells = re.findall(r"<td[^>]*>([0-9.]+%?)</td>", html.split("Fronts compared", 1)[1].split("</table>", 1)[0])
    assert len(cells) == 8 and cells[:4] == cells[4:] and cells[2:4] == ["50%", "100%"], cells


def test_one_study_alone_says_why_there_is_no_comparison(small_study, tmp_path, cli, monkeypatch):
    import dse.claims
    import dse.dashboard.build as build

    monkeypatch.setattr(build, "_write_bundle", lambda path: path.write_text("/* bundle */", encoding="utf-8"))
    monkeypatch.setattr(build, "_models_with_claims", lambda: set())
    monkeypatch.setattr(build, "add_model_figures", lambda page, model: None)
    monkeypatch.setattr(dse.claims, "evaluate_claims", lambda f: [])
    code, _, err = cli("dashboard", "build", "--no-calibration", small_study, "--out", tmp_path / "site")
    assert code == 0, err
    html = (tmp_path / "site" / "index.html").read_text()
    assert "Fronts compared" not in html and "cannot be compared on it" in html


def test_dse_compare_scores_several_sweeps_in_one_box(small_study, tmp_path, cli):
    import json
    import shutil

    second = shutil.copytree(small_study, tmp_path / "copy")
    code, out, err = cli("compare", small_study, second, "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["kind"] == "fronts" and set(got["objectives"]) == {"loaded_read_latency_ns", "bw_gbps", "usd_per_gib"}
    rows = list(got["studies"].values())
    assert [r["joint_share"] for r in rows] == [0.5, 0.5] and [r["undominated_frac"] for r in rows] == [1.0, 1.0]
    assert rows[0]["front_points"] == rows[1]["front_points"] > 0


def test_dse_compare_refuses_sweeps_with_other_objectives(small_study, tmp_path, cli):
    import json
    import shutil

    other = Path(shutil.copytree(small_study, tmp_path / "other"))
    m = json.loads((other / "manifest.json").read_text())
    m["objectives"] = {"bw_gbps": "max"}
    (other / "manifest.json").write_text(json.dumps(m))
    code, _, err = cli("compare", small_study, other)
    assert code == 2 and "different objectives" in err and err.count("\n") == 1
