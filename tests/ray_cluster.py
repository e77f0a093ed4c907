"""A Ray cluster on loopback for the tests that need a real one (``ray start`` nodes on
127.0.0.1 with a temp dir of their own), stopped and removed afterwards."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

RAY = str(Path(sys.executable).with_name("ray"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: ``ray start`` attempts when a node times out during startup (a loaded 2-core machine
#: in a parallel test run; the sweep backend retries a local start the same way).
START_TRIES = 3


def ray_cli(args: list[str], env: dict[str, str]) -> None:
    for attempt in range(START_TRIES if args[0] == "start" else 1):
        res = subprocess.run([RAY, *args], env=env, capture_output=True, text=True, timeout=180)
        if res.returncode == 0:
            return
        text = res.stderr or res.stdout
        if "timed out during startup" not in text or attempt + 1 == START_TRIES:
            pytest.fail(f"ray {' '.join(args[:2])} failed: {text[-1500:]}")
        subprocess.run([RAY, "stop", "--force"], env=env, capture_output=True, timeout=120)  # the half-started node
        time.sleep(2)


@contextlib.contextmanager
def loopback_cluster(nodes: int = 1, cpus_per_node: int = 1) -> Iterator[str]:
    """Start a head (and ``nodes - 1`` joining nodes) on 127.0.0.1; yields the address."""
    if not Path(RAY).exists():
        pytest.skip("ray CLI not installed")
    port = free_port()
    addr = f"127.0.0.1:{port}"
    # a temp dir of its own keeps this cluster apart from any other Ray on the machine
    # (short path: Ray's unix sockets live under it)
    temp_dir = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    # A local ray.init() (recent Ray) writes ~/.ray/auth_token; with it, a `ray start --head`
    # turns token auth on but a joining `ray start` does not, and the join fails.  This
    # loopback-only test cluster (and this driver) run with auth explicitly off.
    saved = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"
    env = {**os.environ, "RAY_DISABLE_USAGE_STATS": "1"}
    common = ["--node-ip-address=127.0.0.1", f"--num-cpus={cpus_per_node}", "--disable-usage-stats"]
    ray_cli(["start", "--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={temp_dir}", *common], env)
    try:
        for _ in range(nodes - 1):
            ray_cli(["start", f"--address={addr}", *common], env)
        deadline = time.time() + 60
        while time.time() < deadline:  # wait until every node has registered
            out = subprocess.run([RAY, "status", f"--address={addr}"], env=env, capture_output=True, text=True, timeout=60).stdout
            if out.count(" node_") >= nodes:
                break
            time.sleep(1)
        else:
            pytest.fail(f"{nodes} Ray nodes did not register")
        yield addr
    finally:
        subprocess.run([RAY, "stop", "--force"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(temp_dir, ignore_errors=True)
        if saved is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = saved
