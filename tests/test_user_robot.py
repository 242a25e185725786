"""A user's robot file (`kind: mjcf`, `kind: urdf`) compiled by MuJoCo: its sensors ride the
named site, its joints follow their scripts, a free base follows its planned tour, the file
(and its mesh) is kept in scene.json so a replay needs no file, and bad files fail in one line.

The test writes its own robot files: an MJCF with a free base, a pan-tilt head carrying a
`cam_site`, one motor and one position servo and a tetrahedron mesh (an OBJ in `meshes/`);
a URDF of a two-link arm on a fixed base whose forearm is that mesh (`package://`).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import digest_folder
from twinsim.cli import app
from twinsim.config import load_config
from twinsim.errors import TwinsimError
from twinsim.geometry import make_T
from twinsim.model.trajectory import Trajectory
from twinsim.replay import replay
from twinsim.sequence import open_sequence, validate_sequence

DURATION_S = 3.0
TETRAHEDRON_OBJ = """v 0 0 0
v 0.05 0 0
v 0 0.05 0
v 0 0 0.05
f 1 3 2
f 1 2 4
f 1 4 3
f 2 3 4
"""
PAN_TILT_MJCF = """<mujoco model="pan_tilt_rover">
  <compiler angle="degree" meshdir="meshes"/>
  <asset><mesh name="tet" file="tet.obj"/></asset>
  <worldbody>
    <geom name="ground" type="plane" size="2 2 0.1"/>
    <body name="chassis" pos="0 0 0.3">
      <freejoint name="root"/>
      <geom type="box" size="0.15 0.1 0.05" mass="5"/>
      <body name="pan_link" pos="0 0 0.1">
        <joint name="pan" type="hinge" axis="0 0 1" range="-90 90" armature="0.001"/>
        <geom type="cylinder" size="0.03 0.02" mass="0.2"/>
        <body name="tilt_link" pos="0 0 0.05">
          <joint name="tilt" type="hinge" axis="0 1 0" range="-45 45" armature="0.002"
                 damping="0.02"/>
          <geom type="mesh" mesh="tet" mass="0.1"/>
          <site name="cam_site" pos="0.05 0.01 0.02" euler="0 -10 0"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="pan_motor" joint="pan" ctrlrange="-2 2"/>
    <position name="tilt_servo" joint="tilt" kp="1" ctrlrange="-0.7 0.7"/>
  </actuator>
</mujoco>
"""
ARM_URDF = """<robot name="arm">
  <link name="base_link">
    <inertial><mass value="2"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision>
  </link>
  <link name="upper">
    <inertial><origin xyz="0 0 0.15"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.15"/>
      <geometry><cylinder radius="0.03" length="0.3"/></geometry></collision>
  </link>
  <link name="fore">
    <inertial><origin xyz="0 0 0.02"/><mass value="0.5"/>
      <inertia ixx="0.005" iyy="0.005" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><mesh filename="package://arm/meshes/tet.obj"/></geometry></collision>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base_link"/><child link="upper"/><origin xyz="0 0 0.05"/>
    <axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="50" velocity="2"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="upper"/><child link="fore"/><origin xyz="0 0 0.3"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="20" velocity="2"/>
  </joint>
</robot>
"""


def _write(folder, name: str, text: str):
    """A robot file in `folder` with the tetrahedron in `folder/meshes/`."""
    (folder / "meshes").mkdir(parents=True, exist_ok=True)
    (folder / "meshes" / "tet.obj").write_text(TETRAHEDRON_OBJ)
    path = folder / name
    path.write_text(text)
    return path


def _config(kind: str, path, *extra: str):
    return load_config(
        "tiny", [f"robot.kind={kind}", f"robot.path={path}", *extra], duration_s=DURATION_S
    )


@pytest.fixture(scope="module")
def mjcf_run(gl_backend, tmp_path_factory):
    """(sequence, robot file) of a 3 s run of the pan-tilt rover, its camera on `cam_site`;
    the file's folder is removed afterwards by the replay test."""
    from twinsim.sim import run

    path = _write(tmp_path_factory.mktemp("rover_files"), "rover.xml", PAN_TILT_MJCF)
    cfg = _config("mjcf", path, "robot.mount=cam_site")
    return run(cfg, tmp_path_factory.mktemp("rover") / "seq"), path


