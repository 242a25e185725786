"""Registers the built-in navigation and exploration methods (one line per method), the
localizers they may take their pose from, and the ZeroMQ protocol of external policies."""

from __future__ import annotations

from twinsim.closedloop.exploration import ExplorationTask
from twinsim.closedloop.object_goal import ObjectGoalTask
from twinsim.closedloop.tasks import PointGoalTask
from twinsim.navigation.api import NavigatorEntry
from twinsim.navigation.appearance import FloorColourNavigator
from twinsim.navigation.external import PolicyProtocol, ZmqPolicyNavigator
from twinsim.navigation.frontier import FrontierExplorer
from twinsim.navigation.localization import (
    GROUND_TRUTH,
    KissIcpLocalizer,
    LocalizerEntry,
    RgbdOdometryLocalizer,
)
from twinsim.navigation.planner import ShortestPathNavigator
from twinsim.navigation.reactive import ReactiveDepthNavigator
from twinsim.registries import LOCALIZERS, NAVIGATORS, POLICY_PROTOCOLS

NAVIGATORS.register(
    "planner",
    NavigatorEntry(
        ShortestPathNavigator,
        (PointGoalTask.name, ObjectGoalTask.name),
        "shortest path on the ground-truth free space + pure pursuit",
    ),
)
NAVIGATORS.register(
    "reactive_depth",
    NavigatorEntry(
        ReactiveDepthNavigator,
        (PointGoalTask.name, ObjectGoalTask.name),
        "depth-only obstacle avoidance towards the goal's bearing, no map",
    ),
)
NAVIGATORS.register(
    "floor_colour",
    NavigatorEntry(
        FloorColourNavigator,
        (PointGoalTask.name, ObjectGoalTask.name),
        "colour-only obstacle avoidance (the floor's look learnt each frame) towards the goal",
    ),
)
NAVIGATORS.register(
    "frontier",
    NavigatorEntry(
        FrontierExplorer, (ExplorationTask.name,), "nearest frontier on its own depth map"
    ),
)
LOCALIZERS.register(
    GROUND_TRUTH, LocalizerEntry(lambda: None, "", "the simulator's ground-truth pose")
)
LOCALIZERS.register(
    "rgbd_odometry",
    LocalizerEntry(RgbdOdometryLocalizer, "camera", "dense RGB-D odometry (OpenCV) on the camera"),
)
LOCALIZERS.register(
    "kiss_icp", LocalizerEntry(KissIcpLocalizer, "lidar", "KISS-ICP LiDAR odometry on the LiDAR")
)
POLICY_PROTOCOLS.register("zmq", PolicyProtocol(("endpoint",), ZmqPolicyNavigator))
