"""NAND flash SSD block: mean latency and throughput of an NVMe SSD under load, and the
write amplification of its garbage collection, from the SSD's geometry and timings.

The model follows the request path of an MQSim-style SSD (MQSim: Tavakkol et al., FAST
2018; the mechanisms below are those of its NVMe host interface, page-level FTL, priority
out-of-order transaction scheduler and ONFI NV-DDR2 channel model):

* **Host link** -- an NVMe request is a sequence of PCIe messages, each direction one
  FIFO link: doorbell, submission-entry fetch (read request + 64-B completion), data,
  16-B completion entry, completion doorbell.  Payloads travel in 128-B TLPs with 28 B of
  framing each; a read request is one header (:func:`pcie_message_us`).
* **Striping** -- a request of ``n = ceil(size / page)`` pages is split page by page over
  channels first, then chips, dies and planes (CWDP); a sub-page request moves only its
  own bytes on the channel.
* **Chip** -- one command at a time per chip (dies of one chip never overlap in MQSim):
  a read holds it for command + tR + wait for the channel + data out; a program for
  wait for the channel + command and data in + tPROG.  Reads are served before queued
  writes.  Pages queued at one die with the same page offset in other planes merge into
  one multi-plane command (tR / tPROG shared): a sequential write stream's pages sit at
  the die and each program takes half of them (up to the planes), a sequential read takes
  the later pages of its page offset that arrive while it waits (no constant), random
  traffic only where a queued page has the head's page offset (``k_mp`` per queued page /
  pages per block).
* **Channel** -- command/address cycles (ONFI NV-DDR2 defaults) and data transfers; data
  out of a finished read goes before new commands; waits follow a non-preemptive
  priority M/G/1 residual (``k_ch``), bounded by the other chips on the channel.
* **Read rounds** -- because pending data-outs go first and a command is issued only to an
  idle channel, chips with queued reads fall into step: they get their commands together,
  finish tR together and then wait for each other's data-out.  In the limit a chip's read
  cycle is tR plus every chip's transfer on its channel (MQSim at saturation: chip array
  share + channel share = 1).  Each read op (and mapping read) waits ``rho**2`` of the
  other chips' data-out (the chance that another chip has a queued op, M/M/1), the chip
  utilization ``rho`` solved with this wait (a quadratic).
* **Cached mapping table** -- without an ideal mapping table a random request misses the
  CMT and first reads a 512-B translation entry from flash; a sequential stream shares one
  mapping read with the requests arriving while it is in flight.

Queueing: open loop (Poisson arrivals) uses M/G/1 at each chip (service-time moments from
the tR/tPROG page-type mix; the page wait W is the fixed point of the wait the merging at
W implies, solved by a bracketed root finder), M/D/1 at each PCIe direction, and a fork-join factor
``H_n ** k_fj`` for requests that wait for the slowest of their ``n`` pages (``k_fj = 0``
fits the MQSim runs best: the loaded page waits already carry that spread).  Closed loop
(queue depth QD) uses approximate mean-value analysis (Schweitzer) over the same
stations; sequential streams place consecutive pages on consecutive chips, so their
backlog builds only once the pages in flight exceed the chips, and a stream's mix of reads
and programs queues as G/G/1 with the stream's regular arrivals (Kingman).  Reads go
before queued programs in both loops (non-preemptive priority M/G/1, Cobham).  The sustained throughput
(:func:`saturation_iops`) is the closed-loop throughput with the NVMe fetch window
(``queue_fetch_size`` requests, MQSim's ``Queue_Fetch_Size``) full -- what an overloaded
open loop reaches, because the device only fetches that many requests at a time.

Garbage collection: :func:`gc_write_amplification` -- greedy victim selection under uniform
random writes, the mean-field limit of Desnoyers (SYSTOR 2012) and Van Houdt
(SIGMETRICS 2013): ``u = -W(-a e^{-a}) / a``, ``WA = 1 / (1 - u)``; ``policy="random"``
gives ``WA = a / (a - 1)``; ``policy="d_choices"`` interpolates with weight ``1/d``.  A
write amplification ``wa > 1`` adds ``wa - 1`` page moves (read + program) and the erase
share to every host page written.

Public functions (times in us, rates in IOPS = requests/s, sizes in bytes)
-------------------------------------------------------------------------
* :func:`config(name)` / :data:`CONFIGS` -- SSD configurations; :data:`CELL_TIMINGS`.
* :func:`unloaded_latency_us(cfg, size_b, read_frac, pattern)`.
* :func:`saturation_iops(cfg, size_b, read_frac, pattern)`, :func:`saturation_bw_gbps`.
* :func:`closed_loop(cfg, qd, size_b, read_frac, pattern)` -> (iops, mean latency us).
* :func:`open_loop_latency_us(cfg, iops, size_b, read_frac, pattern)` (inf at or above
  the sustained throughput).
* :func:`gc_write_amplification(op_ratio, fill=1.0, policy="greedy", d=...)`.
* :func:`pcie_message_us(payload_b, lanes, lane_gbps)`.
* :func:`params(prefix, **default_overrides)` -- the SSD geometry as a model's Params;
  :func:`from_batch(p, prefix)` / :func:`arrays(cfg, **columns)` -- the dict form from a
  model's columns.

``cfg`` is a :class:`FlashConfig`, a config name, or the dict of arrays returned by
``config_arrays`` / ``arrays`` / ``from_batch`` (any entry may be an array; the fit and
sweeps pass that form).

Modules, by mechanism: ``configs`` (configurations, constants, the dict form), ``spec``
(columns and parameter group), ``request`` (per-request terms, host link, isolated
latency), ``chip`` (merging, read rounds, priority, stream queueing), ``gc`` (garbage
collection), ``closed_terms`` / ``closed_solve`` (closed-loop fixed point and its
solver), ``open_loop`` (open-loop wait root), ``api`` (the public functions).  The
stations read as written, which the fast solvers are pinned to, are test oracles in
tests/flash_reference.py.
"""

