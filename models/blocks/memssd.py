"""Memory-semantic SSD block: an SSD used as byte-addressable memory (a CXL Type-3
"CXL-SSD", or a PCIe SSD whose BAR is mapped as memory), and the host-side stall model
that turns its latency into execution time.

The device, as both CXL-SSD studies describe it (research/cxl-ssd.md §1, Table 1a;
research/cxl-prefetch.md §1, Table 2): an SSD controller with an internal DRAM that caches
lines of a slow back end (Z-NAND, an Optane-class PMEM, or DRAM), reached by 64 B
memory requests.  A read that leaves the host caches costs

    host path  ->  link round trip  ->  controller  ->  internal DRAM
                                                    \\-> on a miss: back-end read (+ fill)

This module composes the shared blocks rather than repeating them:

* :func:`ssd_dram_timing` / :func:`ssd_dram_hit_ns` -- the internal DRAM (both papers
  give tRCD = tRP = 9.1 ns, tRAS = 19 ns) through the ``dram`` block;
* :func:`host_dram_timing` / :func:`host_dram_ns` -- a host DDR channel given only its
  tRCD = tRP = tCL (ns), through the ``dram`` block;
* :func:`backend_read_ns` -- one back-end read of ``fill_b`` bytes on a flash
  configuration of the ``flash`` block (Z-NAND, Optane-class), plus firmware time;
* :func:`device_read_ns` -- internal-DRAM hit or miss: ``cache.amat_ns`` of the two paths;
* :func:`cxl_path_ns` -- the CXL.mem round trip of the ``link`` block with switch levels;
* :func:`stall_time_ns` -- execution time per instruction: core time plus the misses'
  latency divided by the memory-level parallelism (the usual CPI-stack form,
  ``CPI = CPI_core + MPKI/1000 x latency / MLP``, cxl-ssd.md §2 item 2, cxl-prefetch.md M1);
* :func:`powerlaw_hit_rate` -- the cache block's working-set (Zipf) hit rate of a level
  that sits below other caches (the share of the accesses that miss the upper levels and
  hit this one).

Everything is vectorized; times in ns unless a name says otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dse.units import NS_PER_US
from models.blocks import cache, dram, flash, link

ArrayLike = Any

# ----------------------------------------------------------------------------- internal DRAM
#: The SSD-internal DRAM of both studies: tRP = tRCD = 9.1 ns, tRAS = 19 ns (CXL-SSD
#: Table 1a, research/cxl-ssd.md §3 ssd_dram_trp_trcd; ExPAND Table 2, research/cxl-prefetch.md
#: §3 ssd_dram_timing).  CL is not given; assumption: CL = tRCD (the usual x-x-x speed bin).
SSD_DRAM_TRCD_NS = 9.1
SSD_DRAM_TRAS_NS = 19.0
#: The DDR4-3200 organisation of the dram block carries these timings (the papers name no
#: standard; assumption: a DDR4 part, the common SSD-controller DRAM).
SSD_DRAM_BASE = "DDR4-3200"


def _cycles(ns: float, base: dram.DramTiming) -> float:
    return round(ns / base.tck_ns)


def ssd_dram_timing() -> dram.DramTiming:
    """dram-block timing set of the SSD-internal DRAM (9.1-9.1-9.1 ns, tRAS 19 ns)."""
    base = dram.timing(SSD_DRAM_BASE)
    c = _cycles(SSD_DRAM_TRCD_NS, base)
    return dram.timing(base, cl=c, trcd=c, trp=c, tras=_cycles(SSD_DRAM_TRAS_NS, base))


def host_dram_timing(t_ns: float) -> dram.DramTiming:
    """dram-block timing set of a host DDR4 channel given tRCD = tRP = tCL = ``t_ns``."""
    base = dram.timing(SSD_DRAM_BASE)
    c = _cycles(t_ns, base)
    return dram.timing(base, cl=c, trcd=c, trp=c)


def ssd_dram_hit_ns() -> float:
    """Idle latency (ns) of a random 64 B access to the SSD-internal DRAM (dram block)."""
    return float(dram.idle_latency_ns(ssd_dram_timing(), "random"))


def host_dram_ns(t_ns: float) -> float:
    """Idle latency (ns) of a random 64 B read on the host DDR channel (dram block)."""
    return float(dram.idle_latency_ns(host_dram_timing(t_ns), "random"))


# ----------------------------------------------------------------------------- back end
#: Flash-block configurations of the two non-DRAM back ends.  Z-NAND: the Z-SSD class
#: configuration (tR 3 us, tPROG 100 us, tBERS 1 ms, as both studies give); PMEM: the
#: Optane-class configuration (ExPAND's P5800X).
BACKENDS = {"znand": "znand_ssd", "pmem": "optane_like"}
#: The back end of a CXL-SSD sits behind the controller's internal bus, not behind a host
#: PCIe link: the flash block's host-link station is made negligible (assumption: an
#: on-chip bus far faster than one flash channel).
INTERNAL_BUS_LANE_GBPS = 1000.0


def backend_config(kind: str = "znand", **overrides: Any) -> flash.FlashConfig:
    """Flash-block configuration of a back end (``znand`` or ``pmem``) as seen from the
    SSD controller, with optional field overrides (e.g. ``channel_gbps``)."""
    cfg = flash.config(BACKENDS[kind], pcie_lane_gbps=INTERNAL_BUS_LANE_GBPS)
    return flash.config(cfg, **overrides) if overrides else cfg


def backend_read_ns(cfg: flash.FlashConfig, fill_b: ArrayLike = 64.0, firmware_ns: ArrayLike = 0.0) -> np.ndarray:
    """One back-end read (ns) of ``fill_b`` bytes (a 64 B sector or a whole page): the
    flash block's unloaded read path (tR + channel transfer) plus ``firmware_ns`` of
    controller firmware on the miss path (FTL lookup, flash command issue)."""
    return flash.unloaded_latency_us(cfg, fill_b, 1.0) * NS_PER_US + np.asarray(firmware_ns, dtype=np.float64)


def backend_iops(cfg: flash.FlashConfig, size_b: ArrayLike = 64.0, read_frac: ArrayLike = 1.0,
                 pattern: str = "random") -> np.ndarray:
    """Saturation rate (operations/s) of back-end operations of ``size_b`` bytes at a read
    fraction (writes are page programs; ``sequential`` ones use multi-plane programs),
    from the flash block."""
    return flash.saturation_iops(cfg, size_b, read_frac, pattern)


# ----------------------------------------------------------------------------- device
def device_read_ns(hit_frac: ArrayLike, ctrl_ns: ArrayLike, dram_ns: ArrayLike, miss_ns: ArrayLike) -> np.ndarray:
    """Device-side read time (ns): controller + internal DRAM on a hit; controller +
    internal DRAM lookup + back-end read on a miss (cache block ``amat_ns``)."""
    ctrl = np.asarray(ctrl_ns, dtype=np.float64)
    d = np.asarray(dram_ns, dtype=np.float64)
    return ctrl + cache.amat_ns(hit_frac, d, d + np.asarray(miss_ns, dtype=np.float64))


def cxl_path_ns(gen: ArrayLike, lanes: ArrayLike, flit_mode: ArrayLike, n_switches: ArrayLike = 0,
                switch_ns: ArrayLike = link.CXL_SWITCH_NS, port_ns: ArrayLike = link.CXL_PORT_NS) -> np.ndarray:
    """CXL.mem round trip (ns) of a 64 B read through ``n_switches`` switch levels
    (link block: ports, switches, FEC, flit serialization, flight)."""
    return link.cxl_round_trip_ns(gen, lanes, flit_mode, n_switches=n_switches, switch_ns=switch_ns, port_ns=port_ns)


# ----------------------------------------------------------------------------- host
def stall_time_ns(cpi_core: ArrayLike, freq_ghz: ArrayLike, misses_per_instr: ArrayLike,
                  latency_ns: ArrayLike, mlp: ArrayLike = 1.0) -> np.ndarray:
    """Execution time per instruction (ns): ``CPI_core / f`` plus each miss's latency
    divided by the memory-level parallelism (misses overlapped per stall)."""
    f = np.asarray(freq_ghz, dtype=np.float64)
    return (np.asarray(cpi_core, dtype=np.float64) / f
            + np.asarray(misses_per_instr, dtype=np.float64) * np.asarray(latency_ns, dtype=np.float64)
            / np.asarray(mlp, dtype=np.float64))


def powerlaw_hit_rate(cache_b: ArrayLike, above_b: ArrayLike, footprint_b: ArrayLike, alpha: ArrayLike,
                      granularity_b: ArrayLike = cache.LINE_B) -> np.ndarray:
    """Hit rate of a cache level of ``cache_b`` bytes for the accesses that missed the
    levels above it (``above_b`` bytes in all, inclusive), under the cache block's
    working-set model with Zipf(``alpha``) reuse over ``footprint_b``:
    ``(W(above + cache) - W(above)) / (1 - W(above))`` with ``W`` = working_set_hit_rate."""
    above, both = cache.working_set_hit_rates(
        (above_b, np.asarray(above_b, dtype=np.float64) + np.asarray(cache_b, dtype=np.float64)),
        footprint_b, alpha, granularity_b)
    return np.minimum(np.maximum((both - above) / np.maximum(1.0 - above, 1e-12), 0.0), 1.0)  # np.clip's values
