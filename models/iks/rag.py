"""RAG pipelines: query embedding -> retrieval -> K passages -> generator (digest §2
mechanism 8, §5, Fig. 8).

Generation goes through the LLM block (``models.blocks.llm.inference``) on the H100
system shipped with the Calculon reference runs: FiD-T5 encodes each of the K passages
(with the question) as its own chunk and decodes the answer; Llama-3 prefills one prompt
of K passages plus the question and decodes.  The pipeline's token counts and GPUs are in
``pipelines.csv``.  Batch and K take values from small grids, so the LLM block runs once
per pipeline on the whole grid (lazily, then cached) and design points look their times up.

A batch whose prompts do not fit the GPUs' memory runs in waves of smaller batches
(``_waves``), so generation time is continuous in K.

Per batch: ``retrieval = embed + search (+ offload)``, ``generation = TTFT + decode``;
TTFT of the batch's requests is ``embed + retrieval + prefill``.  Throughput: pipelined
stages (digest §7 ambiguity 8 default) give ``batch / max(retrieval, generation)``, a
serial pipeline ``batch / (retrieval + generation)``.
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PIPELINES = ("fid_t5", "llama3_8b", "llama3_70b")
#: Batch sizes and passage counts K the pipeline tables cover (parameter choices).
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
TOP_KS = (1, 2, 4, 8, 16, 32, 64, 100)
#: Passage counts the generation table covers: the choices of K and, beyond them, what HNSW
#: sends for the same relevant passages (K x hnsw_docs_x, up to 100 x 10).
TABLE_KS = (*TOP_KS, 128, 256, 512, 1000)
#: Query encoder: a DPR BERT-base question encoder, 110 M parameters (Karpukhin et al.,
#: EMNLP 2020; Devlin et al., NAACL 2019), run on the pipeline's first GPU.
QUERY_ENCODER_PARAMS = 110e6
#: The Calculon H100 system file (NVLink-8 node) shipped with the reference runs.
H100_SYSTEM = "h100_80g_nvl8.json"


def read_csv(name: str) -> list[dict[str, str]]:
    """Rows of a package CSV, skipping '#' comment lines."""
    with open(HERE / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


@cache
def pipeline_rows() -> dict[str, dict[str, str]]:
    rows = {r["pipeline"]: r for r in read_csv("pipelines.csv")}
    missing = [p for p in PIPELINES if p not in rows]
    if missing:
        raise RuntimeError(f"pipelines.csv lacks {missing}")
    return rows


@cache
def _system():
    from models.blocks.llm import System
    from models.blocks.llm.reference import SHIPPED

    return System.from_calculon(SHIPPED / "inputs" / "systems" / H100_SYSTEM)


@cache
def generation_table() -> dict[str, np.ndarray]:
    """Per (pipeline, batch, K): ``embed_s``, ``ttft_s`` (prefill) and ``gen_s`` (TTFT +
    decode of the batch); NaN where the LLM block finds the point infeasible."""
    from models.blocks.llm import get_model, inference

    system = _system()
    mat, _ = system.engines("float16")
    b, k = (g.ravel().astype(np.float64) for g in np.meshgrid(BATCHES, TABLE_KS, indexing="ij"))
    shape = (len(PIPELINES), len(BATCHES), len(TABLE_KS))
    out = {n: np.empty(shape) for n in ("embed_s", "ttft_s", "gen_s")}
    for i, name in enumerate(PIPELINES):
        row = pipeline_rows()[name]
        model = get_model(row["llm"])
        passage, question, gen = (float(row[c]) for c in ("passage_tokens", "question_tokens", "gen_tokens"))
        tp = int(row["tp"])
        if model.encoder_layers:  # FiD: one encoder chunk per passage (the question rides along)
            r = inference(model, system, batch=b, prompt=k * passage, gen=gen, tp=tp, encoder_chunks=k,
                          raise_infeasible=False)
        else:
            r = inference(model, system, batch=b, prompt=k * passage + question, gen=gen, tp=tp,
                          raise_infeasible=False)
        ok = r["feasible"]
        # a batch whose prompts overflow the GPUs' memory would spill to host memory (the LLM
        # block's second tier); served in waves instead (_waves)
        fits = ok & (np.asarray(r.get("tier_mem2_bytes", 0.0)) <= 0.0)
        ttft = np.where(fits, r["ttft_s"], np.nan).reshape(shape[1:])
        gen_one = np.where(fits, r["ttft_s"] + r["decode_s"], np.nan).reshape(shape[1:])
        out["ttft_s"][i], out["gen_s"][i] = _waves(ttft, gen_one)
        out["embed_s"][i] = np.asarray(mat.time(2.0 * QUERY_ENCODER_PARAMS * b * question)).reshape(shape[1:])
    return out


def _waves(ttft: np.ndarray, gen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(batch, K) prefill and generation times when a batch may run as ``w`` waves of
    ``batch / w`` requests, one after another (what a serving engine does when a batch's
    prompts do not fit the GPUs' memory; assumption: it takes the number of waves, a power
    of two, that finishes the batch soonest, so the time is continuous in K).

    Generation of the batch = ``w x gen(batch / w)``; its requests' mean time to first
    token = the wave's prefill + the mean wait for earlier waves, ``(w - 1) / 2 x gen(batch / w)``.
    Without waves, a batch that overflows HBM would spill activations and KV to host
    memory and its time would jump several-fold between neighbouring K."""
    best_gen, best_ttft = gen.copy(), ttft.copy()
    for bi, b in enumerate(BATCHES):
        for si, sub in enumerate(BATCHES[:bi]):
            w = b / sub
            g = w * gen[si]
            better = np.isnan(best_gen[bi]) | (g < best_gen[bi])
            best_gen[bi] = np.where(better & ~np.isnan(g), g, best_gen[bi])
            best_ttft[bi] = np.where(better & ~np.isnan(g), ttft[si] + (w - 1.0) / 2.0 * gen[si], best_ttft[bi])
    return best_ttft, best_gen


def lookup(pipeline_code, batch, top_k) -> dict[str, np.ndarray]:
    """Generation times of design points.  ``batch`` must be a grid value; ``top_k`` may lie
    between grid values (linear interpolation in K, NaN outside TABLE_KS; the query
    embedding does not depend on K)."""
    tab = generation_table()
    bi = np.searchsorted(np.asarray(BATCHES, dtype=np.float64), batch)
    ks = np.asarray(TABLE_KS, dtype=np.float64)
    k = np.asarray(top_k, dtype=np.float64)
    inside = (k >= ks[0]) & (k <= ks[-1])
    kc = np.clip(k, ks[0], ks[-1])
    hi = np.clip(np.searchsorted(ks, kc, side="left"), 1, len(ks) - 1)
    lo = hi - 1
    w = (kc - ks[lo]) / (ks[hi] - ks[lo])
    pi = np.asarray(pipeline_code)
    nan = np.where(inside, 1.0, np.nan)
    out = {name: ((1.0 - w) * v[pi, bi, lo] + w * v[pi, bi, hi]) * nan for name, v in tab.items() if name != "embed_s"}
    out["embed_s"] = tab["embed_s"][pi, bi, 0]
    return out


def gpus(pipeline_code) -> np.ndarray:
    lut = np.array([float(pipeline_rows()[p]["gpus"]) for p in PIPELINES])
    return lut[np.asarray(pipeline_code)]
