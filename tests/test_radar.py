"""The `radar` sensor: ranges against MuJoCo's own rays, Doppler velocity against the recorded
twist and an object's finite-differenced motion, validation, ROS bags and teleport replays."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from rosbags.highlevel import AnyReader

from conftest import ROOM_X, box_room_scene, digest_folder, place
from test_export_rosbag1 import ROS_PYTHON, _check_ros1_installed, _ros_env
from twinsim.config import load_config
from twinsim.export import export_sequence
from twinsim.export.ros_messages import RADAR_FIELDS
from twinsim.geometry import pose_to_T
from twinsim.model.scene import FlyingObjectSpec, GeomSpec, Keyframe
from twinsim.model.sections import RenderConfig
from twinsim.sensors.base import RecordingContext
from twinsim.sensors.kinds.radar import Radar, RadarConfig, RadarRecorder
from twinsim.sequence import open_sequence, validate_sequence
from twinsim.sim import run

HZ = 240
RADAR = (
    "sensors.radar0.kind=radar",
    "sensors.radar0.horizontal_fov_deg=90",
    "sensors.radar0.vertical_fov_deg=30",
    "sensors.radar0.points_per_second=4000",
    "sensors.radar0.rpy_deg=[0,5,10]",
    "sensors.radar0.pos=[0.1,0.05,0.1]",
    "sensors.cam0.width=32",
    "sensors.cam0.height=24",
)
BALL = FlyingObjectSpec(  # flies along −x, straight at a radar at the origin looking along +x
    instance_id=20,
    name="ball",
    semantic_class="ball",
    geoms=(GeomSpec(type="sphere", size=(0.3, 0.3, 0.3), material="grey"),),
    keyframes=(
        Keyframe(t_s=0.0, pos=(2.6, 0.0, 1.2), quat=(1, 0, 0, 0)),
        Keyframe(t_s=2.0, pos=(1.0, 0.0, 1.2), quat=(1, 0, 0, 0)),
    ),
)


class _NoWriter:
    """The writer a recorder declares its stream on, when only its scans are looked at."""

    def add_files(self, name: str, index_columns) -> None:
        pass


@pytest.fixture(scope="module")
def room(gl_backend):
    """conftest's box room with the ball, and a wide radar recorder on the drone."""
    from twinsim.engine.world import World

    cfg = RadarConfig(horizontal_fov_deg=100, vertical_fov_deg=40, points_per_second=8000)
    sensor = Radar().spec("radar0", cfg)
    scene = box_room_scene().model_copy(update={"sensors": (sensor,), "flying_objects": (BALL,)})
    world = World(scene, RenderConfig(shadow_size=0), physics_hz=HZ)
    view = world.robot()
    ctx = RecordingContext(world=view, writer=_NoWriter(), physics_hz=HZ, pose_period=4)
    recorder = RadarRecorder(scene.sensors[0], ctx)
    yield world, recorder
    recorder.finish()
    world.close()


def _scan_at(world, recorder, k: int, yaw: float):
    """The radar's scan of step k with the drone at rest at the room's centre, turned by yaw."""
    place(world, (0.0, 0.0, 1.1), yaw=yaw)
    world.pose_actors(k / HZ)
    world.step_begin()
    return recorder.scan(k, round(k * 1e9 / HZ))


def _mujoco_rays(world, origin, dirs):
    """The reference: a plain `mj_ray` per direction into the whole world (not the drone)."""
    import mujoco

    geomid = np.zeros(1, np.int32)
    hits = [
        mujoco.mj_ray(world.model, world.data, origin, d, None, 1, world.robot().body_id, geomid)
        for d in dirs
    ]
    return np.array(hits)


