"""`dse dashboard build RESULTS... --out dashboards/site`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

dashboard_app = typer.Typer(help="Static dashboards of studies, validation and calibration.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(dashboard_app, name="dashboard")


@dashboard_app.command("build")
def build_cmd(
    results: Annotated[list[Path], typer.Argument(help="Results folders of sweeps.")],
    out: Annotated[Path, typer.Option(help="Site folder: a new or empty one, or a site built here before (replaced); anything else is refused.")] = Path("dashboards/site"),
    calibration: Annotated[bool, typer.Option("--calibration/--no-calibration", help="Include the calibration page.")] = True,
    cv: Annotated[bool, typer.Option("--cv", help="Add each model's out-of-fit error (refits every anchor; about a minute).")] = False,
) -> None:
    """Write a static site: an index, one page per study, validation and calibration."""
    from dse.dashboard.build import build_site, check_results_args

    check_results_args(results)
    pages = build_site(results, out, calibration=calibration, cv=cv)
    typer.echo(f"{out}: {len(pages)} pages; open {out / 'index.html'}")
