"""The model interface: parameters, metrics, and one vectorized evaluate path.

A model is a class with declarative ``params`` and ``metrics`` and an ``evaluate``
method that maps a :class:`Batch` of design points (any parameter a scalar or a
column) to metric columns.  One design point and a million go through the same code:
``Model.run`` checks and fills the inputs, encodes categorical choices as integer
codes, calls ``evaluate`` and broadcasts every metric to the batch length.

A point the model cannot evaluate (a working set larger than the memory, a flit mode
the link generation lacks) is *infeasible*, never a silent NaN: ``evaluate`` returns,
besides its metrics, ``"infeasible": {reason: mask}`` (see :data:`INFEASIBLE`), and
``Model.run_full`` gives every point a ``feasible`` flag and its first reason.  A NaN or
inf that the model did not declare is caught by a safety net with a generic reason.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from dse import families, units
from dse.errors import DseError, allowed_list, did_you_mean

Direction = Literal["min", "max"]


@dataclass(frozen=True)
class Param:
    """A model input.

    ``name`` ends in its unit (``_ns``, ``_gbps``, ...) unless it is a categorical or a
    dimensionless count.  ``source`` says where the default comes from: a paper
    section, a datasheet, a reference run, or ``assumption: <why>``.
    """

    name: str
    default: Any
    source: str
    bounds: tuple[float, float] | None = None
    choices: tuple[Any, ...] | None = None
    doc: str = ""
    integer: bool = False
    #: The default's own uncertainty (a ``dse.uncertainty.Uncertainty``); None = the
    #: one its ``source`` kind implies (see ``dse.uncertainty.from_source``).
    uncertainty: Any = None

    def __post_init__(self) -> None:
        if not self.source or not self.source.strip():
            raise ValueError(f"parameter {self.name!r} has no source for its default")
        if self.uncertainty is not None and not self.uncertainty.contains(self.default):
            raise ValueError(f"parameter {self.name!r}: default {self.default} outside its uncertainty")
        if self.choices is not None:
            object.__setattr__(self, "choices", tuple(self.choices))
            if self.default not in self.choices:
                raise ValueError(f"parameter {self.name!r}: default {self.default!r} not in choices")
        elif self.bounds is not None:
            lo, hi = self.bounds
            if not (lo <= self.default <= hi):
                raise ValueError(f"parameter {self.name!r}: default {self.default} outside {self.bounds}")

    @property
    def unit(self) -> str | None:
        return units.unit_of(self.name)

    @property
    def categorical(self) -> bool:
        """True when values are labels (strings or booleans) carried as integer codes."""
        return self.choices is not None and any(isinstance(c, (str, bool)) for c in self.choices)

    @property
    def whole(self) -> bool:
        """True when every value is a whole number (``integer=True``, or numeric choices that
        are all ints): results store it as int64, not 8.0."""
        if self.integer:
            return True
        return self.choices is not None and all(
            isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_)) for c in self.choices)

    def describe_allowed(self) -> str:
        if self.choices is not None:
            return "one of " + allowed_list(self.choices)
        if self.bounds is not None:
            return f"{self.bounds[0]:g} to {self.bounds[1]:g}" + (f" {self.unit}" if self.unit else "")
        return "any number"

    def code_of(self, value: Any) -> int:
        assert self.choices is not None
        try:
            return self.choices.index(value)
        except ValueError:
            raise DseError(
                f"parameter {self.name}={value!r} is not allowed; allowed: {self.describe_allowed()}"
            ) from None


@dataclass(frozen=True)
class Metric:
    """A model output; its unit is the suffix of its name."""

    name: str
    direction: Direction | None = None
    doc: str = ""
    #: What NaN means at a feasible point (the metric does not apply there), e.g. "designs
    #: without an SSD endpoint"; empty: NaN marks an infeasible point.
    nan_means: str = ""
    #: What +-inf means at a feasible point, e.g. "NCS never pays"; empty: inf marks an
    #: infeasible point.
    inf_means: str = ""
    #: A categorical metric: the model returns integer codes into these labels (NaN: none),
    #: results store it as a dictionary column of the labels and queries compare labels
    #: (``bottleneck_code == "flash"``).  It has no direction: never an objective.
    labels: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.labels is not None:
            object.__setattr__(self, "labels", tuple(self.labels))
            if not self.labels or len(set(self.labels)) != len(self.labels) or not all(isinstance(x, str) for x in self.labels):
                raise ValueError(f"metric {self.name!r}: labels must be distinct strings")
            if self.direction is not None:
                raise ValueError(f"metric {self.name!r} is categorical (labels): it has no direction")

    @property
    def unit(self) -> str | None:
        return units.unit_of(self.name)

    @property
    def categorical(self) -> bool:
        """True when the metric's values are codes into ``labels``."""
        return self.labels is not None

    def label(self, codes: Any) -> np.ndarray:
        """The labels of integer codes (None where a code is NaN), for reporting."""
        if self.labels is None:
            raise TypeError(f"metric {self.name} has no labels")
        v = np.atleast_1d(np.asarray(codes, dtype=np.float64))
        nan = np.isnan(v)
        idx = np.where(nan, 0, v).astype(np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= len(self.labels)):
            raise ValueError(f"metric {self.name}: code outside its {len(self.labels)} labels")
        out = np.asarray(self.labels, dtype=object)[idx]
        out[nan] = None
        return out


