"""llm-serve side by side with GenZ, a peer analytical model (not ground truth).

``results/reference/genz/llm_serve_peer.csv`` holds GenZ's prefill and decode estimates
(``models/blocks/llm/genz_peer.py``).  :func:`side_by_side` evaluates llm-serve at every
row's configuration and puts the two next to each other; nothing here feeds back into
the model (its constants are fitted to published measurements only, ``calibration.py``).

The mapping (one ``run_full`` call evaluates every point):

* **Model.**  ``llama2-7b`` / ``llama2-13b`` / ``llama2-70b`` -> ``arch = llama-2`` and
  ``model_params_b`` 7 / 13 / 70; ``llama3-8b`` -> ``arch = llama-3``, 8.  These are rows
  of ``models/blocks/llm/architectures.csv``, so layers, KV heads and head size are the
  published ones (MHA for 7B/13B, GQA-8 for 70B and 8B).  The parameter count is the
  nominal size (7e9, not Llama-2-7B's 6.74e9): ``model_params_b`` sets the weight bytes
  and FLOPs, and a non-nominal size would move the interpolated shape off the row.
* **Hardware.**  ``gpu`` as named, ``gpus`` = TP, bf16 weights and KV, no KV tier (HBM).
* **Request.**  ``context_tokens`` = input + output (llm-serve's context is prompt +
  generated tokens: prompt = context - output), ``output_tokens`` = output.
* **Decode** (every row): one decode-only iteration of exactly ``batch`` running
  sequences, ``itl_ms`` (p50 inter-token latency = the decode-only step ``T_d(B)``) with
  ``max_batch = batch`` (the engine admits ``batch`` sequences) and ``load_frac = 1`` (it
  is kept full), so the running batch is ``batch``.  A closed loop of ``concurrency =
  batch`` clients would not pin it: the serving layer's running batch is the mean number of
  sequences *decoding*, less than the clients by the share of time each spends in prefill
  (0.73 for one client with a 32k-token prompt, Llama-2-7B on one H100).  ``chunk_tokens``
  is raised to its upper bound (131072) for this point only: the decode step ``T_d`` does
  not depend on it, but the default 8192-token budget would cap the batch below 64 at 32k
  prompts and make chunk-carrying steps the median ITL there.  Both models take the decode context mid-generation
  (input + output / 2).
* **Prefill** (batch-1 rows only): TTFT on an idle engine (``request_rate_per_s =
  1e-9``: no queue, no iteration in flight), i.e. ``max(1, P / q)`` chunk iterations at
  the default chunk budget (8192 tokens: a 32k prompt takes four chunked-prefill
  iterations; GenZ runs one pass).  llm-serve has no batch-of-B-prompts prefill (prompts
  enter in chunks that share iterations with the decodes), so ``ours_prefill_ms`` is
  empty for batch > 1.  ``ours_ttft_c1_ms`` is TTFT with a closed loop of one client, the
  number a single-client benchmark reports: the serving layer adds the residual of an
  iteration in flight and an M/D/1 wait (mean-field over Poisson-like arrivals), which one
  client cannot meet, so it is larger than the idle-engine prefill.

A row llm-serve rejects (a request's KV does not fit its usable HBM: 90 % less 2 GiB
after the weights, stricter than GenZ's check) or where its KV capacity holds fewer than
``batch`` sequences keeps the GenZ columns and has ``ours_note`` saying why; its
``ours_*`` / ratio columns are empty.

``python -m models.llm_serve.peer`` writes ``results/reference/genz/side_by_side.csv`` and
prints the agreement summary.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[2]
GENZ_CSV = ROOT / "results" / "reference" / "genz" / "llm_serve_peer.csv"
OUT_CSV = ROOT / "results" / "reference" / "genz" / "side_by_side.csv"

#: GenZ-table model name -> (llm-serve ``arch``, ``model_params_b``).
MODELS: dict[str, tuple[str, float]] = {
    "llama2-7b": ("llama-2", 7.0),
    "llama2-13b": ("llama-2", 13.0),
    "llama2-70b": ("llama-2", 70.0),
    "llama3-8b": ("llama-3", 8.0),
}
#: Largest chunk_tokens llm-serve accepts: the decode point's token budget (see the module doc).
DECODE_CHUNK_TOKENS = 131072.0
#: Offered rate of the idle-engine prefill point, requests/s (negligible: no queue).
IDLE_RATE_PER_S = 1e-9
#: Relative slack for "the running batch is the GenZ batch".
BATCH_RTOL = 1e-6

CONFIG_COLUMNS = ("model", "gpu", "tp", "batch", "input_tokens", "output_tokens", "dtype")
GENZ_COLUMNS = ("genz_prefill_ms", "genz_decode_ms_per_token", "genz_decode_tokens_per_s")
OURS_COLUMNS = ("ours_arch", "ours_model_params_b", "ours_prefill_ms", "ours_ttft_c1_ms", "ours_decode_ms_per_token",
                "ours_decode_tokens_per_s", "ours_running_batch", "ours_note")
RATIO_COLUMNS = ("ratio_prefill", "ratio_decode")
COLUMNS = CONFIG_COLUMNS + GENZ_COLUMNS + OURS_COLUMNS + RATIO_COLUMNS


def genz_table(path: Path = GENZ_CSV) -> pl.DataFrame:
    """GenZ's rows (the peer CSV), in file order."""
    return pl.read_csv(path)


