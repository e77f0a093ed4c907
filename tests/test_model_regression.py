"""Every model gives, on a fixed sample of points, what it gave when the fixture was
written (tests/model_regression.py), to 1e-9 relative: in one batch and one point at a
time, the way a sequential sampler calls it.  A speed-up or refactor that moves a number
fails here; an intended change regenerates the fixture."""

from __future__ import annotations

import numpy as np
import pytest

import model_regression as fixture
from dse import registry

RTOL = 1e-9
ATOL = 1e-300
STORED = fixture.load()


def _inputs(model, stored: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    known = {p.name for p in model.params}
    return {k[3:]: v for k, v in stored.items() if k.startswith("in.") and k[3:] in known}


def _compare(name: str, stored: dict[str, np.ndarray], got: dict[str, np.ndarray], where: str) -> None:
    np.testing.assert_array_equal(got["feasible"], stored["feasible"], err_msg=f"{name} {where}: feasible")
    np.testing.assert_array_equal(got["reason"], stored["reason"], err_msg=f"{name} {where}: reason")
    for key, want in stored.items():
        if key.startswith("m."):
            assert key in got, f"{name} {where}: metric {key[2:]} is gone"
            np.testing.assert_allclose(got[key], want, rtol=RTOL, atol=ATOL, equal_nan=True,
                                       err_msg=f"{name} {where}: {key[2:]}")


def test_fixture_covers_every_model():
    assert sorted(STORED) == sorted(registry.names())


@pytest.mark.parametrize("name", sorted(STORED))
def test_batch_unchanged(name):
    model = registry.get(name)
    stored = STORED[name]
    _compare(name, stored, fixture.evaluate(model, _inputs(model, stored)), "batch")


@pytest.mark.parametrize("name", sorted(STORED))
def test_single_points_unchanged(name):
    """Each point alone, knobs as plain Python scalars and labels (a sampler's call)."""
    model = registry.get(name)
    stored = STORED[name]
    cols = _inputs(model, stored)
    params = {p.name: p for p in model.params}
    rows = []
    for i in range(fixture.POINTS):
        point = {}
        for k, v in cols.items():
            p = params[k]
            point[k] = p.choices[int(v[i])] if p.categorical else v[i].item()
        rows.append(fixture.evaluate(model, point))
    got = {k: np.concatenate([r[k] for r in rows]) for k in rows[0]}
    _compare(name, stored, got, "one point at a time")
