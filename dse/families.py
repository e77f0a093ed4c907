"""Workload families: one unit of work per kind of job, and the common cost metrics.

Each architecture model answers its own article's questions in its own metrics.  To
compare architectures for one job, a model also declares the *family* of jobs it
serves (``family = "kv-object"``), maps the family's workload knobs onto its own
parameters (``workload_map``), and returns three columns on the family's scale:

* ``work_per_s``: sustained work in the family's unit (output tokens, queries,
  operations, TB-months, ...) per second;
* ``capex_usd``: purchase price of the whole system that delivers that work (the
  boundary is the model's ``boundary`` text: GPUs, hosts, DPUs, switches, drives...);
* ``power_w``: wall power of the same boundary at that work rate;

plus the family's latency metric (``Family.latency_metric``).  The engine adds the
common parameters (``years``, ``usd_per_kwh``, ``pue``, ``upkeep_frac_per_year``) to every
family model and derives, for every point,

* ``tco_usd`` = capex + years x (energy per year + upkeep_frac_per_year x capex + opex per
  year), energy = power x hours per year x PUE x $/kWh; opex per year is the model's
  optional ``opex_usd_per_year`` column (a cloud bill, spot instances), 0 when absent;
* ``usd_per_work`` = tco_usd / (work_per_s x the seconds in ``years``) x ``Family.per_units``:
  dollars per million tokens, per million queries, per TB-month...  The design is priced
  at its sustained rate for the whole period (a fully used system; an architect who
  expects 30 % load divides ``work_per_s`` accordingly).

So doubling ``years`` raises ``tco_usd`` by the energy and upkeep share only, and lowers
``usd_per_work`` because the capex is spread over twice the work.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dse import units
from dse.errors import DseError, allowed_list, did_you_mean


@dataclass(frozen=True)
class Knob:
    """A workload knob of a family: the same name, unit and meaning in every model."""

    name: str
    default: float
    source: str
    bounds: tuple[float, float]
    doc: str = ""
    integer: bool = False


@dataclass(frozen=True)
class Family:
    """A kind of job with a unit of work."""

    name: str
    work_unit: str
    #: ``usd_per_work`` is dollars per this many units of work.
    per_units: float
    latency_metric: str
    latency_doc: str
    knobs: tuple[Knob, ...]
    doc: str

    @property
    def usd_per_work_label(self) -> str:
        if self.per_units == 1.0:
            return f"$ per {self.work_unit}"
        plural = self.work_unit[:-1] + "ies" if self.work_unit.endswith("y") else self.work_unit + "s"
        return f"$ per {_count_word(self.per_units)}{plural}"

    def knob(self, name: str) -> Knob:
        for k in self.knobs:
            if k.name == name:
                return k
        names = [k.name for k in self.knobs]
        raise DseError(f"family {self.name} has no workload knob {name!r}{did_you_mean(name, names)}; allowed: {allowed_list(names)}")


def _count_word(n: float) -> str:
    return {1.0: "", 1e3: "thousand ", 1e6: "million ", 1e9: "billion "}.get(float(n), f"{n:g} ")


_ASSUME = "assumption: a mid-range workload of the family; sweep it"

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("llm-serve", "output token", 1e6, "ttft_ms", "time to first token at the offered load",
               (Knob("model_params_b", 70.0, "Llama-2/3 70B, the MLPerf Inference datacenter LLM", (0.5, 2000.0), "model size, billions of parameters"),
                Knob("context_tokens", 32768.0, "assumption: long-context serving, the case the KV-cache tiers exist for", (128.0, 1048576.0), "prompt + generated tokens per request", True),
                Knob("output_tokens", 256.0, "assumption: chat-length answers (MLPerf Llama-2-70B averages ~300)", (1.0, 65536.0), "generated tokens per request", True)),
               "serve a decoder-only LLM: tokens out per second per system"),
        Family("llm-train", "sample", 1e6, "step_time_s", "time of one optimizer step",
               (Knob("model_params_b", 70.0, _ASSUME, (0.1, 2000.0), "model size, billions of parameters"),
                Knob("seq_tokens", 4096.0, _ASSUME, (128.0, 1048576.0), "sequence length", True)),
               "train a decoder-only LLM: samples per second"),
        Family("vector-search", "query", 1e6, "query_latency_ms", "one query's latency (retrieval only)",
               (Knob("corpus_vectors", 1e8, "assumption: 100 M vectors, the lower end of the issue's 100 M-1 B", (1e4, 1e11), "vectors in the corpus"),
                Knob("vector_dim", 768.0, "BERT-base / IKS embedding width", (16.0, 8192.0), "dimensions per vector", True)),
               "nearest-neighbour search over an embedding corpus: queries per second"),
        Family("kv-object", "operation", 1e6, "op_latency_us", "one operation's latency at the offered load",
               (Knob("value_b", 4096.0, "assumption: 4 KiB values, the common block size", (8.0, 64.0 * units.MIB), "value size, bytes"),),
               "put/get objects on a storage device: operations per second"),
        Family("mem-analytics", "query", 1e6, "access_latency_ns", "average latency of one memory access",
               (Knob("footprint_gib", 256.0, "assumption: a working set larger than one socket's local DRAM", (1.0, 1048576.0), "data the query touches"),),
               "memory-bound analytics: queries of a fixed number of cache-line accesses per second "
               "(models.blocks.workload.mem_queries_per_s)"),
        Family("cold-storage", "TB-month", 1.0, "restore_latency_s", "time to the first byte of a restore",
               (Knob("stored_tb", 10000.0, "the issue's 10 PB of cold video", (1.0, 1e7), "data stored, TB"),
                Knob("restores_per_tb_month", 0.01, "assumption: 1 % of the data restored per month", (0.0, 10.0), "TB restored per TB stored per month")),
               "keep cold data and restore it on demand: TB-months stored per second of service"),
        Family("gpu-kernel", "kernel run", 1e3, "kernel_time_ms", "one kernel run's time",
               (Knob("footprint_gib", 64.0, "assumption: a footprint beyond one GPU's HBM", (0.1, 65536.0), "data the kernel touches"),),
               "run a memory-bound GPU kernel over a large footprint: runs per second"),
        Family("vm-host", "VM-hour", 1.0, "startup_s", "one VM's start-up time",
               (Knob("vm_mem_gib", 4.0, "assumption: small serverless / microVM guests", (0.125, 4096.0), "guest memory"),),
               "host virtual machines: VM-hours per second of service"),
    )
}

FAMILY_NAMES: tuple[str, ...] = tuple(FAMILIES)

#: The columns a family model returns itself (the engine derives ``tco_usd`` and
#: ``usd_per_work`` from them).
MODEL_COLUMNS: tuple[str, ...] = ("work_per_s", "capex_usd", "power_w")
#: Every common metric, in reporting order.
COMMON_METRICS: tuple[str, ...] = ("work_per_s", "capex_usd", "power_w", "tco_usd", "usd_per_work")
COMMON_PARAMS: tuple[str, ...] = ("years", "usd_per_kwh", "pue", "upkeep_frac_per_year")

#: Defaults of the common parameters and their sources.
YEARS = 5.0
YEARS_SOURCE = "assumption: 5-year server life (hyperscalers' filings of 2022-2023 depreciate servers over 5-6 years)"
UPKEEP_FRAC_PER_YEAR = 0.05
UPKEEP_SOURCE = "assumption: support, spares and repair at 5 % of the purchase price per year (the low end of 5-10 % quoted for hardware maintenance)"


def family(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise DseError(f"unknown workload family {name!r}{did_you_mean(name, FAMILIES)}; allowed: {allowed_list(FAMILIES)}") from None


def tco_columns(out: Mapping[str, Any], p: Any, fam: Family) -> dict[str, np.ndarray]:
    """``tco_usd`` and ``usd_per_work`` from a model's ``capex_usd``, ``power_w`` and
    ``work_per_s`` and the common parameters in batch ``p``."""
    capex = np.asarray(out["capex_usd"], dtype=np.float64)
    power = np.asarray(out["power_w"], dtype=np.float64)
    work = np.asarray(out["work_per_s"], dtype=np.float64)
    years = np.asarray(p.years, dtype=np.float64)
    energy_per_year = power * units.HOURS_PER_YEAR * np.asarray(p.pue) / units.W_PER_KW * np.asarray(p.usd_per_kwh)
    opex = np.asarray(out.get("opex_usd_per_year", 0.0), dtype=np.float64)
    tco = capex + years * (energy_per_year + np.asarray(p.upkeep_frac_per_year) * capex + opex)
    seconds = years * units.HOURS_PER_YEAR * units.S_PER_HOUR
    with np.errstate(divide="ignore", invalid="ignore"):
        usd_per_work = tco / (work * seconds) * fam.per_units
    return {"tco_usd": tco, "usd_per_work": usd_per_work}


def no_work_mask(out: Mapping[str, Any]) -> np.ndarray:
    """Points that do no work (a design that cannot serve the job at all)."""
    work = np.asarray(out["work_per_s"], dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return ~(work > 0)
