"""`dse validate [NAME] [--claims FILE]`: model against the published claims."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dse import jsonsafe


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_cmd)


def validate_cmd(
    name: Annotated[str | None, typer.Argument(help="Model name (or family prefix); all models when left out.")] = None,
    claims: Annotated[Path | None, typer.Option(help="A claims file from anywhere, in the claims format.")] = None,
    strict: Annotated[bool, typer.Option(help="Fail on any claim outside tolerance, not only headline claims.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    uq: Annotated[int, typer.Option("--uq", help="Also the model's p5-p95 over N draws of its parameter uncertainty (0: off).")] = 0,
) -> None:
    """Evaluate every claim and print model vs paper side by side.

    Exits 1 when a headline claim (or, with --strict, any claim) is outside its tolerance."""
    from dse.claims import attach_intervals, claim_intervals, claims_files, evaluate_claims
    from dse.errors import DseError

    files = [(name or "", claims)] if claims else claims_files(name)
    if uq and not 2 <= uq <= 10_000:
        raise DseError(f"--uq {uq}: give 0 (off) or 2 to 10,000 draws")
    results = []
    for _, f in files:
        rows = evaluate_claims(Path(f))
        if uq:
            attach_intervals(rows, claim_intervals(Path(f), uq))
        results.extend(rows)
    failed = [r for r in results if not r.passed and (r.headline or strict)]
    if as_json:
        typer.echo(jsonsafe.dumps([r.as_dict() for r in results]))
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
    with_uq = any(r.p5 is not None for r in results)
    cols = [("model", "left"), ("claim", "left"), ("kind", "left"), ("paper", "right"), ("model value", "right"),
            ("error", "right"), ("tolerance", "right"), ("", "left")]
    if with_uq:
        cols[5:5] = [("model p5–p95", "right"), ("paper in", "left")]
    for col, just in cols:
        t.add_column(col, justify=just, overflow="fold")
    for r in results:
        status = "[green]ok[/green]" if r.passed else ("[red]FAIL[/red]" if r.headline else "[yellow]off[/yellow]")
        cells = [
            r.model,
            r.id,
            "headline" if r.headline else "other",
            format_expected(r.expected) + (f" {r.unit}" if r.unit else ""),
            f"{r.value:.4g}",
            f"{r.error_pct:+.1f}%",
            r.tolerance,
            status,
        ]
        if with_uq:
            cells[5:5] = [f"{r.p5:.4g}–{r.p95:.4g}" if r.p5 is not None else "", {True: "yes", False: "no"}.get(r.inside, "")]
        t.add_row(*cells)
    con = Console(width=max(120, Console().width))
    con.print(t)
    n_head = sum(r.headline for r in results)
    ok_head = sum(r.headline and r.passed for r in results)
    n_other = len(results) - n_head
    ok_other = sum((not r.headline) and r.passed for r in results)
    con.print(f"headline claims: {ok_head}/{n_head} within tolerance; other claims: {ok_other}/{n_other}")
