"""A small, safe expression language for queries, constraints and claims.

Expressions use Python syntax, but only this subset is accepted (never ``eval``):

* names (columns, metrics, parameters) and dotted names (``cxl.slowdown_x`` in claims);
* numbers, strings, ``True``/``False``; lists/tuples of constants after ``in``;
* arithmetic ``+ - * / // % **``, unary ``-``/``+``/``not``;
* comparisons ``< <= > >= == !=`` (chains allowed), ``in`` / ``not in``;
* ``and`` / ``or`` (also ``&`` / ``|``);
* functions: ``abs sqrt log log2 log10 exp`` (elementwise), ``min(a, b)`` / ``max(a, b)``
  (elementwise with two or more arguments), and the reductions ``min(x) max(x) mean(x)
  gmean(x) sum(x) median(x)`` with one argument.

The same parsed tree compiles to a Polars expression (queries over result files) or
evaluates on numpy columns (constraints during sweeps, claims).

An expression is at most ``MAX_CHARS`` characters, ``MAX_NODES`` syntax-tree nodes and
``MAX_DEPTH`` levels deep; anything longer, deeper or unparsable is an :class:`ExprError`
(one line), never a RecursionError from the parser or the compilers.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from typing import Any

import numpy as np

from dse.errors import DseError, did_you_mean

ALLOWED_FORMS = (
    "names, numbers, strings, + - * / // % **, comparisons, 'in [..]', and/or/not, "
    "abs sqrt log log2 log10 exp min max mean gmean sum median"
)

_ELEMENTWISE = {
    "abs": np.abs,
    "sqrt": np.sqrt,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "exp": np.exp,
}
_REDUCTIONS: dict[str, Callable[[np.ndarray], float]] = {
    "mean": lambda a: float(np.mean(a)),
    "gmean": lambda a: float(np.exp(np.mean(np.log(a)))),
    "sum": lambda a: float(np.sum(a)),
    "median": lambda a: float(np.median(a)),
    "min": lambda a: float(np.min(a)),
    "max": lambda a: float(np.max(a)),
}
_FUNCTIONS = set(_ELEMENTWISE) | set(_REDUCTIONS)

_BINOPS = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: np.true_divide,
    ast.FloorDiv: np.floor_divide,
    ast.Mod: np.mod,
    ast.Pow: np.power,
    ast.BitAnd: np.logical_and,
    ast.BitOr: np.logical_or,
}
_CMPOPS = {
    ast.Lt: np.less,
    ast.LtE: np.less_equal,
    ast.Gt: np.greater,
    ast.GtE: np.greater_equal,
    ast.Eq: np.equal,
    ast.NotEq: np.not_equal,
}


class ExprError(DseError):
    pass


#: Bounds on an expression, checked before it is compiled or evaluated (the checker, the
#: numpy evaluator and the Polars compiler recurse once per level; Polars plans a deep
#: tree slowly): far above any real query, constraint or claim (the longest shipped is
#: 155 characters, 56 nodes, 10 levels).
MAX_CHARS = 2000
MAX_DEPTH = 100
MAX_NODES = 1000
#: Integer constants must fit a 64-bit column (Polars and numpy refuse or wrap others).
_INT_LIMIT = 2**63


def _shown(text: str, limit: int = 120) -> str:
    """The expression as quoted in a message: repr, shortened past ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _one_line(msg: object) -> str:
    return " ".join(str(msg).split())


def _measure(tree: ast.AST) -> tuple[int, int]:
    """(depth, nodes) of a parsed tree, without recursion.  A chain that compiles to
    nested operations counts one level per link: ``a and b and c`` (one BoolOp node)
    becomes ``(a & b) & c``, ``a < b < c`` becomes ``(a < b) & (b < c)``."""
    depth, nodes = 0, 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, d = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            break
        if isinstance(node, ast.BoolOp):
            d += len(node.values) - 1
        elif isinstance(node, ast.Compare):
            d += len(node.ops) - 1
        depth = max(depth, d)
        if depth > MAX_DEPTH:
            break
        stack.extend((c, d + 1) for c in ast.iter_child_nodes(node))
    return depth, nodes


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


