"""Robots meet the floor as a real robot does: a driving diff-drive's chassis vibrates less
than a real IMU's own noise would show, and a trotting quadruped's feet barely enter the floor.

Vibration bound: a robot-class IMU, Bosch's BMI088 (datasheet typical noise densities: gyro
0.014 deg/s/sqrt(Hz), accelerometer 175 ug/sqrt(Hz)), read at the IMU stream's 240 Hz, shows
white noise over its 120 Hz band of 0.014 * pi / 180 * sqrt(120) = 2.7e-3 rad/s and
175e-6 * 9.81 * sqrt(120) = 0.019 m/s^2 RMS. Vibration is the recorded (noise-free) IMU signal
above 10 Hz (zero-phase 4th-order Butterworth; the planned motion is jerk-limited, far below)
while the chassis stays on one surface, 0.4 s clear of rug edges, whose bumps are real. Before
the contacts were tuned, the chassis rocked on its caster at ~48 Hz: pitch rate 0.050 rad/s and
vertical acceleration 0.12 m/s^2 RMS.

Sinkage bound: a Go1-class foot is a rubber-covered 2 cm ball, which flattens by about 2 mm
at a trot's touchdown load (Hertz, 100-150 N, rubber of a few MPa) and far less standing: a
foot's penetration (MuJoCo's contact distance, recovered from the recorded contact point, the
midpoint of the two surfaces) stays under 3 mm at any instant and under 0.5 mm in the median.
Before, stiff landings on soft contacts sank the feet 6.8 mm (2.3 mm median).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import butter, sosfiltfilt

from twinsim.config import load_config
from twinsim.robots.common.pose_joints import POSE_JOINTS
from twinsim.robots.quadruped.controller import trunk_rotation
from twinsim.robots.quadruped.legs import leg_frames
from twinsim.robots.quadruped.spec import FOOT_RADIUS_M, JOINT_NAMES, LEGS
from twinsim.sequence import open_sequence

IMU_HZ = 240
GYRO_NOISE_RADPS = np.deg2rad(0.014) * np.sqrt(IMU_HZ / 2)  # 2.7e-3 rad/s
ACCEL_NOISE_MPS2 = 175e-6 * 9.81 * np.sqrt(IMU_HZ / 2)  # 0.019 m/s^2
VIBRATION_ABOVE_HZ = 10.0
CLEAR_OF_EDGES_S = 0.4
MAX_SINKAGE_M, MEDIAN_SINKAGE_M = 0.003, 0.0005


@pytest.fixture(scope="module")
def dd_sequence(gl_backend, tmp_path_factory):
    """A 3 s drive of the diff-drive in the tiny world: over a rug, off its edge, a turn."""
    from twinsim.sim import run

    cfg = load_config("tiny", ["robot.kind=diff_drive"], duration_s=3.0)
    return open_sequence(run(cfg, tmp_path_factory.mktemp("dd") / "seq"))


@pytest.fixture(scope="module")
def quad_sequence(gl_backend, tmp_path_factory):
    """A 3 s trot of the quadruped in the tiny world."""
    from twinsim.sim import run

    overrides = ["robot.kind=quadruped", "robot.min_rooms_visited=1", "people.count=0"]
    cfg = load_config("tiny", overrides, duration_s=3.0)
    return open_sequence(run(cfg, tmp_path_factory.mktemp("quad") / "seq"))


def _on_one_surface(t_ns: np.ndarray, seq) -> np.ndarray:
    """(n,) bool: the body's height stays within 0.5 mm for `CLEAR_OF_EDGES_S` either side."""
    gt = seq.table("groundtruth_body")
    z = np.interp(t_ns, gt["t_ns"], gt["z"])
    half = round(CLEAR_OF_EDGES_S * IMU_HZ)
    steady = np.zeros(len(z), dtype=bool)
    for i in range(half, len(z) - half):
        window = z[i - half : i + half + 1]
        steady[i] = window.max() - window.min() < 5e-4
    return steady


def _vibration(signal: np.ndarray, steady: np.ndarray) -> np.ndarray:
    """(3,) RMS of `signal` (n, 3) above `VIBRATION_ABOVE_HZ`, filtered within each steady
    stretch so the bumps between them do not leak in."""
    sos = butter(4, VIBRATION_ABOVE_HZ, "highpass", fs=IMU_HZ, output="sos")
    edges = np.flatnonzero(np.diff(np.concatenate([[0], steady.astype(int), [0]])))
    parts = [
        sosfiltfilt(sos, signal[a:b], axis=0) for a, b in zip(edges[::2], edges[1::2], strict=True)
    ]
    high = np.concatenate(parts)
    return np.sqrt((high**2).mean(axis=0))


def test_a_driving_diff_drive_vibrates_less_than_an_imu_shows(dd_sequence):
    imu = dd_sequence.table("imu0")
    steady = _on_one_surface(imu["t_ns"], dd_sequence)
    assert steady.sum() > IMU_HZ  # over a second of driving and turning on one surface
    gyro = np.stack([imu[f"gyro_{a}"] for a in "xyz"], axis=1)
    accel = np.stack([imu[f"accel_{a}"] for a in "xyz"], axis=1)
    # measured: gyro (5e-4, 5e-4, 7e-5) rad/s, accel (0.001, 0.004, 0.014) m/s^2; the most
    # is a tyre crossing the diagonal of the rug's triangulated top
    assert np.all(_vibration(gyro, steady) < GYRO_NOISE_RADPS)
    assert np.all(_vibration(accel, steady) < ACCEL_NOISE_MPS2)


def test_a_trotting_quadrupeds_feet_barely_enter_the_floor(quad_sequence):
    state = quad_sequence.table("robot_state")
    records = quad_sequence.contacts()
    parts = quad_sequence.metadata["streams"]["contacts"]["parts"]
    legs = [LEGS.index(parts[p].split("_")[1]) for p in records["part"]]  # quad_<leg>_calf
    rows = np.searchsorted(state["t_ns"], records["t_ns"])
    assert np.array_equal(state["t_ns"][rows], records["t_ns"])
    pose = np.stack([state[f"qpos_{j}"] for j in POSE_JOINTS], axis=1)[rows]
    joints = np.stack([state[f"qpos_{j}"] for j in JOINT_NAMES], axis=1)[rows]
    sinkage = []
    for p, q, leg, z in zip(pose, joints.reshape(-1, 4, 3), legs, records["z"], strict=True):
        foot = p[2] + leg_frames(q).foot[leg] @ trunk_rotation(p)[2]
        bottom = foot - FOOT_RADIUS_M
        sinkage.append(2.0 * (z - bottom))  # the contact point is midway into the floor
    sinkage = np.array(sinkage)
    assert len(sinkage) > 100
    # measured: 1.3 mm at most, 0.3 mm in the median
    assert sinkage.max() < MAX_SINKAGE_M
    assert np.median(sinkage) < MEDIAN_SINKAGE_M
