"""`dse sweep`: run a space by a strategy on a backend into a results folder."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dse import store
from dse.errors import DseError
from dse.space import MAX_GRID_POINTS, STRATEGIES, Space, load_space
from dse.sweep import robust
from dse.sweep.evaluate import Chunk, chunks, evaluate_chunk


@dataclass
class SweepOptions:
    strategy: str | None = None
    trials: int | None = None
    backend: str = "local"
    address: str | None = None
    storage: str | None = None
    out: Path | None = None
    resume: bool = False
    #: Add workers to an Optuna study another process runs (no folder lock, no results).
    join: bool = False
    seed: int | None = None
    sampler: str | None = None
    batch: int | None = None
    workers: int | None = None
    progress: bool = True
    chunk_points: int | None = None
    #: Draws of the uncertain parameter defaults per design point (robust fronts).
    uncertainty: int | None = None


@dataclass
class SweepResult:
    path: Path
    manifest: dict[str, Any] = field(default_factory=dict)


def default_out(space: Space) -> Path:
    return default_out_name(space.name)


def default_out_name(name: str) -> Path:
    from dse.registry import project_root

    return project_root() / "results" / name


def replace_options(opts: SweepOptions, **changes: Any) -> SweepOptions:
    """A copy of ``opts`` with ``changes``."""
    return dataclasses.replace(opts, **changes)


#: Largest sweep accepted (grid points, samples or trials): about three hours of the
#: fastest models on one core at ~1e6 points/s, and far beyond what a results folder
#: should hold; a bigger request is a typo (``--trials 1000000000000``), refused before
#: anything is allocated.
MAX_POINTS = 10_000_000_000
#: scipy's scrambled Sobol sequence holds 2**30 points at its default 30 bits.
MAX_SOBOL_POINTS = 2**30
#: An Optuna study keeps every trial in its storage and re-evaluates them at the end.
MAX_OPTUNA_TRIALS = 1_000_000
MAX_SEED = 2**32 - 1
MAX_BATCH = 1_000_000
MAX_WORKERS = 4096


def run_sweep(space_path: str | Path, opts: SweepOptions) -> SweepResult:
    """Sweep a space file: one model's space, or a comparison of several (``[compare]``)."""
    from dse import comparison

    if comparison.is_comparison(space_path):
        return comparison.run_comparison(space_path, opts)  # type: ignore[no-any-return]
    return run_space(load_space(space_path), opts)


def plan_for(space: Space, opts: SweepOptions) -> "_Plan":
    """The checked plan of a sweep (strategy, seed, size, resume fingerprint)."""
    return _plan(space, opts)


def run_space(space: Space, opts: SweepOptions) -> SweepResult:
    """Validate everything, then sweep.  Bad input raises DseError before anything is
    written; the results folder is locked for the whole run; a failure after the folder
    was created removes it unless work was saved."""
    t0 = time.perf_counter()
    plan = _plan(space, opts)
    storage = _check_backends(plan, opts)
    out = Path(opts.out) if opts.out else default_out(space)
    if opts.join:
        return _join(space, plan, opts, storage, out)
    results = store.ResultsDir(out)
    existed_before = results.has_content() if out.is_dir() else out.exists()
    created_here = not out.exists()
    with results.lock(), interrupt_guard() as interrupted:
        resumed = results.prepare(resume=opts.resume, fingerprint=plan.fingerprint)
        if resumed and results.complete and plan.strategy != "optuna":
            return SweepResult(out, results.manifest())
        results.mark_incomplete(plan.fingerprint)
        try:
            summary, timings, extra = _execute(space, plan, opts, results, storage, resumed, interrupted)
        except BaseException:
            if not existed_before and not results.done_parts() and not (results.path / "study.journal").exists():
                if created_here:
                    results.abandon()
                else:
                    results.clear_own_files()
            raise
        timings["total_s"] = time.perf_counter() - t0
        manifest = build_manifest(
            space, plan.strategy, plan.seed, plan.trials, plan.sampler, opts, summary, timings, extra, plan.fingerprint
        )
        store.write_json(results.path / store.MANIFEST, manifest)
        results.finish()
    return SweepResult(out, manifest)


@dataclass
class _Plan:
    strategy: str
    seed: int
    trials: int
    sampler: str
    total: int
    fingerprint: dict[str, Any]
    draws: int = 0  # uncertainty draws per design point (a robust front); 0: none


