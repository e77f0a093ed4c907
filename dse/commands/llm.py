"""`dse llm run|search|infer|models`: the LLM performance block from the command line.

``dse llm run APP.json EXE.json SYS.json`` evaluates one Calculon triple (as ``calculon
llm`` does; ``--out FILE`` also writes Calculon's stats JSON with all of its keys); ``dse
llm search MODEL NUM_PROCS MAX_BATCH SYS.json`` finds the best training execution (as
``calculon llm-optimal-execution -m``); ``dse llm infer`` estimates serving (TTFT, time per
output token, tokens/s, memory by tier); ``dse llm models`` lists the
built-in model shapes.  MODEL is a Calculon model JSON or a built-in model name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from dse import jsonsafe

llm_app = typer.Typer(help="LLM training/inference performance (Calculon-compatible).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(llm_app, name="llm")


def _model(arg: str) -> Any:
    from models.blocks.llm.calculon_io import model_from_json
    from models.blocks.llm.models import get_model

    p = Path(arg)
    if p.suffix == ".json" or p.exists():
        return model_from_json(p)
    return get_model(arg)


def _system(arg: str) -> Any:
    from models.blocks.llm.calculon_io import system_from_json

    return system_from_json(Path(arg))


_BREAKDOWN = ("fw_time", "bw_time", "optim_step_time", "fw_offload_exposed_time", "bw_offload_exposed_time",
              "recompute_time", "recomm_exposed_time", "bubble_time", "tp_comm_exposed_time", "pp_comm_exposed_time",
              "dp_comm_exposed_time")


@llm_app.command("run")
def run_cmd(
    app_json: Annotated[str, typer.Argument(help="Model: Calculon model JSON or a built-in name.")],
    exe_json: Annotated[Path, typer.Argument(help="Calculon execution JSON (23 fields).")],
    sys_json: Annotated[Path, typer.Argument(help="Calculon system JSON.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    out_file: Annotated[Path | None, typer.Option(
        "--out", metavar="FILE", help="Also write Calculon's stats JSON (all of its keys; null where not "
        "modelled, listed under 'cxl_dse'). Overwrites only a file dse wrote.")] = None,
) -> None:
    """Evaluate one (model, execution, system) triple and print its stats."""
    from models.blocks.llm.calculon_io import execution_from_json
    from models.blocks.llm.executions import Executions
    from models.blocks.llm.training import check_feasible, evaluate, human_bytes

    if out_file is not None:
        from models.blocks.llm.stats_json import check_target

        check_target(out_file)  # refuse before any work
    model = _model(app_json)
    system = _system(str(sys_json))
    exe = Executions.from_records([execution_from_json(exe_json)])
    st = evaluate(model, system, exe)
    check_feasible(st, exe, model, system)
    if out_file is not None:
        from models.blocks.llm.stats_json import MARKER, calculon_stats, write_stats

        stats = calculon_stats(model, system, exe.record(0))
        write_stats(out_file, stats)
        info = stats[MARKER]
        typer.echo(f"wrote {out_file}: Calculon stats JSON, {info['keys_filled']} keys filled, "
                   f"{info['keys_null']} null (listed under {MARKER!r})", err=True)
    v = {k: float(st[k][0]) for k in st if k not in ("error", "feasible")}
    if as_json:
        out = {"batch_time_s": v["total_time"], "sample_rate": v["sample_rate"],
               "tier1_bytes": v["mem_tier1_bytes"], "tier2_bytes": v["mem_tier2_bytes"],
               "breakdown_s": {k: v[k] for k in _BREAKDOWN},
               "link_time_s": {k: v[k] for k in ("tp_comm_link_time", "pp_comm_link_time", "dp_comm_link_time",
                                                 "recomm_link_time")},
               "memory_bytes": {k: v[k] for k in ("weight_space", "act_space", "act_checkpoint_size",
                                                  "weight_grad_space", "act_grad_space", "optimizer_space")},
               "offload_bw_req_Bps": v["offload_bw_req"],
               "efficiency": {k: v[k] for k in ("compute_efficiency", "system_efficiency", "total_efficiency")},
               "execution": exe.record(0), "model": getattr(model, "name", ""), "system": system.name}
        typer.echo(jsonsafe.dumps(out))
        return
    e = exe.record(0)
    typer.echo(f"{getattr(model, 'name', '')} on {e['num_procs']} x {system.name}: TP={e['tensor_par']} "
               f"PP={e['pipeline_par']} DP={e['data_par']} blocks/proc={int(v['blocks_per_proc'])} "
               f"microbatches={int(v['num_microbatches'])}")
    for k in _BREAKDOWN:
        typer.echo(f"  {k:28s} {v[k]:.4f} s")
    typer.echo(f"  {'batch total time':28s} {v['total_time']:.4f} s")
    typer.echo(f"  {'sample rate':28s} {v['sample_rate']:.2f} samples/s")
    typer.echo(f"  {'mem tier1 (device)':28s} {human_bytes(v['mem_tier1_bytes'])}")
    typer.echo(f"  {'mem tier2 (offload)':28s} {human_bytes(v['mem_tier2_bytes'])}")
    typer.echo(f"  {'offload bw required':28s} {v['offload_bw_req'] / 1e9:.2f} GB/s")
    typer.echo(f"  {'compute/system/total eff':28s} {100 * v['compute_efficiency']:.2f}% / "
               f"{100 * v['system_efficiency']:.2f}% / {100 * v['total_efficiency']:.2f}%")


@llm_app.command("search")
def search_cmd(
    model_arg: Annotated[str, typer.Argument(metavar="MODEL", help="Calculon model JSON or built-in name.")],
    num_procs: Annotated[int, typer.Argument(help="Number of processors.")],
    max_batch: Annotated[int, typer.Argument(help="Maximum global batch (largest multiple of DP is used).")],
    sys_json: Annotated[Path, typer.Argument(help="Calculon system JSON.")],
    datatype: Annotated[str, typer.Option("--datatype", help="float8, float16, bfloat16 or float32.")] = "float16",
    top: Annotated[int, typer.Option("--top", "-t", help="How many best executions to show.")] = 1,
    tp: Annotated[int | None, typer.Option("--tp", help="Fix tensor parallelism.")] = None,
    pp: Annotated[int | None, typer.Option("--pp", help="Fix pipeline parallelism.")] = None,
    dp: Annotated[int | None, typer.Option("--dp", help="Fix data parallelism.")] = None,
    max_seconds: Annotated[float | None, typer.Option(
        "--max-seconds", help="Stop after this long with the best so far (then not proven optimal).")] = None,
    no_mbs_break: Annotated[bool, typer.Option("--no-mbs-break", help="Search every microbatch size.")] = False,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress", help="Progress bar on stderr (default: when stderr is a terminal).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (counts, best executions, MFU/HFU, memory).")] = False,
) -> None:
    """Best training execution by sample rate (Calculon's llm-optimal-execution space, -m rule).

    Bounds (memory feasibility and a lower bound of batch time) come before full evaluations,
    best bound first; the answer equals the exhaustive search's."""
    import sys

    from dse.errors import DseError
    from models.blocks.llm.search import search

    model = _model(model_arg)
    system = _system(str(sys_json))
    if top < 1:
        raise DseError("--top must be >= 1")
    if max_seconds is not None and max_seconds < 0:
        raise DseError("--max-seconds must be >= 0")
    show = sys.stderr.isatty() if progress is None else progress
    with _search_progress(show) as on_progress:
        res = search(model, num_procs, max_batch, system, datatype, top_n=top, mbs_break=not no_mbs_break, tp=tp,
                     pp=pp, dp=dp, max_seconds=max_seconds, progress=on_progress)
    if not res.best:
        raise DseError(f"no feasible execution of {getattr(model, 'name', 'the model')} on {num_procs} processors "
                       f"of {system.name} ({res.evaluated:,} configurations tried; memory or network too small)")
    if as_json:
        typer.echo(jsonsafe.dumps(_search_json(res, model, system, num_procs, max_batch)))
        return
    _print_search(res, model, system, num_procs, max_batch)


class _search_progress:  # noqa: N801 (a context manager used like a function)
    """A Rich progress bar on stderr fed by the search's snapshots (or nothing)."""

    def __init__(self, show: bool) -> None:
        self.show = show
        self.bar: Any = None

    def __enter__(self) -> Any:
        if not self.show:
            return None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("{task.description:9s}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[info]}"), TimeElapsedColumn(),
                            console=Console(stderr=True), transient=True)
        self.bar.start()
        task = self.bar.add_task("bounding", total=None, info="")

        def update(p: Any) -> None:
            best = f"{p.best_rate:.3f} samples/s" if p.best_rate == p.best_rate else "-"
            self.bar.update(task, description="bounding" if p.phase == "bound" else "evaluating",
                            completed=p.rows_done, total=p.rows_total,
                            info=f"feasible {p.feasible:,}  pruned {p.pruned:,}  evaluated {p.exact:,}  best {best}")
        return update

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.stop()


