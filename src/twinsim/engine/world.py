"""A running MuJoCo world: physics state, stepping split around control, and sensor reads.

A physics step is split as MuJoCo allows (`mj_step1`, then controls, then `mj_step2`) so that
everything recorded at step k — poses, images, IMU — describes the same instant k.
"""

from __future__ import annotations

import mujoco
import numpy as np

from twinsim.config import RenderConfig
from twinsim.engine.build import ROBOT_BODY, compile_model, id_maps
from twinsim.engine.render import CameraRenderer, RenderedFrame
from twinsim.geometry import R_OPTICAL_MJCAM, make_T
from twinsim.robots.drone import JOINT_NAMES
from twinsim.scene.spec import SceneSpec


class World:
    """The simulator view of a `SceneSpec`: owns the MuJoCo model, data and renderers."""

    def __init__(self, scene: SceneSpec, render: RenderConfig, physics_hz: int) -> None:
        self.scene = scene
        self.model = compile_model(scene, render, physics_hz)
        self.render_config = render
        self.data = mujoco.MjData(self.model)
        self.maps = id_maps(self.model, scene)
        self.robot_body = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, ROBOT_BODY)
        self._cam_ids = {
            s.name: mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_CAMERA, s.name)
            for s in scene.sensors
            if s.type == "camera"
        }
        self._imu_adr = {
            s.name: (self._sensor_adr(f"{s.name}_gyro"), self._sensor_adr(f"{s.name}_accel"))
            for s in scene.sensors
            if s.type == "imu"
        }
        self._renderers: dict[str, CameraRenderer] = {}
        self._velocity = np.zeros(6)

    def _sensor_adr(self, name: str) -> int:
        return int(
            self.model.sensor_adr[mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SENSOR, name)]
        )

    @property
    def nq(self) -> int:
        return len(JOINT_NAMES)

    def set_robot_state(self, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Place the robot (joint coordinates are its pose) and recompute kinematics."""
        self.data.qpos[:] = qpos
        self.data.qvel[:] = qvel
        mujoco.mj_forward(self.model, self.data)

    def step_begin(self) -> None:
        """First half of a physics step: kinematics and velocity-dependent sensors at step k."""
        mujoco.mj_step1(self.model, self.data)

    def step_end(self, ctrl: np.ndarray) -> None:
        """Second half: apply controls, compute accelerations (accelerometer), integrate to k+1."""
        self.data.ctrl[:] = ctrl
        mujoco.mj_step2(self.model, self.data)

    def robot_qpos(self) -> np.ndarray:
        return self.data.qpos.copy()

    def robot_qvel(self) -> np.ndarray:
        return self.data.qvel.copy()

    def qacc_warmstart(self) -> np.ndarray:
        return self.data.qacc_warmstart.copy()

    def actuator_force(self) -> np.ndarray:
        return self.data.actuator_force.copy()

    def T_world_body(self) -> np.ndarray:
        return make_T(
            self.data.xmat[self.robot_body].reshape(3, 3), self.data.xpos[self.robot_body]
        )

    def body_velocity_local(self) -> np.ndarray:
        """(angular xyz, linear xyz) velocity of the robot body in its own frame."""
        mujoco.mj_objectVelocity(
            self.model, self.data, mujoco.mjtObj.mjOBJ_BODY, self.robot_body, self._velocity, 1
        )
        return self._velocity.copy()

    def T_world_cam(self, camera: str) -> np.ndarray:
        """Pose of a camera's OpenCV optical frame (x right, y down, z forward) in the world."""
        cid = self._cam_ids[camera]
        R_world_mjcam = self.data.cam_xmat[cid].reshape(3, 3)
        return make_T(R_world_mjcam @ R_OPTICAL_MJCAM.T, self.data.cam_xpos[cid])

    def imu(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(gyro rad/s, specific force m/s²) in the IMU frame; valid after `step_end`."""
        gyro_adr, accel_adr = self._imu_adr[name]
        sd = self.data.sensordata
        return sd[gyro_adr : gyro_adr + 3].copy(), sd[accel_adr : accel_adr + 3].copy()

    def render(self, camera: str, width: int, height: int) -> RenderedFrame:
        """Render a camera at the current state (renderers are created on first use)."""
        renderer = self._renderers.get(camera)
        if renderer is None:
            renderer = self._renderers[camera] = CameraRenderer(
                self.model, camera, width, height, self.render_config.reflections
            )
        return renderer.render(self.data)

    def instance_world_boxes(
        self, instance_ids: np.ndarray
    ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """World OBBs (centre, half extents, rotation) of instances at the current state."""
        boxes = []
        for iid in instance_ids:
            body = self.maps.instance_body[int(iid)]
            R = self.data.xmat[body].reshape(3, 3)
            center = R @ self.maps.local_box_center[int(iid)] + self.data.xpos[body]
            boxes.append((center, self.maps.local_box_half[int(iid)], R.copy()))
        return boxes

    def close(self) -> None:
        for renderer in self._renderers.values():
            renderer.close()
        self._renderers.clear()
