"""What a lock-step `twinsim serve` step costs a client, over its in-process `Session.step`.

The tiny world with an omni robot, two rigs: no camera (IMU at 240 Hz only), and a 640×480
RGB-D camera at 30 Hz with the IMU. For each, a `twinsim serve` process (recording, as it
always does) and a `TwinsimClient` stepping it `--steps` control periods at 30 Hz with a
velocity command: round trip per step (median, p99) and steps per second; then the same steps
of a `Session` in this process (recording too), so the difference is the protocol's cost
(encoding, ZeroMQ over loopback TCP, decoding).

Usage: python benchmarks/zmq_roundtrip.py [--steps 150] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from twinsim import Session
from twinsim.closedloop.client import TwinsimClient
from twinsim.config import load_config

RIGS = {
    "no_camera": {"imu0": {"kind": "imu"}},
    "rgbd_640x480": {
        "cam0": {"kind": "camera", "width": 640, "height": 480},
        "imu0": {"kind": "imu"},
    },
}
COMMAND = {"velocity": {"vx": 0.2, "wz": 0.1}}


def _config_file(rig: dict, folder: Path, name: str) -> Path:
    """The tiny preset with an omni robot carrying `rig` alone, as a YAML file."""
    data = {"extends": "tiny", "robots": {"robot": {"kind": "omni", "sensors": rig}}}
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _stats(seconds: list[float]) -> dict:
    """Median and p99 in ms, and steps per second."""
    ms = 1e3 * np.array(seconds)
    return {
        "median_ms": float(np.median(ms)),
        "p99_ms": float(np.percentile(ms, 99)),
        "steps_per_s": float(len(ms) / ms.sum() * 1e3),
    }


def _served(config: Path, steps: int, scratch: Path) -> dict:
    """Round trips of `steps` lock-step requests to a `twinsim serve` process."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    twinsim = str(Path(sys.executable).with_name("twinsim"))
    duration = ["--set", f"sim.duration_s={steps / 30 + 1}"]
    command = [twinsim, "serve", str(config), "--out", str(scratch), "--bind", address, *duration]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with TwinsimClient(address, timeout_s=60) as client:
            client.hello()
            client.reset(seed=0)
            seconds = []
            for _ in range(steps):
                t0 = time.perf_counter()
                client.step(COMMAND)
                seconds.append(time.perf_counter() - t0)
            client.close()
        server.wait(timeout=30)
    finally:
        server.kill()
        server.wait()
    return _stats(seconds)


def _in_process(config: Path, steps: int, scratch: Path) -> dict:
    """The same steps of a `Session` in this process."""
    cfg = load_config(str(config), duration_s=steps / 30 + 1)
    with Session(cfg, scratch) as session:
        session.reset(seed=0)
        seconds = []
        for _ in range(steps):
            t0 = time.perf_counter()
            session.step(COMMAND)
            seconds.append(time.perf_counter() - t0)
    return _stats(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "zmq_roundtrip.json"
    )
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    results: dict[str, dict] = {}
    for name, rig in RIGS.items():
        config = _config_file(rig, scratch, name)
        served = _served(config, args.steps, scratch / f"{name}-served")
        local = _in_process(config, args.steps, scratch / f"{name}-session")
        overhead = served["median_ms"] - local["median_ms"]
        results[name] = {"served": served, "session": local, "protocol_median_ms": overhead}
        print(
            f"{name:>13}: round trip {served['median_ms']:.2f} ms median, "
            f"{served['p99_ms']:.2f} ms p99, {served['steps_per_s']:.0f} steps/s; "
            f"Session.step {local['median_ms']:.2f} ms (protocol {overhead:+.2f} ms)",
            flush=True,
        )
    shutil.rmtree(scratch)
    report = {"steps": args.steps, "control_hz": 30, "world": "tiny, omni", "rigs": results}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written to {args.json}")


if __name__ == "__main__":
    main()
