"""``dse calibrate dram|flash [--against PATH] [--out DIR]``: fit a block's shared constants
to reference runs and write ``<DIR>/<block>.toml`` atomically (default DIR:
results/calibration)."""

from __future__ import annotations

from pathlib import Path

import typer

from dse.errors import DseError

BLOCKS = ("dram", "flash")


def register(app: typer.Typer) -> None:
    @app.command("calibrate")
    def calibrate(
        block: str = typer.Argument(..., help="Block to calibrate: dram or flash."),
        against: Path = typer.Option(None, "--against", help="runs.csv, or a folder of raw DRAMsim3 JSON / MQSim XML output (default: the shipped results/reference copy)."),
        out: Path = typer.Option(None, "--out", help="Folder for <block>.toml (default: results/calibration)."),
    ) -> None:
        """Fit the block constants with scipy, report train and held-out errors, write the TOML."""
        if block not in BLOCKS:
            raise DseError(f"unknown block {block!r}; allowed: {', '.join(BLOCKS)}")
        if against is not None and not against.exists():
            raise DseError(f"--against {against}: no such file or folder")
        from models.blocks import calibration

        if block == "dram":
            from models.blocks import dram_fit as fit
        else:
            from models.blocks import flash_fit as fit
        doc = fit.calibrate(against)
        path = calibration.save(block, doc, out)
        for name, e in doc["error"].items():
            sat = e.get("sat_max_err_pct")
            typer.echo(f"{name:<18} MAPE={e['mape_pct']:.2f}% N={e['n']}  saturation max |err|={sat:.2f}% "
                       f"mean={e.get('sat_mean_err_pct', float('nan')):.2f}%")
        typer.echo("constants: " + ", ".join(f"{k}={v:.4g}" for k, v in doc["constants"].items()))
        typer.echo(f"wrote {path}")
