"""`dse dashboard build`: a static site with one page per study, the models' figures
against the papers, the validation tables and the calibration page."""

from __future__ import annotations

import importlib
import shutil
import tempfile
from pathlib import Path
from typing import Any

from dse.dashboard.html import Page
from dse.errors import DseError

BUNDLE = "assets/vega-bundle.js"


def build_site(results: list[Path], out: Path, *, calibration: bool = True, progress: bool = True) -> list[Path]:
    """Build the site into ``out`` (replaced atomically).  Returns the page paths."""
    import polars as pl

    from dse.claims import claims_files, evaluate_claims
    from dse.store import open_results

    studies = [open_results(r) for r in results]  # validate every input first
    out = Path(out)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent if out.parent.exists() else None))
    tmp.chmod(0o755)
    try:
        (tmp / "assets").mkdir()
        _write_bundle(tmp / BUNDLE)
        pages: list[Page] = []
        validation_cache: dict[str, list[Any]] = {}
        nav = [("index", "index.html")]

        def validation_for(model: str) -> list[Any]:
            if model not in validation_cache:
                rows: list[Any] = []
                for _, f in claims_files(model):
                    rows.extend(evaluate_claims(f))
                validation_cache[model] = rows
            return validation_cache[model]

        study_rows = []
        seen_names: set[str] = set()
        for r in studies:
            m = r.manifest()
            name = m["space"]["name"]
            fname = _unique(f"study-{name}.html", seen_names)
            page = study_page(r, m, fname, validation_for(m["model"]["name"]))
            pages.append(page)
            study_rows.append((name, fname, m))

        models_seen = sorted({m["model"]["name"] for _, _, m in study_rows})
        if calibration:
            cal = calibration_page()
            if cal is not None:
                pages.append(cal)
                nav.append(("calibration", cal.filename))

        index = Page("cxl-dse studies", "index.html", subtitle="Design-space exploration of CXL and disaggregated memory/storage")
        index.heading("Studies")
        rows = []
        for name, fname, m in study_rows:
            rows.append(
                [
                    f"@@{fname}@@{name}",
                    m["model"]["name"],
                    m["strategy"],
                    f"{m['rows']['points']:,}",
                    f"{m['rows']['feasible']:,}",
                    f"{m['rows']['pareto']:,}",
                    f"{m.get('hypervolume', 0):.4f}",
                ]
            )
        index.raw(_link_table(["study", "model", "strategy", "points", "feasible", "Pareto", "hypervolume"], rows))
        index.heading("Validation: model against the papers")
        vrows = []
        all_models = sorted(set(models_seen) | _models_with_claims())
        for model in all_models:
            res = validation_for(model)
            if not res:
                continue
            head = [x for x in res if x.headline]
            vrows.append(
                [
                    model,
                    f"{sum(x.passed for x in head)}/{len(head)}",
                    f"{sum(x.passed for x in res if not x.headline)}/{len(res) - len(head)}",
                ]
            )
        index.table(["model", "headline claims within tolerance", "other claims"], vrows, left={"model"})
        if calibration and any(p.filename == "calibration.html" for p in pages):
            index.note("Calibration of the DRAM and flash blocks against the cycle-accurate reference runs: see the calibration page.")
        pages.insert(0, index)
        nav += [(n, f) for n, f, _ in study_rows]
        for p in pages:
            (tmp / p.filename).write_text(p.render(nav), encoding="utf-8")
        del pl
        if out.exists():
            backup = out.with_name(f".{out.name}.old")
            shutil.rmtree(backup, ignore_errors=True)
            out.rename(backup)
            tmp.rename(out)
            shutil.rmtree(backup, ignore_errors=True)
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [out / p.filename for p in pages]


def _unique(name: str, seen: set[str]) -> str:
    base, n = name, 2
    while name in seen:
        name = base.replace(".html", f"-{n}.html")
        n += 1
    seen.add(name)
    return name


def _models_with_claims() -> set[str]:
    from dse.claims import claims_files

    return {n for n, _ in claims_files()}


