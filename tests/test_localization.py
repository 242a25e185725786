"""SLAM in the loop: a navigator localised by an estimator on the live sensor stream.

The live estimate is checked against an independent derivation: the same estimator run offline
on the recorded episode (`twinsim bench`'s method) gives the same poses frame by frame; the
mounting that carries the body's pose to each sensor agrees with the frames' own poses; the
reported drift is the distance between the estimate and the recorded ground truth; navbench
refuses a localizer it does not know, or one whose sensor the robot lacks, in one line.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from twinsim.closedloop.exploration import ExplorationConfig, ExplorationTask
from twinsim.closedloop.session import Session
from twinsim.closedloop.tasks import PointGoalConfig, PointGoalTask, body_yaw
from twinsim.config import load_config
from twinsim.eval.io import read_tum
from twinsim.eval.methods.kiss_icp import KissIcpOdometry
from twinsim.eval.methods.rgbd_odometry import RgbdOdometry
from twinsim.navigation.api import run_episode
from twinsim.navigation.localization import (
    KissIcpLocalizer,
    RgbdOdometryLocalizer,
    as_estimated,
    mountings,
    twist_motion,
)
from twinsim.registries import LOCALIZERS, NAVIGATORS
from twinsim.sequence import open_sequence

CAMERA = ["robot.kind=omni", "sensors.cam0.width=160", "sensors.cam0.height=120"]
CAMERA += ["sensors.cam0.rate_hz=30"]
LIDAR = ["sensors.lidar0.kind=lidar", "sensors.lidar0.model=vlp-16", "sensors.lidar0.rate_hz=10"]
LIDAR += ["sensors.lidar0.pos=[0.0,0.0,0.5]"]
GOAL = PointGoalConfig(min_distance_m=2.0, max_distance_m=4.0)
SEED = 1
TWINSIM = str(Path(sys.executable).with_name("twinsim"))


class Recording:
    """A localizer that remembers each estimate it gave (stamp, pose), to compare with the
    offline method."""

    def __init__(self, inner) -> None:
        self.inner, self.log = inner, []

    def reset(self, context, first) -> None:
        self.inner.reset(context, first)
        self.context = context

    def update(self, robot):
        estimate = self.inner.update(robot)
        if estimate is not None:
            self.log.append((estimate[1], estimate[0].copy()))
        return estimate


class Seeing:
    """The planner, remembering the pose it was handed at each step (t_ns, T_world_body)."""

    def __init__(self) -> None:
        self.inner, self.seen = NAVIGATORS.get("planner").factory(), []

    def reset(self, context) -> None:
        self.inner.reset(context)

    def act(self, obs, info):
        self.seen.append((int(obs.t_ns), obs.robots["robot"].T_world_body.copy()))
        return self.inner.act(obs, info)


def _episode(tmp_path: Path, overrides: list[str], localizer, task=None, navigator=None):
    cfg = load_config("tiny", overrides, duration_s=12)
    navigator = navigator or Seeing()
    with Session(cfg, tmp_path / "eps") as session:
        result = run_episode(
            session,
            task or PointGoalTask(GOAL),
            navigator,
            SEED,
            out=tmp_path / "ep",
            localizer=localizer,
        )
        mounts = mountings(localizer.context)
    return result, mounts, getattr(navigator, "seen", None)


def _offline(method, episode: Path, folder: Path) -> dict[int, np.ndarray]:
    """t_ns → the offline method's pose on the recorded episode (its first reading's frame)."""
    folder.mkdir()
    path = method.run(episode, folder, 0, lambda line: None)
    estimate = read_tum(path)
    return {int(t): T for t, T in zip(estimate.t_ns, estimate.poses, strict=True)}


@pytest.fixture(scope="module")
def rgbd_episode(tmp_path_factory, gl_backend):
    tmp = tmp_path_factory.mktemp("rgbd")
    localizer = Recording(RgbdOdometryLocalizer())
    result, mounts, seen = _episode(tmp, CAMERA, localizer)
    return tmp, result, mounts, localizer, seen


def test_live_rgbd_odometry_equals_the_offline_method_on_the_recorded_episode(rgbd_episode):
    """Frame by frame, the estimate the navigator got is the pose `twinsim bench`'s
    rgbd_odometry computes from the recorded frames (same frames, same algorithm)."""
    tmp, result, mounts, localizer, _ = rgbd_episode
    offline = _offline(RgbdOdometry(), result.path, tmp / "offline")
    T_body_cam = mounts["cam0"]
    start = None
    compared = 0
    for t_ns, T_est in localizer.log:
        T_cam = T_est @ T_body_cam  # the camera pose the navigator believed in
        start = T_cam if start is None else start
        if t_ns in offline:
            np.testing.assert_allclose(np.linalg.inv(start) @ T_cam, offline[t_ns], atol=1e-6)
            compared += 1
    assert compared >= 0.9 * len(offline) and compared > 100


def test_the_reported_drift_is_the_estimate_against_the_ground_truth(rgbd_episode):
    """The summary's drift is the distance between the pose the navigator was handed and the
    recorded ground truth at the same stamp; the robot moved and the estimate stayed within
    0.3 m."""
    _, result, _, _, seen = rgbd_episode
    t_true, T_true = open_sequence(result.path).groundtruth("groundtruth_body")
    at = {int(t): T for t, T in zip(t_true, T_true, strict=True)}
    errors = [np.linalg.norm(T[:3, 3] - at[t][:3, 3]) for t, T in seen]
    drift = result.summary["localization"]
    assert drift["localizer"] == "Recording"
    assert drift["drift_m"] == pytest.approx(errors[-1], abs=1e-9)
    assert drift["max_drift_m"] == pytest.approx(max(errors), abs=1e-9)
    assert drift["path_length_m"] > 1.5
    assert 0.0 < drift["drift_m"] < 0.3 and drift["ate_rmse_m"] <= drift["max_drift_m"]
    assert result.summary["metrics"]["success"]  # the planner still got there


def test_the_twist_carries_a_pose_along_the_recorded_motion(rgbd_episode):
    """`twist_motion` of the recorded body twist over each odometry interval takes the
    recorded pose to the next one: within 5 % of the step's motion (the twist changes within
    the interval) and exact for the robot at rest."""
    _, result, _, _, _ = rgbd_episode
    odometry = open_sequence(result.path).table("odometry")
    t_ns = odometry["t_ns"]
    _, T = open_sequence(result.path).groundtruth("odometry")
    twist = np.stack([odometry[c] for c in ("vx", "vy", "vz", "wx", "wy", "wz")], axis=1)
    errors, steps = [], []
    for i in range(len(t_ns) - 1):
        dt = (t_ns[i + 1] - t_ns[i]) / 1e9
        mid = (twist[i] + twist[i + 1]) / 2
        predicted = T[i] @ twist_motion(mid, dt)
        errors.append(np.linalg.norm(predicted[:3, 3] - T[i + 1][:3, 3]))
        steps.append(np.linalg.norm(T[i + 1][:3, 3] - T[i][:3, 3]))
    errors, steps = np.array(errors), np.array(steps)
    moving = steps > 1e-3
    assert moving.sum() > 100
    assert np.median(errors[moving] / steps[moving]) < 0.05
    np.testing.assert_array_equal(twist_motion(np.zeros(6), 0.1), np.eye(4))
    turn = twist_motion(np.array([1.0, 0.0, 0.0, 0.0, 0.0, np.pi / 2]), 1.0)
    np.testing.assert_allclose(turn[:3, 3], [2 / np.pi, 2 / np.pi, 0.0], atol=1e-12)


def test_the_mounting_carries_the_body_pose_onto_each_frame(rgbd_episode, gl_backend):
    """With the robot still after the bootstrap, the body's pose carried through the camera's
    mounting is the pose the frame was rendered at; `as_estimated` replaces every pose."""
    _, _, mounts, _, _ = rgbd_episode
    cfg = load_config("tiny", CAMERA, duration_s=2)
    with Session(cfg, record=False) as session:
        obs = session.reset(seed=SEED)
    robot = obs.robots["robot"]
    frame = robot.latest_frame("cam0")
    np.testing.assert_allclose(robot.T_world_body @ mounts["cam0"], frame.T_world_cam, atol=1e-6)
    shifted = robot.T_world_body.copy()
    shifted[:3, 3] += (1.0, -2.0, 0.0)
    seen = as_estimated(robot, shifted, obs.t_ns, mounts)
    np.testing.assert_array_equal(seen.T_world_body, shifted)
    np.testing.assert_allclose(
        seen.latest_frame("cam0").T_world_cam, shifted @ mounts["cam0"], atol=1e-6
    )
    assert seen.latest_frame("cam0").rgb is frame.rgb  # the readings themselves are the sensor's
    np.testing.assert_array_equal(robot.T_world_body, obs.robots["robot"].T_world_body)


class Oracle:
    """A perfect estimator at the camera's frames: each frame's true body pose and stamp."""

    sensor = "camera"

    def reset(self, context, first) -> None:
        self.context = context
        self.T_cam_body = np.linalg.inv(mountings(context)["cam0"])

    def update(self, robot):
        frame = robot.latest_frame("cam0")
        return None if frame is None else (frame.T_world_cam @ self.T_cam_body, int(frame.t_ns))


class SeeingFrames(Seeing):
    """The planner, remembering each frame's pose as it was handed (t_ns → T_world_cam)."""

    def act(self, obs, info):
        for frame in obs.robots["robot"].frames.get("cam0") or []:
            self.frames[int(frame.t_ns)] = frame.T_world_cam.copy()
        return super().act(obs, info)