def _inputs(genz: pl.DataFrame, overrides: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], np.ndarray]:
    """llm-serve inputs: the decode point of every row, then the idle-engine prefill point
    and the one-client point of every batch-1 row (``overrides``: parameters set on every
    point, for :func:`attribution`).  Returns the inputs and the batch-1 row indices."""
    unknown = set(genz["model"]) - set(MODELS)
    if unknown:
        raise ValueError(f"no llm-serve mapping for {sorted(unknown)}; known {list(MODELS)}")
    if set(genz["dtype"]) - {"bf16"}:
        raise ValueError("the GenZ table is bf16 only; a new dtype needs a mapping here")
    b1 = np.flatnonzero(genz["batch"].to_numpy() == 1)
    idx = np.concatenate([np.arange(genz.height), b1, b1])
    n, n1 = genz.height, len(b1)

    def pick(col: str) -> np.ndarray:
        return genz[col].to_numpy()[idx]

    batch = pick("batch").astype(np.float64)
    inp = pick("input_tokens").astype(np.float64)
    out = pick("output_tokens").astype(np.float64)
    model = pick("model")
    role = np.array(["decode"] * n + ["prefill"] * n1 + ["c1"] * n1)
    dec, pre, c1 = role == "decode", role == "prefill", role == "c1"
    inputs = {
        "arch": [MODELS[m][0] for m in model],
        "model_params_b": np.array([MODELS[m][1] for m in model]),
        "gpu": list(pick("gpu")),
        "gpus": pick("tp").astype(np.float64),
        "weight_dtype": "bf16",
        "kv_dtype": "bf16",
        "kv_tier": "hbm",
        "context_tokens": inp + out,
        "output_tokens": out,
        # decode: the engine holds exactly `batch` sequences and is kept full
        "max_batch": np.where(dec, batch, 2048.0),
        "load_frac": np.where(dec, 1.0, 0.8),  # 0.8 (the default) is unused where a rate or clients are set
        "chunk_tokens": np.where(dec, DECODE_CHUNK_TOKENS, 8192.0),
        # prefill: an idle engine; c1: a closed loop of one client
        "request_rate_per_s": np.where(pre, IDLE_RATE_PER_S, 0.0),
        "concurrency": np.where(c1, 1.0, 0.0),
    }
    inputs.update(overrides or {})
    return inputs, b1


