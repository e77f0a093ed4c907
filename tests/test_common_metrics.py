"""Every architecture model speaks one scale: a workload family, the common metrics at
every point, a stated cost boundary (issue: one scale for every architecture)."""

from __future__ import annotations

import numpy as np
import pytest

from dse import families, registry

MODELS = registry.names()


@pytest.mark.parametrize("name", MODELS)
def test_model_serves_a_family_and_states_its_boundary(name: str) -> None:
    cls = registry.model_class(name)
    assert cls.family in families.FAMILIES, f"{name} declares no workload family"
    assert len(cls.boundary) > 20
    metrics = {m.name for m in cls.metrics}
    assert set(families.COMMON_METRICS) | {families.family(cls.family).latency_metric} <= metrics


@pytest.mark.parametrize("name", MODELS)
def test_common_metrics_at_the_default_point(name: str) -> None:
    model = registry.get(name)
    ev = model.run_full()
    assert ev.feasible[0], f"{name} default point infeasible: {ev.reason_of(0)}"
    m = {k: float(v[0]) for k, v in ev.metrics.items()}
    assert m["work_per_s"] > 0
    assert m["capex_usd"] >= 0 and m["power_w"] >= 0
    assert m["tco_usd"] >= m["capex_usd"] and m["tco_usd"] > 0
    assert np.isfinite(m["usd_per_work"]) and m["usd_per_work"] > 0
    assert m[families.family(model.family).latency_metric] > 0


@pytest.mark.parametrize("name", MODELS)
def test_doubling_years_adds_only_the_running_costs(name: str) -> None:
    model = registry.get(name)
    five, ten = model.point(years=5.0), model.point(years=10.0)
    for k in ("work_per_s", "capex_usd", "power_w"):
        assert ten[k] == pytest.approx(five[k], rel=1e-12)
    running = five["tco_usd"] - five["capex_usd"]
    assert ten["tco_usd"] - five["tco_usd"] == pytest.approx(running, rel=1e-9)


@pytest.mark.parametrize("name", MODELS)
def test_dearer_electricity_raises_tco_by_the_energy_bill(name: str) -> None:
    model = registry.get(name)
    base = model.point(usd_per_kwh=0.1, years=5.0, pue=1.5)
    dear = model.point(usd_per_kwh=0.2, years=5.0, pue=1.5)
    energy = base["power_w"] * 5.0 * 8766.0 * 1.5 / 1000.0 * 0.1
    assert dear["tco_usd"] - base["tco_usd"] == pytest.approx(energy, rel=1e-9)
