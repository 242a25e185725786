"""Writes every stream of a run on its schedule from the world's state at physics step k.

The loop (`twinsim.sim`) decides how the robots move; this decides what is recorded at each
step, robot by robot: `before_step` reads what describes instant k before the physics
integrates (state, setpoints, poses, odometry, then each sensor's recorder: images, LiDAR
sectors, event-camera renders with the image weather composited), `after_step` what MuJoCo
computes during the step (accelerometer, actuator efforts, contacts and their forces). A
robot's recorders see its own view of the world and a writer that names its streams (`b.cam0`
for robot b when there are several). Each sensor records through the recorder its kind
provides (`twinsim.sensors`); a replay drives the same recorder from a logged state;
`statistics` ends the recording.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from twinsim.config import TwinsimConfig
from twinsim.geometry import T_to_pos_quat_xyzw
from twinsim.model.scene import SceneSpec
from twinsim.registries import ROBOTS, SENSORS
from twinsim.sensors.base import POSE_COLUMNS, ImageWeather, RecordingContext, substate
from twinsim.sequence import SequenceWriter, step_to_ns

if TYPE_CHECKING:  # replay imports this module
    from twinsim.replay.frame_source import FrameSource

ODOM_COLUMNS = (*POSE_COLUMNS, "vx", "vy", "vz", "wx", "wy", "wz")


def joint_state_columns(joints: tuple[str, ...]) -> tuple[str, ...]:
    """Columns of `joint_states`: position, velocity and actuator effort of each joint."""
    return tuple(f"{kind}_{j}" for kind in ("position", "velocity", "effort") for j in joints)


@dataclass(frozen=True)
class RobotStep:
    """One robot at step k, before the physics integrates: its state, set-point and controls."""

    q: np.ndarray
    qd: np.ndarray
    setpoint: np.ndarray
    ctrl: np.ndarray


#: the writer's methods whose first argument is a stream name
_STREAM_METHODS = frozenset(
    {
        "add_table",
        "append",
        "add_camera",
        "write_frame",
        "write_copied_frame",
        "write_flow",
        "add_lidar",
        "write_scan",
        "add_events",
        "append_events",
        "add_files",
        "write_file",
        "add_contacts",
        "append_contacts",
    }
)


class _RobotStreams:
    """A writer as one robot's recorders see it: stream names are the robot's own, and every
    stream method puts the robot's prefix in front (`cam0` of robot b is `b.cam0`)."""

    def __init__(self, writer, prefix: str) -> None:
        self._writer, self._prefix = writer, prefix

    def __getattr__(self, name: str):
        attr = getattr(self._writer, name)
        if name not in _STREAM_METHODS:
            return attr
        prefix = self._prefix
        return lambda stream, *args, **kwargs: attr(prefix + stream, *args, **kwargs)


def robot_streams(writer, prefix: str):
    """The writer for a robot whose streams start with `prefix` (itself for no prefix)."""
    return _RobotStreams(writer, prefix) if prefix else writer


class RobotRecorder:
    """Declares one robot's streams (state, poses, odometry, its sensors') and fills them."""

    def __init__(
        self,
        cfg: TwinsimConfig,
        scene: SceneSpec,
        view,
        writer,
        frame_sources: dict,
        weather: ImageWeather | None = None,
    ) -> None:
        self.hz = hz = cfg.sim.physics_hz
        self.view, self.writer = view, writer
        gt = cfg.groundtruth
        self.pose_p = hz // gt.pose_rate_hz
        self.odom_p = hz // gt.odometry_rate_hz
        self.joint_p = hz // gt.joint_state_rate_hz
        self.contact_p = hz // gt.contact_rate_hz
        ctx = RecordingContext(view, writer, hz, self.pose_p, frame_sources, weather)
        robot = view.spec
        self.sensors = [
            SENSORS.get(s.type).recorder(s, ctx) for s in scene.robot_sensors(robot.name)
        ]
        writer.add_table("groundtruth_body", POSE_COLUMNS)
        writer.add_table("odometry", ODOM_COLUMNS)
        kind = ROBOTS.get(robot.kind)
        writer.add_table("joint_states", joint_state_columns(kind.joint_names(robot)))
        writer.add_table("robot_state", kind.state_columns(robot))
        self.contacts = view.world.contacts(robot.name)
        writer.add_contacts("contacts", len(kind.part_names(robot)))

    def observed(self, k: int) -> bool:
        return any(r.observes(k) for r in self.sensors)

    def before_step(self, k: int, t_ns: int, step: RobotStep) -> None:
        view, writer = self.view, self.writer
        row = [step.q, step.qd, view.qacc_warmstart(), step.setpoint, step.ctrl]
        writer.append("robot_state", t_ns, np.concatenate(row))
        if k % self.pose_p == 0:
            writer.append("groundtruth_body", t_ns, T_to_pos_quat_xyzw(view.T_world_body()))
        if k % self.odom_p == 0:
            pose = T_to_pos_quat_xyzw(view.T_world_body())
            writer.append("odometry", t_ns, np.concatenate([pose, view.body_twist().as_array()]))
        for recorder in self.sensors:
            recorder.before_step(k, t_ns, step.q)

    def after_step(self, k: int, t_ns: int, step: RobotStep) -> None:
        for recorder in self.sensors:
            recorder.after_step(k, t_ns)
        if k % self.joint_p == 0:
            efforts = self.view.joint_efforts()
            self.writer.append("joint_states", t_ns, np.concatenate([step.q, step.qd, efforts]))
        if k % self.contact_p == 0:
            records = self.contacts.records(self.view.data, t_ns)
            self.writer.append_contacts("contacts", records)


