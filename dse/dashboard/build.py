"""`dse dashboard build`: a static site with one page per study, the models' figures
against the papers, the validation tables and the calibration page."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from dse.dashboard.html import Page
from dse.errors import DseError

BUNDLE = "assets/vega-bundle.js"
#: Written into every site this command builds: the files it wrote, so that a rebuild
#: replaces only a folder that holds nothing else (and never a user's folder).
MARKER = ".dse-site"
MARKER_KIND = "cxl-dse dashboard site"
#: Names that make a folder a sweep's results folder (see dse/store.py).
RESULTS_NAMES = ("manifest.json", "points.parquet", "pareto.parquet", ".incomplete", ".parts", ".lock")


def build_site(results: list[Path], out: Path, *, calibration: bool = True, progress: bool = True, cv: bool = False) -> list[Path]:
    """Build the site into ``out`` and return the page paths.

    ``out`` is a new folder, an empty one, or a site this command built before (it holds
    the :data:`MARKER` file and nothing but the files listed there); anything else is
    refused before a file is written (:func:`check_out`).  The site is written into a
    temporary sibling and renamed into place; a previous site is moved aside first and
    removed only once the new one is in place (put back if that rename fails).  With
    ``cv`` the validation tables add each model's out-of-fit error (``dse validate --cv``)."""
    from dse.store import open_results

    studies = [open_results(r) for r in results]  # validate every input first
    manifests = {id(r): study_manifest(r) for r in studies}
    out = check_out(Path(out), [r.path for r in studies])
    created = _make_parent(out.parent)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    except OSError as exc:
        _remove_dirs(created)
        raise DseError(f"--out {out}: cannot write in {out.parent} ({exc.strerror or exc})") from None
    try:
        tmp.chmod(0o755)
        (tmp / "assets").mkdir()
        _write_bundle(tmp / BUNDLE)
        validation = Validation(cv)
        pages, study_rows = _study_pages(studies, manifests, validation)
        nav = [("index", "index.html")]
        cal = calibration_page() if calibration else None
        if cal is not None:
            pages.append(cal)
            nav.append(("calibration", cal.filename))
        fronts = [(name, fname, r.path, m) for r, (name, fname, m) in zip(studies, study_rows)]
        pages.insert(0, _index_page(study_rows, validation, cal is not None, fronts))
        _write_pages(tmp, pages, nav, _nav_groups(study_rows))
        check_out(out, [r.path for r in studies])  # again: the folder may have changed meanwhile
        _swap_in(tmp, out)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_dirs(created)
        if isinstance(exc, OSError) and _about(exc, out.parent):  # a full disk, no permission: not a bug
            raise DseError(f"--out {out}: cannot write the site ({exc.strerror or exc})") from None
        raise
    return [out / p.filename for p in pages]


class Validation:
    """Claims results per model, evaluated once per build; with ``cv``, each model's
    leave-one-anchor-out rows too."""

    def __init__(self, cv: bool = False) -> None:
        self.cv = cv
        self._results: dict[str, list[Any]] = {}
        self._cv: dict[str, list[Any]] = {}

    def results(self, model: str) -> list[Any]:
        from dse.claims import claims_files, evaluate_claims

        if model not in self._results:
            rows: list[Any] = []
            cv_rows: list[Any] = []
            for _, f in claims_files(model):
                found = evaluate_claims(f)
                rows.extend(found)
                if self.cv:
                    from dse.crossval import cross_validate

                    cv_rows.extend(cross_validate(f, found))
            self._results[model] = rows
            self._cv[model] = cv_rows
        return self._results[model]

    def cv_rows(self, model: str) -> dict[str, Any] | None:
        """Claim id -> leave-one-out row of the model's anchors (None without cv)."""
        if not self.cv:
            return None
        self.results(model)
        return {r.id: r for r in self._cv[model] if r.model == model}

    def out_of_fit(self, model: str) -> str:
        """The model's median |out-of-fit error| for the index ('' without cv)."""
        from dse.crossval import median_abs

        if not self.cv:
            return ""
        self.results(model)
        med = median_abs([r for r in self._cv[model] if r.model == model]).get(model)
        return "no anchors" if model not in {r.model for r in self._cv[model]} else ("-" if med is None else f"{med:.1f}%")


