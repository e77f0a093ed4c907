"""Two toy kv-object models for the comparison tests: a fast, dear box and a slow,
cheap one, so each wins somewhere."""

from __future__ import annotations

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params


class _Box(Model):
    boundary = "one toy box"
    family = None
    params = (
        Param("drives", 1.0, "assumption: test", bounds=(1.0, 64.0), integer=True),
        Param("design", "plain", "assumption: test", choices=("plain", "fancy")),
    )
    metrics = (Metric("op_latency_us", "min"),)
    OPS_PER_DRIVE = 1.0
    USD_PER_DRIVE = 1.0
    LAT_US = 1.0

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        fancy = p.is_("design", "fancy")
        ops = p.drives * self.OPS_PER_DRIVE * 4096.0 / np.maximum(p.value_b, 4096.0) * np.where(fancy, 1.5, 1.0)
        return {
            "work_per_s": ops,
            "capex_usd": 1000.0 + p.drives * self.USD_PER_DRIVE * np.where(fancy, 1.2, 1.0),
            "power_w": 100.0 + 10.0 * p.drives,
            "op_latency_us": self.LAT_US + p.value_b / 1e3,
            "infeasible": {"too many drives for a small value": (p.drives > 32) & (p.value_b < 128)},
        }


class FastBox(_Box):
    name = "toy-fast"
    family = "kv-object"
    params = (*_Box.params, *knob_params("kv-object"))
    OPS_PER_DRIVE, USD_PER_DRIVE, LAT_US = 800_000.0, 2000.0, 20.0


class SlowBox(_Box):
    name = "toy-slow"
    family = "kv-object"
    params = (*_Box.params, *knob_params("kv-object"))
    OPS_PER_DRIVE, USD_PER_DRIVE, LAT_US = 100_000.0, 150.0, 90.0


class NoFamily(Model):
    name = "toy-none"
    params = (Param("x", 1.0, "assumption: test", bounds=(0.0, 2.0)),)
    metrics = (Metric("y_ns", "min"),)

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        return {"y_ns": p.x}
