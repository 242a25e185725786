"""Every plug-in registry of twinsim, and the named defaults, in one module of the foundation.

A registry holds the entries of one family (robot kinds, sensor kinds, world generators,
navigators, localizers, export formats, benchmark methods, closed-loop tasks and metrics,
noise profiles); its built-in entries are registered by the module it names, imported on the
first look-up, and installed packages add theirs through its entry-point group. Keeping the
registries here, apart from what they hold, lets any layer look a kind up by name (the engine
builds a robot's body, a sequence's reader checks its kind) without importing the package that
implements it: the floors of `docs/architecture.md` hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from twinsim.plugins import Registry, keyed_config

if TYPE_CHECKING:
    from collections.abc import Callable

    from twinsim.closedloop.metrics import MetricEntry
    from twinsim.closedloop.tasks import TaskEntry
    from twinsim.eval.methods.base import Method
    from twinsim.export.registry import ExportFormat
    from twinsim.navigation.api import NavigatorEntry
    from twinsim.navigation.external import PolicyProtocol
    from twinsim.navigation.localization import LocalizerEntry
    from twinsim.noise.profiles import NoiseProfile
    from twinsim.robots.base import Robot
    from twinsim.scene.generators import WorldGenerator
    from twinsim.sensors.base import SensorKind

ROBOTS: Registry[Robot] = Registry(
    "robot kind", "robot.kind", "twinsim.robots.builtin", "twinsim.robots"
)
SENSORS: Registry[SensorKind] = Registry(
    "sensor kind", "sensor type", "twinsim.sensors.builtin", "twinsim.sensors"
)
GENERATORS: Registry[WorldGenerator] = Registry(
    "world generator", "scene.generator", "twinsim.scene.builtin", "twinsim.generators"
)
NAVIGATORS: Registry[NavigatorEntry] = Registry(
    "navigation method", "method", "twinsim.navigation.builtin", "twinsim.navigators"
)
#: where a navigator believes it is: the ground truth or a pose estimator on the live sensor
#: stream (`run_episode(localizer=...)`, `twinsim navbench --localization`)
LOCALIZERS: Registry[LocalizerEntry] = Registry(
    "localizer", "--localization", "twinsim.navigation.builtin", "twinsim.localizers"
)
#: how `twinsim navbench` talks to an external policy, by its YAML's `protocol` (the ROS 1
#: one is registered by `twinsim.ros1`, so navigation never imports the ROS package)
POLICY_PROTOCOLS: Registry[PolicyProtocol] = Registry(
    "policy protocol",
    "protocol",
    ("twinsim.navigation.builtin", "twinsim.ros1.policy_protocol"),
    "twinsim.policy_protocols",
)
#: every export format by name (`export --format`)
FORMATS: Registry[ExportFormat] = Registry(
    "export format", "--format", "twinsim.export.builtin", "twinsim.exports"
)
#: a factory of a fresh benchmark method by name (`twinsim bench --methods`)
METHODS: Registry[Callable[[], Method]] = Registry(
    "benchmark method", "--methods", "twinsim.eval.methods.builtin", "twinsim.methods"
)
#: closed-loop tasks by name (`TwinsimNavEnv(task_name=...)`, `NavBenchSpec.task`)
TASKS: Registry[TaskEntry] = Registry(
    "task", "task", "twinsim.closedloop.builtin_tasks", "twinsim.tasks"
)
#: closed-loop metrics by name (`MetricManager`, `run_episode(metrics=...)`, the gym env)
METRICS: Registry[MetricEntry] = Registry(
    "metric", "metrics", "twinsim.closedloop.builtin_metrics", "twinsim.metrics"
)
#: named sensor noise profiles (`twinsim noise --profile`, a batch plan's `noise.<name>.profile`)
NOISE_PROFILES: Registry[NoiseProfile] = Registry(
    "noise profile", "--profile", "twinsim.noise.builtin", "twinsim.noise_profiles"
)

#: every family by the name `twinsim plugins` shows it under (its group is `twinsim.<family>`)
FAMILIES: dict[str, Registry[Any]] = {
    "robots": ROBOTS,
    "sensors": SENSORS,
    "generators": GENERATORS,
    "navigators": NAVIGATORS,
    "localizers": LOCALIZERS,
    "policy_protocols": POLICY_PROTOCOLS,
    "exports": FORMATS,
    "methods": METHODS,
    "tasks": TASKS,
    "metrics": METRICS,
    "noise_profiles": NOISE_PROFILES,
}

#: the annotation of one `sensors:` entry: its `kind` picks the kind's config model
SENSOR_CONFIG = keyed_config(SENSORS, "kind", None)

#: the name of the robot of a one-robot config (`robot:`); its streams keep their plain names
DEFAULT_ROBOT = "robot"
#: the kind of a robot whose config names none (and of a sequence whose metadata names none)
DEFAULT_ROBOT_KIND = "drone"
#: the world generator of a config whose `scene` names none
DEFAULT_GENERATOR = "apartment"
#: the preset a config starts from when none is named (`twinsim run`, `load_config`, the gym env)
DEFAULT_PRESET = "default"
#: the robot kind driven live where none is named (the gym env, `twinsim navbench --robot`)
DEFAULT_LIVE_ROBOT_KIND = "omni"
#: the worlds `twinsim navbench` runs in where `--worlds` names none
DEFAULT_NAV_WORLDS = ("apartment", "warehouse")
#: the closed-loop task where none is named (the point-goal env, navbench, a policy's `tasks`)
DEFAULT_TASK = "pointgoal"
#: the metrics of a goal task where none are named (URL's, plus path length, success, SPL, SC)
DEFAULT_METRICS = (
    "distance_to_goal",
    "time_to_goal",
    "success",
    "path_length",
    "collisions",
    "global_pose",
    "spl",
    "sc",
)
