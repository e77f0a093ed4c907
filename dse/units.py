"""Units: the one place for unit constants and unit-suffix conversions.

Conventions (see README "Units"):

* every quantity carries its unit as the last part of its name (``latency_ns``,
  ``bw_gbps``, ``capacity_gib``, ``price_usd``, ``power_w``);
* bandwidths are bytes per second with SI prefixes: ``gbps`` = GB/s = 1e9 B/s,
  ``mbps`` = MB/s = 1e6 B/s.  Network *bit* rates use ``gbit_s`` (1e9 bit/s);
* capacities use binary prefixes where the source does (``gib`` = 2**30 B) and SI
  prefixes otherwise (``gb`` = 1e9 B, ``tb`` = 1e12 B);
* costs are US dollars (``usd``), energy joules (``j``, ``pj``), power watts (``w``).
"""

from __future__ import annotations

import math

# --- time -------------------------------------------------------------------
NS_PER_US = 1e3
NS_PER_MS = 1e6
NS_PER_S = 1e9
US_PER_MS = 1e3
US_PER_S = 1e6
MS_PER_S = 1e3
S_PER_HOUR = 3600.0
HOURS_PER_DAY = 24.0
DAYS_PER_YEAR = 365.25
HOURS_PER_YEAR = HOURS_PER_DAY * DAYS_PER_YEAR
DAYS_PER_MONTH = DAYS_PER_YEAR / 12.0

# --- sizes ------------------------------------------------------------------
KIB = 1024
MIB = 1024**2
GIB = 1024**3
TIB = 1024**4
KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
BITS_PER_BYTE = 8
CACHELINE_B = 64

# --- rates ------------------------------------------------------------------
B_PER_S_PER_GBPS = 1e9  # 1 GB/s in bytes per second
B_PER_S_PER_MBPS = 1e6
GBIT_PER_GB = 8.0

# --- energy -----------------------------------------------------------------
J_PER_PJ = 1e-12
J_PER_NJ = 1e-9
J_PER_KWH = 3.6e6
W_PER_KW = 1e3

# Unit suffix table: suffix -> (dimension, factor to the SI base unit of that
# dimension).  Used to accept ``key_us=0.2`` for a parameter named ``key_ns`` and to
# refuse ``key_gbps`` for a parameter named ``key_ns``.
UNIT_SUFFIXES: dict[str, tuple[str, float]] = {
    # time (s)
    "ps": ("time", 1e-12),
    "ns": ("time", 1e-9),
    "us": ("time", 1e-6),
    "ms": ("time", 1e-3),
    "s": ("time", 1.0),
    "min": ("time", 60.0),
    "h": ("time", 3600.0),
    "hours": ("time", 3600.0),
    "days": ("time", 86400.0),
    "years": ("time", 86400.0 * DAYS_PER_YEAR),
    # frequency (Hz)
    "hz": ("frequency", 1.0),
    "khz": ("frequency", 1e3),
    "mhz": ("frequency", 1e6),
    "ghz": ("frequency", 1e9),
    "mts": ("transfer_rate", 1e6),
    "gts": ("transfer_rate", 1e9),
    # data size (B)
    "b": ("bytes", 1.0),
    "bytes": ("bytes", 1.0),
    "kib": ("bytes", KIB),
    "mib": ("bytes", MIB),
    "gib": ("bytes", GIB),
    "tib": ("bytes", TIB),
    "kb": ("bytes", KB),
    "mb": ("bytes", MB),
    "gb": ("bytes", GB),
    "tb": ("bytes", TB),
    "bits": ("bits", 1.0),
    # bandwidth (B/s)
    "bps": ("bandwidth", 1.0),
    "kbps": ("bandwidth", 1e3),
    "mbps": ("bandwidth", 1e6),
    "gbps": ("bandwidth", 1e9),
    "tbps": ("bandwidth", 1e12),
    "gbit_s": ("bitrate", 1e9),
    "mbit_s": ("bitrate", 1e6),
    # rates of operations (1/s)
    "iops": ("rate", 1.0),
    "kiops": ("rate", 1e3),
    "qps": ("rate", 1.0),
    "per_s": ("rate", 1.0),
    "tokens_per_s": ("rate", 1.0),
    "samples_per_s": ("rate", 1.0),
    # money
    "usd": ("money", 1.0),
    "usd_per_gib": ("money_per_capacity", 1.0 / GIB),
    "usd_per_gb": ("money_per_capacity", 1.0 / GB),
    "usd_per_tb": ("money_per_capacity", 1.0 / TB),
    "usd_per_hour": ("money_per_time", 1.0 / 3600.0),
    "usd_per_kwh": ("money_per_energy", 1.0 / J_PER_KWH),
    # power and energy
    "w": ("power", 1.0),
    "mw": ("power", 1e-3),
    "kw": ("power", 1e3),
    "j": ("energy", 1.0),
    "mj": ("energy", 1e-3),
    "uj": ("energy", 1e-6),
    "nj": ("energy", 1e-9),
    "pj": ("energy", 1e-12),
    "pj_per_bit": ("energy_per_bit", 1e-12),
    # area
    "mm2": ("area", 1e-6),
    # dimensionless (ratios, fractions, percentages, counts)
    "frac": ("fraction", 1.0),
    "pct": ("fraction", 0.01),
    "x": ("ratio", 1.0),
    "ratio": ("ratio", 1.0),
    "count": ("count", 1.0),
    "cyc": ("cycles", 1.0),
    "cycles": ("cycles", 1.0),
    "flops": ("flops", 1.0),
    "tflops": ("flops_rate", 1e12),
}

