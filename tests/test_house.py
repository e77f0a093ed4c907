"""House rules checked on the source: private names stay private."""

from __future__ import annotations

import ast
from pathlib import Path

from dse.registry import project_root


def _sources() -> list[Path]:
    root = project_root()
    return sorted(list((root / "dse").rglob("*.py")) + list((root / "models").rglob("*.py")))


def private_reach_ins(path: Path) -> list[str]:
    """``from m import _x`` and ``obj._x`` where ``obj`` is not ``self``/``cls``: a name
    starting with one underscore used outside the module (or class) that defines it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [f"{path.name}:{node.lineno} from {node.module} import {a.name}"
                      for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    return found


def test_no_private_name_is_used_outside_its_module():
    bad = [hit for f in _sources() for hit in private_reach_ins(f)]
    assert not bad, "private names used from outside: " + "; ".join(bad)


def test_the_checker_finds_a_reach_in(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from a import _b\nimport c\nx = c._d\ny = self._ok\n")
    assert [h.split(" ", 1)[1] for h in private_reach_ins(f)] == ["from a import _b", "c._d"]
