"""Live state is the recorded state, and the recorded state is the body frame's motion.

One apartment holds a robot of every kind the apartment takes (drone, omni, diff_drive,
quadruped, arm, a user's MJCF wheelbot); the car has a town of its own. Each live path (a
`Session`, `twinsim serve`, the gym Env; the ROS 1 bridge in `test_ros1_bridge.py`) drives
them, and every pose and velocity it reports must equal, field by field, the `groundtruth_body`
and `odometry` rows the same step recorded. The recorded odometry must be the backward
difference of the recorded poses (`live_truth.odometry_vs_pose_difference`), which a velocity
taken at the centre of mass fails by centimetres per second, and GNSS velocity the difference
of the recorded antenna positions.
"""

from __future__ import annotations

import numpy as np
import pytest

from live_truth import (
    KINDS,
    MOBILE,
    SETS,
    WHEELBOT,
    RecordedTruth,
    odometry_vs_pose_difference,
    served,
)
from twinsim import Session
from twinsim.closedloop.gym_env import TwinsimNavEnv
from twinsim.config import load_config
from twinsim.sequence import open_sequence

STEPS = 12
#: (linear m/s, angular rad/s) between odometry and the backward difference of the poses:
#: exact to rounding for a frame on the pose joints (the wheelbot's body frame is a site on
#: its chassis, carried by the yaw: O(h) there); a chain of hinges (the drone's attitude)
#: agrees to the rotation's change over one step. A centre-of-mass velocity is off by
#: |ω × r|: 1-2 cm/s in the drives here.
TOLERANCE = (1e-4, 2e-3)
#: the arm's hand is carried by seven hinges: O(h) of its acceleration
TOLERANCE_OF = {"a": (5e-3, 1e-2)}


def _command(name: str, first) -> dict:
    """Each robot's command: mobile ones drive forward and turn (the drone climbs too), the
    arm's hand goes 4 cm down."""
    if name == "d":
        return {"velocity": {"vx": 0.3, "vz": 0.1, "wz": 0.3}}
    if name == "a":
        x, y, z = first.robots["a"].T_world_body[:3, 3]
        return {"tool": {"x": x, "y": y, "z": z - 0.04}}
    return {"velocity": {"vx": 0.25, "wz": 0.4}}


def _drive(step, first) -> list:
    """The first observations and `STEPS` steps driven by `_command`."""
    commands = {name: _command(name, first) for name in KINDS}
    return [first, *(step(commands) for _ in range(STEPS))]


@pytest.fixture(scope="module")
def config():
    return load_config("tiny", SETS, seed=3, duration_s=6.0)


@pytest.fixture(scope="module")
def session_episode(config, tmp_path_factory, gl_backend):
    session = Session(config, tmp_path_factory.mktemp("session"))
    observations = _drive(session.step, session.reset())
    return observations, open_sequence(session.close())


def _assert_observed_as_recorded(observations, seq, names=KINDS) -> None:
    """Every robot's pose and velocity in every observation equals its recorded rows; the
    last instant (not recorded: the episode ends there) is the only one left out."""
    for name in names:
        truth = RecordedTruth.of(seq, name)
        checked = [
            truth.check(o.t_ns, o.robots[name].T_world_body, o.robots[name].velocity, name)
            for o in observations
        ]
        assert all(checked[:-1]), f"{name}: observations at stamps with no recorded row"


def test_session_observations_are_the_recorded_rows_for_every_kind(session_episode):
    observations, seq = session_episode
    _assert_observed_as_recorded(observations, seq)
    for name in MOBILE:  # the check is not vacuous: every mobile robot moved
        moved = observations[-1].robots[name].T_world_body[:3, 3]
        assert np.linalg.norm(moved - observations[0].robots[name].T_world_body[:3, 3]) > 0.01
    arm = [o.robots["a"].velocity[:3] for o in observations]
    assert max(np.linalg.norm(v) for v in arm) > 0.01  # the hand was moving


def test_a_step_returns_the_readings_recorded_during_it(session_episode):
    observations, seq = session_episode
    for name in KINDS:
        recorded = seq.for_robot(name).table("odometry")
        rows = np.concatenate([o.robots[name].tables["odometry"].values for o in observations])
        stamps = np.concatenate([o.robots[name].tables["odometry"].t_ns for o in observations])
        np.testing.assert_array_equal(stamps, recorded["t_ns"])
        columns = [c for c in recorded if c != "t_ns"]
        np.testing.assert_array_equal(rows, np.stack([recorded[c] for c in columns], axis=1))


def test_recorded_odometry_is_the_motion_of_the_body_frame_for_every_kind(session_episode):
    _, seq = session_episode
    for name in KINDS:
        linear, angular = odometry_vs_pose_difference(seq, name).max(axis=0)
        linear_tol, angular_tol = TOLERANCE_OF.get(name, TOLERANCE)
        assert linear < linear_tol, f"{name}: linear {linear:.2e} m/s"
        assert angular < angular_tol, f"{name}: angular {angular:.2e} rad/s"


