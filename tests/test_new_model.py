"""`dse new-model`: the skeleton it writes passes the project's checks, and it never
overwrites or accepts a bad name."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dse.commands.new_model import new_model, skeleton_files
from dse.errors import DseError
from dse.registry import project_root

#: The project's checks the skeleton must pass, run in a copy of the sources.
CHECKS = ("tests/test_model_interface.py", "tests/test_common_metrics.py", "tests/test_claims_all.py",
          "tests/test_docs.py", "tests/test_house.py", "tests/test_demo_arch.py")


def test_bad_names_and_families_are_refused_with_one_line(tmp_path: Path) -> None:
    for name, words in (("Demo", "lowercase words"), ("demo_arch", "lowercase words"), ("-x", "lowercase words"),
                        ("class", "lowercase words"), ("bandslim", "registered already")):
        with pytest.raises(DseError, match=words):
            new_model(name, "kv-object", tmp_path)
    with pytest.raises(DseError, match="unknown family 'kv-objekt' .*did you mean: kv-object"):
        new_model("demo-arch", "kv-objekt", tmp_path)
    assert not any(tmp_path.iterdir())


def test_an_existing_file_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "spaces").mkdir()
    (tmp_path / "spaces" / "demo_arch.toml").write_text("mine\n")
    with pytest.raises(DseError, match=r"spaces/demo_arch.toml exists; dse new-model never overwrites"):
        new_model("demo-arch", "kv-object", tmp_path)
    assert (tmp_path / "spaces" / "demo_arch.toml").read_text() == "mine\n"
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["demo_arch.toml"]  # nothing else written
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "readme2.py").write_text("")
    with pytest.raises(DseError, match="models/readme2.py exists"):  # a module the package would shadow
        new_model("readme2", "kv-object", tmp_path)


def test_every_family_gets_its_latency_metric_and_knob() -> None:
    from dse.families import FAMILIES

    for fam in FAMILIES.values():
        files = {p.name: t for p, t in skeleton_files(Path("r"), "demo-arch", fam.name).items()}
        assert f'Metric("{fam.latency_metric}"' in files["model.py"]
        assert f"{fam.knobs[0].name} = [" in files["demo_arch.toml"]
        assert "usd_per_work" in files["demo_arch.toml"] and "capex_usd" in files["demo_arch.toml"]
        assert ("p.value_b" in files["model.py"]) == (fam.name == "kv-object")


def copy_sources(dest: Path) -> None:
    """The checkout's tracked and new (not ignored) files, as the integrator will commit them."""
    root = project_root()
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                             capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("needs a git checkout to list the project's sources")
    for rel in filter(None, out.decode().split("\0")):
        src = root / rel
        if src.is_file() and not rel.startswith(("test-artifacts/", "dashboards/site")):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


@pytest.mark.slow
def test_the_skeleton_passes_the_project_checks(tmp_path: Path) -> None:
    copy_sources(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DSE_CALIBRATION")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    made = run("-m", "dse.cli", "new-model", "demo-arch", "--family", "kv-object")
    assert made.returncode == 0, made.stderr
    assert "wrote models/demo_arch/model.py" in made.stdout and "wrote tests/test_demo_arch.py" in made.stdout
    again = run("-m", "dse.cli", "new-model", "demo-arch", "--family", "kv-object")
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1
    assert run("-m", "models.readme").returncode == 0
    assert "### demo-arch" in (tmp_path / "README.md").read_text()
    checks = run("-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q", *CHECKS)
    assert checks.returncode == 0, checks.stdout[-3000:] + checks.stderr[-2000:]
    assert " passed" in checks.stdout and "failed" not in checks.stdout
