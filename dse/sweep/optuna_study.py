"""Optuna studies: multi-objective search with constraints, resumable storage.

Storage is a journal file inside the results folder by default; ``--storage`` takes an
RDB URL (``sqlite:///study.db``, ``postgresql://user@host/db``) so several machines can
share one study.  Trials are asked in batches and evaluated in one vectorized model
call, then told back.

Liveness: a worker refreshes a heartbeat (trial user attribute ``dse_heartbeat``) on
every trial it holds, every ``DSE_OPTUNA_HEARTBEAT_S`` seconds.  A RUNNING trial whose
heartbeat has not moved for ``DSE_OPTUNA_GRACE_S`` seconds (watched on the observer's own
monotonic clock, so clocks of different machines never need to agree) was left by a dead
worker: any worker, ``--resume`` or ``--join`` marks it PRUNED and it is not counted, so
another trial takes its place.  PRUNED means "not evaluated" here (stale, or asked beyond
the target); an evaluated trial is COMPLETE, or FAIL when the model says infeasible.
Optuna's own heartbeat is not used: it exists for RDB storages only, runs only inside
``Study.optimize`` (``ask`` warns), never fails a trial that died before its first
heartbeat, and marks stale trials FAIL, like an evaluated infeasible point.

``--resume`` continues a study after a crash: completed trials are kept; it waits until
every RUNNING trial is finished or stale, prunes the stale ones, and refuses (one line)
while another process is still working on the study.  ``--join`` adds workers to a
study that is running (or whose owner died): it only appends trials; the owner (or a
later ``--resume``) writes the results.

Each worker stops asking once the study holds the target of evaluated plus running
trials, and prunes at once any trial it asked beyond the target (two workers asking at
the same moment); the results hold the first ``trials`` evaluated trials by number, and
the manifest says how many were left out (``trials_trimmed``, normally 0).

At the end every evaluated trial is re-evaluated in one batch (the models are pure and
deterministic) to write ``points.parquet`` with all metrics.
"""

from __future__ import annotations

import math
import os
import threading
import warnings
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dse import store
from dse.errors import DseError
from dse.space import SAMPLERS, Space

STUDY_FILE = "study.journal"
HEARTBEAT_ATTR = "dse_heartbeat"
#: study user attributes written by the study's owner
TARGET_ATTR = "dse_target"
FINGERPRINT_ATTR = "dse_fingerprint"
#: attempts of a worker whose trials were pruned under it (it stalled past the grace)
MAX_WORKER_RESTARTS = 100


@dataclass(frozen=True)
class Liveness:
    """How often a worker proves it is alive, and how long a silent trial is trusted."""

    interval_s: float = 2.0
    grace_s: float = 10.0

    @classmethod
    def from_env(cls) -> "Liveness":
        def num(name: str, default: float) -> float:
            raw = os.environ.get(name)
            if raw is None:
                return default
            try:
                v = float(raw)
            except ValueError:
                raise DseError(f"{name}={raw!r} is not a number of seconds") from None
            if not 0.05 <= v <= 3600:
                raise DseError(f"{name}={raw!r} is out of range; allowed: 0.05 to 3600 seconds")
            return v

        interval = num("DSE_OPTUNA_HEARTBEAT_S", cls.interval_s)
        grace = num("DSE_OPTUNA_GRACE_S", max(cls.grace_s, 5 * interval))
        if grace < 2 * interval:
            raise DseError(
                f"DSE_OPTUNA_GRACE_S={grace:g} must be at least twice DSE_OPTUNA_HEARTBEAT_S={interval:g}"
            )
        return cls(interval, grace)


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

    if not url.startswith(("sqlite:", "postgresql", "postgres://", "mysql")):
        raise DseError(f"--storage {url!r}: allowed forms: sqlite:///FILE, postgresql://USER@HOST/DB, mysql://...")
    url = canonical_url(url)
    try:
        return optuna.storages.RDBStorage(url, engine_kwargs=_engine_kwargs(url))
    except Exception as exc:  # driver errors vary by backend
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DseError(f"--storage {_safe(url)} cannot be used: {msg}") from None


