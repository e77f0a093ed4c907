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


def atomic_write(path: Path, writer: Callable[[Path], None]) -> None:
    """Call ``writer(tmp)`` then rename ``tmp`` to ``path`` (same folder, so atomic)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        writer(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


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

    @property
    def complete(self) -> bool:
        return (self.path / MANIFEST).exists() and not (self.path / INCOMPLETE).exists()

    def prepare(self, *, resume: bool, fingerprint: dict[str, Any]) -> bool:
        """Create the folder, or check it for ``--resume``.  Returns True if resuming.

        Refuses to touch a folder that exists when not resuming, and a folder holding a
        different study when resuming."""
        state_file = self.path / INCOMPLETE
        if self.path.exists() and any(self.path.iterdir()):
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
                old = json.loads(state_file.read_text())
                if old != fingerprint:
                    raise DseError(
                        f"{self.path} holds a different unfinished study ({_diff(old, fingerprint)}); use another --out"
                    )
            return True
        self.path.mkdir(parents=True, exist_ok=True)
        write_json(state_file, fingerprint)
        return False

    def mark_incomplete(self, fingerprint: dict[str, Any]) -> None:
        write_json(self.path / INCOMPLETE, fingerprint)

    def finish(self) -> None:
        (self.path / INCOMPLETE).unlink(missing_ok=True)
        shutil.rmtree(self.path / PARTS, ignore_errors=True)

    def abandon(self) -> None:
        """Remove a folder created by this run before any work was saved."""
        shutil.rmtree(self.path, ignore_errors=True)

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
        return json.loads(f.read_text())

    def points_path(self) -> Path:
        return self.path / POINTS

    def pareto_path(self) -> Path:
        return self.path / PARETO


def open_results(path: str | Path) -> ResultsDir:
    r = ResultsDir(Path(path))
    if not r.path.is_dir():
        raise DseError(f"{path}: no such results folder")
    if not r.points_path().exists():
        hint = " (unfinished: re-run the sweep with --resume)" if (r.path / INCOMPLETE).exists() else ""
        raise DseError(f"{path}: no {POINTS}; not a results folder{hint}")
    return r


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


def _diff(old: dict[str, Any], new: dict[str, Any]) -> str:
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    return "differs in " + ", ".join(keys) if keys else "differs"