def _study_pages(studies: list[Any], manifests: dict[int, Any], validation: Validation) -> tuple[list[Page], list[tuple[str, str, Any]]]:
    """One page per study (a comparison gets the comparison page) and (name, file, manifest) rows."""
    pages: list[Page] = []
    study_rows = []
    seen_names: set[str] = set()
    for r in studies:
        m = manifests[id(r)]
        name = m["space"]["name"]
        fname = _unique(f"study-{_safe_name(name)}.html", seen_names)
        if m.get("kind") == "comparison":
            from dse.dashboard.comparison import comparison_page

            page = comparison_page(r, m, fname)
        else:
            model = m["model"]["name"]
            page = study_page(r, m, fname, validation.results(model), validation.cv_rows(model))
        pages.append(page)
        study_rows.append((name, fname, m))
    return pages, study_rows


def _index_page(study_rows: list[tuple[str, str, Any]], validation: Validation, has_calibration: bool,
                fronts: list[tuple[str, str, Path, Any]] | None = None) -> Page:
    """The studies table, the fronts of studies with the same objectives compared, and
    every model's validation counts."""
    from dse.claims import pass_counts

    index = Page("cxl-dse studies", "index.html", subtitle="Design-space exploration of CXL and disaggregated memory/storage")
    index.heading("Studies")
    rows = [[f"@@{fname}@@{name}", m["model"]["name"], m["strategy"], f"{m['rows']['points']:,}", f"{m['rows']['feasible']:,}",
             f"{m['rows']['pareto']:,}", _hypervolume(m)] for name, fname, m in study_rows]
    index.raw(_link_table(["study", "model", "strategy", "points", "feasible", "Pareto", "hypervolume (own bounds)"], rows))
    _fronts_compared(index, fronts or [])
    index.heading("Validation: model against the papers")
    models_seen = {m["model"]["name"] for _, _, m in study_rows if m.get("kind") != "comparison"}
    vrows = []
    for model in sorted(models_seen | _models_with_claims()):
        res = validation.results(model)
        if not res:
            continue
        counts = pass_counts(res)
        row = [model, "{}/{}".format(*counts["headline"]), "{}/{}".format(*counts["other"]), str(counts["echo"][1])]
        vrows.append(row + ([validation.out_of_fit(model)] if validation.cv else []))
    cols = ["model", "headline claims within tolerance", "other claims", "echoes (not counted)"]
    index.table(cols + (["median out-of-fit error"] if validation.cv else []), vrows, left={"model"})
    if validation.cv:
        index.note("Out-of-fit error: each anchor claim predicted with the model's constants refitted without it (dse validate --cv).")
    if has_calibration:
        index.note("Calibration of the DRAM and flash blocks against the cycle-accurate reference runs: see the calibration page.")
    return index


def _fronts_compared(index: Page, fronts: list[tuple[str, str, Path, Any]]) -> None:
    """Studies with the same objectives, scored in one shared box (dse.dashboard.fronts)."""
    from dse.dashboard import fronts as compared

    found = compared.groups(fronts)
    if not found:
        index.note(compared.OWN_BOUNDS + " No two studies here share their objectives, so none is scored in a shared box.")
        return
    index.heading("Fronts compared (studies with the same objectives)")
    for key, rows in found:
        index.note("Objectives: " + ", ".join(f"{name} ({direction})" for name, direction in key))
        index.raw(_link_table(compared.COLUMNS, rows))
    index.note(compared.EXPLAIN)