class StreamRecorder:
    """Declares the run's streams on a writer and fills them step by step, robot by robot."""

    def __init__(
        self,
        cfg: TwinsimConfig,
        scene: SceneSpec,
        world,
        writer: SequenceWriter,
        frame_sources: dict[str, FrameSource] | None = None,
        weather: ImageWeather | None = None,
    ) -> None:
        """`frame_sources`: cameras (by stream name) whose frames are taken from a recorded
        stream (a twin's unchanged cameras, `twinsim.replay.reuse`), rendering at most their
        colour pass; `weather`: the rain, snow and smoke the event cameras composite onto
        their renders (the one the writer composites onto colour frames; None in clear air)."""
        self.hz = cfg.sim.physics_hz
        sources = frame_sources or {}
        self.robots: dict[str, RobotRecorder] = {}
        for robot in scene.robots:
            prefix = scene.stream_prefix(robot.name)
            own = {
                s.name: sources[prefix + s.name]
                for s in scene.robot_sensors(robot.name)
                if prefix + s.name in sources
            }
            view = world.robot(robot.name)
            streams = robot_streams(writer, prefix)
            self.robots[robot.name] = RobotRecorder(cfg, scene, view, streams, own, weather)

    def observed(self, k: int) -> bool:
        """Whether a sensor that sees the world fires at step k (a LiDAR casts at every step)."""
        return any(r.observed(k) for r in self.robots.values())

    @property
    def resumable(self) -> bool:
        """Whether every sensor recorder can checkpoint its state (`SensorRecorder.resumable`)."""
        return all(s.resumable for r in self.robots.values() for s in r.sensors)

    def checkpoint(self) -> dict[str, np.ndarray] | None:
        """Every sensor recorder's state at the boundary before the next step, keyed
        `robot.index.key`; None when one of them cannot be taken at this step."""
        state: dict[str, np.ndarray] = {}
        for name, robot in self.robots.items():
            for i, sensor in enumerate(robot.sensors):
                part = sensor.checkpoint()
                if part is None:
                    return None
                state |= {f"{name}.{i}.{key}": value for key, value in part.items()}
        return state

    def restore(self, state: dict[str, np.ndarray]) -> None:
        """Give each sensor recorder back its part of a `checkpoint`."""
        for name, robot in self.robots.items():
            for i, sensor in enumerate(robot.sensors):
                sensor.restore(substate(state, f"{name}.{i}."))

    def before_step(self, k: int, steps: dict[str, RobotStep]) -> None:
        """Record what describes instant k: each robot's state and set-points, poses,
        odometry, sensors."""
        t_ns = step_to_ns(k, self.hz)
        for name, recorder in self.robots.items():
            recorder.before_step(k, t_ns, steps[name])

    def after_step(self, k: int, steps: dict[str, RobotStep]) -> None:
        """Record what MuJoCo computed during step k: IMU readings, actuator efforts."""
        t_ns = step_to_ns(k, self.hz)
        for name, recorder in self.robots.items():
            recorder.after_step(k, t_ns, steps[name])

    def statistics(self) -> dict:
        """End the recording (write sweeps cut short); the first statistics a sensor offers
        (GRADE's Table 8 for the first robot's first camera)."""
        sensors = [s for r in self.robots.values() for s in r.sensors]
        for recorder in sensors:
            recorder.finish()
        offers = (r.statistics() for r in sensors)
        return next((s for s in offers if s is not None), {})