def _memory_json(stats: dict[str, Any], system: Any) -> dict[str, Any]:
    tiers = [{"tier": 1, "name": system.mem1.name, "used_bytes": stats["mem_tier1_bytes"],
              "capacity_bytes": system.mem1.capacity_bytes}]
    if system.mem2.capacity_bytes > 0:
        tiers.append({"tier": 2, "name": system.mem2.name, "used_bytes": stats["mem_tier2_bytes"],
                      "capacity_bytes": system.mem2.capacity_bytes})
    parts = {k: stats[k] for k in ("weight_space", "act_space", "act_checkpoint_size", "weight_grad_space",
                                   "act_grad_space", "optimizer_space")}
    return {"tiers": tiers, "breakdown_bytes": parts}


def _search_json(res: Any, model: Any, system: Any, num_procs: int, max_batch: int) -> dict[str, Any]:
    return {"model": getattr(model, "name", ""), "system": system.name, "num_procs": num_procs, "max_batch": max_batch,
            "configs": res.candidates, "evaluated": res.evaluated, "feasible": res.feasible,
            "exact_evaluations": res.exact, "pruned": res.pruned, "unvisited": res.unvisited,
            "complete": res.complete, "note": res.note, "seconds": res.seconds, "best": [
                {"sample_rate": b["sample_rate"], "mfu": b["mfu"], "hfu": b["hfu"], "execution": b["execution"],
                 "batch_time_s": b["stats"]["total_time"], "tier1_bytes": b["stats"]["mem_tier1_bytes"],
                 "tier2_bytes": b["stats"]["mem_tier2_bytes"], "memory": _memory_json(b["stats"], system)}
                for b in res.best]}


