"""Every plug-in registry of twinsim, and the named defaults, in one module of the foundation.

A registry holds the entries of one family (robot kinds, sensor kinds, world generators,
navigators, export formats, benchmark methods); its built-in entries are registered by the
module it names, imported on the first look-up, and installed packages add theirs through its
entry-point group. Keeping the registries here, apart from what they hold, lets any layer look
a kind up by name (the engine builds a robot's body, a sequence's reader checks its kind)
without importing the package that implements it: the floors of `docs/architecture.md` hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from twinsim.plugins import Registry, keyed_config

if TYPE_CHECKING:
    from collections.abc import Callable

    from twinsim.eval.methods.base import Method
    from twinsim.export.registry import ExportFormat
    from twinsim.navigation.api import NavigatorEntry
    from twinsim.navigation.external import PolicyProtocol
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

#: every family by the name `twinsim plugins` shows it under (its group is `twinsim.<family>`)
FAMILIES: dict[str, Registry[Any]] = {
    "robots": ROBOTS,
    "sensors": SENSORS,
    "generators": GENERATORS,
    "navigators": NAVIGATORS,
    "policy_protocols": POLICY_PROTOCOLS,
    "exports": FORMATS,
    "methods": METHODS,
}

#: the annotation of one `sensors:` entry: its `kind` picks the kind's config model
SENSOR_CONFIG = keyed_config(SENSORS, "kind", None)

#: the name of the robot of a one-robot config (`robot:`); its streams keep their plain names
DEFAULT_ROBOT = "robot"
#: the kind of a robot whose config names none (and of a sequence whose metadata names none)
DEFAULT_ROBOT_KIND = "drone"
#: the world generator of a config whose `scene` names none
DEFAULT_GENERATOR = "apartment"
