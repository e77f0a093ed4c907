"""The ``dse`` command line.  Commands live in ``dse/commands/*.py``; each module has a
``register(app)`` function.  Heavy libraries are imported inside command bodies."""

from __future__ import annotations

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
    add_completion=False,
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


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app; a DseError prints one line and exits 2."""
    from dse.errors import DseError

    usage_error = _click_exception()

    command = typer.main.get_command(app)
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
        exc.show()
        return 2
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        return 130
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
