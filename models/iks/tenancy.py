"""Multitenancy: ENNS next to a latency-critical CPU tenant in IKS memory (digest §2
mechanisms 6-7, Table 1, Fig. 7).

The tenant (Memcached in the article) keeps its data in IKS memory; its memory traffic
(``tenant_bw``, random 64 B lines, GET-heavy) reaches the channels through the host link.

* **solo**: each application alone; ENNS on its channels, the tenant on all 64.
* **spatial**: page colouring gives ENNS ``enns_channels`` and the tenant the rest; the
  tenant's per-channel load rises as its channels shrink, ENNS keeps its bandwidth.
* **temporal**: both share all channels.  The tenant's random lines take ``u`` of every
  channel's time (tenant bandwidth over the channels' random-traffic saturation
  bandwidth, dram block), so an ENNS pass runs at ``1 - u`` of its solo bandwidth.  The
  tenant's accesses that arrive during an ENNS pass wait behind the stream: FR-FCFS serves
  the open row's hits first, on average half a row of stream bursts per access.  A
  fraction ``duty`` (ENNS batches per second x pass time) of tenant requests see this.

Tenant latency = its solo latency (Table 1 solo column, the anchor) + its memory
accesses on the critical path x the change of their DRAM latency.  Percentiles of
requests: the median moves with the in-pass wait only when most requests overlap a pass
(duty > 50%), the P99 once more than 1% do.  Throughput follows a closed-loop load
generator (fixed concurrency): inversely to the median latency.
"""

from __future__ import annotations

import numpy as np

from dse.units import NS_PER_US
from models.iks import device

MODES = ("solo", "spatial", "temporal")
#: Codes of the modes (index into MODES, the ``tenancy`` parameter's choices): helpers
#: compare with these, never with a bare number.
SPATIAL, TEMPORAL = MODES.index("spatial"), MODES.index("temporal")
#: Request quantiles the tenant's latency is reported at.
P50, P99 = 0.50, 0.99


def tenant_channels(mode_code, enns_channels) -> np.ndarray:
    """Channels the tenant's pages live on."""
    return np.where(np.asarray(mode_code) == SPATIAL, device.CHANNELS - enns_channels, float(device.CHANNELS))


def cotenant_share(mode_code, tenant_bw_gbps, random_sat_gbps) -> np.ndarray:
    """Share of every ENNS channel's time the tenant takes (temporal only)."""
    u = tenant_bw_gbps / (device.CHANNELS * random_sat_gbps)
    return np.where(np.asarray(mode_code) == TEMPORAL, u, 0.0)


def tenant_latency(
    mode_code, tech_code, enns_channels, tenant_bw_gbps, random_sat_gbps, row_drain_ns, accesses,
    p50_solo_us, p99_solo_us, enns_duty,
) -> dict[str, np.ndarray]:
    """Tenant P50 / P99 (us), relative throughput and per-channel utilization."""
    n_ch = tenant_channels(mode_code, enns_channels)
    with np.errstate(divide="ignore", invalid="ignore"):
        util = tenant_bw_gbps / (n_ch * random_sat_gbps)
    util = np.where(n_ch > 0, util, np.inf)
    util_solo = tenant_bw_gbps / (device.CHANNELS * random_sat_gbps)
    shift_ns = device.tenant_access_ns(tech_code, util) - device.tenant_access_ns(tech_code, util_solo)
    temporal = np.asarray(mode_code) == TEMPORAL
    in_pass_ns = np.where(temporal, row_drain_ns, 0.0)
    base_us = accesses * shift_ns / NS_PER_US
    pass_us = accesses * in_pass_ns / NS_PER_US
    duty = np.where(temporal, enns_duty, 0.0)
    p50 = p50_solo_us + base_us + np.where(duty > 1.0 - P50, pass_us, 0.0)
    p99 = p99_solo_us + base_us + np.where(duty > 1.0 - P99, pass_us, 0.0)
    return {"p50_us": p50, "p99_us": p99, "rps_x": p50_solo_us / p50, "util_frac": util}
