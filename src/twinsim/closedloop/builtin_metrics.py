"""Registers the built-in closed-loop metrics (one line per metric)."""

from __future__ import annotations

from twinsim.closedloop.exploration import Coverage
from twinsim.closedloop.metrics import (
    SPL,
    Collisions,
    DistanceToGoal,
    GlobalPose,
    MetricEntry,
    PathLength,
    SoftCollisionSuccess,
    Success,
    TimeToGoal,
)
from twinsim.registries import METRICS

METRICS.register(
    "distance_to_goal", MetricEntry(lambda c: DistanceToGoal(), "geodesic distance left (m)")
)
METRICS.register(
    "time_to_goal", MetricEntry(lambda c: TimeToGoal(), "seconds to the first step within reach")
)
METRICS.register("success", MetricEntry(lambda c: Success(), "1 from the first step within reach"))
METRICS.register(
    "path_length", MetricEntry(lambda c: PathLength(), "planar distance travelled until success")
)
METRICS.register(
    "collisions",
    MetricEntry(lambda c: Collisions(c.grace_s), "new non-floor contacts after the grace"),
)
METRICS.register("global_pose", MetricEntry(lambda c: GlobalPose(), "ground-truth x, y, z, yaw"))
METRICS.register(
    "spl",
    MetricEntry(
        lambda c: SPL(c.need("success"), c.need("path_length")),
        "success weighted by path length",
    ),
)
METRICS.register(
    "sc",
    MetricEntry(
        lambda c: SoftCollisionSuccess(c.need("success"), c.need("collisions")),
        "success discounted by collisions",
    ),
)
METRICS.register(
    "coverage", MetricEntry(lambda c: Coverage(), "seen fraction and area of the reachable floor")
)
