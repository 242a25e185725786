"""A plain rospy node (run by /usr/bin/python3): listen to /clock without commanding anything.

argv: seconds out.json. Records (wall monotonic s, sim ns) of every /clock message for that
long, or until the clock has been silent for 2 s after it started."""

import json
import sys
import time

import rospy
from rosgraph_msgs.msg import Clock

seconds, out = float(sys.argv[1]), sys.argv[2]
ticks = []
rospy.init_node("clock_listener", disable_signals=True)
rospy.Subscriber(
    "/clock", Clock, lambda m: ticks.append([time.monotonic(), m.clock.to_nsec()]), queue_size=1000
)
deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    time.sleep(0.05)
    if ticks and time.monotonic() - ticks[-1][0] > 2.0:
        break
with open(out, "w") as f:
    json.dump({"ticks": ticks}, f)
