"""Exploration task of closed-loop episodes: see as much of the reachable floor as possible.

At reset, the task takes the world's ground-truth free space for the robot's centre (as
`PointGoalTask` builds it) and keeps the cells reachable from the start. Each step, every frame
of the robot's first camera marks the reachable cells it saw: a cell counts as seen when its
floor point lies within `sense_range_m` of the camera (in the plane), projects into the image,
and the depth pixel it lands on either hit the floor or saw nothing nearer than the cell (the
floor point is not occluded). Coverage is the seen fraction of the reachable cells.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import Field, model_validator

from twinsim.closedloop.metrics import Metric, make_metrics
from twinsim.closedloop.observations import Observations, RobotObservations, first_camera
from twinsim.closedloop.tasks import (
    GeodesicGrid,
    PointGoalConfig,
    PointGoalTask,
    TaskError,
    body_yaw,
)
from twinsim.configmodel import ConfigModel
from twinsim.sensors.camera import intrinsics
from twinsim.sequence.frames import CameraFrame

FLOOR_TOLERANCE_M = 0.03  # a depth pixel whose world point is this close to the floor saw floor
DEPTH_TOLERANCE = 0.05  # relative: a pixel this much nearer than the cell's point occludes it


class ExplorationConfig(ConfigModel):
    """An exploration task: how far the camera senses, the coverage that ends the episode
    (1.0: run the whole time budget), and the robot's extent on the free space."""

    sense_range_m: float = Field(4.0, gt=0.0)
    target_coverage: float = Field(1.0, gt=0.0, le=1.0)
    clearance_margin_m: float = Field(0.05, ge=0.0)
    band_m: tuple[float, float] = (0.05, 0.9)
    cell_m: float = Field(0.05, gt=0.0)

    @model_validator(mode="after")
    def _ordered(self) -> ExplorationConfig:
        if not 0.0 <= self.band_m[0] < self.band_m[1]:
            raise ValueError("band_m: (low, high) with 0 <= low < high")
        return self


@dataclass(frozen=True)
class ExplorationInfo:
    """An exploration task's state after a step: times, the robot's pose, the coverage of the
    reachable floor (a fraction, and in m²) and whether it reached the target."""

    t_ns: int
    t_s: float
    position: np.ndarray  # world x, y, z
    yaw: float
    coverage: float
    covered_m2: float
    free_m2: float
    success: bool


class Coverage:
    """Seen fraction of the reachable floor and its area (m²)."""

    name, columns = "coverage", ("coverage", "covered_m2")

    def __init__(self) -> None:
        self.coverage, self.covered_m2 = 0.0, 0.0

    def update(self, obs: RobotObservations, info: ExplorationInfo) -> None:
        self.coverage, self.covered_m2 = info.coverage, info.covered_m2

    @property
    def value(self) -> tuple[float, ...]:
        return (self.coverage, self.covered_m2)

    def summary(self) -> dict:
        return {"coverage": self.coverage, "covered_m2": self.covered_m2}


