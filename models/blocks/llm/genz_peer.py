"""GenZ, a peer analytical LLM-serving model, run side by side with ours.

GenZ (PyPI ``genz-llm``; Bambhaniya et al., Georgia Tech / Intel) estimates prefill and
decode latency of an LLM on a platform from per-operator rooflines.  Its numbers are a
peer's, not a measurement: they are tabulated next to our serving layer and never
fitted to.

How a configuration is run (GenZ's own public API, ``GenZ.prefill_moddeling`` and
``GenZ.decode_moddeling``, with their defaults unless named here):

* prefill: ``batch`` sequences of ``input_tokens``;
* decode: one step of ``batch`` sequences (beam width ``Bb=1``, not GenZ's default 4)
  at the mid-generation context, ``input_tokens + output_tokens // 2`` cached tokens
  (``models/blocks/llm/inference.py`` also takes TPOT at the mean context);
* decode tokens/s is GenZ's decode throughput, ``batch / step latency``;
* a configuration GenZ's own memory check rejects in either call (weights + KV cache over
  one device's memory, with tensor parallelism sharding both) does not fit and has no row.

``python -m models.blocks.llm.genz_peer`` writes ``results/reference/genz/llm_serve_peer.csv``
and its README.
"""

from __future__ import annotations

import contextlib
import csv
import importlib
import importlib.metadata
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

MISSING = "GenZ is not installed: pip install genz-llm"

#: Our model name -> GenZ's model key (GenZ's Model_sets/meta.py).
GENZ_MODELS = {
    "llama2-7b": "llama2_7b",
    "llama3-8b": "llama3_8b",  # GenZ's Llama-3.1-8B config: same shape as Llama-3-8B
    "llama2-13b": "llama2_13b",
    "llama2-70b": "llama2_70b",
}
#: Our GPU name (models/blocks/llm/gpus.csv) -> GenZ's system key (GenZ's Systems/system_configs.py).
GENZ_SYSTEMS = {"a100_sxm": "A100_80GB_GPU", "h100_sxm": "H100_GPU"}
#: GenZ's only 16-bit type is ``bf16`` (fp16 would cost the same in its model).
GENZ_BITS = {"bf16": "bf16", "fp16": "bf16"}

COLUMNS = (
    "model", "gpu", "tp", "batch", "input_tokens", "output_tokens", "dtype",
    "genz_prefill_ms", "genz_decode_ms_per_token", "genz_decode_tokens_per_s", "genz_s_per_config",
)
OUT_DIR = Path(__file__).resolve().parents[3] / "results" / "reference" / "genz"
CSV_NAME = "llm_serve_peer.csv"

GRID_MODELS = tuple(GENZ_MODELS)
GRID_GPUS = tuple(GENZ_SYSTEMS)
GRID_TP = (1, 2, 4, 8)
GRID_BATCH = (1, 8, 32, 64)
GRID_INPUT = (512, 2048, 8192, 32768)
GRID_OUTPUT = 256


@dataclass(frozen=True)
class PeerConfig:
    model: str
    gpu: str
    tp: int
    batch: int
    input_tokens: int
    output_tokens: int = GRID_OUTPUT
    dtype: str = "bf16"


def available() -> bool:
    """Whether GenZ imports."""
    try:
        _genz()
    except ImportError:
        return False
    return True


def genz_version() -> str:
    try:
        return importlib.metadata.version("genz-llm")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _genz() -> Any:
    try:
        return importlib.import_module("GenZ")
    except ImportError as e:
        raise ImportError(MISSING) from e


@contextlib.contextmanager
def _removing_layer_files() -> Iterator[None]:
    """GenZ writes each model it builds as a CSV under its data folder and leaves it there;
    remove exactly the files written during the block (by wrapping the builders that
    GenZ's prefill/decode modules call, when they are where this version keeps them)."""
    made: list[str] = []
    patched: list[tuple[Any, str, Any]] = []
    lm = sys.modules.get("GenZ.Models.get_language_model")
    folder = Path(getattr(lm, "DATA_PATH", "")) / "model" if lm is not None else None
    for modname, fname in (("GenZ.LLM_inference.llm_prefill", "create_full_prefill_model"),
                           ("GenZ.LLM_inference.llm_decode", "create_full_decode_model")):
        mod = sys.modules.get(modname)
        orig = getattr(mod, fname, None)
        if orig is None:
            continue

        def wrapped(*a: Any, _orig: Callable[..., Any] = orig, **k: Any) -> Any:
            name = _orig(*a, **k)
            made.append(name)
            return name

        setattr(mod, fname, wrapped)
        patched.append((mod, fname, orig))
    try:
        yield
    finally:
        for mod, fname, orig in patched:
            setattr(mod, fname, orig)
        if folder is not None:
            for name in made:
                with contextlib.suppress(OSError, TypeError):
                    (folder / name).unlink()


