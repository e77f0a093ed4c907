from __future__ import annotations

import numpy as np

from dse.model import Batch, Metric, Model, Param

#: Fitted: the mean of the two anchors' implied slopes (see cv.py).
SLOPE = 2.0


class Line(Model):
    name = "toy-line"
    params = (Param("x", 1.0, "assumption: test", bounds=(0.0, 100.0)),
              Param("slope", SLOPE, "fitted: to anchors a1 and a2 (toycv/cv.py)", bounds=(0.0, 10.0)))
    metrics = (Metric("y"),)

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        return {"y": p.slope * p.x}