@pytest.fixture(scope="module")
def urdf_run(gl_backend, tmp_path_factory):
    from twinsim.sim import run

    path = _write(tmp_path_factory.mktemp("arm_files"), "arm.urdf", ARM_URDF)
    cfg = _config("urdf", path, "robot.mount=fore")
    return run(cfg, tmp_path_factory.mktemp("arm") / "seq")


def _follows_targets(seq) -> dict[str, tuple[float, float]]:
    """Per driven coordinate: (largest |q - target|, how far it moved)."""
    state = seq.table("robot_state")
    return {
        c[len("q_ref_") :]: (
            float(np.abs(state["qpos_" + c[len("q_ref_") :]] - state[c]).max()),
            float(np.ptp(state["qpos_" + c[len("q_ref_") :]])),
        )
        for c in state
        if c.startswith("q_ref_")
    }


def test_an_mjcf_robot_records_a_valid_sequence_with_its_file(mjcf_run):
    seq_path, path = mjcf_run
    report = validate_sequence(seq_path)
    assert report.ok, report.problems
    seq = open_sequence(seq_path)
    robot = seq.scene.robot
    assert seq.metadata["streams"]["joint_states"]["joints"] == [
        *(f"base_{j}" for j in ("x", "y", "z", "yaw", "pitch", "roll")),
        "pan",
        "tilt",
    ]
    assert robot.base == "free"  # the file's free joint, as twinsim's six pose joints
    assert robot.file.text == path.read_text()
    assert robot.file.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    (mesh,) = robot.file.assets
    assert mesh.path == "meshes/tet.obj"
    assert mesh.sha256 == hashlib.sha256(TETRAHEDRON_OBJ.encode()).hexdigest()
    assert [(a.name, a.type) for a in robot.actuators] == [
        ("pan_motor", "motor"),
        ("tilt_servo", "position"),
    ]
    assert "rover.xml" in (seq_path / "scene.json").read_text()


def test_the_camera_rides_the_named_site(mjcf_run, gl_backend):
    """groundtruth_cam0 is the site's frame (the mount) times the camera's offset, at every
    frame, while the pan-tilt head turns the site relative to the chassis."""
    from twinsim.engine.world import World
    from twinsim.model.sections import RenderConfig

    seq = open_sequence(mjcf_run[0])
    scene = seq.scene
    t_cam, T_cam = seq.groundtruth("groundtruth_cam0")
    state = seq.table("robot_state")
    rows = np.searchsorted(state["t_ns"], t_cam)
    assert np.array_equal(state["t_ns"][rows], t_cam)
    joints = seq.metadata["streams"]["joint_states"]["joints"]
    world = World(scene, RenderConfig(shadow_size=512), seq.metadata["physics_hz"])
    try:
        view = world.robot("robot")
        site = world.model.site("model/cam_site").id
        chassis = world.model.body("model/chassis").id
        relative = []
        for i in range(0, len(rows), 5):
            qpos = np.array([state[f"qpos_{j}"][rows[i]] for j in joints])
            view.set_state(qpos, np.zeros(len(joints)))
            T_site = make_T(world.data.site_xmat[site].reshape(3, 3), world.data.site_xpos[site])
            assert np.allclose(view.T_world_body(), T_site, atol=1e-9)
            assert np.allclose(view.T_world_cam("cam0"), T_cam[i], atol=1e-6)
            T_chassis = make_T(world.data.xmat[chassis].reshape(3, 3), world.data.xpos[chassis])
            relative.append(np.linalg.inv(T_chassis) @ T_site)
    finally:
        world.close()
    cosines = [(np.trace(r[:3, :3] @ relative[0][:3, :3].T) - 1) / 2 for r in relative]
    turned = np.degrees(np.arccos(np.clip(cosines, -1.0, 1.0)))
    assert turned.max() > 20.0  # the head turns the camera by tens of degrees


