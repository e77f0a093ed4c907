"""The model interface and registry: declarations, validation, vectorized evaluation."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry, units
from dse.errors import DseError
from dse.model import Param, parse_assignments


def test_registry_keys_unique_and_match_classes():
    from models import REGISTRY

    assert len(REGISTRY) == len(set(REGISTRY))
    targets = list(REGISTRY.values())
    assert len(targets) == len(set(targets)), "two names point at one class"
    for name in registry.names():
        cls = registry.model_class(name)
        assert cls.name == name


@pytest.mark.parametrize("name", registry.names())
def test_every_model_declares_sources_units_and_directions(name):
    cls = registry.model_class(name)
    assert cls.params and cls.metrics
    for p in cls.params:
        assert p.source.strip(), f"{name}.{p.name} has no source"
        if p.choices is None:
            assert p.unit is not None or p.integer or p.name.endswith(("_frac", "_x", "_ratio", "_scale", "_count")) or p.bounds is not None
    names = [m.name for m in cls.metrics]
    assert len(names) == len(set(names))
    clash = set(names) & {p.name for p in cls.params}
    assert not clash, f"{name}: parameter and metric share a name: {clash}"
    if cls.variant_param:
        assert cls.variant_param in cls.param_map()


@pytest.mark.parametrize("name", registry.names())
def test_one_point_and_a_batch_agree(name):
    """The same code path serves one point and many: row i of a batch equals point i."""
    from dse.bench import random_inputs

    model = registry.get(name)
    cols = random_inputs(model, 16, seed=1)
    batch = model.run(cols, checked=True)
    for i in (0, 7, 15):
        single = model.run({k: v[i : i + 1] for k, v in cols.items()}, checked=True)
        for metric, v in batch.items():
            np.testing.assert_allclose(single[metric][0], v[i], rtol=1e-9, equal_nan=True, err_msg=f"{name}.{metric}")


def test_param_requires_source_and_valid_default():
    with pytest.raises(ValueError):
        Param("x_ns", 1.0, source="")
    with pytest.raises(ValueError):
        Param("x_ns", 5.0, source="s", bounds=(0, 1))
    with pytest.raises(ValueError):
        Param("mode", "c", source="s", choices=("a", "b"))


def test_unit_conversion_of_keys_and_values():
    m = registry.get("cxl-expander")
    assert m.point(ctrl_latency_us=0.1)["idle_read_latency_ns"] == pytest.approx(m.point(ctrl_latency_ns=100)["idle_read_latency_ns"])
    with pytest.raises(DseError, match="takes ns"):
        m.resolve_name("ctrl_latency_gbps", 3)
    vals = parse_assignments(["ctrl_latency_ns=0.2us", "media=ddr5_4800", "lanes=16"])
    assert vals == {"ctrl_latency_ns": pytest.approx(200.0), "media": "ddr5_4800", "lanes": 16}
    with pytest.raises(DseError):
        parse_assignments(["ctrl_latency_ns=3GB/s"])


def test_bad_values_are_refused_with_the_allowed_range():
    m = registry.get("cxl-expander")
    with pytest.raises(DseError, match="allowed: one of 4, 8, 16"):
        m.point(lanes=12)
    with pytest.raises(DseError, match="out of bounds"):
        m.point(ctrl_latency_ns=-5)
    with pytest.raises(DseError, match="no parameter"):
        m.point(nonsense=1)
    with pytest.raises(DseError, match="unknown model"):
        registry.get("cxl-expandr")


def test_unit_suffixes():
    assert units.unit_of("bw_gbps") == "gbps"
    assert units.unit_of("price_usd_per_gib") == "usd_per_gib"
    assert units.unit_of("usd_per_gib") == "usd_per_gib"
    assert units.unit_of("media") is None
    assert units.convert(1, "us", "ns") == 1000
    with pytest.raises(ValueError):
        units.convert(1.0, "ns", "gbps")
