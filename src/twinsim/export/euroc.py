"""EuRoC MAV (ASL) layout: mav0/camN, imu0, state_groundtruth_estimate0, each with sensor.yaml.

EuRoC's body frame B is the IMU frame: `T_BS` of a camera maps its optical frame into the IMU
frame, and the ground truth is the pose of the IMU in the world, quaternion scalar first.
Each GNSS stream `<name>` is written as `mav0/<name>0/data.csv` (timestamp, latitude and
longitude in degrees, altitude in m above the WGS-84 ellipsoid, then the NavSatStatus: 0 fix,
-1 no fix with nan position), with a sensor.yaml giving the antenna's T_BS and the datum.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from scipy.spatial.transform import Rotation

from twinsim.export.common import (
    ExportError,
    Progress,
    T_body_sensor,
    float_text,
    invert,
    no_progress,
    pick_stream,
    prepare_output,
    streams_of_type,
)
from twinsim.sequence.images import write_png
from twinsim.sequence.reader import SequenceReader

_IMU_HEADER = (
    "#timestamp [ns],w_RS_S_x [rad s^-1],w_RS_S_y [rad s^-1],w_RS_S_z [rad s^-1],"
    "a_RS_S_x [m s^-2],a_RS_S_y [m s^-2],a_RS_S_z [m s^-2]"
)
_GNSS_HEADER = "#timestamp [ns],latitude [deg],longitude [deg],altitude [m],status []"
_GT_HEADER = (
    "#timestamp, p_RS_R_x [m], p_RS_R_y [m], p_RS_R_z [m], q_RS_w [], q_RS_x [], q_RS_y [], "
    "q_RS_z [], v_RS_R_x [m s^-1], v_RS_R_y [m s^-1], v_RS_R_z [m s^-1], "
    "b_w_RS_S_x [rad s^-1], b_w_RS_S_y [rad s^-1], b_w_RS_S_z [rad s^-1], "
    "b_a_RS_S_x [m s^-2], b_a_RS_S_y [m s^-2], b_a_RS_S_z [m s^-2]"
)


def export_euroc(
    seq: SequenceReader,
    out: Path,
    *,
    imu: str | None = None,
    progress: Progress = no_progress,
) -> Path:
    """Write every camera (grey 8-bit, as EuRoC's), one IMU and the IMU's ground truth."""
    imu = pick_stream(seq, "imu", imu, "imu")
    cameras = streams_of_type(seq, "camera")
    if not cameras:
        raise ExportError(f"{seq.path}: has no camera stream for EuRoC's cam0")
    out = prepare_output(out)
    mav = out / "mav0"
    T_body_imu = T_body_sensor(seq, imu)
    total = sum(seq.stream_info(c)["count"] for c in cameras)
    done = 0
    for index, camera in enumerate(cameras):
        folder = mav / f"cam{index}"
        (folder / "data").mkdir(parents=True)
        stream = seq.camera(camera)
        rows = ["#timestamp [ns],filename"]
        for frame in stream:
            name = f"{frame.t_ns}.png"
            write_png(folder / "data" / name, cv2.cvtColor(frame.rgb, cv2.COLOR_RGB2GRAY))
            rows.append(f"{frame.t_ns},{name}")
            done += 1
            progress(done, total)
        _write_lines(folder / "data.csv", rows)
        K = stream.K
        _write_lines(
            folder / "sensor.yaml",
            [
                f"# twinsim {camera} (OpenCV optical frame: x right, y down, z forward)",
                "sensor_type: camera",
                f"comment: twinsim {camera}, 8-bit grey from the rendered colour image",
                "",
                "# Sensor extrinsics wrt. the body-frame (= the IMU frame).",
                *_matrix_yaml("T_BS", invert(T_body_imu) @ T_body_sensor(seq, camera)),
                "",
                f"rate_hz: {seq.stream_info(camera)['rate_hz']}",
                f"resolution: [{stream.width}, {stream.height}]",
                "camera_model: pinhole",
                "intrinsics: [{}, {}, {}, {}] # fu, fv, cu, cv".format(
                    *map(float_text, (K[0, 0], K[1, 1], K[0, 2], K[1, 2]))
                ),
                "distortion_model: radial-tangential",
                "distortion_coefficients: [0.0, 0.0, 0.0, 0.0]",
            ],
        )
    _write_imu(seq, imu, mav / "imu0")
    _write_groundtruth(seq, T_body_imu, mav / "state_groundtruth_estimate0")
    for gnss in streams_of_type(seq, "gnss"):
        _write_gnss(seq, gnss, T_body_imu, mav / f"{gnss}0")
    return out


def _write_gnss(seq: SequenceReader, gnss: str, T_body_imu: np.ndarray, folder: Path) -> None:
    """A GNSS stream's geodetic fixes and its sensor.yaml (antenna in the IMU frame)."""
    folder.mkdir(parents=True)
    table = seq.table(gnss)
    rows = [_GNSS_HEADER]
    for i, t in enumerate(table["t_ns"]):
        values = (table[c][i] for c in ("lat_deg", "lon_deg", "alt_m"))
        rows.append(",".join([str(int(t)), *map(float_text, values), str(int(table["status"][i]))]))
    _write_lines(folder / "data.csv", rows)
    datum = seq.stream_info(gnss)["datum"]
    _write_lines(
        folder / "sensor.yaml",
        [
            "sensor_type: gnss",
            f"comment: twinsim {gnss}, WGS-84 position of the antenna",
            "",
            *_matrix_yaml("T_BS", invert(T_body_imu) @ T_body_sensor(seq, gnss)),
            f"rate_hz: {seq.stream_info(gnss)['rate_hz']}",
            "# the world frame is ENU (x east, y north, z up) with its origin at this datum",
            f"origin_lat_deg: {float_text(datum['origin_lat_deg'])}",
            f"origin_lon_deg: {float_text(datum['origin_lon_deg'])}",
            f"origin_alt_m: {float_text(datum['origin_alt_m'])}",
        ],
    )


def _write_imu(seq: SequenceReader, imu: str, folder: Path) -> None:
    folder.mkdir(parents=True)
    data = seq.imu(imu)
    rows = [_IMU_HEADER]
    for t, w, a in zip(data.t_ns, data.gyro, data.accel, strict=True):
        rows.append(",".join([str(int(t)), *map(float_text, (*w, *a))]))
    _write_lines(folder / "data.csv", rows)
    _write_lines(
        folder / "sensor.yaml",
        [
            "sensor_type: imu",
            f"comment: twinsim {imu}, noise-free ground truth (gyro rad/s, specific force m/s^2)",
            "",
            *_matrix_yaml("T_BS", np.eye(4)),
            f"rate_hz: {seq.stream_info(imu)['rate_hz']}",
            "",
            *_imu_interval_comment(seq.metadata["physics_hz"]),
            "# noise-free simulation: densities and random walks are zero",
            "gyroscope_noise_density: 0.0",
            "gyroscope_random_walk: 0.0",
            "accelerometer_noise_density: 0.0",
            "accelerometer_random_walk: 0.0",
        ],
    )


def _imu_interval_comment(physics_hz: int) -> list[str]:
    """sensor.yaml comment lines saying which interval a sample at stamp t covers."""
    return [
        "# sample at stamp t: gyro = mean angular rate over the physics step ending at t,",
        f"# (t - 1/{physics_hz} s, t], the rate MuJoCo integrated the orientation with;",
        "# accel = specific force at t (instantaneous, not averaged over the sample period)",
    ]


def _write_groundtruth(seq: SequenceReader, T_body_imu: np.ndarray, folder: Path) -> None:
    """Pose, world-frame velocity and (zero) biases of the IMU frame, EuRoC's columns."""
    folder.mkdir(parents=True)
    t_ns, T_world_body = seq.groundtruth("groundtruth_body")
    T_world_imu = T_world_body @ T_body_imu
    v_world = _imu_velocity(seq, t_ns, T_world_body, T_body_imu)
    quat = Rotation.from_matrix(T_world_imu[:, :3, :3]).as_quat(canonical=True)
    rows = [_GT_HEADER]
    for t, T, q, v in zip(t_ns, T_world_imu, quat, v_world, strict=True):
        values = (*T[:3, 3], q[3], q[0], q[1], q[2], *v, *np.zeros(6))
        rows.append(",".join([str(int(t)), *map(float_text, values)]))
    _write_lines(folder / "data.csv", rows)
    _write_lines(
        folder / "sensor.yaml",
        [
            "sensor_type: visual-inertial",
            "comment: twinsim ground truth of the IMU frame (exact, from the simulator)",
            "",
            *_matrix_yaml("T_BS", np.eye(4)),
        ],
    )


def _imu_velocity(
    seq: SequenceReader, t_ns: np.ndarray, T_world_body: np.ndarray, T_body_imu: np.ndarray
) -> np.ndarray:
    """World-frame velocity of the IMU origin: the odometry twist where it shares the ground
    truth's stamps, else central differences of the IMU positions."""
    if "odometry" in seq.streams:
        odom = seq.table("odometry")
        if np.array_equal(odom["t_ns"], t_ns):
            v_body = np.stack([odom[c] for c in ("vx", "vy", "vz")], axis=1)
            w_body = np.stack([odom[c] for c in ("wx", "wy", "wz")], axis=1)
            v_body = v_body + np.cross(w_body, T_body_imu[:3, 3])
            return np.einsum("nij,nj->ni", T_world_body[:, :3, :3], v_body)
    positions = (T_world_body @ T_body_imu)[:, :3, 3]
    if len(t_ns) < 2:
        return np.zeros_like(positions)
    return np.gradient(positions, t_ns.astype(np.float64) * 1e-9, axis=0)


def _matrix_yaml(key: str, T: np.ndarray) -> list[str]:
    values = ", ".join(float_text(v) for v in np.asarray(T, float).ravel())
    return [f"{key}:", "  cols: 4", "  rows: 4", f"  data: [{values}]"]


def _write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
