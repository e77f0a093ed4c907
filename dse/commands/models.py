"""`dse models`, `dse describe NAME`, `dse eval NAME key=value ...`."""

from __future__ import annotations

from typing import Annotated

import typer

from dse import jsonsafe


def register(app: typer.Typer) -> None:
    app.command("models")(models_cmd)
    app.command("describe")(describe_cmd)
    app.command("eval")(eval_cmd)


def models_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the registered models."""
    from dse import registry

    rows = []
    for name in registry.names():
        cls = registry.model_class(name)
        rows.append(
            {
                "name": name,
                "version": cls.version,
                "params": len(cls.params),
                "metrics": len(cls.metrics),
                "variants": list(cls.variants()),
                "summary": cls.summary,
            }
        )
    if as_json:
        typer.echo(jsonsafe.dumps(rows))
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(title="registered models")
    for col in ("name", "version", "params", "metrics", "variants", "summary"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(
            r["name"], str(r["version"]), str(r["params"]), str(r["metrics"]), ", ".join(map(str, r["variants"])), r["summary"]
        )
    Console().print(t)


def describe_cmd(
    name: Annotated[str, typer.Argument(help="Model name (see `dse models`).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Parameters (with units, bounds and the source of each default), metrics and variants."""
    from dse import registry
    from dse.uncertainty import uncertainty_of

    cls = registry.model_class(name)
    params = [
        {
            "name": p.name,
            "unit": p.unit or "",
            "default": p.default,
            "allowed": p.describe_allowed(),
            "source": p.source,
            "doc": p.doc,
            "uncertainty": uncertainty_of(cls, p).describe(),
            "uncertainty_reason": uncertainty_of(cls, p).reason,
        }
        for p in cls.params
    ]
    metrics = [{"name": m.name, "unit": m.unit or "", "better": m.direction or "",
                "doc": m.doc + (f" (one of: {', '.join(m.labels)})" if m.labels else ""),
                "labels": list(m.labels) if m.labels else None,
                "nan_means": m.nan_means, "inf_means": m.inf_means} for m in cls.metrics]
    if as_json:
        typer.echo(
            jsonsafe.dumps(
                {"name": name, "version": cls.version, "summary": cls.summary, "source": cls.source,
                 "variant_param": cls.variant_param, "params": params, "metrics": metrics},
            )
        )
        return
    from rich.console import Console
    from rich.table import Table

    con = Console()
    con.print(f"[bold]{name}[/bold] v{cls.version}: {cls.summary}")
    if cls.source:
        con.print(f"source: {cls.source}")
    if cls.variant_param:
        con.print(f"variants ({cls.variant_param}): {', '.join(map(str, cls.variants()))}")
    t = Table(title="parameters")
    for col in ("name", "unit", "default", "allowed", "source", "uncertainty"):
        t.add_column(col, overflow="fold")
    for p in params:
        t.add_row(p["name"], p["unit"], str(p["default"]), p["allowed"], p["source"],
                  f"{p['uncertainty']} ({p['uncertainty_reason']})")
    con.print(t)
    t = Table(title="metrics")
    for col in ("name", "unit", "better", "meaning"):
        t.add_column(col, overflow="fold")
    for m in metrics:
        t.add_row(m["name"], m["unit"], {"min": "lower", "max": "higher"}.get(m["better"], ""), m["doc"])
    con.print(t)


def eval_cmd(
    name: Annotated[str, typer.Argument(help="Model name.")],
    assignments: Annotated[list[str] | None, typer.Argument(help="key=value overrides, e.g. lanes=16 ctrl_latency_ns=0.1us")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Evaluate one design point and print its metrics, and whether the point is feasible
    (with the reason when it is not)."""
    from dse import registry
    from dse.errors import DseError
    from dse.model import parse_assignments

    model = registry.get(name)
    inputs = parse_assignments(assignments or [], model.param_map())
    for k, v in inputs.items():
        if isinstance(v, list):
            raise DseError(f"{k}: `dse eval` takes one value per parameter; use `dse sweep` for several")
    ev = model.run_full(inputs)
    mmap = model.metric_map()
    # a categorical metric prints its label ("flash"), not its code
    result = {k: (mmap[k].label(v[:1])[0] if mmap[k].categorical else float(v[0])) for k, v in ev.metrics.items()}
    feasible, reason = bool(ev.feasible[0]), ev.reason_of(0)
    if as_json:
        typer.echo(jsonsafe.dumps({**result, "feasible": feasible, "reason": reason}))
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=f"{name}" + (" " + " ".join(assignments or []) if assignments else " (defaults)"))
    t.add_column("metric")
    t.add_column("value", justify="right")
    t.add_column("unit")
    for k, v in result.items():
        t.add_row(k, f"{v:.6g}" if isinstance(v, float) else escape(str(v)), mmap[k].unit or "")
    con = Console()
    con.print(t)
    con.print("feasible: yes" if feasible else f"feasible: [bold red]no[/bold red] ({escape(reason or '')})")