def _plan(space: Space, opts: SweepOptions) -> _Plan:
    """Check the options against the space and the stated limits; nothing allocated."""
    strategy = opts.strategy or space.defaults.strategy
    if strategy not in STRATEGIES:
        raise DseError(f"--strategy {strategy!r} is not known; allowed: {', '.join(STRATEGIES)}")
    if opts.backend not in ("local", "ray"):
        raise DseError(f"--backend {opts.backend!r} is not known; allowed: local, ray")
    if opts.address and opts.backend != "ray":
        raise DseError("--address needs --backend ray")
    if opts.storage and strategy != "optuna":
        raise DseError("--storage is only used by --strategy optuna")
    if opts.join and strategy != "optuna":
        raise DseError("--join adds workers to an Optuna study; it needs --strategy optuna")
    if opts.join and opts.resume:
        raise DseError(
            "--join and --resume exclude each other: --join adds workers to a running study, "
            "--resume continues one whose process died"
        )
    _check_int("--seed", opts.seed, 0, MAX_SEED)
    _check_int("--trials", opts.trials, 1, MAX_POINTS, "the limit of any sweep: hours of evaluation at 1e6 points/s")
    _check_int("--batch", opts.batch, 1, MAX_BATCH)
    _check_int("--workers", opts.workers, 1, MAX_WORKERS)
    _check_int("--chunk-points", opts.chunk_points, 1, MAX_BATCH)
    if opts.batch is not None and strategy != "optuna":
        raise DseError("--batch is only used by --strategy optuna (trials asked together)")
    draws = opts.uncertainty
    if draws is None and strategy != "optuna":
        draws = space.defaults.uncertainty  # the space's [sweep] may ask for a robust front
    if draws is not None:
        from dse.sweep import robust

        _check_int("--uncertainty", draws, robust.MIN_DRAWS, robust.MAX_DRAWS)
        if strategy == "optuna":
            raise DseError("--uncertainty runs with --strategy grid/sobol/random (local or ray); an Optuna "
                           "study optimizes one value per objective, not a p50 over draws")
    if opts.workers is not None and opts.backend != "ray":
        raise DseError("--workers is only used by --backend ray")
    seed = space.defaults.seed if opts.seed is None else opts.seed
    trials = space.defaults.trials if opts.trials is None else opts.trials
    sampler = opts.sampler or space.defaults.sampler
    if strategy == "grid":
        total = space.grid_size
        if total > min(MAX_GRID_POINTS, MAX_POINTS):
            raise DseError(
                f"{space.path}: the grid has {total:.3g} points, above the {min(MAX_GRID_POINTS, MAX_POINTS):.0e} limit; "
                "use fewer steps or --strategy sobol/optuna"
            )
    else:
        total = trials
        limit = {"sobol": MAX_SOBOL_POINTS, "optuna": MAX_OPTUNA_TRIALS}.get(strategy, MAX_POINTS)
        if total > limit:
            why = {
                "sobol": "scipy's Sobol sequence holds 2**30 points; use --strategy random for more",
                "optuna": "an Optuna study keeps every trial in its storage; use sobol or random for more",
            }.get(strategy, "about three hours at 1e6 points/s")
            raise DseError(f"--trials {total:,} is above the {limit:,} limit for {strategy} ({why})")
    fingerprint = {
        "space_sha256": space.sha256,
        "model": space.model.name,
        "model_version": space.model.version,
        "strategy": strategy,
        "seed": seed,
        "calibration": os.environ.get("DSE_CALIBRATION", "shipped"),
        "calibration_files": calibration_info()["files"],
        "model_code": _code_hash(space),
    }
    if strategy in ("sobol", "random"):
        fingerprint["trials"] = trials
    if strategy == "optuna":
        fingerprint["sampler"] = sampler
    if draws:
        fingerprint["uncertainty_draws"] = draws
    return _Plan(strategy, seed, trials, sampler, total, fingerprint, draws or 0)


def _code_hash(space: Space) -> dict[str, Any]:
    from dse import registry

    return registry.code_fingerprint(space.model.name)


def _check_int(option: str, value: int | None, lo: int, hi: int, why: str = "") -> None:
    if value is not None and not lo <= value <= hi:
        raise DseError(f"{option} {value} is out of range; allowed: {lo:,} to {hi:,}" + (f" ({why})" if why else ""))


def _check_backends(plan: _Plan, opts: SweepOptions) -> Any:
    """Check the Ray address and the Optuna sampler/storage before anything is written;
    returns the opened RDB storage (or None)."""
    if opts.backend == "ray":
        from dse.sweep import ray_backend

        ray_backend.check_address(opts.address)
    storage = None
    if plan.strategy == "optuna":
        from dse.sweep import optuna_study

        optuna_study.check_sampler(plan.sampler)
        if opts.storage:
            storage = optuna_study.open_storage(opts.storage)
    return storage