# Units a name may end in that consist of several underscore-separated tokens.
_MULTI_TOKEN = sorted((u for u in UNIT_SUFFIXES if "_" in u), key=len, reverse=True)


def unit_of(name: str) -> str | None:
    """The unit suffix of a quantity name, or None when the name carries no known unit.
    A ratio of two units (``iops_per_usd``, ``dram_gb_per_tb``) is one compound unit.

    >>> unit_of("ctrl_latency_ns"), unit_of("price_usd_per_gib"), unit_of("media")
    ('ns', 'usd_per_gib', None)
    """
    low = name.lower()
    tokens = low.split("_")
    for i in range(1, len(tokens) - 1):
        if tokens[i] == "per":
            num, den = tokens[i - 1], "_".join(tokens[i + 1 :])
            if num in UNIT_SUFFIXES and den in UNIT_SUFFIXES:
                return f"{num}_per_{den}"
    for u in _MULTI_TOKEN:
        if low == u or low.endswith("_" + u):
            return u
    last = tokens[-1]
    if last in UNIT_SUFFIXES and "_" in low:
        return last
    return None


def _entry(unit: str) -> tuple[str, float] | None:
    """(dimension, factor) of a unit, compound ``a_per_b`` units included."""
    u = unit.lower()
    if u in UNIT_SUFFIXES:
        return UNIT_SUFFIXES[u]
    num, sep, den = u.partition("_per_")
    if sep and num in UNIT_SUFFIXES and den in UNIT_SUFFIXES:
        (dn, fn), (dd, fd) = UNIT_SUFFIXES[num], UNIT_SUFFIXES[den]
        return f"{dn}/{dd}", fn / fd
    return None


def stem_of(name: str) -> str:
    """The name without its unit suffix."""
    u = unit_of(name)
    return name[: -(len(u) + 1)] if u else name


def dimension(unit: str) -> str | None:
    entry = _entry(unit)
    return entry[0] if entry else None


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert ``value`` between two unit suffixes of the same dimension.

    Raises ValueError naming both units when the dimensions differ.
    """
    f = _entry(from_unit)
    t = _entry(to_unit)
    if f is None or t is None:
        unknown = from_unit if f is None else to_unit
        raise ValueError(f"unknown unit {unknown!r}")
    if f[0] != t[0]:
        raise ValueError(f"cannot convert {from_unit} ({f[0]}) to {to_unit} ({t[0]})")
    out = value * f[1] / t[1]
    # keep exact integers exact where the conversion is exact
    if isinstance(value, int) and math.isclose(out, round(out), rel_tol=0, abs_tol=1e-9):
        return int(round(out))
    return out