#: Key of ``evaluate``'s result declaring infeasible points: {short reason: bool mask
#: (scalar or column)}.  The first reason that applies to a point wins (dict order).
INFEASIBLE = "infeasible"
#: Engine methods a model must not override (one did, and lost its common metrics).
_ENGINE_HOOKS = ("_evaluate", "_columns", "_batches", "_reasons_of", "_metrics_of", "run", "run_full")
#: Reason of a family model's point that does no work.
NO_WORK = "does no work (work_per_s <= 0)"
#: Suffix of the safety net's reasons (a NaN or inf the model did not declare).
UNDECLARED = "(undeclared model limit)"


@dataclass(frozen=True)
class Evaluation:
    """``Model.run_full``'s result: the metric columns, a per-point ``feasible`` flag and
    ``reason``, an int32 code into ``reasons`` (-1 where feasible)."""

    metrics: dict[str, np.ndarray]
    feasible: np.ndarray
    reason: np.ndarray
    reasons: tuple[str, ...]

    def reason_of(self, i: int) -> str | None:
        code = int(self.reason[i])
        return None if code < 0 else self.reasons[code]

    @classmethod
    def concat(cls, parts: Sequence[Evaluation]) -> Evaluation:
        """The evaluations of consecutive slices of one batch as one (reason codes merged)."""
        if len(parts) == 1:
            return parts[0]
        reasons: list[str] = []
        codes = []
        for e in parts:
            remap = np.array([_index_of(reasons, r) for r in e.reasons] + [-1], dtype=np.int32)
            codes.append(remap[e.reason])  # -1 indexes the trailing -1: feasible stays feasible
        return cls({k: np.concatenate([np.broadcast_to(e.metrics[k], e.feasible.shape) for e in parts]) for k in parts[0].metrics},
                   np.concatenate([e.feasible for e in parts]), np.concatenate(codes), tuple(reasons))


