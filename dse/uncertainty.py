"""How sure is the answer: an uncertainty on every parameter default, and Monte Carlo
over them at one design point.

Every parameter already says where its default comes from (``Param.source``).  Its
uncertainty follows from that source unless the parameter states its own
(``Param(..., uncertainty=Uncertainty(...))``):

=====================  ===========================================  ========================
source kind            recognised by                                 distribution
=====================  ===========================================  ========================
design choice          categorical or integer parameter, or a knob   exact (fixed unless named)
                       some shipped space sweeps
datasheet / standard   "datasheet", "spec", "JEDEC", "price", ...    uniform, default +- 5 %
paper measurement      anything else (a section, figure, table)      uniform, default +- 15 %
fitted constant        "fitted", "calibrat", "DRAMsim3", "MQSim"     normal, sd 10 % of default
fitted, with its fit   an sd in the package's fitted.toml            normal, the fit's sd
                       ``[uncertainty]`` (dse/fit_uncertainty.py)    (jackknife over targets)
stated assumption      "assumption"                                   log-uniform, default x/÷ 1.5
=====================  ===========================================  ========================

Widths are clipped to the parameter's bounds, so the default always lies inside.  A
default of 0 means "absent" (no switch, no wait) and stays exact.  ``width`` (``dse uq
--width 0.3``) replaces every relative width by one number, to ask "with +-30 % on every
input".  Draws use Sobol points pushed through each distribution's inverse CDF; the same
seed gives the same draws for every design point (common random numbers), so two
designs are compared on paired samples.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import numpy as np

from dse.errors import DseError

Dist = Literal["exact", "uniform", "loguniform", "normal"]

#: Relative half-widths (uniform), factor (log-uniform) and sd (normal) by source kind.
DATASHEET_REL = 0.05
PAPER_REL = 0.15
FIT_SD_REL = 0.10
#: Largest sd (relative to the default) taken from a model fit's jackknife.
FIT_SD_CAP_REL = 0.5
ASSUMPTION_FACTOR = 1.5

_DATASHEET = re.compile(r"datasheet|\bspec\b|specification|jedec|standard|list price|\bprice|pcie \d|cxl \d", re.I)
_FIT = re.compile(r"fitted|calibrat|dramsim|mqsim|reference run", re.I)
_ASSUMPTION = re.compile(r"assum", re.I)


@dataclass(frozen=True)
class Uncertainty:
    """A parameter's uncertainty: ``exact``; ``uniform``/``loguniform`` on [low, high];
    ``normal`` with ``sd`` around the default (truncated to [low, high])."""

    dist: Dist
    reason: str
    low: float | None = None
    high: float | None = None
    sd: float | None = None

    def __post_init__(self) -> None:
        if self.dist not in ("exact", "uniform", "loguniform", "normal"):
            raise ValueError(f"unknown distribution {self.dist!r}")
        if self.dist != "exact":
            if self.low is None or self.high is None or not self.low <= self.high:
                raise ValueError(f"{self.dist}: needs low <= high, got {self.low}, {self.high}")
            if self.dist == "loguniform" and self.low <= 0:
                raise ValueError("loguniform needs a positive low bound")
            if self.dist == "normal" and (self.sd is None or self.sd < 0):
                raise ValueError("normal needs sd >= 0")

    def contains(self, value: float) -> bool:
        return self.dist == "exact" or (self.low is not None and self.high is not None and self.low <= value <= self.high)

    def describe(self) -> str:
        if self.dist == "exact":
            return "exact"
        if self.dist == "normal":
            return f"normal sd {self.sd:.4g} in [{self.low:.4g}, {self.high:.4g}]"
        return f"{self.dist} [{self.low:.4g}, {self.high:.4g}]"

    def sample(self, u: np.ndarray, default: float) -> np.ndarray:
        """Values from uniform draws ``u`` in (0, 1) by the inverse CDF."""
        if self.dist == "exact":
            return np.full(u.shape, float(default))
        lo, hi = float(self.low), float(self.high)  # type: ignore[arg-type]
        if self.dist == "uniform":
            return lo + u * (hi - lo)
        if self.dist == "loguniform":
            return np.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))
        from scipy.special import ndtr, ndtri

        sd = float(self.sd)  # type: ignore[arg-type]
        if sd == 0.0:
            return np.full(u.shape, float(default))
        a, b = ndtr((lo - default) / sd), ndtr((hi - default) / sd)  # truncated to the bounds
        return np.clip(default + sd * ndtri(a + u * (b - a)), lo, hi)


def _clip(p: Any, lo: float, hi: float) -> tuple[float, float]:
    if p.bounds is not None:
        lo, hi = max(lo, p.bounds[0]), min(hi, p.bounds[1])
    return lo, hi


def from_source(p: Any, design: bool = False, width: float | None = None) -> Uncertainty:
    """The uncertainty a parameter's source implies (see the module docstring)."""
    if p.choices is not None or p.integer or design:
        return Uncertainty("exact", "a design choice: fixed unless named")
    d = float(p.default)
    if d == 0.0:
        return Uncertainty("exact", "default 0: the mechanism is absent unless named")
    src = p.source
    if width is not None:
        lo, hi = _clip(p, d - abs(d) * width, d + abs(d) * width)
        return Uncertainty("uniform", f"--width {width:g}: +-{100 * width:g} % on every input", lo, hi)
    if _ASSUMPTION.search(src):
        lo, hi = sorted((d / ASSUMPTION_FACTOR, d * ASSUMPTION_FACTOR))
        lo, hi = _clip(p, lo, hi)
        if lo > 0:
            return Uncertainty("loguniform", f"stated assumption: x/÷ {ASSUMPTION_FACTOR:g}", lo, hi)
        return Uncertainty("uniform", f"stated assumption: x/÷ {ASSUMPTION_FACTOR:g}", lo, hi)
    if _FIT.search(src):
        lo, hi = _clip(p, d - 4 * FIT_SD_REL * abs(d), d + 4 * FIT_SD_REL * abs(d))
        return Uncertainty("normal", f"fitted constant: sd {100 * FIT_SD_REL:g} % (fit residual scale)", lo, hi,
                           sd=FIT_SD_REL * abs(d))
    rel, kind = (DATASHEET_REL, "datasheet or standard") if _DATASHEET.search(src) else (PAPER_REL, "paper measurement")
    lo, hi = _clip(p, d - rel * abs(d), d + rel * abs(d))
    return Uncertainty("uniform", f"{kind}: +-{100 * rel:g} %", lo, hi)


