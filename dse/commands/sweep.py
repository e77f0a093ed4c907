"""`dse sweep SPACE`: run a design space into a results folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep_cmd)


def sweep_cmd(
    space: Annotated[Path, typer.Argument(help="Space file, e.g. spaces/cxl_expander.toml.")],
    strategy: Annotated[str | None, typer.Option(help="grid | sobol | random | optuna (default: the space's [sweep]).")] = None,
    trials: Annotated[int | None, typer.Option(help="Points for sobol/random, trials for optuna.")] = None,
    backend: Annotated[str, typer.Option(help="local | ray.")] = "local",
    address: Annotated[str | None, typer.Option(help="Ray cluster to join (host:port); needs --backend ray.")] = None,
    storage: Annotated[str | None, typer.Option(help="Optuna RDB storage URL (default: journal file in the results folder).")] = None,
    out: Annotated[Path | None, typer.Option(help="Results folder (default: results/<space name>).")] = None,
    resume: Annotated[bool, typer.Option(help="Continue an unfinished study in --out after its process died (refused while another process runs it).")] = False,
    join: Annotated[bool, typer.Option(help="Optuna: add workers to a study running in --storage (or in --out's journal); writes no results, the study's owner does.")] = False,
    seed: Annotated[int | None, typer.Option(help="Random seed (default: the space's).")] = None,
    sampler: Annotated[str | None, typer.Option(help="Optuna sampler: nsga2 | tpe | gp.")] = None,
    batch: Annotated[int | None, typer.Option(help="Optuna trials asked and evaluated together.")] = None,
    workers: Annotated[int | None, typer.Option(help="Ray workers (default: the cluster's CPUs).")] = None,
    uncertainty: Annotated[int | None, typer.Option(help="Robust front: N draws of the uncertain parameter defaults per point (p5/p50/p95 per objective, p_pareto).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary (path, counts, timings, paper design) on stdout.")] = False,
) -> None:
    """Sweep a design space: grid, quasi-random or Optuna, locally or on Ray."""
    from dse.sweep.run import SweepOptions, run_sweep

    opts = SweepOptions(
        strategy=strategy,
        trials=trials,
        backend=backend,
        address=address,
        storage=storage,
        out=out,
        resume=resume,
        join=join,
        seed=seed,
        sampler=sampler,
        batch=batch,
        workers=workers,
        progress=not quiet,
        uncertainty=uncertainty,
    )
    result = run_sweep(space, opts)
    m = result.manifest
    if as_json:
        from dse import jsonsafe

        typer.echo(jsonsafe.dumps(summary(result.path, m)))
        return
    if "join" in m:
        j = m["join"]
        typer.echo(
            f"{j['storage']}: joined study {j['study_name']}: {j['trials_done'] - j['trials_before_join']:,} trials added "
            f"by all workers meanwhile, {j['trials_done']:,} of {j['target']:,} evaluated; its owner writes the results"
        )
        return
    rows = m.get("rows", {})
    t = m.get("timings_s", {})
    typer.echo(
        f"{result.path}: {rows.get('points', 0):,} points, {rows.get('feasible', 0):,} feasible, "
        f"{rows.get('pareto', 0):,} on the Pareto front (hypervolume {m.get('hypervolume', 0):.4f}) "
        f"in {t.get('total_s', 0):.2f} s"
    )


def summary(path: Path, m: dict) -> dict:
    """What a script needs from a finished sweep (the manifest has the rest)."""
    keys = ("kind", "rows", "hypervolume", "timings_s", "objectives", "paper_design", "pareto_by_arch", "join")
    return {"path": str(path), "space": m.get("space", {}).get("name"), **{k: m[k] for k in keys if k in m}}
