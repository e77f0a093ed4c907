"""Timed units of work for ``dse bench`` (each callable returns the evaluations it did).

* ``llm.train_eval`` — one vectorized pass over ~100k full training configurations
  (megatron-22B on 1923 A100s, Calculon's S5 search space replicated);
* ``llm.search_turing530B_5128`` — Calculon's S1 best-execution search end to end
  (enumeration, feasibility and ``-m`` rule, bounds, full evaluation of what the bounds
  leave, top-3); the production-scale searches are timed by ``dse.bench.llm_search_rows``;
* ``llm.reference_runs`` — all rows of ``results/reference/calculon/runs.csv``;
* ``llm.inference_sweep`` — 10k (batch, prompt, generation) serving points of Llama-3-70B.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from models.blocks.llm.reference import SHIPPED


def bench_cases() -> list[tuple[str, Callable[[], int]]]:
    from models.blocks.llm.calculon_io import model_from_json, system_from_json
    from models.blocks.llm.inference import inference
    from models.blocks.llm.models import get_model
    from models.blocks.llm.reference import evaluate_rows
    from models.blocks.llm.search import candidates, search
    from models.blocks.llm.training import evaluate

    inputs = SHIPPED / "inputs"
    a100 = system_from_json(inputs / "systems" / "a100_80g.json")
    h100 = system_from_json(inputs / "systems" / "h100_80g_nvl8.json")
    m22 = model_from_json(inputs / "models" / "megatron-22B.json")
    turing = model_from_json(inputs / "models" / "turing-530B.json")
    exe, _, _ = candidates(m22, 1923, 2520, a100)
    reps = -(-100_000 // exe.n)
    big = exe.take(np.tile(np.arange(exe.n), reps)[:100_000])
    llama = get_model("llama-3-70B")
    grid_b, grid_p = np.meshgrid(np.arange(1, 101), np.arange(1, 101) * 64)

    def train_eval() -> int:
        evaluate(m22, a100, big)
        return big.n

    def search_s1() -> int:
        return search(turing, 5128, 2520, a100, top_n=3).candidates

    def reference_runs() -> int:
        rows, _ = evaluate_rows(SHIPPED / "runs.csv")
        return len(rows)

    def inference_sweep() -> int:
        r = inference(llama, h100, batch=grid_b.ravel(), prompt=grid_p.ravel(), gen=256, tp=8,
                      raise_infeasible=False)
        return int(r["ttft_s"].size)

    return [
        ("llm.train_eval", train_eval),
        ("llm.search_turing530B_5128", search_s1),
        ("llm.reference_runs", reference_runs),
        ("llm.inference_sweep", inference_sweep),
    ]
