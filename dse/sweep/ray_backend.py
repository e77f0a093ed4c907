"""Ray backend: grid/sample chunks, or Optuna workers sharing a study, as Ray tasks.

A local Ray starts only when ``--backend ray`` is asked for without ``--address``;
``--address host:port`` (or ``ray://host:port``) joins an existing cluster.  Chunk
tasks are retried when a worker dies; the driver saves each chunk's result once,
keyed by chunk index, so every point appears exactly once.  Workers must have the
same cxl-dse installed (checked at connect time).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from typing import Any

from dse.errors import DseError

TASK_RETRIES = 8


def _host_port(address: str) -> tuple[str, int]:
    addr = address.split("://", 1)[-1]
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit():
        raise DseError(f"--address {address!r} is not host:port (e.g. 127.0.0.1:6379 or ray://127.0.0.1:10001)")
    return host or "127.0.0.1", int(port)


def check_address(address: str | None) -> None:
    """Fail fast (one line, exit 2) when a Ray address cannot be reached."""
    if address is None or address == "auto":
        return
    host, port = _host_port(address)
    try:
        with socket.create_connection((host, port), timeout=3.0):
            pass
    except OSError as exc:
        raise DseError(
            f"cannot reach Ray at {address}: {exc.strerror or exc}; start one with `ray start --head` "
            "or leave out --address to start a local Ray"
        ) from None


def _code_fingerprint() -> str:
    import dse

    return dse.__version__


class RayContext:
    def __init__(self, address: str | None, workers: int | None) -> None:
        import ray

        self.ray = ray
        runtime_env = {"env_vars": {"DSE_CALIBRATION": os.environ.get("DSE_CALIBRATION", "shipped")}}
        kwargs: dict[str, Any] = {
            "ignore_reinit_error": True,
            "log_to_driver": False,
            "runtime_env": runtime_env,
        }
        if address:
            kwargs["address"] = address
        else:
            kwargs["address"] = "local"  # a fresh local Ray, never a cluster found on this machine
            kwargs["include_dashboard"] = False
            if workers:
                kwargs["num_cpus"] = workers
        try:
            ray.init(**kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise DseError(f"cannot connect to Ray{' at ' + address if address else ''}: {exc}") from None
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.workers = workers or self.cpus
        remote_version = ray.get(ray.remote(_code_fingerprint).remote())
        if remote_version != _code_fingerprint():
            self.close()
            raise DseError(
                f"Ray workers run cxl-dse {remote_version}, this driver {_code_fingerprint()}; install the same version"
            )

    def close(self) -> None:
        try:
            self.ray.shutdown()
        except Exception:  # pragma: no cover - best effort
            pass

    # ------------------------------------------------------------------ chunks
    def run_chunks(
        self,
        space: Any,
        strategy: str,
        seed: int,
        todo: list[Any],
        save: Callable[[Any, Any], None],
        advance: Callable[[int], None],
    ) -> dict[str, Any]:
        ray = self.ray
        from dse.sweep.evaluate import evaluate_chunk

        task = ray.remote(max_retries=TASK_RETRIES, retry_exceptions=False)(evaluate_chunk)
        space_ref = ray.put(space)
        pending: dict[Any, Any] = {}
        queue = list(todo)
        in_flight = max(2, 2 * self.workers)
        saved: set[int] = set()
        while queue or pending:
            while queue and len(pending) < in_flight:
                c = queue.pop(0)
                pending[task.remote(space_ref, strategy, seed, c)] = c
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                c = pending.pop(ref)
                table = ray.get(ref)
                if c.index not in saved:  # each chunk is saved exactly once
                    save(c, table)
                    saved.add(c.index)
                    advance(c.size)
        return {"ray_cpus": self.cpus, "ray_tasks": len(todo)}

    # ------------------------------------------------------------------ optuna
    def run_workers(self, fn: Callable[..., int], n_workers: int, *args: Any) -> int:
        """Run ``fn(worker_index, *args)`` on ``n_workers`` tasks; returns the sum."""
        ray = self.ray
        task = ray.remote(max_retries=TASK_RETRIES, retry_exceptions=False)(fn)
        refs = [task.remote(i, *args) for i in range(n_workers)]
        return int(sum(ray.get(refs)))


def connect(address: str | None, workers: int | None) -> RayContext:
    return RayContext(address, workers)
