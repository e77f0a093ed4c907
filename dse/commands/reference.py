"""``dse check-reference dram|flash|llm PATH``: evaluate the calibration in force on the
reference runs in PATH (a CSV in the reference format); prints the error per group and,
as its last line, ``MAPE=<x>% N=<runs>``.  Exits 0 whatever the error."""

from __future__ import annotations

from pathlib import Path

import typer

from dse.errors import DseError

BLOCKS = ("dram", "flash", "llm")


def register(app: typer.Typer) -> None:
    @app.command("check-reference")
    def check_reference(
        block: str = typer.Argument(..., help="dram, flash or llm."),
        path: Path = typer.Argument(..., help="Reference runs CSV (config files are looked up next to it, then in results/reference)."),
    ) -> None:
        """Compare the calibrated block with reference runs; last line MAPE=<x>% N=<runs>."""
        if block not in BLOCKS:
            raise DseError(f"unknown block {block!r}; allowed: {', '.join(BLOCKS)}")
        if not path.exists():
            raise DseError(f"{path}: no such file or folder")
        if block == "dram":
            from models.blocks import dram_fit

            dram_fit.check_reference(path, echo=typer.echo)
        elif block == "flash":
            from models.blocks import flash_fit

            flash_fit.check_reference(path, echo=typer.echo)
        else:
            try:
                from models.blocks.llm.reference import check_reference as llm_check
            except ImportError as exc:
                raise DseError(f"the LLM block's reference check is not available ({exc}); "
                               "models/blocks/llm/reference.py must define check_reference(path)") from None
            from models.blocks.llm.reference import summarize

            table, mape, n = llm_check(path)
            _print_llm(table, summarize(table))
            typer.echo(f"MAPE={mape:.2f}% N={n}")


def _print_llm(table, summary: dict) -> None:
    """Per (model, config) group: runs, batch-time error, tier-memory error, feasibility."""
    import polars as pl

    g = (
        table.group_by("model", "config_label")
        .agg(
            pl.len().alias("runs"),
            pl.col("time_err_pct").abs().mean().alias("time_mape_pct"),
            pl.col("tier1_err_pct").abs().max().alias("tier1_max_err_pct"),
            pl.col("tier2_err_pct").abs().max().alias("tier2_max_err_pct"),
            pl.col("feasibility_agree").mean().alias("feasible_agree"),
        )
        .sort("model", "config_label")
    )
    with pl.Config(tbl_rows=200, tbl_cols=20, tbl_width_chars=160, float_precision=3):
        typer.echo(str(g))
    for k, v in summary.items():
        typer.echo(f"{k}: {v:.6g}" if isinstance(v, float) else f"{k}: {v}")
    typer.echo("rule: batch time over rows both sides find feasible; MAPE = mean |ours - Calculon| / Calculon")
