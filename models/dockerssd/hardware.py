"""DockerSSD hardware shared by the two models: clocks, the flash back end, the
workload tables, and the bill-of-materials and power constants.

Sources are the article as digested in ``research/dockerssd.md`` (``L####`` = line of
the article text), the shared blocks (flash, dram, link, cost, energy), and named
assumptions where the article gives nothing (its section 7: no bandwidths, latencies,
prices or power figures at all).
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from dse.units import GB, GIB, MB
from models.blocks import cost, dram, energy, flash

HERE = Path(__file__).resolve().parent
HZ_PER_GHZ = 1e9

# ----------------------------------------------------------------------------- processors
#: Host CPU clock, GHz: "The host has a 3.8-GHz CPU" (L1007).
HOST_CLOCK_GHZ = 3.8
#: DockerSSD processor clock, GHz: "The SSD uses a 2.2-GHz processor" (L1009).
DEV_CLOCK_GHZ = 2.2
#: DockerSSD cores: six RISC-V cores run virtual-FW on the prototype (L1007); the
#: simulation's core count is not given, digest ambiguity 13 suggests 6.
DEV_CORES = 6
#: Host DRAM, GB: 64-GB DDR4 (L1007) and 64 GB per LLM host (L1066).
HOST_DRAM_GB = 64.0
#: DockerSSD DRAM, GB: 2 GB (L1009).
DEV_DRAM_GB = 2.0
#: Storage per DockerSSD and per H-Cache swap SSD, GB: 400 GB (L1066, L1068).
SSD_CAPACITY_GB = 400.0

# ----------------------------------------------------------------------------- flash
#: The flash block's DockerSSD configuration: 48 MLC dies over 12 channels (L1009);
#: 1.2 GB/s channels are the block's assumption.
FLASH_CONFIG = "dockerssd_mlc"
_FLASH = flash.config(FLASH_CONFIG)
FLASH_CHANNELS = _FLASH.channels
FLASH_CHIPS_PER_CHANNEL = _FLASH.chips_per_channel
FLASH_CHANNEL_GBPS = _FLASH.channel_gbps


def flash_arrays(channels: Any = FLASH_CHANNELS, chips_per_channel: Any = FLASH_CHIPS_PER_CHANNEL,
                 channel_gbps: Any = FLASH_CHANNEL_GBPS) -> dict[str, Any]:
    """The flash block's DockerSSD configuration with the geometry knobs as columns (the
    block's dict form, built by ``flash.arrays``, which takes arrays)."""
    return flash.arrays(_FLASH, channels=channels, chips_per_channel=chips_per_channel, channel_gbps=channel_gbps)


def flash_bw_gbps(arrays: dict[str, Any], size_b: Any, read_frac: Any = 1.0, sequential: Any = True) -> np.ndarray:
    """Saturation bandwidth (GB/s) of the flash back end for requests of ``size_b``
    (flash block: bottleneck of dies, channels; the host link is left to the caller)."""
    a = dict(arrays)
    a["pcie_bw"] = np.inf  # internal path: no host link
    return flash.saturation_bw_gbps(a, size_b, read_frac, np.asarray(sequential, dtype=bool))


def flash_read_pj_per_bit() -> float:
    """Energy of reading flash, pJ/bit: MLC tR plus the page's channel transfer (energy block)."""
    return float(energy.flash_energy_per_bit_pj("read", float(np.mean(_FLASH.tr_us)), _FLASH.page_bytes,
                                                _FLASH.channel_gbps * GB / MB))


# ----------------------------------------------------------------------------- DRAM
#: DDR4-3200 stream bandwidth of one 64-bit channel (dram block, calibrated on DRAMsim3).
#: Used only for Param defaults (with DEV_DRAM_GBPS): fitted at import, under the shipped calibration.
DDR4_CHANNEL_GBPS = float(dram.saturation_bw_gbps("DDR4-3200", "stream"))
#: Host DRAM channels.  Assumption: 64 GB as two 32-GB DDR4-3200 DIMMs on two channels.
HOST_DRAM_CHANNELS = 2
#: SSD DRAM width as a fraction of a 64-bit channel.  Assumption: a x32 DDR4 interface, the
#: usual width of an SSD controller's DRAM.
DEV_DRAM_CHANNEL_FRAC = 0.5
DEV_DRAM_GBPS = DDR4_CHANNEL_GBPS * DEV_DRAM_CHANNEL_FRAC
#: DRAM access energy, pJ/bit (energy block: DDR4 read/write including I/O).
DRAM_PJ_PER_BIT = energy.DRAM_ACCESS_PJ_PER_BIT["ddr4"][0]
#: PCIe PHY energy, pJ/bit (energy block).
PCIE_PJ_PER_BIT = energy.link_pj_per_bit("pcie_phy")