@cache
def design_knobs(model_name: str) -> frozenset[str]:
    """Parameters some shipped space of the model sweeps: design decisions, not
    uncertain inputs."""
    import tomllib

    from dse.registry import project_root

    names: set[str] = set()
    for f in sorted((project_root() / "spaces").glob("*.toml")):
        try:
            raw = tomllib.loads(f.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            continue
        if raw.get("model") == model_name:
            names.update(raw.get("knobs", {}))
    return frozenset(names)


def uncertainty_of(model: Any, p: Any, width: float | None = None) -> Uncertainty:
    """A parameter's uncertainty: its own if it states one, else the sd of the fit that
    set its default (``fitted.toml``'s ``[uncertainty]``), else from its source."""
    own = getattr(p, "uncertainty", None)
    if own is not None and width is None:
        return own
    design = p.name in design_knobs(model.name)
    if width is None and not design:
        fitted = from_fit(model, p)
        if fitted is not None:
            return fitted
    return from_source(p, design=design, width=width)


def from_fit(model: Any, p: Any) -> Uncertainty | None:
    """``normal(sd)`` for a parameter whose default a model package fitted (the jackknife sd
    of :mod:`dse.fit_uncertainty`), truncated to +-4 sd and the bounds; the sd is capped at
    :data:`FIT_SD_CAP_REL` of the default (a constant the targets barely pin), and a
    positive default stays positive.  None when the fit gives no sd."""
    if p.choices is not None or p.integer or float(p.default) == 0.0:
        return None
    from dse.fit_uncertainty import fit_sd

    sds, n = fit_sd(model)
    sd = sds.get(p.name)
    if sd is None or not sd > 0 or not math.isfinite(sd):
        return None
    d = float(p.default)
    reason = f"fit: jackknife over {n} targets, sd {sd:.4g}"
    if sd > FIT_SD_CAP_REL * abs(d):
        sd = FIT_SD_CAP_REL * abs(d)
        reason += f" (capped at {100 * FIT_SD_CAP_REL:g} % of the default: the targets barely pin it)"
    lo, hi = _clip(p, d - 4 * sd, d + 4 * sd)
    if d > 0:
        lo = max(lo, 0.0)
    return Uncertainty("normal", reason, lo, hi, sd=sd)


def uncertain_params(model: Any, fixed: set[str], width: float | None = None) -> dict[str, tuple[Any, Uncertainty]]:
    """name -> (param, uncertainty) for every parameter that varies (not fixed, not exact)."""
    out = {}
    for p in model.params:
        if p.name in fixed:
            continue
        u = uncertainty_of(model, p, width)
        if u.dist != "exact":
            out[p.name] = (p, u)
    return out


def draws(model: Any, fixed: dict[str, Any], n: int, seed: int = 0, width: float | None = None) -> dict[str, np.ndarray]:
    """``n`` joint draws of the uncertain parameters (Sobol, scrambled, seeded), the
    fixed ones passed through: columns ready for ``model.run``."""
    return {**fixed, **sample_uncertain(model, set(fixed), n, seed, width)}


def sample_uncertain(model: Any, fixed: set[str], n: int, seed: int = 0, width: float | None = None) -> dict[str, np.ndarray]:
    """``n`` joint draws of every uncertain parameter not in ``fixed`` (name -> column)."""
    if n < 2:
        raise DseError(f"--samples {n}: at least 2 draws are needed for an interval")
    if width is not None and not (0 < width < 10):
        raise DseError(f"--width {width}: give a relative width in (0, 10), e.g. 0.3 for +-30 %")
    varying = uncertain_params(model, fixed, width)
    cols: dict[str, np.ndarray] = {}
    if not varying:
        return cols
    from scipy.stats import qmc

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # balance warning for n not a power of two
        u = qmc.Sobol(d=len(varying), scramble=True, seed=seed).random(n)
    u = np.clip(u, 1e-12, 1 - 1e-12)
    for j, (name, (p, unc)) in enumerate(varying.items()):
        cols[name] = unc.sample(u[:, j], float(p.default))
    return cols


#: Calibrations drawn from the block fits' sds by default (`dse uq --fit-draws`): each
#: takes a consecutive share of the parameter draws.
FIT_DRAWS = 8


def run_draws(model: Any, cols: dict[str, Any], n: int, fit_draws: int = FIT_DRAWS, seed: int = 0):
    """Evaluate ``n`` draws (``cols``, as :func:`draws` gives) with the calibrated blocks'
    own uncertainty as well: the draws are cut into ``fit_draws`` consecutive groups, each
    run under a calibration whose fitted block constants (DRAM, flash) are drawn from
    their fits (``calibration.drawn_folders``).  Returns (Evaluation, the constants
    varied as ``block.constant``); ``fit_draws = 0`` or nothing with a fit sd in force:
    one plain run and no constants."""
    from dse.model import Evaluation
    from models.blocks import calibration

    spread = calibration.fit_spread() if fit_draws > 0 else {}
    groups = min(fit_draws, n)
    if not spread or groups <= 0:
        return model.run_full(cols, checked=True), []
    varied = sorted(f"{b}.{k}" for b, consts in spread.items() for k in consts)
    edges = np.linspace(0, n, groups + 1).astype(int)
    parts = []
    with calibration.drawn_folders(groups, seed) as folders:
        for folder, lo, hi in zip(folders, edges[:-1], edges[1:]):
            part = {k: (v[lo:hi] if isinstance(v, np.ndarray) and v.ndim and v.shape[0] == n else v) for k, v in cols.items()}
            parts.append(model.run_full(part, checked=True, calibration=folder))
    return Evaluation.concat(parts), varied


PERCENTILES = (5, 50, 95)


def summarize(metrics: dict[str, np.ndarray], feasible: np.ndarray | None = None,
              labels: dict[str, tuple[str, ...]] | None = None) -> dict[str, dict[str, Any]]:
    """p5 / p50 / p95 and the mean of every metric over the feasible draws; a labelled
    metric (``labels``: name -> its labels) gets each label's share of the draws instead."""
    out: dict[str, dict[str, Any]] = {}
    for k, v in metrics.items():
        x = np.asarray(v, dtype=np.float64)
        if feasible is not None:
            x = x[np.broadcast_to(feasible, x.shape)]
        x = x[np.isfinite(x)]
        if labels and k in labels:
            counts = np.bincount(x.astype(np.int64), minlength=len(labels[k]))[:len(labels[k])]
            out[k] = {"p5": None, "p50": None, "p95": None, "mean": None,
                      "shares": {lab: float(c / max(x.size, 1)) for lab, c in zip(labels[k], counts)}}
            continue
        if x.size == 0:
            out[k] = {"p5": None, "p50": None, "p95": None, "mean": None}
            continue
        q = np.percentile(x, PERCENTILES)
        out[k] = {"p5": float(q[0]), "p50": float(q[1]), "p95": float(q[2]), "mean": float(x.mean())}
    return out
