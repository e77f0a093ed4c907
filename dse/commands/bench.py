"""`dse bench [NAME]`: measured speed and memory."""

from __future__ import annotations

import json
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    app.command("bench")(bench_cmd)


def bench_cmd(
    name: Annotated[str | None, typer.Argument(help="A model or model family, 'blocks', or one block (llm, flash, dram, cache, ...); everything when left out.")] = None,
    sweep: Annotated[bool, typer.Option("--sweep/--no-sweep", help="Time a 1e6-point grid sweep.")] = True,
    seconds: Annotated[float, typer.Option(help="Minimum seconds per case.")] = 0.5,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Evaluations per second per model and block, sweep throughput and peak memory."""
    from dse import bench, registry

    rows = []
    if name in (None, "blocks"):
        rows += bench.block_rows(seconds)
    if name is None:
        rows += bench.model_rows(registry.names(), seconds)
    elif name != "blocks":
        fam = [n for n in registry.names() if n == name or n.startswith(name + "-")]
        if fam:
            rows += bench.model_rows(fam, seconds)
        else:
            rows += bench.block_rows(seconds, only=name + ".")
            if not rows:
                registry.model_class(name)  # raises the unknown-model error
    if name is None:
        if sweep:
            rows.append(bench.sweep_row())
        rows.append(bench.help_row())
    if as_json:
        typer.echo(json.dumps([dict(r.__dict__, meets=r.meets) for r in rows], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(title="dse bench (best of repeated runs)")
    for c, j in (("kind", "left"), ("case", "left"), ("per second", "right"), ("target", "right"), ("", "left"), ("detail", "left")):
        t.add_column(c, justify=j, overflow="fold")
    for r in rows:
        mark = {True: "[green]ok[/green]", False: "[red]below[/red]", None: ""}[r.meets]
        t.add_row(r.kind, r.name, f"{r.rate_per_s:,.0f}", f"{r.target_per_s:,.0f}" if r.target_per_s else "", mark, r.detail)
    Console(width=140).print(t)
