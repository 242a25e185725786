"""ROS 1 bridge throughput: a 640×480 RGB-D camera at 30 Hz, lock-step, against a real roscore.

A plain rospy node (Debian's /usr/bin/python3) subscribes to every topic the bridge publishes
and answers each depth image with a `cmd_vel`, so every control step is one round trip: the
bridge publishes the step, the node receives it and commands, the bridge steps. Reports the
steps/s this sustains (real time needs ≥ 30), the round trip per step (median, p99), and the
messages and megabytes per second the node received. Writes JSON.

Usage: python benchmarks/ros1_bridge.py [--seconds 10] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from twinsim.processes import stop
from twinsim.ros1.launch import start_roscore

NODE = r"""
import json, sys, time
import rospy
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, Image, Imu
out, seconds = sys.argv[1], float(sys.argv[2])
counts, nbytes, arrivals = {}, [0], []
rospy.init_node("bench_node", disable_signals=True)
pub = rospy.Publisher("/cmd_vel", Twist, queue_size=10)
def seen(name):
    def callback(msg):
        counts[name] = counts.get(name, 0) + 1
        if isinstance(msg, Image):
            nbytes[0] += len(msg.data)
        if name == "depth":
            arrivals.append(time.monotonic())
            cmd = Twist()
            cmd.linear.x, cmd.angular.z = 0.2, 0.1
            pub.publish(cmd)
    return callback
for topic, kind, name in (("/clock", Clock, "clock"), ("/odom", Odometry, "odom"),
        ("/imu0/data", Imu, "imu"), ("/cam0/rgb/image_raw", Image, "rgb"),
        ("/cam0/depth/image_raw", Image, "depth"), ("/cam0/camera_info", CameraInfo, "info")):
    rospy.Subscriber(topic, kind, seen(name), queue_size=1000, buff_size=2**24)
time.sleep(1.0)
start = time.monotonic()
while not arrivals and time.monotonic() - start < 60:  # the bridge waits for a first command
    pub.publish(Twist())
    time.sleep(0.2)
while time.monotonic() - start < seconds + 60 and len(arrivals) < 30 * seconds:
    time.sleep(0.01)
json.dump({"counts": counts, "bytes": nbytes[0], "arrivals": arrivals}, open(out, "w"))
"""


def _start(cmd: list[str], env: dict) -> subprocess.Popen:
    """A quiet process in a group of its own (stopped with `stop`)."""
    quiet = subprocess.DEVNULL
    return subprocess.Popen(cmd, env=env, start_new_session=True, stdout=quiet, stderr=quiet)


def measure(seconds: float, work: Path) -> dict:
    """Run roscore, the bridge and the node; the node's counts and arrival times."""
    core, env = start_roscore(work)
    procs = [core]
    try:
        sets = ["robot.kind=omni", "sensors.cam0.width=640", "sensors.cam0.height=480"]
        sets += [f"sim.duration_s={seconds + 2}"]
        twinsim = Path(sys.executable).parent / "twinsim"
        cmd = [str(twinsim), "ros1-bridge", "tiny", "--out", str(work / "eps"), "--timeout", "20"]
        cmd += [a for s in sets for a in ("--set", s)]
        procs.append(_start(cmd, env))
        node = work / "node.py"
        node.write_text(NODE)
        report = work / "node.json"
        node_cmd = ["/usr/bin/python3", str(node), str(report), str(seconds)]
        subprocess.run(node_cmd, env=env, check=True, timeout=seconds + 180)
        return json.loads(report.read_text())
    finally:
        for proc in reversed(procs):
            stop(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/ros1_bridge.json"))
    args = parser.parse_args()
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        got = measure(args.seconds, Path(tmp))
    arrivals = np.asarray(got["arrivals"])
    gaps = np.diff(arrivals[5:])  # past the start-up
    wall = arrivals[-1] - arrivals[5]
    result = {
        "world": "tiny, omni, 640x480 RGB-D at 30 Hz + IMU at 240 Hz, lock-step",
        "steps": len(gaps),
        "steps_per_s": float(len(gaps) / wall),
        "round_trip_ms_median": float(np.median(gaps) * 1e3),
        "round_trip_ms_p99": float(np.percentile(gaps, 99) * 1e3),
        "messages_per_s": float(sum(got["counts"].values()) / (arrivals[-1] - arrivals[0])),
        "image_mb_per_s": float(got["bytes"] / 1e6 / (arrivals[-1] - arrivals[0])),
        "counts": got["counts"],
    }
    result["real_time"] = result["steps_per_s"] >= 30.0
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "counts"}, indent=2))


if __name__ == "__main__":
    main()
