"""Resolve the configured sensors into mounted `SensorSpec`s and their metadata entries."""

from __future__ import annotations

import numpy as np

from twinsim.config import CameraConfig, EventCameraConfig, LidarConfig, TwinsimConfig
from twinsim.geometry import matrix_to_quat_wxyz, rpy_deg_to_matrix
from twinsim.scene.spec import EventSpec, SensorSpec
from twinsim.sensors.lidar import lidar_spec

# Body x forward, y left, z up → optical z forward, x right (= −y body), y down (= −z body).
R_BODY_OPTICAL_FORWARD = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def _optical(cam: CameraConfig | EventCameraConfig) -> dict:
    """The fields every image sensor shares: rate, mounting (optical frame), image, clipping."""
    R = rpy_deg_to_matrix(cam.rpy_deg) @ R_BODY_OPTICAL_FORWARD
    return {
        "rate_hz": cam.rate_hz,
        "pos": cam.pos,
        "quat": matrix_to_quat_wxyz(R),
        "width": cam.width,
        "height": cam.height,
        "hfov_deg": cam.hfov_deg,
        "near_m": cam.near_m,
        "far_m": cam.far_m,
    }


def _camera_spec(name: str, cam: CameraConfig) -> SensorSpec:
    return SensorSpec(
        name=name,
        type="camera",
        exposure_s=cam.exposure_s,
        rolling_shutter_readout_s=cam.rolling_shutter_readout_s,
        **_optical(cam),
    )


def _lidar_spec(name: str, lidar: LidarConfig) -> SensorSpec:
    return SensorSpec(
        name=name,
        type="lidar",
        rate_hz=lidar.rate_hz,
        pos=lidar.pos,
        quat=matrix_to_quat_wxyz(rpy_deg_to_matrix(lidar.rpy_deg)),
        lidar=lidar_spec(lidar),
    )


def _event_camera_spec(name: str, cam: EventCameraConfig) -> SensorSpec:
    return SensorSpec(
        name=name,
        type="event_camera",
        **_optical(cam),
        events=EventSpec(
            threshold_pos=cam.threshold_pos,
            threshold_neg=cam.threshold_neg,
            refractory_ns=round(cam.refractory_period_s * 1e9),
            log_eps=cam.log_eps,
        ),
    )


def resolve_sensors(cfg: TwinsimConfig) -> tuple[SensorSpec, ...]:
    """Every configured camera, IMU, LiDAR and event camera as a sensor on the robot body."""
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
    lidars = [_lidar_spec(n, c) for n, c in cfg.lidars.items()]
    events = [_event_camera_spec(n, c) for n, c in cfg.event_cameras.items()]
    return tuple(cams + imus + lidars + events)
