"""Design spaces: one TOML file per study, validated with pydantic.

```toml
model = "cxl-expander"
description = "What an architect sweeps, and why."

[knobs]                                   # parameters that vary
lanes = [4, 8, 16]                        # a list of values (labels or numbers)
ctrl_latency_ns = { range = [40, 250], steps = 8 }      # linear, inclusive
capacity_gib = { log_range = [64, 4096], steps = 7, integer = true }
read_frac = { range = [0.5, 1.0], step = 0.1 }

[fixed]                                   # overrides of model defaults
media = "ddr5_5600"

[objectives]                              # metric = "min" | "max"
loaded_read_latency_ns = "min"
usd_per_gib = "min"

[constraints]                             # name = expression over metrics/parameters
latency_slo = "loaded_read_latency_ns <= 600"

[sweep]                                   # defaults for `dse sweep`
strategy = "grid"
trials = 2000
seed = 0
```

Any error names the file, the key, what was wrong and what is allowed.
"""

from __future__ import annotations

import hashlib
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from dse.errors import DseError, allowed_list, did_you_mean
from dse.expr import Expr, ExprError
from dse.model import Model

STRATEGIES = ("grid", "sobol", "random", "optuna")
SAMPLERS = ("nsga2", "tpe", "gp")
MAX_GRID_POINTS = 2_000_000_000
#: Values one knob's grid may hold: a finer grid of one parameter says nothing a model's
#: smooth response does not, and `steps = 1e12` would allocate terabytes.
MAX_KNOB_VALUES = 1_000_000


class _Range(BaseModel):
    model_config = ConfigDict(extra="forbid")
    range: tuple[float, float] | None = None
    log_range: tuple[float, float] | None = None
    steps: int | None = Field(default=None, ge=1)
    step: float | None = Field(default=None, gt=0)
    integer: bool = False

    @model_validator(mode="after")
    def _one_kind(self) -> "_Range":
        if (self.range is None) == (self.log_range is None):
            raise ValueError("give exactly one of 'range' or 'log_range'")
        lo, hi = self.range or self.log_range  # type: ignore[misc]
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError("range bounds must be finite numbers")
        if not lo <= hi:
            raise ValueError(f"range low {lo:g} is above high {hi:g}")
        if self.log_range is not None:
            if lo <= 0:
                raise ValueError("log_range needs positive bounds")
            if self.step is not None:
                raise ValueError("log_range takes 'steps', not 'step'")
        if self.steps is not None and self.step is not None:
            raise ValueError("give 'steps' or 'step', not both")
        count = self.steps if self.step is None else (hi - lo) / self.step + 1
        if count is not None and count > MAX_KNOB_VALUES:
            raise ValueError(f"{count:.3g} values, above the {MAX_KNOB_VALUES:,} allowed per knob")
        return self


class SweepDefaults(BaseModel):
    model_config = ConfigDict(extra="forbid")
    strategy: Literal["grid", "sobol", "random", "optuna"] = "grid"
    trials: int = Field(default=1000, ge=1)
    seed: int = Field(default=0, ge=0, le=2**32 - 1)
    sampler: Literal["nsga2", "tpe", "gp"] = "nsga2"
    batch: int = Field(default=64, ge=1)
    #: Draws of the uncertain parameter defaults per point (a robust front); none by default.
    uncertainty: int | None = Field(default=None, ge=2, le=4096)


class _SpaceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str
    description: str = ""
    knobs: dict[str, Any] = Field(min_length=1)
    fixed: dict[str, Any] = Field(default_factory=dict)
    objectives: dict[str, Literal["min", "max"]] = Field(min_length=1)
    constraints: dict[str, str] = Field(default_factory=dict)
    sweep: SweepDefaults = Field(default_factory=SweepDefaults)
    #: The article's own proposed configuration: ``source`` plus parameter = value.
    paper_design: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class PaperDesign:
    """The article's proposed design point of a space (engine values: codes for labels)."""

    source: str
    values: dict[str, Any]
    #: Knobs that describe the job (or prices), held equal when the design is compared
    #: with the swept ones, besides the model family's workload knobs.
    hold: tuple[str, ...] = ()


