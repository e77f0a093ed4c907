"""One remote operation on each access path, and what it does to a workload's run time
(shared/research/directcxl.md §2.2-2.6).

An operation reads one remote object of ``obj_b`` bytes after ``index_lines`` dependent
64 B reads (an index traversal).  Per path:

* ``local``: the same loads served by host DRAM;
* ``directcxl``: loads through the LLC to CXL memory (MSHR-limited payload);
* ``rdma``: one-sided verbs reads, each with the verbs library, a copy out of the
  registered region and the RDMA hardware path;
* ``swap`` (FastSwap): loads served by the local page cache, or a page fault (kernel
  fault path + driver) that fetches the 4 KB page over RDMA;
* ``tpp`` (emulated, FastSwap without the network): the same faults with a local page copy;
* ``kvs`` (HERD): one get: KVS software (client hashing, request, server polling and its
  index lookup) plus the value's RDMA transfer and copy.

Run time (§2.2): ``T = T_compute + N_ops t_op``; with Local's time normalized to 1 and a
share ``mem_frac`` of it in the operations, ``T_path = 1 - f + f t_op(path) / t_op(local)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dse.units import CACHELINE_B
from models.directcxl.paths import PAGE_B, copy_ns, pages_spanned, payload_ns

PATHS: tuple[str, ...] = ("local", "directcxl", "rdma", "swap", "kvs", "tpp")

ArrayLike = Any


def op_times(
    obj_b: ArrayLike,
    index_lines: ArrayLike,
    page_hit: ArrayLike,
    *,
    local_miss_ns: ArrayLike,
    cxl_miss_ns: ArrayLike,
    llc_line_ns: ArrayLike,
    mshr: ArrayLike,
    hw_obj_ns: ArrayLike,
    hw_line_ns: ArrayLike,
    hw_page_ns: ArrayLike,
    cpu_mhz: ArrayLike,
    lib_ns: ArrayLike,
    kernel_ns: ArrayLike,
    kvs_ns: ArrayLike,
) -> dict[str, dict[str, np.ndarray]]:
    """Per path: ``total`` ns of one operation, its ``software``, ``rdma`` (transfer +
    copy) and ``copy`` parts, and the ``bytes`` it moves across the fabric."""
    d = np.asarray(index_lines, dtype=np.float64)
    obj = np.asarray(obj_b, dtype=np.float64)
    lines = np.maximum(np.ceil(obj / CACHELINE_B), 1.0)
    zero = np.zeros(np.broadcast_shapes(np.shape(d), np.shape(obj), np.shape(local_miss_ns), np.shape(hw_obj_ns)))

    local = d * local_miss_ns + payload_ns(obj, local_miss_ns, llc_line_ns, mshr)
    cxl = d * cxl_miss_ns + payload_ns(obj, cxl_miss_ns, llc_line_ns, mshr)

    copy_obj = copy_ns(obj, cpu_mhz)
    copy_line = copy_ns(CACHELINE_B, cpu_mhz)
    copy_page = copy_ns(PAGE_B, cpu_mhz)
    rdma_sw = (d + 1.0) * lib_ns
    rdma_xfer = d * (hw_line_ns + copy_line) + hw_obj_ns + copy_obj

    faults = (d + pages_spanned(obj)) * (1.0 - np.asarray(page_hit, dtype=np.float64))
    return {
        "local": {"total": zero + local, "software": zero, "rdma": zero, "copy": zero, "bytes": zero},
        "directcxl": {"total": zero + cxl, "software": zero, "rdma": zero, "copy": zero, "bytes": zero + (d + lines) * CACHELINE_B},
        "rdma": {"total": zero + rdma_sw + rdma_xfer, "software": zero + rdma_sw, "rdma": zero + rdma_xfer,
                 "copy": zero + d * copy_line + copy_obj, "bytes": zero + d * CACHELINE_B + obj},
        "swap": {"total": zero + local + faults * (kernel_ns + hw_page_ns), "software": zero + faults * kernel_ns,
                 "rdma": zero + faults * hw_page_ns, "copy": zero, "bytes": zero + faults * PAGE_B},
        "kvs": {"total": zero + kvs_ns + hw_obj_ns + copy_obj, "software": zero + kvs_ns, "rdma": zero + hw_obj_ns + copy_obj,
                "copy": zero + copy_obj, "bytes": zero + obj},
        "tpp": {"total": zero + local + faults * (kernel_ns + copy_page), "software": zero + faults * kernel_ns,
                "rdma": zero, "copy": zero + faults * copy_page, "bytes": zero},
    }


def run_time(op_ns: ArrayLike, local_op_ns: ArrayLike, mem_frac: ArrayLike) -> np.ndarray:
    """Run time relative to Local when ``mem_frac`` of Local's time is remote operations."""
    f = np.asarray(mem_frac, dtype=np.float64)
    return 1.0 - f + f * np.asarray(op_ns, dtype=np.float64) / np.asarray(local_op_ns, dtype=np.float64)