def _nav_groups(study_rows: list[tuple[str, str, Any]]) -> dict[str, list[tuple[str, str]]]:
    """The navigation menu: comparisons first, then each model's studies."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for n, f, m in sorted(study_rows, key=lambda row: (row[2].get("kind") != "comparison", row[2]["model"]["name"], row[0])):
        group = "comparisons" if m.get("kind") == "comparison" else m["model"]["name"]
        groups.setdefault(group, []).append((n, f))
    return groups


def _write_pages(folder: Path, pages: list[Page], nav: list[tuple[str, str]], groups: dict[str, list[tuple[str, str]]]) -> None:
    """Every page, the files it links, and the marker listing them all."""
    for p in pages:
        (folder / p.filename).write_text(p.render(nav, groups), encoding="utf-8")
        for rel, data in p.files.items():
            (folder / rel).write_bytes(data)
    _write_marker(folder, [BUNDLE] + [p.filename for p in pages] + [rel for p in pages for rel in p.files])


# ------------------------------------------------------------------ the --out folder
def check_out(out: Path, inputs: list[Path]) -> Path:
    """Refuse an ``--out`` that this command may not replace; return it as an absolute path.

    Allowed: a path that does not exist (under folders, or nothing), an empty folder, or
    a site built by this command holding only the files it wrote.  Refused: a file, a
    symbolic link, a results folder, the current folder or one above it, a folder that
    is or holds one of the ``inputs``, and any other non-empty folder."""
    try:
        return _check_out(out, inputs)
    except (OSError, RuntimeError) as exc:  # no permission to look, a symbolic-link loop
        raise DseError(f"--out {out}: cannot check the folder ({getattr(exc, 'strerror', None) or exc})") from None


def _check_out(out: Path, inputs: list[Path]) -> Path:
    shown = str(out)
    target = Path(os.path.abspath(out))
    if target == target.parent:
        raise DseError(f"--out {shown} is the root folder; give a folder for the site, e.g. dashboards/site")
    target = target.parent.resolve() / target.name
    if target.is_symlink():
        raise DseError(f"--out {shown} is a symbolic link; give the folder itself (or a new path)")
    cwd = Path.cwd().resolve()
    if target == cwd or target in cwd.parents:
        raise DseError(f"--out {shown} is the current folder or holds it; give a folder for the site, e.g. dashboards/site")
    for inp in inputs:
        real = Path(inp).resolve()
        if target == real or target in real.parents:
            raise DseError(f"--out {shown} is or holds the results folder {inp}; give another folder for the site")
    for anc in [target, *target.parents]:
        if anc.exists() or anc.is_symlink():
            if not anc.is_dir():
                what = "is a file" if anc == target else f"is under {anc}, which is a file"
                raise DseError(f"--out {shown} {what}, not a folder; give a folder for the site")
            break
    if not target.is_dir():
        return target
    found = [n for n in RESULTS_NAMES if (target / n).exists() or (target / n).is_symlink()]
    if found:
        raise DseError(f"--out {shown} is a results folder (it holds {found[0]}); give another folder for the site")
    if not any(target.iterdir()):
        return target
    written = _site_files(target)
    if written is None:
        raise DseError(
            f"--out {shown} is a folder that `dse dashboard build` did not make (no {MARKER} in it) and is not empty; "
            "give a new or empty folder"
        )
    foreign = _foreign_entry(target, written)
    if foreign is not None:
        raise DseError(
            f"--out {shown} holds {foreign!r}, which `dse dashboard build` did not write; move it away or give another folder"
        )
    return target


def _site_files(folder: Path) -> set[str] | None:
    """The files a previous build wrote into ``folder`` (from its marker), or None when
    the folder is not a site this command built.  A site from before the marker existed
    is recognized by its exact shape: index.html (ours), study pages, the bundle."""
    marker = folder / MARKER
    if marker.is_file() and not marker.is_symlink():
        try:
            data = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return None
        files = data.get("files") if isinstance(data, dict) and data.get("kind") == MARKER_KIND else None
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            return None
        return {f for f in files if _is_relative_name(f)} | {MARKER}
    legacy = {"index.html", "calibration.html", BUNDLE}
    names = {p.name for p in folder.iterdir()}
    index = folder / "index.html"
    if not index.is_file() or index.is_symlink():
        return None
    try:
        ours = "cxl-dse studies" in index.read_text(encoding="utf-8", errors="replace")[:20_000]
    except OSError:
        return None
    if not ours:
        return None
    return legacy | {n for n in names if re.fullmatch(r"study-[A-Za-z0-9._-]+\.html", n)}


def _is_relative_name(f: str) -> bool:
    parts = Path(f).parts
    return bool(parts) and not Path(f).is_absolute() and ".." not in parts


def _foreign_entry(folder: Path, written: set[str]) -> str | None:
    """The first thing under ``folder`` that is not one of ``written`` (nor a folder on
    the way to one), or None."""
    dirs = {str(Path(*Path(f).parts[:i])) for f in written for i in range(1, len(Path(f).parts))}
    stack = [folder]
    while stack:
        d = stack.pop()
        for p in d.iterdir():
            rel = str(p.relative_to(folder))
            if p.is_dir() and not p.is_symlink() and rel in dirs:
                stack.append(p)
            elif rel not in written or p.is_dir() and not p.is_symlink():
                return rel
    return None


def _write_marker(site: Path, files: list[str]) -> None:
    import dse
    from dse.store import now_iso

    marker = {
        "kind": MARKER_KIND,
        "tool_version": dse.__version__,
        "created": now_iso(),
        "note": "written by `dse dashboard build`; a rebuild replaces this folder only if it holds just these files",
        "files": sorted(files),
    }
    (site / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")


def _make_parent(parent: Path) -> list[Path]:
    """Create ``parent`` and any folders above it that are missing; return those created
    (deepest last), for removal if the build fails."""
    missing = []
    for anc in [parent, *parent.parents]:
        if anc.exists():
            break
        missing.append(anc)
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _remove_dirs(list(reversed(missing)))
        raise DseError(f"--out: cannot create {parent} ({exc.strerror or exc})") from None
    return list(reversed(missing))


def _about(exc: OSError, folder: Path) -> bool:
    """Whether an OS error names a path in ``folder`` (where the site is written)."""
    names = [n for n in (exc.filename, exc.filename2) if isinstance(n, (str, bytes, os.PathLike))]
    return any(folder in Path(os.fsdecode(n)).parents for n in names)


def _remove_dirs(created: list[Path]) -> None:
    for d in reversed(created):
        try:
            d.rmdir()
        except OSError:
            break


def _swap_in(new: Path, out: Path) -> None:
    """Rename the built site ``new`` to ``out``; a previous site there is moved aside
    first (its files kept until the new site is in place) and then removed."""
    if not (out.exists() or out.is_symlink()):
        os.rename(new, out)
        return
    holder = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", suffix=".tmp", dir=out.parent))
    old = holder / "site"
    os.rename(out, old)
    try:
        os.rename(new, out)
    except BaseException:
        os.rename(old, out)  # the previous site goes back
        shutil.rmtree(holder, ignore_errors=True)
        raise
    shutil.rmtree(holder, ignore_errors=True)


# ------------------------------------------------------------------ reading the studies
def study_manifest(r: Any) -> dict[str, Any]:
    """A study's manifest, checked for what the pages use: the model is registered, and
    the knob and objective columns are in points.parquet and pareto.parquet (objectives
    numeric), points.parquet has a boolean 'feasible'."""
    from dse import registry
    from dse.errors import did_you_mean
    from dse.store import MANIFEST, read_manifest

    m = read_manifest(r.path)
    model = m["model"]["name"]
    known = registry.names()
    if m.get("kind") == "comparison":
        knobs, objectives = ["arch", *m.get("workload", [])], list(m["objectives"])
        _check_columns(r, knobs, objectives)
        return m
    if model not in known:
        raise DseError(
            f"{r.path / MANIFEST}: model {model!r} is not registered{did_you_mean(model, known)}; "
            f"known models: {', '.join(known)}"
        )
    _check_columns(r, list(m["knobs"]), list(m["objectives"]))
    return m


def _check_columns(r: Any, knobs: list[str], objectives: list[str]) -> None:
    """The knob and objective columns the manifest names are in both tables."""
    import polars as pl

    from dse.store import MANIFEST, parquet_schema

    for path, need in ((r.points_path(), ["feasible", *knobs, *objectives]), (r.pareto_path(), [*knobs, *objectives])):
        schema = parquet_schema(path)
        missing = [c for c in need if c not in schema]
        if missing:
            raise DseError(
                f"{path}: no column {missing[0]!r}, which {r.path / MANIFEST} names; the folder is inconsistent, "
                "re-run the sweep to write it again"
            )
        bad = [c for c in objectives if not schema[c].is_numeric()]
        if bad:
            raise DseError(f"{path}: objective column {bad[0]!r} is {schema[bad[0]]}, not numeric; re-run the sweep")
        if "feasible" in need and schema["feasible"] != pl.Boolean:
            raise DseError(f"{path}: column 'feasible' is {schema['feasible']}, not boolean; re-run the sweep")


def read_table(path: Path, read: Any) -> Any:
    """``read()`` (a Polars read of ``path``); a damaged file is one line naming it."""
    import polars as pl

    from dse.store import check_parquet_data, unreadable

    try:
        return read()
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError) as exc:
        check_parquet_data(path)
        raise unreadable(path, exc) from None


def _safe_name(name: str) -> str:
    """A study name as part of a file name: no folders, no odd characters."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)[:80].lstrip(".") or "study"


