"""Navigation metrics of closed-loop episodes (Unreal Robotics Lab's metric manager).

A `MetricManager` updates its metrics with each step's robot observations and the task's
`TaskInfo`, keeps every metric's time series, and writes them with a summary. A metric is any
object with a `name`, its `columns`, `update(obs, info)`, a `value` (one float per column) and a
`summary()`. Metrics are registered by name in `twinsim.registries.METRICS` (the built-ins in
`closedloop/builtin_metrics.py`, others through the entry-point group `twinsim.metrics`), and
`make_metrics(names, grace_s)` makes a set of them, each metric another one reads (SPL reads
Success and PathLength) made once, before it. The defaults (`DEFAULT_METRICS`):
DistanceToGoal, TimeToGoal, Success, PathLength, Collisions, GlobalPose,
SPL = S·l/max(p, l) and SC = S/(1 + collisions).

Files: a closed sequence lists every file it holds in `checksums.csv`, and `validate` reports
any file it does not list, so the metrics go beside the episode, in `<episode>.metrics/`
(`metrics_dir`): one `<metric>.csv` per metric (`t_ns` then its columns) and `summary.json`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from twinsim.atomic import write_text_atomic
from twinsim.closedloop.observations import RobotObservations
from twinsim.errors import ConfigError
from twinsim.registries import DEFAULT_METRICS, METRICS
from twinsim.scene.vocabulary import class_id
from twinsim.sequence.contacts import NO_PART

if TYPE_CHECKING:
    from twinsim.closedloop.tasks import TaskInfo

CONTACTS_STREAM = "contacts"


class Metric(Protocol):
    """One metric: updated every step, its value a row of floats, its summary JSON-ready."""

    name: str
    columns: tuple[str, ...]

    def update(self, obs: RobotObservations, info: TaskInfo) -> None: ...

    @property
    def value(self) -> tuple[float, ...]: ...

    def summary(self) -> float | dict | None: ...


class DistanceToGoal:
    """Geodesic distance left to the goal (m)."""

    name, columns = "distance_to_goal", ("distance_m",)

    def __init__(self) -> None:
        self.distance = math.nan

    def update(self, obs: RobotObservations, info: TaskInfo) -> None:
        self.distance = info.distance_to_goal

    @property
    def value(self) -> tuple[float, ...]:
        return (self.distance,)

    def summary(self) -> float:
        return self.distance


class Success:
    """1 from the first step within the success radius on (the goal counts once reached)."""

    name, columns = "success", ("success",)

    def __init__(self) -> None:
        self.reached = False

    def update(self, obs: RobotObservations, info: TaskInfo) -> None:
        self.reached = self.reached or info.success

    @property
    def value(self) -> tuple[float, ...]:
        return (float(self.reached),)

    def summary(self) -> float:
        return float(self.reached)


class TimeToGoal:
    """Seconds from the task's start to the first step within the success radius (nan before;
    None in the summary when never reached)."""

    name, columns = "time_to_goal", ("time_s",)

    def __init__(self) -> None:
        self.time_s = math.nan

    def update(self, obs: RobotObservations, info: TaskInfo) -> None:
        if info.success and math.isnan(self.time_s):
            self.time_s = info.t_s

    @property
    def value(self) -> tuple[float, ...]:
        return (self.time_s,)

    def summary(self) -> float | None:
        return None if math.isnan(self.time_s) else self.time_s


class PathLength:
    """Distance the robot travelled in the plane (m), up to the step that reached the goal."""

    name, columns = "path_length", ("length_m",)

    def __init__(self) -> None:
        self.length = 0.0
        self.reached = False
        self._last: np.ndarray | None = None

    def update(self, obs: RobotObservations, info: TaskInfo) -> None:
        xy = info.position[:2]
        if self._last is not None and not self.reached:
            self.length += float(np.linalg.norm(xy - self._last))
        self.reached = self.reached or info.success
        self._last = xy.copy()

    @property
    def value(self) -> tuple[float, ...]:
        return (self.length,)

    def summary(self) -> float:
        return self.length


class Collisions:
    """Collisions: a new one each step the robot touches something other than the floor (or
    itself) after a step without such contact; those in the first `grace_s` are not counted."""

    name, columns = "collisions", ("count", "in_contact")

    def __init__(self, grace_s: float = 1.0, ignored: Sequence[str] = ("floor",)) -> None:
        self.grace_s = grace_s
        self.ignored = np.array([class_id(c) for c in ignored], dtype=np.uint16)
        self.count = 0
        self.in_contact = False

    def update(self, obs: RobotObservations, info: TaskInfo) -> None:
        records = obs.contacts.get(CONTACTS_STREAM)
        touching = records is not None and bool(
            np.any((records["other_part"] == NO_PART) & ~np.isin(records["semantic"], self.ignored))
        )
        if touching and not self.in_contact and info.t_s >= self.grace_s:
            self.count += 1
        self.in_contact = touching

    @property
    def value(self) -> tuple[float, ...]:
        return (float(self.count), float(self.in_contact))

    def summary(self) -> int:
        return self.count


class GlobalPose:
    """The robot's ground-truth pose: world x, y, z (m) and yaw (rad)."""

    name, columns = "global_pose", ("x", "y", "z", "yaw")

    def __init__(self) -> None:
        self.pose = (math.nan,) * 4

    def update(self, obs: RobotObservations, info: TaskInfo) -> None:
        self.pose = (*(float(v) for v in info.position), info.yaw)

    @property
    def value(self) -> tuple[float, ...]:
        return self.pose

    def summary(self) -> dict:
        return dict(zip(self.columns, self.pose, strict=True))


