"""The README's model sections, assembled from ``models/<pkg>/README_section.md``.

Each model package documents itself in its own README_section.md; the README carries them
between the ``<!-- models:begin -->`` / ``<!-- models:end -->`` markers, after a table of
every registered model, in the order of the package descriptors' ``readme_order``
(``ARCH`` in each ``models/<pkg>/__init__.py``).  ``python -m models.readme`` rewrites that block in place;
tests/test_docs.py checks that the README is in step with the sections."""

from __future__ import annotations

import re
from pathlib import Path

from dse import registry

BEGIN, END = "<!-- models:begin -->", "<!-- models:end -->"


def reading_order(names: list[str]) -> list[str]:
    """Models in README order: by their package descriptor's ``readme_order`` (the pilot,
    the five first architectures, then the others), then by name; models without a
    descriptor (entry points) last."""
    from dse.architecture import LAST_README_ORDER

    def key(name: str) -> tuple[int, int, str]:
        arch = registry.architecture(name)
        return (arch is None, arch.readme_order if arch is not None else LAST_README_ORDER, name)

    return sorted(names, key=key)


def models_block() -> str:
    """The README text between (and including) the markers."""
    rows = ["| name | what |", "|---|---|"]
    seen: set[Path] = set()
    sections = []
    names = registry.names()
    for name in reading_order(names):
        d = registry.model_dir(name)
        if d in seen:
            continue
        seen.add(d)
        family = ", ".join(f"`{n}`" for n in names if registry.model_dir(n) == d)
        rows.append(f"| {family} | {registry.model_class(name).summary} |")
        section = (d / "README_section.md").read_text().strip()
        sections.append(re.sub(r"^#{1,4} ", "### ", section, count=1))
    intro = "`dse models` lists them; `dse describe NAME` shows every parameter with its source."
    return "\n".join([BEGIN, *rows, "", intro, "", "\n\n".join(sections), END])


def current_block(readme: str) -> str:
    start, stop = readme.index(BEGIN), readme.index(END) + len(END)
    return readme[start:stop]


def main() -> None:
    from dse.store import atomic_write_text

    path = registry.project_root() / "README.md"
    text = path.read_text()
    atomic_write_text(path, text.replace(current_block(text), models_block()))
    print(f"{path.name}: model sections rewritten")


if __name__ == "__main__":
    main()