def _as_config(c: PeerConfig | Mapping[str, Any]) -> PeerConfig:
    return c if isinstance(c, PeerConfig) else PeerConfig(**c)


def genz_row(c: PeerConfig | Mapping[str, Any]) -> dict[str, Any]:
    """One configuration through GenZ.  The row has the config's fields, ``fits`` and, when
    it fits, the GenZ outputs of :data:`COLUMNS`; otherwise ``genz_error``."""
    genz = _genz()
    c = _as_config(c)
    if c.model not in GENZ_MODELS or c.gpu not in GENZ_SYSTEMS or c.dtype not in GENZ_BITS:
        raise ValueError(f"no GenZ counterpart for {c}; models {list(GENZ_MODELS)}, GPUs {list(GENZ_SYSTEMS)}, "
                         f"dtypes {list(GENZ_BITS)}")
    common = dict(model=GENZ_MODELS[c.model], batch_size=c.batch, system_name=GENZ_SYSTEMS[c.gpu],
                  bits=GENZ_BITS[c.dtype], tensor_parallel=c.tp)
    row: dict[str, Any] = asdict(c)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(), _removing_layer_files():
            warnings.simplefilter("ignore")
            pre = genz.prefill_moddeling(input_tokens=c.input_tokens, **common)
            dec = genz.decode_moddeling(input_tokens=c.input_tokens, output_tokens=c.output_tokens // 2, Bb=1,
                                        **common)
    except ValueError as e:  # GenZ's memory check: "All params would not fit on chip"
        row.update(fits=False, genz_error=str(e).splitlines()[0])
        return row
    wall = time.perf_counter() - t0
    row.update(fits=True, genz_prefill_ms=float(pre["Latency"]), genz_decode_ms_per_token=float(dec["Latency"]),
               genz_decode_tokens_per_s=float(dec["Throughput"]), genz_s_per_config=wall)
    return row


