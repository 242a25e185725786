"""Start and stop a roscore on a free localhost port, for tests and benchmarks of the bridge
(plain processes: this module does not import rospy)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

from twinsim.processes import free_port, stop


def start_roscore(home: Path, timeout_s: float = 20.0) -> tuple[subprocess.Popen, dict]:
    """A roscore on a free port with its logs under `home`; the process and the environment
    that reaches it (ROS_MASTER_URI, ROS_HOME, ROS_LOG_DIR, ROS_IP)."""
    port = free_port()
    env = dict(os.environ, ROS_MASTER_URI=f"http://127.0.0.1:{port}", ROS_HOME=str(home))
    env.update(ROS_IP="127.0.0.1", ROS_LOG_DIR=str(home / "log"))
    quiet = subprocess.DEVNULL
    core = subprocess.Popen(
        ["roscore", "-p", str(port)], env=env, start_new_session=True, stdout=quiet, stderr=quiet
    )
    deadline = time.monotonic() + timeout_s
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        if time.monotonic() > deadline:
            stop(core)
            raise RuntimeError(f"roscore did not start on port {port} in {timeout_s:g} s")
        time.sleep(0.2)
    time.sleep(1.0)  # the master answers; let rosout come up
    return core, env
