"""Comparison spaces: several architectures, one workload family, one scale.

```toml
description = "Which object store is cheapest per million operations?"

[compare]
family = "kv-object"                      # dse.families: the unit of work and the knobs

[workload]                                # the family's workload knobs (and years, usd_per_kwh,
value_b = { log_range = [64, 4194304], steps = 8 }  # pue, upkeep_frac_per_year), swept for every arch

[arch.nvme]                               # one table per architecture
model = "bandslim"
fixed = { design = "baseline" }
knobs = { ... }                           # the architecture's own design knobs

[arch.rdio]
model = "rdio"
knobs = { nodes = [2, 4, 8] }

[objectives]                              # common metrics and the family's latency metric
usd_per_work = "min"
op_latency_us = "min"

[sweep]
strategy = "grid"                         # grid, sobol or random; trials per architecture
```

A comparison sweeps each architecture as its own space (``<out>/arch/<name>/``: its
points, its front, its manifest) and joins them into one result set with an ``arch``
column: ``points.parquet`` (the workload knobs, every architecture's knobs, the common
metrics), ``pareto.parquet`` (the joint front over all architectures, at each workload
point: the designs no other architecture's design beats for the same job) and a manifest.
"""

from __future__ import annotations

import hashlib
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dse import families, store
from dse.errors import DseError, allowed_list, did_you_mean
from dse.space import Space, SweepDefaults, build_space

#: Columns every comparison row carries besides the knobs.
ROW_COLUMNS = ("arch", "model", "feasible", "reason")
STRATEGIES = ("grid", "sobol", "random")


class _Arch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str
    description: str = ""
    knobs: dict[str, Any] = Field(default_factory=dict)
    fixed: dict[str, Any] = Field(default_factory=dict)
    paper_design: dict[str, Any] = Field(default_factory=dict)


class _CompareHead(BaseModel):
    model_config = ConfigDict(extra="forbid")
    family: str


class _CompareFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str = ""
    compare: _CompareHead
    workload: dict[str, Any] = Field(default_factory=dict)
    arch: dict[str, _Arch] = Field(min_length=2)
    objectives: dict[str, Literal["min", "max"]] = Field(min_length=1)
    constraints: dict[str, str] = Field(default_factory=dict)
    sweep: SweepDefaults = Field(default_factory=SweepDefaults)


@dataclass
class Comparison:
    path: Path
    family: families.Family
    description: str
    workload: list[str]
    archs: dict[str, Space]
    objectives: dict[str, str]
    defaults: SweepDefaults
    raw: dict[str, Any]
    sha256: str

    @property
    def name(self) -> str:
        return self.path.stem


def is_comparison(path: str | Path) -> bool:
    """True for a space file with a ``[compare]`` table (read cheaply, errors later)."""
    try:
        return "compare" in tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False


_TOP = "description, [compare], [workload], [arch.NAME], [objectives], [constraints], [sweep]"


def load_comparison(path: str | Path) -> Comparison:
    """Read and check a comparison file; every error is one line naming the key."""
    path = Path(path)
    text = path.read_bytes()
    try:
        raw = tomllib.loads(text.decode("utf-8"))
        spec = _CompareFile.model_validate(raw)
    except tomllib.TOMLDecodeError as exc:
        raise DseError(f"{path}: invalid TOML: {exc}") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err.get("loc", ()))
        msg = err.get("msg", "invalid value")
        if err.get("type") == "extra_forbidden":
            msg = f"unknown key; allowed: {_TOP}" if len(err["loc"]) == 1 else "unknown key"
        raise DseError(f"{path}: {key or '(top level)'}: {msg}") from None
    fam = _family(path, spec.compare.family)
    _check_workload(path, fam, spec.workload)
    allowed = families.COMMON_METRICS + (fam.latency_metric,)
    for name in spec.objectives:
        if name not in allowed:
            raise DseError(f"{path}: objectives.{name}: not a common metric{did_you_mean(name, allowed)}; allowed: {allowed_list(allowed)}")
    if spec.sweep.strategy not in STRATEGIES:
        raise DseError(f"{path}: sweep.strategy: a comparison sweeps by {allowed_list(STRATEGIES)}")
    sha = hashlib.sha256(text).hexdigest()
    archs = {name: _arch_space(path, name, arch, fam, spec, sha) for name, arch in spec.arch.items()}
    return Comparison(path, fam, spec.description, list(spec.workload), archs, dict(spec.objectives), spec.sweep, raw, sha)