def genz_rows(configs: Iterable[PeerConfig | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """GenZ per configuration, in order (see :func:`genz_row`)."""
    _genz()
    return [genz_row(c) for c in configs]


def grid() -> list[PeerConfig]:
    return [PeerConfig(m, g, tp, b, i) for m in GRID_MODELS for g in GRID_GPUS for tp in GRID_TP
            for b in GRID_BATCH for i in GRID_INPUT]


def bench_case(configs: Iterable[PeerConfig] | None = None) -> Callable[[], int]:
    """A timed unit for ``dse bench``: GenZ on a few configurations (returns how many)."""
    _genz()
    cs = list(configs) if configs is not None else [
        PeerConfig("llama3-8b", "h100_sxm", 1, 8, 2048), PeerConfig("llama2-70b", "h100_sxm", 8, 32, 2048),
        PeerConfig("llama2-13b", "a100_sxm", 2, 1, 8192), PeerConfig("llama2-7b", "a100_sxm", 1, 64, 512),
    ]

    def case() -> int:
        for c in cs:
            genz_row(c)
        return len(cs)

    return case


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([repr(r[k]) if isinstance(r[k], float) else r[k] for k in COLUMNS])


def _readme(rows: list[dict[str, Any]], n_configs: int, wall: float) -> str:
    fit = [r for r in rows if r["fits"]]
    per = sorted(r["genz_s_per_config"] for r in fit)
    med = per[len(per) // 2] if per else float("nan")
    models = "\n".join(f"| `{ours}` | `{theirs}` |" for ours, theirs in GENZ_MODELS.items())
    specs = importlib.import_module("Systems.system_configs").system_configs
    gpus = "\n".join(
        f"| `{ours}` | `{theirs}` | {specs[theirs]['Flops']} | {specs[theirs]['Memory_size']} | "
        f"{specs[theirs]['Memory_BW']} | {specs[theirs]['ICN']} |" for ours, theirs in GENZ_SYSTEMS.items())
    return f"""# GenZ peer table (LLM serving)

**This is a peer model's output, not a measurement.** GenZ (PyPI `genz-llm`, "Generative
LLM Analyzer", Bambhaniya et al., Georgia Tech / Intel) is an analytical roofline model of
LLM inference serving.  Its numbers sit next to our serving layer's for comparison; we
never fit to them, and a disagreement says only that two models differ.

* GenZ version: **genz-llm {genz_version()}** (from the package index; no GenZ code is
  copied here, only its public API is called).
* Generated by `python -m models.blocks.llm.genz_peer` (also how to regenerate it; needs
  `pip install genz-llm`, or the project's `peer` extra).
* GenZ is deterministic: rerunning gives the same latencies (the wall-time column varies).

## `{CSV_NAME}`

{len(fit)} rows: the grid {len(GRID_MODELS)} models x {len(GRID_GPUS)} GPUs x TP {{{', '.join(map(str, GRID_TP))}}}
x batch {{{', '.join(map(str, GRID_BATCH))}}} x input tokens {{{', '.join(map(str, GRID_INPUT))}}}, output {GRID_OUTPUT}
tokens, bf16 ({n_configs} configurations), less the {n_configs - len(fit)} that GenZ's own memory
check rejects in the prefill or decode call (weights + KV cache of that call's context over
one GPU's memory, both sharded by TP).

| column | meaning |
|---|---|
| `model`, `gpu`, `tp`, `batch`, `input_tokens`, `output_tokens`, `dtype` | the configuration (one GPU per TP rank, no PP/EP) |
| `genz_prefill_ms` | GenZ `prefill_moddeling(...)["Latency"]`: prefill of `batch` x `input_tokens`, ms |
| `genz_decode_ms_per_token` | GenZ `decode_moddeling(..., Bb=1)["Latency"]`: one decode step of the batch at context `input_tokens + output_tokens // 2` (mid-generation), ms |
| `genz_decode_tokens_per_s` | GenZ's decode throughput for the batch, `1000 * batch / genz_decode_ms_per_token` |
| `genz_s_per_config` | wall seconds GenZ took for the configuration (prefill + decode calls) on the generating machine |

Names map to GenZ's as follows (GenZ's `llama3_8b` is its Llama-3.1-8B config, the same
shape as Llama-3-8B; GenZ does not enforce a model's context limit, so the Llama-2 rows
beyond 4,096 tokens extrapolate the architecture):

| ours | GenZ model |
|---|---|
{models}

GenZ's own figures for the GPUs (its `Systems/system_configs.py`; they differ from
`models/blocks/llm/gpus.csv` in places, e.g. the A100's interconnect, so part of any gap
between the two models is the hardware description, not the method):

| ours (`models/blocks/llm/gpus.csv`) | GenZ system | TFLOPS | memory GB | memory GB/s | interconnect GB/s |
|---|---|---|---|---|---|
{gpus}

All other GenZ arguments are its defaults (`system_eff=1`, `collective_strategy="GenZ"`, no
offload).  The whole table took {wall:.0f} s, a median {1e3 * med:.0f} ms per configuration.
"""


#: Heading of the README section another module writes (kept when the table is rebuilt).
SIDE_BY_SIDE = "## Side by side with llm-serve"


def main(out_dir: Path = OUT_DIR) -> Path:
    if not available():
        raise SystemExit(MISSING)
    configs = grid()
    t0 = time.perf_counter()
    rows = genz_rows(configs)
    wall = time.perf_counter() - t0
    path = out_dir / CSV_NAME
    write_csv([r for r in rows if r["fits"]], path)
    readme = out_dir / "README.md"
    kept = ""  # the llm-serve side-by-side section (models/llm_serve/peer.py) stays
    if readme.exists():
        old = readme.read_text(encoding="utf-8")
        if SIDE_BY_SIDE in old:
            kept = "\n" + old[old.index(SIDE_BY_SIDE):]
    tmp = readme.with_name(readme.name + ".tmp")
    tmp.write_text(_readme(rows, len(configs), wall) + kept, encoding="utf-8")
    os.replace(tmp, readme)
    print(f"{sum(r['fits'] for r in rows)} of {len(rows)} configurations fit; wrote {path} in {wall:.0f} s")
    return path


if __name__ == "__main__":
    main()
