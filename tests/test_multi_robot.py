"""Several robots in one world: two drones in one apartment, each with its own tour, sensors
and streams, through record, validate, read, replay, export and scene-graph tracks."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import box_room_scene, digest_folder, make_robot
from twinsim.assemble import ROBOT_START_GAP_M
from twinsim.cli import app
from twinsim.config import load_config, validate_config
from twinsim.errors import ConfigError, SequenceError
from twinsim.scene.vocabulary import class_id
from twinsim.sensors.rig import resolve_sensors
from twinsim.sequence import open_sequence, validate_sequence

ROBOTS = ("alpha", "bravo")
ONE_ROBOT_STREAMS = {
    "cam0",
    "imu0",
    "groundtruth_body",
    "groundtruth_cam0",
    "odometry",
    "joint_states",
    "robot_state",
    "contacts",
}
OVERRIDES = ["robots.alpha.kind=drone", "robots.bravo.kind=drone", "people.count=2"]


@pytest.fixture(scope="module")
def two_drones(tmp_path_factory, gl_backend):
    from twinsim.sim import run

    cfg = load_config("tiny", OVERRIDES, seed=4, duration_s=1.0)
    return run(cfg, tmp_path_factory.mktemp("two") / "seq")


def test_two_drones_record_a_valid_sequence_whose_streams_name_their_robot(two_drones):
    report = validate_sequence(two_drones)
    assert report.ok, report.problems
    seq = open_sequence(two_drones)
    assert seq.robots == list(ROBOTS)
    assert seq.metadata["robots"] == [{"name": r, "kind": "drone"} for r in ROBOTS]
    assert set(seq.streams) == {f"{r}.{s}" for r in ROBOTS for s in ONE_ROBOT_STREAMS}
    for name in seq.streams:
        assert seq.stream_info(name)["robot"] == name.split(".")[0]
    # both robots start from the tiny preset's robot and sensors
    cfg = seq.metadata["config"]["robots"]
    assert {r: cfg[r]["min_rooms_visited"] for r in ROBOTS} == {"alpha": 1, "bravo": 1}
    assert all(cfg[r]["sensors"]["cam0"]["width"] == 64 for r in ROBOTS)


def test_robots_start_apart_and_fly_their_own_tours(two_drones):
    seq = open_sequence(two_drones)
    alpha, bravo = (seq.scene.robot_named(r) for r in ROBOTS)
    gap = np.hypot(*np.subtract(alpha.start_pos[:2], bravo.start_pos[:2]))
    assert gap >= ROBOT_START_GAP_M
    assert alpha.path != bravo.path
    bootstrap_s = seq.metadata["config"]["sim"]["bootstrap_s"]
    first = {}
    for robot in (alpha, bravo):
        own = seq.for_robot(robot.name)
        _, T = own.groundtruth()
        first[robot.name] = T[0, :3, 3]
        reach = robot.max_speed_mps * bootstrap_s + 0.05
        assert np.hypot(*(T[0, :2, 3] - robot.start_pos[:2])) <= reach
        state = own.table("robot_state")
        err = np.hypot(state["qpos_x"] - state["q_ref_x"], state["qpos_y"] - state["q_ref_y"])
        assert err.max() < 0.05  # each follows its own set-points
    assert np.linalg.norm(first["alpha"] - first["bravo"]) > 1.0


def test_each_robots_sensors_ride_on_its_own_body(two_drones):
    seq = open_sequence(two_drones)
    for robot in ROBOTS:
        own = seq.for_robot(robot)
        t_body, T_body = own.groundtruth("groundtruth_body")
        t_cam, T_cam = own.groundtruth("groundtruth_cam0")
        assert np.array_equal(t_body, t_cam)
        T_body_cam = np.array(own.stream_info("cam0")["T_body_sensor"])
        assert np.allclose(T_body @ T_body_cam, T_cam, atol=1e-9)
        # the IMU is the robot's: its gyro integrates to that robot's heading change
        imu = own.imu("imu0")
        heading = np.unwrap(np.arctan2(T_body[:, 1, 0], T_body[:, 0, 0]))
        dt = np.diff(imu.t_ns) / 1e9
        turned = np.sum(imu.gyro[:-1, 2] * dt)
        assert turned == pytest.approx(heading[-1] - heading[0], abs=0.02)


def test_spline_imus_of_a_noisy_copy_follow_their_own_robot(two_drones, tmp_path):
    from twinsim.noise import apply_noise, resolve_profile
    from twinsim.sensors.spline_imu import sequence_spline_imu

    noisy = open_sequence(
        apply_noise(two_drones, tmp_path / "noisy", resolve_profile("spline-imu"))
    )
    assert validate_sequence(noisy.path).ok
    seq = open_sequence(two_drones)
    inner = slice(8, -8)  # away from the extrapolated ends
    for robot in ROBOTS:
        assert noisy.stream_info(f"{robot}.imu0_spline")["robot"] == robot
        measured = seq.imu(f"{robot}.imu0")
        spline = sequence_spline_imu(seq, f"{robot}.imu0")
        assert np.median(np.abs(spline.accel[inner] - measured.accel[inner])) < 1e-3
        assert np.median(np.abs(spline.gyro[inner] - measured.gyro[inner])) < 1e-3


def test_a_robots_reader_sees_its_streams_by_their_own_names(two_drones):
    seq = open_sequence(two_drones)
    bravo = seq.for_robot("bravo")
    assert set(bravo.streams) == ONE_ROBOT_STREAMS
    t, T = bravo.groundtruth()
    t_full, T_full = seq.groundtruth("bravo.groundtruth_body")
    assert np.array_equal(t, t_full) and np.array_equal(T, T_full)
    assert np.array_equal(bravo.camera("cam0")[3].rgb, seq.camera("bravo.cam0")[3].rgb)
    assert seq.for_robot().robots == ["alpha"]  # the first one by default
    with pytest.raises(SequenceError, match="no robot 'zulu'; robots: alpha, bravo"):
        seq.for_robot("zulu")


def test_teleport_replay_of_two_robots_is_byte_identical(two_drones, tmp_path):
    from twinsim.replay import replay

    twin = replay(two_drones, tmp_path / "twin", rerender=True)
    want, got = digest_folder(two_drones), digest_folder(twin)
    streams = [k for k in want if k.split("/")[0] not in ("metadata.json", "scene.json")]
    assert {k: got.get(k) for k in streams} == {k: want[k] for k in streams}


def test_control_replay_drives_both_robots_again(two_drones, tmp_path):
    from twinsim.replay import replay

    twin = open_sequence(replay(two_drones, tmp_path / "twin", mode="control"))
    seq = open_sequence(two_drones)
    for robot in ROBOTS:
        _, T = seq.for_robot(robot).groundtruth()
        _, T_twin = twin.for_robot(robot).groundtruth()
        assert np.abs(T_twin[:, :3, 3] - T[:, :3, 3]).max() < 1e-3


def test_a_twin_adds_a_camera_to_one_robot_only(two_drones, tmp_path):
    from twinsim.replay import Variations, replay

    cam = {"width": 32, "height": 24, "rpy_deg": [0, 0, 180]}
    twin = replay(two_drones, tmp_path / "twin", Variations(cameras={"bravo.rear": cam}))
    seq = open_sequence(twin)
    assert "bravo.rear" in seq.streams and "alpha.rear" not in seq.streams
    rear = seq.for_robot("bravo").camera("rear")
    assert (rear.width, rear.height) == (32, 24)
    _, T_body = seq.for_robot("bravo").groundtruth()
    # looking backwards: the optical axis is the body's -x
    assert np.allclose(rear.T_world_cam[0][:3, 2], -T_body[0][:3, 0], atol=1e-9)


def test_export_takes_the_robot_it_is_told(two_drones, tmp_path):
    runner = CliRunner()
    for robot in ("bravo", None):
        out = tmp_path / f"tum-{robot}"
        args = ["export", str(two_drones), "--format", "tum", "--out", str(out)]
        result = runner.invoke(app, [*args, *(["--robot", robot] if robot else [])])
        assert result.exit_code == 0, result.output
        rows = np.loadtxt(out / "groundtruth.txt")
        _, T = open_sequence(two_drones).for_robot(robot or "alpha").groundtruth("groundtruth_cam0")
        assert np.allclose(rows[:, 1:4], T[:, :3, 3], atol=1e-9)
    result = runner.invoke(
        app,
        ["export", str(two_drones), "-f", "tum", "--robot", "zulu", "--out", str(tmp_path / "z")],
    )
    assert result.exit_code == 2
    assert "no robot 'zulu'" in result.output and len(result.output.strip().splitlines()) == 1


def test_scene_graph_tracks_every_robot(two_drones):
    from twinsim.dsg.tracks import sequence_tracks

    tracks = sequence_tracks(open_sequence(two_drones), 10)
    robots = [t for t in tracks if t.kind == "robot"]
    assert [t.name for t in robots] == list(ROBOTS)
    for track in robots:
        _, T = open_sequence(two_drones).for_robot(track.name).groundtruth()
        assert np.array_equal(track.T_world_body, T[::6])


def test_robots_see_each_other_but_not_themselves(gl_backend):
    """Robot a looks along +x at robot b 2 m ahead: b fills a's centre pixel as an instance of
    class robot, at the depth of b's rear face; neither camera sees its own robot."""
    from twinsim.engine.world import World
    from twinsim.model.sections import RenderConfig

    scene = box_room_scene()
    a = make_robot(start=(-1.5, 0.0, 1.2)).model_copy(update={"name": "a", "instance_id": 20})
    b = make_robot(start=(0.5, 0.0, 1.2)).model_copy(update={"name": "b", "instance_id": 21})
    cfg = validate_config({"cameras": {"cam0": {"width": 64, "height": 48}}})
    sensors = (*resolve_sensors(cfg.robot.sensors, "a"), *resolve_sensors(cfg.robot.sensors, "b"))
    scene = scene.model_copy(update={"robots": (a, b), "sensors": sensors})
    world = World(scene, RenderConfig(shadow_size=0), physics_hz=240)
    try:
        for robot in (a, b):
            world.robot(robot.name).set_state(np.array([*robot.start_pos, 0, 0, 0]), np.zeros(6))
        seen = {}
        for robot in (a, b):
            view = world.robot(robot.name)
            frame = view.render("cam0", 64, 48)
            seen[robot.name] = world.maps.geom_instance[frame.geom_ids[frame.geom_ids >= 0]]
            if robot is a:
                centre = frame.geom_ids[24, 32]
                assert world.maps.geom_instance[centre] == b.instance_id
                assert world.maps.instance_class[b.instance_id] == class_id("robot")
                cam_x = view.T_world_cam("cam0")[0, 3]
                rear_x = b.start_pos[0] - b.half_size[0]
                assert frame.depth[24, 32] == pytest.approx(rear_x - cam_x, abs=2e-3)
        assert b.instance_id in seen["a"] and a.instance_id not in seen["a"]
        assert a.instance_id not in seen["b"] and b.instance_id not in seen["b"]
    finally:
        world.close()


