"""A plain rospy node (run by /usr/bin/python3): drive /cmd_vel towards a goal from /odom.

argv: dx dy out.json. The goal is the first odom position plus (dx, dy); the node stops
commanding once within 0.3 m and writes the /clock stamps (ns) and the last pose seen."""

import json
import math
import sys
import time

import rospy
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, Image, Imu
from tf2_msgs.msg import TFMessage

dx, dy, out = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
clock_ns, state = [], {"odom": None, "new": False, "goal": None}


def on_odom(msg):
    state["odom"], state["new"] = msg, True


rospy.init_node("goal_driver", disable_signals=True)
rospy.Subscriber("/clock", Clock, lambda m: clock_ns.append(m.clock.to_nsec()), queue_size=1000)
rospy.Subscriber("/odom", Odometry, on_odom, queue_size=10)
counts = {"imu": 0, "rgb": 0}
rospy.Subscriber("/imu0/data", Imu, lambda m: counts.update(imu=counts["imu"] + 1), queue_size=1000)
rospy.Subscriber(
    "/cam0/rgb/image_raw", Image, lambda m: counts.update(rgb=counts["rgb"] + 1), queue_size=100
)
info, mounts = {}, {}
rospy.Subscriber("/cam0/camera_info", CameraInfo, lambda m: info.update(K=list(m.K), w=m.width))


def on_static(msg):
    for tf in msg.transforms:
        t = tf.transform.translation
        mounts[tf.child_frame_id] = [tf.header.frame_id, t.x, t.y, t.z]


rospy.Subscriber("/tf_static", TFMessage, on_static)
pub = rospy.Publisher("/cmd_vel", Twist, queue_size=10)
bad = Twist()
bad.linear.x = float("nan")
reached, last_sent, deadline = False, 0.0, time.monotonic() + 45
while not reached and time.monotonic() < deadline:
    time.sleep(0.002)
    odom = state["odom"]
    if odom is None or not (state["new"] or time.monotonic() - last_sent > 0.5):
        continue
    state["new"] = False
    p, q = odom.pose.pose.position, odom.pose.pose.orientation
    if state["goal"] is None:
        state["goal"] = (p.x + dx, p.y + dy)
        pub.publish(bad)  # malformed: the bridge must log and ignore it
    ex, ey = state["goal"][0] - p.x, state["goal"][1] - p.y
    reached = math.hypot(ex, ey) < 0.3
    yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
    cmd = Twist()
    if not reached:
        cmd.linear.x = 0.8 * (math.cos(yaw) * ex + math.sin(yaw) * ey)
        cmd.linear.y = 0.8 * (-math.sin(yaw) * ex + math.cos(yaw) * ey)
    pub.publish(cmd)
    last_sent = time.monotonic()
time.sleep(0.5)
with open(out, "w") as f:
    result = {"clock_ns": clock_ns, **counts, "goal": state["goal"], "reached": reached}
    json.dump({**result, "camera_info": info, "mounts": mounts}, f)
