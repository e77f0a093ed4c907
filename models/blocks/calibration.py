"""Load and save block calibrations (``results/calibration/<block>.toml``).

Which calibration is in force is set by the environment variable ``DSE_CALIBRATION``
(the CLI's ``--calibration`` option sets it):

* ``shipped`` (default) -- ``results/calibration/<block>.toml`` in the checkout;
* ``none`` -- no calibration: blocks use their uncalibrated defaults;
* any other value -- a folder holding ``<block>.toml`` files.

Loaded documents are cached per process and per (mode, block); :func:`clear_cache`
forgets them (tests, or after ``dse calibrate`` wrote a new file).  :func:`save` writes
atomically (a temp file in the same folder, then rename).

Public functions: :func:`mode`, :func:`folder`, :func:`load(block)` (dict; ``{}`` when none
is in force or the file is missing), :func:`save(block, doc, out_dir=None)` (path written),
:func:`dumps(doc)` (TOML text), :func:`clear_cache`; :func:`current` (the calibration in
force as a :class:`Calibration` value with a content hash, which manifests and Parquet
metadata record), :func:`of(spec)` and :func:`using(spec)` (evaluate under another one:
``Model.run(inputs, calibration=...)``).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

from dse import store
from dse.errors import DseError

ENV = "DSE_CALIBRATION"
#: The blocks that read a calibration file (``<block>.toml``).
CALIBRATED_BLOCKS = ("dram", "flash")
_CACHE: dict[tuple[str, str], dict[str, Any]] = {}


def mode() -> str:
    return os.environ.get(ENV, "shipped").strip() or "shipped"


def shipped_folder() -> Path:
    from dse.registry import project_root

    return project_root() / "results" / "calibration"


def folder() -> Path | None:
    """The folder calibrations are read from, or None for ``none``."""
    m = mode()
    if m.lower() == "none":
        return None
    if m.lower() == "shipped":
        return shipped_folder()
    p = Path(m)
    check_folder(p)
    return p


def check_folder(p: Path) -> None:
    """A user's calibration folder must hold at least one block's fit: a folder without
    one would silently run every block uncalibrated."""
    if not p.is_dir():
        raise DseError(f"--calibration {str(p)!r}: not 'shipped', 'none' or an existing folder")
    if not any((p / f"{b}.toml").is_file() for b in CALIBRATED_BLOCKS):
        names = ", ".join(f"{b}.toml" for b in CALIBRATED_BLOCKS)
        raise DseError(f"--calibration {p}: holds no fit file ({names}); write one with `dse calibrate --out {p}`")


def load(block: str) -> dict[str, Any]:
    """The calibration document of ``block`` in force ({} when none)."""
    key = (mode(), block)
    if key in _CACHE:
        return _CACHE[key]
    f = folder()
    doc: dict[str, Any] = {}
    if f is not None:
        p = f / f"{block}.toml"
        if p.is_file():
            try:
                doc = tomllib.loads(p.read_text())
            except tomllib.TOMLDecodeError as exc:
                raise DseError(f"calibration file {p} is not valid TOML: {exc}") from None
    _CACHE[key] = doc
    return doc


def clear_cache() -> None:
    global _GENERATION
    _CACHE.clear()
    _GENERATION += 1


#: Bumped by :func:`clear_cache`: tables derived from a calibration are rebuilt after it.
_GENERATION = 0


def state() -> tuple[str, int]:
    """Identifies the calibration in force (mode, cache generation): a key for tables
    computed from calibrated blocks."""
    return mode(), _GENERATION


#: Every :func:`per_calibration` table dict, so :func:`forget` can drop a calibration's entries.
_TABLES: list[dict[tuple[str, int], Any]] = []


def forget(spec: str) -> None:
    """Drop what is cached for calibration ``spec`` (a folder about to be removed, such as
    :func:`drawn_folders`'), leaving every other calibration's tables in place."""
    for key in [k for k in _CACHE if k[0] == spec]:
        del _CACHE[key]
    for tables in _TABLES:
        for key in [k for k in tables if k[0] == spec]:
            del tables[key]


def per_calibration(fn: Callable[[], T]) -> Callable[[], T]:
    """Memoize a zero-argument table builder per calibration in force, so a model never
    freezes a calibrated block's results at import: switching ``--calibration`` (or
    refitting) in one process gives every table the new calibration."""
    tables: dict[tuple[str, int], T] = {}
    _TABLES.append(tables)

    @functools.wraps(fn)
    def table() -> T:
        key = state()
        if key not in tables:
            tables[key] = fn()
        return tables[key]

    return table


# ----------------------------------------------------------------------------- the state as an object
@dataclass(frozen=True)
class Calibration:
    """A calibration as a value: its mode (``shipped``, ``none`` or a folder) and the
    content hash of every block file in it.  :func:`current` gives the one in force;
    :func:`using` puts another in force for a block of code (``Model.run(...,
    calibration=cal)``).  ``sha256`` changes when any fitted file's bytes do, so a results
    folder can record exactly which fit its points came from."""

    mode: str
    files: tuple[tuple[str, str], ...]

    @property
    def sha256(self) -> str:
        import hashlib

        text = "".join(f"|{name}:{digest}" for name, digest in self.files)  # content only: a copy is the same fit
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def info(self) -> dict[str, Any]:
        """What a manifest records: mode, each file's hash, the calibration's hash."""
        return {"mode": self.mode, "files": dict(self.files), "sha256": self.sha256}


def current() -> Calibration:
    """The calibration in force, with the hashes of its ``*.toml`` files."""
    import hashlib

    m = mode()
    f = folder()
    files: list[tuple[str, str]] = []
    if f is not None and f.is_dir():
        files = [(p.name, hashlib.sha256(p.read_bytes()).hexdigest()[:16]) for p in sorted(f.glob("*.toml"))]
    return Calibration(m, tuple(files))


def of(spec: str | Calibration | None) -> Calibration | None:
    """A calibration from ``'shipped'``, ``'none'``, a folder or a Calibration (None stays None)."""
    if spec is None or isinstance(spec, Calibration):
        return spec
    text = str(spec).strip() or "shipped"
    if text.lower() not in ("shipped", "none"):
        check_folder(Path(text))
    with using(text):
        return current()


@contextlib.contextmanager
def using(spec: str | Calibration | None) -> Iterator[None]:
    """Put a calibration in force for the ``with`` block (None: leave it as it is)."""
    if spec is None:
        yield
        return
    wanted = spec.mode if isinstance(spec, Calibration) else str(spec)
    before = os.environ.get(ENV)
    os.environ[ENV] = wanted
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


# ----------------------------------------------------------------------------- TOML out
def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(float(f"{v:.10g}"))
    if hasattr(v, "item"):  # numpy scalar
        return _scalar(v.item())
    s = str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{s}"'


def _value(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    return _scalar(v)


def _key(k: str) -> str:
    k = str(k)
    return k if k.replace("_", "").replace("-", "").isalnum() else _scalar(k)


def dumps(doc: dict[str, Any], _prefix: str = "") -> str:
    """Serialize nested dicts of scalars / lists to TOML (tables for nested dicts)."""
    lines: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    for k, v in doc.items():
        if isinstance(v, dict):
            tables.append((k, v))
        else:
            lines.append(f"{_key(k)} = {_value(v)}")
    out = "\n".join(lines)
    for k, v in tables:
        name = f"{_prefix}.{_key(k)}" if _prefix else _key(k)
        body = dumps(v, name)
        out += ("\n\n" if out else "") + f"[{name}]\n" + body
    return out.strip("\n") + "\n" if not _prefix else out


def save(block: str, doc: dict[str, Any], out_dir: str | Path | None = None) -> Path:
    """Write ``<out_dir>/<block>.toml`` atomically; returns the path."""
    d = Path(out_dir) if out_dir is not None else shipped_folder()
    d.mkdir(parents=True, exist_ok=True)
    text = dumps(doc)
    tomllib.loads(text)  # never write a file we cannot read back
    store.atomic_write_text(d / f"{block}.toml", text)
    clear_cache()
    return d / f"{block}.toml"


# ----------------------------------------------------------------------------- fits as distributions
def fit_spread() -> dict[str, dict[str, tuple[float, float]]]:
    """block -> constant -> (fitted value, sd of the fit) for every constant of the
    calibration in force whose fit gave an sd (``[uncertainty.sd]``, written by the fit
    harness; a constant held at a bound has no spread and is left out)."""
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for block in CALIBRATED_BLOCKS:
        doc = load(block)
        unc = doc.get("uncertainty", {})
        held = set(unc.get("at_bound", []))
        consts = doc.get("constants", {})
        spread = {k: (float(consts[k]), float(sd)) for k, sd in unc.get("sd", {}).items()
                  if k in consts and k not in held and math.isfinite(float(sd)) and float(sd) > 0}
        if spread:
            out[block] = spread
    return out


@contextlib.contextmanager
def drawn_folders(count: int, seed: int = 0) -> Iterator[list[str]]:
    """``count`` calibration folders (temporary, removed on exit), each the calibration in
    force with every constant of :func:`fit_spread` drawn from a normal of its fit's sd
    (at least 0: the constants are non-negative scale factors).  Empty when nothing in
    force has a spread (``none``, or fits without sds)."""
    import shutil
    import tempfile

    import numpy as np

    spread, src = fit_spread(), folder()
    if not spread or src is None or count <= 0:
        yield []
        return
    rng = np.random.default_rng(seed)
    root = Path(tempfile.mkdtemp(prefix="dse-fit-draws-"))
    made: list[str] = []
    try:
        for i in range(count):
            d = root / f"draw{i}"
            d.mkdir()
            for f in src.glob("*.toml"):
                if f.stem not in spread:
                    shutil.copyfile(f, d / f.name)
            for block, consts in spread.items():
                doc = dict(load(block))
                doc["constants"] = {**doc["constants"], **{k: float(f"{max(0.0, rng.normal(v, sd)):.10g}") for k, (v, sd) in consts.items()}}  # as written
                (d / f"{block}.toml").write_text(dumps(doc))  # a fresh temporary folder of ours
                _CACHE[(str(d), block)] = doc  # what load() would parse back
            made.append(str(d))
        yield made
    finally:
        for m in made:
            forget(m)
        shutil.rmtree(root, ignore_errors=True)