def test_the_joints_follow_their_targets(mjcf_run):
    seq = open_sequence(mjcf_run[0])
    follow = _follows_targets(seq)
    # the motor under twinsim's PID within 0.02 rad (measured 0.012); the position servo on
    # the file's own soft gains (kp 1) lags more (measured 0.02)
    assert follow["pan"][0] < 0.02 and follow["pan"][1] > 0.5
    assert follow["tilt"][0] < 0.04 and follow["tilt"][1] > 0.4
    state = seq.table("robot_state")
    servo = seq.scene.robot.actuators[1]
    assert np.array_equal(state["ctrl_tilt_servo"], np.clip(state["q_ref_tilt"], *servo.ctrlrange))


def test_the_free_base_follows_its_planned_tour(mjcf_run):
    seq = open_sequence(mjcf_run[0])
    robot = seq.scene.robot
    state = seq.table("robot_state")
    ref = Trajectory.from_path_points(robot.path).sample(state["t_ns"] / 1e9)
    xy = np.stack([state["qpos_base_x"], state["qpos_base_y"]], axis=1)
    assert np.hypot(*(xy - ref.pos[:, :2]).T).max() < 0.005
    assert np.abs(state["qpos_base_yaw"] - ref.yaw).max() < np.radians(1.0)
    assert np.hypot(*np.diff(xy, axis=0).T).sum() > 0.3  # it went somewhere
    # held level at its height, the chassis' underside 2 cm above the floor
    assert np.abs(state["qpos_base_z"] - robot.root_z_m).max() < 1e-3
    assert robot.root_z_m == pytest.approx(0.05 + 0.02)
    assert np.abs(state["qpos_base_pitch"]).max() < 0.01
    assert np.abs(state["qpos_base_roll"]).max() < 0.01


def test_a_teleport_replay_needs_no_file(mjcf_run, tmp_path):
    seq_path, path = mjcf_run
    shutil.rmtree(path.parent)  # the file and its mesh are gone
    twin = replay(seq_path, tmp_path / "twin", rerender=True)
    a, b = digest_folder(seq_path), digest_folder(twin)
    assert {p for p in a if a[p] != b.get(p)} == {"metadata.json"}


def test_a_urdf_arm_on_a_fixed_base(urdf_run):
    seq_path = urdf_run
    report = validate_sequence(seq_path)
    assert report.ok, report.problems
    seq = open_sequence(seq_path)
    robot = seq.scene.robot
    assert robot.base == "fixed" and robot.path == ()
    assert seq.metadata["streams"]["joint_states"]["joints"] == ["shoulder", "elbow"]
    assert robot.motors == ("shoulder", "elbow")  # no actuators in the file: twinsim's motors
    assert robot.file.assets[0].path == "package://arm/meshes/tet.obj"
    follow = _follows_targets(seq)  # measured 0.018 and 0.049 rad, under gravity
    assert follow["shoulder"][0] < 0.03 and follow["shoulder"][1] > 0.5
    assert follow["elbow"][0] < 0.07 and follow["elbow"][1] > 1.0
    # the camera rides the forearm: it moves while the base stays
    _, T_body = seq.groundtruth()
    assert np.ptp(T_body[:, :3, 3], axis=0).max() > 0.2
    state = seq.table("robot_state")
    assert np.abs(state["ctrl_shoulder"]).max() <= 50.0  # the URDF's effort limit
    assert np.abs(state["ctrl_elbow"]).max() <= 20.0


def _error(cfg) -> str:
    from twinsim.assemble import build_scene

    with pytest.raises(TwinsimError) as info:
        build_scene(cfg)
    text = str(info.value)
    assert len(text.splitlines()) == 1, text
    return text


def test_a_missing_file_names_it(tmp_path):
    text = _error(_config("mjcf", tmp_path / "nowhere.xml"))
    assert str(tmp_path / "nowhere.xml") in text


def test_a_file_that_does_not_compile_says_where(tmp_path):
    bad = PAN_TILT_MJCF.replace('<geom type="box"', '<geom tpye="box"')
    path = _write(tmp_path, "bad.xml", bad)
    text = _error(_config("mjcf", path))
    assert "bad.xml" in text and "tpye" in text and "line 8" in text


def test_a_mount_that_does_not_exist_lists_what_does(tmp_path):
    path = _write(tmp_path, "rover.xml", PAN_TILT_MJCF)
    text = _error(_config("mjcf", path, "robot.mount=camera_site"))
    assert "'camera_site'" in text
    assert "bodies: chassis, pan_link, tilt_link" in text and "sites: cam_site" in text