#: PostgreSQL URLs naming a driver this package does not ship, mapped to the one it does:
#: psycopg 3, SQLAlchemy 2.1's default for a bare ``postgresql://``.
PG_DRIVER_ALIASES = ("postgresql+psycopg2://", "postgres://")


def canonical_url(url: str) -> str:
    """The storage URL every process uses: ``sqlite:///rel.db`` names a file relative to
    the current folder and workers (Ray's included) run elsewhere, so it becomes absolute;
    ``postgresql+psycopg2://`` and ``postgres://`` use the shipped driver (psycopg 3)."""
    for alias in PG_DRIVER_ALIASES:
        if url.startswith(alias):
            return "postgresql+psycopg://" + url[len(alias):]
    prefix = "sqlite:///"
    if url.startswith(prefix):
        path = url[len(prefix) :]
        if path and not path.startswith(("/", ":memory:", "file:")):
            return prefix + os.path.abspath(path)
    return url


def _engine_kwargs(url: str) -> dict[str, Any]:
    if url.startswith("postgresql"):
        return {"connect_args": {"connect_timeout": 5}}
    return {}


def _safe(url: str) -> str:
    if "@" in url:
        scheme, _, rest = url.partition("://")
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url


def journal_path(folder: Path) -> str:
    """The journal's absolute path, the same in every process (Ray workers run in another
    folder).  Optuna's lock file was a symlink to the path as given: a relative target
    dangles (the symlink lives in the folder), so a lock left by ``kill -9`` was never
    released and the next run spun at 100 % CPU (see also _FlockLock)."""
    return os.path.abspath(os.path.join(folder, STUDY_FILE))


def _journal(path: str, live: Liveness) -> Any:
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend, JournalFileSymlinkLock

    _drop_dangling_lock(path)
    lock: Any
    if _FlockLock.available():
        lock = _FlockLock(path)
    else:  # no flock(2) (Windows): Optuna's lock file, released once the journal was silent this long
        lock = JournalFileSymlinkLock(path, grace_period=max(3, math.ceil(live.grace_s)))
    return JournalStorage(JournalFileBackend(path, lock_obj=lock))


class _FlockLock:
    """The journal's append lock, held with flock(2) on ``study.journal.flock``.  Optuna's
    default (a symlink created in a loop that backs off to 1 s sleeps) let one busy
    writer starve another for seconds, long enough to silence a live worker's heartbeat,
    and a holder killed with ``kill -9`` left it behind for its 30 s grace; the kernel
    queues flock waiters and drops the lock of a dead process at once.  (It has the
    ``acquire``/``release`` interface ``JournalFileBackend(lock_obj=...)`` calls.)"""

    def __init__(self, path: str) -> None:
        self._path = path + ".flock"
        self._fd: int | None = None

    @staticmethod
    def available() -> bool:
        try:
            import fcntl  # noqa: F401
        except ImportError:
            return False
        return True

    def acquire(self) -> bool:
        import fcntl

        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return True

    def release(self) -> None:
        import fcntl

        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)


def _drop_dangling_lock(path: str) -> None:
    """A lock symlink whose target does not resolve was left by an older cxl-dse (relative
    target) that died holding it: no live writer can own it, and Optuna would spin on it."""
    lock = path + ".lock"  # the name JournalFileSymlinkLock gives its lock
    if os.path.islink(lock) and not os.path.exists(lock):
        try:
            os.unlink(lock)
        except FileNotFoundError:
            pass


def _journal_spec(path: str, live: Liveness) -> Any:
    def storage_spec() -> Any:
        return _journal(path, live)

    return storage_spec


def _rdb_spec(url: str) -> Any:
    def storage_spec() -> Any:
        import optuna

        return optuna.storages.RDBStorage(url, engine_kwargs=_engine_kwargs(url))

    return storage_spec


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


def _evaluated(t: Any) -> bool:
    """COMPLETE, or FAIL told by a worker after evaluating (infeasible or non-finite).
    PRUNED trials were never evaluated; ``stale`` FAILs are from cxl-dse before 0.2."""
    from optuna.trial import TrialState

    return t.state == TrialState.COMPLETE or (t.state == TrialState.FAIL and not t.user_attrs.get("stale"))