def test_a_perfect_estimator_hands_every_frame_its_true_pose(tmp_path, gl_backend):
    """With an estimate that is exact at each frame, carrying it to the step's end by the twist
    and back to each frame's stamp gives every frame its recorded pose: the navigator's frames
    are placed where they were taken, not where the robot is at the end of the step."""
    navigator = SeeingFrames()
    navigator.frames = {}
    result, _, _ = _episode(tmp_path, CAMERA, Oracle(), navigator=navigator)
    camera = open_sequence(result.path).camera("cam0")
    true = {int(f.t_ns): f.T_world_cam for f in camera}
    assert len(navigator.frames) > 100 and result.summary["localization"]["path_length_m"] > 1.5
    worst = max(np.linalg.norm(T[:3, 3] - true[t][:3, 3]) for t, T in navigator.frames.items())
    assert worst < 1e-9


@pytest.mark.slow
def test_live_kiss_icp_equals_the_offline_method_on_the_recorded_episode(tmp_path, gl_backend):
    """KISS-ICP in the loop on a VLP-16, exploring (turning on the spot as much as driving):
    per sweep the same poses as the offline method, and a drift of centimetres."""
    localizer = Recording(KissIcpLocalizer())
    explore = ExplorationTask(ExplorationConfig())
    result, mounts, _ = _episode(
        tmp_path, [*CAMERA, *LIDAR], localizer, explore, NAVIGATORS.get("frontier").factory()
    )
    offline = _offline(KissIcpOdometry(), result.path, tmp_path / "offline")
    start, compared = None, 0
    for t_ns, T_est in localizer.log:
        T_lidar = T_est @ mounts["lidar0"]
        start = T_lidar if start is None else start
        if t_ns in offline:
            np.testing.assert_allclose(np.linalg.inv(start) @ T_lidar, offline[t_ns], atol=1e-6)
            compared += 1
    assert compared >= 0.9 * len(offline) and compared > 30
    drift = result.summary["localization"]
    assert drift["path_length_m"] > 1.0 and drift["drift_m"] < 0.1
    # each estimate is stamped where KISS-ICP's deskewing puts the sweep, its latest point:
    # there its heading is the true one (at the sweep's start it lags a turn by 0.1 s)
    t_true, T_true = open_sequence(result.path).groundtruth("groundtruth_body")
    errors = [
        abs(math.remainder(body_yaw(T) - body_yaw(T_true[np.argmin(abs(t_true - t))]), 2 * math.pi))
        for t, T in localizer.log
    ]
    assert math.degrees(float(np.median(errors))) < 1.0


def test_every_localizer_is_registered_with_the_sensor_it_reads():
    assert LOCALIZERS.get("ground_truth").factory() is None
    assert LOCALIZERS.get("rgbd_odometry").sensor == "camera"
    assert LOCALIZERS.get("kiss_icp").sensor == "lidar"


@pytest.mark.parametrize(
    ("localization", "says"),
    [
        ("slam9000", "--localization: unknown localizer 'slam9000'"),
        ("kiss_icp", "--localization kiss_icp: the robot has no lidar"),
    ],
)
def test_navbench_refuses_a_localizer_it_cannot_run_in_one_line(tmp_path, localization, says):
    args = [TWINSIM, "navbench", "--methods", "planner", "--worlds", "apartment", "--preset"]
    args += ["tiny", "--localization", localization, "--out", str(tmp_path / "nb")]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "nb").exists()
