"""A navbench policy over ROS 1 (run by /usr/bin/python3): steer straight at the goal.

It takes the goal from the latched /move_base_simple/goal and answers every /odom with a
/cmd_vel towards it (an omni base, at most 0.6 m/s), until navbench ends it."""

import math

import rospy
from geometry_msgs.msg import PoseStamped, Twist
from nav_msgs.msg import Odometry

state = {"goal": None}
rospy.init_node("goal_policy", disable_signals=True)
pub = rospy.Publisher("/cmd_vel", Twist, queue_size=10)


def on_goal(msg):
    state["goal"] = (msg.pose.position.x, msg.pose.position.y)
    print(f"goal {state['goal']} in {msg.header.frame_id}", flush=True)


def on_odom(msg):
    if state["goal"] is None:
        return
    p, q = msg.pose.pose.position, msg.pose.pose.orientation
    ex, ey = state["goal"][0] - p.x, state["goal"][1] - p.y
    yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
    scale = min(0.6, math.hypot(ex, ey)) / max(math.hypot(ex, ey), 1e-9)
    cmd = Twist()
    cmd.linear.x = scale * (math.cos(yaw) * ex + math.sin(yaw) * ey)
    cmd.linear.y = scale * (-math.sin(yaw) * ex + math.cos(yaw) * ey)
    pub.publish(cmd)


rospy.Subscriber("/move_base_simple/goal", PoseStamped, on_goal)
rospy.Subscriber("/odom", Odometry, on_odom, queue_size=10)
try:
    while not rospy.is_shutdown():
        rospy.rostime.wallsleep(0.1)
except KeyboardInterrupt:  # navbench ends it with SIGINT when the trial is over
    pass
