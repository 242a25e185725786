"""Writes every stream of a run on its schedule from the world's state at physics step k.

The loop (`twinsim.sim`) decides how the robot moves; this decides what is recorded at each
step: `before_step` reads what describes instant k before the physics integrates (state,
setpoints, poses, odometry, images, LiDAR sectors, event-camera renders), `after_step` what
MuJoCo computes during the step (accelerometer, actuator efforts). A replay drives the same
recorder from a logged state; `statistics` ends the recording (a LiDAR sweep cut short by the
end of the run is written then).
"""

from __future__ import annotations

import math

import numpy as np

from twinsim.config import TwinsimConfig
from twinsim.geometry import T_to_pos_quat_xyzw, pose_to_T
from twinsim.robots.registry import ROBOTS
from twinsim.scene.spec import SceneSpec, SensorSpec
from twinsim.sensors.annotate import annotate_frame
from twinsim.sensors.events import EventSimulator, log_intensity
from twinsim.sensors.exposure import (
    ExposureRenderer,
    StateHistory,
    has_exposure_effects,
    window_steps,
)
from twinsim.sensors.lidar import LidarScanner
from twinsim.sensors.motion_stats import camera_motion_stats, dynamic_stats
from twinsim.sequence import SequenceWriter, step_to_ns
from twinsim.sequence.frames import FrameSource

POSE_COLUMNS = ("x", "y", "z", "qx", "qy", "qz", "qw")
ODOM_COLUMNS = (*POSE_COLUMNS, "vx", "vy", "vz", "wx", "wy", "wz")
IMU_COLUMNS = ("gyro_x", "gyro_y", "gyro_z", "accel_x", "accel_y", "accel_z")


def joint_state_columns(joints: tuple[str, ...]) -> tuple[str, ...]:
    """Columns of `joint_states`: position, velocity and actuator effort of each joint."""
    return tuple(f"{kind}_{j}" for kind in ("position", "velocity", "effort") for j in joints)


