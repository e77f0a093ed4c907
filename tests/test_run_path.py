"""The single-point run path: a plain number is checked without a numpy round trip, with the
same value and the same error as the same number given as a one-element column; metric
columns stay read-only views."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from dse.bench import random_inputs
from dse.errors import DseError

MODELS = ("espresso", "rdio", "ncs", "iks")


def _error(model, name, value) -> str | None:
    try:
        model.coerce(name, value)
    except DseError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("name", MODELS)
def test_scalar_coerce_matches_the_column_form(name):
    model = registry.get(name)
    for p in model.params:
        if p.categorical:
            continue
        probes = [p.default]
        if p.bounds is not None:
            lo, hi = p.bounds
            probes += [lo, hi, lo - 1.0, hi + 1.0, (lo + hi) / 2 + 0.37]
        if p.choices is not None:
            probes += [float(p.choices[0]), float(p.choices[0]) + 0.5]
        probes += [float("nan")]
        for v in probes:
            for scalar in (float(v), np.float64(v)):
                want = _error(model, p.name, np.asarray([v], dtype=np.float64))
                got = _error(model, p.name, scalar)
                assert got == want, (p.name, v, got, want)
                if want is None:
                    out = model.coerce(p.name, scalar)
                    assert type(out) is float and out == float(model.coerce(p.name, np.asarray([v]))[0])


def test_scalar_coerce_still_refuses_a_bool_and_an_int_outside_bounds():
    model = registry.get("espresso")
    with pytest.raises(DseError, match="not true/false"):
        model.coerce("jbof_ssds", True)
    with pytest.raises(DseError, match="jbof_ssds=1e\\+06 is out of bounds"):
        model.coerce("jbof_ssds", 1_000_000)
    with pytest.raises(DseError, match="must be an integer"):
        model.coerce("jbof_ssds", 8.5)


@pytest.mark.parametrize("name", MODELS)
def test_one_point_given_as_scalars_equals_it_as_columns(name):
    model = registry.get(name)
    cols = random_inputs(model, 6, seed=11)
    for i in range(6):
        labels = {}
        for p in model.params:
            v = cols[p.name][i]
            labels[p.name] = p.choices[int(v)] if p.categorical else v
        scalar = model.run(labels)
        column = model.run({k: [v] for k, v in labels.items()})
        for k in scalar:
            assert scalar[k].shape == (1,) and not scalar[k].flags.writeable
            np.testing.assert_array_equal(scalar[k], column[k])
