"""Architecture models and the shared blocks they are built from.

Each architecture package declares itself in its ``__init__.py`` (``ARCH =
dse.architecture.Architecture(...)``: its models, `dse optimize` problems, claims, figures,
calibration and cv modules).  The tables below are derived from those descriptors on first
use, reading nothing heavier than the descriptors (a model module is imported only when
that model is used, so listing models stays fast):

* ``ARCHITECTURES``: ``"models.<pkg>" -> Architecture``;
* ``REGISTRY``: model name -> ``"module:Class"``;
* ``OPTIMIZE``: `dse optimize` problem -> ``"module:function"``.

Third-party packages add models through the ``cxl_dse.models`` entry-point group.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

DERIVED = ("ARCHITECTURES", "REGISTRY", "OPTIMIZE")


def __getattr__(name: str) -> Any:
    if name not in DERIVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from dse.architecture import discover, flat_table

    archs = discover(Path(__file__).parent, __name__)
    tables = {"ARCHITECTURES": archs, "REGISTRY": flat_table(archs, "models"), "OPTIMIZE": flat_table(archs, "optimize")}
    globals().update(tables)
    return tables[name]
