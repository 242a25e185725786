"""A plain rospy node (run by /usr/bin/python3): send a PoseStamped goal and record what comes.

argv: dx dy out.json. The goal is the first odom position plus (dx, dy), sent on /goal once per
odom message (lock-step: each message steps the bridge once) until the robot is within 0.15 m.
It writes the first LiDAR clouds (fields, stamp and raw bytes, base64), the cloud count, the IMU
topics' row counts and frame ids, the latched mounts and the last odom position."""

import base64
import json
import math
import sys
import time

import rospy
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, PointCloud2
from tf2_msgs.msg import TFMessage

dx, dy, out = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
state = {"odom": None, "new": False, "goal": None}
clouds, cloud_count, imus, mounts = [], [0], {}, {}


def on_odom(msg):
    state["odom"], state["new"] = msg, True


def on_cloud(msg):
    cloud_count[0] += 1
    if len(clouds) < 3:
        fields = [[f.name, f.offset, f.datatype, f.count] for f in msg.fields]
        clouds.append(
            {
                "stamp_ns": msg.header.stamp.to_nsec(),
                "frame_id": msg.header.frame_id,
                "width": msg.width,
                "height": msg.height,
                "point_step": msg.point_step,
                "row_step": msg.row_step,
                "fields": fields,
                "data": base64.b64encode(bytes(msg.data)).decode("ascii"),
            }
        )


def on_imu(topic):
    def callback(msg):
        entry = imus.setdefault(topic, {"rows": 0, "frame_id": msg.header.frame_id})
        entry["rows"] += 1

    return callback


def on_static(msg):
    for tf in msg.transforms:
        t = tf.transform.translation
        mounts[tf.child_frame_id] = [tf.header.frame_id, t.x, t.y, t.z]


rospy.init_node("pose_goal_node", disable_signals=True)
rospy.Subscriber("/odom", Odometry, on_odom, queue_size=10)
rospy.Subscriber("/lidar0/points", PointCloud2, on_cloud, queue_size=100)
for name in ("imu0", "imu1"):
    rospy.Subscriber(f"/{name}/data", Imu, on_imu(name), queue_size=1000)
rospy.Subscriber("/tf_static", TFMessage, on_static)
pub = rospy.Publisher("/goal", PoseStamped, queue_size=10)
reached, last_sent, deadline = False, 0.0, time.monotonic() + 30
while not reached and time.monotonic() < deadline:
    time.sleep(0.002)
    odom = state["odom"]
    if odom is None or not (state["new"] or time.monotonic() - last_sent > 0.5):
        continue
    state["new"] = False
    p = odom.pose.pose.position
    if state["goal"] is None:
        state["goal"] = (p.x + dx, p.y + dy)
    reached = math.hypot(state["goal"][0] - p.x, state["goal"][1] - p.y) < 0.15
    if not reached:
        goal = PoseStamped()
        goal.header.frame_id = "world"
        goal.pose.position.x, goal.pose.position.y = state["goal"]
        goal.pose.orientation.w = 1.0
        pub.publish(goal)
        last_sent = time.monotonic()
time.sleep(0.5)
last = state["odom"].pose.pose.position if state["odom"] is not None else None
with open(out, "w") as f:
    result = {"goal": state["goal"], "reached": reached, "last": last and [last.x, last.y]}
    json.dump(
        {**result, "clouds": clouds, "cloud_count": cloud_count[0], "imus": imus, "mounts": mounts},
        f,
    )