_FLAGS = {"optimizer_sharding": "shard-opt", "seq_par_ag_redo": "ag-redo", "data_par_overlap": "dp-overlap",
          "weight_offload": "off-w", "activations_offload": "off-act", "optimizer_offload": "off-opt"}


def _print_search(res: Any, model: Any, system: Any, num_procs: int, max_batch: int) -> None:
    from rich.console import Console
    from rich.table import Table

    from models.blocks.llm.training import human_bytes

    con = Console(width=160, highlight=False)
    con.print(f"{getattr(model, 'name', '')} on {num_procs} x {system.name}, max batch {max_batch}: "
              f"{res.candidates:,} configurations, {res.evaluated:,} in Calculon's -m search, {res.feasible:,} feasible")
    con.print(f"{res.pruned:,} pruned on their bound, {res.exact:,} evaluated in full, {res.seconds:.2f} s")
    t = Table(box=None, pad_edge=False)
    for c in ("#", "samples/s", "MFU", "HFU", "batch s", "TP", "PP", "DP", "mbs", "interleave", "recompute",
              "tp comm", "tp overlap", "nets t/p/d", "flags"):
        t.add_column(c, justify="left" if c in ("recompute", "tp comm", "tp overlap", "flags") else "right")
    for i, b in enumerate(res.best):
        e = b["execution"]
        flags = [short for k, short in _FLAGS.items() if e[k]]
        t.add_row(str(i + 1), f"{b['sample_rate']:.4f}", f"{100 * b['mfu']:.1f}%", f"{100 * b['hfu']:.1f}%",
                  f"{b['stats']['total_time']:.3f}", *(str(e[k]) for k in (
                      "tensor_par", "pipeline_par", "data_par", "microbatch_size", "pipeline_interleaving",
                      "activation_recompute", "tensor_par_comm_type", "tensor_par_overlap")),
                  f"{e['tensor_par_net']}/{e['pipeline_par_net']}/{e['data_par_net']}", " ".join(flags))
    con.print(t)
    con.print("flags: shard-opt/ag-redo/dp-overlap = optimizer sharding/seq-par all-gather redo/DP overlap; "
              "off-w/off-act/off-opt = weight/activation/optimizer offload", style="dim")
    mem = _memory_json(res.best[0]["stats"], system)
    tiers = "; ".join(f"tier {x['tier']} ({x['name']}) {human_bytes(x['used_bytes'])} of "
                      f"{human_bytes(x['capacity_bytes'])}" for x in mem["tiers"])
    br = ", ".join(f"{k.replace('_space', '').replace('_size', '').replace('_', ' ')} {human_bytes(v)}"
                   for k, v in mem["breakdown_bytes"].items())
    con.print(f"#1 memory per processor: {tiers}")
    con.print(f"   {br}")
    if res.note:
        con.print(f"note: {res.note}")