class SPL:
    """Success weighted by path length: S · l / max(p, l), l the shortest path from the start,
    p the path travelled."""

    name, columns = "spl", ("spl",)

    def __init__(self, success: Success, path: PathLength) -> None:
        self.success, self.path = success, path
        self.shortest = math.nan

    def update(self, obs: RobotObservations, info: TaskInfo) -> None:
        self.shortest = info.geodesic_start_m

    @property
    def value(self) -> tuple[float, ...]:
        if not self.success.reached:
            return (0.0,)
        return (self.shortest / max(self.path.length, self.shortest),)

    def summary(self) -> float:
        return self.value[0]


class SoftCollisionSuccess:
    """SC = S / (1 + collisions): success discounted by every collision."""

    name, columns = "sc", ("sc",)

    def __init__(self, success: Success, collisions: Collisions) -> None:
        self.success, self.collisions = success, collisions

    def update(self, obs: RobotObservations, info: TaskInfo) -> None:
        """Nothing of its own: it combines Success and Collisions."""

    @property
    def value(self) -> tuple[float, ...]:
        return (float(self.success.reached) / (1 + self.collisions.count),)

    def summary(self) -> float:
        return self.value[0]


@dataclass
class MetricContext:
    """What a metric's factory gets: the collision grace (s) and `need(name)`, the metric
    `name` of the same set (made first where not made yet), for a metric that reads another."""

    grace_s: float
    _need: Callable[[str], Metric] = field(repr=False)

    def need(self, name: str) -> Metric:
        return self._need(name)


@dataclass(frozen=True)
class MetricEntry:
    """A registered metric: its factory (`MetricContext` → a fresh metric whose `name` is the
    one it is registered as) and a line saying what it measures."""

    factory: Callable[[MetricContext], Metric]
    summary: str


def make_metrics(names: Sequence[str], grace_s: float = 1.0) -> list[Metric]:
    """Fresh metrics of the registered `names`, each once; a metric another one reads comes
    before it (added where `names` lacks it). An unknown name fails listing the registered."""
    names = list(names)
    if len(set(names)) != len(names):
        raise ConfigError(f"metrics: name each metric once, got {', '.join(names)}")
    made: dict[str, Metric] = {}
    making: list[str] = []

    def need(name: str) -> Metric:
        if name in made:
            return made[name]
        if name in making:
            raise ConfigError(f"metrics: {' → '.join([*making, name])} needs itself")
        entry = METRICS.get(name)
        making.append(name)
        metric = entry.factory(MetricContext(grace_s, need))
        making.pop()
        if metric.name != name:
            raise ConfigError(
                f"metrics: metric {name!r} ({METRICS.origin(name)}) makes a metric named "
                f"{metric.name!r}"
            )
        made[name] = metric
        return metric

    for name in names:
        need(name)
    return list(made.values())


