"""Connecting to Ray, for every command with `--ray` (`batch`, `bench`, `navbench`): `local`
starts a small instance on this machine, `auto` joins the cluster this machine belongs to,
`HOST:PORT` (or `ray://HOST:PORT`) a head node, refused at once when nothing listens there."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from twinsim.errors import TwinsimError

RAY_INSTALL = "pip install 'twinsim[ray]' (or 'ray>=2.40')"


class RayUnavailableError(TwinsimError):
    """Ray is not installed, or the cluster named cannot be reached."""


def check_reachable(address: str) -> None:
    """A one-line error, at once, for a head node nothing listens on (ray.init would retry
    for minutes)."""
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise RayUnavailableError(
            f"--ray {address}: expected auto, local, HOST:PORT or ray://HOST:PORT"
        )
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise RayUnavailableError(
            f"--ray {address}: no Ray cluster reachable there ({exc.strerror or exc})"
        ) from None


def connect(address: str, workers: int, namespace: str) -> Any:
    """`ray`, initialised for `address` (`local`: `workers` CPUs on this machine)."""
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(f"--ray needs Ray: {RAY_INSTALL}") from None
    quiet = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    if address == "local":
        ray.init(num_cpus=workers, object_store_memory=100 * 1024**2, namespace=namespace, **quiet)
        return ray
    if address != "auto":
        check_reachable(address)
    try:
        ray.init(address=address, namespace=namespace, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise RayUnavailableError(f"--ray {address}: {message}") from None
    return ray


@contextmanager
def ray_session(address: str, workers: int, namespace: str) -> Iterator[Any]:
    """`connect` for a block, shut down after it."""
    ray = connect(address, workers, namespace)
    try:
        yield ray
    finally:
        ray.shutdown()
