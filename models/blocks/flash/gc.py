"""Garbage collection of the flash block: write amplification of greedy / random /
d-choices victim selection under uniform random writes, and the GC time per host page."""

from __future__ import annotations

import numpy as np

from dse.errors import DseError
from models.blocks.flash.configs import PROG_CMD_US, READ_CMD_US
from models.blocks.numeric import f64, where


def gc_write_amplification(op_ratio=0.07, fill=1.0, policy="greedy", d=8) -> np.ndarray:
    """Write amplification of GC under uniform random writes.

    ``op_ratio``: spare / physical capacity (MQSim's Overprovisioning_Ratio); ``fill``:
    fraction of the logical space holding live data.  ``a = 1 / ((1 - op) fill)`` physical
    pages per live page.  greedy: ``WA = 1 / (1 - u)``, ``u = -W(-a e^{-a}) / a``
    (Desnoyers 2012; Van Houdt 2013, d -> inf); random: ``WA = a / (a - 1)``; d_choices:
    ``WA_greedy + (WA_random - WA_greedy) / d`` (approximation)."""
    from scipy.special import lambertw

    op = np.asarray(op_ratio, float)
    fill = np.asarray(fill, float)
    a = 1.0 / np.maximum((1.0 - op) * fill, 1e-9)
    a = np.maximum(a, 1.0 + 1e-9)
    u = np.real(-lambertw(-a * np.exp(-a), 0) / a)
    wa_g = 1.0 / np.maximum(1.0 - u, 1e-12)
    wa_r = a / (a - 1.0)
    pol = str(policy).lower()
    if pol == "greedy":
        return wa_g
    if pol == "random":
        return wa_r
    if pol in ("d_choices", "rga", "d-choices"):
        return wa_g + (wa_r - wa_g) / max(float(d), 1.0)
    raise DseError(f"GC policy {policy!r} is not allowed; allowed: greedy, random, d_choices")


def gc_us_per_page(wa, tr, tp, xt, tbers, pages_per_block):
    """Garbage-collection time per host page written (us) at write amplification ``wa``
    (wa > 1, a drive in steady state): wa - 1 page moves (read + transfer out and in +
    program) and the erase share of the wa pages written."""
    return where(wa > 1.0, (wa - 1.0) * (READ_CMD_US + tr + 2 * xt + PROG_CMD_US + tp)
                    + wa * f64(tbers) / f64(pages_per_block), 0.0)
