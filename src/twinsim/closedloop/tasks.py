"""Navigation tasks of closed-loop episodes: what the robot is asked to reach and how far it is.

A task is reset once per episode, after `Session.reset` (`reset(session, obs, rng)` → the goal),
and stepped with every step's observations (`step(obs)` → `TaskInfo`). `PointGoalTask` draws a
goal on the world's ground-truth free space for the robot's footprint, at a geodesic distance
in a range from the start, and reports the geodesic distance left (the shortest path on the
free space), which the metrics (`twinsim.closedloop.metrics`) and the gymnasium reward use.

Tasks are registered by name in `twinsim.registries.TASKS` (`TaskEntry`: the built-ins
`pointgoal`, `objectgoal` and `exploration` in `closedloop/builtin_tasks.py`, others through the
entry-point group `twinsim.tasks`); `make_task(name, config, robot)` makes one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, ValidationError, model_validator
from scipy import ndimage
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from twinsim.closedloop.metrics import Metric, make_metrics
from twinsim.closedloop.observations import Observations
from twinsim.configmodel import ConfigModel, format_validation_error
from twinsim.errors import ConfigError, TwinsimError
from twinsim.registries import DEFAULT_METRICS, DEFAULT_TASK, TASKS
from twinsim.scene.free_space import FreeSpace, build_free_space, floor_region

#: spawn key of the task's random stream, apart from the world's streams of the same seed
_TASK_STREAM = 0x7A5C
_WORLD_REDRAW = 0x7A5D  # spawn key of the worlds tried after an episode seed's own
WORLD_REDRAWS = 4  # worlds tried after an episode seed's own leaves its task no goal
_SEED_BOUND = 2**31 - 1
_NEIGHBOURS = ((0, 1), (1, 0), (1, 1), (1, -1))


class TaskError(TwinsimError):
    """A task cannot be set up in this world (no goal in range, no free space for the robot)."""


def task_rng(seed: int) -> np.random.Generator:
    """The task's generator for an episode `seed`: its own stream, independent of the world's."""
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(_TASK_STREAM,)))


def episode_seeds(seed: int) -> list[int]:
    """The world seeds an episode of `seed` tries in order until its task fits: `seed`, then
    `WORLD_REDRAWS` seeds derived from it (the same for the same seed)."""
    derived = [
        int(np.random.SeedSequence(int(seed), spawn_key=(_WORLD_REDRAW, k)).generate_state(1)[0])
        % _SEED_BOUND
        for k in range(1, WORLD_REDRAWS + 1)
    ]
    return [int(seed), *derived]


class PointGoalConfig(ConfigModel):
    """A point-goal task: the goal's geodesic distance range from the start, the success
    radius, and the robot's extent on the free space (footprint + margin, height band)."""

    min_distance_m: float = Field(1.5, gt=0.0)
    max_distance_m: float = Field(4.0, gt=0.0)
    success_radius_m: float = Field(0.3, gt=0.0)
    clearance_margin_m: float = Field(0.05, ge=0.0)
    band_m: tuple[float, float] = (0.05, 0.9)  # obstacles between these heights block the robot
    cell_m: float = Field(0.05, gt=0.0)

    @model_validator(mode="after")
    def _ordered(self) -> PointGoalConfig:
        if self.min_distance_m > self.max_distance_m:
            raise ValueError("min_distance_m must not exceed max_distance_m")
        if not 0.0 <= self.band_m[0] < self.band_m[1]:
            raise ValueError("band_m: (low, high) with 0 <= low < high")
        return self


@dataclass(frozen=True)
class TaskInfo:
    """A task's state after a step: times (`t_ns` the sim clock, `t_s` since the task's reset),
    the robot's pose, the goal, distances left (geodesic and straight) and the shortest path
    length from the start (`geodesic_start_m`, SPL's l); `success`: within the success radius."""

    t_ns: int
    t_s: float
    position: np.ndarray  # world x, y, z
    yaw: float
    goal: np.ndarray  # world x, y
    distance_to_goal: float
    euclidean_to_goal: float
    geodesic_start_m: float
    success: bool


def body_yaw(T_world_body: np.ndarray) -> float:
    """Heading (rad) of a body pose about the world z axis."""
    return math.atan2(T_world_body[1, 0], T_world_body[0, 0])


