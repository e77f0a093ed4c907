"""`dse compare RESULTS`: which architecture wins on each objective, where, and by how
much; and whether each article's own design lies on the Pareto front."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from dse import jsonsafe


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_cmd)


def compare_cmd(
    results: Annotated[list[Path], typer.Argument(help="A results folder: a comparison sweep, or a sweep of a space with [paper_design]; or several sweeps with the same objectives, to compare their fronts.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    limit: Annotated[int, typer.Option(help="Rows of the who-wins table to print (all in --json).")] = 40,
    uq: Annotated[int, typer.Option("--uq", help="How sure each win is: N draws of every uncertain parameter default (0: off).")] = 0,
    seed: Annotated[int, typer.Option(help="Seed of the --uq draws.")] = 0,
    width: Annotated[float | None, typer.Option(help="With --uq: replace every relative width by this one (0.3 = +-30 %).")] = None,
) -> None:
    """Who wins where: per workload point and objective, the best architecture, the
    runner-up and the margin; then the papers' designs against the Pareto front.  Given
    several sweeps with the same objectives: their fronts scored in one shared box."""
    from dse.compare_report import report

    if len(results) > 1:
        _print_fronts(fronts_report(results), as_json)
        return
    out = report(results[0], uq=uq, seed=seed, width=width)
    if as_json:
        print(jsonsafe.dumps(out))
        return
    _print(out, limit)


def fronts_report(results: list[Path]) -> dict[str, Any]:
    """Several sweeps' fronts in one shared box; one line and exit 2 when a folder is not
    a finished sweep or the objectives differ."""
    from dse.dashboard import fronts
    from dse.errors import DseError
    from dse.store import open_results

    studies = [open_results(r) for r in results]
    keys = {}
    for r in studies:
        m = r.manifest()
        if m.get("kind") == "comparison":
            raise DseError(f"{r.path}: a comparison sweep; compare it alone (dse compare {r.path})")
        keys[str(r.path)] = fronts.objective_key(m)
    if len(set(keys.values())) > 1:
        shown = "; ".join(f"{p}: {', '.join(n for n, _ in k)}" for p, k in keys.items())
        raise DseError(f"these sweeps optimize different objectives, so their fronts cannot share a box ({shown})")
    objectives = dict(next(iter(keys.values())))
    return {"kind": "fronts", "objectives": objectives, "studies": fronts.scores({str(r.path): r.path for r in studies}, objectives)}


def _print_fronts(out: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(jsonsafe.dumps(out))
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(title="fronts in one shared box: " + ", ".join(f"{k} ({d})" for k, d in out["objectives"].items()))
    for c in ("study", "front points", "hypervolume", "share of joint front", "undominated by the others"):
        t.add_column(c)
    for label, s in out["studies"].items():
        t.add_row(label, f"{s['front_points']:,}", f"{s['hypervolume_shared']:.3f}", f"{100 * s['joint_share']:.0f}%",
                  f"{100 * s['undominated_frac']:.0f}%")
    Console().print(t)


def _print(out: dict[str, Any], limit: int) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if out["kind"] == "comparison":
        fam = out["family"]
        console.print(f"[bold]{out['space']}[/]: {fam['name']} ({fam['usd_per_work']}); workload knobs: {', '.join(out['workload']) or 'none'}")
        t = Table(title="who wins where")
        cols = [*out["workload"], "objective", "winner", "value", "runner_up", "margin_x"]
        if out["wins"] and "p_win" in out["wins"][0]:
            cols.append("p_win")
        for c in cols:
            t.add_column(c)
        for row in out["wins"][:limit]:
            shown = dict(row, winner=f"{row['winner']} = {row['runner_up']} (tie)" if row.get("tie") else row["winner"])
            t.add_row(*[_fmt(shown.get(c)) for c in cols])
        console.print(t)
        if len(out["wins"]) > limit:
            console.print(f"... {len(out['wins']) - limit} more rows (--limit, or --json for all)")
        counts = ", ".join(f"{r['objective']}: {r['winner']} x{r['len']}" for r in out["win_counts"])
        ties = sum(1 for r in out["wins"] if r.get("tie"))
        console.print(f"wins (ties within 0.5 % not counted: {ties}): {counts}")
        console.print("joint Pareto front by architecture: " + ", ".join(f"{a} {n}" for a, n in out["pareto_by_arch"].items()))
    for name, pd in out["paper_designs"].items():
        _print_paper(console, name, pd)


def _print_paper(console: Any, name: str, pd: dict[str, Any] | None) -> None:
    if not pd:
        console.print(f"{name}: the sweep predates [paper_design]; re-run it")
        return
    design = ", ".join(f"{k}={_fmt(v)}" for k, v in pd["design"].items())
    if not pd["feasible"]:
        console.print(f"[bold]{name}[/] paper design ({pd['source']}): infeasible here ({pd['reason']}); {design}")
        return
    if pd["on_front"] is None:
        console.print(f"[bold]{name}[/] paper design ({pd['source']}): no swept design has its workload "
                      f"({', '.join(pd.get('held_equal', []))}); put its values in the grid: {design}")
        return
    if pd["on_front"]:
        console.print(f"[bold]{name}[/] paper design ({pd['source']}) is on the Pareto front: {design}")
        return
    console.print(f"[bold]{name}[/] paper design ({pd['source']}) is dominated by {pd['dominated_by']} of "
                  f"{pd.get('compared_with', '?')} swept designs with its workload: {design}")
    for d in pd["dominators"]:
        ratios = ", ".join(f"{m} x{_fmt(r)}" for m, r in d["ratio"].items())
        knobs = ", ".join(f"{k}={_fmt(v)}" for k, v in d["design"].items() if pd["design"].get(k) != v)
        console.print(f"  {knobs or '(same knobs)'}: {ratios}")


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v)
