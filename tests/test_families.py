"""Workload families and the common cost metrics (dse.families, Model.family)."""

from __future__ import annotations

import numpy as np
import pytest

from dse import families, units
from dse.model import NO_WORK, Batch, Metric, Model, Param, knob_params


class _Toy(Model):
    name = "toy-family"
    family = "kv-object"
    boundary = "one box"
    params = (Param("speed", 1000.0, "assumption: test", bounds=(0.0, 1e9)), *knob_params("kv-object"))
    metrics = (Metric("op_latency_us", "min"),)

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        return {"work_per_s": p.speed * 4096.0 / p.value_b, "capex_usd": 1000.0, "power_w": 100.0, "op_latency_us": 10.0}


def test_family_model_gets_common_params_and_metrics() -> None:
    names = {p.name for p in _Toy.params}
    assert set(families.COMMON_PARAMS) <= names
    assert [m.name for m in _Toy.metrics][1:] == list(families.COMMON_METRICS)


def test_tco_is_capex_plus_years_of_energy_and_upkeep() -> None:
    out = _Toy().point()
    energy = 100.0 * units.HOURS_PER_YEAR * _Toy.param_map()["pue"].default / 1000.0 * _Toy.param_map()["usd_per_kwh"].default
    assert out["tco_usd"] == pytest.approx(1000.0 + 5.0 * (energy + 0.05 * 1000.0))
    seconds = 5.0 * units.HOURS_PER_YEAR * 3600.0
    assert out["usd_per_work"] == pytest.approx(out["tco_usd"] / (1000.0 * seconds) * 1e6)


def test_doubling_years_adds_only_energy_and_upkeep() -> None:
    m = _Toy()
    one, two = m.point(years=5.0), m.point(years=10.0)
    assert two["capex_usd"] == one["capex_usd"]
    assert two["tco_usd"] - one["tco_usd"] == pytest.approx(one["tco_usd"] - one["capex_usd"])
    assert two["usd_per_work"] < one["usd_per_work"]


def test_a_point_without_work_is_infeasible_with_a_reason() -> None:
    ev = _Toy().run_full({"speed": np.array([0.0, 10.0])})
    assert ev.feasible.tolist() == [False, True]
    assert ev.reason_of(0) == NO_WORK


def test_family_model_must_name_its_latency_metric_and_boundary() -> None:
    with pytest.raises(TypeError, match="op_latency_us"):
        type("Bad", (Model,), {"name": "bad", "family": "kv-object", "boundary": "x", "params": (), "metrics": ()})
    with pytest.raises(TypeError, match="boundary"):
        type("Bad2", (Model,), {"name": "bad2", "family": "kv-object", "params": (), "metrics": (Metric("op_latency_us"),)})
    with pytest.raises(TypeError, match="not a kv-object knob"):
        type("Bad3", (Model,), {"name": "bad3", "family": "kv-object", "boundary": "x", "params": (),
                                "metrics": (Metric("op_latency_us"),), "workload_map": {"context_tokens": "x"}})


def test_unknown_family_is_one_line() -> None:
    from dse.errors import DseError

    with pytest.raises(DseError, match="allowed: llm-serve"):
        families.family("llm-serving")


def test_every_family_label_names_its_unit() -> None:
    assert families.family("llm-serve").usd_per_work_label == "$ per million output tokens"
    assert families.family("cold-storage").usd_per_work_label == "$ per TB-month"


class _Cloud(_Toy):
    name = "toy-cloud"

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        out = super().evaluate(p)
        return {**out, "capex_usd": 0.0, "power_w": 0.0, "opex_usd_per_year": 1200.0}


def test_a_model_opex_column_adds_per_year_to_tco() -> None:
    one, two = _Cloud().point(years=1.0), _Cloud().point(years=2.0)
    assert one["tco_usd"] == pytest.approx(1200.0)
    assert two["tco_usd"] == pytest.approx(2400.0)
    assert one["usd_per_work"] == pytest.approx(two["usd_per_work"])


def test_a_model_cannot_override_an_engine_hook() -> None:
    with pytest.raises(TypeError, match="defines _evaluate, an engine method"):
        type("Shadow", (Model,), {"name": "shadow", "_evaluate": lambda self, b: {}})


def test_family_fixed_must_name_parameters() -> None:
    with pytest.raises(TypeError, match="family_fixed names 'nope'"):
        type("BadFixed", (_Toy,), {"name": "bad-fixed", "family": "kv-object", "family_fixed": {"nope": 1}})


def test_query_families_say_queries() -> None:
    assert families.family("vector-search").usd_per_work_label == "$ per million queries"