def evaluate(genz: pl.DataFrame, overrides: Mapping[str, Any] | None = None) -> dict[str, np.ndarray]:
    """llm-serve at every GenZ row (one ``run_full`` call): per row, the decode step (ms),
    running batch, and the batch-1 prefill and one-client TTFT (NaN for batch > 1), plus
    the model's infeasibility reason (empty string when feasible)."""
    from dse import registry  # noqa: PLC0415 - the registry imports every model

    model = registry.get("llm-serve")
    inputs, b1 = _inputs(genz, overrides)
    ev = model.run_full(inputs)
    n, n1 = genz.height, len(b1)
    m = ev.metrics
    reason = np.array([ev.reason_of(i) or "" for i in range(n + 2 * n1)], dtype=object)
    prefill = np.full(n, np.nan)
    ttft_c1 = np.full(n, np.nan)
    prefill[b1] = np.where(ev.feasible[n:n + n1], m["ttft_ms"][n:n + n1], np.nan)
    ttft_c1[b1] = np.where(ev.feasible[n + n1:], m["ttft_ms"][n + n1:], np.nan)
    return {
        "decode_ms": np.where(ev.feasible[:n], m["itl_ms"][:n], np.nan),
        "running_batch": np.where(ev.feasible[:n], m["batch"][:n], np.nan),
        "prefill_ms": prefill,
        "ttft_c1_ms": ttft_c1,
        "reason": reason[:n],
    }


def side_by_side(genz: pl.DataFrame | None = None, overrides: Mapping[str, Any] | None = None) -> pl.DataFrame:
    """GenZ's estimates and llm-serve's at the matching operating point, one row per GenZ
    row (columns :data:`COLUMNS`; ratios are ours / GenZ).  ``overrides`` (parameter ->
    value on every point) is for :func:`attribution` only; the table uses none."""
    genz = genz_table() if genz is None else genz
    ours = evaluate(genz, overrides)
    batch = genz["batch"].to_numpy().astype(np.float64)
    running = ours["running_batch"]
    short = np.isfinite(running) & (running < batch * (1.0 - BATCH_RTOL))
    note = [r if r else (f"llm-serve's KV capacity holds {x:.1f} < {b:.0f} sequences" if s else None)
            for r, x, b, s in zip(ours["reason"], running, batch, short, strict=True)]
    decode = np.where(short, np.nan, ours["decode_ms"])
    with np.errstate(divide="ignore", invalid="ignore"):
        tokens = 1000.0 * batch / decode
    arch = [MODELS[m][0] for m in genz["model"]]
    size = [MODELS[m][1] for m in genz["model"]]

    def nan_null(x: np.ndarray) -> pl.Series:
        return pl.Series(x, dtype=pl.Float64).fill_nan(None)

    df = genz.select(*CONFIG_COLUMNS, *GENZ_COLUMNS).with_columns(
        ours_arch=pl.Series(arch, dtype=pl.String),
        ours_model_params_b=pl.Series(size, dtype=pl.Float64),
        ours_prefill_ms=nan_null(ours["prefill_ms"]),
        ours_ttft_c1_ms=nan_null(ours["ttft_c1_ms"]),
        ours_decode_ms_per_token=nan_null(decode),
        ours_decode_tokens_per_s=nan_null(tokens),
        ours_running_batch=nan_null(running),
        ours_note=pl.Series(note, dtype=pl.String),
    )
    return df.with_columns(
        ratio_prefill=pl.col("ours_prefill_ms") / pl.col("genz_prefill_ms"),
        ratio_decode=pl.col("ours_decode_ms_per_token") / pl.col("genz_decode_ms_per_token"),
    ).select(COLUMNS)


def summary(df: pl.DataFrame, by: tuple[str, ...] = ("gpu", "model")) -> pl.DataFrame:
    """Median and p10/p90 (linear interpolation) of ours / GenZ for prefill and decode, by
    ``by`` (``()`` for all rows), over the rows that have the ratio."""
    aggs = []
    for kind in ("prefill", "decode"):
        c = pl.col(f"ratio_{kind}").drop_nulls()
        aggs += [c.count().alias(f"{kind}_n"), c.median().alias(f"{kind}_median"),
                 c.quantile(0.1, "linear").alias(f"{kind}_p10"), c.quantile(0.9, "linear").alias(f"{kind}_p90")]
    if not by:
        return df.select(aggs)
    return df.group_by(list(by)).agg(aggs).sort(list(by))