def _family(path: Path, name: str) -> families.Family:
    try:
        return families.family(name)
    except DseError as exc:
        raise DseError(f"{path}: compare.family: {exc}") from None


def _check_workload(path: Path, fam: families.Family, workload: dict[str, Any]) -> None:
    """Workload knobs: the family's, and the common cost parameters (``years``...)."""
    names = [k.name for k in fam.knobs] + list(families.COMMON_PARAMS)
    for name in workload:
        if name not in names:
            raise DseError(f"{path}: workload.{name}: not a {fam.name} workload knob or common parameter{did_you_mean(name, names)}; "
                           f"allowed: {allowed_list(names)}")


def _arch_space(path: Path, name: str, arch: _Arch, fam: families.Family, spec: _CompareFile, sha: str) -> Space:
    """One architecture's own space: its knobs and fixed values, the shared workload
    (mapped onto its parameters), the comparison's objectives and constraints."""
    from dse import registry  # noqa: PLC0415

    where = f"arch.{name}"
    try:
        cls = registry.model_class(arch.model)
    except DseError as exc:
        raise DseError(f"{path}: {where}.model: {exc}") from None
    if cls.family != fam.name:
        serving = [n for n in registry.names() if registry.model_class(n).family == fam.name]
        raise DseError(
            f"{path}: {where}.model: {arch.model} serves {cls.family or 'no workload family'}, not {fam.name}; "
            f"models serving {fam.name}: {allowed_list(serving)}"
        )
    knobs = dict(arch.knobs)
    fixed = {k: v for k, v in cls.family_fixed.items() if k not in knobs and k not in arch.fixed}
    fixed.update(arch.fixed)
    for knob, value in spec.workload.items():
        param = cls.workload_param(knob)
        if param is None:
            raise DseError(f"{path}: workload.{knob}: model {arch.model} ({where}) cannot map this knob; it has no parameter for it")
        if param in knobs or param in arch.fixed:
            raise DseError(f"{path}: {where}: {param} is the shared workload knob {knob}; set it under [workload] only")
        knobs[param] = value
    raw = {"model": arch.model, "description": arch.description or spec.description, "knobs": knobs, "fixed": fixed,
           "objectives": spec.objectives, "constraints": spec.constraints, "sweep": spec.sweep.model_dump()}
    if arch.paper_design:
        raw["paper_design"] = arch.paper_design
    try:
        space = build_space(path, raw, sha)
    except DseError as exc:
        raise DseError(str(exc).replace(f"{path}: ", f"{path}: {where}.", 1)) from None
    space.label = f"{path.stem}.{name}"
    return space


# ============================================================================= running
def run_comparison(path: str | Path, opts: Any) -> Any:
    """Sweep every architecture into ``<out>/arch/<name>`` and join them (locked, atomic)."""
    from dse.sweep import run  # noqa: PLC0415

    t0 = time.perf_counter()
    comp = load_comparison(path)
    if opts.strategy not in (None, *STRATEGIES):
        raise DseError(f"--strategy {opts.strategy}: a comparison sweeps by {allowed_list(STRATEGIES)}")
    if opts.join or opts.storage:
        raise DseError("a comparison sweep takes no --join or --storage; sweep one architecture's space for those")
    plans = {name: run.plan_for(space, opts) for name, space in comp.archs.items()}
    robust = {name: (p.draws, p.seed) for name, p in plans.items() if p.draws}
    fingerprint = {"comparison_sha256": comp.sha256, "archs": {n: p.fingerprint for n, p in plans.items()}}
    out = Path(opts.out) if opts.out else run.default_out_name(comp.name)
    results = store.ResultsDir(out)
    created_here = not out.exists()
    with results.lock():
        resumed = results.prepare(resume=opts.resume, fingerprint=fingerprint)
        if resumed and results.complete:
            return run.SweepResult(out, results.manifest())
        results.mark_incomplete(fingerprint)
        try:
            per_arch = {}
            for name, space in comp.archs.items():
                sub = run.replace_options(opts, out=out / "arch" / name, resume=resumed)
                per_arch[name] = run.run_space(space, sub).manifest
        except BaseException:
            if created_here and not any((out / "arch").glob("*/manifest.json")):
                results.abandon()
            raise
        summary = join(comp, out, per_arch, robust or None)
        manifest = _manifest(comp, opts, summary, per_arch, fingerprint, time.perf_counter() - t0)
        store.write_json(out / store.MANIFEST, manifest)
        results.finish()
    return run.SweepResult(out, manifest)


