"""Memory that holds the hash maps: local DRAM (SHJ, SMJ, BHJ) or a CXL device (MHJ).

Devices (cxl-sql-join.md §3, Table 1; measured with Intel MLC):

    clm   CXL local memory (ASIC, direct attach)         250 ns   13 GB/s reads, 14 GB/s 1:1
    fpga  FPGA CXL shared-memory prototype               620 ns   4.6 / 4.8 GB/s
    asic  ASIC CXL shared memory (the authors' estimate)  CXL local + one switch and two
          retimers for a 32-socket pool (§2 item 4: 250 + 115 = 365 ns); bandwidth as CXL
          local ("ideally not degraded")

The switch + retimer delta comes from the link block (its Pond-derived switch and retimer
latencies sum to the same 115 ns round trip).  Local DRAM: the host path plus a DDR5-4800
channel from the dram block; 16 DIMMs on one socket are 8 channels at 2 DIMMs each.

Access phases (hash build, probe) are a closed loop (§2 item 3): every core keeps ``mlp``
independent rows in flight; a row costs CPU time and ``lines`` dependent cache-line
misses; the memory serves lines as an M/D/1 station of service 64 B / bandwidth (all cores
of all hosts share a pool device).  :func:`line_rate_per_ns` solves the loop in closed form.
"""

from __future__ import annotations

import numpy as np

from dse.units import CACHELINE_B
from models.blocks import cache, dram, link, queueing
from models.blocks.calibration import per_calibration

DEVICES: tuple[str, ...] = ("clm", "asic", "fpga")
#: One CXL switch and two retimers, both directions (link block: the 115 ns the article
#: cites from Pond for a 32-socket pool).
SWITCH_RETIMER_NS = 2.0 * (link.CXL_SWITCH_NS + 2.0 * link.RETIMER_NS)
CLM_NS, CLM_READ_GBPS, CLM_MIX_GBPS = 250.0, 13.0, 14.0  # Table 1 (L2338)
FPGA_NS, FPGA_READ_GBPS, FPGA_MIX_GBPS = 620.0, 4.6, 4.8  # Table 1 (L2340)
DEVICE_NS = {"clm": CLM_NS, "asic": CLM_NS + SWITCH_RETIMER_NS, "fpga": FPGA_NS}
DEVICE_READ_GBPS = {"clm": CLM_READ_GBPS, "asic": CLM_READ_GBPS, "fpga": FPGA_READ_GBPS}
DEVICE_MIX_GBPS = {"clm": CLM_MIX_GBPS, "asic": CLM_MIX_GBPS, "fpga": FPGA_MIX_GBPS}

#: Local DRAM of a node: 16 DDR5 DIMMs on one socket (§3 server_local_dram) = 8 channels.
LOCAL_STANDARD = "DDR5-4800"
LOCAL_CHANNELS = 8
#: Core to memory controller and back on a server CPU.  Assumption (as the cxl-expander
#: model): 42 ns, so that a local DDR5-4800 read is ~110 ns idle.
HOST_PATH_NS = 42.0
#: Last-level cache of the server CPU.  Assumption: the article's one-socket 64-core CXL 2.0
#: host with 16 DIMMs (8 channels x 2) fits a 5th-gen Xeon Platinum 8592+, which has 320 MB.
LLC_MB = 320.0
#: LLC hit latency.  Assumption: ~35 ns on a large mesh (Intel MLC class measurements).
LLC_NS = 35.0


@per_calibration
def local_memory() -> dict[str, float]:
    """A node's local DRAM (dram block, calibrated): idle latency seen by a core and the
    node's read-only and 50/50 saturation bandwidths."""
    return {
        "ns": HOST_PATH_NS + float(dram.idle_latency_ns(LOCAL_STANDARD, "random")),
        "read_gbps": LOCAL_CHANNELS * float(dram.saturation_bw_gbps(LOCAL_STANDARD, "random", 1.0)),
        "mix_gbps": LOCAL_CHANNELS * float(dram.saturation_bw_gbps(LOCAL_STANDARD, "random", 0.5)),
    }


def line_rate_per_ns(customers, think_ns, latency_ns, bw_gbps) -> np.ndarray:
    """Lines per ns that ``customers`` outstanding rows pull from a memory of ``latency_ns``
    and ``bw_gbps``, each spending ``think_ns`` of CPU between its lines.

    Closed loop: ``lam (Z + L + S + W) = K`` with ``S = 64 B / bandwidth`` and the M/D/1
    wait ``W = rho S / (2 (1 - rho))``, ``rho = lam S``; with ``D = (Z + L + S) / S`` that is
    ``(1 - 2D) rho^2 + 2 (D + K) rho - 2K = 0``, whose root in [0, 1) is taken."""
    k = np.asarray(customers, dtype=np.float64)
    s = CACHELINE_B / np.asarray(bw_gbps, dtype=np.float64)  # ns per line (GB/s = B/ns)
    d = (think_ns + latency_ns + s) / s
    a, b, c = 1.0 - 2.0 * d, 2.0 * (d + k), -2.0 * k
    rho = (-b + np.sqrt(b * b - 4.0 * a * c)) / (2.0 * a)
    rho = np.clip(rho, 0.0, 1.0 - 1e-12)
    return rho / s


def llc_hit_frac(map_b, copies, llc_b) -> np.ndarray:
    """Share of hash-map lines found in the last-level cache: ``copies`` maps of ``map_b``
    probed uniformly share ``llc_b`` (cache block working-set model, uniform reuse)."""
    footprint = np.maximum(np.asarray(map_b, dtype=np.float64) * copies, CACHELINE_B)
    return cache.working_set_hit_rate(llc_b, footprint, 0.0)


def phase_ns(rows, lines_per_row, cpu_ns_per_row, cores, mlp, latency_ns, bw_gbps, llc_hit=0.0, llc_ns=0.0):
    """(time, mean memory wait per line, line rate per ns) of ``rows`` rows of
    ``lines_per_row`` dependent misses and ``cpu_ns_per_row`` CPU each, on ``cores`` cores
    sharing one memory; a share ``llc_hit`` of the lines hits the LLC (``llc_ns``, no
    memory bandwidth)."""
    lines = np.asarray(rows, dtype=np.float64) * lines_per_row
    think = cpu_ns_per_row * mlp / np.maximum(lines_per_row, 1e-12)
    miss = np.maximum(1.0 - llc_hit, 1e-12)
    # a line is an LLC hit or a memory access; only misses load the memory
    latency = llc_hit * llc_ns + miss * latency_ns
    bw_eff = np.asarray(bw_gbps, dtype=np.float64) / miss
    lam = line_rate_per_ns(cores * mlp, think, latency, bw_eff)
    wait = queueing.md1_wait(lam * miss, CACHELINE_B / np.asarray(bw_gbps, dtype=np.float64))
    return lines / lam, wait, lam * miss
