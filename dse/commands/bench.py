"""`dse bench [NAME]`: measured speed and memory."""

from __future__ import annotations

from typing import Annotated

import typer

from dse import jsonsafe


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
    elif name not in ("blocks", "sensitivity", "dashboard"):
        fam = [n for n in registry.names() if n == name or n.startswith(name + "-")]
        if fam:
            rows += bench.model_rows(fam, seconds)
        else:
            rows += bench.block_rows(seconds, only=name + ".")
            if not rows:
                registry.model_class(name)  # raises the unknown-model error
    if name in (None, "sensitivity"):
        rows.append(bench.sensitivity_row())
    if name == "llm":  # the LLM block's one training execution beside the llm-serve family
        rows += bench.block_rows(seconds, only="llm.train_one")
    if name in (None, "llm"):
        rows += bench.llm_search_rows()
    if name in (None, "dashboard"):
        rows += bench.dashboard_rows()
    if name is None:
        if sweep:
            rows.append(bench.sweep_row())
        rows.append(bench.help_row())
    machine = bench.machine_info()
    base = machine["baseline_ops_per_s"]
    if as_json:
        typer.echo(jsonsafe.dumps({"machine": machine, "rows": [
            dict(r.__dict__, meets=r.meets, per_1e8_baseline_ops=bench.per_1e8_baseline_ops(r.rate_per_s, base))
            for r in rows]}))
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(title="dse bench (best of repeated runs)")
    for c, j in (("kind", "left"), ("case", "left"), ("per second", "right"), ("per 1e8 base ops", "right"),
                 ("target", "right"), ("", "left"), ("detail", "left")):
        t.add_column(c, justify=j, overflow="fold")
    for r in rows:
        mark = {True: "[green]ok[/green]", False: "[red]below[/red]", None: ""}[r.meets]
        t.add_row(r.kind, r.name, _rate(r.rate_per_s), _rate(bench.per_1e8_baseline_ops(r.rate_per_s, base)),
                  _rate(r.target_per_s) if r.target_per_s else "", mark, r.detail)
    con = Console(width=150)
    con.print(f"machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}, numpy {machine['numpy']}; "
              f"numpy baseline {base:.3g} elementwise ops/s (a*b+c on 131,072 float64); "
              f"one numpy call on a one-element array {machine['numpy_call_ns']:.0f} ns (the yardstick of the point rows)")
    con.print(t)


def _rate(x: float) -> str:
    return f"{x:,.0f}" if x >= 10 else f"{x:.3g}"
