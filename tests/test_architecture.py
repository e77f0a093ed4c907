"""Architecture descriptors (``ARCH`` in each models/<pkg>/__init__.py): light, honest about
the package's files, and the one source of the registry, `dse optimize` and README order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dse import registry
from dse.architecture import Architecture, flat_table
from dse.registry import project_root

#: The part roles and the files they name.
ROLE_FILES = {"calibration": "calibration.py", "cv": "cv.py", "figures": "figures.py"}


def packages() -> dict[str, Architecture]:
    import models

    return dict(models.ARCHITECTURES)


def test_every_architecture_package_has_a_descriptor() -> None:
    folders = {p.parent.name for p in (project_root() / "models").glob("*/__init__.py")} - {"blocks"}
    assert {pkg.split(".")[1] for pkg in packages()} == folders


@pytest.mark.parametrize("pkg", sorted(packages()))
def test_the_descriptor_names_the_files_the_package_has(pkg: str) -> None:
    arch = packages()[pkg]
    folder = project_root() / "models" / pkg.split(".")[1]
    declared = arch.parts()
    for role, file in ROLE_FILES.items():
        assert (folder / file).exists() == (role in declared), f"{pkg}: {file} on disk and ARCH.{role} disagree"
        if role in declared:
            assert declared[role] == file[:-3]
    assert arch.claims is not None and (folder / arch.claims).exists()
    for target in (*arch.models.values(), *arch.optimize.values()):
        assert (folder / (target.partition(":")[0] + ".py")).exists(), f"{pkg}: {target}"


def test_calibration_modules_have_one_name() -> None:
    old = [p for p in (project_root() / "models").glob("*/*.py") if p.name in ("calibrate.py", "fit.py")]
    assert not old, f"calibration modules are calibration.py: {old}"


def test_the_registry_is_read_from_the_descriptors_without_heavy_imports() -> None:
    code = ("import sys, models; from dse import registry; names = registry.names(); "
            "registry.model_dir('bandslim'); registry.claims_file('iks'); "
            "assert 'numpy' not in sys.modules, 'numpy imported'; print(len(names), len(models.OPTIMIZE))")
    out = subprocess.run([sys.executable, "-c", code], cwd=project_root(), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    n_models, n_problems = map(int, out.stdout.split())
    assert n_models >= 18 and n_problems >= 5


def test_names_problems_and_reading_order_are_as_before() -> None:
    from models import REGISTRY
    from models.readme import reading_order

    assert REGISTRY["dockerssd-llm"] == "models.dockerssd.llm:DockerSsdLlm"
    assert REGISTRY["cxl-expander"] == "models.cxl_expander.model:CxlExpander"
    assert set(registry.optimize_problems()) == {"cxl-gpu-llm", "espresso-harvest", "cxl-expander-provision", "ncs-tiers",
                                                 "iks-channel-split"}
    shipped = [n for n in reading_order(registry.names()) if n in REGISTRY]
    assert shipped[:4] == ["cxl-expander", "cxl-gpu", "dockerssd-isp", "dockerssd-llm"]
    assert shipped[-3:] == ["fs2", "cold-store", "llm-serve"]


def test_parts_are_found_through_the_descriptor() -> None:
    assert registry.figures_function("cxl-expander") is None
    assert registry.figures_function("ncs").__module__ == "models.ncs.figures"
    assert registry.part_module("cold-store", "cv") is None
    assert registry.part_module("rdio", "calibration").__name__ == "models.rdio.calibration"
    assert registry.claims_file("dockerssd-llm") == project_root() / "models" / "dockerssd" / "claims.yaml"
    assert registry.architecture("dockerssd-isp") is registry.architecture("dockerssd-llm")


def test_bad_descriptors_are_refused() -> None:
    with pytest.raises(ValueError, match="lowercase words"):
        Architecture(models={"Demo": "model:Demo"})
    with pytest.raises(ValueError, match="not 'module:attribute'"):
        Architecture(models={"demo": "model.Demo"})
    with pytest.raises(ValueError, match="at least one model"):
        Architecture(models={})
    a, b = Architecture(models={"demo": "model:A"}), Architecture(models={"demo": "model:B"})
    with pytest.raises(RuntimeError, match="declared by two packages"):
        flat_table({"models.a": a, "models.b": b}, "models")


def test_a_package_without_descriptor_is_not_registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dse.architecture import discover

    for name, text in (("with_arch", 'from dse.architecture import Architecture\nARCH = Architecture(models={"w": "m:W"})\n'),
                       ("without", '"""no descriptor"""\n')):
        (tmp_path / "fakepkgs" / name).mkdir(parents=True)
        (tmp_path / "fakepkgs" / name / "__init__.py").write_text(text)
    (tmp_path / "fakepkgs" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = discover(tmp_path / "fakepkgs", "fakepkgs")
    assert list(found) == ["fakepkgs.with_arch"] and dict(found["fakepkgs.with_arch"].models) == {"w": "m:W"}


def test_the_readme_states_the_whole_rule_set() -> None:
    import dataclasses

    from dse.families import FAMILIES

    readme = (project_root() / "README.md").read_text()
    section = readme[readme.index("## Adding an architecture"):]
    section = section[: section.find("\n## ", 1) if "\n## " in section[1:] else len(section)]
    for f in dataclasses.fields(Architecture):
        assert f"| `{f.name}` |" in section, f"descriptor field {f.name} is not documented"
    for fam in FAMILIES.values():
        assert f"`{fam.name}` (`{fam.latency_metric}`)" in section, fam.name
    for needed in ("dse new-model", "python -m models.readme", "`prediction`", "`anchor`", "`echo`", "cv.py",
                   "`source`", "KNOWN_HEADLINE_MISSES", "cxl_dse.models"):
        assert needed in section, needed
