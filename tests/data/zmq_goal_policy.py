"""A navbench policy over ZeroMQ (run by the venv's python): steer straight at the goal.

argv: endpoint goal_x goal_y. It checks that the goal of its arguments is the `task` field of
the replies, drives an omni base at up to 0.6 m/s towards it until a reply says done, and prints
what the last reply's task said."""

import math
import sys

from twinsim.closedloop.client import TwinsimClient

endpoint, goal = sys.argv[1], [float(sys.argv[2]), float(sys.argv[3])]
with TwinsimClient(endpoint, timeout_s=60) as client:
    hello = client.hello()
    (robot,) = hello["robots"]
    obs = client.reset()
    if client.task["goal"] != goal:
        sys.exit(f"the task's goal {client.task['goal']} is not the argument's {goal}")
    while not obs.done:
        T = obs.robots[robot].T_world_body
        ex, ey = goal[0] - T[0, 3], goal[1] - T[1, 3]
        yaw = math.atan2(T[1, 0], T[0, 0])
        scale = min(0.6, math.hypot(ex, ey)) / max(math.hypot(ex, ey), 1e-9)
        vx = scale * (math.cos(yaw) * ex + math.sin(yaw) * ey)
        vy = scale * (-math.sin(yaw) * ex + math.cos(yaw) * ey)
        obs = client.step({"velocity": {"vx": vx, "vy": vy, "wz": 0.0}})
    print(
        f"protocol {hello['protocol']}.{hello['protocol_minor']}, steps {obs.step}, "
        f"success {client.task['success']}, left {client.task['distance_to_goal']:.3f} m"
    )
