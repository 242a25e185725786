"""Resolve the configured sensors into mounted `SensorSpec`s and their metadata entries."""

from __future__ import annotations

import numpy as np

from twinsim.config import CameraConfig, EventCameraConfig, LidarConfig, TwinsimConfig
from twinsim.geometry import matrix_to_quat_wxyz, pose_to_T, rpy_deg_to_matrix
from twinsim.scene.spec import EventSpec, SensorSpec
from twinsim.sensors.camera import intrinsics
from twinsim.sensors.exposure import SHUTTER_NOTE
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


def sensor_metadata(sensor: SensorSpec) -> dict:
    """The metadata entry of a sensor: type, rate, extrinsics, and intrinsics or beam table."""
    entry: dict = {
        "type": sensor.type,
        "rate_hz": sensor.rate_hz,
        "T_body_sensor": pose_to_T(sensor.pos, sensor.quat).tolist(),
    }
    if sensor.type == "lidar":
        return entry | _lidar_metadata(sensor)
    if sensor.type == "event_camera":
        return entry | _event_metadata(sensor)
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
            "exposure_s": sensor.exposure_s,
            "rolling_shutter_readout_s": sensor.rolling_shutter_readout_s,
            "shutter": SHUTTER_NOTE,
        }
    else:
        entry |= {
            "frame": "IMU site frame; gyro in rad/s, accel = specific force in m/s² "
            "(reads +9.81 along +z when level and at rest)",
        }
    return entry


def _lidar_metadata(sensor: SensorSpec) -> dict:
    lidar = sensor.lidar
    return {
        "frame": "LiDAR frame: x forward, y left, z up; points at each point's own capture time",
        "model": lidar.model,
        "rings": len(lidar.elevations_deg),
        "elevations_deg": list(lidar.elevations_deg),
        "columns": lidar.columns,
        "min_range_m": lidar.min_range_m,
        "max_range_m": lidar.max_range_m,
        "rotation": "clockwise seen from above, column j at azimuth pi - 2 pi j / columns",
        "intensity": "diffuse reflectance of the material x cos(incidence angle), in [0, 1]",
    }


def _event_metadata(sensor: SensorSpec) -> dict:
    K = intrinsics(sensor.width, sensor.height, sensor.hfov_deg)
    events = sensor.events
    return {
        "type": "events",
        "frame": "OpenCV optical frame: x right, y down, z forward",
        "width": sensor.width,
        "height": sensor.height,
        "K": K.tolist(),
        "hfov_deg": sensor.hfov_deg,
        "threshold_pos": events.threshold_pos,
        "threshold_neg": events.threshold_neg,
        "refractory_ns": events.refractory_ns,
        "log_eps": events.log_eps,
        "note": "rate_hz is the internal render rate events are interpolated between",
    }