def test_gnss_velocity_is_the_difference_of_its_recorded_positions(session_episode):
    _, seq = session_episode
    gnss = seq.for_robot("w").table("gnss0")
    p = np.stack([gnss[c] for c in ("x", "y", "z")], axis=1)
    v = np.stack([gnss[c] for c in ("vx", "vy", "vz")], axis=1)
    h = np.diff(gnss["t_ns"]) * 1e-9
    backward = np.diff(p, axis=0) / h[:, None]
    # the antenna sits off the body frame's origin: carried by the yaw, O(h) from the difference
    assert np.abs(v[1:] - backward).max() < 2e-3
    assert np.abs(v).max() > 0.05


@pytest.mark.slow
def test_served_observations_are_the_recorded_rows_for_every_kind(config, tmp_path, gl_backend):
    with served(Session(config, tmp_path / "episodes")) as (_, client):
        observations = _drive(client.step, client.reset(seed=3))
        path = client.close()
    _assert_observed_as_recorded(observations, open_sequence(path))


#: every kind the gym drives (it acts with velocity commands: the arm takes none)
GYM_KINDS = {
    "drone": ("tiny", []),
    "omni": ("tiny", []),
    "diff_drive": ("tiny", []),
    "quadruped": ("tiny", []),
    "mjcf": ("tiny", [f"robot.path={WHEELBOT}", "robot.base=planar", "robot.mount=cam_site"]),
    "car": ("town", ["traffic.vehicles=0"]),
}


@pytest.mark.parametrize("kind", GYM_KINDS)
def test_gym_observations_are_the_recorded_rows(kind, tmp_path, gl_backend):
    """The gym Env's `velocity` is the recorded odometry at the step's stamp (float32), its
    `depth` the latest frame recorded during the step (before its stamp) and its `pointgoal`
    what the recorded pose gives."""
    preset, extra = GYM_KINDS[kind]
    sets = ["sensors.cam0.width=32", "sensors.cam0.height=24", "sim.duration_s=4", *extra]
    env = TwinsimNavEnv(preset, sets, robot_kind=kind, record_dir=tmp_path)
    stamps = []
    step = env.session.step

    def spied(commands):
        observations = step(commands)
        stamps.append(observations.t_ns)
        return observations

    env.session.step = spied
    env.reset(seed=3)
    action = np.full(env.action_space.shape, 0.5, np.float32)
    results = [env.step(action)[0] for _ in range(8)]
    goal = env.task.goal
    env.close()
    seq = open_sequence(tmp_path / "episode-0000")
    truth = RecordedTruth.of(seq)
    camera = seq.camera("cam0")
    frame_t = np.array([camera[i].t_ns for i in range(len(camera))])
    # the episode ends at the last step's instant, which is not recorded
    for t_ns, observed in zip(stamps[:-1], results[:-1], strict=True):
        np.testing.assert_array_equal(observed["velocity"], truth.twists[t_ns].astype(np.float32))
        T = truth.poses[t_ns]
        offset = goal - T[:2, 3]
        yaw = np.arctan2(T[1, 0], T[0, 0])
        bearing = np.remainder(np.arctan2(offset[1], offset[0]) - yaw + np.pi, 2 * np.pi) - np.pi
        np.testing.assert_allclose(
            observed["pointgoal"], [np.hypot(*offset), bearing], rtol=0, atol=1e-5
        )
        latest = camera[int(np.searchsorted(frame_t, t_ns, side="left")) - 1]
        np.testing.assert_array_equal(observed["depth"][..., 0], latest.depth)
    assert np.abs(results[-1]["velocity"]).max() > 0.05


#: the car, in a town of its own, with poses and odometry at the physics rate
CAR_SETS = [
    *("robot.kind=car", "traffic.vehicles=2", "sensors.cam0.width=32"),
    *("sensors.cam0.height=24", "groundtruth.pose_rate_hz=240"),
    "groundtruth.odometry_rate_hz=240",
]


def test_car_session_observations_are_the_recorded_rows(tmp_path, gl_backend):
    session = Session(load_config("town", CAR_SETS, seed=3, duration_s=4.0), tmp_path)
    first = session.reset()
    observations = [first, *(session.step({"velocity": {"vx": 3.0}}) for _ in range(STEPS))]
    seq = open_sequence(session.close())
    _assert_observed_as_recorded(observations, seq, names=("robot",))
    assert np.all(odometry_vs_pose_difference(seq).max(axis=0) < TOLERANCE)
    assert np.linalg.norm(observations[-1].robots["robot"].velocity[:3]) > 0.5


def test_served_car_observations_are_the_recorded_rows(tmp_path, gl_backend):
    cfg = load_config("town", CAR_SETS, seed=3, duration_s=4.0)
    with served(Session(cfg, tmp_path / "episodes")) as (_, client):
        first = client.reset(seed=3)
        observations = [first, *(client.step({"velocity": {"vx": 3.0}}) for _ in range(STEPS))]
        path = client.close()
    _assert_observed_as_recorded(observations, open_sequence(path), names=("robot",))
    assert np.linalg.norm(observations[-1].robots["robot"].velocity[:3]) > 0.5
