"""Ray backend: grid/sample chunks, or Optuna workers sharing a study, as Ray tasks.

A local Ray starts only when ``--backend ray`` is asked for without ``--address``;
``--address host:port`` (or ``ray://host:port``) joins an existing cluster.  Chunk
tasks are retried when a worker dies; the driver saves each chunk's result once,
keyed by chunk index, so every point appears exactly once.  Workers must have the
same cxl-dse installed (checked at connect time).

Network: the local Ray listens on 127.0.0.1 only (GCS, raylet, object manager, workers,
agents).  Ray 2.60 replaces a loopback ``node_ip_address`` by the machine's routable
address unless ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (then every node address, and
every listening socket, is local); that is set while this process starts or joins a
Ray on loopback.  An ``--address`` is probed first (TCP, then a gRPC health check with
a deadline), so a port that is not Ray gives one line instead of Ray's endless retries.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import sys
from collections.abc import Callable, Iterator
from typing import Any

from dse.errors import DseError

TASK_RETRIES = 8
#: seconds a Ray address has to answer the gRPC health check (DSE_RAY_PROBE_TIMEOUT_S)
PROBE_TIMEOUT_S = 5.0
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


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
    _probe_grpc(address, host, port)


def _probe_grpc(address: str, host: str, port: int) -> None:
    """Ray's GCS (and the Ray Client server behind ``ray://``) speak gRPC; a port that
    accepts TCP but does not answer a gRPC call within the deadline is not Ray, and
    ``ray.init`` would retry it for minutes."""
    import grpc

    try:
        timeout = min(max(float(os.environ.get("DSE_RAY_PROBE_TIMEOUT_S", PROBE_TIMEOUT_S)), 0.5), 300.0)
    except ValueError:
        timeout = PROBE_TIMEOUT_S
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    channel = grpc.insecure_channel(target)
    try:
        check = channel.unary_unary(
            "/grpc.health.v1.Health/Check", request_serializer=lambda b: b, response_deserializer=lambda b: b
        )
        check(b"", timeout=timeout)
    except grpc.RpcError as exc:
        code = exc.code() if hasattr(exc, "code") else None
        # any gRPC status from the server (no health service, auth required...) is a gRPC
        # server answering; no answer at all is not Ray
        if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, None):
            raise DseError(
                f"{address} is not a Ray cluster (no gRPC answer within {timeout:g} s); "
                "give the address `ray start --head` printed (GCS port, default 6379) or ray://HOST:10001"
            ) from None
    finally:
        channel.close()


def _is_loopback(address: str | None) -> bool:
    if address is None:
        return True  # the local Ray this run starts
    if address == "auto":
        return False
    host = _host_port(address)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextlib.contextmanager
def _loopback_ray() -> Iterator[None]:
    """While Ray starts (or connects) here: every node address is 127.0.0.1, so Ray's
    servers listen on loopback only.  Ray reads the switch when ``ray._private.ray_constants``
    is imported; if that already happened in this process, the constant is set too
    (Ray 2.60 has no public option: ``--node-ip-address 127.0.0.1`` is replaced by the
    routable address).  Both are restored afterwards; the processes Ray started keep it."""
    saved_env = os.environ.get(LOOPBACK_ENV)
    os.environ[LOOPBACK_ENV] = "0"
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
        constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        if saved_env is None:
            os.environ.pop(LOOPBACK_ENV, None)
        else:
            os.environ[LOOPBACK_ENV] = saved_env
        constants = sys.modules.get("ray._private.ray_constants")
        if constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
            # what Ray itself reads from the environment (clusters off on Windows/macOS)
            default = sys.platform not in ("darwin", "win32")
            value = default if saved_env is None else saved_env.strip().lower() in ("1", "true")
            constants.ENABLE_RAY_CLUSTER = value


def _code_fingerprint() -> str:
    import dse

    return dse.__version__


#: Starts of a local Ray tried before giving up: on a loaded small machine its raylet
#: now and then misses Ray's startup deadline ("timed out during startup").
LOCAL_START_TRIES = 2


def _init_ray(ray: Any, kwargs: dict[str, Any], retry: bool) -> None:
    """``ray.init``; a local start that timed out is shut down and tried again."""
    for attempt in range(LOCAL_START_TRIES if retry else 1):
        try:
            ray.init(**kwargs)
            return
        except Exception as exc:  # Ray raises a bare Exception for a startup timeout
            timed_out = "timed out" in str(exc).lower()
            if not (retry and timed_out) or attempt + 1 == LOCAL_START_TRIES:
                if timed_out:
                    raise RuntimeError(" ".join(str(exc).split())) from None
                raise
            ray.shutdown()


class RayContext:
    def __init__(self, address: str | None, workers: int | None) -> None:
        loopback = _is_loopback(address)
        with _loopback_ray() if loopback else contextlib.nullcontext():
            import ray

            self._init(ray, address, workers)

    def _init(self, ray: Any, address: str | None, workers: int | None) -> None:
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
            kwargs["_node_ip_address"] = "127.0.0.1"  # with _loopback_ray: listen on loopback only
            if workers:
                kwargs["num_cpus"] = workers
        try:
            _init_ray(ray, kwargs, retry=not address)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            msg = " ".join(str(exc).split())
            hint = ""
            if address and os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
                hint = (
                    "; if the cluster uses token auth, set RAY_AUTH_MODE=token and give this machine its token "
                    "(RAY_AUTH_TOKEN or ~/.ray/auth_token)"
                )
            raise DseError(f"cannot connect to Ray{' at ' + address if address else ''}: {msg}{hint}") from None
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
        draws: int = 0,
    ) -> dict[str, Any]:
        """Evaluate ``todo`` as Ray tasks and ``save`` each chunk once.  With ``draws`` (a
        robust sweep) a task returns the chunk's points and its per-draw front, as the
        local loop does (``robust.evaluate_robust_chunk``)."""
        ray = self.ray
        from dse.sweep.evaluate import evaluate_chunk
        from dse.sweep.robust import evaluate_robust_chunk

        fn = evaluate_robust_chunk if draws else evaluate_chunk
        task = ray.remote(max_retries=TASK_RETRIES, retry_exceptions=False, num_returns=1)(fn)
        extra = (draws,) if draws else ()
        space_ref = ray.put(space)
        pending: dict[Any, Any] = {}
        queue = list(todo)
        in_flight = max(2, 2 * self.workers)
        saved: set[int] = set()
        while queue or pending:
            while queue and len(pending) < in_flight:
                c = queue.pop(0)
                pending[task.remote(space_ref, strategy, seed, c, *extra)] = c
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