class StreamRecorder:
    """Declares the run's streams on a writer and fills them step by step."""

    def __init__(
        self,
        cfg: TwinsimConfig,
        scene: SceneSpec,
        world,
        writer: SequenceWriter,
        frame_sources: dict[str, FrameSource] | None = None,
    ) -> None:
        """`frame_sources`: cameras whose frames are taken from a recorded stream (a twin's
        unchanged cameras, `twinsim.replay.reuse`), rendering at most their colour pass."""
        self.hz = hz = cfg.sim.physics_hz
        self._sources = frame_sources or {}
        self.world, self.writer = world, writer
        self.cameras = [s for s in scene.sensors if s.type == "camera"]
        self.imus = [s for s in scene.sensors if s.type == "imu"]
        self.period = {s.name: hz // s.rate_hz for s in scene.sensors}
        gt = cfg.groundtruth
        self.pose_p = hz // gt.pose_rate_hz
        self.odom_p = hz // gt.odometry_rate_hz
        self.joint_p = hz // gt.joint_state_rate_hz
        for cam in self.cameras:
            writer.add_camera(cam.name)
            writer.add_table(f"groundtruth_{cam.name}", POSE_COLUMNS)
        for imu in self.imus:
            writer.add_table(imu.name, IMU_COLUMNS)
        writer.add_table("groundtruth_body", POSE_COLUMNS)
        writer.add_table("odometry", ODOM_COLUMNS)
        kind = ROBOTS.get(scene.robot.kind)
        writer.add_table("joint_states", joint_state_columns(kind.joint_names(scene.robot)))
        writer.add_table("robot_state", kind.state_columns(scene.robot))
        self.lidars = [s for s in scene.sensors if s.type == "lidar"]
        self.event_cameras = [s for s in scene.sensors if s.type == "event_camera"]
        self._scanners = [LidarScanner(world, s, self.period[s.name]) for s in self.lidars]
        self._T_body_lidar = {s.name: pose_to_T(s.pos, s.quat) for s in self.lidars}
        self._scans = {s.name: 0 for s in self.lidars}
        for lidar in self.lidars:
            writer.add_lidar(lidar.name)
        self._events = {
            s.name: EventSimulator(s.events, s.width, s.height) for s in self.event_cameras
        }
        for cam in self.event_cameras:
            writer.add_events(cam.name, cam.width, cam.height)
        self._frames = {c.name: 0 for c in self.cameras}
        shuttered = [c for c in self.cameras if has_exposure_effects(c)]
        self._exposure = {c.name: ExposureRenderer(world, c, hz) for c in shuttered}
        reach = max((math.ceil(window_steps(c, hz)) for c in shuttered), default=0)
        self._history = StateHistory(reach) if shuttered else None
        self._cam_t_ns: list[int] = []
        self._cam_poses: list[np.ndarray] = []
        self._fractions: list[float] = []

    def observed(self, k: int) -> bool:
        """Whether a sensor that sees the world fires at step k (a LiDAR casts at every step)."""
        seeing = self.cameras + self.event_cameras
        return bool(self.lidars) or any(k % self.period[c.name] == 0 for c in seeing)

    def before_step(
        self, k: int, q: np.ndarray, qd: np.ndarray, setpoint: np.ndarray, ctrl: np.ndarray
    ) -> None:
        """Record what describes instant k: state and setpoints, poses, odometry, images."""
        world, writer, t_ns = self.world, self.writer, step_to_ns(k, self.hz)
        row = [q, qd, world.qacc_warmstart(), setpoint, ctrl]
        writer.append("robot_state", t_ns, np.concatenate(row))
        if self._history is not None:
            self._history.push(k, q)
        if k % self.pose_p == 0:
            writer.append("groundtruth_body", t_ns, T_to_pos_quat_xyzw(world.T_world_body()))
            for cam in self.cameras:
                T_world_cam = world.T_world_cam(cam.name)
                writer.append(f"groundtruth_{cam.name}", t_ns, T_to_pos_quat_xyzw(T_world_cam))
                if cam is self.cameras[0]:
                    self._cam_t_ns.append(t_ns)
                    self._cam_poses.append(T_world_cam)
        if k % self.odom_p == 0:
            vel = world.body_velocity_local()
            pose = T_to_pos_quat_xyzw(world.T_world_body())
            writer.append("odometry", t_ns, np.concatenate([pose, vel[3:], vel[:3]]))
        for cam in self.cameras:
            if k % self.period[cam.name] == 0:
                fraction = self._camera_frame(cam, k, t_ns)
                if cam is self.cameras[0]:
                    self._fractions.append(fraction)
                self._frames[cam.name] += 1
        for scanner in self._scanners:
            self._lidar_step(scanner, k, t_ns)
        for cam in self.event_cameras:
            if k % self.period[cam.name] == 0:
                rgb = world.render_rgb(cam.name, cam.width, cam.height)
                batch = self._events[cam.name].update(t_ns, log_intensity(rgb, cam.events.log_eps))
                writer.append_events(cam.name, batch.x, batch.y, batch.t_ns, batch.polarity)

    def _camera_frame(self, cam: SensorSpec, k: int, t_ns: int) -> float:
        """Render (or take from the source) and write the camera's frame; its dynamic share."""
        index, source = self._frames[cam.name], self._sources.get(cam.name)
        if source is not None:
            rgb = None
            if not source.colour:
                rgb = self.world.render_rgb(cam.name, cam.width, cam.height)
            T_world_cam = self.world.T_world_cam(cam.name)
            self.writer.write_copied_frame(cam.name, source.frame(index, t_ns, T_world_cam, rgb))
            return source.dynamic_fraction(index)
        exposure = self._exposure.get(cam.name)
        rendered = None if exposure is None else exposure.render(k, self._history)
        frame = annotate_frame(self.world, cam, index, t_ns, k / self.hz, rendered)
        self.writer.write_frame(cam.name, frame)
        return frame.dynamic_fraction

    def _lidar_step(self, scanner: LidarScanner, k: int, t_ns: int) -> None:
        """Cast the sector of step k of the current sweep; a sweep starts on the LiDAR's grid."""
        name, p = scanner.sensor.name, scanner.steps_per_sweep
        T_world_lidar = self.world.T_world_body() @ self._T_body_lidar[name]
        if k % p == 0:
            if scanner.in_sweep:
                self._write_scan(scanner)
            scanner.begin(self._scans[name], t_ns, T_world_lidar)
        if scanner.in_sweep:
            scanner.cast_sector(k % p, t_ns, T_world_lidar)
            if k % p == p - 1:
                self._write_scan(scanner)

    def _write_scan(self, scanner: LidarScanner) -> None:
        self.writer.write_scan(scanner.sensor.name, scanner.finish())
        self._scans[scanner.sensor.name] += 1

    def after_step(self, k: int, q: np.ndarray, qd: np.ndarray) -> None:
        """Record what MuJoCo computed during step k: IMU readings, actuator efforts."""
        world, writer, t_ns = self.world, self.writer, step_to_ns(k, self.hz)
        for imu in self.imus:
            if k % self.period[imu.name] == 0:
                gyro, accel = world.imu(imu.name)
                writer.append(imu.name, t_ns, np.concatenate([gyro, accel]))
        if k % self.joint_p == 0:
            writer.append("joint_states", t_ns, np.concatenate([q, qd, world.actuator_force()]))

    def statistics(self) -> dict:
        """End the recording (write sweeps cut short); GRADE's Table 8 for the first camera."""
        for scanner in self._scanners:
            if scanner.in_sweep:
                self._write_scan(scanner)
            scanner.close()
        if not self.cameras:
            return {}
        return {
            "camera": self.cameras[0].name,
            "camera_motion": camera_motion_stats(
                np.array(self._cam_t_ns), np.array(self._cam_poses)
            ),
            "dynamic_content": dynamic_stats(self._fractions),
        }