# ----------------------------------------------------------------------------- power
#: Host core power at 3.8 GHz, W.  Assumption: a server core near 5 W when busy (a 32-core
#: 3.8-GHz-boost server CPU at ~165 W TDP).
HOST_CORE_W = 5.0
#: Host platform power without cores and DRAM (board, NIC, fans, PSU loss), W.  Assumption.
HOST_PLATFORM_W = 50.0
#: DockerSSD core power at 2.2 GHz, W.  Assumption: an embedded application-class core
#: (Cortex-A7x / RISC-V out-of-order class) near 0.5 W.
DEV_CORE_W = 0.5
#: DockerSSD base power (controller front end, DRAM background, idle flash), W.
#: Assumption: enterprise NVMe SSDs idle at 3-5 W.
DEV_BASE_W = 4.0
#: Power of an SSD used as swap (controller + flash busy), W.  Assumption: enterprise NVMe
#: SSD active read power ~10 W.
SWAP_SSD_W = 10.0


def core_power_w(cores: Any, clock_ghz: Any, w_per_core: float, ref_ghz: float) -> np.ndarray:
    """Busy cores' power: linear in core count and in clock (fixed voltage).  Assumption."""
    return np.asarray(cores, dtype=np.float64) * w_per_core * np.asarray(clock_ghz, dtype=np.float64) / ref_ghz


# ----------------------------------------------------------------------------- prices
#: Host server without DRAM and storage (chassis, board, CPU, NIC), USD.  Assumption: an
#: entry 1-socket rack server at list price (2024 Dell/HPE 1U class); the cost block has
#: no server line.
HOST_SERVER_USD = 3000.0
#: DockerSSDs behind one PCIe switch.  Assumption: a 100-lane switch fanning out 16 x4 SSDs.
SSDS_PER_SWITCH = 16
#: DockerSSDs per management host of the pool.  Assumption: one host per four switch trays.
SSDS_PER_HOST = 64
#: Cores of the enterprise SSD controller price in the cost block.  Assumption: the
#: compute-enabled controller costs the enterprise controller at the prototype's 6 cores
#: and scales with its core count.
CONTROLLER_REF_CORES = 6


def price(item: str) -> float:
    return cost.component_price(item).value


NAND_MLC_USD_PER_GB = price("nand_mlc")
DRAM_DDR4_USD_PER_GIB = price("dram_ddr4")
SSD_CONTROLLER_USD = price("ssd_controller_enterprise")
SSD_OTHER_USD = price("ssd_other")
SWITCH_USD = price("cxl_switch")  # the cost block's PCIe/CXL switch ASIC placeholder


def dram_usd(gb: Any) -> np.ndarray:
    return np.asarray(gb, dtype=np.float64) * GB / GIB * DRAM_DDR4_USD_PER_GIB


def ssd_usd(capacity_gb: Any, dram_gb: Any, cores: Any = CONTROLLER_REF_CORES) -> np.ndarray:
    """One SSD's BOM: MLC NAND, DRAM, controller (scaled by cores), PCB and packaging (cost block)."""
    return (np.asarray(capacity_gb, dtype=np.float64) * NAND_MLC_USD_PER_GB + dram_usd(dram_gb)
            + SSD_CONTROLLER_USD * np.asarray(cores, dtype=np.float64) / CONTROLLER_REF_CORES + SSD_OTHER_USD)


def host_usd(dram_gb: Any) -> np.ndarray:
    return HOST_SERVER_USD + dram_usd(dram_gb)


# ----------------------------------------------------------------------------- tables
def _read_csv(name: str) -> list[dict[str, str]]:
    with open(HERE / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


@cache
def isp_workloads() -> dict[str, Any]:
    """The Fig. 4a table: workload labels and one numpy column per field."""
    rows = _read_csv("workloads.csv")
    labels = tuple(f"{r['prog']}_{r['workload']}" for r in rows)
    cols = {k: np.asarray([float(r[k]) for r in rows]) for k in
            ("io_gb", "io_count", "syscalls", "pathwalks", "files", "tcp_packets", "exec_s", "read_frac", "sequential")}
    return {"labels": labels, **cols}


@cache
def llm_table() -> tuple[dict[str, str], ...]:
    return tuple(_read_csv("llms.csv"))