def test_static_world_still_radar_ranges_are_mujocos_rays_and_doppler_is_zero(room):
    world, recorder = room
    scan = _scan_at(world, recorder, 0, yaw=np.pi)  # facing the west wall, away from the ball
    assert len(scan) == 400  # 8000 points/s at 20 Hz, a closed room: every ray returns
    T = scan.T_world_radar
    world_dirs = scan.directions @ T[:3, :3].T
    want = _mujoco_rays(world, T[:3, 3], world_dirs)
    np.testing.assert_allclose(scan.range, want, rtol=0, atol=1e-5)  # float32 storage
    assert (scan.velocity == 0.0).all() and not scan.dynamic.any()
    assert np.isin(scan.instance, [1, 2, 4, 5, 6, 8]).all()  # floor, ceiling, walls, table
    # the angles lie in the field of view, and the same step draws the same rays
    assert np.abs(scan.azimuth).max() <= np.deg2rad(50) and np.abs(scan.elevation).max() <= 0.35
    again = _scan_at(world, recorder, 0, yaw=np.pi)
    assert np.array_equal(again.azimuth, scan.azimuth) and np.array_equal(again.range, scan.range)
    other = _scan_at(world, recorder, 12, yaw=np.pi)
    assert not np.array_equal(other.azimuth, scan.azimuth)


def test_an_approaching_object_has_negative_doppler_from_its_finite_differenced_motion(room):
    world, recorder = room
    k = 240  # t = 1 s: the ball mid-flight, ~1.8 m ahead
    centre = {}
    for step in (k - 1, k + 1):  # the ball's recorded (posed) centre one step either side
        world.pose_actors(step / HZ)
        world.step_begin()
        centre[step] = world.data.xpos[world.model.body("fly20").id].copy()
    v_ball = (centre[k + 1] - centre[k - 1]) * HZ / 2
    assert v_ball[0] < -0.5 and abs(v_ball[1]) < 1e-9
    scan = _scan_at(world, recorder, k, yaw=0.0)
    ball = scan.instance == BALL.instance_id
    assert ball.sum() >= 10 and scan.dynamic[ball].all() and not scan.dynamic[~ball].any()
    world_dirs = scan.directions @ scan.T_world_radar[:3, :3].T
    want = world_dirs[ball] @ v_ball  # a sphere that neither turns nor grows: one velocity
    assert (scan.velocity[ball] < -0.5).all()
    np.testing.assert_allclose(scan.velocity[ball], want, rtol=0, atol=2e-4)
    assert (scan.velocity[~ball] == 0.0).all()  # the walls behind it stand still
    assert scan.range[ball].max() < ROOM_X[1]


@pytest.fixture(scope="module")
def radar_run(tmp_path_factory, gl_backend):
    return run(
        load_config("tiny", RADAR, seed=3, duration_s=1.5), tmp_path_factory.mktemp("r") / "s"
    )


def test_a_flying_radar_sees_the_static_world_move_at_minus_its_own_velocity(radar_run):
    seq = open_sequence(radar_run)
    assert validate_sequence(radar_run).ok
    radar, odom = seq.radar("radar0"), seq.table("odometry")
    assert len(radar) == 30 and (radar.counts == 200).all()  # 1.5 s at 20 Hz, 4000 points/s
    info = seq.stream_info("radar0")
    T_body_radar = np.asarray(info["T_body_sensor"])
    rows = np.searchsorted(odom["t_ns"], radar.t_ns)
    assert np.array_equal(odom["t_ns"][rows], radar.t_ns)
    moving = 0
    for scan, row in zip(radar, rows, strict=True):
        v = np.array([odom[c][row] for c in ("vx", "vy", "vz")])
        w = np.array([odom[c][row] for c in ("wx", "wy", "wz")])
        T_body = pose_to_T(
            [odom[c][row] for c in "xyz"],
            [odom[c][row] for c in ("qw", "qx", "qy", "qz")],
        )
        np.testing.assert_allclose(scan.T_world_radar, T_body @ T_body_radar, atol=1e-6)
        v_radar = T_body[:3, :3] @ (v + np.cross(w, T_body_radar[:3, 3]))
        world_dirs = scan.directions @ scan.T_world_radar[:3, :3].T
        assert not scan.dynamic.any()
        np.testing.assert_allclose(scan.velocity, -(world_dirs @ v_radar), rtol=0, atol=1e-4)
        moving += np.linalg.norm(v_radar) > 0.1
    assert moving >= 10  # the drone flew: not a trivial match


