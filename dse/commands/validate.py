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
    cv: Annotated[bool, typer.Option("--cv", help="Also refit without each anchor claim and report its out-of-fit error.")] = False,
) -> None:
    """Evaluate every claim and print model vs paper side by side.

    Exits 1 when a headline claim (or, with --strict, any claim) is outside its tolerance."""
    from dse.claims import attach_intervals, claim_intervals, claims_files, evaluate_claims
    from dse.errors import DseError

    files = [(name or "", claims)] if claims else claims_files(name)
    if uq and not 2 <= uq <= 10_000:
        raise DseError(f"--uq {uq}: give 0 (off) or 2 to 10,000 draws")
    results, cv_rows = [], []
    for _, f in files:
        rows = evaluate_claims(Path(f))
        if uq:
            attach_intervals(rows, claim_intervals(Path(f), uq))
        if cv:
            from dse.crossval import cross_validate

            cv_rows.extend(cross_validate(Path(f), rows))
        results.extend(rows)
    failed = [r for r in results if not r.passed and (r.headline or strict)]
    if as_json:
        claims_json = [r.as_dict() for r in results]
        if cv:
            from dse.crossval import median_abs

            typer.echo(jsonsafe.dumps({"claims": claims_json, "cv": [r.__dict__ for r in cv_rows], "cv_median_abs_error_pct": median_abs(cv_rows)}))
        else:
            typer.echo(jsonsafe.dumps(claims_json))
    else:
        print_results(results)
        if cv:
            print_cv(cv_rows)
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
            ("headline" if r.headline else "other") + ("" if r.kind == "prediction" else f" ({r.kind})"),
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
    from dse.claims import pass_counts

    c = pass_counts(results)
    (ok_head, n_head), (ok_other, n_other), (_, n_echo) = c["headline"], c["other"], c["echo"]
    con.print(f"headline claims: {ok_head}/{n_head} within tolerance; other claims: {ok_other}/{n_other}"
              + (f"; {n_echo} echoes (the paper's value is a model input) not counted" if n_echo else ""))


def print_cv(rows: list) -> None:
    """In-fit against out-of-fit error of every anchor claim, and each model's median."""
    from rich.console import Console
    from rich.table import Table

    from dse.claims import format_expected
    from dse.crossval import median_abs

    con = Console(width=max(120, Console().width))
    if not rows:
        con.print("no anchor claims: nothing was fitted to a claim, every claim is a prediction")
        return
    t = Table(title="leave-one-anchor-out: in-fit vs out-of-fit")
    for col in ("model", "anchor claim", "paper", "in-fit", "error", "out-of-fit", "error", "note"):
        t.add_column(col, overflow="fold")
    for r in rows:
        out = "" if r.out_of_fit_value is None else f"{r.out_of_fit_value:.4g}"
        oerr = "" if r.out_of_fit_error_pct is None else f"{r.out_of_fit_error_pct:+.1f}%"
        t.add_row(r.model, r.id, format_expected(r.expected) + (f" {r.unit}" if r.unit else ""), f"{r.in_fit_value:.4g}",
                  f"{r.in_fit_error_pct:+.1f}%", out, oerr, r.note)
    con.print(t)
    for model, med in median_abs(rows).items():
        con.print(f"{model}: median out-of-fit error " + ("not available (no cv.py)" if med is None else f"{med:.1f}%"))