def summary_markdown(df: pl.DataFrame) -> str:
    """The agreement table for the README (ratios ours / GenZ)."""
    lines = ["| GPU | model | prefill rows | prefill median (p10-p90) | decode rows | decode median (p10-p90) |",
             "|---|---|---|---|---|---|"]
    rows = list(summary(df).iter_rows(named=True))
    rows.append({"gpu": "all", "model": "all", **summary(df, ()).row(0, named=True)})
    for r in rows:
        lines.append(f"| {r['gpu']} | {r['model']} | {r['prefill_n']} | {r['prefill_median']:.2f} "
                     f"({r['prefill_p10']:.2f}-{r['prefill_p90']:.2f}) | {r['decode_n']} | {r['decode_median']:.2f} "
                     f"({r['decode_p10']:.2f}-{r['decode_p90']:.2f}) |")
    return "\n".join(lines)


#: Cumulative what-ifs that move llm-serve towards GenZ's assumptions, to say where the gap
#: comes from (diagnostics only: the table and the model keep the fitted values).
ATTRIBUTION: tuple[tuple[str, dict[str, float]], ...] = (
    ("llm-serve as is", {}),
    ("+ prefill in one pass (chunk_tokens = 131072)", {"chunk_tokens": DECODE_CHUNK_TOKENS}),
    ("+ no efficiency-by-size (gemm_half_rows = 0)", {"gemm_half_rows": 0.0}),
    ("+ peak FLOP/s and HBM bandwidth (eff_flops_frac = eff_hbm_frac = 1, GenZ's system_eff = 1)",
     {"eff_flops_frac": 1.0, "eff_hbm_frac": 1.0}),
    ("+ no fixed costs (step_overhead_ms = 0, allreduce_latency_us = 0)", {"step_overhead_ms": 0.0, "allreduce_latency_us": 0.0}),
)


def attribution(genz: pl.DataFrame | None = None) -> pl.DataFrame:
    """Median ours / GenZ per GPU after each cumulative step of :data:`ATTRIBUTION`."""
    genz = genz_table() if genz is None else genz
    out, acc = [], {}
    for label, over in ATTRIBUTION:
        acc = {**acc, **over}
        s = summary(side_by_side(genz, acc), ("gpu",)).select("gpu", "prefill_median", "decode_median")
        out.append(s.with_columns(step=pl.lit(label)))
    return pl.concat(out).select("step", "gpu", "prefill_median", "decode_median")


def attribution_markdown(att: pl.DataFrame) -> str:
    gpus = sorted(set(att["gpu"]))
    head = "| step | " + " | ".join(f"{g} prefill | {g} decode" for g in gpus) + " |"
    lines = [head, "|---|" + "---|" * (2 * len(gpus))]
    for step in dict.fromkeys(att["step"]):
        sub = {r["gpu"]: r for r in att.filter(pl.col("step") == step).iter_rows(named=True)}
        lines.append(f"| {step} | " + " | ".join(f"{sub[g]['prefill_median']:.2f} | {sub[g]['decode_median']:.2f}"
                                                 for g in gpus) + " |")
    return "\n".join(lines)


def write_csv(df: pl.DataFrame, path: Path = OUT_CSV) -> Path:
    """Write ``df`` to ``path`` atomically (a temporary file in the same folder, then
    ``os.replace``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        df.write_csv(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def main(path: Path = OUT_CSV) -> Path:
    df = side_by_side()
    write_csv(df, path)
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {df.height} rows, "
          f"{df['ratio_decode'].is_not_null().sum()} with a decode ratio, "
          f"{df['ratio_prefill'].is_not_null().sum()} with a prefill ratio (ours / GenZ)")
    print(summary_markdown(df))
    print()
    print("median ours / GenZ after each cumulative what-if (diagnostic):")
    print(attribution_markdown(attribution()))
    return path


if __name__ == "__main__":
    main()
