"""A plain rospy node (run by /usr/bin/python3): steer the mobile robots of a lock-step bridge
and keep every /tf transform and every robot's /odom it receives, for the truth cross-check.

argv: robots (comma-separated) mobile (comma-separated) steps out.json vx. Each new /odom of
the first robot is answered with a Twist (forward at vx, turning) to every mobile robot (resent
when the bridge is quiet); after `steps` such stamps the node stops commanding and writes what
it received.
"""

import json
import sys
import time

import rospy
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from tf2_msgs.msg import TFMessage

robots, mobile = sys.argv[1].split(","), sys.argv[2].split(",")
steps, out = int(sys.argv[3]), sys.argv[4]
received = {"tf": [], "odom": []}


def on_tf(msg):
    for tf in msg.transforms:
        t, r = tf.transform.translation, tf.transform.rotation
        row = [tf.header.stamp.to_nsec(), tf.header.frame_id, tf.child_frame_id]
        received["tf"].append([*row, t.x, t.y, t.z, r.x, r.y, r.z, r.w])


def on_odom(robot):
    def callback(msg):
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        v, w = msg.twist.twist.linear, msg.twist.twist.angular
        row = [robot, msg.header.stamp.to_nsec(), msg.header.frame_id, msg.child_frame_id]
        row += [p.x, p.y, p.z, q.x, q.y, q.z, q.w, v.x, v.y, v.z, w.x, w.y, w.z]
        received["odom"].append(row)

    return callback


rospy.init_node("truth_listener", disable_signals=True)
rospy.Subscriber("/tf", TFMessage, on_tf, queue_size=1000)
ns = {name: f"/{name}/" if len(robots) > 1 else "/" for name in robots}  # as the bridge names
for name in robots:
    rospy.Subscriber(f"{ns[name]}odom", Odometry, on_odom(name), queue_size=1000)
publishers = [rospy.Publisher(f"{ns[name]}cmd_vel", Twist, queue_size=10) for name in mobile]
command = Twist()
command.linear.x, command.linear.z, command.angular.z = float(sys.argv[5]), 0.1, 0.4
answered, last_sent, deadline = set(), 0.0, time.monotonic() + 90
while time.monotonic() < deadline:
    time.sleep(0.002)
    stamps = {row[1] for row in received["odom"] if row[0] == robots[0]}
    if len(stamps) >= steps:
        break
    fresh = stamps - answered
    if fresh or (stamps and time.monotonic() - last_sent > 0.3):
        answered |= fresh
        for publisher in publishers:
            publisher.publish(command)
        last_sent = time.monotonic()
time.sleep(0.5)
with open(out, "w") as f:
    json.dump(received, f)