#: Columns a robust architecture sweep adds that the joint table keeps (per objective).
ROBUST_SUFFIXES = ("_p5", "_p50", "_p95")


def join(comp: Comparison, out: Path, per_arch: dict[str, dict[str, Any]],
         robust: dict[str, tuple[int, int]] | None = None) -> dict[str, Any]:
    """One table over every architecture (``arch`` column, workload knobs under their
    family names) and the joint Pareto front; both written atomically and read back.
    ``robust`` (arch -> (draws, seed), a robust comparison): the table keeps each
    objective's p5/p50/p95, ``feasible_share`` and the architecture's own ``p_pareto_arch``,
    and gains the joint ``p_pareto`` (:func:`joint_p_pareto`)."""
    import polars as pl  # noqa: PLC0415

    frames = []
    metrics = [*families.COMMON_METRICS, comp.family.latency_metric]
    if robust:
        metrics += [f"{k}{q}" for k in comp.objectives for q in ROBUST_SUFFIXES] + ["feasible_share", "p_pareto"]
    for name, space in comp.archs.items():
        frame = pl.read_parquet(out / "arch" / name / store.POINTS)
        rename = {space.model.workload_param(k): k for k in comp.workload if space.model.workload_param(k) != k}
        frame = frame.rename({**rename, **({"p_pareto": "p_pareto_arch"} if robust and "p_pareto" in frame.columns else {})})
        knobs = [rename.get(k.name, k.name) for k in space.knobs]
        keep = [c for c in [*knobs, *metrics, "p_pareto_arch", "feasible", "reason"] if c in frame.columns]
        frame = frame.select(keep).with_columns(
            pl.lit(name).alias("arch"), pl.lit(space.model.name).alias("model"), pl.col("reason").cast(pl.String)
        )
        frames.append(frame.with_columns([pl.col(c).cast(pl.String) for c in frame.columns if frame[c].dtype == pl.Categorical]))
    table = pl.concat(frames, how="diagonal_relaxed")
    lead = ["arch", "model", *comp.workload]
    table = table.select([*lead, *[c for c in table.columns if c not in lead]])
    if robust:
        table = table.with_columns(pl.Series("p_pareto", joint_p_pareto(comp, out, table, robust)))
    feasible = table.filter(pl.col("feasible"))
    mask, hv = _fronts_by_workload(feasible, comp.workload, comp.objectives)
    front = feasible.filter(pl.Series(mask))
    first, direction = next(iter(comp.objectives.items()))
    front = front.sort(first, descending=direction == "max")
    store.write_parquet(out / store.POINTS, table)
    store.write_parquet(out / store.PARETO, front)
    store.verify_parquet(out / store.POINTS, len(table))
    store.verify_parquet(out / store.PARETO, len(front))
    extra = {}
    if robust:
        draws = next(iter(robust.values()))[0]
        rob = table.filter(pl.col("p_pareto") >= 0.5)
        extra = {"uncertainty": {"draws": draws, "robust_front": len(rob),
                                 "robust_by_arch": {a: int(n) for a, n in rob.group_by("arch").len().iter_rows()}}}
    return {
        **extra,
        "points": len(table),
        "feasible": len(feasible),
        "pareto": len(front),
        "hypervolume": hv,
        "pareto_by_arch": {a: int(n) for a, n in front.group_by("arch").len().iter_rows()},
        "feasible_by_arch": {a: int(n) for a, n in feasible.group_by("arch").len().iter_rows()},
    }


def _input_column(param: Any, col: Any) -> Any:
    """A knob column of a points table as model input (labels back to their codes)."""
    import numpy as np  # noqa: PLC0415

    if param.categorical:
        return np.asarray([param.code_of(v) for v in col.to_list()], dtype=np.int64)
    return col.cast(float).to_numpy()


