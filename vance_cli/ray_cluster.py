"""Ray for the commands that take ``--engine ray``: imported only there, never at start-up.

Shared by every engine that hands work to Ray tasks (``vance benjy batch``; ``vance structure
--batch`` can take the same three pieces):

- ``ray_session(address)``: a connected Ray, as a context manager. An instance this process has
  already joined is used as it is (a test's ``ray.init()``, a program that embeds Vance) and left
  running; otherwise ``address`` (``--ray-address``), else ``RAY_ADDRESS``, else a new local
  instance on this machine (``ray.init(address="local")``, never a cluster ``ray start`` left
  running), shut down again at the end. An address is probed
  first (a TCP connection, ``PROBE_TIMEOUT``): one that does not answer fails in seconds.
- ``task_env()`` / ``task_environ(env)``: what a task needs to see what the command saw. The
  driver passes its ``VANCE_*`` variables (the user scope ``VANCE_HOME``, ``VANCE_MODEL``,
  ``VANCE_API_BASE``, ``VANCE_API_KEY``, ...) with the task, through Ray's object store; the task sets them for its own run and puts the worker's
  back afterwards (a Ray worker runs one task at a time and is reused). Provider keys
  (``OPENAI_API_KEY``, ...) are not passed: workers of a local instance inherit them from the
  command; on a cluster they come from the workers' environment (Ray's ``runtime_env``).

A task reads and writes the same files the command does (process files, workspaces): on one
machine that is always so; on a cluster of several machines the state folder and the workspaces
must be on a filesystem every node mounts at the same path.

Standard library only at import; ``ray`` itself is imported by ``import_ray``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from typing import Any

from vance_cli.errors import UsageError, VanceError

BATCH_ENGINES = ("local", "ray")
INSTALL_HINT = "install Ray with: pip install 'vance-cli[ray]'"
MIN_RAY = (2, 40)
ENV_PREFIX = "VANCE_"
PROBE_TIMEOUT = 5.0  # seconds for the TCP probe of --ray-address before Ray dials it
# Set unless the person set them. Joining an address that takes TCP but never answers as Ray
# (a wrong port, a node address Ray dials instead of the one probed) costs ~41 s per try: Ray's
# default of 20 tries was 13.7 minutes, 3 are ~2 minutes. (Starting a local instance reads the same
# variable as seconds to wait for its GCS, so it is set only for a join.)
# Each try prints 3 lines of Ray's C++ warnings (its GcsClient logs before Ray reads
# RAY_BACKEND_LOG_LEVEL, which is not set here: on a healthy start it only adds a line of its own).
JOIN_TRIES = {"RAY_gcs_server_port_wait_time_s": "3"}


def import_ray() -> Any:
    """The ``ray`` module, or a UsageError saying how to install it (``--engine ray`` without it)."""
    try:
        import ray
    except ImportError:
        raise UsageError("--engine ray needs Ray, which is not installed", hint=INSTALL_HINT) from None
    version = tuple(int(p) for p in ray.__version__.split(".")[:2] if p.isdigit())
    if len(version) == 2 and version < MIN_RAY:
        raise UsageError(
            f"--engine ray needs Ray {MIN_RAY[0]}.{MIN_RAY[1]} or newer; this is Ray {ray.__version__}",
            hint="upgrade it: pip install -U 'vance-cli[ray]'",
        )
    return ray


def import_ray_data() -> Any:
    """``ray.data`` (Ray Data, with pyarrow: the ``ray[data]`` part of ``vance-cli[ray]``), or a
    UsageError saying how to install it (``structure --batch --engine ray`` reads IN with it)."""
    ray = import_ray()
    try:
        import ray.data
    except ImportError as exc:
        missing = f" ({exc.name} is missing)" if exc.name else ""
        raise UsageError(f"--engine ray needs Ray Data, which is not installed{missing}", hint=INSTALL_HINT) from None
    return ray.data


def resolve_address(address: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """``--ray-address``, else ``RAY_ADDRESS``, else None (a new local instance)."""
    env = os.environ if env is None else env
    for value in (address, env.get("RAY_ADDRESS")):
        if value is not None and value.strip():
            return value.strip()
    return None


def probe(address: str, timeout: float = PROBE_TIMEOUT) -> None:
    """A VanceError when nothing answers at ``address`` (``host:port`` or ``ray://host:port``):
    Ray itself would retry for minutes (20 tries of ~40 s), printing its C++ warnings. ``auto``,
    ``local`` and what does not parse as host:port are left to Ray."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout).close()
    except OSError as exc:
        reason = exc.strerror or ("timed out" if isinstance(exc, TimeoutError) else type(exc).__name__)
        raise VanceError(
            f"cannot reach the Ray cluster at {address}: {reason}",
            hint="start one with `ray start --head`, or check --ray-address / RAY_ADDRESS (`ray status` shows a running cluster)",
        ) from None


@contextlib.contextmanager
def ray_session(address: str | None = None) -> Iterator[Any]:
    """Ray, connected (see the module docstring for which instance); yields the ``ray`` module."""
    import logging

    ray = import_ray()
    if ray.is_initialized():  # joined already: use it, leave it running
        yield ray
        return
    target = resolve_address(address)
    if target is not None:
        probe(target)
        for key, value in JOIN_TRIES.items():
            os.environ.setdefault(key, value)
    try:
        # "local": a new instance here; ray.init() without one would join a cluster `ray start`
        # left running, whose workers do not have the command's provider keys
        ray.init(address=target or "local", include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    except (ConnectionError, TimeoutError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {target}" if target else "a new local Ray instance"
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise VanceError(
            f"cannot connect to {where}: {first}",
            hint="start one with `ray start --head`, or check --ray-address / RAY_ADDRESS (`ray status` shows a running cluster)",
        ) from None
    try:
        yield ray
    finally:
        ray.shutdown()


def task_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The command's ``VANCE_*`` variables, to send with a task (``task_environ`` applies them)."""
    environ = os.environ if environ is None else environ
    return {k: v for k, v in environ.items() if k.startswith(ENV_PREFIX)}


@contextlib.contextmanager
def task_environ(env: Mapping[str, str]) -> Iterator[None]:
    """Inside a task: exactly the driver's ``VANCE_*`` variables, the worker's own back afterwards."""
    saved = {k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIX)}
    for key in saved:
        if key not in env:
            del os.environ[key]
    os.environ.update({k: v for k, v in env.items() if k.startswith(ENV_PREFIX)})
    try:
        yield
    finally:
        for key in [k for k in os.environ if k.startswith(ENV_PREFIX)]:
            del os.environ[key]
        os.environ.update(saved)