@dataclass(frozen=True)
class Knob:
    """One varying parameter.  ``values`` is the grid (engine representation: codes
    for categoricals); ``lo``/``hi``/``log`` describe the continuous range if any."""

    name: str
    values: np.ndarray
    labels: tuple[Any, ...]
    categorical: bool
    lo: float | None = None
    hi: float | None = None
    log: bool = False
    integer: bool = False
    continuous: bool = False

    @property
    def size(self) -> int:
        return len(self.values)

    def from_unit(self, u: np.ndarray) -> np.ndarray:
        """Map uniform samples in [0, 1) to knob values (continuous or discrete)."""
        if self.continuous and self.lo is not None and self.hi is not None:
            if self.log:
                v = np.exp(np.log(self.lo) + u * (np.log(self.hi) - np.log(self.lo)))
            else:
                v = self.lo + u * (self.hi - self.lo)
            return np.round(v) if self.integer else v
        idx = np.minimum((u * self.size).astype(np.int64), self.size - 1)
        return self.values[idx]


@dataclass
class Space:
    path: Path
    model: Model
    description: str
    knobs: list[Knob]
    fixed: dict[str, Any]
    objectives: dict[str, str]
    constraints: dict[str, Expr]
    defaults: SweepDefaults
    raw: dict[str, Any] = field(repr=False, default_factory=dict)
    sha256: str = ""
    paper_design: PaperDesign | None = None
    #: A name other than the file's stem (one architecture of a comparison file).
    label: str = ""

    @property
    def name(self) -> str:
        return self.label or self.path.stem

    @property
    def grid_size(self) -> int:
        return math.prod(k.size for k in self.knobs)

    @property
    def constraint_names(self) -> set[str]:
        return set().union(*(e.names for e in self.constraints.values())) if self.constraints else set()

    @property
    def knob_names(self) -> list[str]:
        return [k.name for k in self.knobs]

    def fixed_inputs(self) -> dict[str, Any]:
        return dict(self.fixed)

    def decode(self, name: str, column: np.ndarray) -> np.ndarray:
        """Engine column -> user-facing values (labels for categoricals)."""
        p = self.model.param_map().get(name)
        if p is not None and p.categorical:
            return np.asarray(p.choices, dtype=object)[np.asarray(column, dtype=np.int64)]
        return column


def _fail(path: Path, key: str, why: str) -> DseError:
    return DseError(f"{path}: {key}: {why}")


def _loc(err: dict[str, Any]) -> str:
    parts = [str(p) for p in err.get("loc", ()) if not str(p).startswith(("list[", "function-", "_Range"))]
    # pydantic reports union branches; keep the user's key path
    cleaned: list[str] = []
    for p in parts:
        if p in ("list[any]", "float", "int", "str", "bool", "constrained-str"):
            continue
        cleaned.append(p)
    return ".".join(cleaned) or "(top level)"


_ALLOWED_TOP = "model, description, [knobs], [fixed], [objectives], [constraints], [sweep], [paper_design]"


