"""``dse calibrate dram|flash [--against PATH [--add]] [--out DIR]``: fit a block's shared
constants to reference runs (the shipped ones, a user's, or with ``--add`` both together)
and write ``<DIR>/<block>.toml`` atomically (default DIR: results/calibration)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import typer

from dse.errors import DseError

BLOCKS = ("dram", "flash")


def register(app: typer.Typer) -> None:
    @app.command("calibrate")
    def calibrate(
        block: str = typer.Argument(..., help="Block to calibrate: dram or flash."),
        against: Path = typer.Option(None, "--against", help="runs.csv, or a folder of raw DRAMsim3 JSON / MQSim XML output (default: the shipped results/reference copy)."),
        add: bool = typer.Option(False, "--add", help="Fit on the shipped runs and the --against runs together (the user's runs added to the shipped set)."),
        out: Path = typer.Option(None, "--out", help="Folder for <block>.toml (default: results/calibration)."),
    ) -> None:
        """Fit the block constants with scipy, report train and held-out errors, write the TOML."""
        if block not in BLOCKS:
            raise DseError(f"unknown block {block!r}; allowed: {', '.join(BLOCKS)}")
        if against is not None and not against.exists():
            raise DseError(f"--against {against}: no such file or folder")
        if add and against is None:
            raise DseError("--add adds the --against runs to the shipped set; give --against PATH")
        from models.blocks import calibration

        if block == "dram":
            from models.blocks import dram_fit as fit
        else:
            from models.blocks import flash_fit as fit
        with tempfile.TemporaryDirectory() as tmp:
            source = _as_folder(against, Path(tmp)) if against is not None else None
            _check_runs(fit, source, against, add)
            doc = fit.calibrate(source, add=add)
        if against is not None:  # the user's path, not the temporary folder a raw file was read from
            doc["reference"] = ("shipped reference + " if add else "") + str(against)
        path = calibration.save(block, doc, out)
        for name, e in doc["error"].items():
            sat = e.get("sat_max_err_pct")
            typer.echo(f"{name:<18} MAPE={e['mape_pct']:.2f}% N={e['n']}  saturation max |err|={sat:.2f}% "
                       f"mean={e.get('sat_mean_err_pct', float('nan')):.2f}%")
        typer.echo("constants: " + ", ".join(f"{k}={v:.4g}" for k, v in doc["constants"].items()))
        typer.echo(f"wrote {path}")


def _as_folder(against: Path, tmp: Path) -> Path:
    """A raw simulator output file is read as a folder holding it; a runs.csv or a folder
    is read as it is."""
    if against.is_file() and against.suffix.lower() != ".csv":
        shutil.copy(against, tmp / against.name)
        return tmp
    return against


def _check_runs(fit: Any, source: Path | None, against: Path | None, add: bool = False) -> None:
    """One line, nothing written, when the runs cannot be read or are too few to fit (on
    their own; added to the shipped set, readable is enough)."""
    if source is None:
        return
    import polars as pl

    from models.blocks.fit_harness import RUNS_PER_CONSTANT

    try:
        runs = fit.load_reference(source)
    except (OSError, ValueError, KeyError, IndexError, TypeError, pl.exceptions.PolarsError) as exc:
        raise DseError(f"--against {against}: not readable as reference runs ({type(exc).__name__}: {exc})") from None
    need = RUNS_PER_CONSTANT * len(fit.FIT_KEYS)
    n = int(runs["counted"].sum()) if "counted" in runs.columns else runs.height
    if add and runs.height == 0:
        raise DseError(f"--against {against}: holds no runs to add")
    if n < need and not add:
        raise DseError(f"--against {against}: {n} usable runs to fit {len(fit.FIT_KEYS)} constants "
                       f"({', '.join(fit.FIT_KEYS)}); need at least {need} ({RUNS_PER_CONSTANT} per constant)")
