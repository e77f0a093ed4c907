"""A fixed sample of design points per model and what every model gives there, so a
refactor or a speed-up can be checked to leave results alone (issue 19, "done when").

``python tests/model_regression.py`` rewrites ``tests/data/model_regression.npz`` from the
code and calibration in force; do that only when a change of results is intended, and say
so in the commit.  The inputs are stored with the outputs, so a model that gains a knob
still reads its old points (the new knob takes its default)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

FIXTURE = Path(__file__).parent / "data" / "model_regression.npz"
#: Points per model: random inside every knob's bounds, plus the defaults (point 0).
POINTS = 40
SEED = 19


def sample_inputs(model) -> dict[str, np.ndarray]:
    """POINTS random points of ``model`` (categoricals as codes), the first at defaults."""
    from dse.bench import random_inputs

    cols = random_inputs(model, POINTS, seed=SEED)
    for p in model.params:
        if p.name in cols:
            default = p.choices.index(p.default) if p.categorical else p.default
            cols[p.name][0] = default
    return cols


def evaluate(model, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every metric, the feasibility flag and the reason text at ``inputs``."""
    ev = model.run_full(inputs)
    out = {f"m.{k}": np.asarray(v, dtype=np.float64) for k, v in ev.metrics.items()}
    out["feasible"] = np.asarray(ev.feasible, dtype=bool)
    out["reason"] = np.array([ev.reason_of(i) or "" for i in range(len(ev.feasible))])
    return out


def write(path: Path = FIXTURE) -> None:
    from dse import registry

    arrays: dict[str, np.ndarray] = {}
    for name in registry.names():
        model = registry.get(name)
        inputs = sample_inputs(model)
        arrays.update({f"{name}|in.{k}": v for k, v in inputs.items()})
        arrays.update({f"{name}|{k}": v for k, v in evaluate(model, inputs).items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(path)
    print(f"wrote {path.name}: {len(registry.names())} models x {POINTS} points", file=sys.stderr)


def load(path: Path = FIXTURE) -> dict[str, dict[str, np.ndarray]]:
    """model name -> {'in.<knob>', 'm.<metric>', 'feasible', 'reason'} arrays."""
    out: dict[str, dict[str, np.ndarray]] = {}
    with np.load(path) as z:
        for key in z.files:
            name, field = key.split("|", 1)
            out.setdefault(name, {})[field] = z[key]
    return out


if __name__ == "__main__":
    write()
