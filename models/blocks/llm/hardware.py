"""Hardware description for the LLM block: compute engines, memory tiers and networks.

Everything here follows the way Calculon's system files describe a processor
(calculon-ai/calculon, ``calculon/{processor,memory,network,system}.py``):

* a compute engine has a peak rate per datatype and an *efficiency-by-size* table
  ``[[size, efficiency], ...]``: an operation of ``s`` flops (or bytes) runs at the
  efficiency of the first row, in listed order, whose size is ``<= s``.  The tables are
  listed largest size first; flop sizes are given in GFLOP (1e9) and memory sizes in MB
  (1e6 bytes);
* a memory tier has a capacity (GiB = 2**30 bytes in Calculon's files), a bandwidth
  (GB/s = 1e9 B/s) and such a table; moving ``s`` bytes takes ``s / (bw * eff(s))``;
* a network tier has a bandwidth, an efficiency, a latency, a size (endpoints) and, per
  collective, a ``[scalar, offset]`` pair: an operation of ``s`` bytes over ``n`` peers
  moves ``s * scalar * (1 + offset / n)`` bytes and takes
  ``latency + moved / (bandwidth * efficiency)``; a zero-byte operation still costs the
  latency.

All lookups are vectorized: sizes may be numpy arrays of any shape.

Memory tiers beyond Calculon's two (``mem1`` = device HBM/DRAM, ``mem2`` = offload tier)
are described by :class:`MemoryTier` with a ``kind`` (``hbm``, ``host_dram``, ``cxl``,
``ssd``, ``flash``, ``swap``) and, for OS swap, a page-fault cost that lowers the
effective bandwidth (``page_bytes / (fault_s + page_bytes / bw)``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from dse import units
from dse.errors import DseError, allowed_list

#: bytes per element of each datatype Calculon knows (``System.TypeSizes``).
DTYPE_BYTES: dict[str, int] = {"float8": 1, "float16": 2, "bfloat16": 2, "float32": 4}

#: short names accepted for datatypes
DTYPE_ALIASES: dict[str, str] = {
    "fp8": "float8", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32",
    "half": "float16", "float": "float32",
}

COLLECTIVES = ("reduce_scatter", "all_gather", "all_reduce")
NET_OPS = ("p2p",) + COLLECTIVES
TIER_KINDS = ("hbm", "device_dram", "host_dram", "cxl", "ssd", "flash", "swap")


def canonical_dtype(name: str) -> str:
    """``'fp16'`` -> ``'float16'``; raise a DseError for an unknown datatype."""
    key = str(name).strip().lower()
    key = DTYPE_ALIASES.get(key, key)
    if key not in DTYPE_BYTES:
        raise DseError(f"unknown datatype {name!r}; allowed: {allowed_list(list(DTYPE_BYTES) + list(DTYPE_ALIASES))}")
    return key


# --------------------------------------------------------------------------- tables
@dataclass(frozen=True)
class EfficiencyTable:
    """Piecewise efficiency by operation size (Calculon's ``*_efficiency`` lists).

    ``sizes`` are in base units (flops or bytes), strictly decreasing, the last one 0 so
    that every non-negative size is covered; ``effs`` in (0, 1].
    """

    sizes: tuple[float, ...]
    effs: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.sizes) != len(self.effs) or not self.sizes:
            raise DseError("efficiency table needs at least one [size, efficiency] row")
        for a, b in zip(self.sizes, self.sizes[1:]):
            if not b < a:
                raise DseError(f"efficiency table sizes must be strictly decreasing; got {list(self.sizes)}")
        if self.sizes[-1] != 0:
            raise DseError(
                f"efficiency table must end with a size-0 row so every operation is covered; got {list(self.sizes)}"
            )
        for e in self.effs:
            if not 0 < e <= 1:
                raise DseError(f"efficiency {e} out of range (0, 1]")
        # ascending copies for searchsorted
        object.__setattr__(self, "_asc_sizes", np.asarray(self.sizes[::-1], dtype=np.float64))
        object.__setattr__(self, "_asc_effs", np.asarray(self.effs[::-1], dtype=np.float64))
        # efficiency by searchsorted index j (the row j - 1; j = 0, a negative size, takes the first row)
        object.__setattr__(self, "_effs_by_j", np.concatenate((self._asc_effs[:1], self._asc_effs)))  # type: ignore[attr-defined]

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[float]], unit: float) -> EfficiencyTable:
        """Rows ``[[size_in_unit, eff], ...]`` as in Calculon's JSON."""
        try:
            sizes = tuple(float(r[0]) * unit for r in rows)
            effs = tuple(float(r[1]) for r in rows)
        except (TypeError, IndexError, ValueError):
            raise DseError(f"efficiency table rows must be [size, efficiency] pairs; got {rows!r}") from None
        return cls(sizes, effs)

    @classmethod
    def flat(cls, eff: float = 1.0) -> EfficiencyTable:
        return cls((0.0,), (float(eff),))

    def __call__(self, size: Any) -> Any:
        """Efficiency for ``size`` (scalar or array): the row with the largest size <= ``size``."""
        return self._effs_by_j[self._asc_sizes.searchsorted(size, side="right")]  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- compute
@dataclass(frozen=True)
class Engine:
    """One compute engine (matrix or vector) for one datatype."""

    peak_flops: float
    efficiency: EfficiencyTable

    def throughput(self, flops: Any) -> Any:
        return self.peak_flops * self.efficiency(flops)

    def time(self, flops: Any) -> Any:
        """Seconds to run ``flops`` (0 for 0)."""
        flops = np.asarray(flops, dtype=np.float64)
        return flops / self.throughput(flops)


# --------------------------------------------------------------------------- memory
@dataclass(frozen=True)
class MemoryTier:
    """A per-device memory tier: capacity, bandwidth and efficiency by transfer size.

    ``page_fault_s``/``page_bytes`` model OS swap (or any demand-paged tier): every
    page costs a fault on top of its transfer, so the effective bandwidth is
    ``page_bytes / (page_fault_s + page_bytes / bandwidth)``.
    """

    name: str
    capacity_bytes: float
    bandwidth_Bps: float
    efficiency: EfficiencyTable = field(default_factory=EfficiencyTable.flat)
    kind: str = "hbm"
    latency_s: float = 0.0
    page_fault_s: float = 0.0
    page_bytes: float = 4096.0
    source: str = ""

    def __post_init__(self) -> None:
        if self.kind not in TIER_KINDS:
            raise DseError(f"memory tier {self.name!r}: kind {self.kind!r} not allowed; allowed: {allowed_list(TIER_KINDS)}")
        if self.capacity_bytes < 0 or self.bandwidth_Bps < 0:
            raise DseError(f"memory tier {self.name!r}: capacity and bandwidth must be >= 0")
        object.__setattr__(self, "capacity_bytes", float(self.capacity_bytes))
        object.__setattr__(self, "bandwidth_Bps", float(self.bandwidth_Bps))

    @property
    def effective_bandwidth_Bps(self) -> float:
        """Peak bandwidth after the page-fault cost (equal to the peak when there is none)."""
        if self.page_fault_s <= 0 or self.bandwidth_Bps <= 0:
            return self.bandwidth_Bps
        return self.page_bytes / (self.page_fault_s + self.page_bytes / self.bandwidth_Bps)

    def throughput(self, nbytes: Any) -> Any:
        return self.effective_bandwidth_Bps * self.efficiency(nbytes)

    def time(self, nbytes: Any) -> Any:
        """Seconds to move ``nbytes`` (0 for 0; inf when the tier has no bandwidth)."""
        nbytes = np.asarray(nbytes, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = nbytes / self.throughput(nbytes)
        return np.where(nbytes > 0, t, 0.0)


# --------------------------------------------------------------------------- network
@dataclass(frozen=True)
class Network:
    """One network tier (Calculon ``networks`` entry)."""

    bandwidth_Bps: float
    efficiency: float
    size: int
    latency_s: float
    ops: Mapping[str, tuple[float, float]]  # op -> (scalar, offset)
    must_be_filled: bool = False
    processor_usage: float = 0.0
    name: str = ""

    def __post_init__(self) -> None:
        missing = [op for op in NET_OPS if op not in self.ops]
        if missing:
            raise DseError(f"network {self.name or '?'}: ops lack {missing}; need {allowed_list(NET_OPS)}")
        if not 0 < self.efficiency <= 1:
            raise DseError(f"network {self.name or '?'}: efficiency {self.efficiency} out of range (0, 1]")
        if not 0 <= self.processor_usage < 1:
            raise DseError(f"network {self.name or '?'}: processor_usage must be in [0, 1)")
        if self.bandwidth_Bps <= 0:
            raise DseError(f"network {self.name or '?'}: bandwidth must be > 0")

    def time(self, op: str, nbytes: Any, peers: Any) -> Any:
        """Collective/p2p time: latency + bytes*scalar*(1 + offset/peers) / (bw*eff)."""
        return collective_time(self.ops[op], nbytes, peers, self.latency_s, self.bandwidth_Bps, self.efficiency)


def collective_time(op: tuple[float, float], nbytes: Any, peers: Any, latency_s: Any, bandwidth_Bps: Any,
                    efficiency: Any) -> Any:
    """Calculon's op model: latency + bytes * scalar * (1 + offset / peers) / (bw * eff),
    ``op`` = (scalar, offset); every argument may be a column."""
    scalar, offset = op
    moved = np.asarray(nbytes, dtype=np.float64) * scalar
    moved = moved + moved / peers * offset
    return latency_s + moved / (bandwidth_Bps * efficiency)


# --------------------------------------------------------------------------- system
@dataclass(frozen=True)
class System:
    """A device (processor + memory tiers) and the networks joining devices.

    ``tiers[0]`` is the device memory (Calculon ``mem1``); ``tiers[1]``, when present,
    is the offload tier (Calculon ``mem2``).  Further tiers are used by inference
    placement (:mod:`models.blocks.llm.placement`).
    """

    name: str
    matrix: Mapping[str, Engine]
    vector: Mapping[str, Engine]
    tiers: tuple[MemoryTier, ...]
    networks: tuple[Network, ...]
    processing_mode: str = "no_overlap"  # or "roofline"
    source: str = ""

    def __post_init__(self) -> None:
        if self.processing_mode not in ("no_overlap", "roofline"):
            raise DseError(f"system {self.name}: processing_mode must be no_overlap or roofline")
        if not self.tiers:
            raise DseError(f"system {self.name}: needs at least one memory tier")
        if not self.matrix:
            raise DseError(f"system {self.name}: needs at least one matrix datatype")

    # -- Calculon's two tiers ------------------------------------------------
    @property
    def mem1(self) -> MemoryTier:
        return self.tiers[0]

    @property
    def mem2(self) -> MemoryTier:
        if len(self.tiers) > 1:
            return self.tiers[1]
        return MemoryTier("none", 0.0, 0.0, kind="host_dram")

    @property
    def datatypes(self) -> tuple[str, ...]:
        return tuple(d for d in self.matrix if d in self.vector)

    def engines(self, dtype: str) -> tuple[Engine, Engine]:
        """(matrix, vector) engines for ``dtype``; DseError when the system lacks it."""
        dtype = canonical_dtype(dtype)
        if dtype not in self.matrix or dtype not in self.vector:
            raise DseError(
                f"datatype {dtype} not supported by system {self.name}; it has {allowed_list(self.datatypes)}"
            )
        return self.matrix[dtype], self.vector[dtype]

    def combine(self, flops_time: Any, mem_time: Any) -> Any:
        """Time of a layer that computes and moves memory (Calculon processing_mode)."""
        if self.processing_mode == "roofline":
            return np.maximum(flops_time, mem_time)
        return flops_time + mem_time

    def peak_flops(self, dtype: str) -> float:
        return self.engines(dtype)[0].peak_flops

    # -- construction --------------------------------------------------------
    @classmethod
    def from_calculon(cls, cfg: Mapping[str, Any] | str | Path, name: str | None = None) -> System:
        """Read a Calculon system JSON (dict or path) as it is."""
        from models.blocks.llm.calculon_io import system_from_json

        return system_from_json(cfg, name=name)

    @classmethod
    def simple(
        cls,
        name: str,
        *,
        matrix_tflops: Mapping[str, float],
        vector_tflops: Mapping[str, float] | None = None,
        mem_gib: float,
        mem_gbps: float,
        extra_tiers: Sequence[MemoryTier] = (),
        networks: Sequence[Network] = (),
        matrix_eff: float = 1.0,
        vector_eff: float = 1.0,
        mem_eff: float = 1.0,
        processing_mode: str = "no_overlap",
        source: str = "",
    ) -> System:
        """A system from plain keyword values: flat efficiencies unless given."""
        vector_tflops = vector_tflops or {k: v / 8.0 for k, v in matrix_tflops.items()}
        mat = {canonical_dtype(k): Engine(v * 1e12, EfficiencyTable.flat(matrix_eff)) for k, v in matrix_tflops.items()}
        vec = {canonical_dtype(k): Engine(v * 1e12, EfficiencyTable.flat(vector_eff)) for k, v in vector_tflops.items()}
        hbm = MemoryTier("hbm", mem_gib * units.GIB, mem_gbps * units.GB, EfficiencyTable.flat(mem_eff), kind="hbm")
        nets = tuple(networks) or (simple_network(size=1),)
        return cls(name, mat, vec, (hbm, *extra_tiers), nets, processing_mode, source)

    def with_tiers(self, *tiers: MemoryTier) -> System:
        """Same processor and networks, other memory tiers."""
        return replace(self, tiers=tuple(tiers))

    def with_mem(self, index: int, **changes: Any) -> System:
        """A copy with tier ``index`` changed (e.g. ``capacity_bytes=...``)."""
        tiers = list(self.tiers)
        while len(tiers) <= index:
            tiers.append(MemoryTier(f"tier{len(tiers)}", 0.0, 0.0, kind="host_dram"))
        tiers[index] = replace(tiers[index], **changes)
        return replace(self, tiers=tuple(tiers))


def simple_network(
    *, size: int, bandwidth_gbps: float = 100.0, efficiency: float = 1.0, latency_s: float = 0.0,
    must_be_filled: bool = False, processor_usage: float = 0.0, ring: bool = True, name: str = "",
) -> Network:
    """A network with ring-collective scalars (all-reduce moves 2x, RS/AG 1x) unless ``ring=False``."""
    ops = {"p2p": (1.0, 0.0), "reduce_scatter": (1.0, -1.0 if ring else 0.0),
           "all_gather": (1.0, -1.0 if ring else 0.0), "all_reduce": (2.0 if ring else 1.0, -1.0 if ring else 0.0)}
    return Network(bandwidth_gbps * units.GB, efficiency, size, latency_s, ops, must_be_filled, processor_usage, name)


def tier(
    kind: str, capacity_gib: float, bandwidth_gbps: float, *, name: str | None = None,
    efficiency: float = 1.0, latency_s: float = 0.0, page_fault_s: float = 0.0, page_bytes: float = 4096.0,
    source: str = "",
) -> MemoryTier:
    """Convenience constructor of a memory tier from GiB and GB/s."""
    return MemoryTier(
        name or kind, capacity_gib * units.GIB, bandwidth_gbps * units.GB, EfficiencyTable.flat(efficiency),
        kind=kind, latency_s=latency_s, page_fault_s=page_fault_s, page_bytes=page_bytes, source=source,
    )


def load_json(obj: Mapping[str, Any] | str | Path) -> tuple[dict[str, Any], str]:
    """(dict, name) from a dict or a JSON file path; DseError on a missing/bad file."""
    if isinstance(obj, Mapping):
        return dict(obj), ""
    p = Path(obj)
    try:
        text = p.read_text()
    except OSError as exc:
        raise DseError(f"cannot read {p}: {exc.strerror or exc}") from None
    try:
        return json.loads(text), p.stem
    except json.JSONDecodeError as exc:
        raise DseError(f"{p}: invalid JSON ({exc.msg} at line {exc.lineno})") from None