def test_a_one_robot_mapping_keeps_plain_stream_names(tmp_path, gl_backend):
    from twinsim.sim import run

    cfg = load_config("tiny", ["robots.solo.kind=drone"], seed=1, duration_s=0.2)
    seq = open_sequence(run(cfg, tmp_path / "solo"))
    assert seq.robots == ["solo"] and "cam0" in seq.streams
    assert seq.stream_info("cam0")["robot"] == "solo"
    assert seq.for_robot("solo") is seq


def test_bad_robot_mappings_get_one_line_naming_the_field():
    with pytest.raises(ConfigError, match=r"robots\.1a: a robot name is a letter"):
        validate_config({"robots": {"1a": {}}})
    with pytest.raises(ConfigError, match=r"robots\.a: unknown robot kind 'dron'; registered"):
        validate_config({"robots": {"a": {"kind": "dron"}}})
    with pytest.raises(ConfigError, match=r"robots\.a\.sensors\.c\.width"):
        validate_config({"robots": {"a": {"sensors": {"c": {"kind": "camera", "width": 1}}}}})
    with pytest.raises(ConfigError, match=r"robots must map one or more robot names"):
        validate_config({"robots": {}})
    with pytest.raises(ConfigError, match=r"robot\.sensors: name the robot's sensors here"):
        validate_config({"robot": {"sensors": {}}, "sensors": {}})
