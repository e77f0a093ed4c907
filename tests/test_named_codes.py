"""No bare category codes in the models: a categorical value is tested by its label
(``p.is_("design", "uvm")``, ``p.code(...)``) or by a constant derived from its choices tuple
(``UNISON = SCHEMES.index("unison")``), never against an integer literal (``code == 1``).
Sweeps store categorical codes by choice index, so a bare ``1`` silently changes meaning when
a choice is added or reordered; ``design >= 3`` even relies on the ORDER of the choices."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from dse import registry
from dse.registry import project_root

#: Names that hold category codes by convention, compared with any operator.
CODE_NAME = re.compile(r"(code|codes|mode|modes|cls|design|retriever|kind|policy|scheme)$")
#: The one-letter name ``d`` (a design code in some models) is checked for equality and ``>=``
#: only: elsewhere ``d`` is a degree, a duty cycle or a step compared with 0 or 1 as numbers.
SHORT_NAMES = {"d"}
SHORT_OPS = (ast.Eq, ast.NotEq, ast.GtE)
ALL_OPS = (ast.Eq, ast.NotEq, ast.GtE, ast.Gt, ast.LtE, ast.Lt)

#: Comparisons that are numbers, not category codes: (path under models/, name) -> why.
ALLOWED: dict[tuple[str, str], str] = {
    ("blocks/link.py", "codes"): "gen_code / flit_code validate numbers a caller gave (generations 1..7, flit "
                                 "codes 0..2): range checks of input, not tests of one category",
    ("blocks/flash/chip.py", "kind"): "`kind` is the share of a stream's accesses of one kind (reads), a fraction",
    ("fs2/figures.py", "d"): "`d` is a device count from DEVICES (the scaling figure keeps >= 4 devices)",
    ("ncs/fleet.py", "d"): "`d` is a numeric difference (A - train - r x a) of the fleet's cost lines",
}


def categorical_param_names() -> set[str]:
    """Names of every registered model's categorical parameters (columns of integer codes)."""
    return {q.name for n in registry.names() for q in registry.get(n).params if q.categorical}


def _subject(node: ast.expr) -> tuple[str | None, bool]:
    """The name a comparison operand carries, and whether it is a batch column access
    (``p.name`` or ``p["name"]``) rather than a bare local name."""
    if isinstance(node, ast.Name):
        return node.id, False
    if isinstance(node, ast.Attribute):
        return node.attr, True
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value, True
    return None, False


def _flagged(name: str, column: bool, op: ast.cmpop, categorical: set[str]) -> bool:
    if column and name in categorical:
        return True
    if name in SHORT_NAMES:
        return isinstance(op, SHORT_OPS)
    return bool(CODE_NAME.search(name)) and isinstance(op, ALL_OPS)


def bare_code_comparisons(path: Path, categorical: set[str] = frozenset()) -> list[tuple[str, int, str]]:
    """``(name, line, source)`` of each comparison of a code-like name with an int literal."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for op, a, b in zip(node.ops, operands, operands[1:]):
            for x, y in ((a, b), (b, a)):
                if not (isinstance(y, ast.Constant) and type(y.value) is int):
                    continue
                name, column = _subject(x)
                if name and _flagged(name, column, op, categorical):
                    found.append((name, node.lineno, ast.unparse(node)))
    return found


def test_models_compare_no_category_code_with_an_int_literal():
    models = project_root() / "models"
    categorical = categorical_param_names()
    bad = []
    for f in sorted(models.rglob("*.py")):
        rel = f.relative_to(models).as_posix()
        bad += [f"models/{rel}:{line} {src}" for name, line, src in bare_code_comparisons(f, categorical)
                if (rel, name) not in ALLOWED]
    assert not bad, ("category codes compared with int literals (use p.is_(name, label) or a constant "
                     "CHOICES.index(label); an order test becomes a set of labels): " + "; ".join(bad))


def test_every_allowed_exception_is_still_needed():
    models = project_root() / "models"
    for (rel, name), why in ALLOWED.items():
        hits = [h for h in bare_code_comparisons(models / rel) if h[0] == name]
        assert hits, f"ALLOWED entry {rel}:{name} ({why}) no longer matches anything; drop it"


def test_the_checker_finds_bare_codes(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        "a = code == 1\nb = 2 != p.mode\nc = d >= 3\nd2 = x.design == DESIGNS.index('uvm')\n"
        "e = d > 0\nf = p['tenancy'] == 1\ng = tenancy == 1\nh = mode == True\ni = kind < 2\n"
    )
    names = [(n, line) for n, line, _ in bare_code_comparisons(f, {"tenancy"})]
    # flagged: bare codes (1-3), a categorical batch column (6), an order test on a code (9);
    # not flagged: a named constant (4), `d > 0` (a number), a local that merely shares a
    # parameter's name (7), a bool literal (8)
    assert names == [("code", 1), ("mode", 2), ("d", 3), ("tenancy", 6), ("kind", 9)]
