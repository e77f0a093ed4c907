"""The README documents every registered model, and each model's example commands name
real spaces and real parameters."""

from __future__ import annotations

import re

from dse import registry
from dse.registry import project_root


def test_readme_has_a_section_and_an_example_for_every_model():
    readme = (project_root() / "README.md").read_text()
    for name in registry.names():
        assert f"`{name}`" in readme, f"README does not mention {name}"
    for space in re.findall(r"dse sweep (spaces/[\w./-]+\.toml)", readme):
        assert (project_root() / space).exists(), f"README names a missing space: {space}"


def test_every_model_has_claims_a_space_and_figures():
    spaces = {p.read_text().split("\n", 1)[0] for p in (project_root() / "spaces").glob("*.toml")}
    space_models = set()
    for p in (project_root() / "spaces").glob("*.toml"):
        m = re.search(r'^model\s*=\s*"([^"]+)"', p.read_text(), re.M)
        assert m, p
        space_models.add(m.group(1))
    for name in registry.names():
        d = registry.model_dir(name)
        assert (d / "claims.yaml").exists(), name
        assert (d / "README_section.md").exists(), name
        fam = {n for n in registry.names() if registry.model_dir(n) == d}
        assert fam & space_models, f"no space sweeps {name}"
        if name != "cxl-expander":
            assert (d / "figures.py").exists(), f"{name} has no figures against the paper"
    assert spaces


def test_readme_model_sections_are_in_step_with_the_packages():
    from models.readme import current_block, models_block

    readme = (project_root() / "README.md").read_text()
    assert current_block(readme) == models_block(), "README is stale: run `python -m models.readme`"