def _link_table(columns: list[str], rows: list[list[str]]) -> str:
    import html

    head = "".join(f"<th class='l'>{html.escape(c)}</th>" for c in columns)
    body = []
    for row in rows:
        cells = []
        for v in row:
            if v.startswith("@@"):
                _, href, label = v.split("@@", 2)
                cells.append(f"<td class='l'><a href='{html.escape(href)}'>{html.escape(label)}</a></td>")
            else:
                cells.append(f"<td>{html.escape(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table class='data'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _write_bundle(path: Path) -> None:
    import vl_convert as vlc

    path.write_text(vlc.javascript_bundle(), encoding="utf-8")


def study_page(r: Any, m: dict[str, Any], filename: str, validation: list[Any]) -> Page:
    import polars as pl

    from dse.dashboard import charts

    objectives: dict[str, str] = m["objectives"]
    knobs: list[str] = m["knobs"]
    page = Page(
        f"{m['space']['name']} ({m['model']['name']})",
        filename,
        subtitle=m["space"].get("description", ""),
    )
    rows = m["rows"]
    page.note(
        f"{rows['points']:,} points by {m['strategy']}"
        + (f"/{m['sampler']}" if m.get("sampler") else "")
        + f", {rows['feasible']:,} feasible, {rows['pareto']:,} on the Pareto front; hypervolume {m.get('hypervolume', 0):.4f}. "
        + f"Model {m['model']['name']} v{m['model']['version']}, calibration {m['calibration']['mode']}, "
        + f"git {str(m['git'].get('revision'))[:10]}{' (dirty)' if m['git'].get('dirty') else ''}, {m['created']}."
    )
    cols = list(dict.fromkeys(knobs + list(objectives)))
    pts = pl.scan_parquet(r.points_path()).filter(pl.col("feasible")).select(cols)
    n = rows["feasible"]
    if n > 200_000:
        pts = pts.gather_every(max(1, n // 200_000))
    points = _plain_types(pts.collect())
    front = _plain_types(pl.read_parquet(r.pareto_path()).select(cols))
    page.heading("Pareto front")
    if front.height == 0:
        page.note("No feasible point: nothing is on the front.")
    else:
        for c in charts.pareto_charts(points, front, objectives, knobs):
            page.chart(c)
        show = front.head(50)
        page.table(show.columns, [list(x) for x in show.iter_rows()], left={k for k in knobs})
    if points.height:
        page.heading("Knobs against objectives")
        page.note("Best and median of each objective over the feasible points at each knob setting.")
        for c in charts.knob_charts(points, objectives, knobs):
            page.chart(c)
    add_model_figures(page, m["model"]["name"])
    add_validation(page, validation)
    return page


def _plain_types(df: Any) -> Any:
    import polars as pl

    casts = [pl.col(c).cast(pl.String) for c, t in df.schema.items() if t in (pl.Categorical,) or isinstance(t, pl.Enum)]
    return df.with_columns(casts) if casts else df


def add_model_figures(page: Page, model: str) -> None:
    """A model's figures against the paper: ``models/<pkg>/figures.py: figures()``
    returns (title, altair chart) pairs."""
    from dse import registry

    module = registry._entries()[model].partition(":")[0].rsplit(".", 1)[0] + ".figures"
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            return
        raise
    figs = mod.figures()
    if not figs:
        return
    page.heading("Model against the paper's figures")
    for title, chart in figs:
        page.chart(chart.properties(title=title) if hasattr(chart, "properties") else chart)


def add_validation(page: Page, results: list[Any]) -> None:
    from dse.claims import format_expected

    page.heading("Validation: model vs paper, per claim")
    if not results:
        page.note("This model has no claims file.")
        return
    cols = ["claim", "kind", "source", "paper", "model", "error", "tolerance", "status"]
    rows, classes = [], []
    for x in results:
        status = "ok" if x.passed else ("FAIL" if x.headline else "off")
        rows.append(
            [
                x.id,
                "headline" if x.headline else "other",
                x.source,
                format_expected(x.expected) + (f" {x.unit}" if x.unit else ""),
                f"{x.value:.4g}",
                f"{x.error_pct:+.1f}%",
                x.tolerance,
                status,
            ]
        )
        classes.append(["", "", "", "", "", "", "", {"ok": "ok", "FAIL": "fail", "off": "off"}[status]])
    page.table(cols, rows, left={"claim", "kind", "source"}, classes=classes)
    page.chart(claims_chart(results))


def claims_chart(results: list[Any]) -> Any:
    """Model over paper for every claim on a log axis, with each claim's tolerance band."""
    import math

    import altair as alt

    recs = []
    for x in results:
        exp = x.expected
        lo, hi = (sorted(exp) if isinstance(exp, tuple) else (exp, exp))
        mid = (lo + hi) / 2 if isinstance(exp, tuple) else exp
        if not (math.isfinite(x.value) and mid and x.value / mid > 0):
            continue
        tol = x.tolerance.split("%")[0].lstrip("±") if "%" in x.tolerance else "0"
        rel = float(tol) / 100 if tol.replace(".", "", 1).isdigit() else 0.0
        recs.append(
            {
                "claim": x.id,
                "ratio": x.value / mid,
                "band_lo": (lo * (1 - rel)) / mid,
                "band_hi": (hi * (1 + rel)) / mid,
                "status": "within tolerance" if x.passed else ("headline miss" if x.headline else "other miss"),
                "paper": _fmt_exp(exp),
                "model": x.value,
            }
        )
    if not recs:
        return {"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "data": {"values": []}, "mark": "point"}
    base = alt.Chart(alt.Data(values=recs)).encode(alt.Y("claim:N", sort=None, title=None))
    band = base.mark_rule(strokeWidth=6, opacity=0.25, color="#5b8def").encode(
        alt.X("band_lo:Q", scale=alt.Scale(type="log"), title="model / paper (log scale)"), alt.X2("band_hi:Q")
    )
    dots = base.mark_point(filled=True, size=70).encode(
        alt.X("ratio:Q"),
        alt.Color(
            "status:N",
            scale=alt.Scale(domain=["within tolerance", "other miss", "headline miss"], range=["#1a7f37", "#9a6700", "#cf222e"]),
        ),
        tooltip=["claim:N", "paper:N", alt.Tooltip("model:Q", format=".4g"), alt.Tooltip("ratio:Q", format=".3f"), "status:N"],
    )
    one = alt.Chart(alt.Data(values=[{"x": 1.0}])).mark_rule(color="#444", strokeDash=[4, 3]).encode(x="x:Q")
    return alt.layer(band, one, dots).properties(
        title="Model against the paper, per claim (band: tolerance)", width=520, height=max(120, 16 * len(recs))
    )


def _fmt_exp(e: Any) -> str:
    from dse.claims import format_expected

    return format_expected(e)


def calibration_page() -> Page | None:
    """Fitted blocks against the reference runs (DRAMsim3, MQSim)."""
    from dse.dashboard.calibration import calibration_page as build

    return build()


def check_results_args(results: list[Path]) -> None:
    if not results:
        raise DseError("give at least one results folder (see `dse sweep`)")