def load_space(path: str | Path) -> Space:
    """Read and validate a space file; raises DseError with one precise line."""
    path = Path(path)
    if path.is_dir():
        raise DseError(f"{path}: is a folder; give a space file, e.g. spaces/cxl_expander.toml")
    if not path.exists():
        spaces_dir = Path("spaces")
        hint = ""
        if spaces_dir.is_dir():
            hint = did_you_mean(path.name, [p.name for p in spaces_dir.glob("*.toml")])
        raise DseError(f"{path}: no such space file{hint}")
    try:
        text = path.read_bytes()
        raw = tomllib.loads(text.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise DseError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise DseError(f"{path}: not a UTF-8 text file") from None
    except OSError as exc:
        raise DseError(f"{path}: cannot be read: {exc.strerror or exc}") from None

    if "compare" in raw:
        raise DseError(f"{path}: a comparison of several models ([compare]); `dse sweep` runs it, "
                       "commands that take one model's space need one of its architectures' spaces")
    return build_space(path, raw, hashlib.sha256(text).hexdigest())


def build_space(path: Path, raw: dict[str, Any], sha256: str) -> Space:
    """A space from its parsed TOML ``raw`` (errors name ``path``)."""
    spec = _validated(path, raw)
    from dse import registry

    try:
        model = registry.get(spec.model)
    except DseError as exc:
        raise DseError(f"{path}: model: {exc}") from None
    knobs = [_knob_of(path, model, name, spec_k) for name, spec_k in spec.knobs.items()]
    fixed = _fixed_of(path, model, spec)
    _check_objectives(path, model, spec.objectives)
    return Space(
        path=path,
        model=model,
        description=spec.description,
        knobs=knobs,
        fixed=fixed,
        objectives=dict(spec.objectives),
        constraints=_constraints_of(path, model, spec.constraints),
        defaults=spec.sweep,
        raw=raw,
        sha256=sha256,
        paper_design=_paper_design(path, model, spec.paper_design),
    )


def _validated(path: Path, raw: dict[str, Any]) -> "_SpaceFile":
    """The file's shape (pydantic); the first problem as one line naming the key."""
    try:
        return _SpaceFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = _loc(err)
        msg = err.get("msg", "invalid value")
        if err.get("type") == "extra_forbidden":
            top = err["loc"][0] if err.get("loc") else key
            if len(err["loc"]) == 1:
                msg = f"unknown key; allowed: {_ALLOWED_TOP}"
            elif top == "sweep":
                msg = "unknown key; allowed: strategy, trials, seed, sampler, batch, uncertainty"
            elif top == "knobs":
                msg = "unknown knob option; allowed: range, log_range, steps, step, integer"
            key = ".".join(str(p) for p in err["loc"] if not str(p).startswith(("list[", "_Range")))
        elif err.get("type") == "missing":
            msg = "missing; every space needs model, [knobs] and [objectives]"
        raise DseError(f"{path}: {key}: {msg}") from None


def _knob_of(path: Path, model: Model, name: str, spec_k: Any) -> Knob:
    """One ``[knobs]`` entry: a list of values or a range table, checked against the model."""
    key = f"knobs.{name}"
    pmap = model.param_map()
    if name not in pmap:
        raise _fail(path, key, f"model {model.name} has no parameter {name!r}{did_you_mean(name, pmap)}")
    if isinstance(spec_k, dict):
        try:
            spec_k = _Range.model_validate(spec_k)
        except ValidationError as exc:
            err = exc.errors()[0]
            sub = ".".join(str(x) for x in err.get("loc", ()))
            msg = err.get("msg", "invalid")
            if err.get("type") == "extra_forbidden":
                msg = "unknown option; allowed: range, log_range, steps, step, integer"
            raise _fail(path, f"{key}{'.' + sub if sub else ''}", msg) from None
    elif not isinstance(spec_k, (list, int, float, str, bool)):
        raise _fail(path, key, "give a list of values or a table {range|log_range, steps|step}")
    return _build_knob(path, key, model, name, spec_k)


def _fixed_of(path: Path, model: Model, spec: "_SpaceFile") -> dict[str, Any]:
    """``[fixed]``: parameters of the model, not also knobs, each value checked."""
    pmap = model.param_map()
    fixed: dict[str, Any] = {}
    for name, value in spec.fixed.items():
        key = f"fixed.{name}"
        if name not in pmap:
            raise _fail(path, key, f"model {model.name} has no parameter {name!r}{did_you_mean(name, pmap)}")
        if name in spec.knobs:
            raise _fail(path, key, "is also a knob; a parameter is either fixed or varied")
        try:
            fixed[name] = model.coerce(name, value)
        except DseError as exc:
            raise _fail(path, key, str(exc)) from None
    return fixed


def _check_objectives(path: Path, model: Model, objectives: dict[str, str]) -> None:
    mmap = model.metric_map()
    for name in objectives:
        if name not in mmap:
            raise _fail(path, f"objectives.{name}", f"not a metric of {model.name}{did_you_mean(name, mmap)}; metrics: {allowed_list(mmap)}")
        if mmap[name].categorical:
            raise _fail(path, f"objectives.{name}", f"is a categorical metric (one of {allowed_list(mmap[name].labels or ())}), not a number to minimize or maximize")


def _constraints_of(path: Path, model: Model, constraints: dict[str, str]) -> dict[str, Expr]:
    """``[constraints]``: expressions over the model's metrics and parameters."""
    names = list(model.metric_map()) + list(model.param_map())
    out: dict[str, Expr] = {}
    for cname, ctext in constraints.items():
        try:
            e = Expr(ctext, what="constraint")
            e.require_names(names, kind="metric or parameter")
        except ExprError as exc:
            raise _fail(path, f"constraints.{cname}", str(exc)) from None
        out[cname] = e
    return out


def _paper_design(path: Path, model: Model, raw: dict[str, Any]) -> PaperDesign | None:
    """``[paper_design]``: a ``source`` line and parameter values, each checked."""
    if not raw:
        return None
    values = dict(raw)
    source = values.pop("source", None)
    hold = values.pop("hold", [])
    if not isinstance(source, str) or not source.strip():
        raise _fail(path, "paper_design.source", "missing; say where in the article the design comes from")
    pmap = model.param_map()
    if not isinstance(hold, list) or not all(isinstance(h, str) for h in hold):
        raise _fail(path, "paper_design.hold", "give a list of parameter names held equal in the comparison")
    for h in hold:
        if h not in pmap:
            raise _fail(path, "paper_design.hold", f"model {model.name} has no parameter {h!r}{did_you_mean(h, pmap)}")
    coded: dict[str, Any] = {}
    for name, value in values.items():
        key = f"paper_design.{name}"
        if name not in pmap:
            raise _fail(path, key, f"model {model.name} has no parameter {name!r}{did_you_mean(name, pmap)}")
        try:
            coded[name] = model.coerce(name, value)
        except DseError as exc:
            raise _fail(path, key, str(exc)) from None
    return PaperDesign(source.strip(), coded, tuple(hold))


def _build_knob(path: Path, key: str, model: Model, name: str, spec: Any) -> Knob:
    p = model.param_map()[name]
    if isinstance(spec, _Range):
        if p.categorical or p.choices is not None:
            raise _fail(path, key, f"is a choice parameter; give a list, allowed: {p.describe_allowed()}")
        lo, hi = spec.range or spec.log_range  # type: ignore[misc]
        log = spec.log_range is not None
        if spec.steps is not None:
            grid = np.geomspace(lo, hi, spec.steps) if log else np.linspace(lo, hi, spec.steps)
        elif spec.step is not None:
            grid = np.arange(lo, hi + spec.step * 0.5, spec.step)
        else:
            grid = np.asarray([lo, hi], dtype=np.float64)
        integer = spec.integer or p.integer
        if integer:
            # integers inside the range only: rounding 0.1..0.4 must not give 0
            lo, hi = math.ceil(lo), math.floor(hi)
            if lo > hi:
                raise _fail(path, key, f"holds no integer, and the parameter takes integers ({p.name})")
            grid = np.unique(np.clip(np.round(grid), lo, hi))
        try:
            values = np.asarray(model.coerce(name, grid), dtype=np.float64)
            model.coerce(name, np.asarray([lo, hi], dtype=np.float64))
        except DseError as exc:
            raise _fail(path, key, str(exc)) from None
        return Knob(
            name=name,
            values=values,
            labels=tuple(values.tolist()),
            categorical=False,
            lo=float(lo),
            hi=float(hi),
            log=log,
            integer=integer,
            continuous=True,
        )
    items = spec if isinstance(spec, list) else [spec]
    if not items:
        raise _fail(path, key, "empty list; give at least one value")
    try:
        coded = model.coerce(name, items)
    except DseError as exc:
        raise _fail(path, key, str(exc)) from None
    coded = np.atleast_1d(coded)
    if len(set(map(str, items))) != len(items):
        raise _fail(path, key, "repeated value in the list")
    return Knob(
        name=name,
        values=coded,
        labels=tuple(items),
        categorical=p.categorical,
        integer=p.integer,
    )
