"""Optuna studies: multi-objective search with constraints, resumable storage.

Storage is a journal file inside the results folder by default; ``--storage`` takes an
RDB URL (``sqlite:///study.db``, ``postgresql://user@host/db``) so several machines can
share one study.  Trials are asked in batches and evaluated in one vectorized model
call, then told back.  ``--resume`` continues a study after a crash: completed trials
are kept; trials left RUNNING by the dead process are marked FAIL (tagged ``stale``)
and not counted, so nothing completed is lost or repeated.

At the end every evaluated trial is re-evaluated in one batch (the models are pure and
deterministic) to write ``points.parquet`` with all metrics.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from dse import store
from dse.errors import DseError
from dse.space import SAMPLERS, Space

STUDY_FILE = "study.journal"


def check_sampler(sampler: str) -> None:
    if sampler not in SAMPLERS:
        raise DseError(f"--sampler {sampler!r} is not known; allowed: {', '.join(SAMPLERS)}")
    if sampler == "gp":
        try:
            import torch  # noqa: F401
        except ImportError:
            raise DseError(
                "the GP sampler needs PyTorch: pip install 'cxl-dse[gp]' (or use --sampler nsga2/tpe)"
            ) from None


def open_storage(url: str) -> Any:
    """Open an RDB storage URL, failing with one line if it cannot be used."""
    import optuna

    if not url.startswith(("sqlite:", "postgresql", "mysql")):
        raise DseError(f"--storage {url!r}: allowed forms: sqlite:///FILE, postgresql://USER@HOST/DB, mysql://...")
    try:
        return optuna.storages.RDBStorage(url, engine_kwargs=_engine_kwargs(url))
    except Exception as exc:  # driver errors vary by backend
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DseError(f"--storage {_safe(url)} cannot be used: {msg}") from None


def _engine_kwargs(url: str) -> dict[str, Any]:
    if url.startswith("postgresql"):
        return {"connect_args": {"connect_timeout": 5}}
    return {}


def _safe(url: str) -> str:
    if "@" in url:
        scheme, _, rest = url.partition("://")
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url


def _journal(results: store.ResultsDir) -> Any:
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    return JournalStorage(JournalFileBackend(str(results.path / STUDY_FILE)))


def _sampler(name: str, seed: int, n_objectives: int, batch: int) -> Any:
    import optuna

    # constraint values are attached to each trial with Trial.set_constraint (Optuna 5)
    if name == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed, population_size=max(4, batch))
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True)
    return optuna.samplers.GPSampler(seed=seed)


def distributions(space: Space) -> dict[str, Any]:
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    out: dict[str, Any] = {}
    for k in space.knobs:
        if k.continuous and k.lo is not None and k.hi is not None and k.lo < k.hi:
            if k.integer:
                out[k.name] = IntDistribution(int(k.lo), int(k.hi), log=k.log)
            else:
                out[k.name] = FloatDistribution(k.lo, k.hi, log=k.log)
        else:
            out[k.name] = CategoricalDistribution(list(k.labels))
    return out


def _inputs_from_params(space: Space, params: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    cols: dict[str, np.ndarray] = {}
    for k in space.knobs:
        vals = [p[k.name] for p in params]
        cols[k.name] = np.atleast_1d(space.model.coerce(k.name, vals))
    return cols


def _violations(space: Space, env: dict[str, Any], n: int) -> np.ndarray:
    """(n, c) constraint values, <= 0 when satisfied (Optuna's convention).  A single
    comparison ``a <= b`` gives the relative excess; other forms give 0 or 1."""
    import ast

    cols = []
    for expr in space.constraints.values():
        tree = expr.tree
        if isinstance(tree, ast.Compare) and len(tree.ops) == 1 and isinstance(tree.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
            from dse.expr import Expr

            left = np.asarray(Expr(ast.unparse(tree.left)).evaluate(env), dtype=np.float64)
            right = np.asarray(Expr(ast.unparse(tree.comparators[0])).evaluate(env), dtype=np.float64)
            diff = left - right if isinstance(tree.ops[0], (ast.Lt, ast.LtE)) else right - left
            scale = np.maximum(np.abs(right), 1e-12)
            v = np.where(np.isfinite(diff), diff / scale, 1e9)
        else:
            ok = np.asarray(expr.evaluate(env), dtype=bool)
            v = np.where(ok, 0.0, 1.0)
        cols.append(np.broadcast_to(v, (n,)))
    return np.column_stack(cols) if cols else np.zeros((n, 0))


def _count_done(study: Any) -> tuple[int, int]:
    from optuna.trial import TrialState

    trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL, TrialState.RUNNING))
    done = sum(1 for t in trials if t.state == TrialState.COMPLETE or (t.state == TrialState.FAIL and not t.user_attrs.get("stale")))
    running = sum(1 for t in trials if t.state == TrialState.RUNNING)
    return done, running


def work(
    worker: int,
    space: Space,
    study_name: str,
    storage_spec: Any,
    target: int,
    batch: int,
    seed: int,
    sampler: str,
    on_batch: Any = None,
) -> int:
    """One worker's loop: ask a batch, evaluate it in one call, tell.  Stops when the
    study holds ``target`` evaluated trials.  Returns the trials it evaluated."""
    import optuna
    from optuna.trial import TrialState

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = storage_spec() if callable(storage_spec) else storage_spec
    probe = optuna.load_study(study_name=study_name, storage=storage)
    done0, _ = _count_done(probe)
    # a restarted worker continues the stream rather than replaying its first draws
    sampler_seed = int(np.random.SeedSequence([seed, worker, done0]).generate_state(1)[0])
    study = optuna.load_study(
        study_name=study_name, storage=storage, sampler=_sampler(sampler, sampler_seed, len(space.objectives), batch)
    )
    dists = distributions(space)
    names = list(space.objectives)
    pmap = space.model.param_map()
    evaluated = 0
    while True:
        done, running = _count_done(study)
        if on_batch is not None:
            on_batch(done)
        k = min(batch, target - done - running)
        if k <= 0:
            if done >= target:
                return evaluated
            time.sleep(0.05)  # others are finishing the last trials
            continue
        trials = [study.ask(dists) for _ in range(k)]
        params = [t.params for t in trials]
        cols = dict(space.fixed)
        cols.update(_inputs_from_params(space, params))
        metrics = space.model.run(cols, checked=True)
        env = dict(cols)
        env.update(metrics)
        for name in space.constraint_names:
            p = pmap.get(name)
            if p is not None and p.categorical:
                env[name] = np.asarray(p.choices, dtype=object)[np.asarray(cols[name], dtype=np.int64)]
        viol = _violations(space, env, k)
        for i, t in enumerate(trials):
            values = [float(metrics[n][i]) for n in names]
            for cname, v in zip(space.constraints, viol[i]):
                t.set_constraint(cname, float(v))
            if all(np.isfinite(values)):
                study.tell(t, values)
            else:
                study.tell(t, state=TrialState.FAIL)
        evaluated += k


def run(
    space: Space,
    results: store.ResultsDir,
    *,
    trials: int,
    seed: int,
    sampler: str,
    batch: int,
    storage: Any,
    storage_url: str | None,
    resume: bool,
    ray_ctx: Any,
    workers: int | None,
    progress: bool,
) -> dict[str, Any]:
    import optuna
    from optuna.trial import TrialState

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study_name = f"{space.name}-{space.sha256[:12]}"
    journal = storage is None
    if journal:
        storage = _journal(results)
    directions = ["minimize" if d == "min" else "maximize" for d in space.objectives.values()]
    exists = study_name in {s.study_name for s in optuna.get_all_study_summaries(storage, include_best_trial=False)}
    if exists and not resume:
        raise DseError(
            f"study {study_name} already exists in {_safe(storage_url or str(results.path / STUDY_FILE))}; pass --resume"
        )
    study = optuna.create_study(study_name=study_name, storage=storage, directions=directions, load_if_exists=True)
    stale = 0
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        # left by a process that died (kill -9): keep out of the count, re-run its point
        study._storage.set_trial_user_attr(t._trial_id, "stale", True)
        study._storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL)
        stale += 1
    before, _ = _count_done(study)

    if journal:
        path = str(results.path / STUDY_FILE)

        def storage_spec() -> Any:
            from optuna.storages import JournalStorage
            from optuna.storages.journal import JournalFileBackend

            return JournalStorage(JournalFileBackend(path))
    else:
        url = storage_url

        def storage_spec() -> Any:
            return optuna.storages.RDBStorage(url)  # type: ignore[arg-type]

    from dse.sweep.run import _progress

    with _progress(progress, trials, f"{space.name} (optuna/{sampler})") as bar:
        bar.advance(min(before, trials))
        if ray_ctx is not None:
            n_workers = workers or ray_ctx.workers
            ray = ray_ctx.ray
            task = ray.remote(max_retries=8, retry_exceptions=False)(work)
            refs = [
                task.remote(i, space, study_name, storage_spec, trials, batch, seed, sampler) for i in range(n_workers)
            ]
            shown = before
            pending = list(refs)
            while pending:
                _, pending = ray.wait(pending, num_returns=len(pending), timeout=0.5)
                done, _ = _count_done(study)
                bar.advance(max(0, min(done, trials) - shown))
                shown = max(shown, min(done, trials))
            ray.get(refs)
        else:
            n_workers = 1
            shown = [before]

            def on_batch(done: int) -> None:
                bar.advance(max(0, min(done, trials) - shown[0]))
                shown[0] = max(shown[0], min(done, trials))

            work(0, space, study_name, storage, trials, batch, seed, sampler, on_batch)

    # points.parquet: every evaluated trial, re-evaluated in one batch
    evaluated = [
        t
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL))
        if not t.user_attrs.get("stale") and t.params
    ]
    evaluated.sort(key=lambda t: t.number)
    from dse.sweep.evaluate import evaluate_inputs

    inputs = _inputs_from_params(space, [t.params for t in evaluated])
    ids = np.asarray([t.number for t in evaluated], dtype=np.int64)
    table = evaluate_inputs(space, inputs, ids)
    results.parts_dir.mkdir(parents=True, exist_ok=True)
    store.write_parquet(results.part_path(0), table)
    return {
        "study_name": study_name,
        "storage": "journal" if journal else "rdb",
        "trials_before_resume": before,
        "stale_trials_failed": stale,
        "trials_evaluated": len(evaluated),
        "workers": n_workers,
    }
