"""Timed units of work for ``dse bench`` (each callable returns the evaluations it did).

* ``llm.train_eval`` — one vectorized pass over ~100k full training configurations
  (megatron-22B on 1923 A100s, Calculon's S5 search space replicated);
* ``llm.search_turing530B_5128`` — Calculon's S1 best-execution search end to end
  (enumeration, feasibility and ``-m`` rule, bounds, full evaluation of what the bounds
  leave, top-3); the production-scale searches are timed by ``dse.bench.llm_search_rows``;
* ``llm.train_one`` — one training execution (megatron-22B: the S5 search's best, TP 1 x
  PP 3 x DP 641 on 1,923 A100s), as a sequential sampler evaluates one configuration at a time;
* ``llm.reference_runs`` — all rows of ``results/reference/calculon/runs.csv``;
* ``llm.inference_sweep`` — 10k (batch, prompt, generation) serving points of Llama-3-70B;
* ``llm.serving`` — 32,768 random serving configurations (model size 7-80B, prompt, output,
  TP width, load) through the continuous-batching serving layer (``serving.serve``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from models.blocks.llm.reference import SHIPPED


def bench_cases() -> list[tuple[str, Callable[[], int]]]:
    from models.blocks.llm.calculon_io import model_from_json, system_from_json
    from models.blocks.llm.executions import Executions
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

    # the best execution of the S5 search (1,923 A100s, batch <= 2,520), feasible
    one = Executions.from_columns(tensor_par=1, pipeline_par=3, data_par=641, batch_size=1923, microbatch_size=1,
                                  pipeline_interleaving=16, optimizer_sharding=True, data_par_overlap=True,
                                  optimizer_offload=True, activation_recompute="attn_only", pipeline_par_net=1,
                                  data_par_net=1)

    def train_one() -> int:
        evaluate(m22, a100, one)
        return 1

    def search_s1() -> int:
        return search(turing, 5128, 2520, a100, top_n=3).candidates

    def reference_runs() -> int:
        rows, _ = evaluate_rows(SHIPPED / "runs.csv")
        return len(rows)

    def inference_sweep() -> int:
        r = inference(llama, h100, batch=grid_b.ravel(), prompt=grid_p.ravel(), gen=256, tp=8,
                      raise_infeasible=False)
        return int(r["ttft_s"].size)

    serving_kw = _serving_inputs()

    def serving_sweep() -> int:
        from models.blocks.llm.serving import serve

        return int(serve(**serving_kw)["tokens_per_s"].size)

    return [
        ("llm.train_eval", train_eval),
        ("llm.train_one", train_one),
        ("llm.search_turing530B_5128", search_s1),
        ("llm.reference_runs", reference_runs),
        ("llm.inference_sweep", inference_sweep),
        ("llm.serving", serving_sweep),
    ]


def _serving_inputs(n: int = 32768, seed: int = 0) -> dict[str, object]:
    """Random serving-layer columns: Llama-3 shapes of 7-80B, H100s, open loop at 10-95 % load."""
    from dse.units import GB, GIB
    from models.blocks.llm.serving import gpus, shape_columns

    rng = np.random.default_rng(seed)
    pb = rng.uniform(7.0, 80.0, n)
    sh = shape_columns("llama-3", pb)
    gpu = gpus()["h100_sxm"]
    return dict(gpus=rng.choice(np.array([1.0, 2.0, 4.0, 8.0]), n), params=pb * 1e9, layers=sh["layers"], hidden=sh["hidden"],
                kv_heads=sh["kv_heads"], kv_dim=sh["kv_dim"], attn_dim=sh["attn_dim"], weight_bytes=rng.choice(np.array([1.0, 2.0]), n),
                kv_bytes=rng.choice(np.array([1.0, 2.0]), n), peak_linear_flops=gpu.tflops_fp8 * 1e12,
                peak_attn_flops=gpu.tflops_bf16 * 1e12, hbm_bytes=gpu.hbm_gib * GIB, hbm_Bps=gpu.hbm_gbps * GB,
                hbm_usable_frac=0.9, hbm_reserve_bytes=2.0 * GIB, link_Bps=gpu.nvlink_gbps * GB,
                tier_bytes=rng.choice(np.array([0.0, 1024.0 * GIB]), n), tier_Bps=100.0 * GB, tier_latency_s=1e-6,
                prompt=rng.integers(100, 60000, n).astype(np.float64), output=rng.integers(50, 2000, n).astype(np.float64),
                chunk_tokens=8192.0, max_batch=2048.0, eff_flops=0.53, eff_hbm=0.61, gemm_half_rows=256.0,
                step_overhead_s=5e-4, allreduce_latency_s=8e-6, load_frac=rng.uniform(0.1, 0.95, n))
