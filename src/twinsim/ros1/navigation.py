"""A navbench trial driven by an external ROS 1 policy (docs/navbench.md): a roscore of the
trial's own, the bridge's topics (`Bridge.publish`), the goal latched on
`/move_base_simple/goal`, and `cmd_vel` (or `goal`) as the command, lock-step with /clock.

Imported only for a policy whose YAML says `protocol: ros1`; each trial runs in a process of its
own, so its roscore, its node and rospy's global state end with it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from twinsim.navigation.external import ExternalPolicy, PolicyError, PolicyProcess
from twinsim.ros1.launch import start_roscore, stop

#: where move_base, RViz's "2D Nav Goal" and most ROS 1 navigation stacks take their goal
GOAL_TOPIC = "/move_base_simple/goal"
#: while the policy has sent nothing, the first step is published again this often (s): its
#: subscriptions may connect after the first publication
_REPUBLISH_S = 0.5


class Ros1PolicyNavigator:
    """A `Navigator` whose commands come from a ROS 1 node: each `act` publishes the step and
    waits for the node's next command."""

    def __init__(self, policy: ExternalPolicy, folder: Path, seed: int) -> None:
        self.policy, self.folder, self.seed = policy, folder, seed
        self.timeout_s = policy.spec.timeout_s
        self.core = self.bridge = None
        self.process: PolicyProcess | None = None
        self._first = True

    def reset(self, context) -> None:
        """Start the trial's roscore, the bridge's node and the policy; latch the goal."""
        self.context = context
        self.core, env = start_roscore(self.folder / "ros")
        os.environ.update(env)  # rospy reads the master's address from the environment
        from twinsim.ros1.bridge import Bridge

        self.bridge = Bridge(context.session, timeout_s=self.timeout_s)
        self._latch_goal(context)
        fields = self.policy.fields(
            context, self.folder, self.seed, ros_master_uri=env["ROS_MASTER_URI"]
        )
        self.process = self.policy.start(fields, self.folder / "policy.log", env)

    def _latch_goal(self, context) -> None:
        """The task's goal as a latched PoseStamped in the world frame (yaw 0)."""
        import rospy
        from geometry_msgs.msg import PoseStamped

        self.goal_pub = rospy.Publisher(GOAL_TOPIC, PoseStamped, queue_size=1, latch=True)
        goal = PoseStamped()
        goal.header.frame_id = "world"
        goal.pose.position.x, goal.pose.position.y = (float(v) for v in list(context.goal)[:2])
        goal.pose.orientation.w = 1.0
        self.goal_pub.publish(goal)

    def act(self, obs, info) -> dict:
        """Publish the step and return the policy's next command for its robot."""
        robot = self.context.robot
        self.bridge.publish(obs)
        deadline = last_published = time.monotonic()
        deadline += self.timeout_s
        while True:
            latest = self.bridge.next_command(0.1)
            if latest is not None and robot in latest:
                self._first = False
                return latest[robot]
            if not self.process.alive():
                raise self.process.failure("a command on cmd_vel")
            now = time.monotonic()
            if now > deadline:
                raise PolicyError(
                    f"policy {self.policy.name!r} sent no command within {self.timeout_s:g} s "
                    f"(timeout_s); its output: {self.process.tail()}"
                )
            if self._first and now - last_published > _REPUBLISH_S:
                self.bridge.publish(obs)
                last_published = now

    def close(self) -> None:
        """End the policy, the node and the roscore."""
        try:
            if self.process is not None:
                self.process.stop(grace_s=1.0)
            if self.bridge is not None:
                import rospy

                rospy.signal_shutdown("navbench trial ended")
        finally:
            if self.core is not None:
                stop(self.core)
