"""Offload tax: handing a query batch to the NMAs and getting the top-K back (digest §2
mechanism 5, Fig. 6).

The context moved per offload is the batch's query vectors plus one 64 B command line
(``ctx_b``); the results are every active NMA's partial top-K list of (score, id) pairs
(``result_b``).  Three CPU-IKS interfaces, built from the link block's constants:

* **Ring buffer** (descriptor ring + DMA + doorbell): an NVMe-style queue pair -- the link
  block's ``nvme_command_breakdown`` for a host-to-device transfer of the context
  (user-level polled submission, doorbell, descriptor fetch, PRP-list fetch beyond two
  pages, DMA read, completion entry, polling), plus the results DMA'd back as posted
  writes.  Two implementations of its DMA steps (``RING_PATHS``):

  - ``pcie``: a PCIe device's own DMA engine (link block round trips and posted writes);
  - ``dsa_emulation``: the article's measurement platform, where no device exists and the
    ring's DMA engine is the host's Intel Data Streaming Accelerator (digest §1).  The
    same protocol steps run, but each device-side DMA step (descriptor fetch, context
    read, results write, completion entry) is one synchronous DSA operation: descriptor
    submission (ENQCMD / MOVDIR64B to the work-queue portal), DSA's descriptor fetch and
    address translation, the copy, the completion record and its detection by polling.
    A DSA operation costs ``DSA_OP_NS + bytes / DSA_GBPS``, fitted to Intel's published
    DSA memcpy latencies (``dsa.csv``); one descriptor moves a whole contiguous buffer,
    so there is no PRP-list step.  The host side (user-level submission, doorbell store,
    poll detection, completion handling) is the same as on ``pcie``.
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
path and the device's coherence engine.  The emulation ran the CXL paths across the
sockets' UPI link (remote-socket accesses of a few hundred ns, the same order as this
round trip), so the CXL paths need no separate emulation variant.
"""

from __future__ import annotations

import numpy as np

from dse.units import CACHELINE_B, NS_PER_US
from models.blocks import link
from models.iks.rag import read_csv

INTERFACES = ("cxl_cache", "cxl_mem", "ring_buffer")
#: Codes of the interfaces (index into INTERFACES, the ``interface`` parameter's choices).
CXL_CACHE, CXL_MEM, RING_BUFFER = (INTERFACES.index(k) for k in ("cxl_cache", "cxl_mem", "ring_buffer"))
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
#: What executes the ring buffer's DMA steps (see the module docstring).
RING_PATHS = ("pcie", "dsa_emulation")
#: Code of the DSA emulation (index into RING_PATHS, the ``ring_path`` parameter's choices).
RING_PCIE, DSA_EMULATION = RING_PATHS.index("pcie"), RING_PATHS.index("dsa_emulation")
#: Device-side DMA steps of one ring-buffer offload on the DSA emulation: descriptor fetch,
#: context read, results write, completion entry -- the DMA steps of the ``pcie`` path's
#: queue-pair protocol (link block ``nvme_command_breakdown``: sqe_fetch, data, cqe, plus
#: the results), each one DSA operation.
DSA_STEPS = 4


def _fit_dsa() -> tuple[float, float]:
    """(fixed ns per DSA operation, GB/s) from a least-squares line through the DSA memcpy
    latencies of ``dsa.csv`` (bucket midpoints, rows marked used)."""
    rows = [r for r in read_csv("dsa.csv") if r["used"] == "1"]
    size_b = np.array([float(r["bucket_lo_b"]) for r in rows]) + 2048.0
    lat_ns = np.array([float(r["memcpy_us"]) for r in rows]) * NS_PER_US
    slope_ns_per_b, fixed_ns = np.polyfit(size_b, lat_ns, 1)
    return float(fixed_ns), float(1.0 / slope_ns_per_b)  # B/ns = GB/s


#: Fixed latency of one synchronous DSA operation (submission + processing + completion
#: record + poll), ns, and DSA copy bandwidth, GB/s.  Fitted to Intel's DTO sample
#: statistics (dsa.csv: 8..100 KiB memcpy on DSA, 1.19..3.76 us): ~860 ns and ~35 GB/s.
#: Below 8 KiB (descriptors, completion entries, one query) the fixed part is
#: extrapolated; the Kuper et al. DSA characterization (ASPLOS'24) likewise finds that a
#: synchronous offload only beats a CPU copy from a few KiB up, i.e. a fixed cost of the
#: order of a microsecond.
DSA_OP_NS, DSA_GBPS = _fit_dsa()


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


def ring_dsa_ns(ctx_b, res_b) -> np.ndarray:
    """Ring-buffer offload (ns) on the article's DSA emulation: the ``pcie`` path's host
    steps plus ``DSA_STEPS`` DSA operations moving descriptor, context, results and
    completion entry."""
    stack = link.NVME_STACKS.index(RING_STACK)
    host_ns = (link.NVME_STACK_SUBMIT_NS[stack] + link.PCIE_POSTED_WRITE_NS
               + link.NVME_COMPLETION_NS[link.NVME_COMPLETION_MODES.index("polling")]
               + link.NVME_STACK_COMPLETE_NS[stack])
    moved_b = link.NVME_SQE_B + ctx_b + res_b + link.NVME_CQE_B
    return host_ns + DSA_STEPS * DSA_OP_NS + moved_b / DSA_GBPS


def tax_ns(interface_code, ctx_b, res_b, gen, lanes, ring_path=RING_PCIE, link_ix=None) -> np.ndarray:
    """Offload tax (ns) of interface ``INTERFACES[interface_code]`` for the given context
    and result sizes on a PCIe/CXL link of generation ``gen`` (5, 6) and ``lanes``; the
    ring buffer's DMA steps run on ``RING_PATHS[ring_path]``.  ``link_ix``: ``combo(gen,
    lanes)`` when the caller has it."""
    c = combo(gen, lanes) if link_ix is None else link_ix
    rt = RT_NS[c]
    raw = RAW_GBPS[c]  # GB/s = B/ns
    lines = np.ceil(ctx_b / CACHELINE_B)
    cache = CXL_CACHE_RTS * rt + (ctx_b + res_b) / raw
    mem = lines * rt / FILL_BUFFERS + CXL_MEM_RTS * rt + res_b / raw
    code = np.asarray(interface_code)
    if not np.any(code == RING_BUFFER):  # the ring's link-block path is most of the cost: only when used
        return np.where(code == CXL_CACHE, cache, mem)
    ring = ring_ns(ctx_b, res_b, gen, lanes, ring_path)
    return np.where(code == CXL_CACHE, cache, np.where(code == CXL_MEM, mem, ring))


def ring_ns(ctx_b, res_b, gen, lanes, ring_path=RING_PCIE) -> np.ndarray:
    """Ring-buffer offload (ns) with its DMA steps on ``RING_PATHS[ring_path]``: the link
    block's queue-pair protocol and the results' posted writes, or the DSA emulation."""
    dsa = np.asarray(ring_path) == DSA_EMULATION
    if np.all(dsa):
        return ring_dsa_ns(ctx_b, res_b)
    ring_in = link.nvme_command_overhead_ns(ctx_b, gen, lanes, write=True, completion="polling", stack=RING_STACK)
    ring = ring_in + link.PCIE_POSTED_WRITE_NS + res_b / link.pcie_dma_bw_gbps(gen, lanes, res_b)
    return np.where(dsa, ring_dsa_ns(ctx_b, res_b), ring)
