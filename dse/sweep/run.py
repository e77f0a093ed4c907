"""`dse sweep`: run a space by a strategy on a backend into a results folder."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dse import store
from dse.errors import DseError
from dse.space import MAX_GRID_POINTS, STRATEGIES, Space, load_space
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
    seed: int | None = None
    sampler: str | None = None
    batch: int | None = None
    workers: int | None = None
    progress: bool = True
    chunk_points: int | None = None


@dataclass
class SweepResult:
    path: Path
    manifest: dict[str, Any] = field(default_factory=dict)


def default_out(space: Space) -> Path:
    from dse.registry import project_root

    return project_root() / "results" / space.name


def run_sweep(space_path: str | Path, opts: SweepOptions) -> SweepResult:
    """Validate everything, then sweep.  Bad input raises DseError before anything is
    written; a failure after the folder was created removes it unless work was saved."""
    t0 = time.perf_counter()
    space = load_space(space_path)
    strategy = opts.strategy or space.defaults.strategy
    if strategy not in STRATEGIES:
        raise DseError(f"--strategy {strategy!r} is not known; allowed: {', '.join(STRATEGIES)}")
    if opts.backend not in ("local", "ray"):
        raise DseError(f"--backend {opts.backend!r} is not known; allowed: local, ray")
    if opts.address and opts.backend != "ray":
        raise DseError("--address needs --backend ray")
    if opts.storage and strategy != "optuna":
        raise DseError("--storage is only used by --strategy optuna")
    seed = space.defaults.seed if opts.seed is None else opts.seed
    trials = opts.trials or space.defaults.trials
    if trials < 1:
        raise DseError("--trials must be at least 1")
    sampler = opts.sampler or space.defaults.sampler
    if strategy == "grid":
        total = space.grid_size
        if total > MAX_GRID_POINTS:
            raise DseError(
                f"{space.path}: the grid has {total:.3g} points, above the {MAX_GRID_POINTS:.0e} limit; "
                "use fewer steps or --strategy sobol/optuna"
            )
    else:
        total = trials

    # Check the backend and the storage before anything is written.
    ray_ctx = None
    if opts.backend == "ray":
        from dse.sweep import ray_backend

        ray_backend.check_address(opts.address)
    storage = None
    if strategy == "optuna":
        from dse.sweep import optuna_study

        optuna_study.check_sampler(sampler)
        if opts.storage:
            storage = optuna_study.open_storage(opts.storage)

    out = Path(opts.out) if opts.out else default_out(space)
    results = store.ResultsDir(out)
    fingerprint = {
        "space_sha256": space.sha256,
        "model": space.model.name,
        "model_version": space.model.version,
        "strategy": strategy,
        "seed": seed,
        "calibration": os.environ.get("DSE_CALIBRATION", "shipped"),
    }
    if strategy in ("sobol", "random"):
        fingerprint["trials"] = trials
    if strategy == "optuna":
        fingerprint["sampler"] = sampler
    existed_before = results.exists and any(results.path.iterdir()) if results.exists else False
    resumed = results.prepare(resume=opts.resume, fingerprint=fingerprint)
    if resumed and results.complete and strategy != "optuna":
        return SweepResult(out, results.manifest())
    results.mark_incomplete(fingerprint)

    timings: dict[str, float] = {}
    try:
        if opts.backend == "ray":
            from dse.sweep import ray_backend

            ray_ctx = ray_backend.connect(opts.address, opts.workers)
        t_eval = time.perf_counter()
        if strategy == "optuna":
            from dse.sweep import optuna_study

            extra = optuna_study.run(
                space,
                results,
                trials=trials,
                seed=seed,
                sampler=sampler,
                batch=opts.batch or space.defaults.batch,
                storage=storage,
                storage_url=opts.storage,
                resume=resumed,
                ray_ctx=ray_ctx,
                workers=opts.workers,
                progress=opts.progress,
            )
        else:
            extra = _run_chunks(space, results, strategy, seed, total, opts, ray_ctx)
        timings["evaluate_s"] = time.perf_counter() - t_eval
        t_fin = time.perf_counter()
        summary = finalize(space, results)
        timings["write_and_pareto_s"] = time.perf_counter() - t_fin
    except BaseException:
        if not existed_before and not results.done_parts() and not (results.path / "study.journal").exists():
            results.abandon()
        raise
    finally:
        if ray_ctx is not None:
            ray_ctx.close()

    timings["total_s"] = time.perf_counter() - t0
    manifest = build_manifest(space, strategy, seed, trials, sampler, opts, summary, timings, extra, fingerprint)
    store.write_json(results.path / store.MANIFEST, manifest)
    results.finish()
    return SweepResult(out, manifest)


def _run_chunks(
    space: Space, results: store.ResultsDir, strategy: str, seed: int, total: int, opts: SweepOptions, ray_ctx: Any
) -> dict[str, Any]:
    all_chunks = chunks(total, opts.chunk_points or _chunk_size(space))
    done = results.done_parts()
    todo = [c for c in all_chunks if c.index not in done]
    results.parts_dir.mkdir(parents=True, exist_ok=True)

    def save(chunk: Chunk, table: Any) -> None:
        store.write_parquet(results.part_path(chunk.index), table)

    with _progress(opts.progress, total, f"{space.name} ({strategy})") as bar:
        bar.advance(sum(c.size for c in all_chunks if c.index in done))
        if ray_ctx is not None:
            stats = ray_ctx.run_chunks(space, strategy, seed, todo, save, bar.advance)
        else:
            for c in todo:
                save(c, evaluate_chunk(space, strategy, seed, c))
                bar.advance(c.size)
            stats = {}
    return {"chunks": len(all_chunks), "chunks_resumed": len(done), **stats}


def _chunk_size(space: Space) -> int:
    from dse.sweep.evaluate import CHUNK_POINTS

    return CHUNK_POINTS


def finalize(space: Space, results: store.ResultsDir) -> dict[str, Any]:
    """Merge the parts (or the optuna table) into points.parquet and compute the front,
    streaming so memory stays bounded by one part plus the running front."""
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
    tmp = results.path / f".{store.POINTS}.tmp"
    try:
        for part in parts:
            table = pq.read_table(part)
            if writer is None:
                writer = pq.ParquetWriter(tmp, table.schema, compression="zstd")
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
        os.replace(tmp, results.points_path())
    finally:
        if writer is not None:
            writer.close()
        tmp.unlink(missing_ok=True)

    if front is None:
        empty = pq.read_schema(parts[0]).empty_table()
        front = empty
    front = front.sort_by([(next(iter(objectives)), "ascending" if next(iter(objectives.values())) == "min" else "descending")])
    store.write_parquet(results.pareto_path(), front)
    hv = 0.0
    if front.num_rows and lo is not None:
        mat = pareto.objective_matrix({k: front.column(k).to_numpy() for k in objectives}, objectives)
        hv = pareto.hypervolume(mat, lo, hi)
    return {
        "points": n_points,
        "feasible": n_feasible,
        "pareto": front.num_rows,
        "hypervolume": hv,
        "objective_bounds": {
            k: [float(a if d == "min" else -b), float(b if d == "min" else -a)]
            for (k, d), a, b in zip(objectives.items(), lo if lo is not None else [], hi if hi is not None else [])
        },
    }


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
        "model": {"name": space.model.name, "version": space.model.version},
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
        "objective_bounds": summary["objective_bounds"],
        "timings_s": timings,
        "run": extra,
        "fingerprint": fingerprint,
    }


def calibration_info() -> dict[str, Any]:
    """Which calibration the models used: mode and the fitted files' hashes."""
    import hashlib

    from dse.registry import project_root

    mode = os.environ.get("DSE_CALIBRATION", "shipped")
    info: dict[str, Any] = {"mode": mode, "files": {}}
    folder = None
    if mode == "shipped":
        folder = project_root() / "results" / "calibration"
    elif mode != "none":
        folder = Path(mode)
    if folder is not None and folder.is_dir():
        for f in sorted(folder.glob("*.toml")):
            info["files"][f.name] = hashlib.sha256(f.read_bytes()).hexdigest()[:16]
    return info


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
        )
        self.task = self.progress.add_task(label, total=total)

    def __enter__(self) -> "_RichBar":
        self.progress.start()
        return self

    def __exit__(self, *a: Any) -> None:
        self.progress.stop()

    def advance(self, n: int) -> None:
        self.progress.advance(self.task, n)


def _progress(enabled: bool, total: int, label: str) -> Any:
    return _RichBar(total, label) if enabled else _NullBar()