def test_validate_rejects_a_tampered_scan(radar_run, tmp_path):
    import shutil

    copy = shutil.copytree(radar_run, tmp_path / "copy")
    file = copy / "radar0" / "detections" / "000004.npy"
    rec = np.load(file)
    rec["range"][3] = 250.0  # beyond range_m = 100
    np.save(file, rec)
    problems = validate_sequence(copy).problems
    assert "radar0/detections/000004.npy: range outside (0, 100.0] m" in problems
    assert len(problems) == 2 and "content changed" in problems[1]  # checksums.csv saw it too
    np.save(file, rec[:-1])
    assert "199 detections, data.csv says 200" in " ".join(validate_sequence(copy).problems)
    (copy / "radar0" / "detections" / "000099.npy").write_bytes(b"")
    assert any("000099.npy: not listed" in p for p in validate_sequence(copy).problems)


def test_teleport_replay_rerecords_the_radar_byte_for_byte(radar_run, tmp_path):
    from twinsim.replay import replay

    twin = replay(radar_run, tmp_path / "twin")
    recorded, replayed = digest_folder(radar_run), digest_folder(twin)
    files = [p for p in recorded if p.startswith("radar0/")]
    assert len(files) == 31 and all(recorded[p] == replayed[p] for p in files)


def test_rosbag2_carries_the_radar_as_pointcloud2(radar_run, tmp_path):
    bag = export_sequence(radar_run, "rosbag2", tmp_path / "bag2")
    radar = open_sequence(radar_run).radar("radar0")
    with AnyReader([bag]) as reader:
        connections = [c for c in reader.connections if c.topic == "/radar0/detections"]
        assert [c.msgtype for c in connections] == ["sensor_msgs/msg/PointCloud2"]
        msgs = [reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages(connections)]
    assert [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in msgs] == list(radar.t_ns)
    names = [f.name for f in msgs[0].fields]
    assert names == list(RADAR_FIELDS)  # x y z range azimuth elevation velocity instance ...
    assert names[:9] == ["x", "y", "z", "range", "azimuth", "elevation", "velocity", "instance",
                         "semantic"]  # fmt: skip
    scan = radar[7]
    cloud = np.frombuffer(bytes(msgs[7].data), np.uint8).reshape(msgs[7].width, -1)
    floats = cloud[:, :28].copy().view("<f4")
    np.testing.assert_allclose(floats[:, :3], scan.points, atol=1e-5)
    assert np.array_equal(floats[:, 3], scan.range) and np.array_equal(floats[:, 6], scan.velocity)
    assert msgs[7].header.frame_id == "radar0"


READ_CLOUDS = r"""
import json, sys, rosbag
from sensor_msgs import point_cloud2
out = []
for topic, msg, t in rosbag.Bag(sys.argv[1]).read_messages(topics=[sys.argv[2]]):
    fields = [f.name for f in msg.fields]
    rows = list(point_cloud2.read_points(msg, field_names=("range", "velocity", "instance")))
    out.append([msg._type, msg.header.stamp.to_nsec(), msg.header.frame_id, fields, rows])
print(json.dumps(out))
"""


@pytest.mark.ros
def test_rosbag1_radar_read_by_debian_rosbag(radar_run, tmp_path):
    _check_ros1_installed()
    bag = export_sequence(radar_run, "rosbag1", tmp_path / "bag1")
    done = subprocess.run(
        [ROS_PYTHON, "-c", READ_CLOUDS, str(bag), "/radar0/detections"],
        capture_output=True, text=True, env=_ros_env(tmp_path), check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    clouds = json.loads(done.stdout)
    radar = open_sequence(radar_run).radar("radar0")
    assert [c[1] for c in clouds] == radar.t_ns.tolist()
    assert {c[0] for c in clouds} == {"sensor_msgs/PointCloud2"} and clouds[0][2] == "radar0"
    assert clouds[0][3][3:7] == ["range", "azimuth", "elevation", "velocity"]
    scan = radar[5]
    rows = np.array(clouds[5][4])
    assert np.array_equal(rows[:, 0], scan.range) and np.array_equal(rows[:, 1], scan.velocity)
    assert np.array_equal(rows[:, 2], scan.instance)


def test_config_defaults_are_carlas_rays_per_scan():
    spec = Radar().spec("r", RadarConfig())
    assert (spec.rays_per_scan, spec.range_m, spec.rate_hz) == (75, 100.0, 20)
    assert (spec.horizontal_fov_deg, spec.vertical_fov_deg) == (30.0, 10.0)