from __future__ import annotations

from models.blocks.flash.api import (closed_loop, open_loop_latency_us, saturation_bw_gbps, saturation_iops,
                                     unloaded_latency_us)
from models.blocks.flash.configs import (CELL_TIMINGS, CONFIGS, CQE_B, DEFAULT_CONSTANTS, DOORBELL_B, MAP_READ_B,
                                        PCIE_TLP_EFFICIENCY, PROG_CMD_PLANE_US, PROG_CMD_US, QUEUE_FETCH_SIZE,
                                        READ_CMD_PLANE_US, READ_CMD_US, READ_REQUEST_B, SQE_B, TLP_OVERHEAD_B,
                                        TLP_PAYLOAD_B, FlashConfig, config, config_arrays, constants, page_type_mix)
from models.blocks.flash.gc import gc_write_amplification
from models.blocks.flash.request import pcie_message_us
from models.blocks.flash.spec import arrays, from_batch, params

__all__ = [
    "FlashConfig", "CONFIGS", "CELL_TIMINGS", "DEFAULT_CONSTANTS", "config", "constants",
    "page_type_mix", "unloaded_latency_us", "saturation_iops", "saturation_bw_gbps", "closed_loop",
    "open_loop_latency_us", "gc_write_amplification", "pcie_message_us", "config_arrays",
    "arrays", "from_batch", "params",
    "TLP_PAYLOAD_B", "TLP_OVERHEAD_B", "PCIE_TLP_EFFICIENCY", "READ_REQUEST_B", "SQE_B", "CQE_B", "DOORBELL_B",
    "MAP_READ_B", "READ_CMD_US", "READ_CMD_PLANE_US", "PROG_CMD_US", "PROG_CMD_PLANE_US", "QUEUE_FETCH_SIZE",
]