class Expr:
    """A parsed and checked expression."""

    def __init__(self, text: str, *, what: str = "expression") -> None:
        if not isinstance(text, str):
            raise ExprError(f"{what} must be text, not {type(text).__name__}; allowed: {ALLOWED_FORMS}")
        self.text = text.strip()
        self.what = what
        if not self.text:
            raise ExprError(f"empty {what}; allowed: {ALLOWED_FORMS}")
        if len(self.text) > MAX_CHARS:
            raise ExprError(
                f"{what} {_shown(self.text, 40)} is {len(self.text):,} characters long; at most {MAX_CHARS:,} are allowed"
            )
        too_deep = f"{what} {_shown(self.text, 40)} is nested too deeply; at most {MAX_DEPTH} levels are allowed"
        try:
            self.tree = ast.parse(self.text, mode="eval").body
        except SyntaxError as exc:
            where = f" at column {exc.offset}" if exc.offset else ""
            raise ExprError(
                f"cannot parse {what} {_shown(self.text)}: {_one_line(exc.msg)}{where}; allowed: {ALLOWED_FORMS}"
            ) from None
        except (RecursionError, MemoryError):  # the parser's own stack (e.g. 2000 unary minuses)
            raise ExprError(too_deep) from None
        except ValueError as exc:  # e.g. lone surrogates, which are not valid text
            raise ExprError(
                f"cannot parse {what} {_shown(self.text)}: {_one_line(exc)}; allowed: {ALLOWED_FORMS}"
            ) from None
        depth, nodes = _measure(self.tree)
        if nodes > MAX_NODES:
            raise ExprError(
                f"{what} {_shown(self.text, 40)} has more than {MAX_NODES:,} terms; at most {MAX_NODES:,} are allowed"
            )
        if depth > MAX_DEPTH:
            raise ExprError(too_deep)
        self._check(self.tree)

    # ------------------------------------------------------------------ checking
    def _fail(self, node: ast.AST, why: str) -> None:
        frag = ast.get_source_segment(self.text, node) or type(node).__name__
        raise ExprError(f"{self.what} {_shown(self.text)}: {why} ({_shown(frag, 60)}); allowed: {ALLOWED_FORMS}")

    def _check(self, node: ast.AST) -> None:
        if isinstance(node, (ast.Name, ast.Attribute)):
            if _dotted(node) is None:
                self._fail(node, "only plain or dotted names are allowed")
            return
        if isinstance(node, ast.Constant):
            if not isinstance(node.value, (int, float, str, bool)):
                self._fail(node, "unsupported constant")
            if isinstance(node.value, int) and not -_INT_LIMIT <= node.value < _INT_LIMIT:
                self._fail(node, "integer out of the 64-bit range (write a float, e.g. 1e30)")
            return
        if isinstance(node, ast.BinOp):
            if type(node.op) not in _BINOPS:
                self._fail(node, "unsupported operator")
            self._check(node.left)
            self._check(node.right)
            return
        if isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
                self._fail(node, "unsupported unary operator")
            self._check(node.operand)
            return
        if isinstance(node, ast.BoolOp):
            for v in node.values:
                self._check(v)
            return
        if isinstance(node, ast.Compare):
            self._check(node.left)
            for op, comp in zip(node.ops, node.comparators):
                if isinstance(op, (ast.In, ast.NotIn)):
                    if not isinstance(comp, (ast.List, ast.Tuple, ast.Set)) or not all(
                        isinstance(e, ast.Constant) and isinstance(e.value, (int, float, str, bool)) for e in comp.elts
                    ):
                        self._fail(comp, "'in' needs a list of constants")
                elif type(op) not in _CMPOPS:
                    self._fail(node, "unsupported comparison")
                else:
                    self._check(comp)
            return
        if isinstance(node, ast.Call):
            fname = node.func.id if isinstance(node.func, ast.Name) else None
            if fname not in _FUNCTIONS:
                self._fail(node, f"unknown function{did_you_mean(fname or '', _FUNCTIONS)}")
            if node.keywords or not node.args:
                self._fail(node, "functions take positional arguments only")
            if fname in _ELEMENTWISE and len(node.args) != 1:
                self._fail(node, f"{fname}() takes one argument")
            if fname in ("mean", "gmean", "sum", "median") and len(node.args) != 1:
                self._fail(node, f"{fname}() takes one argument")
            for a in node.args:
                self._check(a)
            return
        self._fail(node, "unsupported syntax")

    # ------------------------------------------------------------------ names
    @cached_property
    def names(self) -> set[str]:
        out: set[str] = set()

        def walk(node: ast.AST) -> None:
            d = _dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
            if d is not None:
                out.add(d)
                return
            if isinstance(node, ast.Call):
                for a in node.args:
                    walk(a)
                return
            for child in ast.iter_child_nodes(node):
                walk(child)

        walk(self.tree)
        return out

    def require_names(self, available: Iterable[str], kind: str = "column") -> None:
        avail = set(available)
        for name in sorted(self.names):
            if name not in avail:
                raise ExprError(
                    f"{self.what} {_shown(self.text)}: unknown {kind} {_shown(name, 60)}{did_you_mean(name, avail)}; "
                    f"available: {', '.join(sorted(avail))}"
                )

    # ------------------------------------------------------------------ numpy
    def evaluate(self, env: Mapping[str, Any]) -> Any:
        """Evaluate on numpy columns / scalars; names resolve in ``env``."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._np(self.tree, env)

    def _np(self, node: ast.AST, env: Mapping[str, Any]) -> Any:
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = _dotted(node)
            if name not in env:
                raise ExprError(
                    f"{self.what} {_shown(self.text)}: unknown name {name!r}{did_you_mean(name or '', env)}"
                )
            return env[name]
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.BinOp):
            return _BINOPS[type(node.op)](self._np(node.left, env), self._np(node.right, env))
        if isinstance(node, ast.UnaryOp):
            v = self._np(node.operand, env)
            if isinstance(node.op, ast.USub):
                return np.negative(v)
            if isinstance(node.op, ast.Not):
                return np.logical_not(v)
            return v
        if isinstance(node, ast.BoolOp):
            vals = [self._np(v, env) for v in node.values]
            fn = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
            out = vals[0]
            for v in vals[1:]:
                out = fn(out, v)
            return out
        if isinstance(node, ast.Compare):
            left = self._np(node.left, env)
            result: Any = True
            for op, comp in zip(node.ops, node.comparators):
                if isinstance(op, (ast.In, ast.NotIn)):
                    choices = [e.value for e in comp.elts]  # type: ignore[attr-defined]
                    r = np.isin(left, choices)
                    r = np.logical_not(r) if isinstance(op, ast.NotIn) else r
                    right = left
                else:
                    right = self._np(comp, env)
                    r = _CMPOPS[type(op)](left, right)
                result = np.logical_and(result, r)
                left = right
            return result
        if isinstance(node, ast.Call):
            fname = node.func.id  # type: ignore[attr-defined]
            args = [self._np(a, env) for a in node.args]
            if fname in _ELEMENTWISE:
                return _ELEMENTWISE[fname](args[0])
            if fname in ("min", "max") and len(args) > 1:
                fn = np.minimum if fname == "min" else np.maximum
                out = args[0]
                for a in args[1:]:
                    out = fn(out, a)
                return out
            return _REDUCTIONS[fname](np.asarray(args[0], dtype=np.float64))
        raise ExprError(f"{self.what} {_shown(self.text)}: unsupported syntax")  # pragma: no cover

    # ------------------------------------------------------------------ polars
    def to_polars(self) -> Any:
        """Compile to a Polars expression over columns of the same names."""
        import polars as pl

        return self._pl(self.tree, pl)

    def _pl(self, node: ast.AST, pl: Any) -> Any:
        if isinstance(node, (ast.Name, ast.Attribute)):
            return pl.col(_dotted(node))
        if isinstance(node, ast.Constant):
            return pl.lit(node.value)
        if isinstance(node, ast.BinOp):
            a, b = self._pl(node.left, pl), self._pl(node.right, pl)
            op = type(node.op)
            return {
                ast.Add: lambda: a + b,
                ast.Sub: lambda: a - b,
                ast.Mult: lambda: a * b,
                ast.Div: lambda: a / b,
                ast.FloorDiv: lambda: a // b,
                ast.Mod: lambda: a % b,
                ast.Pow: lambda: a.pow(b),
                ast.BitAnd: lambda: a & b,
                ast.BitOr: lambda: a | b,
            }[op]()
        if isinstance(node, ast.UnaryOp):
            v = self._pl(node.operand, pl)
            if isinstance(node.op, ast.USub):
                return -v
            if isinstance(node.op, ast.Not):
                return ~v
            return v
        if isinstance(node, ast.BoolOp):
            vals = [self._pl(v, pl) for v in node.values]
            out = vals[0]
            for v in vals[1:]:
                out = (out & v) if isinstance(node.op, ast.And) else (out | v)
            return out
        if isinstance(node, ast.Compare):
            left = self._pl(node.left, pl)
            result = None
            for op, comp in zip(node.ops, node.comparators):
                if isinstance(op, (ast.In, ast.NotIn)):
                    choices = [e.value for e in comp.elts]  # type: ignore[attr-defined]
                    if all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in choices):
                        r = left.cast(pl.Float64).is_in([float(c) for c in choices])
                    else:
                        r = left.cast(pl.String).is_in([str(c) for c in choices])
                    r = ~r if isinstance(op, ast.NotIn) else r
                    right = left
                else:
                    right = self._pl(comp, pl)
                    r = {
                        ast.Lt: lambda: left < right,
                        ast.LtE: lambda: left <= right,
                        ast.Gt: lambda: left > right,
                        ast.GtE: lambda: left >= right,
                        ast.Eq: lambda: left == right,
                        ast.NotEq: lambda: left != right,
                    }[type(op)]()
                result = r if result is None else (result & r)
                left = right
            return result
        if isinstance(node, ast.Call):
            fname = node.func.id  # type: ignore[attr-defined]
            args = [self._pl(a, pl) for a in node.args]
            if fname in ("min", "max") and len(args) > 1:
                return pl.min_horizontal(*args) if fname == "min" else pl.max_horizontal(*args)
            a = args[0]
            return {
                "abs": lambda: a.abs(),
                "sqrt": lambda: a.sqrt(),
                "log": lambda: a.log(),
                "log2": lambda: a.log(2),
                "log10": lambda: a.log10(),
                "exp": lambda: a.exp(),
                "mean": lambda: a.mean(),
                "gmean": lambda: a.log().mean().exp(),
                "sum": lambda: a.sum(),
                "median": lambda: a.median(),
                "min": lambda: a.min(),
                "max": lambda: a.max(),
            }[fname]()
        raise ExprError(f"{self.what} {_shown(self.text)}: unsupported syntax")  # pragma: no cover


def parse_objective(text: str) -> tuple[str, str]:
    """'-bw_gbps' / 'max:bw_gbps' / 'bw_gbps' -> (name, direction or '')."""
    t = text.strip()
    if t.startswith("-"):
        return t[1:], "max"
    if ":" in t:
        d, _, n = t.partition(":")
        if d in ("min", "max"):
            return n, d
    return t, ""
