"""Energy block: per-operation energy of links, DRAM and flash.

Links
-----
* ``LINK_PJ_PER_BIT`` / ``link_pj_per_bit(kind)`` and ``link_energy_pj(nbytes, kind)``:
  SerDes / PHY energy per bit moved (PCIe / CXL PHY, UCIe on-package links).

DRAM (IDD-current method)
-------------------------
Micron's method (TN-40-07 "Calculating Memory Power for DDR4 SDRAM", the same one
DRAMsim3 and DRAMPower implement), per device, scaled by the devices that serve one
access:

* activate + precharge: ``VDD (IDD0 tRC - IDD3N tRAS - IDD2N tRP)``
* read / write burst:   ``VDD (IDD4R|IDD4W - IDD3N) tBURST``
* refresh (per tRFC):   ``VDD (IDD5 - IDD3N) tRFC``, i.e. average power x tRFC / tREFI
* background:           ``VDD IDD3N`` (a bank open) or ``VDD IDD2N`` (all precharged)

``dram_op_energy(vdd_v, idd0_ma, ...)`` is the vectorized core taking currents and
timings; ``DRAM_STANDARDS`` holds them for DDR4-3200, LPDDR4-2400, GDDR6 and HBM2 (from
the DRAMsim3 configs in ``shared/reference/dramsim3``) and DDR5-4800 (derived, see its
source).  ``dram_energy_per_bit_pj(standard, row_hit_rate, read_frac)`` and
``dram_power_w(standard, bw_gbps, ...)`` build on them.  IDD currents exclude the I/O
(DQ drivers and termination); pass ``io_pj_per_bit`` to add it.
``DRAM_ACCESS_PJ_PER_BIT`` lists published whole-access figures (core + I/O).

Flash
-----
``flash_op_energy_uj(t_op_us, icc_ma, vcc_v)`` = V x I x t for an array operation (ONFI
ICC1 read, ICC2 program, ICC3 erase), ``flash_transfer_energy_uj(nbytes, channel_mbps)``
for the channel transfer at VCCQ x ICCQ, and ``flash_page_energy_uj(op, t_op_us, page_b,
channel_mbps)`` / ``flash_energy_per_bit_pj`` for whole page operations.  Defaults from
the Espresso paper (3.3 V, 25 mA read/program/erase; ``shared/research/espresso.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dse.errors import DseError, allowed_list, did_you_mean

ArrayLike = Any

# ============================================================================= links
#: Link energy, pJ per bit moved, with sources.
LINK_PJ_PER_BIT: dict[str, tuple[float, str]] = {
    "pcie_phy": (6.0, "Espresso paper L217 'CXL/PCIe PHY = 6 pJ/bit' (shared/research/espresso.md)"),
    "cxl_phy": (6.0, "Espresso paper L217 'CXL/PCIe PHY = 6 pJ/bit' (shared/research/espresso.md)"),
    "ucie_standard": (0.5, "UCIe 1.0 key-metric target, standard package (UCIe tutorial, Hot Chips 2023)"),
    "ucie_advanced": (0.25, "UCIe 1.0 key-metric target, advanced package up to 12 GT/s (UCIe tutorial, Hot Chips 2023)"),
}


def link_pj_per_bit(kind: str) -> float:
    """pJ/bit of a link kind in ``LINK_PJ_PER_BIT``."""
    if kind not in LINK_PJ_PER_BIT:
        raise DseError(f"unknown link kind {kind!r}{did_you_mean(kind, LINK_PJ_PER_BIT)}; allowed: {allowed_list(LINK_PJ_PER_BIT)}")
    return LINK_PJ_PER_BIT[kind][0]


def link_energy_pj(nbytes: ArrayLike, kind: str | None = "cxl_phy", *, pj_per_bit: ArrayLike | None = None) -> np.ndarray:
    """Energy (pJ) to move ``nbytes`` over a link of ``kind`` (or at ``pj_per_bit``).
    Count wire bytes (payload / link efficiency) to include protocol overhead."""
    e = link_pj_per_bit(kind) if pj_per_bit is None else np.asarray(pj_per_bit, dtype=np.float64)  # type: ignore[arg-type]
    n = np.asarray(nbytes, dtype=np.float64)
    if np.any(n < 0):
        raise DseError("nbytes must be >= 0")
    return n * 8.0 * e


# ============================================================================= DRAM
#: Published whole-access energy (core + I/O), pJ per bit read or written.
DRAM_ACCESS_PJ_PER_BIT: dict[str, tuple[float, str]] = {
    "ddr4": (22.0, "Espresso paper L217 'DRAM read/write = 22 pJ/bit' (shared/research/espresso.md)"),
    "gddr5": (14.0, "O'Connor et al., 'Fine-Grained DRAM', MICRO 2017, Table 1 (GDDR5 ~14 pJ/bit)"),
    "hbm2": (3.97, "O'Connor et al., 'Fine-Grained DRAM', MICRO 2017, Table 1 (HBM2 3.97 pJ/bit)"),
}


@dataclass(frozen=True)
class DramPowerSpec:
    """IDD currents (mA, per device), supply voltage and timings (in clock cycles of
    ``tck_ns``) of one DRAM standard, and how many devices serve one access of
    ``access_b`` bytes."""

    vdd_v: float
    idd0_ma: float
    idd2n_ma: float
    idd3n_ma: float
    idd4r_ma: float
    idd4w_ma: float
    idd5_ma: float
    tck_ns: float
    tras_ck: float
    trp_ck: float
    trfc_ck: float
    trefi_ck: float
    burst_ck: float
    devices: float
    access_b: float
    source: str


_DS3 = "DRAMsim3 config {} (shared/reference/dramsim3, from umd-memsys/DRAMsim3 configs/)"
#: Per-standard DRAM power parameters.  burst_ck follows DRAMsim3: BL/2 (DDR, LPDDR, HBM)
#: or BL/4 (GDDR); devices = bus width / device width.
DRAM_STANDARDS: dict[str, DramPowerSpec] = {
    "DDR4-3200": DramPowerSpec(
        vdd_v=1.2, idd0_ma=57, idd2n_ma=37, idd3n_ma=52, idd4r_ma=168, idd4w_ma=150, idd5_ma=250,
        tck_ns=0.63, tras_ck=52, trp_ck=22, trfc_ck=560, trefi_ck=12480, burst_ck=4, devices=8, access_b=64,
        source=_DS3.format("DDR4_8Gb_x8_3200.ini"),
    ),
    "LPDDR4-2400": DramPowerSpec(
        vdd_v=1.2, idd0_ma=80, idd2n_ma=34, idd3n_ma=47, idd4r_ma=243, idd4w_ma=228, idd5_ma=280,
        tck_ns=0.83, tras_ck=32, trp_ck=15, trfc_ck=392, trefi_ck=8660, burst_ck=8, devices=4, access_b=128,
        source=_DS3.format("LPDDR4_8Gb_x16_2400.ini"),
    ),
    "GDDR6": DramPowerSpec(
        vdd_v=1.35, idd0_ma=71, idd2n_ma=60, idd3n_ma=61, idd4r_ma=248, idd4w_ma=231, idd5_ma=286,
        tck_ns=0.66, tras_ck=54, trp_ck=24, trfc_ck=126, trefi_ck=11862, burst_ck=4, devices=8, access_b=256,
        source=_DS3.format("GDDR6_8Gb_x16.ini"),
    ),
    "HBM2": DramPowerSpec(
        vdd_v=1.2, idd0_ma=65, idd2n_ma=40, idd3n_ma=55, idd4r_ma=390, idd4w_ma=500, idd5_ma=250,
        tck_ns=1.0, tras_ck=34, trp_ck=14, trfc_ck=260, trefi_ck=3900, burst_ck=2, devices=1, access_b=64,
        source=_DS3.format("HBM2_8Gb_x128_1ch.ini"),
    ),
    # DDR5: DRAMsim3 has no DDR5 config.  Assumption: DDR4-3200 currents scaled by the
    # supply ratio (VDD 1.1 V, JESD79-5) at DDR5-4800 timings (tCK 0.416 ns, tRAS 32 ns,
    # tRP 16 ns, tRFC 295 ns for 16 Gb, tREFI 3.9 us: Ramulator2 DDR5 presets / JESD79-5),
    # BL16 on a 32-bit subchannel of 4 x8 devices -> 64 B per access.
    "DDR5-4800": DramPowerSpec(
        vdd_v=1.1, idd0_ma=57 * 1.1 / 1.2, idd2n_ma=37 * 1.1 / 1.2, idd3n_ma=52 * 1.1 / 1.2,
        idd4r_ma=168 * 1.1 / 1.2, idd4w_ma=150 * 1.1 / 1.2, idd5_ma=250 * 1.1 / 1.2,
        tck_ns=0.416, tras_ck=77, trp_ck=39, trfc_ck=709, trefi_ck=9375, burst_ck=8, devices=4, access_b=64,
        source="assumption: DDR4-3200 DRAMsim3 currents x (1.1/1.2) at JESD79-5 DDR5-4800 timings",
    ),
}


def dram_standard(name: str) -> DramPowerSpec:
    """Power parameters of a standard in ``DRAM_STANDARDS`` (case-insensitive)."""
    for k, v in DRAM_STANDARDS.items():
        if k.lower() == name.lower():
            return v
    raise DseError(f"unknown DRAM standard {name!r}{did_you_mean(name, DRAM_STANDARDS)}; allowed: {allowed_list(DRAM_STANDARDS)}")


def dram_op_energy(
    vdd_v: ArrayLike,
    idd0_ma: ArrayLike,
    idd2n_ma: ArrayLike,
    idd3n_ma: ArrayLike,
    idd4r_ma: ArrayLike,
    idd4w_ma: ArrayLike,
    idd5_ma: ArrayLike,
    tck_ns: ArrayLike,
    tras_ck: ArrayLike,
    trp_ck: ArrayLike,
    trfc_ck: ArrayLike,
    trefi_ck: ArrayLike,
    burst_ck: ArrayLike,
    devices: ArrayLike = 1.0,
) -> dict[str, np.ndarray]:
    """Energy per operation for ``devices`` devices operating in lock step (one access):

    * ``act_pj``: one activate + precharge pair;
    * ``read_pj`` / ``write_pj``: one burst;
    * ``refresh_w``: average refresh power; ``active_standby_w`` / ``precharge_standby_w``:
      background power with a bank open / all banks closed.
    (mA x V x ns = pJ.)
    """
    v = np.asarray(vdd_v, dtype=np.float64)
    tck = np.asarray(tck_ns, dtype=np.float64)
    if np.any(v <= 0) or np.any(tck <= 0):
        raise DseError("vdd_v and tck_ns must be positive")
    dev = np.asarray(devices, dtype=np.float64)
    i0, i2n, i3n = (np.asarray(x, dtype=np.float64) for x in (idd0_ma, idd2n_ma, idd3n_ma))
    i4r, i4w, i5 = (np.asarray(x, dtype=np.float64) for x in (idd4r_ma, idd4w_ma, idd5_ma))
    tras = np.asarray(tras_ck, dtype=np.float64) * tck
    trp = np.asarray(trp_ck, dtype=np.float64) * tck
    trc = tras + trp
    tburst = np.asarray(burst_ck, dtype=np.float64) * tck
    trfc = np.asarray(trfc_ck, dtype=np.float64) * tck
    trefi = np.asarray(trefi_ck, dtype=np.float64) * tck
    act = v * (i0 * trc - i3n * tras - i2n * trp)
    return {
        "act_pj": np.maximum(act, 0.0) * dev,
        "read_pj": v * np.maximum(i4r - i3n, 0.0) * tburst * dev,
        "write_pj": v * np.maximum(i4w - i3n, 0.0) * tburst * dev,
        "refresh_w": v * np.maximum(i5 - i3n, 0.0) * 1e-3 * trfc / trefi * dev,
        "active_standby_w": v * i3n * 1e-3 * dev,
        "precharge_standby_w": v * i2n * 1e-3 * dev,
    }


def dram_standard_energy(name: str) -> dict[str, np.ndarray]:
    """:func:`dram_op_energy` for a named standard (per access of ``access_b`` bytes)."""
    s = dram_standard(name)
    return dram_op_energy(
        s.vdd_v, s.idd0_ma, s.idd2n_ma, s.idd3n_ma, s.idd4r_ma, s.idd4w_ma, s.idd5_ma,
        s.tck_ns, s.tras_ck, s.trp_ck, s.trfc_ck, s.trefi_ck, s.burst_ck, s.devices,
    )


def dram_energy_per_bit_pj(
    standard: str,
    row_hit_rate: ArrayLike = 0.0,
    read_frac: ArrayLike = 1.0,
    *,
    io_pj_per_bit: ArrayLike = 0.0,
) -> np.ndarray:
    """Dynamic energy (pJ) per bit read/written: the burst, plus one activate/precharge
    per row miss (``1 - row_hit_rate`` of accesses), plus ``io_pj_per_bit``."""
    s = dram_standard(standard)
    e = dram_standard_energy(standard)
    h = np.asarray(row_hit_rate, dtype=np.float64)
    r = np.asarray(read_frac, dtype=np.float64)
    if np.any((h < 0) | (h > 1)) or np.any((r < 0) | (r > 1)):
        raise DseError("row_hit_rate and read_frac must be within [0, 1]")
    per_access = r * e["read_pj"] + (1 - r) * e["write_pj"] + (1 - h) * e["act_pj"]
    return per_access / (s.access_b * 8.0) + np.asarray(io_pj_per_bit, dtype=np.float64)


def dram_power_w(
    standard: str,
    bw_gbps: ArrayLike,
    row_hit_rate: ArrayLike = 0.0,
    read_frac: ArrayLike = 1.0,
    *,
    open_bank_frac: ArrayLike = 1.0,
    io_pj_per_bit: ArrayLike = 0.0,
    n_access_units: ArrayLike = 1.0,
) -> np.ndarray:
    """Average power (W) of ``n_access_units`` device groups (a rank or channel each) moving
    ``bw_gbps`` in total: dynamic (bits/s x pJ/bit) + refresh + background (active standby for
    ``open_bank_frac`` of the time, precharge standby otherwise)."""
    e = dram_standard_energy(standard)
    bw = np.asarray(bw_gbps, dtype=np.float64)
    if np.any(bw < 0):
        raise DseError("bw_gbps must be >= 0")
    f_open = np.asarray(open_bank_frac, dtype=np.float64)
    units = np.asarray(n_access_units, dtype=np.float64)
    dyn = bw * 1e9 * 8.0 * dram_energy_per_bit_pj(standard, row_hit_rate, read_frac, io_pj_per_bit=io_pj_per_bit) * 1e-12
    bg = f_open * e["active_standby_w"] + (1 - f_open) * e["precharge_standby_w"]
    return dyn + units * (e["refresh_w"] + bg)


# ============================================================================= flash
#: Flash supply voltage (V) and operation currents (mA): ICC1 read, ICC2 program, ICC3
#: erase, ICC5 bus idle; ISB standby (uA).  Source: Espresso paper L217 'Flash op.
#: voltage = 3.3 V, I_READ,PROG,ERASE = 25 mA', bus idle 5 mA, standby 10 uA
#: (shared/research/espresso.md); the ONFI names are the datasheet conventions.
FLASH_VCC_V = 3.3
FLASH_ICC_MA: dict[str, float] = {"read": 25.0, "program": 25.0, "erase": 25.0}
FLASH_ICC_BUSIDLE_MA = 5.0
FLASH_ISB_UA = 10.0
#: I/O supply for channel transfers (V) and current during a transfer burst (mA).
#: VCCQ 1.2 V: ONFI 4.x NV-DDR3.  ICCQ: assumption, same 25 mA as the array operations.
FLASH_VCCQ_V = 1.2
FLASH_ICCQ_MA = 25.0
FLASH_OPS: tuple[str, ...] = ("read", "program", "erase")


def flash_op_energy_uj(t_op_us: ArrayLike, icc_ma: ArrayLike = FLASH_ICC_MA["read"], vcc_v: ArrayLike = FLASH_VCC_V) -> np.ndarray:
    """Energy (uJ) of one array operation lasting ``t_op_us``: V x I x t."""
    t = np.asarray(t_op_us, dtype=np.float64)
    if np.any(t < 0):
        raise DseError("t_op_us must be >= 0")
    return np.asarray(vcc_v, dtype=np.float64) * np.asarray(icc_ma, dtype=np.float64) * 1e-3 * t


def flash_transfer_energy_uj(
    nbytes: ArrayLike, channel_mbps: ArrayLike, *, vccq_v: ArrayLike = FLASH_VCCQ_V, iccq_ma: ArrayLike = FLASH_ICCQ_MA
) -> np.ndarray:
    """Energy (uJ) of moving ``nbytes`` over a flash channel of ``channel_mbps`` (MB/s)."""
    rate = np.asarray(channel_mbps, dtype=np.float64)
    if np.any(rate <= 0):
        raise DseError("channel_mbps must be positive")
    t_us = np.asarray(nbytes, dtype=np.float64) / rate  # B / (MB/s) = us
    return np.asarray(vccq_v, dtype=np.float64) * np.asarray(iccq_ma, dtype=np.float64) * 1e-3 * t_us


def flash_page_energy_uj(
    op: str,
    t_op_us: ArrayLike,
    page_b: ArrayLike = 16384.0,
    channel_mbps: ArrayLike = 1200.0,
    *,
    vcc_v: ArrayLike = FLASH_VCC_V,
    icc_ma: ArrayLike | None = None,
) -> np.ndarray:
    """Energy (uJ) of a page read (tR + transfer out) or program (transfer in + tPROG), or of
    a block erase (tBERS, no transfer)."""
    if op not in FLASH_OPS:
        raise DseError(f"flash op {op!r} is not allowed; allowed: {allowed_list(FLASH_OPS)}")
    i = FLASH_ICC_MA[op] if icc_ma is None else icc_ma
    array = flash_op_energy_uj(t_op_us, i, vcc_v)
    if op == "erase":
        return array
    return array + flash_transfer_energy_uj(page_b, channel_mbps)


def flash_energy_per_bit_pj(op: str, t_op_us: ArrayLike, page_b: ArrayLike = 16384.0, channel_mbps: ArrayLike = 1200.0, **kwargs: Any) -> np.ndarray:
    """:func:`flash_page_energy_uj` per bit of the page (pJ/bit); for ``erase`` pass the
    block size as ``page_b``."""
    return flash_page_energy_uj(op, t_op_us, page_b, channel_mbps, **kwargs) * 1e6 / (np.asarray(page_b, dtype=np.float64) * 8.0)


def flash_idle_power_w(n_dies: ArrayLike, *, bus_idle: bool = False, vcc_v: ArrayLike = FLASH_VCC_V) -> np.ndarray:
    """Idle power (W) of ``n_dies`` dies: standby (ISB) or bus idle (ICC5)."""
    i_ma = FLASH_ICC_BUSIDLE_MA if bus_idle else FLASH_ISB_UA * 1e-3
    return np.asarray(n_dies, dtype=np.float64) * np.asarray(vcc_v, dtype=np.float64) * i_ma * 1e-3