class Batch:
    """Design points as columns.  Attribute access gives the column (or scalar).

    Categorical parameters arrive as integer codes into ``Param.choices``; use
    :meth:`pick` to turn them into values and :meth:`is_` to test a label.
    """

    __slots__ = ("_cols", "_params", "n")

    def __init__(self, cols: dict[str, Any], params: Mapping[str, Param], n: int) -> None:
        self._cols = cols
        self._params = params
        self.n = n

    def __getattr__(self, name: str) -> Any:
        try:
            return self._cols[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> Any:
        return self._cols[name]

    def __contains__(self, name: str) -> bool:
        return name in self._cols

    def is_(self, name: str, label: Any) -> np.ndarray | bool:
        """Boolean mask: this categorical parameter equals ``label``."""
        return self._cols[name] == self.code(name, label)

    def code(self, name: str, label: Any) -> int:
        """The integer code of ``label`` of categorical parameter ``name``, for helpers
        that take code arrays (``mode == p.code("tenancy", "spatial")``, never ``== 1``);
        a label the parameter does not offer is a :class:`DseError`."""
        p = self._params.get(name)
        if p is None or p.choices is None:
            raise DseError(f"{name!r} is not a parameter with choices")
        return p.code_of(label)

    def pick(self, name: str, table: Mapping[Any, Any]) -> np.ndarray:
        """Per-point value of a categorical parameter, looked up in ``table``.

        ``table`` must have an entry for every choice of the parameter.
        """
        p = self._params[name]
        assert p.choices is not None
        missing = [c for c in p.choices if c not in table]
        if missing:
            raise KeyError(f"table for {name} lacks {missing}")
        lut = np.asarray([table[c] for c in p.choices])
        return lut[self._cols[name]]

    def groups(self, *names: str) -> list[tuple[Any, Any]]:
        """(label or tuple of labels, index) for each combination of the given categorical
        parameters present in the batch; ``index`` is ``slice(None)`` when all are scalars.
        For blocks that are much cheaper with per-choice scalar constants (a loop over
        choices, never over points)."""
        params = [self._params[n] for n in names]
        codes = [self._cols[n] for n in names]
        single = len(names) == 1
        if all(np.ndim(c) == 0 for c in codes):
            labels = tuple(p.choices[int(c)] for p, c in zip(params, codes))  # type: ignore[index]
            return [(labels[0] if single else labels, slice(None))]
        cols = [np.broadcast_to(c, (self.n,)) for c in codes]
        key = cols[0].astype(np.int64)
        for p, c in zip(params[1:], cols[1:]):
            key = key * len(p.choices or ()) + c
        sizes = [len(p.choices or ()) for p in params]
        present = np.flatnonzero(np.bincount(key, minlength=int(np.prod(sizes))))
        out = []
        for k in present:
            rest, labels = int(k), []
            for p, size in zip(reversed(params), reversed(sizes)):
                labels.append(p.choices[rest % size])  # type: ignore[index]
                rest //= size
            labels.reverse()
            idx = np.flatnonzero(key == k) if len(present) > 1 else slice(None)
            out.append((labels[0] if single else tuple(labels), idx))
        return out

    def label(self, name: str) -> np.ndarray:
        """The labels (not codes) of a categorical column, for reporting."""
        p = self._params[name]
        return np.asarray(p.choices, dtype=object)[np.asarray(self._cols[name])]


class Model:
    """Base class of every architecture model.  Subclasses set the class attributes
    and implement :meth:`evaluate`; register them in ``models/__init__.py``."""

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    summary: ClassVar[str] = ""
    source: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    metrics: ClassVar[tuple[Metric, ...]] = ()
    variant_param: ClassVar[str | None] = None
    #: Points per ``evaluate`` call: long batches are cut into slices of this size so numpy
    #: temporaries stay in the CPU caches while the per-call Python overhead (groups by
    #: variant) is amortized; results are identical.  Measured by ``dse bench`` on the
    #: shipped models: 32768 beats 8192 by 10-60% and whole 1e5-point batches on most.
    #: 0 disables slicing.
    eval_chunk: ClassVar[int] = 32768
    #: The workload family the model serves (``dse.families``); a family model returns
    #: ``work_per_s``, ``capex_usd``, ``power_w`` and the family's latency metric, and the
    #: engine adds the common parameters and ``tco_usd`` / ``usd_per_work``.
    family: ClassVar[str | None] = None
    #: Family workload knob -> this model's parameter, for knobs the model names
    #: differently (a knob the model has under its own name maps itself).
    workload_map: ClassVar[Mapping[str, str]] = {}
    #: What ``capex_usd`` and ``power_w`` cover (the system boundary), in one sentence.
    boundary: ClassVar[str] = ""
    #: Parameter values a comparison applies unless an architecture sets them itself: those
    #: under which the family's workload knobs drive the model (``{"size_from": "value_b"}``
    #: where the article's own size wins by default), and production settings in place of
    #: an article's prototype ones (a 3 GHz host instead of a 100 MHz FPGA softcore).
    family_fixed: ClassVar[Mapping[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        engine = [n for n in _ENGINE_HOOKS if n in cls.__dict__]
        if engine:
            raise TypeError(f"model {cls.__name__} defines {engine[0]}, an engine method; name its own helper otherwise")
        if cls.__dict__.get("family") is not None:
            _join_family(cls)

    # ----------------------------------------------------------------- to implement
    def evaluate(self, p: Batch) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    # ----------------------------------------------------------------- engine side
    @classmethod
    def param_map(cls) -> dict[str, Param]:
        cached = cls.__dict__.get("_param_map")
        if cached is None:
            cached = {p.name: p for p in cls.params}
            if len(cached) != len(cls.params):
                raise ValueError(f"model {cls.name}: duplicate parameter names")
            cls._param_map = cached  # type: ignore[attr-defined]
        return cached

    @classmethod
    def default_columns(cls) -> dict[str, Any]:
        """Each parameter's default in the engine representation (code or float), built once."""
        cached = cls.__dict__.get("_default_columns")
        if cached is None:
            cached = {p.name: np.int64(p.code_of(p.default)) if p.categorical else float(p.default) for p in cls.params}
            cls._default_columns = cached  # type: ignore[attr-defined]
        return cached

    @classmethod
    def metric_map(cls) -> dict[str, Metric]:
        return {m.name: m for m in cls.metrics}

    @classmethod
    def variants(cls) -> tuple[Any, ...]:
        if cls.variant_param is None:
            return ()
        return cls.param_map()[cls.variant_param].choices or ()

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {p.name: p.default for p in cls.params}

    def resolve_name(self, key: str, value: Any) -> tuple[str, Any]:
        """Map a user key to a parameter name, converting units where the user named
        the same quantity in another unit (``ctrl_latency_us`` for ``ctrl_latency_ns``)."""
        pmap = self.param_map()
        if key in pmap:
            return key, value
        stem, unit = units.stem_of(key), units.unit_of(key)
        if unit is not None:
            for p in self.params:
                if p.unit is not None and units.stem_of(p.name) == stem:
                    if units.dimension(unit) != units.dimension(p.unit):
                        raise DseError(
                            f"parameter {p.name} of model {self.name} takes {p.unit}, "
                            f"not {unit} ({units.dimension(unit)}); give {p.name}=<value>"
                        )
                    try:
                        return p.name, _convert_value(value, unit, p.unit)
                    except (TypeError, ValueError) as exc:
                        raise DseError(f"parameter {key}: {exc}") from None
        raise DseError(
            f"model {self.name} has no parameter {key!r}{did_you_mean(key, pmap)}; "
            f"see `dse describe {self.name}`"
        )

    def coerce(self, name: str, value: Any) -> Any:
        """Check one value (scalar or array) against its parameter; return it in the
        engine representation (codes for categoricals, float/int arrays otherwise)."""
        p = self.param_map()[name]
        if type(value) in _PLAIN_NUMBERS and not p.categorical:
            return _checked_number(p, float(value))
        if p.categorical:
            if isinstance(value, np.ndarray) and value.dtype.kind in "iu" and value.dtype != np.bool_:
                codes = value
                if codes.size and (codes.min() < 0 or codes.max() >= len(p.choices or ())):
                    raise DseError(f"parameter {name}: code out of range")
                return codes
            if isinstance(value, (list, tuple, np.ndarray)):
                return np.asarray([p.code_of(_parse_choice(p, v)) for v in value], dtype=np.int64)
            return np.int64(p.code_of(_parse_choice(p, value)))
        if _has_bool(value):
            raise DseError(f"parameter {name} takes a number ({p.describe_allowed()}), not true/false")
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise DseError(
                f"parameter {name} must be numeric ({p.describe_allowed()}); got {value!r}"
            ) from None
        if arr.size == 0:
            raise DseError(f"parameter {name}: empty value")
        if np.isnan(arr).any():
            raise DseError(f"parameter {name}: NaN is not allowed")
        if p.choices is not None:
            ok = np.isin(arr, np.asarray(p.choices, dtype=np.float64))
            if not ok.all():
                bad = arr[~ok].flat[0]
                raise DseError(f"parameter {name}={bad:g} is not allowed; allowed: {p.describe_allowed()}")
        elif p.bounds is not None:
            lo, hi = p.bounds
            bad_mask = (arr < lo) | (arr > hi)
            if bad_mask.any():
                bad = arr[bad_mask].flat[0]
                raise DseError(
                    f"parameter {name}={bad:g} is out of bounds; allowed: {p.describe_allowed()}"
                )
        if p.integer and not np.all(arr == np.round(arr)):
            raise DseError(f"parameter {name} must be an integer")
        return arr if arr.ndim else float(arr)

    def run(self, inputs: Mapping[str, Any] | None = None, *, checked: bool = False,
            calibration: Any = None) -> dict[str, np.ndarray]:
        """Evaluate the model on ``inputs`` (parameter -> scalar or column); every
        parameter not given takes its default.  Returns metric -> column, all of the
        batch length.  ``checked=True`` skips validation (the caller already coerced).
        ``calibration`` (a ``models.blocks.calibration.Calibration``, or 'shipped', 'none',
        a folder) evaluates under that block calibration instead of the one in force.
        Infeasible points keep whatever the model gives (often NaN); ``run_full`` says
        which they are and why."""
        if calibration is not None:
            from models.blocks.calibration import using

            with using(calibration):
                return self.run(inputs, checked=checked)
        cols, n = self._columns(inputs, checked)
        pieces = [self._metrics_of(self._evaluate(b), b.n) for b in self._batches(cols, n)]
        if len(pieces) == 1:
            return pieces[0]
        return {k: np.concatenate([piece[k] for piece in pieces]) for k in pieces[0]}

    def run_full(self, inputs: Mapping[str, Any] | None = None, *, checked: bool = False,
                 calibration: Any = None) -> Evaluation:
        """``run`` plus each point's feasibility: the model's declared limits (first
        that applies wins), then the safety net for undeclared NaN / inf metrics."""
        if calibration is not None:
            from models.blocks.calibration import using

            with using(calibration):
                return self.run_full(inputs, checked=checked)
        cols, n = self._columns(inputs, checked)
        codes: dict[str, int] = {}
        pieces, reasons = [], []
        for b in self._batches(cols, n):
            out = self._evaluate(b)
            metrics = self._metrics_of(out, b.n)
            pieces.append(metrics)
            reasons.append(self._reasons_of(out.get(INFEASIBLE) or {}, metrics, b.n, codes))
        if len(pieces) == 1:
            metrics, reason = pieces[0], reasons[0]
        else:
            metrics = {k: np.concatenate([piece[k] for piece in pieces]) for k in pieces[0]}
            reason = np.concatenate(reasons)
        return Evaluation(metrics, reason < 0, reason, tuple(codes))

    def _evaluate(self, b: Batch) -> dict[str, Any]:
        """``evaluate`` plus, for a family model, the common cost columns and the
        infeasibility of a point that does no work."""
        out = self.evaluate(b)
        if self.family is None:
            return out
        out = dict(out)
        out.update(families.tco_columns(out, b, families.family(self.family)))
        declared = dict(out.get(INFEASIBLE) or {})
        declared.setdefault(NO_WORK, families.no_work_mask(out))
        out[INFEASIBLE] = declared
        return out

    @classmethod
    def workload_param(cls, knob: str) -> str | None:
        """This model's parameter for a family workload knob (None: it cannot map it)."""
        name = cls.workload_map.get(knob, knob)
        return name if name in cls.param_map() else None

    def _columns(self, inputs: Mapping[str, Any] | None, checked: bool) -> tuple[dict[str, Any], int]:
        """Checked (unless ``checked``) engine columns with defaults filled, and n."""
        cols: dict[str, Any] = {}
        n = 1
        pmap = self.param_map()
        for key, value in dict(inputs or {}).items():
            if checked:
                cols[key] = value
                continue
            p = pmap.get(key)
            if p is not None and type(value) in _PLAIN_NUMBERS and not p.categorical:
                name, value = key, _checked_number(p, float(value))  # coerce's plain-number path, inlined
            else:
                name, value = self.resolve_name(key, value)
                value = self.coerce(name, value)
            if name in cols:
                raise DseError(f"parameter {name} is given twice (as {key} and before); give it once")
            cols[name] = value
        for name, default in self.default_columns().items():
            if name not in cols:
                cols[name] = default
        for v in cols.values():
            if isinstance(v, np.ndarray) and v.ndim:
                if n != 1 and v.shape[0] != n and v.shape[0] != 1:
                    raise DseError(f"columns of different lengths ({n} and {v.shape[0]})")
                n = max(n, v.shape[0])
        return cols, n

    def _batches(self, cols: dict[str, Any], n: int) -> Iterator[Batch]:
        """The batch, cut into ``eval_chunk`` slices."""
        pmap = self.param_map()
        chunk = self.eval_chunk
        if not chunk or n <= chunk:
            yield Batch(cols, pmap, n)
            return
        for s in range(0, n, chunk):
            m = min(chunk, n - s)
            sub = {k: (v[s : s + m] if isinstance(v, np.ndarray) and v.ndim and v.shape[0] == n else v) for k, v in cols.items()}
            yield Batch(sub, pmap, m)

    def _reasons_of(
        self, declared: Mapping[str, Any], metrics: dict[str, np.ndarray], n: int, codes: dict[str, int]
    ) -> np.ndarray:
        """int32 reason code per point (-1: feasible); ``codes`` maps reason -> code
        across the slices of one run."""
        reason = np.full(n, -1, dtype=np.int32)
        for text, mask in declared.items():
            mask = np.asarray(mask)
            if mask.dtype != np.bool_:  # e.g. ~True == -2: a Python bool negated
                raise TypeError(f"model {self.name}: infeasible mask {text!r} is {mask.dtype}, not bool")
            if not mask.any():
                continue
            hit = np.broadcast_to(mask, (n,)) & (reason < 0)  # an earlier reason wins
            reason[hit] = codes.setdefault(text, len(codes))
        # safety net: one sum flags any NaN / inf of the plain metrics (an overflow to inf
        # is re-checked below, exactly); a metric whose NaN or inf means something, apart
        plain = [m for m in self.metrics if not (m.nan_means or m.inf_means)]
        acc = np.zeros(n)
        for m in plain:
            acc += metrics[m.name]
        flag = ~np.isfinite(acc)
        for m in self.metrics:
            if m not in plain:
                nan, inf = _undeclared(m, metrics[m.name])
                flag |= nan | inf
        bad = np.flatnonzero(flag & (reason < 0))
        for m in self.metrics:
            if not bad.size:
                break
            nan, inf = _undeclared(m, metrics[m.name][bad])
            for hit, what in ((nan, "is not a number"), (inf, "is infinite")):
                if hit.any():
                    reason[bad[hit]] = codes.setdefault(f"{m.name} {what} {UNDECLARED}", len(codes))
            bad = bad[~(nan | inf)]
        return reason

    def _metrics_of(self, out: dict[str, Any], n: int) -> dict[str, np.ndarray]:
        result: dict[str, np.ndarray] = {}
        for m in self.metrics:
            if m.name not in out:
                raise RuntimeError(f"model {self.name} did not return metric {m.name}")
            col = np.asarray(out[m.name], dtype=np.float64)
            if col.shape == (n,) or (n == 1 and col.ndim == 0):
                # a read-only view, as broadcast_to gives, without its overhead (a scalar
                # metric of a single point: the common case of a sequential sampler)
                col = col.reshape(n)
                col.flags.writeable = False
                result[m.name] = col
            else:
                result[m.name] = np.broadcast_to(col, (n,))
        return result

    def point(self, **overrides: Any) -> dict[str, float]:
        """Evaluate one design point; metric -> float."""
        return {k: float(v[0]) for k, v in self.run(overrides).items()}


def knob_params(family_name: str, *names: str) -> tuple[Param, ...]:
    """Parameters for a family's workload knobs (all of them when no names are given):
    the same name, default, bounds and source in every model that serves the family."""
    fam = families.family(family_name)
    knobs = fam.knobs if not names else tuple(fam.knob(n) for n in names)
    return tuple(Param(k.name, k.default, f"{fam.name} workload: {k.source}", bounds=k.bounds, doc=k.doc, integer=k.integer) for k in knobs)


def _common_params() -> tuple[Param, ...]:
    from models.blocks import cost  # noqa: PLC0415 - the engine's defaults come from the cost block's tables

    return (
        Param("years", families.YEARS, families.YEARS_SOURCE, bounds=(0.25, 30.0), doc="ownership period of the TCO"),
        Param("usd_per_kwh", cost.USD_PER_KWH, "cost block prices/energy.csv: U.S. EIA 2023 commercial average", bounds=(0.0, 2.0),
              doc="electricity price"),
        Param("pue", cost.PUE, "cost block prices/energy.csv: Uptime Institute 2023 average", bounds=(1.0, 3.0), doc="power usage effectiveness"),
        Param("upkeep_frac_per_year", families.UPKEEP_FRAC_PER_YEAR, families.UPKEEP_SOURCE, bounds=(0.0, 1.0),
              doc="maintenance per year as a share of capex"),
    )


def _common_metrics(fam: families.Family) -> tuple[Metric, ...]:
    return (
        Metric("work_per_s", "max", f"sustained work, {fam.work_unit}s per second ({fam.name})"),
        Metric("capex_usd", "min", "purchase price of the whole system (see the model's boundary)"),
        Metric("power_w", "min", "wall power of the same boundary"),
        Metric("tco_usd", "min", "capex + years x (energy x PUE + upkeep)"),
        Metric("usd_per_work", "min", f"{fam.usd_per_work_label}: TCO over the work done in the period"),
    )


def _join_family(cls: type[Model]) -> None:
    """Give a family model the common parameters and metrics and check its mapping."""
    fam = families.family(cls.family)  # type: ignore[arg-type]
    have = {p.name for p in cls.params}
    cls.params = tuple(cls.params) + tuple(p for p in _common_params() if p.name not in have)
    have_m = {m.name for m in cls.metrics}
    cls.metrics = tuple(cls.metrics) + tuple(m for m in _common_metrics(fam) if m.name not in have_m)
    names = {m.name for m in cls.metrics}
    if fam.latency_metric not in names:
        raise TypeError(f"model {cls.__name__} serves {fam.name} but has no metric {fam.latency_metric}")
    knobs = {k.name for k in fam.knobs}
    pnames = {p.name for p in cls.params}
    for knob, param in cls.workload_map.items():
        if knob not in knobs:
            raise TypeError(f"model {cls.__name__}: workload_map key {knob!r} is not a {fam.name} knob ({sorted(knobs)})")
        if param not in pnames:
            raise TypeError(f"model {cls.__name__}: workload_map[{knob!r}] = {param!r} is not one of its parameters")
    if not cls.boundary:
        raise TypeError(f"model {cls.__name__} serves {fam.name} but does not state its cost boundary")
    for param in cls.family_fixed:
        if param not in pnames:
            raise TypeError(f"model {cls.__name__}: family_fixed names {param!r}, not one of its parameters")


#: Scalar types that ``coerce`` checks without a numpy round trip (bools excluded: they are
#: an error where a number is expected).
_PLAIN_NUMBERS = frozenset((float, int, np.float64, np.float32, np.int64, np.int32))


def _index_of(items: list[str], item: str) -> int:
    """Position of ``item`` in ``items``, appended if new."""
    if item not in items:
        items.append(item)
    return items.index(item)


def _checked_number(p: Param, v: float) -> float:
    """``Model.coerce`` of one plain number: the same checks and messages as for an array."""
    name = p.name
    if v != v:
        raise DseError(f"parameter {name}: NaN is not allowed")
    if p.choices is not None:
        if v not in p.choices:
            raise DseError(f"parameter {name}={v:g} is not allowed; allowed: {p.describe_allowed()}")
    elif p.bounds is not None and (v < p.bounds[0] or v > p.bounds[1]):
        raise DseError(f"parameter {name}={v:g} is out of bounds; allowed: {p.describe_allowed()}")
    if p.integer and not (math.isinf(v) or v.is_integer()):
        raise DseError(f"parameter {name} must be an integer")
    return v


def _has_bool(value: Any) -> bool:
    """A boolean where a number is expected (``[true]`` in a space file would sweep 1.0)."""
    if isinstance(value, (bool, np.bool_)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype == np.bool_
    if isinstance(value, (list, tuple)):
        return any(isinstance(v, (bool, np.bool_)) for v in value)
    return False


def _undeclared(m: Metric, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(NaN, inf) masks of ``v`` that the metric does not declare as meaningful."""
    none = np.zeros(np.shape(v), dtype=bool)
    return (none if m.nan_means else np.isnan(v)), (none if m.inf_means else np.isinf(v))


def _parse_choice(p: Param, value: Any) -> Any:
    """Accept 'true'/'false' strings for boolean choices and numbers for numeric labels."""
    if isinstance(value, str) and p.choices is not None and value not in p.choices:
        low = value.lower()
        if True in p.choices or False in p.choices:
            if low in ("true", "1", "yes", "on"):
                return True
            if low in ("false", "0", "no", "off"):
                return False
    return value


def _convert_value(value: Any, from_unit: str, to_unit: str) -> Any:
    if isinstance(value, (list, tuple, np.ndarray)):
        return np.asarray([units.convert(float(v), from_unit, to_unit) for v in value])
    return units.convert(float(value), from_unit, to_unit)


def parse_value(text: str) -> Any:
    """Parse a command-line value: number, bool, list 'a,b', or bare label."""
    t = text.strip()
    if "," in t:
        return [parse_value(x) for x in t.split(",") if x.strip()]
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        v = float(t)
    except ValueError:
        return t
    return int(v) if v.is_integer() and "." not in t and "e" not in low else v


def parse_assignments(items: Sequence[str], params: Mapping[str, Param] | None = None) -> dict[str, Any]:
    """Parse ``key=value`` pairs from the command line.  A value may carry a unit
    (``ctrl_latency_ns=0.2us``) which is converted to the parameter's unit later.
    With the model's ``params``, a value spelled exactly as one of a parameter's
    choices is that choice (``flit_mode=68B`` is the label, not 68 bytes)."""
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise DseError(f"expected key=value, got {item!r}")
        key, _, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not key:
            raise DseError(f"empty parameter name in {item!r}")
        if key in out:
            raise DseError(f"parameter {key} is given twice; give it once")
        p = (params or {}).get(key)
        label = [c for c in (p.choices or ()) if str(c) == raw] if p is not None else []
        out[key] = label[0] if label else _value_with_unit(key, raw)
    return out


def _value_with_unit(key: str, raw: str) -> Any:
    """'0.2us' given for key 'x_ns' -> converted number; bare values pass through."""
    import re

    m = re.fullmatch(r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z_/]+)", raw)
    if not m:
        return parse_value(raw)
    number, unit = float(m.group(1)), m.group(2).lower().replace("/", "_per_")
    unit = {"gb_per_s": "gbps", "mb_per_s": "mbps", "tb_per_s": "tbps"}.get(unit, unit)
    target = units.unit_of(key)
    if units.dimension(unit) is None:
        return parse_value(raw)  # a label such as 'ddr5' or 'x8'
    if target is None:
        raise DseError(f"parameter {key} takes no unit, but the value {raw!r} has one ({unit})")
    try:
        v = units.convert(number, unit, target)
    except ValueError as exc:
        raise DseError(f"parameter {key} takes {target}: {exc}") from None
    return v
