"""One robot's view of a running `World`: its joints, actuators and body, and its sensors by
their own names.

Several robots share one MuJoCo model; each robot's MuJoCo names start with its stream prefix
(`b.cam0`; nothing when it is the only robot). A view is what a robot's controller, the
recorder and each of its sensors' recorders see, so none of them knows the prefix or the other
robots: `view.T_world_cam("cam0")` is robot b's `b.cam0`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from twinsim.engine.build import robot_body
from twinsim.engine.render import RenderedFrame
from twinsim.geometry import make_T
from twinsim.model.scene import RobotSpec

if TYPE_CHECKING:
    from twinsim.engine.world import World


@dataclass(frozen=True)
class BodyTwist:
    """The robot body frame's velocity in its own axes: `linear` (m/s) of the frame's origin
    and `angular` (rad/s); named so no reader can swap the halves."""

    linear: np.ndarray
    angular: np.ndarray

    def as_array(self) -> np.ndarray:
        """(vx, vy, vz, wx, wy, wz): the odometry columns' order."""
        return np.concatenate([self.linear, self.angular])


class RobotView:
    """A robot's slice of the world's state and its sensors' readings and renders."""

    def __init__(self, world: World, robot: RobotSpec) -> None:
        self.world, self.spec, self.name = world, robot, robot.name
        self.prefix = world.scene.stream_prefix(robot.name)
        model = world.model
        body = robot_body(world.scene, robot)
        #: the MuJoCo body of the link sensors mount on (the robot's body frame)
        self.body_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body.mount)
        joints = [model.joint(j.name) for j in body.joints]
        self._qpos_adr = np.array([int(j.qposadr[0]) for j in joints], dtype=int)
        self._dof_adr = np.array([int(j.dofadr[0]) for j in joints], dtype=int)
        self._ctrl_adr = np.array([model.actuator(a).id for a in body.controls], int)
        self._velocity = np.zeros(6)

    # what the robot's sensors share with the world
    @property
    def model(self) -> mujoco.MjModel:
        return self.world.model

    @property
    def data(self) -> mujoco.MjData:
        return self.world.data

    @property
    def maps(self):
        return self.world.maps

    @property
    def actors(self):
        return self.world.actors

    @property
    def scene(self):
        return self.world.scene

    @property
    def render_config(self):
        return self.world.render_config

    def instance_world_boxes(self, instance_ids: np.ndarray):
        """World OBBs of instances at the current state (`World.instance_world_boxes`)."""
        return self.world.instance_world_boxes(instance_ids)

    def point_velocities(self, geoms: np.ndarray, points: np.ndarray, t_s: float) -> np.ndarray:
        """World velocities of points on geoms at t_s (`World.point_velocities`)."""
        return self.world.point_velocities(geoms, points, t_s)

    # the robot's state and controls
    def set_state(self, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Place the robot (its joint coordinates) and recompute kinematics."""
        data = self.world.data
        data.qpos[self._qpos_adr] = qpos
        data.qvel[self._dof_adr] = qvel
        mujoco.mj_forward(self.world.model, data)

    def set_step_state(
        self, qpos: np.ndarray, qvel: np.ndarray, qacc_warmstart: np.ndarray
    ) -> None:
        """Set the state a physics step starts from (a replay's logged row), before
        `World.step_begin`."""
        data = self.world.data
        data.qpos[self._qpos_adr] = qpos
        data.qvel[self._dof_adr] = qvel
        data.qacc_warmstart[self._dof_adr] = qacc_warmstart

    def set_ctrl(self, ctrl: np.ndarray) -> None:
        """The robot's actuator controls for the step `World.step_end` completes."""
        self.world.data.ctrl[self._ctrl_adr] = ctrl

    def qpos(self) -> np.ndarray:
        """The robot's joint coordinates (a copy)."""
        return self.world.data.qpos[self._qpos_adr]

    def qvel(self) -> np.ndarray:
        """The robot's joint velocities (a copy)."""
        return self.world.data.qvel[self._dof_adr]

    def qacc_warmstart(self) -> np.ndarray:
        """The solver's warm start of the robot's joints (logged so a replay repeats it)."""
        return self.world.data.qacc_warmstart[self._dof_adr]

    def joint_efforts(self) -> np.ndarray:
        """The motors' force or torque on each of the robot's joints in the last step (0 on a
        joint no motor drives)."""
        return self.world.data.qfrc_actuator[self._dof_adr]

    def T_world_body(self, data: mujoco.MjData | None = None) -> np.ndarray:
        """The robot body frame in the world (in `data`, e.g. `World.integrated_state`, else
        the running state as the current step's kinematics computed it)."""
        data = self.world.data if data is None else data
        return make_T(data.xmat[self.body_id].reshape(3, 3), data.xpos[self.body_id])

    def body_position(self) -> np.ndarray:
        """The world position of the robot body (a copy): `T_world_body`'s translation
        without building the transform, for what needs only that at every step."""
        return self.world.data.xpos[self.body_id].copy()

    def body_twist(self, data: mujoco.MjData | None = None) -> BodyTwist:
        """The body frame's velocity in its own axes (in `data`, else the running state): the
        frame's origin (`mjOBJ_XBODY`), not the centre of mass, so odometry, GNSS and the
        live interfaces report the motion of the frame their pose describes."""
        world = self.world
        data = world.data if data is None else data
        frame = mujoco.mjtObj.mjOBJ_XBODY
        mujoco.mj_objectVelocity(world.model, data, frame, self.body_id, self._velocity, 1)
        return BodyTwist(self._velocity[3:].copy(), self._velocity[:3].copy())

    # the robot's sensors, by their own names
    def T_world_cam(self, camera: str, data: mujoco.MjData | None = None) -> np.ndarray:
        """Pose of one of the robot's cameras' OpenCV optical frame in the world (in `data`,
        a state `posed_at` gives, else the running one)."""
        return self.world.T_world_cam(self.prefix + camera, data)

    def imu(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(gyro rad/s, specific force m/s²) of one of the robot's IMUs, after `step_end`."""
        return self.world.imu(self.prefix + name)

    def render(self, camera: str, width: int, height: int) -> RenderedFrame:
        """Render one of the robot's cameras at the current state."""
        return self.world.render(self.prefix + camera, width, height)

    def surface_normals(
        self, geoms: np.ndarray, points: np.ndarray, origin: np.ndarray
    ) -> np.ndarray:
        """The world's `surface_normals` (geoms are world geom ids)."""
        return self.world.surface_normals(geoms, points, origin)

    def to_geom_frame(self, geoms: np.ndarray, points: np.ndarray) -> np.ndarray:
        """The world's `to_geom_frame`."""
        return self.world.to_geom_frame(geoms, points)

    def from_geom_frame(self, geoms: np.ndarray, local: np.ndarray) -> np.ndarray:
        """The world's `from_geom_frame`."""
        return self.world.from_geom_frame(geoms, local)

    def render_rgb(self, camera: str, width: int, height: int) -> np.ndarray:
        """Only the colour image of one of the robot's cameras at the current state."""
        return self.world.render_rgb(self.prefix + camera, width, height)

    def render_rgb_depth(
        self, camera: str, width: int, height: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The colour image and z-depth of one of the robot's cameras at the current state."""
        return self.world.render_rgb_depth(self.prefix + camera, width, height)

    def render_at(
        self, camera: str, width: int, height: int, qpos: np.ndarray, t_s: float
    ) -> RenderedFrame:
        """Render one of the robot's cameras with the robot at `qpos` (its joints) and the
        rest of the world at t (an instant inside an exposure); the state is left unchanged."""
        full = self.world.data.qpos.copy()
        full[self._qpos_adr] = qpos
        return self.world.render_at(self.prefix + camera, width, height, full, t_s)

    @contextlib.contextmanager
    def posed_at(self, qpos: np.ndarray, t_s: float) -> Iterator[mujoco.MjData]:
        """A scratch state with the robot at `qpos` (its joints) and the rest of the world at
        t (`World.posed_at`); the running state is left unchanged."""
        full = self.world.data.qpos.copy()
        full[self._qpos_adr] = qpos
        with self.world.posed_at(full, t_s) as data:
            yield data
