"""Optuna studies in a real PostgreSQL server started on loopback by the test: both URL
forms the README gives (`postgresql://` and `postgresql+psycopg2://`) reach it through the
one shipped driver (psycopg 3); before, a bare `postgresql://` failed ("Failed to import DB
access module": SQLAlchemy 2.1 defaults to psycopg 3, the package pinned psycopg2)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import SMALL_SPACE

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("postgres")]


def _bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or ([shutil.which(name)] if shutil.which(name) else [])
    return found[-1] if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(cmd: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run its tools as the `postgres` user then."""
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@pytest.fixture(scope="module")
def postgres():
    initdb, pg_ctl = _bin("initdb"), _bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL is not installed (.ci/run installs Debian's postgresql)")
    # pytest's temp folders are private to root; the server runs as `postgres`
    root = Path(tempfile.mkdtemp(prefix="dse-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    root.chmod(0o700)
    data, port = root / "data", _free_port()
    subprocess.run(_as_postgres([initdb, "-D", str(data), "-A", "trust", "-U", "postgres"]), check=True,
                   capture_output=True, timeout=120)
    opts = f"-c listen_addresses=127.0.0.1 -p {port} -k {root}"  # loopback only, socket in the test's folder
    subprocess.run(_as_postgres([pg_ctl, "-D", str(data), "-o", opts, "-w", "-l", str(root / "log"), "start"]),
                   check=True, capture_output=True, timeout=120)
    try:
        yield f"postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(_as_postgres([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"]), capture_output=True,
                       timeout=120)
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("scheme, seed", [("postgresql", 1), ("postgresql+psycopg2", 2)])
def test_optuna_study_in_a_real_postgresql(postgres, cli, space_file, tmp_path, scheme, seed):
    space = space_file(SMALL_SPACE.replace("seed = 3", f"seed = {seed}"))  # its own study per URL form
    out = tmp_path / "out"
    code, _, err = cli("sweep", space, "--strategy", "optuna", "--trials", "40", "--batch", "8",
                       "--storage", f"{scheme}://{postgres}", "--out", out, "-q")
    assert code == 0, err
    ids = pl.read_parquet(out / "points.parquet")["point_id"].to_list()
    assert len(ids) == 40 == len(set(ids))
    import json

    m = json.loads((out / "manifest.json").read_text())
    assert m["run"]["storage"] == "rdb" and "***@" in m["storage"]  # the user name is not written


def test_an_unreachable_postgresql_is_one_line(cli, space_file, tmp_path):
    port = _free_port()  # nothing listens there
    code, _, err = cli("sweep", space_file(), "--strategy", "optuna", "--storage",
                       f"postgresql://nobody@127.0.0.1:{port}/db", "--out", tmp_path / "o", "-q")
    assert code == 2 and err.startswith("error: --storage") and err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()


def test_both_url_forms_name_the_shipped_driver():
    from dse.sweep.optuna_study import canonical_url

    assert canonical_url("postgresql+psycopg2://u@h/db") == "postgresql+psycopg://u@h/db"
    assert canonical_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert canonical_url("postgresql://u@h/db") == "postgresql://u@h/db"  # SQLAlchemy's default: psycopg 3
    assert Path(canonical_url("sqlite:///rel.db")[len("sqlite:///"):]).is_absolute()
