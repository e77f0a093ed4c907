"""`dse reproduce --all`: the main job.  Sweep every shipped space, validate every
claims file, build the dashboard site."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated, Any

import typer


def register(app: typer.Typer) -> None:
    app.command("reproduce")(reproduce_cmd)


def reproduce_cmd(
    spaces: Annotated[list[str] | None, typer.Argument(help="Space names or files (default with --all: every spaces/*.toml).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every shipped space.")] = False,
    out: Annotated[Path | None, typer.Option(help="Folder for the studies (default results/reproduce); replaced.")] = None,
    site: Annotated[Path | None, typer.Option(help="Dashboard site folder (default dashboards/site).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 if a headline claim is outside its tolerance.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary (studies, claim counts, missed claims, site) on stdout only.")] = False,
    cv: Annotated[bool, typer.Option("--cv", help="Also each model's out-of-fit error (dse validate --cv) on the site's index.")] = False,
) -> None:
    """Sweep the spaces, validate the claims, build the dashboard site.

    With --all every claims file is validated; with named spaces, the claims of their models.
    Claims outside their tolerance are listed at the end; with --strict a headline one
    makes the exit status 1 (after doing everything), as `dse validate` does."""
    from dse.claims import claims_files, evaluate_claims
    from dse.commands.validate import print_results
    from dse.dashboard.build import build_site
    from dse.errors import DseError
    from dse.registry import project_root
    from dse.commands.sweep import summary as sweep_summary
    from dse.store import ResultsDir, read_manifest
    from dse.sweep.run import SweepOptions, run_sweep

    root = project_root()
    files = space_files(spaces, all_, root)
    out = out or root / "results" / "reproduce"
    site = site or root / "dashboards" / "site"
    out.mkdir(parents=True, exist_ok=True)
    say = (lambda text: typer.echo(text, err=True)) if as_json else typer.echo  # --json: stdout holds only the JSON
    done, summaries = [], []
    for f in files:
        target = out / f.stem
        if target.exists():
            if not ResultsDir(target).is_results_folder():
                raise DseError(f"{target} exists and was not written by a sweep; move it away or give --out")
            shutil.rmtree(target)  # a previous study of `reproduce`: replaced
        say(f"sweeping {f.name}")
        r = run_sweep(f, SweepOptions(out=target, progress=not quiet))
        m = r.manifest
        say(f"  {m['rows']['points']:,} points, {m['rows']['pareto']:,} Pareto in {m['timings_s']['total_s']:.1f} s -> {target}")
        done.append(target)
        summaries.append(sweep_summary(target, m))
    # --all validates every claims file; named spaces validate their models' claims
    results = []
    models = None if all_ else {name for d in done for name in models_of(read_manifest(d))}
    seen: set[Path] = set()
    for name in sorted(models) if models is not None else [None]:
        for _, cf in claims_files(name):
            if cf not in seen:
                seen.add(cf)
                results.extend(evaluate_claims(cf))
    if not as_json:
        print_results(results)
    pages = build_site(done, site, progress=not quiet, cv=cv)
    say(f"dashboard: {len(pages)} pages in {site}; open {site / 'index.html'}")
    missed = [r for r in results if r.headline and not r.passed and r.kind != "echo"]
    if as_json:
        from dse import jsonsafe
        from dse.claims import pass_counts

        counts = pass_counts(results)
        typer.echo(jsonsafe.dumps({"studies": summaries, "claims": {k: {"within": v[0], "of": v[1]} for k, v in counts.items()},
                                   "missed_headline": [f"{r.model}:{r.id}" for r in missed], "site": str(site), "pages": len(pages)}))
    if missed:
        names = ", ".join(f"{r.model}:{r.id}" for r in missed)
        say(f"headline claims outside tolerance ({len(missed)}): {names}")
        if strict:
            raise typer.Exit(1)


def models_of(manifest: dict[str, Any]) -> list[str]:
    """The models a study ran: its model, or each architecture's of a comparison."""
    if manifest.get("kind") == "comparison":
        return [a["model"] for a in manifest["archs"].values()]
    return [manifest["model"]["name"]]


def space_files(spaces: list[str] | None, all_: bool, root: Path) -> list[Path]:
    """The space files to sweep: every shipped one (--all), or the named ones (a name or a path)."""
    from dse.errors import DseError

    if all_:
        files = sorted((root / "spaces").glob("*.toml"))
    elif spaces:
        files = []
        for s in spaces:
            p = Path(s)
            if not p.exists():
                p = root / "spaces" / (s if s.endswith(".toml") else f"{s}.toml")
            if not p.exists():
                raise DseError(f"no space {s!r}; see spaces/*.toml")
            files.append(p)
    else:
        raise DseError("give space names, or --all for every shipped space")
    if not files:
        raise DseError(f"no space files in {root / 'spaces'}")
    return files
