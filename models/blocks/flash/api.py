"""The flash block's public functions (times in us, rates in IOPS, sizes in bytes); the
package docstring (``models.blocks.flash``) describes the model."""

from __future__ import annotations

import numpy as np

from dse.units import GB, US_PER_S
from models.blocks.flash.closed_solve import closed_rate_latency, closed_solve
from models.blocks.flash.configs import QUEUE_FETCH_SIZE, config_arrays, constants
from models.blocks.flash.open_loop import open_fast
from models.blocks.flash.request import pattern_seq, point_shape, request_terms, unloaded


def unloaded_latency_us(cfg, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0) -> np.ndarray:
    """Mean latency (us) of an isolated request (QD1, no queueing; no calibrated constant
    enters it, so it takes no ``cal``)."""
    a = config_arrays(cfg)
    return unloaded(a, request_terms(a, size_b, read_frac, pattern_seq(pattern), wa))


def saturation_iops(cfg, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0, cal=None,
                    above_iops=None) -> np.ndarray:
    """Sustained throughput (IOPS): the closed-loop throughput with the device's NVMe
    fetch window (``queue_fetch_size`` requests) full -- the most an overloaded open loop
    gets, because the device fetches no more requests than that at a time.

    ``above_iops`` (per point): where the throughput exceeds it, +inf instead, decided by
    one evaluation of the solver's map -- for a model that needs the SSD's throughput
    only where it is below another bound (a link, a processor)."""
    k = constants(cal)
    a = config_arrays(cfg)
    r = request_terms(a, size_b, read_frac, pattern_seq(pattern), wa)
    qd = np.asarray(a.get("fetch", QUEUE_FETCH_SIZE), np.float64)
    if above_iops is None:
        x, _ = closed_rate_latency(a, r, qd, k)
    else:
        above = np.asarray(above_iops, np.float64) / US_PER_S
        x = closed_solve(a, r, qd, k, np.broadcast_shapes(point_shape(a, r, qd), above.shape), above)
    return x * US_PER_S


def saturation_bw_gbps(cfg, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0, cal=None) -> np.ndarray:
    """:func:`saturation_iops` x request size, in GB/s."""
    return saturation_iops(cfg, size_b, read_frac, pattern, wa=wa, cal=cal) * np.asarray(size_b, float) / GB


def closed_loop(cfg, qd, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0, cal=None):
    """Closed loop at queue depth ``qd``: (IOPS, mean latency us)."""
    k = constants(cal)
    a = config_arrays(cfg)
    r = request_terms(a, size_b, read_frac, pattern_seq(pattern), wa)
    x, lat = closed_rate_latency(a, r, qd, k)
    return x * US_PER_S, lat


def open_loop_latency_us(cfg, iops, size_b=4096, read_frac=1.0, pattern="random", *, wa=1.0, cal=None) -> np.ndarray:
    """Mean latency (us) at an offered Poisson load of ``iops``; inf where a chip, a
    channel or a PCIe direction is at or above saturation."""
    k = constants(cal)
    a = config_arrays(cfg)
    r = request_terms(a, size_b, read_frac, pattern_seq(pattern), wa)
    lam = np.asarray(iops, np.float64) / US_PER_S
    lat, over = open_fast(a, r, lam, k, point_shape(a, r, lam))
    return np.where(over, np.inf, lat)