def _hypervolume(m: dict[str, Any]) -> str:
    hv = m.get("hypervolume")
    return f"{hv:.4f}" if isinstance(hv, (int, float)) and not isinstance(hv, bool) else "n/a"


def _field(m: dict[str, Any], *keys: str, default: Any = "?") -> Any:
    """``m[k1][k2]...`` for the informational parts of a manifest, ``default`` if absent."""
    for k in keys:
        if not isinstance(m, dict) or k not in m:
            return default
        m = m[k]
    return m


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


def study_page(r: Any, m: dict[str, Any], filename: str, validation: list[Any], out_of_fit: dict[str, Any] | None = None) -> Page:
    import polars as pl

    from dse.dashboard import charts

    objectives: dict[str, str] = m["objectives"]
    knobs: list[str] = m["knobs"]
    description = _field(m, "space", "description", default="")
    page = Page(
        f"{m['space']['name']} ({m['model']['name']})",
        filename,
        subtitle=description if isinstance(description, str) else "",
    )
    rows = m["rows"]
    page.note(
        f"{rows['points']:,} points by {m['strategy']}"
        + (f"/{m['sampler']}" if m.get("sampler") else "")
        + f", {rows['feasible']:,} feasible, {rows['pareto']:,} on the Pareto front; hypervolume {_hypervolume(m)} of its own objective box (see the index). "
        + f"Model {m['model']['name']} v{_field(m, 'model', 'version')}, calibration {_field(m, 'calibration', 'mode')}, "
        + f"git {str(_field(m, 'git', 'revision', default=None))[:10]}{' (dirty)' if _field(m, 'git', 'dirty', default=False) is True else ''}, "
        + f"{_field(m, 'created')}."
    )
    cols = list(dict.fromkeys(knobs + list(objectives)))
    pts = pl.scan_parquet(r.points_path()).filter(pl.col("feasible")).select(cols)
    n = rows["feasible"]
    if n > 200_000:
        pts = pts.gather_every(max(1, n // 200_000))
    points = plain_types(read_table(r.points_path(), pts.collect))
    # categorical metrics (bottleneck_code...) colour the front where no label knob does
    labelled = charts.label_metrics(read_table(r.pareto_path(), lambda: pl.read_parquet_schema(r.pareto_path())), knobs)
    front = plain_types(read_table(r.pareto_path(), lambda: pl.read_parquet(r.pareto_path()).select(cols + labelled)))
    page.heading("Pareto front")
    if front.height == 0:
        page.note("No feasible point: nothing is on the front.")
    else:
        for c in charts.pareto_charts(points, front, objectives, knobs + labelled):
            page.chart(c)
        explorer = charts.front_explorer(front, objectives, knobs + labelled)
        if explorer is not None:
            page.heading("Explore the front")
            page.note("Drag a rectangle on the scatter to keep those designs in the parallel coordinates below; "
                      "click a legend entry to keep one value of the colouring knob (shift-click for more).")
            page.chart(explorer)
        show = front.head(50)
        page.table(show.columns, [list(x) for x in show.iter_rows()], left={k for k in knobs})
        add_downloads(page, r, filename)
    if points.height:
        page.heading("Knobs against objectives")
        page.note("Best and median of each objective over the feasible points at each knob setting.")
        for c in charts.knob_charts(points, objectives, knobs):
            page.chart(c)
    add_robust_front(page, r, objectives)
    add_sensitivity(page, m, objectives)
    add_model_figures(page, m["model"]["name"])
    add_validation(page, validation, out_of_fit)
    return page


def add_downloads(page: Page, r: Any, filename: str) -> None:
    """The whole front as CSV and Parquet files beside the page (every column)."""
    import io

    import polars as pl

    front = read_table(r.pareto_path(), lambda: pl.read_parquet(r.pareto_path()))
    stem = "assets/" + filename.removesuffix(".html") + "-pareto"
    page.download(f"download the front ({front.height:,} designs, every column): CSV", f"{stem}.csv", front.write_csv().encode())
    buf = io.BytesIO()
    front.write_parquet(buf)
    page.download("download the front: Parquet", f"{stem}.parquet", buf.getvalue())


def add_robust_front(page: Page, r: Any, objectives: dict[str, str]) -> None:
    """A robust sweep (``--uncertainty N``): the points on the front in most draws."""
    import polars as pl

    from dse.dashboard import charts

    names = read_table(r.points_path(), lambda: pl.read_parquet_schema(r.points_path())).keys()
    if "p_pareto" not in names or len(objectives) < 2:
        return
    x, y = list(objectives)[:2]
    cols = [x, y, f"{x}_p5", f"{x}_p95", f"{y}_p5", f"{y}_p95", "p_pareto"]
    pts = read_table(r.points_path(), lambda: pl.scan_parquet(r.points_path()).filter(pl.col("feasible"))
                      .select(cols).filter(pl.col("p_pareto") >= 0.5).collect())
    page.heading("Robust front")
    page.note("Each point was evaluated under the same draws of the uncertain parameter defaults; "
              "p_pareto is the share of draws in which it is non-dominated. Bars: p5 to p95.")
    page.chart(charts.robust_chart(pts, objectives))


#: Base samples of the study page's sensitivity analysis (Sobol: N x (knobs + 2) points).
SENSITIVITY_BASE_SAMPLES = 256


def add_sensitivity(page: Page, m: dict[str, Any], objectives: dict[str, str]) -> None:
    """Sobol total indices of each objective over the space's knobs (SALib)."""
    from dse import sensitivity
    from dse.dashboard import charts
    from dse.errors import DseError
    from dse.space import load_space

    path = Path(str(_field(m, "space", "path", default="")))
    try:
        sp = load_space(path)
    except DseError:
        return
    if sp.sha256 != _field(m, "space", "sha256", default=None) or len(sp.knobs) < 2:
        return
    page.heading("Which knob matters")
    page.note(f"Total Sobol indices over the space's knobs (SALib, {SENSITIVITY_BASE_SAMPLES} base samples; "
              "`dse sensitivity` computes them at any design point or over the uncertain defaults).")
    for obj in list(objectives)[:3]:
        try:
            res = sensitivity.analyze(sp.model, obj, sensitivity.factors_from_space(sp, sp.fixed), dict(sp.fixed),
                                      base_samples=SENSITIVITY_BASE_SAMPLES)
        except DseError as exc:
            page.note(f"{obj}: {exc}")
            continue
        page.chart(charts.sensitivity_chart(res.rows, obj))


def plain_types(df: Any) -> Any:
    import polars as pl

    casts = [pl.col(c).cast(pl.String) for c, t in df.schema.items() if t in (pl.Categorical,) or isinstance(t, pl.Enum)]
    return df.with_columns(casts) if casts else df


def add_model_figures(page: Page, model: str) -> None:
    """A model's figures against the paper: the ``figures`` function its package's
    descriptor names (``figures:figures``) returns (title, altair chart) pairs."""
    from dse import registry

    figures = registry.figures_function(model)
    if figures is None:
        return
    figs = figures()
    if not figs:
        return
    page.heading("Model against the paper's figures")
    for title, chart in figs:
        page.chart(chart.properties(title=title) if hasattr(chart, "properties") else chart)


def add_validation(page: Page, results: list[Any], out_of_fit: dict[str, Any] | None = None) -> None:
    """Every claim, model against paper; an anchor's error is in-fit, and with
    ``out_of_fit`` (claim id -> ``dse.crossval.CvRow``) its out-of-fit error beside it."""
    from dse.claims import format_expected
    from dse.sources import readable

    page.heading("Validation: model vs paper, per claim")
    if not results:
        page.note("This model has no claims file.")
        return
    cols = ["claim", "kind", "source", "paper", "model", "error", "tolerance", "status"]
    cols += ["out-of-fit error"] if out_of_fit is not None else []
    rows, classes = [], []
    for x in results:
        status = "ok" if x.passed else ("FAIL" if x.headline else "off")
        row = [x.id, ("headline" if x.headline else "other") + ("" if x.kind == "prediction" else f" ({x.kind})"),
               readable(x.model, x.source), format_expected(x.expected) + (f" {x.unit}" if x.unit else ""),
               f"{x.value:.4g}", f"{x.error_pct:+.1f}%" + (" (in fit)" if x.kind == "anchor" else ""), x.tolerance, status]
        if out_of_fit is not None:
            cv = out_of_fit.get(x.id)
            row.append("" if cv is None or cv.out_of_fit_error_pct is None else f"{cv.out_of_fit_error_pct:+.1f}%")
        rows.append(row)
        classes.append(["", "", "", "", "", "", "", {"ok": "ok", "FAIL": "fail", "off": "off"}[status]] + [""] * (len(row) - 8))
    page.table(cols, rows, left={"claim", "kind", "source"}, classes=classes)
    if out_of_fit is not None:
        page.note("An anchor's error is in fit (a constant was fitted to it); its out-of-fit error is the anchor "
                  "predicted with the constants refitted without it (dse validate --cv). Echoes restate a model input.")
    page.chart(claims_chart(results))


#: Smallest model/paper ratio the claims chart's log axis shows.
CLAIM_AXIS_FLOOR = 1e-3


def claims_chart(results: list[Any]) -> Any:
    """Model over paper for every claim on a log axis, with each claim's tolerance band."""
    import math

    import altair as alt

    from dse.sources import readable

    recs = []
    for x in results:
        exp = x.expected
        lo, hi = (sorted(exp) if isinstance(exp, tuple) else (exp, exp))
        mid = (lo + hi) / 2 if isinstance(exp, tuple) else exp
        if not (math.isfinite(x.value) and mid and x.value / mid > 0):
            continue
        tol = x.tolerance.split("%")[0].lstrip("±") if "%" in x.tolerance else "0"
        rel = float(tol) / 100 if tol.replace(".", "", 1).isdigit() else 0.0
        # a log axis takes positive values only: a band reaching 0 or below (an interval
        # from 0, a tolerance of 100 % or more) starts at the axis' floor instead
        ends = sorted(((lo - abs(lo) * rel) / mid, (hi + abs(hi) * rel) / mid))  # a negative mid flips them
        band_lo = max(ends[0], CLAIM_AXIS_FLOOR)
        recs.append(
            {
                "claim": x.id,
                "ratio": max(x.value / mid, CLAIM_AXIS_FLOOR),
                "band_lo": band_lo,
                "band_hi": max(ends[1], band_lo),
                "status": "within tolerance" if x.passed else ("headline miss" if x.headline else "other miss"),
                "paper": _fmt_exp(exp),
                "model": x.value,
                "source": readable(x.model, x.source),
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
        tooltip=["claim:N", "source:N", "paper:N", alt.Tooltip("model:Q", format=".4g"), alt.Tooltip("ratio:Q", format=".3f"), "status:N"],
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
