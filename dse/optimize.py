"""Registry and result type of the CVXPY provisioning / placement problems."""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any

from dse.errors import DseError, did_you_mean


@dataclass
class Solution:
    problem: str
    status: str
    objective_name: str
    objective: float
    rows: list[dict[str, Any]] = field(default_factory=list)  # the decision, one row per item
    summary: dict[str, Any] = field(default_factory=dict)  # totals, constraints, comparisons
    formulation: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def print(self) -> None:
        from rich.console import Console
        from rich.table import Table

        con = Console(width=130)
        con.print(f"[bold]{self.problem}[/bold]: {self.status}; {self.objective_name} = {self.objective:.6g}")
        if self.rows:
            t = Table()
            for c in self.rows[0]:
                t.add_column(str(c), justify="right")
            for r in self.rows:
                t.add_row(*(f"{v:.4g}" if isinstance(v, float) else str(v) for v in r.values()))
            con.print(t)
        for k, v in self.summary.items():
            con.print(f"  {k}: {v:.6g}" if isinstance(v, float) else f"  {k}: {v}")


def _problems() -> dict[str, str]:
    from dse import registry

    return registry.optimize_problems()


def _load(name: str) -> Any:
    problems = _problems()
    if name not in problems:
        raise DseError(f"unknown problem {name!r}{did_you_mean(name, problems)}; known: {', '.join(sorted(problems))}")
    module, _, fn = problems[name].partition(":")
    return getattr(importlib.import_module(module), fn)


def describe_all() -> dict[str, tuple[str, dict[str, Any]]]:
    out = {}
    for name in sorted(_problems()):
        fn = _load(name)
        doc = (inspect.getdoc(fn) or "").splitlines()[0] if inspect.getdoc(fn) else ""
        params = {
            p.name: p.default for p in inspect.signature(fn).parameters.values() if p.default is not inspect.Parameter.empty
        }
        out[name] = (doc, params)
    return out


def solve(name: str, inputs: dict[str, Any]) -> Solution:
    fn = _load(name)
    sig = inspect.signature(fn)
    for k in inputs:
        if k not in sig.parameters:
            raise DseError(f"problem {name} has no input {k!r}{did_you_mean(k, sig.parameters)}; inputs: {', '.join(sig.parameters)}")
        _check_input(name, k, inputs[k], sig.parameters[k].default)
    from cvxpy.error import SolverError

    try:
        return fn(**inputs)
    except (SolverError, ValueError) as exc:
        # the solver gives up on badly scaled data (1e30 GB/s) rather than answering
        if isinstance(exc, ValueError) and not str(exc).startswith(("Cannot unpack invalid solution", "Problem data")):
            raise
        raise DseError(f"problem {name}: the solver found no answer for these inputs ({str(exc).splitlines()[0][:80]}); "
                       "check that they are in a sensible range") from None


def _check_input(problem: str, key: str, value: Any, default: Any) -> None:
    """Every numeric input of the shipped problems is a finite, non-negative quantity
    (a capacity, a bandwidth, a count, a fraction); NaN or inf would reach the solver."""
    import math

    if isinstance(default, bool) or not isinstance(default, (int, float)):
        return
    items = value if isinstance(value, list) else [value]
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise DseError(f"problem {problem}: {key}={value!r} must be a number (default {default})")
        if not math.isfinite(v) or v < 0:
            raise DseError(f"problem {problem}: {key}={v} must be a finite number >= 0")
        if isinstance(default, int) and v != int(v):
            raise DseError(f"problem {problem}: {key}={v} must be a whole number")


def solver_name() -> str:
    """The MILP-capable solver to use: HiGHS when installed with CVXPY."""
    import cvxpy as cp

    return "HIGHS" if "HIGHS" in cp.installed_solvers() else "SCIPY"
