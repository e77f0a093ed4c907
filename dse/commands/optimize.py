"""`dse optimize PROBLEM key=value ...`: provisioning questions solved with CVXPY.

Problems are declared by the architecture packages (``optimize`` of each ``ARCH``
descriptor, name -> "module:function").  Each
function takes keyword arguments (already parsed) and returns an
:class:`dse.optimize.Solution`."""

from __future__ import annotations

from typing import Annotated

import typer

from dse import jsonsafe


def register(app: typer.Typer) -> None:
    app.command("optimize")(optimize_cmd)


def optimize_cmd(
    problem: Annotated[str | None, typer.Argument(help="Problem name (see --list).")] = None,
    assignments: Annotated[list[str] | None, typer.Argument(help="key=value inputs of the problem.")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the problems and their inputs.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Solve a provisioning or placement problem exactly (LP / MILP)."""
    from dse import optimize
    from dse.errors import DseError
    from dse.model import parse_assignments

    if list_ or problem is None:
        for name, (doc, params) in optimize.describe_all().items():
            typer.echo(f"{name}: {doc}")
            for p, d in params.items():
                typer.echo(f"    {p} (default {d})")
        if problem is None and not list_:
            raise DseError("give a problem name; `dse optimize --list` shows them")
        return
    sol = optimize.solve(problem, parse_assignments(assignments or []))
    if as_json:
        typer.echo(jsonsafe.dumps(sol.as_dict()))
        return
    sol.print()