def test_an_auto_base_that_welds_the_body_frame_is_refused(tmp_path):
    """A file with no free joint under `base: auto` is welded; with the body frame on its root
    it would plan a tour and record no motion, so it is refused; a mount its joints move, or
    an explicit base, is taken."""
    wheelbot = Path(__file__).parents[1] / "examples" / "robots" / "wheelbot.xml"
    text = _error(_config("mjcf", wheelbot))
    assert "robot.base: auto welds the root 'chassis'" in text and "planar or free" in text
    text = _error(_config("mjcf", wheelbot, "robot.mount=mast"))  # welded to the root
    assert "robot.base" in text
    from twinsim.assemble import build_scene

    taken = {"robot.base=planar": "planar", "robot.base=fixed": "fixed"}
    taken["robot.mount=cam_site"] = "fixed"  # on the head, which the pan joint turns
    for setting, base in taken.items():
        assert build_scene(_config("mjcf", wheelbot, setting)).robot.base == base


def test_a_package_mesh_an_encoding_and_a_size_are_handled(tmp_path, monkeypatch):
    """`package://pkg/...` in an MJCF file resolves (MuJoCo's parser folds it to
    `package:/`); a file that is not UTF-8, or larger than the cap, is refused in one line."""
    import twinsim.engine.user_model as user_model
    from twinsim.assemble import build_scene

    (tmp_path / "rover" / "meshes").mkdir(parents=True)
    (tmp_path / "rover" / "meshes" / "tet.obj").write_text(TETRAHEDRON_OBJ)
    packaged = PAN_TILT_MJCF.replace('meshdir="meshes"', "").replace(
        'file="tet.obj"', 'file="package://rover/meshes/tet.obj"'
    )
    path = _write(tmp_path / "rover", "rover.xml", packaged)
    robot = build_scene(_config("mjcf", path)).robot
    assert [a.path for a in robot.file.assets] == ["package:/rover/meshes/tet.obj"]
    latin = tmp_path / "latin.xml"
    latin.write_bytes(PAN_TILT_MJCF.replace("pan_tilt_rover", "r\xf6ver").encode("latin-1"))
    assert "not UTF-8 text" in _error(_config("mjcf", latin))
    monkeypatch.setattr(user_model, "MAX_FILE_BYTES", 100)
    assert "bytes, over the 100 a robot file" in _error(_config("mjcf", path))


def test_the_cli_fails_in_one_line_on_a_bad_file(tmp_path):
    path = _write(tmp_path, "broken.xml", PAN_TILT_MJCF.replace("</worldbody>", ""))
    out = tmp_path / "seq"
    args = ["run", "--out", str(out), "--config", "tiny", "--set", "robot.kind=mjcf"]
    result = CliRunner().invoke(app, [*args, "--set", f"robot.path={path}"])
    assert result.exit_code == 2, result.output
    text = result.output.strip()
    assert "Traceback" not in text and len(text.splitlines()) == 1, text
    assert "broken.xml" in text


def test_a_robot_whose_physics_diverges_stops_the_run_in_one_line(tmp_path):
    """A near-massless link on a stiff servo makes MuJoCo's accelerations blow up; MuJoCo
    would reset the state (a teleport in the recording), print a warning and append it to
    MUJOCO_LOG.TXT in the working directory. The run stops with one line instead, and
    nothing is written outside its folder."""
    stiff = PAN_TILT_MJCF.replace('kp="1"', 'kp="1e9"').replace('mass="0.1"', 'mass="1e-6"')
    path = _write(tmp_path, "stiff.xml", stiff.replace('armature="0.002"', 'armature="0"'))
    work = tmp_path / "work"
    work.mkdir()
    args = ["run", "--out", str(tmp_path / "seq"), "--config", "tiny"]
    args += ["--set", "robot.kind=mjcf", "--set", f"robot.path={path}"]
    done = subprocess.run(
        [str(Path(sys.executable).with_name("twinsim")), *args, "--set", "robot.base=planar"],
        cwd=work,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "the physics diverged at t = " in errors[0], done.stderr
    assert "Traceback" not in done.stderr and "WARNING" not in done.stdout + done.stderr
    assert not list(work.iterdir())  # no MUJOCO_LOG.TXT
