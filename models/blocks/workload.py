"""Workload block: the work one family job does on a memory or storage system.

``mem_queries_per_s``: the ``mem-analytics`` family's unit of work (``dse.families``).  A
query makes ``accesses_per_query`` cache-line reads that miss the CPU caches (a hash join's
probes, a graph traversal's neighbour reads); ``threads`` threads each keep ``mlp`` misses
in flight, so by Little's law they complete ``threads x mlp / latency`` accesses per
second, capped by the memory's bandwidth over 64 B lines.  Both bounds come from the
architecture model (its access latency and bandwidth at the footprint it serves).

``host_server``: price and wall power of the dual-socket host that runs such a query
(``prices/components.csv``: the server without DRAM and drives, and DRAM per GiB), so
every memory-expansion design carries the same compute; ``HOST_DRAM_CHANNELS``,
``HOST_MAX_DRAM_GIB`` and ``HOST_DEVICE_LANES`` are that host's memory and device limits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dse import units
from models.blocks import cost

#: Cache-line misses per query.  Assumption: a query touching 64 MiB at random (1 Mi lines),
#: e.g. a TPC-H-class hash-join probe phase over a cold table partition.
ACCESSES_PER_QUERY = 1024.0 * 1024.0
#: Threads issuing misses.  Assumption: 2 sockets x 32 cores, one thread each.
THREADS = 64.0
#: Misses in flight per thread.  Assumption: ~10 line fill buffers per core (Intel
#: Golden Cove has 16 L1 fill buffers; pointer-chasing code keeps fewer busy).
MLP = 10.0


def mem_queries_per_s(
    access_latency_ns: Any, bw_gbps: Any, *, accesses_per_query: Any = ACCESSES_PER_QUERY,
    threads: Any = THREADS, mlp: Any = MLP,
) -> np.ndarray:
    """Queries per second: min(latency-bound, bandwidth-bound) access rate over accesses
    per query (vectorized)."""
    lat_s = np.asarray(access_latency_ns, dtype=np.float64) / units.NS_PER_S
    latency_bound = np.asarray(threads) * np.asarray(mlp) / lat_s
    bw_bound = np.asarray(bw_gbps, dtype=np.float64) * units.B_PER_S_PER_GBPS / units.CACHELINE_B
    return np.minimum(latency_bound, bw_bound) / np.asarray(accesses_per_query)


# --- the family host (host_server's dual-socket machine): its memory and device limits, one
# definition for every model that puts local DRAM or memory devices in it
#: DDR5 channels of the host.  Assumption: Intel Xeon 4th gen, 8 channels per socket, 2 sockets.
HOST_DRAM_CHANNELS = 16
#: Most DRAM the host's DIMM slots take.  Assumption: 16 channels x 2 DIMMs x 128 GiB RDIMMs.
HOST_MAX_DRAM_GIB = 4096.0
#: Host lanes for memory devices.  Assumption: 64 of a Xeon 4th gen pair's 2 x 80 PCIe 5.0 /
#: CXL lanes, the rest for NICs and drives.
HOST_DEVICE_LANES = 64
#: The host's own DRAM for the OS, code and stacks when the data sits elsewhere.  Assumption:
#: one 16 GiB RDIMM per socket.
HOST_BASE_DRAM_GIB = 32.0

#: DIMM power per GiB (prices/components.csv ``dram_power_w_per_gib``), for every DRAM a
#: design installs, in the host or in a device, so designs compare on one footing.
DRAM_W_PER_GIB = cost.component_price("dram_power_w_per_gib").value


def host_server(dram_gib: Any = 0.0) -> dict[str, np.ndarray]:
    """``capex_usd`` and ``power_w`` of one dual-socket host holding ``dram_gib`` of DRAM."""
    dram = np.asarray(dram_gib, dtype=np.float64)
    usd = cost.component_price("host_server_2s").value + dram * cost.component_price("dram_ddr5").value
    watts = cost.component_price("host_server_2s_power_w").value + dram * DRAM_W_PER_GIB
    return {"capex_usd": usd, "power_w": watts}


#: Labels of a sequential (streaming) and of a random access pattern, as the blocks accept them.
SEQUENTIAL_LABELS = ("sequential", "seq", "stream")
RANDOM_LABELS = ("random", "rand")


def sequential_mask(pattern: Any, allowed: str = "random, sequential") -> np.ndarray:
    """True where an access pattern is sequential, False where random: a label, an array
    of labels, or booleans (returned as they are).  ``allowed`` is what the error lists."""
    from dse.errors import DseError

    if isinstance(pattern, str):
        p = pattern.lower()
        if p in SEQUENTIAL_LABELS:
            return np.asarray(True)
        if p in RANDOM_LABELS:
            return np.asarray(False)
        raise DseError(f"pattern {pattern!r} is not allowed; allowed: {allowed}")
    arr = np.asarray(pattern)
    if arr.dtype.kind in "USO":
        return np.asarray([sequential_mask(str(v), allowed) for v in arr.ravel()]).reshape(arr.shape)
    return arr.astype(bool)
