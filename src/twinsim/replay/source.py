"""A replay's source: a complete, valid sequence made by a twinsim that can repeat it exactly.

Everything a replay needs is in the folder: the resolved config (metadata), the world
(`scene.json`) and the robot's state and set-points at every recorded physics step
(each robot's `robot_state`, written with `repr` so the floats read back bit for bit).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import version as package_version
from pathlib import Path

import numpy as np

from twinsim._version import __version__
from twinsim.config import TwinsimConfig, validate_config
from twinsim.errors import ConfigError, SequenceError
from twinsim.model.layout import READABLE_FORMAT_VERSIONS
from twinsim.model.scene import SCENE_FORMAT_VERSION, SceneSpec
from twinsim.registries import ROBOTS
from twinsim.robots.base import RobotLog
from twinsim.sequence import open_sequence, validate_sequence

#: The oldest twinsim whose sequences repeat exactly: 0.1.0 introduced the physics-rate
#: robot_state log, the split physics step and the sequence format version 1 (still read).
MIN_REPLAYABLE_VERSION = (0, 1, 0)


class ReplaySourceError(SequenceError):
    """A source sequence that cannot be replayed (incomplete, invalid, or from another version)."""


@dataclass(frozen=True)
class ReplaySource:
    path: Path
    metadata: dict
    config: TwinsimConfig
    scene: SceneSpec
    scene_json: str  # the recorded text, written again by twins that keep the world unchanged
    logs: dict[str, RobotLog]  # each robot's log, by robot name, in the scene's order

    @property
    def log(self) -> RobotLog:
        """The first robot's log (the only one of a one-robot run)."""
        return next(iter(self.logs.values()))

    @property
    def steps(self) -> tuple[int, int]:
        k0, k1 = self.metadata["recorded_steps"]
        return int(k0), int(k1)


def _version(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in str(text).split("+")[0].split(".")[:3])
    except ValueError:
        raise ReplaySourceError(f"twinsim_version {text!r} is not a version number") from None


def check_versions(metadata: dict, mujoco_version: str) -> None:
    """Refuse sources this twinsim cannot repeat exactly, saying why."""
    fmt = metadata.get("format_version")
    if fmt not in READABLE_FORMAT_VERSIONS:
        allowed = ", ".join(map(str, READABLE_FORMAT_VERSIONS))
        raise ReplaySourceError(
            f"format_version {fmt} cannot be replayed; this twinsim replays formats {allowed}"
        )
    made_by = metadata.get("twinsim_version")
    if made_by is None:
        raise ReplaySourceError("metadata has no twinsim_version: not made by twinsim's simulator")
    version = _version(made_by)
    if version < MIN_REPLAYABLE_VERSION:
        oldest = ".".join(map(str, MIN_REPLAYABLE_VERSION))
        raise ReplaySourceError(
            f"made by twinsim {made_by}, older than {oldest}: it has no exact robot_state log"
        )
    if version > _version(__version__):
        raise ReplaySourceError(f"made by twinsim {made_by}, newer than this {__version__}")
    recorded_with = metadata.get("mujoco_version")
    if recorded_with != mujoco_version:
        raise ReplaySourceError(
            f"recorded with MuJoCo {recorded_with}, this is MuJoCo {mujoco_version}: physics and "
            "rendering would not repeat exactly (install the recording's MuJoCo version)"
        )


def load_source(path: str | Path) -> ReplaySource:
    """Open and check a source sequence; `ReplaySourceError` with the reason if unusable."""
    path = Path(path)
    report = validate_sequence(path)
    if not report.ok:
        first = "; ".join(report.problems[:3])
        more = f" (+{len(report.problems) - 3} more)" if len(report.problems) > 3 else ""
        raise ReplaySourceError(f"source {path} is not a valid sequence: {first}{more}")
    seq = open_sequence(path)
    metadata = seq.metadata
    check_versions(metadata, package_version("mujoco"))  # without importing it (GL backend)
    if "config" not in metadata or "bootstrap_steps" not in metadata:
        raise ReplaySourceError(f"source {path}: metadata lacks the resolved config to replay")
    try:
        config = validate_config(metadata["config"])
    except ConfigError as exc:
        raise ReplaySourceError(f"source {path}: recorded config is not usable: {exc}") from None
    scene = seq.scene
    if scene.format_version != SCENE_FORMAT_VERSION:
        raise ReplaySourceError(
            f"source {path}: scene format {scene.format_version}, this twinsim builds "
            f"{SCENE_FORMAT_VERSION}"
        )
    logs = {robot.name: _robot_log(seq, scene, robot, metadata) for robot in scene.robots}
    scene_json = (path / "scene.json").read_text(encoding="utf-8")
    return ReplaySource(path, metadata, config, scene, scene_json, logs)


def _robot_log(seq, scene: SceneSpec, robot, metadata: dict) -> RobotLog:
    """A robot's physics-rate `robot_state` rows, split into the parts a replay sets."""
    name = scene.stream_prefix(robot.name) + "robot_state"
    if name not in seq.streams:
        raise ReplaySourceError(f"source {seq.path} has no {name} stream to replay from")
    table = seq.table(name)
    kind = ROBOTS.get(robot.kind)
    missing = [c for c in kind.state_columns(robot) if c not in table]
    if missing:
        raise ReplaySourceError(f"source {seq.path}: {name} lacks columns {', '.join(missing)}")
    k0, k1 = metadata["recorded_steps"]
    if len(table["t_ns"]) != k1 - k0:
        raise ReplaySourceError(
            f"source {seq.path}: {name} has {len(table['t_ns'])} rows for {k1 - k0} steps; "
            "it must be logged at the physics rate"
        )

    def block(columns) -> np.ndarray:
        return np.stack([table[c] for c in columns], axis=1)

    joints, actuators = kind.joint_names(robot), kind.actuator_names(robot)
    return RobotLog(
        table["t_ns"],
        *(block([f"{part}_{j}" for j in joints]) for part in ("qpos", "qvel", "qacc_warmstart")),
        block(kind.setpoint_columns(robot)),
        block([f"ctrl_{a}" for a in actuators]),
    )


def world_at_frame(src: ReplaySource, index: int, width: int, height: int):
    """A `World` of the source in the state of its first robot's camera frame `index`, every
    camera `width` × `height`: the actors posed and the logged robot state set, kinematics
    done, so a renderer sees that instant as the run did (a twin's renderer checks)."""
    from twinsim.engine.world import World  # mujoco after the GL backend is chosen

    hz = src.config.sim.physics_hz
    k = round(int(open_sequence(src.path).camera("cam0").t_ns[index]) * hz / 1e9)
    row = k - src.steps[0]
    sensors = tuple(
        c.model_copy(update={"width": width, "height": height}) if c.type == "camera" else c
        for c in src.scene.sensors
    )
    world = World(src.scene.model_copy(update={"sensors": sensors}), src.config.render, hz)
    world.pose_actors(k / hz)
    log = src.log
    world.robot(src.scene.robot.name).set_step_state(
        log.qpos[row], log.qvel[row], log.qacc_warmstart[row]
    )
    world.step_begin()
    return world