@llm_app.command("infer")
def infer_cmd(
    model_arg: Annotated[str, typer.Argument(metavar="MODEL", help="Calculon model JSON or built-in name.")],
    sys_json: Annotated[Path, typer.Argument(help="Calculon system JSON.")],
    batch: Annotated[int, typer.Option(help="Sequences served together.")] = 1,
    prompt: Annotated[int, typer.Option(help="Prompt tokens per sequence (default: the model's seq).")] = 0,
    gen: Annotated[int, typer.Option(help="Generated tokens per sequence.")] = 128,
    tp: Annotated[int, typer.Option(help="Tensor parallelism.")] = 1,
    pp: Annotated[int, typer.Option(help="Pipeline parallelism.")] = 1,
    no_kv_cache: Annotated[bool, typer.Option("--no-kv-cache", help="Recompute the context every step.")] = False,
    datatype: Annotated[str, typer.Option("--datatype")] = "float16",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Serving estimate: TTFT, time per output token, tokens/s, memory per device and tier."""
    from models.blocks.llm.inference import inference
    from models.blocks.llm.training import human_bytes

    model = _model(model_arg)
    system = _system(str(sys_json))
    r = inference(model, system, batch=batch, prompt=prompt or None, gen=gen, tp=tp, pp=pp,
                  kv_cache=not no_kv_cache, datatype=datatype)
    v = {k: (bool(x.item()) if k == "feasible" else float(x.item())) for k, x in r.items()}
    if as_json:
        typer.echo(jsonsafe.dumps(v))
        return
    typer.echo(f"{getattr(model, 'name', '')} on {tp * pp} x {system.name} (TP={tp} PP={pp}), batch {batch}, "
               f"{'KV cache' if not no_kv_cache else 'no KV cache'}")
    typer.echo(f"  TTFT {v['ttft_s'] * 1e3:.3f} ms   TPOT {v['tpot_s'] * 1e3:.3f} ms   "
               f"{v['tokens_per_s']:.1f} tokens/s end to end ({v['decode_tokens_per_s']:.1f} in decode)")
    typer.echo(f"  per device: weights {human_bytes(v['weight_bytes'])}, KV {human_bytes(v['kv_bytes'])}, "
               f"activations {human_bytes(v['act_bytes'])}")
    for k, x in v.items():
        if k.startswith("tier_"):
            typer.echo(f"  {k[5:-6]:10s} holds {human_bytes(x)}")


@llm_app.command("models")
def models_cmd() -> None:
    """List the built-in model shapes and their sources."""
    from models.blocks.llm.models import MODELS

    for m in MODELS.values():
        typer.echo(f"{m.name:14s} L={m.layers:<4d} h={m.hidden:<6d} ffn={m.ffn:<6d} heads={m.heads:<4d} "
                   f"kv={m.kv_heads:<4d} hd={m.head_dim:<4d} params={m.params / 1e9:7.1f}B  {m.source}")
