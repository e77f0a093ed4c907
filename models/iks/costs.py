"""Cost and power of a RAG deployment with or without IKS (digest §2 mechanism 9, §7
ambiguity 10: the article gives no prices or power, so every number here is sourced
elsewhere or an assumption).

* GPUs (and the host CPU that runs the CPU baselines) are rented: the cost block's
  p5.48xlarge hourly price per H100 (the instance carries the host sockets too).
* An IKS is bought: LPDDR5 $/GiB (cost block) x 512 GB + 8 NMA dies + a CXL controller
  (cost block), amortized over ``years`` plus its electricity (cost block defaults).
* Power: H100s busy for the generation share of the time, the host socket busy for the
  CPU retrieval share, the IKS: DRAM background + dynamic energy of the streamed bytes
  (energy block) + NMAs while searching + the CXL controller.
"""

from __future__ import annotations

import numpy as np

from dse.units import BITS_PER_BYTE, B_PER_S_PER_GBPS, GB, GIB, HOURS_PER_YEAR, J_PER_PJ
from models.blocks import cost, energy

#: One H100 of a p5.48xlarge (8 x H100 80 GB), $/h (cost block instances table, dated).
GPU_USD_PER_HOUR = cost.instance_price_usd_per_hour("p5.48xlarge") / 8.0
#: LPDDR5 price, $/GiB (cost block component dram_lpddr5, an assumption there).
LPDDR_USD_PER_GIB = cost.component_price("dram_lpddr5").value
#: CXL controller of the IKS (cost block component cxl_memory_controller, placeholder).
CXL_CTRL_USD = cost.component_price("cxl_memory_controller").value
#: NMA die price, $ each.  Assumption: a small accelerator die with 64 PEs and an LPDDR5X
#: controller priced like an enterprise SSD controller (cost block ssd_controller_enterprise).
NMA_USD = cost.component_price("ssd_controller_enterprise").value
#: H100 SXM board power, W.  Source: NVIDIA H100 datasheet (up to 700 W).
GPU_BUSY_W = 700.0
#: H100 idle power, W.  Assumption: ~10% of the board power.
GPU_IDLE_W = 70.0
#: Host socket power, W.  Source: Intel ARK, Xeon Gold 6554S TDP 270 W.
CPU_BUSY_W = 270.0
#: Host socket idle power, W.  Assumption: ~30% of TDP.
CPU_IDLE_W = 80.0
#: NMA power while searching, W each.  Assumption: 4352 fp16 MACs at 1 GHz (~1 pJ/MAC
#: with operand movement) plus SRAM and the LPDDR5X controller, ~5 W.
NMA_BUSY_W = 5.0
#: CXL controller power, W.  Assumption: as cxl-expander's controller (8 W).
CXL_CTRL_W = 8.0
#: LPDDR5X energy: the energy block has no LPDDR5 IDD set; the LPDDR4-2400 set (x64 channel
#: of four x16 devices) is the nearest public one (same choice as the cxl-expander model).
_E = energy.dram_standard_energy("LPDDR4-2400")
_SPEC = energy.dram_standard("LPDDR4-2400")
#: Background (refresh + precharge standby) power of one x16 device, W.
DRAM_BACKGROUND_W_PER_CHANNEL = float(_E["refresh_w"] + _E["precharge_standby_w"]) / _SPEC.devices
#: Dynamic energy of a streamed read, pJ/bit: the burst plus one activate per row of 64 lines.
DRAM_STREAM_PJ_PER_BIT = float(_E["read_pj"] + _E["act_pj"] / 64.0) / (_SPEC.access_b * BITS_PER_BYTE)


def device_capex_usd(nma_usd) -> np.ndarray:
    """Bill of materials of one 512-GB IKS."""
    from models.iks import device

    lpddr = device.DEVICE_CAPACITY_GB * GB / GIB * LPDDR_USD_PER_GIB
    return lpddr + device.PACKAGES * np.asarray(nma_usd, dtype=np.float64) + CXL_CTRL_USD


def device_power_w(stream_gbps, search_duty) -> np.ndarray:
    """Average power of one IKS streaming ``stream_gbps`` on average, NMAs busy ``search_duty``."""
    from models.iks import device

    dram_w = device.CHANNELS * DRAM_BACKGROUND_W_PER_CHANNEL + (
        stream_gbps * B_PER_S_PER_GBPS * BITS_PER_BYTE * DRAM_STREAM_PJ_PER_BIT * J_PER_PJ
    )
    return dram_w + device.PACKAGES * NMA_BUSY_W * search_duty + CXL_CTRL_W


def hourly_usd(gpus, n_iks, device_usd, device_w, years) -> np.ndarray:
    """Cost per hour: rented GPUs + amortized IKS devices and their electricity."""
    capex_per_h = n_iks * device_usd / (years * HOURS_PER_YEAR)
    energy_per_h = cost.energy_cost_usd(n_iks * device_w, 1.0)
    return gpus * GPU_USD_PER_HOUR + capex_per_h + energy_per_h
