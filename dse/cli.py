"""The ``dse`` command line.  Commands live in ``dse/commands/*.py``; each module has a
``register(app)`` function.  Heavy libraries are imported inside command bodies."""

from __future__ import annotations

import functools
import os
import pkgutil
import sys
from importlib import import_module

import typer

import dse.commands
from dse import __version__

app = typer.Typer(
    name="dse",
    help="Analytical models and design-space exploration for CXL and disaggregated memory/storage.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cxl-dse {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
    calibration: str = typer.Option(
        "shipped",
        "--calibration",
        help="Block calibration: 'shipped' (results/calibration), 'none' (uncalibrated defaults) or a folder.",
    ),
) -> None:
    if calibration.strip().lower() not in ("shipped", "none"):
        from pathlib import Path

        from models.blocks.calibration import check_folder

        check_folder(Path(calibration))
    os.environ["DSE_CALIBRATION"] = calibration


def _register_all() -> None:
    for info in sorted(pkgutil.iter_modules(dse.commands.__path__), key=lambda m: m.name):
        mod = import_module(f"dse.commands.{info.name}")
        register = getattr(mod, "register", None)
        if register is not None:
            register(app)


_register_all()


def _click_exception() -> type[Exception]:
    """The usage-error base class of the click that typer runs on: typer >= 0.29 vendors
    its own copy (typer._click), whose exceptions are not click's."""
    try:
        return import_module("typer._click.exceptions").ClickException
    except ImportError:
        return import_module("click").ClickException


INTERRUPTED = "interrupted: nothing was written beyond the saved parts (continue with --resume)"


def _one_line(exc: Exception) -> str:
    """Click's usage error (three lines: usage, hint, message) as one line."""
    msg = " ".join(exc.format_message().split())  # type: ignore[attr-defined]
    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", None) if ctx is not None else None
    return f"{msg} (see `{path} --help`)" if path else msg


@functools.cache
def _command() -> object:
    """The click command behind the app, built once per process (~40 ms a build)."""
    return typer.main.get_command(app)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app; a DseError prints one line and exits 2."""
    from dse.errors import DseError

    usage_error = _click_exception()

    command = _command()
    try:
        rv = command.main(args=argv if argv is not None else sys.argv[1:], prog_name="dse", standalone_mode=False)
    except DseError as exc:
        typer.echo(f"error: {exc}", err=True)
        return exc.exit_code
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        typer.echo("aborted", err=True)
        return 130
    except usage_error as exc:
        typer.echo(f"error: {_one_line(exc)}", err=True)
        return 2
    except KeyboardInterrupt:
        typer.echo(INTERRUPTED, err=True)
        return 130
    if rv == 130:  # typer turns a Ctrl-C into a returned 130 outside standalone mode
        typer.echo(INTERRUPTED, err=True)
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
