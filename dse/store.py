"""Results directories: ``points.parquet``, ``pareto.parquet``, ``manifest.json``.

Every file is written to a temporary name in the same folder and renamed into place,
so a reader never sees half a file.  A directory being written holds ``.incomplete``
(and ``.parts/`` for chunked sweeps) until the run finishes; re-running into an
existing directory without ``--resume`` is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dse.errors import DseError

POINTS = "points.parquet"
PARETO = "pareto.parquet"
MANIFEST = "manifest.json"
INCOMPLETE = ".incomplete"
PARTS = ".parts"
LOCK = ".lock"
#: Files the tool itself keeps in a results folder besides its outputs.
HOUSEKEEPING = (LOCK,)


def atomic_write(path: Path, writer: Callable[[Path], None]) -> None:
    """Call ``writer(tmp)`` then rename ``tmp`` to ``path`` (same folder, so atomic)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(path)
    try:
        writer(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def temp_path(path: Path) -> Path:
    """A fresh, unique temporary file beside ``path`` (for writers that stream)."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.chmod(tmp_name, 0o666 & ~_umask())  # mkstemp makes it private; results are not
    return Path(tmp_name)


def verify_parquet(path: Path, rows: int) -> None:
    """Read a Parquet file's footer and every row group back; it must hold ``rows`` rows.
    Run before a manifest says the folder is complete, so a manifest never stands over a
    file that cannot be read."""
    import pyarrow.parquet as pq

    try:
        f = pq.ParquetFile(path)
        n = sum(f.read_row_group(i, columns=[f.schema_arrow.names[0]]).num_rows for i in range(f.num_row_groups))
    except Exception as exc:  # pyarrow raises several kinds for a damaged file
        raise RuntimeError(f"{path} does not read back after writing: {exc}") from exc
    if n != rows or f.metadata.num_rows != rows:
        raise RuntimeError(f"{path} reads back {n} rows, {rows} were written")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write(path, lambda t: t.write_text(text, encoding="utf-8"))


def write_json(path: Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=_json_default) + "\n")


def _json_default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def write_parquet(path: Path, table: Any) -> None:
    """Write a pyarrow Table or polars DataFrame atomically."""
    import pyarrow.parquet as pq

    if hasattr(table, "to_arrow"):
        table = table.to_arrow()
    atomic_write(path, lambda t: pq.write_table(table, t, compression="zstd"))


class ResultsDir:
    """A study's output folder."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    # -------------------------------------------------------------- lifecycle
    @property
    def exists(self) -> bool:
        return self.path.exists()

    def has_content(self) -> bool:
        """True when the folder holds anything besides the tool's lock file."""
        return self.path.is_dir() and any(p.name not in HOUSEKEEPING for p in self.path.iterdir())

    def lock(self) -> "FolderLock":
        """An exclusive lock on the folder for a whole run (created if missing)."""
        return FolderLock(self.path)

    @property
    def complete(self) -> bool:
        return (self.path / MANIFEST).exists() and not (self.path / INCOMPLETE).exists()

    def prepare(self, *, resume: bool, fingerprint: dict[str, Any]) -> bool:
        """Create the folder, or check it for ``--resume``.  Returns True if resuming.

        Refuses to touch a folder that exists when not resuming, and a folder holding a
        different study when resuming."""
        state_file = self.path / INCOMPLETE
        if self.has_content():
            if not resume:
                raise DseError(
                    f"{self.path} already exists; pass --resume to continue that study, or --out to write elsewhere"
                )
            if self.complete and not state_file.exists():
                old = self.manifest().get("fingerprint", {})
                if old and old != fingerprint:
                    raise DseError(f"{self.path} holds a different study ({_diff(old, fingerprint)}); use another --out")
                return True
            if state_file.exists():
                self._remove_stale_temps()
                old = read_state(state_file)
                if old != fingerprint:
                    raise DseError(
                        f"{self.path} holds a different unfinished study ({_diff(old, fingerprint)}); use another --out"
                    )
            return True
        self.path.mkdir(parents=True, exist_ok=True)
        write_json(state_file, fingerprint)
        return False

    def _remove_stale_temps(self) -> None:
        """Temp files (``.NAME.XXXX.tmp``) left by a run that died: safe to remove,
        since the caller holds the folder's lock and only this tool names files so."""
        for folder in (self.path, self.parts_dir):
            if folder.is_dir():
                for t in folder.glob(".*.tmp"):
                    if t.is_file():
                        t.unlink(missing_ok=True)

    def mark_incomplete(self, fingerprint: dict[str, Any]) -> None:
        write_json(self.path / INCOMPLETE, fingerprint)

    def finish(self) -> None:
        (self.path / INCOMPLETE).unlink(missing_ok=True)
        shutil.rmtree(self.path / PARTS, ignore_errors=True)

    def abandon(self) -> None:
        """Remove a folder created by this run before any work was saved."""
        shutil.rmtree(self.path, ignore_errors=True)

    def clear_own_files(self) -> None:
        """Remove what a failed run wrote into a folder it did not create (the folder,
        and anything else in it, stays)."""
        (self.path / INCOMPLETE).unlink(missing_ok=True)
        shutil.rmtree(self.path / PARTS, ignore_errors=True)


    # -------------------------------------------------------------- parts
    @property
    def parts_dir(self) -> Path:
        return self.path / PARTS

    def part_path(self, index: int) -> Path:
        return self.parts_dir / f"part-{index:07d}.parquet"

    def done_parts(self) -> set[int]:
        if not self.parts_dir.exists():
            return set()
        return {int(p.stem.split("-")[1]) for p in self.parts_dir.glob("part-*.parquet")}

    # -------------------------------------------------------------- readers
    def manifest(self) -> dict[str, Any]:
        f = self.path / MANIFEST
        if not f.exists():
            raise DseError(f"{self.path}: no {MANIFEST}; not a finished results folder")
        return read_manifest(self.path)

    def is_results_folder(self) -> bool:
        """Written by a sweep: a manifest, or the marks of an unfinished run."""
        return any((self.path / n).exists() for n in (MANIFEST, INCOMPLETE, PARTS))

    def points_path(self) -> Path:
        return self.path / POINTS

    def pareto_path(self) -> Path:
        return self.path / PARETO


class FolderLock:
    """Exclusive, non-blocking lock of a results folder (``filelock`` on ``.lock`` inside
    it), held while a run writes the folder: a second writer gets one line, not a race on
    the same files.  The OS releases it when the holder dies (kill -9 included), so a
    crashed run never leaves a folder locked."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock: Any = None

    def __enter__(self) -> "FolderLock":
        from filelock import FileLock, Timeout

        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise DseError(f"--out {self.path} is a file, not a folder; give a folder") from None
        except OSError as exc:
            raise DseError(f"--out {self.path} cannot be created: {exc.strerror or exc}") from None
        if not os.access(self.path, os.W_OK | os.X_OK):
            raise DseError(f"--out {self.path} is not writable")
        lock = FileLock(str(self.path / LOCK), timeout=0, is_singleton=False)
        try:
            lock.acquire()
        except Timeout:
            raise DseError(
                f"{self.path} is being written by another dse process; wait for it to finish, "
                "use another --out, or add workers to an Optuna study with --join"
            ) from None
        except OSError as exc:
            raise DseError(f"{self.path}: cannot lock the folder: {exc.strerror or exc}") from None
        self._lock = lock
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def open_results(path: str | Path) -> ResultsDir:
    """A finished results folder to read, checked: ``points.parquet`` is there and its
    footer readable, and ``manifest.json``, when present, is a manifest
    (:func:`read_manifest`).  Anything else is one line naming the file."""
    r = ResultsDir(Path(path))
    if not r.path.is_dir():
        raise DseError(f"{path}: no such results folder")
    if not r.points_path().exists():
        hint = " (unfinished: re-run the sweep with --resume)" if (r.path / INCOMPLETE).exists() else ""
        raise DseError(f"{path}: no {POINTS}; not a results folder{hint}")
    parquet_schema(r.points_path())
    if (r.path / MANIFEST).exists():
        read_manifest(r.path)
    return r


# ------------------------------------------------------------------ checked readers
RERUN = "re-run the sweep to write it again"

#: What every manifest holds and the readers (query, dashboard) rely on: key -> type,
#: or a nested dict of the same.
MANIFEST_SCHEMA: dict[str, Any] = {
    "space": {"name": str},
    "model": {"name": str},
    "strategy": str,
    "knobs": list,
    "objectives": dict,
    "rows": {"points": int, "feasible": int, "pareto": int},
}


def unreadable(path: Path, why: object) -> DseError:
    """One line for a results file that cannot be read."""
    first = " ".join(str(why).split())[:200] or type(why).__name__
    return DseError(f"{path}: unreadable ({first}); {RERUN}")


def read_state(f: Path) -> dict[str, Any]:
    """An unfinished run's fingerprint (``.incomplete``); a damaged one is one line."""
    try:
        state = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise unreadable(f, getattr(exc, "strerror", None) or exc) from None
    if not isinstance(state, dict):
        raise unreadable(f, "not a JSON object")
    return state


def read_manifest(folder: str | Path) -> dict[str, Any]:
    """``manifest.json`` of a results folder, checked against :data:`MANIFEST_SCHEMA`:
    a missing, unreadable, invalid or incomplete one is one line naming the file."""
    f = Path(folder) / MANIFEST
    if not f.exists():
        raise DseError(f"{folder}: no {MANIFEST}; not a finished results folder")
    try:
        m = json.loads(f.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise unreadable(f, f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except (OSError, ValueError, RecursionError) as exc:  # a folder, no permission, not UTF-8, nested too deep
        raise unreadable(f, getattr(exc, "strerror", None) or exc) from None
    problem = _schema_problem(m, MANIFEST_SCHEMA, "")
    if problem is None:
        if not all(isinstance(k, str) for k in m["knobs"]):
            problem = "'knobs' is not a list of names"
        elif not all(isinstance(v, str) for v in m["objectives"].values()):
            problem = "'objectives' is not a mapping of names to min/max"
    if problem:
        raise unreadable(f, problem)
    return m


def _schema_problem(obj: Any, schema: dict[str, Any], where: str) -> str | None:
    if not isinstance(obj, dict):
        return f"{where or 'the file'} is not a JSON object"
    for key, kind in schema.items():
        name = f"{where}.{key}" if where else key
        if key not in obj:
            return f"no {name!r}"
        if isinstance(kind, dict):
            problem = _schema_problem(obj[key], kind, name)
            if problem:
                return problem
        elif not isinstance(obj[key], kind) or (kind is int and isinstance(obj[key], bool)):
            return f"{name!r} is not {'a ' + kind.__name__ if kind is not int else 'an integer'}"
    return None


def parquet_schema(path: str | Path) -> Any:
    """The schema (name -> Polars dtype) of a results table, reading only its footer;
    a missing or unreadable file is one line naming it."""
    import polars as pl

    path = Path(path)
    if not path.is_file():
        raise DseError(f"{path}: no such file; {RERUN}")
    try:
        return pl.read_parquet_schema(path)
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        raise unreadable(path, exc) from None


def check_parquet_data(path: str | Path) -> None:
    """Decode every column of a results table once (for telling a damaged file from a
    bad query after a read failed); raises :func:`unreadable` if it cannot be read."""
    import polars as pl

    path = Path(path)
    try:
        pl.scan_parquet(path).select(pl.all().is_null().sum()).collect()
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        raise unreadable(path, exc) from None


def git_revision(root: Path) -> dict[str, Any]:
    """Current git revision of the checkout and whether it has uncommitted changes."""
    try:
        rev = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
        )
        if rev.returncode != 0:
            return {"revision": None, "dirty": None}
        return {"revision": rev.stdout.strip(), "dirty": bool(dirty.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return {"revision": None, "dirty": None}


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


#: Fingerprint keys that change when the code or the calibration changed, not the study.
_STATE_KEYS = {"model_code": "the model's code or fitted constants", "model_version": "the model's version",
               "calibration": "the calibration", "calibration_files": "the calibration files"}


def _diff(old: dict[str, Any], new: dict[str, Any]) -> str:
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    changed = [_STATE_KEYS[k] for k in keys if k in _STATE_KEYS]
    if changed:
        return (f"{', '.join(changed)} changed since it started; resuming would mix results of both, "
                "so it is refused")
    return "differs in " + ", ".join(keys) if keys else "differs"
