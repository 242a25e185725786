"""Odd sizes and encodings: robot files that are not UTF-8 or past the cap, names past 255 bytes,
rates that would loop, values of the wrong shape."""

from __future__ import annotations

import os
from pathlib import Path

from faults.cases import (
    TIMEOUT_S,
    Case,
    remove,
    run_cli,
)
from faults.common import (
    BENCH,
    FIFO_TIMEOUT_S,
    PLAN,
    free_port,
    fresh,
    verdict,
    watch,
)

MJCF = (
    '<mujoco model="r"><asset><mesh name="m" file="{mesh}"/></asset>'
    '<worldbody><body name="base"><freejoint/><geom type="mesh" mesh="m"/></body>'
    "</worldbody></mujoco>\n"
)


def sweep_sizes(seq: Path, work: Path) -> list[Case]:
    """Files not UTF-8, past the size cap or blocking (a FIFO), names past 255 bytes, absurd
    rates and malformed overrides: refused in one line, nothing hangs."""
    base = fresh(work / "sizes")
    outs = base / "outs"  # the outputs' folder: nothing else may appear there
    outs.mkdir()
    out = outs / "out"
    bad = b"\xff\xfe\x00<mujoco/>\x80\x81"
    files = {"bad.xml": bad, "bad.urdf": bad, "bad.yaml": bad, "bad-plan.yaml": bad}
    for name, data in files.items():
        (base / name).write_bytes(data)
    for name in ("big.xml", "big.urdf", "big.stl"):
        with open(base / name, "wb") as f:
            f.truncate(65 * 2**20)  # sparse: 65 MiB, over the 64 MiB cap
    os.mkfifo(base / "fifo.stl")
    (base / "big-mesh.xml").write_text(MJCF.format(mesh="big.stl"))
    (base / "fifo-mesh.xml").write_text(MJCF.format(mesh="fifo.stl"))
    run = ["run", "--config", "tiny"]

    def robot(kind: str, name: str) -> list:
        return [*run, "--set", f"robot.kind={kind}", "--set", f"robot.path={base / name}"]

    long_name = outs / ("é" * 128)  # 256 bytes in UTF-8, 128 characters
    long_long = outs / ("x" * 256) / "sub"
    cases_args: dict[str, list] = {
        "mjcf not UTF-8": robot("mjcf", "bad.xml"),
        "urdf not UTF-8": robot("urdf", "bad.urdf"),
        "mjcf 65 MiB": robot("mjcf", "big.xml"),
        "urdf 65 MiB": robot("urdf", "big.urdf"),
        "mjcf mesh 65 MiB": robot("mjcf", "big-mesh.xml"),
        "mjcf mesh a FIFO": robot("mjcf", "fifo-mesh.xml"),
        "config not UTF-8": ["run", "--config", base / "bad.yaml"],
        "plan not UTF-8": ["batch", base / "bad-plan.yaml", "--dry-run"],
        "variations not UTF-8": ["replay", seq, "--variations", base / "bad.yaml"],
        "sim.physics_hz=1000000000": [*run, "--set", "sim.physics_hz=1000000000"],
        "run cameras.cam0=5": [*run, "--set", "cameras.cam0=5"],
        "run sensors.imu0.gyro_noise_density=[1": [
            *run,
            *("--set", "sensors.imu0.gyro_noise_density=[1"),
        ],
        "noise grade cameras.cam0=5": ["noise", seq, "-p", "grade", "--set", "cameras.cam0=5"],
        "noise grade sensors.imu0.gyro_noise_density=[1": [
            *("noise", seq, "-p", "grade"),
            *("--set", "sensors.imu0.gyro_noise_density=[1"),
        ],
        "noise grade imu.gyro_noise_density=[1": [
            *("noise", seq, "-p", "grade", "--set", "imu.gyro_noise_density=[1"),
        ],
    }
    cases = []
    for name, args in cases_args.items():
        timeout = FIFO_TIMEOUT_S if "FIFO" in name else TIMEOUT_S
        watched = watch(seq, outs)
        ran = run_cli([*args, "--out", out], timeout=timeout)
        cases.append(verdict("sizes", name, ran, watched, own=("out",)))
        remove(out)
    writers = {
        "run": [*run, "--duration", "0.05"],
        "export": ["export", seq, "--format", "tum"],
        "noise": ["noise", seq, "-p", "rotors-default"],
        "replay": ["replay", seq],
        "preview": ["preview", seq],
        "dsg": ["dsg", seq, "--no-mesh"],
        "bench": [*BENCH, "--sequences", seq],
        "batch": ["batch", PLAN, "--workers", "1"],
        "serve": ["serve", "tiny", "--bind", f"tcp://127.0.0.1:{free_port()}"],
    }
    for name, args in writers.items():
        for label, target in (("256-byte é name", long_name), ("256-byte folder", long_long)):
            suffix = {"preview": ".png", "dsg": ".json"}.get(name, "")
            where = target.with_name(target.name + suffix) if suffix else target
            watched = watch(seq, outs)
            ran = run_cli([*args, "--out", where], timeout=60)
            cases.append(verdict("sizes", f"{name} --out {label}", ran, watched))
            remove(where, long_long.parent)
    return cases
