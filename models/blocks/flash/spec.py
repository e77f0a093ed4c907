"""Batch-native spec of the flash block: the block's dict of per-point arrays from a
model's columns (:func:`arrays`, :func:`from_batch`) and the reusable parameter group a
model composes to expose the SSD's geometry as knobs (:func:`params`).

A model that declares ``flash.params("ssd_")`` gets the Params ``ssd_channels``,
``ssd_chips_per_channel``, ... and builds the block's input with
``flash.from_batch(p, "ssd_")``; every column left out comes from the base config."""

from __future__ import annotations

from typing import Any

import numpy as np

from dse.errors import DseError
from dse.units import GB, US_PER_S
from models.blocks.flash.configs import FlashConfig, config, config_arrays

#: Config fields a model may give per point, the parameter group's knobs:
#: (name, bounds, integer, what it is).
COLUMNS: tuple[tuple[str, tuple[float, float], bool, str], ...] = (
    ("channels", (1, 64), True, "flash channels"),
    ("chips_per_channel", (1, 64), True, "flash chips (packages) per channel"),
    ("dies_per_chip", (1, 16), True, "dies per chip"),
    ("planes_per_die", (1, 16), True, "planes per die (multi-plane commands)"),
    ("channel_gbps", (0.05, 20.0), False, "flash channel bandwidth, GB/s"),
    ("pcie_lanes", (1, 32), True, "host PCIe lanes"),
    ("pcie_lane_gbps", (0.25, 16.0), False, "host PCIe bandwidth per lane after line encoding, GB/s"),
)
COLUMN_NAMES = tuple(c[0] for c in COLUMNS)
#: The config whose values the group's defaults and the left-out columns take.
DEFAULT_BASE = "espresso_ssd"


def arrays(cfg: str | FlashConfig = DEFAULT_BASE, *, page_spread: bool = True, read_rounds: Any = None,
           p_map: Any = None, channel_mbps: Any = None, **columns: Any) -> dict[str, Any]:
    """The block's dict form (``config_arrays``) of ``cfg`` with the config fields in
    ``columns`` (:data:`COLUMN_NAMES`) given per point (scalars or arrays).

    ``channel_mbps``: the channel bandwidth in MB/s (bytes per us, the block's own unit)
    instead of ``channel_gbps``; ``p_map``: the CMT-miss probability per random request
    instead of the config's; ``read_rounds``: MQSim's read rounds on / off;
    ``page_spread=False``: every page at the mean tR / tPROG of the page-type mix (no
    LSB / CSB / MSB spread in the service times)."""
    unknown = sorted(set(columns) - set(COLUMN_NAMES))
    if unknown:
        raise DseError(f"flash columns {unknown} are not allowed; allowed: {', '.join(COLUMN_NAMES)}")
    c = config(cfg)
    a = dict(config_arrays(c))
    f = np.float64
    col = {name: np.asarray(columns.get(name, getattr(c, name)), f) for name in COLUMN_NAMES}
    if {"channels", "chips_per_channel", "dies_per_chip"} & set(columns):
        a["units"] = col["channels"] * col["chips_per_channel"] * (col["dies_per_chip"] if c.dies_overlap else 1.0)
        a["channels"] = col["channels"]
        a["dies"] = 1.0 if c.dies_overlap else col["dies_per_chip"]
    if "planes_per_die" in columns:
        a["planes"] = col["planes_per_die"]
    if channel_mbps is not None:
        a["ch_bw"] = np.asarray(channel_mbps, f)  # MB/s is bytes per us
    elif "channel_gbps" in columns:
        a["ch_bw"] = col["channel_gbps"] * GB / US_PER_S
    if {"pcie_lanes", "pcie_lane_gbps"} & set(columns):
        a["pcie_bw"] = col["pcie_lane_gbps"] * col["pcie_lanes"] * GB / US_PER_S
        a["lanes"] = col["pcie_lanes"]
    if p_map is not None:
        a["p_map"] = p_map
    if read_rounds is not None:
        a["rounds"] = np.where(np.asarray(read_rounds, bool), 1.0, 0.0)
    if not page_spread:
        a["tr2_mean"], a["tprog2_mean"] = np.square(a["tr_mean"]), np.square(a["tprog_mean"])
    return a


def from_batch(p: Any, prefix: str = "", base: str | FlashConfig = DEFAULT_BASE, **fixed: Any) -> dict[str, Any]:
    """The block's dict form for the points of a model's Batch ``p``: the columns
    ``<prefix><field>`` it has (fields of :data:`COLUMN_NAMES`, as :func:`params`
    declares them), the rest from ``base``; ``fixed``: further arguments of
    :func:`arrays` (``p_map``, ``read_rounds``, ``page_spread``, ...)."""
    cols = {name: p[prefix + name] for name in COLUMN_NAMES if prefix + name in p}
    return arrays(base, **cols, **fixed)


def params(prefix: str = "", base: str | FlashConfig = DEFAULT_BASE, **default_overrides: Any) -> tuple:
    """The flash block's parameter group: one ``dse.model.Param`` per field of
    :data:`COLUMNS`, named ``<prefix><field>``, defaulting to ``base``'s value with its
    source.  ``default_overrides``: ``field=(value, source)`` for a model's own default
    (a bare value is taken only where it equals the base's)."""
    from dse.model import Param

    c = config(base)
    unknown = sorted(set(default_overrides) - set(COLUMN_NAMES))
    if unknown:
        raise ValueError(f"flash.params: unknown fields {unknown}; allowed: {', '.join(COLUMN_NAMES)}")
    out = []
    for name, bounds, integer, doc in COLUMNS:
        value, source = getattr(c, name), f"flash block config {c.name}: {c.source}"
        if name in default_overrides:
            given = default_overrides[name]
            if isinstance(given, tuple):
                value, source = given
            elif given != value:
                raise ValueError(f"flash.params: {name}={given!r} differs from {c.name}'s {value!r}; "
                                 "give (value, source)")
        out.append(Param(prefix + name, value, source, bounds=bounds, integer=integer, doc=doc))
    return tuple(out)