def _join(space: Space, plan: "_Plan", opts: SweepOptions, storage: Any, out: Path) -> SweepResult:
    """``--join``: workers for the study in ``--storage`` (or the journal in ``out``);
    writes nothing but trials into the study: its owner finalizes."""
    from dse.sweep import optuna_study

    with _ray(opts) as ray_ctx:
        info = optuna_study.join(
            space,
            folder=out,
            storage=storage,
            storage_url=opts.storage,
            fingerprint=plan.fingerprint,
            trials=opts.trials,
            batch=opts.batch or space.defaults.batch,
            ray_ctx=ray_ctx,
            workers=opts.workers,
            progress=opts.progress,
        )
    return SweepResult(out, {"join": info})


@contextlib.contextmanager
def _ray(opts: SweepOptions) -> Iterator[Any]:
    """The Ray context of ``--backend ray`` (None for local), closed after the run."""
    if opts.backend != "ray":
        yield None
        return
    from dse.sweep import ray_backend

    ctx = ray_backend.connect(opts.address, opts.workers)
    try:
        yield ctx
    finally:
        ctx.close()


def _execute(
    space: Space,
    plan: _Plan,
    opts: SweepOptions,
    results: store.ResultsDir,
    storage: Any,
    resumed: bool,
    interrupted: Any,
) -> tuple[dict[str, Any], dict[str, float], dict[str, Any]]:
    """Evaluate (chunks or an Optuna study, locally or on Ray) and merge the results."""
    timings: dict[str, float] = {}
    with _ray(opts) as ray_ctx:
        t_eval = time.perf_counter()
        if plan.strategy == "optuna":
            from dse.sweep import optuna_study

            extra = optuna_study.run(
                space,
                results,
                trials=plan.trials,
                seed=plan.seed,
                sampler=plan.sampler,
                batch=opts.batch or space.defaults.batch,
                storage=storage,
                storage_url=opts.storage,
                resume=resumed,
                ray_ctx=ray_ctx,
                workers=opts.workers,
                progress=opts.progress,
                fingerprint=plan.fingerprint,
            )
        else:
            extra = _run_chunks(space, results, plan, opts, ray_ctx, interrupted)
        timings["evaluate_s"] = time.perf_counter() - t_eval
        interrupted.check()
        t_fin = time.perf_counter()
        summary = finalize(space, results, draws=plan.draws)
        timings["write_and_pareto_s"] = time.perf_counter() - t_fin
        interrupted.check()
    return summary, timings, extra


class _Interrupted:
    """Set by SIGINT during a run.  A library may swallow the KeyboardInterrupt the
    signal raises (scipy did while loading Sobol direction numbers, and the sweep then
    wrote 100,000 identical points); :meth:`check` raises it again where results would
    be saved, so an interrupted run never writes a result."""

    def __init__(self) -> None:
        self.flag = False

    def check(self) -> None:
        if self.flag:
            raise KeyboardInterrupt


class interrupt_guard:
    """Context manager: SIGINT sets the flag and raises KeyboardInterrupt as usual."""

    def __enter__(self) -> _Interrupted:
        import signal
        import threading

        self.state = _Interrupted()
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.getsignal(signal.SIGINT)

            def handler(signum: int, frame: Any) -> None:
                self.state.flag = True
                raise KeyboardInterrupt

            signal.signal(signal.SIGINT, handler)
        return self.state

    def __exit__(self, *exc: Any) -> None:
        import signal

        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


def _run_chunks(
    space: Space, results: store.ResultsDir, plan: _Plan, opts: SweepOptions, ray_ctx: Any, interrupted: _Interrupted
) -> dict[str, Any]:
    strategy, seed, total, draws = plan.strategy, plan.seed, plan.total, plan.draws
    size = opts.chunk_points or (_chunk_size(space) if not draws else robust.chunk_points(draws, _chunk_size(space)))
    all_chunks = chunks(total, size)
    done = results.done_parts()
    todo = [c for c in all_chunks if c.index not in done]
    results.parts_dir.mkdir(parents=True, exist_ok=True)

    def save(chunk: Chunk, table: Any) -> None:
        interrupted.check()  # a chunk evaluated while the interrupt was swallowed is not saved
        if draws:  # the chunk's per-draw fronts first: the part file marks the chunk done
            table, fronts = table
            store.write_parquet(robust.front_path(results.parts_dir, chunk.index), fronts)
        store.write_parquet(results.part_path(chunk.index), table)

    def evaluate(c: Chunk) -> Any:
        if not draws:
            return evaluate_chunk(space, strategy, seed, c)
        return robust.evaluate_robust_chunk(space, strategy, seed, c, draws)

    with progress_bar(opts.progress, total, f"{space.name} ({strategy})") as bar:
        bar.advance(sum(c.size for c in all_chunks if c.index in done))
        if ray_ctx is not None:
            stats = ray_ctx.run_chunks(space, strategy, seed, todo, save, bar.advance, draws=draws)
        else:
            for c in todo:
                save(c, evaluate(c))
                bar.advance(c.size)
            stats = {}
    return {"chunks": len(all_chunks), "chunks_resumed": len(done), **stats}