class ExplorationTask:
    """See the robot's reachable free floor with its first camera; success at
    `target_coverage`."""

    name = "exploration"
    #: the registered metrics that score it (`metrics`)
    metric_names: tuple[str, ...] = ("coverage", "path_length", "collisions", "global_pose")

    def __init__(self, config: ExplorationConfig | None = None, robot: str | None = None) -> None:
        self.config = config or ExplorationConfig()
        self.robot = robot
        self.camera: str | None = None
        self.K: np.ndarray | None = None
        self.cells_xy: np.ndarray | None = None  # reachable cell centres (N, 2)
        self.seen: np.ndarray | None = None  # (N,) bool

    def reset(self, session, obs: Observations, rng: np.random.Generator) -> None:
        """Take the reachable free floor from the start in `obs`; nothing is drawn."""
        self.robot = self.robot or session.robots[0]
        self.camera, cam = first_camera(session.config, self.robot)
        if self.camera is None:
            raise TaskError(f"exploration needs a camera on robot {self.robot!r}")
        self.K = intrinsics(cam.width, cam.height, cam.hfov_deg)
        spec = next(r for r in session.scene.robots if r.name == self.robot)
        c = self.config
        goal_config = PointGoalConfig(
            clearance_margin_m=c.clearance_margin_m, band_m=c.band_m, cell_m=c.cell_m
        )
        grid = GeodesicGrid(PointGoalTask(goal_config)._free_space(session.scene, spec))
        from_start, _ = grid.distances(obs.robots[self.robot].T_world_body[:2, 3])
        self.cells_xy = grid.xy(np.flatnonzero(np.isfinite(from_start)))
        self.seen = np.zeros(len(self.cells_xy), dtype=bool)
        self._cell_m2 = c.cell_m**2
        self._t0_ns = obs.t_ns

    def step(self, obs: Observations) -> ExplorationInfo:
        """Mark what this step's frames saw; the task's state at the end of the step."""
        if self.seen is None:
            raise TaskError("the task is not reset: call reset(session, obs, rng) first")
        robot = obs.robots[self.robot]
        for frame in robot.frames.get(self.camera) or []:
            self.seen |= self.visible(frame)
        T = robot.T_world_body
        coverage = float(self.seen.mean())
        return ExplorationInfo(
            t_ns=obs.t_ns,
            t_s=(obs.t_ns - self._t0_ns) / 1e9,
            position=T[:3, 3].copy(),
            yaw=body_yaw(T),
            coverage=coverage,
            covered_m2=float(self.seen.sum()) * self._cell_m2,
            free_m2=self.free_m2,
            success=coverage >= self.config.target_coverage,
        )

    @property
    def free_m2(self) -> float:
        """Area of the reachable free floor (m²)."""
        return len(self.cells_xy) * self._cell_m2

    def visible(self, frame: CameraFrame) -> np.ndarray:
        """Which reachable cells (N,) bool the frame's depth image saw within the range."""
        T = frame.T_world_cam
        near = np.linalg.norm(self.cells_xy - T[:2, 3], axis=1) <= self.config.sense_range_m
        idx = np.flatnonzero(near)
        floor = np.column_stack([self.cells_xy[idx], np.zeros(len(idx))])
        p = (floor - T[:3, 3]) @ T[:3, :3]  # camera frame
        z = p[:, 2]
        ahead = z > 1e-6
        h, w = frame.depth.shape
        u = np.rint(self.K[0, 0] * p[:, 0] / np.where(ahead, z, 1.0) + self.K[0, 2])
        v = np.rint(self.K[1, 1] * p[:, 1] / np.where(ahead, z, 1.0) + self.K[1, 2])
        inside = ahead & (u >= 0) & (u < w) & (v >= 0) & (v < h)
        ui, vi = u[inside].astype(int), v[inside].astype(int)
        d = frame.depth[vi, ui].astype(float)
        ray = np.column_stack(
            [
                (ui - self.K[0, 2]) / self.K[0, 0],
                (vi - self.K[1, 2]) / self.K[1, 1],
                np.ones(len(ui)),
            ]
        )
        hit_z = T[2, 3] + d * (ray @ T[2, :3])
        ok = (d > 0) & (
            (np.abs(hit_z) <= FLOOR_TOLERANCE_M) | (d >= z[inside] * (1 - DEPTH_TOLERANCE))
        )
        out = np.zeros(len(self.cells_xy), dtype=bool)
        out[idx[np.flatnonzero(inside)[ok]]] = True
        return out

    def metrics(self, grace_s: float = 1.0) -> list[Metric]:
        """Coverage, path length, collisions and the global pose (`metric_names`)."""
        return make_metrics(self.metric_names, grace_s)

    def finished(self, info: ExplorationInfo) -> bool:
        """The episode ends once the target coverage is reached."""
        return info.success
