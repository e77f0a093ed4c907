"""Mechanisms of the espresso model beyond the article's headline path, one small function
each (model.py composes them).  Every one defaults to leaving the article's results as
they were (lenders idle, cores scaling as the article's simulator runs them, PCIe 5.0
controllers); each is a knob or a metric of ``dse eval espresso``.

* :func:`usl_cores`: core-count scaling with shared-resource limits (Gunther's universal
  scalability law) instead of linear;
* :func:`lender_own_load` / :func:`lender_slowdown_frac`: the lenders' own workload (a
  queue depth of 4 KiB sequential writes, Fig 14) taking the cycles they would lend, and
  lending slowing the lenders' own requests;
* :func:`harvest_gain_cap_frac`: how much processor harvesting can add at the queue depth
  (nothing for a queue-depth-limited trace);
* :func:`latency_breakdown`: a request's latency by component;
* :func:`coherence_energy_uj` / :func:`idle_processor_power_w`: energy of the CXL traffic
  that harvesting adds (remote mapping lines, lent DRAM, redo log) and of idle processors;
* :data:`CONTROLLER_GENS`: the SSD controller generation (PCIe 4.0 vs 5.0 processors).
"""

from __future__ import annotations

import numpy as np

from dse.units import US_PER_S
from models.blocks import link

# ------------------------------------------------------------------ core-count scaling


def usl_cores(n, contention, crosstalk) -> np.ndarray:
    """Effective cores of ``n`` cores sharing resources, by the universal scalability law
    (N. J. Gunther, "A Simple Capacity Model of Massively Parallel Transaction Systems",
    CMG 1993; Gunther, Guerrilla Capacity Planning, 2007, ch. 4):

        C(n) = n / (1 + sigma (n - 1) + kappa n (n - 1))

    ``contention`` (sigma): the share of the work serialized on a shared resource (a lock,
    the DRAM controller, the flash-command queue) -- Amdahl's law, C -> 1/sigma;
    ``crosstalk`` (kappa): the pairwise coherence cost (cache lines bouncing between the
    cores), which makes C fall past n* = sqrt((1 - sigma) / kappa).  sigma = kappa = 0 is
    linear scaling, the article's simulator (SimpleSSD runs its firmware cores as
    independent servers), and returns ``n`` exactly."""
    n = np.asarray(n, dtype=np.float64)
    return n / (1.0 + contention * (n - 1.0) + crosstalk * n * (n - 1.0))


# ------------------------------------------------------------------ lenders' own workload

#: The lenders' own workload in the article's interference study (Fig 14, digest section 5):
#: 4 KiB sequential writes at queue depths 1-32 while the borrowers run at QD64.
LENDER_IO_B = 4096.0


def lender_own_load(lender_qd, latency_us, kcycles, cores_hz) -> tuple[np.ndarray, np.ndarray]:
    """(IOPS, processor utilization) of a lender's own closed-loop workload of ``lender_qd``
    outstanding requests of ``latency_us`` each (Little: X = QD / L), costing ``kcycles``
    thousand firmware cycles each on ``cores_hz`` cycles/s, capped at the processor's
    saturation.  ``lender_qd`` 0 is an idle lender."""
    cycles = kcycles * 1e3
    x = np.minimum(lender_qd / np.maximum(latency_us, 1e-12) * US_PER_S, cores_hz / np.maximum(cycles, 1e-12))
    return x, np.clip(x * cycles / cores_hz, 0.0, 1.0)


def lender_slowdown_frac(own_latency_us, own_service_us, lent_service_us, cores, u_own, u_total) -> np.ndarray:
    """Loss of a lender's own throughput (QD-limited: X = QD / L) from lending.  The lender
    fetches its own queue before the shadow queue (WRR weights, L179: a low shadow-queue
    weight protects the lender), so its requests are the high class of a non-preemptive
    priority M/M/c (Cobham 1954): they wait for a core only while all are busy, for the
    mean residual service of the work in service, W_1 = P_wait(rho) S_res / (c (1 - rho_1)),
    with P_wait by Sakasegawa's rho^(sqrt(2(c+1)) - 1) and S_res the utilization-weighted
    service of own (``own_service_us``) and lent (``lent_service_us``) work.  The loss is
    1 - (L + W_1(own only)) / (L + W_1(own + lent)); 0 where nothing is lent or the lender
    is idle."""
    c = np.asarray(cores, dtype=np.float64)
    expo = np.sqrt(2.0 * (c + 1.0)) - 1.0
    u_own = np.minimum(u_own, 0.999)
    u_tot = np.minimum(np.maximum(u_total, u_own), 0.999)
    lent = u_tot - u_own
    s_res = (u_own * own_service_us + lent * lent_service_us) / np.maximum(u_tot, 1e-30)
    w_before = u_own ** expo * own_service_us / (c * (1.0 - u_own))
    w_after = u_tot ** expo * s_res / (c * (1.0 - u_own))
    before = own_latency_us + w_before
    return np.where((u_own > 0) & (lent > 0), 1.0 - before / (own_latency_us + w_after), 0.0)


# ------------------------------------------------------------------ queue-depth limit


def harvest_gain_cap_frac(x_own_sat, x_harvest_sat, qd_iops) -> np.ndarray:
    """Most that processor harvesting can add to a borrower's throughput at its queue depth:
    min(X_harvest, QD/L) / min(X_own, QD/L) - 1.  A queue-depth-limited workload (QD / L
    below its own processor's bound; Little's law) gains nothing however many cycles are
    lent: harvesting adds cycles, not outstanding requests."""
    return np.minimum(x_harvest_sat, qd_iops) / np.maximum(np.minimum(x_own_sat, qd_iops), 1e-30) - 1.0