def _tally(study: Any) -> tuple[int, list[Any]]:
    """(evaluated trials, RUNNING trials)."""
    from optuna.trial import TrialState

    trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL, TrialState.RUNNING))
    done = sum(1 for t in trials if _evaluated(t))
    return done, [t for t in trials if t.state == TrialState.RUNNING]


def _count_done(study: Any) -> tuple[int, int]:
    done, running = _tally(study)
    return done, len(running)


class _StaleWatch:
    """Which RUNNING trials' heartbeats have not moved for ``grace_s`` seconds of this
    process's monotonic clock (first sighting starts the clock)."""

    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        self._seen: dict[int, tuple[Any, float]] = {}

    def stale(self, running: list[Any]) -> list[Any]:
        now = time.monotonic()
        seen: dict[int, tuple[Any, float]] = {}
        out = []
        for t in running:
            beat = t.user_attrs.get(HEARTBEAT_ATTR)
            prev = self._seen.get(t.number)
            if prev is None or prev[0] != beat:
                seen[t.number] = (beat, now)
            else:
                seen[t.number] = prev
                if now - prev[1] >= self.grace_s:
                    out.append(t)
        self._seen = seen
        return out


def _prune(study: Any, numbers: list[int]) -> int:
    """Mark RUNNING trials PRUNED (not evaluated, not counted); a trial finished meanwhile
    by its worker is left as it is.  Returns how many this call pruned."""
    import optuna
    from optuna.trial import TrialState

    n = 0
    for number in numbers:
        try:
            study.tell(number, state=TrialState.PRUNED)
            n += 1
        except (optuna.exceptions.UpdateFinishedTrialError, ValueError):
            pass  # told (or pruned by another worker) between the look and the tell
    return n


def _reap(study: Any, watch: _StaleWatch, running: list[Any]) -> list[Any]:
    """Prune the stale trials among ``running``; returns the ones still running."""
    stale = watch.stale(running)
    if not stale:
        return running
    _prune(study, [t.number for t in stale])
    gone = {t.number for t in stale}
    return [t for t in running if t.number not in gone]


def _beyond_target(study: Any, mine: list[Any], target: int) -> list[Any]:
    """Of the trials this worker just asked, those ranked (by number) past ``target``
    among the evaluated and running trials: another worker asked at the same moment."""
    from optuna.trial import TrialState

    numbers = sorted(
        t.number
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL, TrialState.RUNNING))
        if t.state == TrialState.RUNNING or _evaluated(t)
    )
    if len(numbers) <= target:
        return []
    cutoff = numbers[target - 1]
    return [t for t in mine if t.number > cutoff]