def joint_p_pareto(comp: Comparison, out: Path, table: Any, robust: dict[str, tuple[int, int]]) -> Any:
    """Per row of the joint ``table``: the share of draws in which the design is
    non-dominated among every architecture's designs feasible in that draw at the same
    workload point.  Each architecture's designs are evaluated under its own sweep's draws
    (the same seed, so the percentiles match its sweep); draw j of every architecture is
    taken together (their uncertain inputs are distinct parameters, drawn independently)."""
    import numpy as np  # noqa: PLC0415
    import polars as pl  # noqa: PLC0415

    from dse import pareto  # noqa: PLC0415
    from dse.sweep import robust as rb  # noqa: PLC0415

    draws = min(d for d, _ in robust.values())
    objs: dict[str, list[Any]] = {k: [] for k in comp.objectives}
    oks = []
    for name, space in comp.archs.items():
        knobs = [k.name for k in space.knobs]
        raw = pl.read_parquet(out / "arch" / name / store.POINTS, columns=knobs)
        params = {p.name: p for p in space.model.params}
        inputs = {c: _input_column(params[c], raw[c]) for c in knobs}
        o, ok = rb.draw_objectives(space, inputs, raw.height, draws, robust.get(name, (draws, 0))[1])
        for k in comp.objectives:
            objs[k].append(o[k])
        oks.append(ok)
    mats = {k: np.concatenate(v) for k, v in objs.items()}
    ok_all = np.concatenate(oks)
    counts = np.zeros(len(table))
    groups = table.with_row_index("_row").group_by(comp.workload or pl.lit(0), maintain_order=True).agg(pl.col("_row"))
    for rows in groups["_row"].to_list():
        idx = np.asarray(rows, dtype=np.int64)
        for j in range(draws):
            feas = idx[ok_all[idx, j]]
            if feas.size:
                mat = pareto.objective_matrix({k: m[feas, j] for k, m in mats.items()}, comp.objectives)
                counts[feas[pareto.nondominated_mask(mat, keep_ties=True)]] += 1
    return counts / draws


def _fronts_by_workload(feasible: Any, workload: list[str], objectives: dict[str, str]) -> tuple[Any, float]:
    """Non-dominated mask over the architectures *at each workload point* (a design for
    a 64 GiB job does not compete with one for 4 TiB), and the mean hypervolume of the
    per-workload fronts (each normalized over its own points)."""
    import numpy as np  # noqa: PLC0415
    import polars as pl  # noqa: PLC0415

    from dse import pareto  # noqa: PLC0415

    mask = np.zeros(len(feasible), dtype=bool)
    volumes = []
    groups = feasible.with_row_index("_row").group_by(workload or pl.lit(0), maintain_order=True).agg(pl.col("_row"))
    for rows in groups["_row"].to_list():
        idx = np.asarray(rows, dtype=np.int64)
        mat = pareto.objective_matrix({m: feasible[m].to_numpy()[idx] for m in objectives}, objectives)
        finite = np.isfinite(mat).all(axis=1)
        if not finite.any():
            continue
        keep = pareto.nondominated_mask(mat[finite])
        mask[idx[finite][keep]] = True
        volumes.append(pareto.hypervolume(mat[finite][keep], mat[finite].min(axis=0), mat[finite].max(axis=0)))
    return mask, float(np.mean(volumes)) if volumes else 0.0


def _manifest(comp: Comparison, opts: Any, summary: dict[str, Any], per_arch: dict[str, dict[str, Any]],
              fingerprint: dict[str, Any], seconds: float) -> dict[str, Any]:
    import dse  # noqa: PLC0415
    from dse.registry import project_root  # noqa: PLC0415

    return {
        "tool": "cxl-dse",
        "tool_version": dse.__version__,
        "kind": "comparison",
        "created": store.now_iso(),
        "space": {"name": comp.name, "path": str(comp.path), "sha256": comp.sha256, "description": comp.description,
                  "definition": comp.raw},
        "family": {"name": comp.family.name, "work_unit": comp.family.work_unit, "usd_per_work": comp.family.usd_per_work_label,
                   "latency_metric": comp.family.latency_metric},
        "workload": comp.workload,
        "model": {"name": "+".join(sorted({s.model.name for s in comp.archs.values()})), "version": "comparison"},
        "archs": {n: {"model": s.model.name, "knobs": [k.name for k in s.knobs], "folder": f"arch/{n}",
                      "pareto": per_arch[n]["rows"]["pareto"], "paper_design": per_arch[n].get("paper_design")}
                  for n, s in comp.archs.items()},
        "git": store.git_revision(project_root()),
        "strategy": opts.strategy or comp.defaults.strategy,
        "seed": opts.seed if opts.seed is not None else comp.defaults.seed,
        "objectives": comp.objectives,
        "knobs": ["arch", *comp.workload],
        "rows": {k: summary[k] for k in ("points", "feasible", "pareto")},
        "hypervolume": summary["hypervolume"],
        "pareto_by_arch": summary["pareto_by_arch"],
        "feasible_by_arch": summary["feasible_by_arch"],
        **({"uncertainty": summary["uncertainty"]} if "uncertainty" in summary else {}),
        "timings_s": {"total_s": seconds},
        "fingerprint": fingerprint,
    }
