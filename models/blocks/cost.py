"""Cost block: bill of materials, capex amortization, energy cost, TCO, price tables.

Functions (vectorized over every numeric argument):

* ``BomLine`` / ``bom_total_usd(lines)`` / ``bom_frame(lines)``: BOM lines (component,
  quantity, unit price, date, source) and their total; ``bom_line(item, quantity)``
  builds a line from the component price table.
* ``capital_recovery_factor(rate, years)``; ``amortized_capex_usd_per_year(capex_usd,
  years, rate)``: straight line (``rate = 0``) or an annuity at cost of capital ``rate``
  (its present value equals the capex).
* ``energy_kwh(power_w, hours, pue)``; ``energy_cost_usd(power_w, hours, pue,
  usd_per_kwh)`` = W x h x PUE / 1000 x $/kWh.
* ``tco_usd_per_year(...)`` and ``tco_usd(capex_usd, power_w, years, ...)``: amortized capex
  + energy + other opex, per year and over the lifetime.
* ``object_storage_cost_usd(size_gb, months, reads_per_month, tier, ...)``: cloud object
  storage bill (storage with minimum duration, retrieval, requests) for a tier of
  ``object_storage_tiers()``.
* Price tables (``prices/*.csv``; every row has a date and a source):
  ``object_storage_tiers(provider)``, ``instance_price_usd_per_hour(instance, pricing)``,
  ``component_price(item)``, ``energy_default(item)``, and ``price_table(name)`` for the
  whole table as a polars DataFrame.

Defaults: electricity 0.127 $/kWh (EIA 2023 U.S. commercial average), PUE 1.58 (Uptime
Institute 2023 survey average); see ``prices/energy.csv``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from dse import units
from dse.errors import DseError, allowed_list, did_you_mean

ArrayLike = Any

PRICES_DIR = Path(__file__).resolve().parent / "prices"
PRICE_TABLES: tuple[str, ...] = ("object_storage", "instances", "components", "energy")


# ============================================================================= price tables
@cache
def _rows(name: str) -> tuple[dict[str, str], ...]:
    if name not in PRICE_TABLES:
        raise DseError(f"unknown price table {name!r}{did_you_mean(name, PRICE_TABLES)}; allowed: {allowed_list(PRICE_TABLES)}")
    with open(PRICES_DIR / f"{name}.csv", newline="", encoding="utf-8") as fh:
        rows = tuple(csv.DictReader(fh))
    for i, row in enumerate(rows):
        if not row.get("date") or not row.get("source"):
            raise RuntimeError(f"prices/{name}.csv row {i + 2} has no date or source")
    return rows


def price_table(name: str) -> Any:
    """A whole price table (``object_storage``, ``instances``, ``components``, ``energy``) as
    a polars DataFrame, numeric columns parsed."""
    import polars as pl  # noqa: PLC0415

    rows = _rows(name)
    cols: dict[str, list[Any]] = {k: [r[k] for r in rows] for k in rows[0]}
    out: dict[str, Any] = {}
    for k, vals in cols.items():
        try:
            out[k] = [float(v) if v != "" else None for v in vals]
        except ValueError:
            out[k] = vals
    return pl.DataFrame(out)


def energy_default(item: str) -> float:
    """A default from ``prices/energy.csv`` (electricity $/kWh, PUE)."""
    for r in _rows("energy"):
        if r["item"] == item:
            return float(r["value"])
    raise DseError(f"unknown energy default {item!r}; allowed: {allowed_list(r['item'] for r in _rows('energy'))}")


#: Default electricity price, $/kWh (EIA 2023 U.S. commercial average; prices/energy.csv).
USD_PER_KWH = energy_default("electricity_commercial_us")
#: Default power usage effectiveness (Uptime Institute 2023 average; prices/energy.csv).
PUE = energy_default("pue_industry_average")


@dataclass(frozen=True)
class Price:
    """One dated, sourced price."""

    item: str
    value: float
    unit: str
    date: str
    source: str


@cache
def component_price(item: str) -> Price:
    """Price of a component from ``prices/components.csv`` (NAND $/GB by cell type, DRAM
    $/GiB by type, SSD / CXL controllers, retimers, switches); cached, as the table is."""
    rows = {r["item"]: r for r in _rows("components")}
    if item not in rows:
        raise DseError(f"unknown component {item!r}{did_you_mean(item, rows)}; allowed: {allowed_list(rows)}")
    r = rows[item]
    return Price(item, float(r["usd_per_unit"]), r["unit"], r["date"], r["source"])


def instance_price_usd_per_hour(instance: str, pricing: str = "on_demand", provider: str = "aws") -> float:
    """Hourly price of a cloud instance from ``prices/instances.csv``."""
    rows = [r for r in _rows("instances") if r["provider"] == provider and r["instance"] == instance]
    if not rows:
        names = sorted({r["instance"] for r in _rows("instances")})
        raise DseError(f"unknown instance {instance!r}{did_you_mean(instance, names)}; allowed: {allowed_list(names)}")
    for r in rows:
        if r["pricing"] == pricing:
            return float(r["usd_per_hour"])
    raise DseError(f"no {pricing!r} price for {instance}; have: {allowed_list(r['pricing'] for r in rows)}")


@dataclass(frozen=True)
class StorageTier:
    """One object-storage tier (prices per GB-month, per GB retrieved, per 1000 requests)."""

    provider: str
    tier: str
    label: str
    storage_usd_per_gb_month: float
    retrieval_usd_per_gb: float
    put_usd_per_1000: float
    get_usd_per_1000: float
    min_duration_days: float
    min_object_kb: float
    first_byte_latency_s: float
    availability_pct: float
    date: str
    source: str


@cache
def object_storage_tiers(provider: str = "aws") -> tuple[StorageTier, ...]:
    """Object-storage tiers of ``provider``, hottest first (frequent, infrequent, one-zone,
    archive-instant, archive-flexible, deep archive, and bulk-retrieval variants)."""
    out = []
    for r in _rows("object_storage"):
        if r["provider"] != provider:
            continue
        out.append(
            StorageTier(
                provider=r["provider"], tier=r["tier"], label=r["label"],
                storage_usd_per_gb_month=float(r["storage_usd_per_gb_month"]),
                retrieval_usd_per_gb=float(r["retrieval_usd_per_gb"]),
                put_usd_per_1000=float(r["put_usd_per_1000"]),
                get_usd_per_1000=float(r["get_usd_per_1000"]),
                min_duration_days=float(r["min_duration_days"]),
                min_object_kb=float(r["min_object_kb"]),
                first_byte_latency_s=float(r["first_byte_latency_s"]),
                availability_pct=float(r["availability_pct"]),
                date=r["date"], source=r["source"],
            )
        )
    if not out:
        providers = sorted({r["provider"] for r in _rows("object_storage")})
        raise DseError(f"no object-storage prices for provider {provider!r}; allowed: {allowed_list(providers)}")
    return tuple(out)


def storage_tier_names(provider: str = "aws") -> tuple[str, ...]:
    """Tier labels, index = code accepted by :func:`object_storage_cost_usd`."""
    return tuple(t.tier for t in object_storage_tiers(provider))


def _tier_codes(tier: ArrayLike, provider: str) -> np.ndarray | int:
    names = storage_tier_names(provider)
    if isinstance(tier, str):
        if tier not in names:
            raise DseError(f"unknown storage tier {tier!r}{did_you_mean(tier, names)}; allowed: {allowed_list(names)}")
        return names.index(tier)
    arr = np.asarray(tier)
    if arr.dtype.kind in "US" or arr.dtype == object:
        return np.asarray([_tier_codes(str(t), provider) for t in arr.ravel()], dtype=np.int64).reshape(arr.shape)
    if arr.dtype.kind not in "iu" or (arr.size and (arr.min() < 0 or arr.max() >= len(names))):
        raise DseError(f"storage tier codes must be 0..{len(names) - 1} ({allowed_list(names)})")
    return arr


# ============================================================================= BOM
@dataclass(frozen=True)
class BomLine:
    """A bill-of-materials line: ``quantity`` x ``unit_price_usd`` of ``component``,
    priced on ``date`` according to ``source``."""

    component: str
    quantity: float
    unit_price_usd: float
    date: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        if self.quantity < 0:
            raise DseError(f"BOM line {self.component}: quantity must be >= 0")
        if self.unit_price_usd < 0:
            raise DseError(f"BOM line {self.component}: unit price must be >= 0")
        if not self.source:
            raise DseError(f"BOM line {self.component}: a source for the price is required")

    @property
    def total_usd(self) -> float:
        return self.quantity * self.unit_price_usd


def bom_line(item: str, quantity: float, *, component: str | None = None) -> BomLine:
    """A BOM line priced from ``prices/components.csv``; ``quantity`` in the table's unit
    (GB for ``usd_per_gb``, GiB for ``usd_per_gib``, pieces for ``usd_each``)."""
    p = component_price(item)
    return BomLine(component or item, quantity, p.value, p.date, p.source)


def bom_total_usd(lines: Iterable[BomLine]) -> float:
    """Sum of quantity x unit price over the lines."""
    return float(sum(line.total_usd for line in lines))


def bom_frame(lines: Sequence[BomLine]) -> Any:
    """The BOM as a polars DataFrame with a ``total_usd`` column per line."""
    import polars as pl  # noqa: PLC0415

    return pl.DataFrame(
        {
            "component": [l.component for l in lines],
            "quantity": [float(l.quantity) for l in lines],
            "unit_price_usd": [float(l.unit_price_usd) for l in lines],
            "total_usd": [float(l.total_usd) for l in lines],
            "date": [l.date for l in lines],
            "source": [l.source for l in lines],
        }
    )


# ============================================================================= amortization and TCO
def capital_recovery_factor(rate: ArrayLike, years: ArrayLike) -> np.ndarray:
    """Annual payment per dollar of capex repaid over ``years`` at interest ``rate``:
    r (1+r)^n / ((1+r)^n - 1); 1/n when r = 0 (straight line)."""
    r = np.asarray(rate, dtype=np.float64)
    n = np.asarray(years, dtype=np.float64)
    if np.any(n <= 0):
        raise DseError("years must be positive")
    if np.any(r < 0):
        raise DseError("the cost of capital (rate) must be >= 0")
    r_safe = np.where(r > 0, r, 1.0)
    growth = (1.0 + r_safe) ** n
    return np.where(r > 0, r_safe * growth / (growth - 1.0), 1.0 / n)


def amortized_capex_usd_per_year(capex_usd: ArrayLike, years: ArrayLike, rate: ArrayLike = 0.0) -> np.ndarray:
    """Capex spread over ``years``: straight line (``rate = 0``) or an annuity whose present
    value at ``rate`` equals ``capex_usd``."""
    c = np.asarray(capex_usd, dtype=np.float64)
    if np.any(c < 0):
        raise DseError("capex_usd must be >= 0")
    return c * capital_recovery_factor(rate, years)


def energy_kwh(power_w: ArrayLike, hours: ArrayLike, pue: ArrayLike = 1.0) -> np.ndarray:
    """Facility energy: W x h x PUE / 1000."""
    p = np.asarray(power_w, dtype=np.float64)
    h = np.asarray(hours, dtype=np.float64)
    e = np.asarray(pue, dtype=np.float64)
    if np.any(p < 0) or np.any(h < 0):
        raise DseError("power_w and hours must be >= 0")
    if np.any(e < 1):
        raise DseError("PUE must be >= 1")
    return p * h * e / units.W_PER_KW


def energy_cost_usd(power_w: ArrayLike, hours: ArrayLike, pue: ArrayLike = PUE, usd_per_kwh: ArrayLike = USD_PER_KWH) -> np.ndarray:
    """Electricity cost: W x hours x PUE / 1000 x $/kWh."""
    return energy_kwh(power_w, hours, pue) * np.asarray(usd_per_kwh, dtype=np.float64)


def tco_usd_per_year(
    capex_usd: ArrayLike,
    power_w: ArrayLike,
    years: ArrayLike,
    *,
    pue: ArrayLike = PUE,
    usd_per_kwh: ArrayLike = USD_PER_KWH,
    opex_usd_per_year: ArrayLike = 0.0,
    rate: ArrayLike = 0.0,
    duty_frac: ArrayLike = 1.0,
) -> np.ndarray:
    """Yearly cost of ownership: amortized capex + energy (``power_w`` drawn for
    ``duty_frac`` of the year) + other opex."""
    d = np.asarray(duty_frac, dtype=np.float64)
    if np.any((d < 0) | (d > 1)):
        raise DseError("duty_frac must be within [0, 1]")
    energy = energy_cost_usd(power_w, units.HOURS_PER_YEAR * d, pue, usd_per_kwh)
    return amortized_capex_usd_per_year(capex_usd, years, rate) + energy + np.asarray(opex_usd_per_year, dtype=np.float64)


def tco_usd(
    capex_usd: ArrayLike,
    power_w: ArrayLike,
    years: ArrayLike,
    **kwargs: Any,
) -> np.ndarray:
    """Total cost of ownership over ``years`` (nominal): ``tco_usd_per_year x years``.
    With ``rate = 0`` this is capex + energy + opex over the lifetime."""
    return tco_usd_per_year(capex_usd, power_w, years, **kwargs) * np.asarray(years, dtype=np.float64)


# ============================================================================= object storage
def object_storage_cost_usd(
    size_gb: ArrayLike,
    months: ArrayLike,
    reads_per_month: ArrayLike = 0.0,
    tier: ArrayLike = "frequent",
    *,
    provider: str = "aws",
    objects: ArrayLike = 1.0,
    writes: ArrayLike = 1.0,
) -> np.ndarray:
    """Bill (USD) for keeping ``size_gb`` in ``objects`` objects for ``months`` and reading
    all of it ``reads_per_month`` times a month, on a tier (label, labels, or codes into
    :func:`storage_tier_names`).

    storage: size x $/GB-month x max(months, minimum duration); retrieval: size x reads x
    months x $/GB; requests: objects x (writes x PUT + reads x months x GET) / 1000.
    """
    codes = _tier_codes(tier, provider)
    tiers = object_storage_tiers(provider)
    store = np.array([t.storage_usd_per_gb_month for t in tiers])[codes]
    retr = np.array([t.retrieval_usd_per_gb for t in tiers])[codes]
    put = np.array([t.put_usd_per_1000 for t in tiers])[codes]
    get = np.array([t.get_usd_per_1000 for t in tiers])[codes]
    min_months = np.array([t.min_duration_days for t in tiers])[codes] / units.DAYS_PER_MONTH
    size = np.asarray(size_gb, dtype=np.float64)
    m = np.asarray(months, dtype=np.float64)
    reads = np.asarray(reads_per_month, dtype=np.float64)
    if np.any(size < 0) or np.any(m < 0) or np.any(reads < 0):
        raise DseError("size_gb, months and reads_per_month must be >= 0")
    n_obj = np.asarray(objects, dtype=np.float64)
    storage = size * store * np.maximum(m, min_months)
    retrieval = size * reads * m * retr
    requests = n_obj * (np.asarray(writes, dtype=np.float64) * put + reads * m * get) / 1000.0
    return storage + retrieval + requests