class _Heartbeat:
    """A thread that refreshes the heartbeat of the trials this worker holds."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self._held: dict[int, Any] = {}
        #: trials whose heartbeat could not be written (told, or pruned by someone else)
        self.dropped: set[int] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dse-heartbeat", daemon=True)

    def start(self) -> "_Heartbeat":
        self._thread.start()
        return self

    def hold(self, trials: list[Any]) -> None:
        with self._lock:
            for t in trials:
                self._held[t.number] = t

    def release(self, trials: list[Any]) -> None:
        with self._lock:
            for t in trials:
                self._held.pop(t.number, None)

    def held(self) -> list[int]:
        with self._lock:
            return sorted(self._held)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            with self._lock:
                trials = list(self._held.values())
            stamp = time.time()
            for t in trials:
                try:
                    t.set_user_attr(HEARTBEAT_ATTR, stamp)
                except Exception:  # told or pruned meanwhile: nothing left to prove
                    self.release([t])
                    with self._lock:
                        self.dropped.add(t.number)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


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
    liveness: Liveness | None = None,
) -> int:
    """One worker: ask a batch, evaluate it in one call, tell, until the study holds
    ``target`` evaluated trials; a heartbeat thread keeps the held trials alive.  Returns
    the trials it evaluated.  If the worker stalled past the grace and its trials were
    pruned under it, it starts over (those points are asked again by someone)."""
    import optuna
    from optuna.trial import TrialState

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = storage_spec() if callable(storage_spec) else storage_spec
    live = liveness or Liveness.from_env()
    evaluated = 0
    for attempt in range(MAX_WORKER_RESTARTS + 1):
        beat = _Heartbeat(live.interval_s).start()
        failed = True
        try:
            evaluated += _work_once(worker, space, study_name, storage, target, batch, seed, sampler, on_batch, beat, live)
            failed = False
            return evaluated
        except (optuna.exceptions.UpdateFinishedTrialError, ValueError):
            study = optuna.load_study(study_name=study_name, storage=storage)
            states = {t.number: t.state for t in study.get_trials(deepcopy=False)}
            mine = set(beat.held()) | beat.dropped
            if attempt == MAX_WORKER_RESTARTS or not any(states.get(n) == TrialState.PRUNED for n in mine):
                raise
        finally:
            beat.stop()
            if failed:  # leave no RUNNING trial behind (Ctrl-C, an error, a restart)
                try:
                    _prune(optuna.load_study(study_name=study_name, storage=storage), beat.held())
                except Exception:  # best effort: others prune them once stale
                    pass
    raise AssertionError("unreachable")


def _work_once(
    worker: int,
    space: Space,
    study_name: str,
    storage: Any,
    target: int,
    batch: int,
    seed: int,
    sampler: str,
    on_batch: Any,
    beat: _Heartbeat,
    live: Liveness,
) -> int:
    import optuna
    from optuna.trial import TrialState

    probe = optuna.load_study(study_name=study_name, storage=storage)
    done0, _ = _count_done(probe)
    # a restarted worker continues the stream rather than replaying its first draws
    sampler_seed = int(np.random.SeedSequence([seed, worker, done0]).generate_state(1)[0])
    study = optuna.load_study(
        study_name=study_name, storage=storage, sampler=_sampler(sampler, sampler_seed, len(space.objectives), batch)
    )
    dists = distributions(space)
    names = list(space.objectives)
    from dse.sweep.evaluate import label_env

    evaluated = 0
    watch = _StaleWatch(live.grace_s)
    while True:
        done, running = _tally(study)
        running = _reap(study, watch, running)  # trials of dead workers: re-asked below
        if on_batch is not None:
            on_batch(done)
        k = min(batch, target - done - len(running))
        if k <= 0:
            if done >= target:
                return evaluated
            time.sleep(0.05)  # others are finishing the last trials
            continue
        trials = [study.ask(dists) for _ in range(k)]
        beat.hold(trials)
        extra = _beyond_target(study, trials, target)
        if extra:  # another worker asked at the same moment: these are not evaluated
            beat.release(extra)
            _prune(study, [t.number for t in extra])
            trials = [t for t in trials if t not in extra]
            k = len(trials)
            if not k:
                continue
        params = [t.params for t in trials]
        cols = dict(space.fixed)
        cols.update(_inputs_from_params(space, params))
        ev = space.model.run_full(cols, checked=True)
        metrics = ev.metrics
        env = dict(cols)
        env.update(metrics)
        env.update(label_env(space.model, env, space.constraint_names))  # labels, not codes
        viol = _violations(space, env, k)
        for i, t in enumerate(trials):
            values = [float(metrics[n][i]) for n in names]
            for cname, v in zip(space.constraints, viol[i]):
                t.set_constraint(cname, float(v))
            if ev.feasible[i] and all(np.isfinite(values)):  # an infeasible point is a FAIL
                study.tell(t, values)
            else:
                study.tell(t, state=TrialState.FAIL)
        beat.release(trials)
        evaluated += k



def _storages(folder: Any, storage: Any, storage_url: str | None, live: Any) -> tuple[Any, Any, str]:
    """(storage, a spec that reopens it in a worker, where it is, for messages): the
    folder's journal when no RDB storage was opened, else the ``--storage`` URL."""
    if storage is None:
        path = journal_path(folder)
        return _journal(path, live), _journal_spec(path, live), path
    url = canonical_url(storage_url or "")
    return storage, _rdb_spec(url), _safe(url)


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
    fingerprint: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run (or, with ``resume``, continue) the study this results folder owns, then write
    its evaluated trials as the one part ``finalize`` merges."""
    import optuna
    from optuna.trial import TrialState

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    live = Liveness.from_env()
    study_name = study_name_of(space)
    journal = storage is None
    storage, storage_spec, where = _storages(results.path, storage, storage_url, live)
    directions = ["minimize" if d == "min" else "maximize" for d in space.objectives.values()]
    exists = study_name in {s.study_name for s in optuna.get_all_study_summaries(storage, include_best_trial=False)}
    if exists and not resume:
        raise DseError(f"study {study_name} already exists in {where}; pass --resume (or --join to add workers)")
    study = optuna.create_study(study_name=study_name, storage=storage, directions=directions, load_if_exists=True)
    with warnings.catch_warnings():  # experimental since Optuna 3.2, stable in use
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study.set_metric_names(list(space.objectives))  # optuna-dashboard labels the objectives by name
    stale = _settle(study, live, where) if exists else 0
    study.set_user_attr(TARGET_ATTR, int(trials))
    if fingerprint is not None:
        study.set_user_attr(FINGERPRINT_ATTR, _plain(fingerprint))
    before, _ = _count_done(study)

    n_workers = _run_workers(
        space, study, study_name, storage, storage_spec, trials, batch, seed, sampler, ray_ctx, workers, progress, live
    )

    # points.parquet: the first `trials` evaluated trials, re-evaluated in one batch
    evaluated = sorted((t for t in study.get_trials(deepcopy=False) if _evaluated(t) and t.params), key=lambda t: t.number)
    trimmed = max(0, len(evaluated) - trials)
    evaluated = evaluated[:trials]
    from dse.sweep.evaluate import evaluate_inputs

    inputs = _inputs_from_params(space, [t.params for t in evaluated])
    ids = np.asarray([t.number for t in evaluated], dtype=np.int64)
    table = evaluate_inputs(space, inputs, ids)
    results.parts_dir.mkdir(parents=True, exist_ok=True)
    store.write_parquet(results.part_path(0), table)
    pruned = len(study.get_trials(deepcopy=False, states=(TrialState.PRUNED,)))
    return {
        "study_name": study_name,
        "storage": "journal" if journal else "rdb",
        "trials_before_resume": before,
        "stale_trials_pruned": stale,
        "trials_pruned": pruned,
        "trials_trimmed": trimmed,
        "trials_evaluated": len(evaluated),
        "workers": n_workers,
        "heartbeat_s": live.interval_s,
        "stale_after_s": live.grace_s,
    }


def _plain(obj: Any) -> Any:
    """As the storage gives it back (JSON), so a comparison never trips on tuples."""
    import json

    return json.loads(json.dumps(obj, default=str))


def study_name_of(space: Space) -> str:
    return f"{space.name}-{space.sha256[:12]}"


def _settle(study: Any, live: Liveness, where: str) -> int:
    """``--resume``: wait until every RUNNING trial is finished or stale (at most the
    grace), prune the stale ones and return how many.  Any sign of another live process
    (a heartbeat moves, a trial starts or ends) refuses the resume with one line."""
    from optuna.trial import TrialState

    watch = _StaleWatch(live.grace_s)
    t0 = time.monotonic()
    first = None
    while True:
        trials = study.get_trials(deepcopy=False)
        running = [t for t in trials if t.state == TrialState.RUNNING]
        snap = (len(trials), sorted((t.number, repr(t.user_attrs.get(HEARTBEAT_ATTR))) for t in running))
        if first is None:
            first = snap
        elif snap != first:
            raise DseError(
                f"{where}: study {study.study_name} is being run by another live process (its trials changed "
                f"{time.monotonic() - t0:.1f} s ago); wait for it to finish, or add workers to it with --join"
            )
        stale = watch.stale(running)
        # watch one heartbeat interval at least, so a live owner between batches shows
        if len(stale) == len(running) and time.monotonic() - t0 >= 1.5 * live.interval_s:
            return _prune(study, [t.number for t in stale])
        time.sleep(min(0.25, live.interval_s / 2))


def _run_workers(
    space: Space,
    study: Any,
    study_name: str,
    storage: Any,
    storage_spec: Any,
    trials: int,
    batch: int,
    seed: int,
    sampler: str,
    ray_ctx: Any,
    workers: int | None,
    progress: bool,
    live: Liveness,
    first_worker: int = 0,
) -> int:
    """Run the workers (in this process, or as Ray tasks) until the study holds
    ``trials`` evaluated trials; returns how many workers ran."""
    from dse.sweep.run import progress_bar

    before, _ = _count_done(study)
    with progress_bar(progress, trials, f"{space.name} (optuna/{sampler})") as bar:
        bar.advance(min(before, trials))
        if ray_ctx is not None:
            n_workers = workers or ray_ctx.workers
            ray = ray_ctx.ray
            # a task whose worker process dies is run again; its trials go stale and are re-asked
            task = ray.remote(max_retries=8, retry_exceptions=False)(work)
            refs = [
                task.remote(first_worker + i, space, study_name, storage_spec, trials, batch, seed, sampler, None, live)
                for i in range(n_workers)
            ]
            shown = before
            pending = list(refs)
            while pending:
                _, pending = ray.wait(pending, num_returns=len(pending), timeout=0.5)
                done, _ = _count_done(study)
                bar.advance(max(0, min(done, trials) - shown))
                shown = max(shown, min(done, trials))
            ray.get(refs)
            return n_workers
        shown_box = [before]

        def on_batch(done: int) -> None:
            bar.advance(max(0, min(done, trials) - shown_box[0]))
            shown_box[0] = max(shown_box[0], min(done, trials))

        work(first_worker, space, study_name, storage, trials, batch, seed, sampler, on_batch, live)
        return 1


def join(
    space: Space,
    *,
    folder: Path,
    storage: Any,
    storage_url: str | None,
    fingerprint: dict[str, Any],
    trials: int | None,
    batch: int,
    ray_ctx: Any,
    workers: int | None,
    progress: bool,
) -> dict[str, Any]:
    """``--join``: add workers to a study another process owns.  Touches only the study:
    no lock on the results folder, no points.parquet, no manifest."""
    import secrets

    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    live = Liveness.from_env()
    study_name = study_name_of(space)
    if storage is None and not os.path.isfile(journal_path(folder)):
        raise DseError(
            f"--join: no Optuna study in {folder} (no {STUDY_FILE}); start it with `dse sweep --strategy optuna "
            f"--out {folder}`, or give the shared --storage"
        )
    storage, storage_spec, where = _storages(folder, storage, storage_url, live)
    if study_name not in {s.study_name for s in optuna.get_all_study_summaries(storage, include_best_trial=False)}:
        raise DseError(f"--join: no study {study_name} in {where} (that space's study); start it without --join first")
    study = optuna.load_study(study_name=study_name, storage=storage)
    attrs = study.user_attrs
    owner = attrs.get(FINGERPRINT_ATTR)
    target = attrs.get(TARGET_ATTR)
    if owner is None or target is None:
        raise DseError(f"--join: study {study_name} in {where} was made by an older cxl-dse; continue it with --resume")
    fingerprint = _plain(fingerprint)
    if owner != fingerprint:
        keys = sorted(k for k in set(owner) | set(fingerprint) if owner.get(k) != fingerprint.get(k))
        raise DseError(
            f"--join: study {study_name} was started with other settings (differs in {', '.join(keys)}); "
            "give the owner's --seed/--sampler and the same model code and calibration"
        )
    if trials is not None and trials != target:
        raise DseError(f"--trials {trials} differs from the study's target {target} set by its owner; leave --trials out with --join")
    sampler = fingerprint.get("sampler") or "nsga2"
    seed = int(fingerprint.get("seed", 0))
    before, _ = _count_done(study)
    # worker numbers of their own, so a joiner never replays the owner's sampler stream
    n_workers = _run_workers(
        space, study, study_name, storage, storage_spec, int(target), batch, seed, sampler, ray_ctx, workers, progress,
        live, first_worker=secrets.randbelow(2**31),
    )
    done, _ = _count_done(study)
    return {
        "study_name": study_name,
        "storage": where,
        "target": int(target),
        "trials_before_join": before,
        "trials_done": done,
        "workers": n_workers,
    }
