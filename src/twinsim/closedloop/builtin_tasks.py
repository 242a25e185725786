"""Registers the built-in closed-loop tasks (one line per task)."""

from __future__ import annotations

from twinsim.closedloop.exploration import ExplorationConfig, ExplorationTask
from twinsim.closedloop.object_goal import ObjectGoalConfig, ObjectGoalTask
from twinsim.closedloop.tasks import PointGoalConfig, PointGoalTask, TaskEntry
from twinsim.registries import TASKS

TASKS.register(
    PointGoalTask.name,
    TaskEntry(PointGoalTask, PointGoalConfig, "reach a point at a geodesic distance range"),
)
TASKS.register(
    ObjectGoalTask.name,
    TaskEntry(ObjectGoalTask, ObjectGoalConfig, "reach any object of a class (in a room type)"),
)
TASKS.register(
    ExplorationTask.name,
    TaskEntry(ExplorationTask, ExplorationConfig, "see the reachable floor with the first camera"),
)
