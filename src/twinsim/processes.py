"""Child processes of the library (a roscore, an external policy): a free localhost port to give
one, and the end of its process group."""

from __future__ import annotations

import os
import signal
import socket
import subprocess


def free_port() -> int:
    """A free localhost TCP port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc: subprocess.Popen) -> None:
    """End a process group started with `start_new_session` (SIGINT, then SIGKILL)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
