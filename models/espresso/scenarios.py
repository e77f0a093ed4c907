"""The article's experiments as model inputs (shared by calibration.py, figures.py, optimize.py
and the tests; claims.yaml spells the same lists out).

* ``MICROBENCH``: Fig 10, 64/128/256 KB sequential and random reads and writes at QD64
  (digest section 5; the averages quoted in the text are read here as the mean over these
  twelve points).
* ``LATENCY_4K``: Fig 11, 4 KB random read at QD1.
* ``TRACES``: Fig 12, the 14 production traces of Table 3.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.espresso.data import TRACES

MB_SIZES_KIB = (64.0, 128.0, 256.0)
MB_PATTERNS = ("sequential", "random")


def _microbench() -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {"pattern": [], "read_frac": [], "io_size_kib": []}
    for pattern in MB_PATTERNS:
        for rf in (1.0, 0.0):
            for kib in MB_SIZES_KIB:
                out["pattern"].append(pattern)
                out["read_frac"].append(rf)
                out["io_size_kib"].append(kib)
    return out


MICROBENCH: dict[str, Any] = {"workload": "micro", "qd": 64.0, **_microbench()}
MICROBENCH_READS: dict[str, Any] = {
    "workload": "micro",
    "qd": 64.0,
    "pattern": [p for p in MB_PATTERNS for _ in MB_SIZES_KIB],
    "read_frac": 1.0,
    "io_size_kib": list(MB_SIZES_KIB) * len(MB_PATTERNS),
}
LATENCY_4K: dict[str, Any] = {"workload": "micro", "pattern": "random", "read_frac": 1.0, "io_size_kib": 4.0, "qd": 1.0}
UTIL_256K: dict[str, Any] = {"workload": "micro", "pattern": "sequential", "read_frac": 1.0, "io_size_kib": 256.0, "qd": 64.0}
REAL: dict[str, Any] = {"workload": list(TRACES)}
TENCENT: dict[str, Any] = {"workload": ["tencent0", "tencent1", "tencent2"]}
#: Fig 13: Ali-0 on 2 TB SSDs (the BOM figure's capacity).
FIG13: dict[str, Any] = {"workload": "ali0", "capacity_tb": 2.0}


def run(design: str, scenario: dict[str, Any], **overrides: Any) -> dict[str, np.ndarray]:
    """Evaluate the espresso model for one design on a scenario (lists broadcast)."""
    from dse import registry

    model = registry.get("espresso")
    return model.run({"design": design, **scenario, **overrides})


def mean_ratio(design: str, base: str, scenario: dict[str, Any], metric: str = "throughput_gbps", **overrides: Any) -> float:
    """Mean over the scenario's points of ``design``'s metric over ``base``'s."""
    a = run(design, scenario, **overrides)[metric]
    b = run(base, scenario, **overrides)[metric]
    return float(np.mean(a / b))