# ------------------------------------------------------------------ latency breakdown

#: The components of a request's latency, metric name -> what it covers (digest M3's
#: t_host + t_hostSSD + t_proc + t_dram (+ t_cxl) + m t_map_flash + t_flash_data + t_interSSD).
BREAKDOWN = {
    "lat_host_us": "host: NVMe protocol and driver (+ OC's map-read trip, VH's hypervisor)",
    "lat_controller_us": "controller data path outside firmware, flash and link (fixed_latency_us)",
    "lat_proc_us": "firmware on the SSD processor (OC: the host FTL)",
    "lat_flash_us": "flash backbone, mapping-miss reads included",
    "lat_link_us": "data transfer over the SSD's CXL link",
    "lat_dram_us": "lookups in DRAM lent by another SSD (CXL round trip, redo log of writes)",
    "lat_inter_ssd_us": "redirection to a lender: host formula, lender's mapping lines over CXL, agent dequeues",
}


def latency_breakdown(t_host, t_fixed, t_fw, t_flash, t_xfer, t_remote_dram, t_inter) -> dict[str, np.ndarray]:
    """A request's latency by component (us); they sum to ``latency_us`` at QD1 and to the
    loaded request's unqueued latency above it (queueing is in the QD / X of Little)."""
    parts = (t_host, t_fixed, t_fw, t_flash, t_xfer, t_remote_dram, t_inter)
    return {k: np.asarray(v, dtype=np.float64) for k, v in zip(BREAKDOWN, parts, strict=True)}


# ------------------------------------------------------------------ energy

#: Bytes of one CXL.mem access of a 64 B line: the request and the data (digest: 256 B flit
#: mode; a 64 B read moves one line of payload one way and a header the other): counted as
#: two 64 B transfers over the PHY.  Assumption.
CXL_LINE_B = 64.0
CXL_ACCESS_B = 2.0 * CXL_LINE_B
#: A redo-log record written to the local log page per write to a lent entry (L191): one
#: 64 B line of DRAM.  Assumption (the article gives the log page, 4 KB, not the record).
REDO_RECORD_B = 64.0


def coherence_energy_uj(p_red, map_lines, remote_lookup, write_frac, phy_uj_per_b, dram_uj_per_b):
    """Per request (uJ): (CXL PHY energy of harvesting's traffic, energy of the DRAM accesses
    made over CXL, redo-log energy).  A redirected request's lender fetches ``map_lines``
    mapping lines from the borrower's DRAM over CXL; a lookup in lent DRAM crosses CXL to
    the lender's DRAM; a write to a lent entry commits a redo record locally (L191).  PHY
    at 6 pJ/bit, DRAM at 22 pJ/bit (L217).  The remote lookups' DRAM energy is already in
    the model's per-unit mapping accesses (they move, not add): only PHY and redo add."""
    lines = p_red * map_lines + remote_lookup
    phy = lines * CXL_ACCESS_B * phy_uj_per_b
    redo = remote_lookup * write_frac * REDO_RECORD_B * dram_uj_per_b
    return phy, lines * CXL_LINE_B * dram_uj_per_b + redo, redo


def idle_processor_power_w(cores, ref_cores, proc_w, idle_frac, busy_frac) -> np.ndarray:
    """Power (W) of an SSD processor's idle share: ``idle_frac`` of the article's 6.45 W
    processor (L217, scaled by cores) for the time it is not busy."""
    return idle_frac * proc_w * cores / ref_cores * np.clip(1.0 - busy_frac, 0.0, 1.0)


# ------------------------------------------------------------------ controller generation

#: SSD controller generations.  5: the article's (Table 2, L213: 14 / 10 GB/s read / write,
#: the $48 controller, L267; Fig 3b's 31.8% compute share of a 4 TB PCIe 5.0 SSD).  4: a
#: PCIe 4.0 x4 controller: its rated read path is the PCIe 4.0 x4 link's payload bandwidth
#: (link block, 16 GT/s x4), write in Table 2's write/read ratio (10/14, assumption); its
#: price is the one Fig 3b's 23.2% compute share of a 4 TB PCIe 4.0 SSD implies at the
#: article's NAND and DRAM prices (digest M6: ~$20.9).
CONTROLLER_GENS = (5, 4)
GEN4_READ_GBPS = float(link.pcie_dma_bw_gbps(4, 4, 4096.0))
GEN4_WRITE_GBPS = GEN4_READ_GBPS * 10.0 / 14.0


def gen4_controller_usd(share, nand_usd, dram_usd, other_usd) -> float:
    """The controller price at which controller + DRAM are ``share`` of the SSD's BOM:
    (c + dram) = share x (nand + dram + c + other)."""
    return (share * (nand_usd + dram_usd + other_usd) - dram_usd) / (1.0 - share)


__all__ = [
    "usl_cores", "lender_own_load", "lender_slowdown_frac", "harvest_gain_cap_frac", "latency_breakdown",
    "BREAKDOWN", "coherence_energy_uj", "idle_processor_power_w", "CONTROLLER_GENS", "GEN4_READ_GBPS",
    "GEN4_WRITE_GBPS", "gen4_controller_usd", "LENDER_IO_B",
]
