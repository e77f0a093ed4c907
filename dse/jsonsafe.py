"""Strict JSON for the CLI's ``--json`` outputs: NaN and infinities become ``null``
(JSON has no such numbers; Python's default writes ``NaN``, which parsers refuse), numpy
scalars and arrays become plain numbers and lists, anything else its ``str``."""

from __future__ import annotations

import json
import math
from typing import Any


def sanitize(obj: Any) -> Any:
    """``obj`` with every non-finite float replaced by None, recursively."""
    if isinstance(obj, bool) or obj is None or isinstance(obj, (str, int)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): sanitize(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [sanitize(v) for v in obj]
    tolist = getattr(obj, "tolist", None)  # numpy scalars and arrays
    if callable(tolist):
        return sanitize(tolist())
    return str(obj)


def dumps(obj: Any, indent: int | None = 2) -> str:
    return json.dumps(sanitize(obj), indent=indent, allow_nan=False)
