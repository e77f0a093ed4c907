"""Claims: published results a model must reproduce, and `dse validate`.

A claims file (YAML) lives next to each model (``models/<arch>/claims.yaml``)::

    model: cxl-expander            # the model the claims run on (a claim may override)
    base: {media: ddr5_4800}       # optional: parameters every scenario starts from
    claims:
      - id: pond-added-latency
        source: "Pond (ASPLOS'23), Sec. 2"
        description: "CXL adds 70-90 ns over local DRAM"
        headline: true             # headline claims decide the exit status
        kind: prediction           # prediction (default) | anchor: a constant is fitted to it
                                   # | echo: the expected value is itself a model input
        scenarios:
          cxl: {ctrl_latency_ns: 40, switch_hops: 0}
        expr: "cxl.idle_read_latency_ns - cxl.local_dram_latency_ns"
        expected: [70, 90]         # a number, or an interval [low, high]
        tolerance: 0.10            # relative (default 0.10); or tolerance_abs: 5

Scenario values may be lists (all the same length within a scenario): the scenario is
then a vector of points, and the expression reduces it with ``mean``, ``gmean``,
``max``, ``min``, ``sum`` or ``median``.  Names in the expression are
``<scenario>.<metric or parameter>``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from dse.errors import DseError
from dse.expr import Expr, ExprError

DEFAULT_TOLERANCE = 0.10


class _Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    source: str
    description: str = ""
    headline: bool = True
    #: prediction: nothing was fitted to it; anchor: a constant was fitted to it (in-fit,
    #: ``dse validate --cv`` refits without it); echo: its value is a model input (or set
    #: from the same sentence), so reproducing it shows nothing - excluded from pass rates.
    kind: Literal["prediction", "anchor", "echo"] = "prediction"
    model: str | None = None
    scenarios: dict[str, dict[str, Any]] = Field(min_length=1)
    expr: str
    expected: float | tuple[float, float]
    tolerance: float | None = Field(default=None, ge=0)
    tolerance_abs: float | None = Field(default=None, ge=0)
    unit: str = ""
    note: str = ""

    @field_validator("expected")
    @classmethod
    def _finite(cls, v: float | tuple[float, float]) -> float | tuple[float, float]:
        values = v if isinstance(v, tuple) else (v,)
        if not all(math.isfinite(x) for x in values):
            raise ValueError("must be a finite number or an interval [low, high] of finite numbers")
        return v

    @field_validator("scenarios")
    @classmethod
    def _names(cls, v: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name in v:
            if not name.isidentifier():
                raise ValueError(f"scenario name {name!r} must be an identifier (letters, digits, _)")
        return v


class _ClaimsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str
    base: dict[str, Any] = Field(default_factory=dict)
    claims: list[_Claim] = Field(min_length=1)


@dataclass
class ClaimResult:
    id: str
    model: str
    source: str
    description: str
    headline: bool
    expected: float | tuple[float, float]
    value: float
    error_pct: float
    tolerance: str
    passed: bool
    unit: str
    note: str
    #: The model's p5 / p95 under its parameter uncertainty (``dse validate --uq N``) and
    #: whether the paper's value lies in that interval.
    p5: float | None = None
    p95: float | None = None
    inside: bool | None = None
    #: prediction, anchor or echo (see ``_Claim.kind``).
    kind: str = "prediction"

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["expected"] = list(self.expected) if isinstance(self.expected, tuple) else self.expected
        return d


def load_claims(path: Path) -> _ClaimsFile:
    import yaml

    if not path.exists():
        raise DseError(f"{path}: no such claims file")
    if not path.is_file():
        raise DseError(f"{path}: is not a file; give a claims file (e.g. models/cxl_expander/claims.yaml)")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise DseError(f"{path}: invalid YAML: {str(exc).splitlines()[0]}") from None
    try:
        spec = _ClaimsFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err.get("loc", ()))
        if isinstance(raw, dict) and err.get("loc", ())[:1] == ("claims",) and len(err["loc"]) > 1:
            try:
                cid = raw["claims"][err["loc"][1]].get("id")
                loc = f"claims[{cid or err['loc'][1]}]." + ".".join(str(p) for p in err["loc"][2:])
            except (KeyError, IndexError, TypeError, AttributeError):
                pass
        raise DseError(
            f"{path}: {loc}: {err.get('msg')} (claim keys: id, source, description, headline, model, scenarios, "
            "expr, expected, tolerance, tolerance_abs, unit, note)"
        ) from None
    ids = [c.id for c in spec.claims]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise DseError(f"{path}: claim ids repeated: {', '.join(sorted(dup))}")
    return spec


def _scenario_env(model: Any, name: str, params: dict[str, Any], path: Path, cid: str) -> dict[str, Any]:
    lengths = {len(v) for v in params.values() if isinstance(v, list)}
    if len(lengths) > 1:
        raise DseError(f"{path}: claims[{cid}].scenarios.{name}: list values differ in length {sorted(lengths)}")
    try:
        out = model.run(params)
    except DseError as exc:
        raise DseError(f"{path}: claims[{cid}].scenarios.{name}: {exc}") from None
    n = next(iter(out.values())).shape[0] if out else 1
    env: dict[str, Any] = {}
    for k, v in out.items():
        env[f"{name}.{k}"] = v if n > 1 else float(v[0])
    pmap = model.param_map()
    for p in model.params:
        v = params.get(p.name, p.default)
        if p.categorical:
            continue
        try:
            arr = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            continue
        env[f"{name}.{p.name}"] = arr if arr.ndim else float(arr)
    del pmap
    return env


def evaluate_claims(
    path: Path, only_model: str | None = None, overrides: dict[str, dict[str, float]] | None = None,
    only_ids: set[str] | None = None,
) -> list[ClaimResult]:
    """Every claim of a file (or those in ``only_ids``), model against paper.  ``overrides``
    (model -> parameter -> value) replaces defaults a claim's scenarios do not set (one
    uncertainty draw, or constants refitted without an anchor)."""
    from dse import registry

    spec = load_claims(path)
    out: list[ClaimResult] = []
    for c in spec.claims:
        if only_ids is not None and c.id not in only_ids:
            continue
        mname = c.model or spec.model
        if only_model and mname != only_model and spec.model != only_model:
            continue
        try:
            model = registry.get(mname)
        except DseError as exc:
            raise DseError(f"{path}: claims[{c.id}].model: {exc}") from None
        env: dict[str, Any] = {}
        for sname, params in c.scenarios.items():
            merged = dict(spec.base)
            merged.update(params)
            if overrides and overrides.get(mname):
                merged = _with_overrides(model, merged, overrides[mname])
            env.update(_scenario_env(model, sname, merged, path, c.id))
        try:
            expr = Expr(c.expr, what=f"claims[{c.id}].expr")
            expr.require_names(env, kind="scenario value")
            raw = expr.evaluate(env)
        except ExprError as exc:
            raise DseError(f"{path}: {exc}") from None
        arr = np.asarray(raw, dtype=np.float64)
        if arr.ndim and arr.size != 1:
            raise DseError(
                f"{path}: claims[{c.id}].expr gives {arr.size} values; reduce list scenarios with mean/gmean/max/min"
            )
        value = float(arr.reshape(-1)[0]) if arr.ndim else float(arr)
        out.append(_judge(c, mname, value))
    return out


def claim_value(path: Path, claim_id: str, overrides: dict[str, dict[str, float]] | None = None) -> float:
    """The model's value of one claim (for a model's leave-one-out refit: evaluate the
    left-out anchor with the constants fitted without it, as parameter ``overrides``)."""
    rows = evaluate_claims(path, overrides=overrides, only_ids={claim_id})
    if not rows:
        raise DseError(f"{path}: no claim {claim_id!r}")
    return rows[0].value


def pass_counts(results: list[ClaimResult]) -> dict[str, tuple[int, int]]:
    """(within tolerance, total) of headline and other claims, echoes excluded (their
    value is a model input), and the number of echoes."""
    scored = [r for r in results if r.kind != "echo"]
    head = [r for r in scored if r.headline]
    other = [r for r in scored if not r.headline]
    return {
        "headline": (sum(r.passed for r in head), len(head)),
        "other": (sum(r.passed for r in other), len(other)),
        "echo": (sum(r.passed for r in results if r.kind == "echo"), len(results) - len(scored)),
    }


def error_pct(expected: float | tuple[float, float], value: float) -> float:
    """Signed error of ``value`` against a number (relative, %), or its distance outside an
    interval relative to the nearer edge (0 inside)."""
    if isinstance(expected, tuple):
        lo, hi = sorted(expected)
        if lo <= value <= hi:
            return 0.0
        edge = lo if value < lo else hi
        return (value - edge) / abs(edge) * 100 if edge else math.inf
    exp = float(expected)
    return (value - exp) / abs(exp) * 100 if exp else (0.0 if value == 0 else math.inf)


def _with_overrides(model: Any, params: dict[str, Any], overrides: dict[str, float]) -> dict[str, Any]:
    """``params`` plus the overrides of parameters it does not set (in any unit)."""
    given = set()
    for k, v in params.items():
        try:
            given.add(model.resolve_name(k, v)[0])
        except DseError:
            given.add(k)  # reported by the scenario's own evaluation
    return {**{k: v for k, v in overrides.items() if k not in given}, **params}


def claim_intervals(path: Path, samples: int, seed: int = 0) -> dict[str, tuple[float, float]]:
    """p5 / p95 of every claim's value over ``samples`` joint draws of the uncertain
    parameter defaults; every scenario of a claim sees the same draw (paired)."""
    from dse import registry
    from dse.uncertainty import draws

    spec = load_claims(path)
    cols = {m: draws(registry.get(m), {}, samples, seed) for m in {c.model or spec.model for c in spec.claims}}
    values: dict[str, list[float]] = {}
    for i in range(samples):
        ov = {m: {k: float(v[i]) for k, v in c.items() if isinstance(v, np.ndarray)} for m, c in cols.items()}
        for r in evaluate_claims(path, overrides=ov):
            values.setdefault(r.id, []).append(r.value)
    out = {}
    for cid, v in values.items():
        x = np.asarray(v)
        x = x[np.isfinite(x)]
        out[cid] = (float(np.percentile(x, 5)), float(np.percentile(x, 95))) if x.size else (math.nan, math.nan)
    return out


def attach_intervals(results: list[ClaimResult], intervals: dict[str, tuple[float, float]]) -> None:
    for r in results:
        if r.id not in intervals:
            continue
        r.p5, r.p95 = intervals[r.id]
        lo, hi = (sorted(r.expected) if isinstance(r.expected, tuple) else (r.expected, r.expected))
        r.inside = bool(lo <= r.p95 and hi >= r.p5)


def _judge(c: _Claim, model: str, value: float) -> ClaimResult:
    rel = c.tolerance if c.tolerance is not None else (None if c.tolerance_abs is not None else DEFAULT_TOLERANCE)
    if isinstance(c.expected, tuple):
        lo, hi = sorted(c.expected)
        slack_lo = (abs(lo) * rel if rel is not None else 0.0) + (c.tolerance_abs or 0.0)
        slack_hi = (abs(hi) * rel if rel is not None else 0.0) + (c.tolerance_abs or 0.0)
        passed = math.isfinite(value) and lo - slack_lo <= value <= hi + slack_hi
    else:
        exp = float(c.expected)
        slack = (abs(exp) * rel if rel is not None else 0.0) + (c.tolerance_abs or 0.0)
        passed = math.isfinite(value) and abs(value - exp) <= slack + 1e-12
    err = error_pct(c.expected, value)
    tol = []
    if rel is not None:
        tol.append(f"±{rel * 100:g}%")
    if c.tolerance_abs is not None:
        tol.append(f"±{c.tolerance_abs:g}{(' ' + c.unit) if c.unit else ''}")
    return ClaimResult(
        id=c.id,
        model=model,
        source=c.source,
        description=c.description,
        headline=c.headline,
        expected=c.expected,
        value=value,
        kind=c.kind,
        error_pct=err,
        tolerance=" ".join(tol),
        passed=passed,
        unit=c.unit,
        note=c.note,
    )


def claims_files(name: str | None = None) -> list[tuple[str, Path]]:
    """(model name, claims file) for one model or every registered model that has one.
    A model family sharing a folder (e.g. dockerssd-isp and dockerssd-llm) shares a file."""
    from dse import registry

    names = [name] if name else registry.names()
    if name and name not in registry.names():
        fam = [n for n in registry.names() if n.startswith(name + "-")]
        if not fam:
            registry.model_class(name)  # raises the unknown-model error
        names = fam
    seen: set[Path] = set()
    out: list[tuple[str, Path]] = []
    for n in names:
        f = registry.claims_file(n)
        if f is not None and f.exists() and f not in seen:
            seen.add(f)
            out.append((n, f))
    return out


def format_expected(e: float | tuple[float, float]) -> str:
    if isinstance(e, tuple):
        return f"{e[0]:g}–{e[1]:g}"
    return f"{e:g}"