def default_metrics(grace_s: float = 1.0) -> list[Metric]:
    """Unreal Robotics Lab's metrics plus path length, success, SPL and SC (`DEFAULT_METRICS`)."""
    return make_metrics(DEFAULT_METRICS, grace_s)


def metrics_dir(episode_dir: str | Path) -> Path:
    """Where an episode's metrics go: the sibling `<episode>.metrics/` (a closed sequence
    holds only the files its checksums list)."""
    episode = Path(episode_dir)
    return episode.parent / f"{episode.name}.metrics"


def _json_ready(value):
    """NaN and inf as None, so summary.json is strict JSON."""
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _goal_of(info) -> list[float] | None:
    """The goal a task's info names, as a list (None for a task without one: exploration)."""
    goal = getattr(info, "goal", None)
    return None if goal is None else [float(v) for v in goal]


class MetricManager:
    """Updates `metrics` (default: `default_metrics(grace_s)`; names are made by
    `make_metrics`) every step until `timeout_s` (None: no timeout of its own), keeping each
    one's time series."""

    def __init__(
        self,
        metrics: Sequence[Metric | str] | None = None,
        *,
        grace_s: float = 1.0,
        timeout_s: float | None = None,
    ) -> None:
        if metrics is None:
            metrics = DEFAULT_METRICS
        if all(isinstance(m, str) for m in metrics):
            metrics = make_metrics(metrics, grace_s)
        self.metrics = list(metrics)
        names = [m.name for m in self.metrics]
        if len(set(names)) != len(names):
            raise ValueError(f"metrics: names must be unique, got {', '.join(names)}")
        self.timeout_s = timeout_s
        self.timed_out = False
        self.last_info: TaskInfo | None = None
        self._t_ns: list[int] = []
        self._rows: dict[str, list[tuple[float, ...]]] = {m.name: [] for m in self.metrics}

    def __getitem__(self, name: str) -> Metric:
        """The metric called `name`."""
        for metric in self.metrics:
            if metric.name == name:
                return metric
        raise KeyError(f"no metric {name!r}; metrics: {', '.join(self._rows)}")

    def update(self, obs: RobotObservations, info: TaskInfo) -> None:
        """Update every metric with one step (nothing once timed out)."""
        if self.timed_out or (self.timeout_s is not None and info.t_s > self.timeout_s):
            self.timed_out = True
            return
        self.last_info = info
        self._t_ns.append(info.t_ns)
        for metric in self.metrics:
            metric.update(obs, info)
            self._rows[metric.name].append(tuple(metric.value))

    def series(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """A metric's time series: stamps (N,) int64 ns and values (N, columns)."""
        columns = len(self[name].columns)
        rows = np.array(self._rows[name], dtype=float).reshape(-1, columns)
        return np.array(self._t_ns, dtype=np.int64), rows

    def summary(self) -> dict:
        """Every metric's summary, the goal and shortest path, steps and whether it timed out."""
        info = self.last_info
        return _json_ready(
            {
                "metrics": {m.name: m.summary() for m in self.metrics},
                "goal": _goal_of(info),
                "geodesic_start_m": getattr(info, "geodesic_start_m", None),
                "steps": len(self._t_ns),
                "timed_out": self.timed_out,
            }
        )

    def write(self, episode_dir: str | Path) -> Path:
        """Write each metric's series as `<name>.csv` and `summary.json` into
        `metrics_dir(episode_dir)`; returns that folder."""
        out = metrics_dir(episode_dir)
        out.mkdir(parents=True, exist_ok=True)
        for metric in self.metrics:
            t_ns, values = self.series(metric.name)
            lines = [",".join(("t_ns", *metric.columns))]
            lines += [
                ",".join((str(t), *(repr(float(v)) for v in row)))
                for t, row in zip(t_ns, values, strict=True)
            ]
            write_text_atomic(out / f"{metric.name}.csv", "\n".join(lines) + "\n")
        summary = json.dumps(self.summary(), indent=2, allow_nan=False)
        write_text_atomic(out / "summary.json", summary + "\n")
        return out
