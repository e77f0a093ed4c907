"""Costs of the Spark operators the join schemes are made of (cxl-sql-join.md §2 items 1-3).

Times in ns for the whole cluster; ``cores`` is all executor cores of all nodes.

* scan: reading the query's input columns from each node's storage and decoding them
  (common to every scheme);
* shuffle: an all-to-all repartition of ``x_b`` bytes -- serialization and compression
  on the cores, the shuffle files written and read back through each node's shuffle
  storage, and the share that crosses to other nodes over the network (§2 item 1);
* sort: Spark's sort of each partition before a merge join, n log2 n comparisons;
* map_job: a small table's map -- BHJ collects it, builds one map and copies it to every
  executor (§2 item 2: E copies); MHJ builds it once in shared memory (§2 item 7);
* the hash-table phases themselves are memory.phase_ns.
"""

from __future__ import annotations

import numpy as np

from dse.units import BITS_PER_BYTE, NS_PER_S


def scan_ns(rows, cols, b_per_value, ns_per_row, cores, nodes, node_storage_gbps) -> np.ndarray:
    """Read ``rows`` rows of ``cols`` compressed columns from each node's storage and decode
    them on the cores (the slower of the two; reads are prefetched)."""
    io = rows * cols * b_per_value / (nodes * node_storage_gbps)
    return np.maximum(io, rows * ns_per_row / cores)


def shuffle_ns(x_b, cores, nodes, cpu_ns_per_b, node_storage_gbps, net_gbit_s) -> np.ndarray:
    """Repartition ``x_b`` bytes: cores, then storage (write + read back), then network."""
    cpu = x_b * cpu_ns_per_b / cores
    storage = 2.0 * x_b / (nodes * node_storage_gbps)  # GB/s = B/ns
    remote_b = x_b * (nodes - 1.0) / nodes
    net = remote_b / (nodes * net_gbit_s / BITS_PER_BYTE)
    return cpu + storage + net


def sort_ns(rows, partitions, ns_per_compare, cores) -> np.ndarray:
    """Sort every shuffle partition of ``rows / partitions`` rows (n log2 n compares)."""
    per_part = np.maximum(rows / partitions, 2.0)
    return rows * np.log2(per_part) * ns_per_compare / cores


def map_job_ns(table_b, copies, fixed_s, copy_ns_per_b, build_ns) -> np.ndarray:
    """Setting up one map of a small table: the Spark job that collects it and builds the
    map (``fixed_s`` + ``build_ns``), then ``copies`` copies of the map sent through the
    driver's block manager and deserialized (BHJ: one per executor; MHJ: none, only the
    map's address is shared)."""
    return fixed_s * NS_PER_S + build_ns + table_b * copies * copy_ns_per_b
