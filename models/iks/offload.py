"""Offload tax: handing a query batch to the NMAs and getting the top-K back (digest §2
mechanism 5, Fig. 6).

The context moved per offload is the batch's query vectors plus one 64 B command line
(``ctx_b``); the results are every active NMA's partial top-K list of (score, id) pairs
(``result_b``).  Three CPU-IKS interfaces, built from the link block's constants:

* **Ring buffer** (descriptor ring + DMA + doorbell): an NVMe-style queue pair -- the link
  block's ``nvme_command_breakdown`` for a host-to-device transfer of the context
  (user-level polled submission, doorbell, descriptor fetch, PRP-list fetch beyond two
  pages, DMA read, completion entry, polling), plus the results DMA'd back as posted
  writes.
* **CXL.mem**: the CPU pushes the context with 64 B direct stores (MOVDIR64B); each store
  holds a fill buffer for a CXL round trip, so a core streams ``fill buffers x 64 B`` per
  round trip.  Then a fence and a doorbell store (1.5 round trips), completion found by
  polling an uncached register (1.5 round trips on average) and the results read back
  (one round trip plus their transfer).
* **CXL.cache**: the CPU writes the context into coherent lines the NMA caches; the
  invalidation of the doorbell line notifies the NMA (half a round trip), which pulls the
  lines (one round trip plus their transfer); for completion the NMA takes ownership of
  the flag line (one round trip) and the CPU's next poll misses to the device (one round
  trip, results following at link bandwidth): 3.5 round trips in all.

A CXL round trip is the link block's unloaded CXL round trip plus the host's home-agent
path and the device's coherence engine.
"""

from __future__ import annotations

import numpy as np

from dse.units import CACHELINE_B
from models.blocks import link

INTERFACES = ("cxl_cache", "cxl_mem", "ring_buffer")
#: Command line sent with every offload (corpus id, K, batch, query address), bytes.
#: Assumption: one 64 B line.
COMMAND_B = 64.0
#: Bytes per top-K entry: fp32 score + 32-bit vector id (FAISS returns float + int64; the
#: NMA's list is assumed packed to 8 B).
ENTRY_B = 8.0
#: Host path between the core and the CXL root port, both directions, ns.  Same assumption
#: as cxl-expander's host_path_ns (core, mesh, home agent: local DDR5 idle ~110 ns).
HOST_AGENT_NS = 42.0
#: Device coherence engine (DCOH) and NMA register access per round trip, ns.
#: Assumption: an ASIC controller of 'tens of ns' (CXL-GPU digest), 40 ns as in cxl-expander.
DEVICE_NS = 40.0
#: Fill buffers a core has for MOVDIR64B direct stores.  Source: Intel optimization
#: reference manual, Golden Cove / Raptor Cove (16 L1D fill buffers).
FILL_BUFFERS = 16.0
#: Round trips of each CXL protocol (see the module docstring).
CXL_CACHE_RTS = 3.5
CXL_MEM_RTS = 4.0
#: Host software of the ring-buffer driver: a user-level polled queue (the link block's
#: 'spdk' stack), the class of Intel DSA's user-space submission used in the emulation.
RING_STACK = "spdk"


def context_b(batch, dim, elem_b) -> np.ndarray:
    """Bytes sent per offload: the batch's query vectors plus one command line."""
    return np.asarray(batch, dtype=np.float64) * dim * elem_b + COMMAND_B


def result_b(batch, top_k, lists) -> np.ndarray:
    """Bytes returned per offload: ``lists`` partial top-K lists per query."""
    return np.asarray(batch, dtype=np.float64) * lists * top_k * ENTRY_B


def cxl_round_trip_ns(gen, lanes) -> np.ndarray:
    """One coherent CXL round trip: link block round trip + home agent + device engine."""
    return link.cxl_round_trip_ns(gen, lanes) + HOST_AGENT_NS + DEVICE_NS


#: Link generations and widths the model offers; per-combination link constants are
#: taken from the link block once (index: (gen - 5) * 3 + lanes index).
GENS = (5, 6)
LANES = (4, 8, 16)
_COMBOS = [(g, w) for g in GENS for w in LANES]
RT_NS = np.array([float(cxl_round_trip_ns(g, w)) for g, w in _COMBOS])
RAW_GBPS = np.array([float(link.raw_bw_gbps(g, w)) for g, w in _COMBOS])


def combo(gen, lanes) -> np.ndarray:
    """Index of (gen, lanes) into the per-combination tables."""
    lanes = np.asarray(lanes)
    return (np.asarray(gen) - GENS[0]) * len(LANES) + np.where(lanes == 16, 2, np.where(lanes == 8, 1, 0))


def tax_ns(interface_code, ctx_b, res_b, gen, lanes) -> np.ndarray:
    """Offload tax (ns) of interface ``INTERFACES[interface_code]`` for the given context
    and result sizes on a PCIe/CXL link of generation ``gen`` (5, 6) and ``lanes``."""
    c = combo(gen, lanes)
    rt = RT_NS[c]
    raw = RAW_GBPS[c]  # GB/s = B/ns
    lines = np.ceil(ctx_b / CACHELINE_B)
    cache = CXL_CACHE_RTS * rt + (ctx_b + res_b) / raw
    mem = lines * rt / FILL_BUFFERS + CXL_MEM_RTS * rt + res_b / raw
    ring_in = link.nvme_command_overhead_ns(ctx_b, gen, lanes, write=True, completion="polling", stack=RING_STACK)
    ring = ring_in + link.PCIE_POSTED_WRITE_NS + res_b / link.pcie_dma_bw_gbps(gen, lanes, res_b)
    code = np.asarray(interface_code)
    return np.where(code == 0, cache, np.where(code == 1, mem, ring))
