"""Resolve the configured sensors into mounted `SensorSpec`s and their metadata entries."""

from __future__ import annotations

import numpy as np

from twinsim.config import CameraConfig, TwinsimConfig
from twinsim.geometry import matrix_to_quat_wxyz, pose_to_T, rpy_deg_to_matrix
from twinsim.scene.spec import SensorSpec
from twinsim.sensors.camera import intrinsics

# Body x forward, y left, z up → optical z forward, x right (= −y body), y down (= −z body).
R_BODY_OPTICAL_FORWARD = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def _camera_spec(name: str, cam: CameraConfig) -> SensorSpec:
    R = rpy_deg_to_matrix(cam.rpy_deg) @ R_BODY_OPTICAL_FORWARD
    return SensorSpec(
        name=name,
        type="camera",
        rate_hz=cam.rate_hz,
        pos=cam.pos,
        quat=matrix_to_quat_wxyz(R),
        width=cam.width,
        height=cam.height,
        hfov_deg=cam.hfov_deg,
        near_m=cam.near_m,
        far_m=cam.far_m,
    )


def resolve_sensors(cfg: TwinsimConfig) -> tuple[SensorSpec, ...]:
    """Every configured camera and IMU as a sensor mounted on the robot body."""
    cams = [_camera_spec(n, c) for n, c in cfg.cameras.items()]
    imus = [
        SensorSpec(
            name=n,
            type="imu",
            rate_hz=c.rate_hz,
            pos=c.pos,
            quat=matrix_to_quat_wxyz(rpy_deg_to_matrix(c.rpy_deg)),
        )
        for n, c in cfg.imus.items()
    ]
    return tuple(cams + imus)


def sensor_metadata(sensor: SensorSpec) -> dict:
    """The metadata entry of a sensor: type, rate, extrinsics and, for cameras, intrinsics."""
    entry: dict = {
        "type": sensor.type,
        "rate_hz": sensor.rate_hz,
        "T_body_sensor": pose_to_T(sensor.pos, sensor.quat).tolist(),
    }
    if sensor.type == "camera":
        K = intrinsics(sensor.width, sensor.height, sensor.hfov_deg)
        entry |= {
            "frame": "OpenCV optical frame: x right, y down, z forward",
            "width": sensor.width,
            "height": sensor.height,
            "K": K.tolist(),
            "hfov_deg": sensor.hfov_deg,
            "vfov_deg": float(np.rad2deg(2 * np.arctan(sensor.height / 2 / K[0, 0]))),
            "near_m": sensor.near_m,
            "far_m": sensor.far_m,
            "depth": "float32 metres along the optical axis (z-depth), 0 = no reading",
        }
    else:
        entry |= {
            "frame": "IMU site frame; gyro in rad/s, accel = specific force in m/s² "
            "(reads +9.81 along +z when level and at rest)",
        }
    return entry
