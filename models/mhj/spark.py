"""Costs of the Spark operators the join schemes are made of (cxl-sql-join.md §2 items 1-3).

Times in ns for the whole cluster; ``cores`` is all executor cores of all nodes.

* scan: reading the query's input columns from each node's storage and decoding them
  (common to every scheme);
* shuffle: an all-to-all repartition of ``x_b`` bytes -- serialization and compression
  on the cores, the shuffle files written and read back through each node's shuffle
  storage, and the share that crosses to other nodes over the network (§2 item 1);
* sort: Spark's sort of each partition before a merge join, n log2 n comparisons;
* sort spill: when a task's two sort buffers (both sides of its partition) outgrow the
  task's share of execution memory, Spark's external sorter writes sorted runs to the
  node's local (shuffle) storage and merges them back while the join reads them;
* map_job: a small table's map -- BHJ collects it, builds one map and copies it to every
  executor (§2 item 2: E copies); MHJ builds it once in shared memory (§2 item 7);
* the hash-table phases themselves are memory.phase_ns.
"""

from __future__ import annotations

import numpy as np

from dse.units import BITS_PER_BYTE, MIB, NS_PER_S

#: Heap that Spark's unified memory manager sets aside before sharing the rest between
#: execution and storage (UnifiedMemoryManager.RESERVED_SYSTEM_MEMORY_BYTES = 300 MiB).
RESERVED_SYSTEM_B = 300.0 * MIB
#: Sort-buffer bytes per record besides the row, in Spark 3.4's UnsafeExternalSorter: the
#: record's length word in the data page (UnsafeAlignedOffset: 4 B on x86-64) and its
#: (pointer, key prefix) pair of 8 B words in UnsafeInMemorySorter's array, which keeps the
#: same again free for radix sort (single-key prefix sort) or half again for TimSort
#: (composite join keys): 4 x 8 B or 3 x 8 B per record.
SORT_LEN_B = 4.0
SORT_PTR_B_RADIX = 32.0
SORT_PTR_B_TIMSORT = 24.0
#: Spill-file bytes per record besides the row (UnsafeSorterSpillWriter.write: a 4 B length
#: and the 8 B key prefix before the record bytes).
SPILL_RECORD_OVERHEAD_B = 12.0


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


def task_execution_memory_b(executor_mem_b, cores_per_executor, memory_fraction) -> np.ndarray:
    """Execution memory one task may hold: the unified region ``(heap - 300 MiB) x
    spark.memory.fraction`` split among the executor's concurrently running tasks (Spark's
    ExecutionMemoryPool gives each of N active tasks at most 1/N; a join stage caches
    nothing, so execution may take the storage half too)."""
    unified = np.maximum(np.asarray(executor_mem_b, dtype=np.float64) - RESERVED_SYSTEM_B, 0.0) * memory_fraction
    return unified / cores_per_executor


def sort_spill(task_rows, row_b, task_mem_b, ptr_b_per_row=SORT_PTR_B_TIMSORT):
    """(rows spilled, sorted runs) of one task's external sort of ``task_rows`` rows of
    ``row_b`` bytes with ``task_mem_b`` of execution memory.

    Each record takes ``row_b + 4 B`` in a data page and ``ptr_b_per_row`` in the pointer
    array.  When the buffer is full the sorter sorts it, writes it to a spill file and starts
    again; the last buffer stays in memory.  Spark 3.4 then merges every run in one pass
    (UnsafeSorterSpillMerger, a priority queue over all spill readers), so each spilled byte
    is written once and read once whatever the number of runs; the runs only add
    ``log2(runs)`` compares per row to the merge, which the n log2 n of :func:`sort_ns`
    already counts (in-memory runs of n/r rows plus an r-way merge).  Simplification: the
    transient doubling of the pointer array is ignored (spills start slightly later)."""
    rows = np.asarray(task_rows, dtype=np.float64)
    per_row = np.asarray(row_b, dtype=np.float64) + SORT_LEN_B + ptr_b_per_row
    buffer_rows = np.maximum(np.asarray(task_mem_b, dtype=np.float64) / per_row, 1.0)
    runs = np.maximum(np.ceil(rows / buffer_rows - 1e-9), 1.0)
    spilled_rows = np.minimum((runs - 1.0) * buffer_rows, rows)
    return spilled_rows, runs


def spill_ns(spill_b, cores, nodes, cpu_ns_per_b, node_storage_gbps) -> np.ndarray:
    """Write ``spill_b`` bytes of sorted runs to each node's local storage and read them back
    for the merge: serialization + compression on the cores (spark.shuffle.spill.compress
    is on by default, with the shuffle's codec) and two passes over the node's storage
    (spark.local.dir holds spill files and shuffle files alike)."""
    return spill_b * cpu_ns_per_b / cores + 2.0 * spill_b / (nodes * node_storage_gbps)


def map_job_ns(table_b, copies, fixed_s, copy_ns_per_b, build_ns) -> np.ndarray:
    """Setting up one map of a small table: the Spark job that collects it and builds the
    map (``fixed_s`` + ``build_ns``), then ``copies`` copies of the map sent through the
    driver's block manager and deserialized (BHJ: one per executor; MHJ: none, only the
    map's address is shared)."""
    return fixed_s * NS_PER_S + build_ns + table_b * copies * copy_ns_per_b