def _chunk_size(space: Space) -> int:
    from dse.sweep.evaluate import CHUNK_POINTS

    return CHUNK_POINTS


def finalize(space: Space, results: store.ResultsDir, draws: int = 0) -> dict[str, Any]:
    """Merge the parts (or the optuna table) into points.parquet and compute the front,
    streaming so memory stays bounded by one part plus the running front.  With
    ``draws`` (a robust sweep) every point also gets ``p_pareto``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dse import pareto

    parts = sorted(results.parts_dir.glob("part-*.parquet"))
    if not parts:
        raise DseError(f"{results.path}: nothing was evaluated")
    objectives = space.objectives
    front: pa.Table | None = None
    n_points = 0
    n_feasible = 0
    lo = hi = None
    writer: pq.ParquetWriter | None = None
    tmp = store.temp_path(results.points_path())  # unique: never another run's temp file
    try:
        robust_ids, robust_share = robust.p_pareto_counts(results.parts_dir, space, draws) if draws else (None, None)
        for part in parts:
            table = pq.read_table(part)
            if draws:
                ids = table.column("point_id").to_numpy()
                table = table.append_column("p_pareto", pa.array(robust.p_pareto_column(ids, robust_ids, robust_share)))
            if writer is None:
                meta = parquet_metadata(space)
                writer = pq.ParquetWriter(tmp, table.schema.with_metadata(meta), compression="zstd")
            elif not table.schema.equals(writer.schema):  # a part of an older run resumed (8.0, not 8)
                table = table.cast(writer.schema)
            writer.write_table(table)
            n_points += table.num_rows
            feas = table.column("feasible").to_numpy(zero_copy_only=False)
            n_feasible += int(feas.sum())
            if not feas.any():
                continue
            cand = table.filter(pa.array(feas))
            mat = pareto.objective_matrix({k: cand.column(k).to_numpy() for k in objectives}, objectives)
            finite = np.isfinite(mat).all(axis=1)
            if finite.any():
                m_lo, m_hi = mat[finite].min(axis=0), mat[finite].max(axis=0)
                lo = m_lo if lo is None else np.minimum(lo, m_lo)
                hi = m_hi if hi is None else np.maximum(hi, m_hi)
            if front is not None:
                cand = pa.concat_tables([front, cand])
                mat = pareto.objective_matrix({k: cand.column(k).to_numpy() for k in objectives}, objectives)
            front = cand.filter(pa.array(pareto.nondominated_mask(mat)))
        assert writer is not None
        writer.close()
        writer = None
        store.verify_parquet(tmp, n_points)
        os.replace(tmp, results.points_path())
    finally:
        if writer is not None:
            writer.close()
        tmp.unlink(missing_ok=True)

    if front is None:
        front = pq.read_schema(parts[0]).empty_table()
    return _write_front(space, results, front, n_points, n_feasible, lo, hi)


def _write_front(space: Space, results: store.ResultsDir, front: Any, n_points: int, n_feasible: int,
                 lo: Any, hi: Any) -> dict[str, Any]:
    """pareto.parquet (sorted on the first objective), both files read back, the summary:
    counts, hypervolume, objective bounds and the paper design's verdict."""
    from dse import paper_design, pareto

    objectives = space.objectives
    front = front.sort_by([(next(iter(objectives)), "ascending" if next(iter(objectives.values())) == "min" else "descending")])
    store.write_parquet(results.pareto_path(), front.replace_schema_metadata(parquet_metadata(space)))
    store.verify_parquet(results.points_path(), n_points)
    store.verify_parquet(results.pareto_path(), front.num_rows)
    hv = 0.0
    if front.num_rows and lo is not None:
        mat = pareto.objective_matrix({k: front.column(k).to_numpy() for k in objectives}, objectives)
        hv = pareto.hypervolume(mat, lo, hi)
    return {
        "points": n_points,
        "feasible": n_feasible,
        "pareto": front.num_rows,
        "paper_design": paper_design.assess(space, results.points_path()),
        "hypervolume": hv,
        "objective_bounds": {
            k: [float(a if d == "min" else -b), float(b if d == "min" else -a)]
            for (k, d), a, b in zip(objectives.items(), lo if lo is not None else [], hi if hi is not None else [])
        },
    }