def _grid_graph(mask: np.ndarray, cell_m: float) -> tuple[csr_matrix, np.ndarray]:
    """The free cells of `mask` as an 8-connected graph with metric edge lengths, and the flat
    index of each node's cell."""
    cells = np.flatnonzero(mask)
    ids = np.full(mask.shape, -1)
    ids.ravel()[cells] = np.arange(len(cells))
    ny, nx = mask.shape
    src, dst, cost = [], [], []
    for dy, dx in _NEIGHBOURS:
        a = ids[: ny - dy, max(0, -dx) : nx - max(0, dx)].ravel()
        b = ids[dy:, max(0, dx) : nx - max(0, -dx)].ravel()
        keep = (a >= 0) & (b >= 0)
        src.append(a[keep])
        dst.append(b[keep])
        cost.append(np.full(int(keep.sum()), math.hypot(dy, dx) * cell_m))
    n = len(cells)
    edges = (np.concatenate(cost), (np.concatenate(src), np.concatenate(dst)))
    return csr_matrix(edges, shape=(n, n)), cells


class GeodesicGrid:
    """Shortest paths over the free space of a footprint: grid cells whose (conservative)
    clearance admits the robot's centre, 8-connected; points off it snap to the nearest one."""

    def __init__(self, free_space: FreeSpace) -> None:
        self.fs = free_space
        mask = free_space.grid_clearance >= free_space.clearance_m
        if not mask.any():
            raise TaskError(f"no free space for a robot keeping {free_space.clearance_m:.2f} m")
        self.graph, self.cells = _grid_graph(mask, free_space.cell_m)
        self.node_of_cell = np.full(mask.size, -1)
        self.node_of_cell[self.cells] = np.arange(len(self.cells))
        _, nearest = ndimage.distance_transform_edt(~mask, return_indices=True)
        self._nearest_cell = np.ravel_multi_index(tuple(nearest), mask.shape).ravel()

    def node(self, xy: np.ndarray) -> int:
        """The graph node nearest to xy (clipped onto the grid)."""
        ix, iy = np.floor((np.asarray(xy) - self.fs.origin) / self.fs.cell_m).astype(int)
        iy, ix = np.clip(iy, 0, self.fs.shape[0] - 1), np.clip(ix, 0, self.fs.shape[1] - 1)
        cell = self._nearest_cell[np.ravel_multi_index((iy, ix), self.fs.shape)]
        return int(self.node_of_cell[cell])

    def xy(self, nodes: np.ndarray) -> np.ndarray:
        """Centres (N, 2) of graph nodes."""
        return self.fs.cell_xy(self.cells[np.asarray(nodes)])

    def distances(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Grid path lengths from xy to every node (inf where unreachable) and predecessors."""
        return dijkstra(self.graph, directed=False, indices=self.node(xy), return_predecessors=True)

    def pulled(self, points: np.ndarray) -> np.ndarray:
        """A grid path shortened by line of sight: from each kept point, the farthest later one
        reachable by a straight segment that keeps the clearance."""
        out, i = [points[0]], 0
        while i < len(points) - 1:
            clear = self.fs.segments_clear(points[i], points[i + 1 :], self.fs.clearance_m)
            i += int(np.flatnonzero(clear)[-1]) + 1 if clear.any() else 1
            out.append(points[i])
        return np.array(out)


class PointGoalTask:
    """Reach a point: a goal drawn on the free space at a geodesic distance in
    [`min_distance_m`, `max_distance_m`] of the start; success within `success_radius_m`."""

    name = "pointgoal"
    #: the registered metrics that score it (`metrics`)
    metric_names: tuple[str, ...] = DEFAULT_METRICS

    def __init__(self, config: PointGoalConfig | None = None, robot: str | None = None) -> None:
        self.config = config or PointGoalConfig()
        self.robot = robot
        self.grid: GeodesicGrid | None = None
        self.goal: np.ndarray | None = None
        self.path: np.ndarray | None = None  # shortest path start → goal, (N, 2)
        self.geodesic_m = math.nan

    def reset(self, session, obs: Observations, rng: np.random.Generator) -> np.ndarray:
        """Draw this episode's goal from the start in `obs` (the first observations after
        `session.reset`); returns its world x, y."""
        self.robot = self.robot or session.robots[0]
        spec = next(r for r in session.scene.robots if r.name == self.robot)
        self.grid = GeodesicGrid(self._free_space(session.scene, spec))
        start = obs.robots[self.robot].T_world_body[:2, 3].copy()
        from_start, _ = self.grid.distances(start)
        self.goal = self._draw_goal(from_start, rng)
        self._to_goal, pred = self.grid.distances(self.goal)
        nodes = [self.grid.node(start)]
        while nodes[-1] != self.grid.node(self.goal):
            nodes.append(int(pred[nodes[-1]]))
        points = np.vstack([start, self.grid.xy(nodes), self.goal])
        self.path = self.grid.pulled(points)
        self.geodesic_m = float(np.linalg.norm(np.diff(self.path, axis=0), axis=1).sum())
        self._t0_ns = obs.t_ns
        return self.goal.copy()

    def step(self, obs: Observations) -> TaskInfo:
        """The task's state at the end of a step."""
        if self.goal is None:
            raise TaskError("the task has no goal: call reset(session, obs, rng) first")
        T = obs.robots[self.robot].T_world_body
        xy = T[:2, 3]
        straight = float(np.linalg.norm(self.goal - xy))
        return TaskInfo(
            t_ns=obs.t_ns,
            t_s=(obs.t_ns - self._t0_ns) / 1e9,
            position=T[:3, 3].copy(),
            yaw=body_yaw(T),
            goal=self.goal.copy(),
            distance_to_goal=self.distance_to_goal(xy),
            euclidean_to_goal=straight,
            geodesic_start_m=self.geodesic_m,
            success=straight <= self.config.success_radius_m,
        )

    def metrics(self, grace_s: float = 1.0) -> list[Metric]:
        """The metrics that score it (`metric_names`): URL's defaults plus path length,
        success, SPL and SC."""
        return make_metrics(self.metric_names, grace_s)

    def finished(self, info: TaskInfo) -> bool:
        """The episode ends once the goal is reached."""
        return info.success

    def distance_to_goal(self, xy: np.ndarray) -> float:
        """Geodesic distance from xy to the goal: straight where the segment is clear, else
        along the grid from the nearest free cell (an over-estimate of at most ~8%)."""
        straight = float(np.linalg.norm(self.goal - xy))
        if self.grid.fs.segments_clear(xy, self.goal, self.grid.fs.clearance_m)[0]:
            return straight
        node = self.grid.node(xy)
        return float(self._to_goal[node] + np.linalg.norm(self.grid.xy(node) - xy))

    def _free_space(self, scene, spec) -> FreeSpace:
        """The free space of the robot's centre: obstacles in the height band, kept at its
        footprint radius plus the margin."""
        radius = spec.footprint_radius()
        low, high = self.config.band_m
        return build_free_space(
            floor_region(scene),
            scene.objects,
            flight_height_m=0.5 * (low + high),
            clearance_m=radius + self.config.clearance_margin_m,
            clearance_z_m=0.5 * (high - low),
            cell_m=self.config.cell_m,
        )

    def _draw_goal(self, from_start: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A free cell centre at a grid distance in range from the start, drawn by `rng`."""
        lo, hi = self.config.min_distance_m, self.config.max_distance_m
        pool = np.flatnonzero((from_start >= lo) & (from_start <= hi))
        if not len(pool):
            reach = float(from_start[np.isfinite(from_start)].max())
            raise TaskError(
                f"no goal {lo}..{hi} m from the start; the farthest reachable point is "
                f"{reach:.2f} m away"
            )
        return self.grid.xy(int(rng.choice(pool)))


@dataclass(frozen=True)
class TaskEntry:
    """A registered task: its factory (`factory(config, robot)`, `config` an instance of
    `config_model` or None for its defaults, `robot` None for the session's first) and a line
    saying what it asks of the robot."""

    factory: Callable[..., Any]
    config_model: type[BaseModel]
    summary: str

    def config(self, name: str, config: BaseModel | Mapping[str, Any] | None) -> BaseModel | None:
        """`config` as this task's model: a mapping is validated (one line if wrong), a model
        of another task's kind refused."""
        if config is None or isinstance(config, self.config_model):
            return config
        if isinstance(config, BaseModel):
            raise ConfigError(
                f"task {name!r}: settings of type {self.config_model.__name__}, "
                f"got {type(config).__name__}"
            )
        if not isinstance(config, Mapping):
            raise ConfigError(f"task {name!r}: its settings are a mapping, got {config!r}")
        try:
            return self.config_model.model_validate(dict(config))
        except ValidationError as exc:
            message = format_validation_error(exc, self.config_model, dict(config))
            raise ConfigError(f"task {name!r}: {message}") from None


def make_task(
    name: str = DEFAULT_TASK,
    config: BaseModel | Mapping[str, Any] | None = None,
    robot: str | None = None,
):
    """A fresh task of the registered `name` with `config` (its model, or a mapping of its
    fields), for `robot`; an unknown name fails listing the registered tasks."""
    entry = TASKS.get(name)
    return entry.factory(entry.config(name, config), robot)
