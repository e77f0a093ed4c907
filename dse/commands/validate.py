"""`dse validate [NAME] [--claims FILE]`: model against the published claims."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_cmd)


def validate_cmd(
    name: Annotated[str | None, typer.Argument(help="Model name (or family prefix); all models when left out.")] = None,
    claims: Annotated[Path | None, typer.Option(help="A claims file from anywhere, in the claims format.")] = None,
    strict: Annotated[bool, typer.Option(help="Fail on any claim outside tolerance, not only headline claims.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Evaluate every claim and print model vs paper side by side.

    Exits 1 when a headline claim (or, with --strict, any claim) is outside its tolerance."""
    from dse.claims import claims_files, evaluate_claims

    files = [(name or "", claims)] if claims else claims_files(name)
    results = []
    for _, f in files:
        results.extend(evaluate_claims(Path(f)))
    failed = [r for r in results if not r.passed and (r.headline or strict)]
    if as_json:
        typer.echo(json.dumps([r.as_dict() for r in results], indent=2))
    else:
        print_results(results)
    if not results:
        typer.echo("no claims found", err=True)
    if failed:
        raise typer.Exit(1)


def print_results(results: list) -> None:
    from rich.console import Console
    from rich.table import Table

    from dse.claims import format_expected

    t = Table(title="model vs paper")
    for col, just in (("model", "left"), ("claim", "left"), ("kind", "left"), ("paper", "right"), ("model value", "right"),
                      ("error", "right"), ("tolerance", "right"), ("", "left")):
        t.add_column(col, justify=just, overflow="fold")
    for r in results:
        status = "[green]ok[/green]" if r.passed else ("[red]FAIL[/red]" if r.headline else "[yellow]off[/yellow]")
        t.add_row(
            r.model,
            r.id,
            "headline" if r.headline else "other",
            format_expected(r.expected) + (f" {r.unit}" if r.unit else ""),
            f"{r.value:.4g}",
            f"{r.error_pct:+.1f}%",
            r.tolerance,
            status,
        )
    con = Console(width=max(120, Console().width))
    con.print(t)
    n_head = sum(r.headline for r in results)
    ok_head = sum(r.headline and r.passed for r in results)
    n_other = len(results) - n_head
    ok_other = sum((not r.headline) and r.passed for r in results)
    con.print(f"headline claims: {ok_head}/{n_head} within tolerance; other claims: {ok_other}/{n_other}")