#: Key of the key-value metadata a results Parquet file carries about itself.
PARQUET_META_KEY = b"cxl-dse"


def parquet_metadata(space: Space) -> dict[bytes, bytes]:
    """What a points/pareto Parquet file says about itself, for readers without the
    manifest (Polars, pandas, DuckDB): objectives and directions, units, the model and its
    code hashes, the fixed parameters, the calibration files, the knobs."""
    import json

    import dse
    from dse import units

    pmap, mmap = space.model.param_map(), space.model.metric_map()
    unit = {n: units.unit_of(n) for n in list(pmap) + list(mmap)}
    doc = {
        "tool": f"cxl-dse {dse.__version__}",
        "space": {"name": space.name, "sha256": space.sha256},
        "model": {"name": space.model.name, "version": space.model.version, "code": _code_hash(space)},
        "objectives": space.objectives,
        "knobs": [k.name for k in space.knobs],
        "fixed": {k: _plain(space.decode(k, np.asarray(v))) for k, v in space.fixed.items()},
        "units": {k: u for k, u in unit.items() if u},
        "calibration": calibration_info(),
    }
    return {PARQUET_META_KEY: json.dumps(doc, sort_keys=True).encode()}


def _plain(v: Any) -> Any:
    arr = np.asarray(v, dtype=object)
    return arr.item() if arr.ndim == 0 else arr.tolist()


def build_manifest(
    space: Space,
    strategy: str,
    seed: int,
    trials: int,
    sampler: str,
    opts: SweepOptions,
    summary: dict[str, Any],
    timings: dict[str, float],
    extra: dict[str, Any],
    fingerprint: dict[str, Any],
) -> dict[str, Any]:
    import dse
    from dse.registry import project_root

    return {
        "tool": "cxl-dse",
        "tool_version": dse.__version__,
        "created": store.now_iso(),
        "space": {
            "name": space.name,
            "path": str(space.path),
            "sha256": space.sha256,
            "description": space.description,
            "definition": space.raw,
        },
        "model": {"name": space.model.name, "version": space.model.version, "code": fingerprint["model_code"]},
        "calibration": calibration_info(),
        "git": store.git_revision(project_root()),
        "strategy": strategy,
        "sampler": sampler if strategy == "optuna" else None,
        "seed": seed,
        "trials": trials if strategy != "grid" else None,
        "backend": opts.backend,
        "address": opts.address,
        "storage": _redact(opts.storage),
        "objectives": space.objectives,
        "constraints": {k: e.text for k, e in space.constraints.items()},
        "knobs": [k.name for k in space.knobs],
        "rows": {"points": summary["points"], "feasible": summary["feasible"], "pareto": summary["pareto"]},
        "hypervolume": summary["hypervolume"],
        "paper_design": summary.get("paper_design"),
        "objective_bounds": summary["objective_bounds"],
        "timings_s": timings,
        "run": extra,
        "fingerprint": fingerprint,
    }


def calibration_info() -> dict[str, Any]:
    """Which calibration the models used: mode, the fitted files' hashes and the
    calibration's own hash (``models.blocks.calibration.current``)."""
    from models.blocks import calibration

    return calibration.current().info()


def _redact(url: str | None) -> str | None:
    if not url or "@" not in url:
        return url
    scheme, _, rest = url.partition("://")
    return f"{scheme}://***@{rest.split('@', 1)[1]}"


class _NullBar:
    def __enter__(self) -> "_NullBar":
        return self

    def __exit__(self, *a: Any) -> None:
        return None

    def advance(self, n: int) -> None:
        return None


class _RichBar:
    def __init__(self, total: int, label: str) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("points"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            transient=False,
            console=Console(stderr=True),  # stdout carries only results
        )
        self.task = self.progress.add_task(label, total=total)

    def __enter__(self) -> "_RichBar":
        self.progress.start()
        return self

    def __exit__(self, *a: Any) -> None:
        self.progress.stop()

    def advance(self, n: int) -> None:
        self.progress.advance(self.task, n)


def progress_bar(enabled: bool, total: int, label: str) -> Any:
    return _RichBar(total, label) if enabled else _NullBar()
