"""Robots, sensors and worlds are plug-ins: kinds defined here alone record, validate, replay.

The toy robot below is everything a new robot needs (docs/architecture.md, "add a robot"): a
config model, a spec model, a body as data, a controller and its restart; the toy sensor is
everything a new sensor needs ("add a sensor"): a config model, its spec (a model of its own,
carrying its own setting), mounts, metadata and a recorder; the toy generator everything a new
world needs ("add a world generator"): a config model and a layout. One registry entry each
and no edit anywhere else.
"""

from __future__ import annotations

import json
from typing import ClassVar, Literal

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import digest_folder
from twinsim.cli import app
from twinsim.config import TwinsimConfig, load_config
from twinsim.errors import ConfigError
from twinsim.model.body import ActuatorSpec, BodySpec, JointSpec, LinkGeomSpec, LinkSpec
from twinsim.model.scene import GeomSpec, LightSpec, MaterialSpec, ObjectSpec, RobotSpec, RoomSpec
from twinsim.model.sensors import SensorSpec
from twinsim.registries import GENERATORS, ROBOTS, SENSORS
from twinsim.replay import replay
from twinsim.robots.base import Robot, RobotConfig, RobotLog
from twinsim.scene.generators import Layout, SceneConfig, WorldGenerator
from twinsim.sensors.base import SensorConfig, SensorKind, SensorRecorder, base_metadata
from twinsim.sensors.rig import body_mounted
from twinsim.sequence import open_sequence, validate_sequence

GRAVITY = 9.81
JOINTS = ("px", "py", "pz", "heading")
INERTIA = (0.02, 0.02, 0.03)


class GlideConfig(RobotConfig):
    kind: Literal["glide"] = "glide"
    mass_kg: float = 2.0
    height_m: float = 1.2
    offset_m: tuple[float, float] = (0.4, 0.2)  # the goal, from the start


class GlideSpec(RobotSpec):
    kind: Literal["glide"] = "glide"
    mass_kg: float
    goal: tuple[float, float, float]


class GlideController:
    """PD on each joint towards the goal, gravity compensated on the vertical slide."""

    kp, kd = 16.0, 8.0

    def __init__(self, spec: GlideSpec) -> None:
        self.target = np.array([*spec.goal, spec.start_yaw])
        self.mass = np.array([spec.mass_kg] * 3 + [INERTIA[2]])
        self.steps = 0  # internal state a restart must recover

    def setpoint(self, t_s: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        self.steps += 1
        return self.target.copy()

    def effort(self, setpoint: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        acc = self.kp * (setpoint - q) - self.kd * qd
        acc[2] += GRAVITY
        return self.mass * acc


class Glide(Robot):
    """A holonomic box that glides from its start to a goal beside it."""

    kind: ClassVar[str] = "glide"
    config_model = GlideConfig
    spec_model = GlideSpec

    def resolve(self, cfg, world, duration_s, rng, start_allowed=None) -> GlideSpec:
        room = np.array(world.rooms[0].polygon)
        x, y = room.mean(axis=0)
        goal = (float(x + cfg.offset_m[0]), float(y + cfg.offset_m[1]), cfg.height_m)
        return GlideSpec(
            mass_kg=cfg.mass_kg,
            start_pos=(float(x), float(y), cfg.height_m),
            start_yaw=0.0,
            goal=goal,
        )

    def body(self, spec: GlideSpec) -> BodySpec:
        axes = ((1, 0, 0), (0, 1, 0), (0, 0, 1), (0, 0, 1))
        joints = tuple(
            JointSpec(name=n, type="hinge" if n == "heading" else "slide", axis=a)
            for n, a in zip(JOINTS, axes, strict=True)
        )
        link = LinkSpec(
            name="glide_base",
            mass_kg=spec.mass_kg,
            inertia=INERTIA,
            joints=joints,
            geoms=(LinkGeomSpec(name="glide_box", type="box", size=(0.1, 0.1, 0.05)),),
        )
        actuators = tuple(ActuatorSpec(name=f"push_{j}", joint=j) for j in JOINTS)
        return BodySpec(links=(link,), actuators=actuators, mount="glide_base")

    def initial_state(self, spec):
        return np.array([*spec.start_pos, spec.start_yaw]), np.zeros(4)

    def setpoint_columns(self, spec):
        return tuple(f"target_{j}" for j in JOINTS)

    def controller(self, spec, physics_hz):
        return GlideController(spec)

    def restarted_controller(self, spec, log: RobotLog, physics_hz):
        return GlideController(spec)


class AltimeterConfig(SensorConfig):
    kind: Literal["altimeter"] = "altimeter"
    rate_hz: int = 60
    pos: tuple[float, float, float] = (0.0, 0.0, -0.05)
    floor_m: float = 0.0  # the kind's own setting: the height its readings are measured from


class AltimeterSpec(SensorSpec):
    """The altimeter in `scene.json`: the common sensor fields and its own setting."""

    floor_m: float


class AltimeterRecorder(SensorRecorder):
    """Height of the sensor above its floor (`floor_m`), a table of one column."""

    def __init__(self, sensor: SensorSpec, ctx) -> None:
        self.sensor, self.ctx = sensor, ctx
        self.period = ctx.physics_hz // sensor.rate_hz
        ctx.writer.add_table(sensor.name, ("height_m",))

    def before_step(self, k, t_ns, q) -> None:
        if k % self.period == 0:
            T = self.ctx.world.T_world_body()
            height = T[2, 3] + T[2, :3] @ np.asarray(self.sensor.pos) - self.sensor.floor_m
            self.ctx.writer.append(self.sensor.name, t_ns, np.array([height]))


class Altimeter(SensorKind):
    type: ClassVar[str] = "altimeter"
    config_model = AltimeterConfig
    spec_model = AltimeterSpec

    def spec(self, name, cfg) -> AltimeterSpec:
        return AltimeterSpec(name=name, type="altimeter", floor_m=cfg.floor_m, **body_mounted(cfg))

    def mounts(self, sensor):
        return ()

    def metadata(self, sensor) -> dict:
        return base_metadata(sensor) | {"units": "m above the floor"}

    def recorder(self, sensor, ctx) -> AltimeterRecorder:
        return AltimeterRecorder(sensor, ctx)


class HallConfig(SceneConfig):
    generator: Literal["hall"] = "hall"
    size_m: tuple[float, float] = (6.0, 5.0)
    height_m: float = 3.0


class Hall(WorldGenerator):
    """One empty hall: floor, ceiling and four walls of random colours, one ceiling light."""

    name: ClassVar[str] = "hall"
    config_model = HallConfig

    def generate(self, cfg: HallConfig, rng) -> Layout:
        (lx, ly), h, t = cfg.size_m, cfg.height_m, 0.05
        boxes = {
            "floor": ((0, 0, -t), (lx / 2, ly / 2, t)),
            "ceiling": ((0, 0, h + t), (lx / 2, ly / 2, t)),
            "wall": ((lx / 2 + t, 0, h / 2), (t, ly / 2, h / 2)),
        }
        walls = [((-lx / 2 - t, 0, h / 2), (t, ly / 2, h / 2))]
        walls += [((0, s * (ly / 2 + t), h / 2), (lx / 2 + 2 * t, t, h / 2)) for s in (-1, 1)]
        parts = [*boxes.items(), *(("wall", w) for w in walls)]
        materials = tuple(
            MaterialSpec(name=f"hall_m{i}", rgba=(*rng.uniform(0.3, 0.9, 3), 1.0))
            for i in range(len(parts))
        )
        objects = tuple(
            ObjectSpec(
                instance_id=i + 1,
                name=f"{cls}_{i}",
                semantic_class=cls,
                room_id=0,
                pos=pos,
                geoms=(GeomSpec(type="box", size=half, material=materials[i].name),),
            )
            for i, (cls, (pos, half)) in enumerate(parts)
        )
        polygon = ((-lx / 2, -ly / 2), (lx / 2, -ly / 2), (lx / 2, ly / 2), (-lx / 2, ly / 2))
        return Layout(
            rooms=(RoomSpec(room_id=0, type="office", name="hall", polygon=polygon),),
            doors=(),
            objects=objects,
            textures=(),
            materials=materials,
            lights=(LightSpec(name="sun", pos=(0, 0, h - 0.1), diffuse=(0.8, 0.8, 0.8)),),
            wall_height=h,
            bounds_min=(-lx / 2 - 2 * t, -ly / 2 - 2 * t, -2 * t),
            bounds_max=(lx / 2 + 2 * t, ly / 2 + 2 * t, h + 2 * t),
        )


@pytest.fixture(scope="module")
def hall_generator():
    with GENERATORS.registered("hall", Hall()):
        yield


@pytest.fixture(scope="module")
def glide_kind():
    with ROBOTS.registered("glide", Glide()):
        yield


@pytest.fixture(scope="module")
def altimeter_kind():
    with SENSORS.registered("altimeter", Altimeter()):
        yield


@pytest.fixture(scope="module")
def glide_sequence(glide_kind, altimeter_kind, hall_generator, tmp_path_factory):
    from twinsim.sim import run

    overrides = [
        "scene.generator=hall",
        "robot.kind=glide",
        "robot.mass_kg=3.0",
        "sensors.alt0.kind=altimeter",
        "sensors.alt0.floor_m=0.25",
    ]
    cfg = load_config("tiny", overrides, duration_s=1.0)
    return run(cfg, tmp_path_factory.mktemp("glide") / "seq")


def test_a_sensor_kind_from_a_test_module_records_what_it_measures(glide_sequence):
    seq = open_sequence(glide_sequence)
    assert seq.metadata["streams"]["alt0"]["units"] == "m above the floor"
    alt = seq.table("alt0")
    t_ns, T = seq.groundtruth()
    assert np.array_equal(alt["t_ns"], t_ns)  # both at 60 Hz, on the same steps
    assert np.allclose(alt["height_m"], T[:, 2, 3] - 0.05 - 0.25, atol=1e-9)
    # its own setting is in scene.json, read back as the kind's spec model (not scene/'s)
    scene = json.loads((glide_sequence / "scene.json").read_text())
    assert [s["floor_m"] for s in scene["sensors"] if s["type"] == "altimeter"] == [0.25]
    altimeter = next(s for s in seq.scene.sensors if s.type == "altimeter")
    assert isinstance(altimeter, AltimeterSpec) and altimeter.floor_m == 0.25


def test_a_robot_kind_from_a_test_module_records_a_valid_sequence(glide_sequence):
    report = validate_sequence(glide_sequence)
    assert report.ok, report.problems
    seq = open_sequence(glide_sequence)
    robot = dict(seq.metadata["config"]["robots"]["robot"])
    assert sorted(robot.pop("sensors")) == ["alt0", "cam0", "imu0"]  # tiny's, and the test's
    assert robot == {
        "kind": "glide",
        "mass_kg": 3.0,
        "height_m": 1.2,
        "offset_m": [0.4, 0.2],
    }
    assert seq.metadata["streams"]["joint_states"]["joints"] == list(JOINTS)
    assert seq.scene.robot.kind == "glide" and seq.scene.robot.mass_kg == 3.0
    assert seq.metadata["config"]["scene"] == {
        "generator": "hall",
        "size_m": [6.0, 5.0],
        "height_m": 3.0,
    }
    assert [r.name for r in seq.scene.rooms] == ["hall"] and len(seq.scene.objects) == 6
    state = seq.table("robot_state")
    assert {f"target_{j}" for j in JOINTS} | {f"ctrl_{j}" for j in JOINTS} <= set(state)


def test_the_toy_robot_moves_by_physics_towards_its_goal(glide_sequence):
    seq = open_sequence(glide_sequence)
    goal = np.array(seq.scene.robot.goal)
    _, T = seq.groundtruth()
    start = np.array(seq.scene.robot.start_pos)
    # the body frame is the link carrying the joints: its origin follows (px, py, pz)
    dist = np.linalg.norm(T[:, :3, 3] - goal, axis=1)
    assert dist[0] < np.linalg.norm(start - goal)  # the bootstrap second already moved it
    assert dist[-1] < 0.05 * np.linalg.norm(start - goal)
    assert np.all(np.diff(dist) <= 1e-6)  # a critically damped PD never overshoots
    joints = seq.table("joint_states")
    efforts = joints["effort_pz"]
    assert np.allclose(efforts[-10:], 3.0 * GRAVITY, rtol=0.02)  # holds its weight


def test_the_toy_robot_replays_byte_identically_and_under_control(glide_sequence, tmp_path):
    twin = replay(glide_sequence, tmp_path / "twin", rerender=True)
    assert "alt0" in open_sequence(twin).streams
    a, b = digest_folder(glide_sequence), digest_folder(twin)
    assert {p for p in a if a[p] != b.get(p)} == {"metadata.json"}
    controlled = replay(glide_sequence, tmp_path / "control", mode="control")
    assert validate_sequence(controlled).ok
    src, ctl = open_sequence(glide_sequence), open_sequence(controlled)
    _, T0 = src.groundtruth()
    _, T1 = ctl.groundtruth()
    assert np.abs(T0[:, :3, 3] - T1[:, :3, 3]).max() < 1e-6


def test_the_drone_flies_people_walk_and_a_lidar_scans_in_the_toy_world(hall_generator, tmp_path):
    from twinsim.sim import run

    overrides = [
        "scene.generator=hall",
        "scene.size_m=[7.0, 6.0]",
        "people.count=2",
        "flying_objects.count=2",
        "sensors.lidar0.kind=lidar",
        "sensors.lidar0.model=vlp-16",
        "sensors.lidar0.columns=90",
    ]
    seq_path = run(load_config("tiny", overrides, duration_s=1.0), tmp_path / "seq")
    assert validate_sequence(seq_path).ok
    seq = open_sequence(seq_path)
    assert len(seq.scene.people) >= 1 and len(seq.scene.flying_objects) == 2
    _, T = seq.groundtruth()
    inside = np.abs(T[:, :2, 3]) < np.array([3.5, 3.0]) - 0.3  # clear of the walls
    assert inside.all()
    scan = seq.lidar("lidar0")[0]
    world = scan.points @ scan.T_world_lidar[:3, :3].T + scan.T_world_lidar[:3, 3]
    # every return lies on the hall's surfaces or on someone or something in it (a sweep's
    # 0.1 s of motion distortion stays far below the 0.1 m allowed)
    assert len(scan) > 100
    assert np.all(np.abs(world[:, :2]) <= np.array([3.5, 3.0]) + 0.1)
    assert np.all((world[:, 2] > -0.1) & (world[:, 2] < 3.1))


def test_an_unknown_robot_kind_lists_the_registered_ones(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown robot kind 'tank'; registered: drone"):
        load_config("tiny", ["robot.kind=tank"])
    result = CliRunner().invoke(
        app, ["run", "--config", "tiny", "--set", "robot.kind=tank", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "unknown robot kind 'tank'; registered: drone" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_a_misspelt_field_of_a_robot_kind_lists_that_kinds_fields():
    with pytest.raises(ConfigError, match=r"'robot\.mas_kg'; allowed here: kind, sensors, mass_kg"):
        load_config("tiny", ["robot.mas_kg=2"])


def test_the_default_config_is_the_default_preset():
    assert TwinsimConfig() == load_config("default")
    dumped = json.loads(TwinsimConfig().model_dump_json())
    assert TwinsimConfig.model_validate(dumped) == TwinsimConfig()


def test_a_sensor_kind_must_name_the_spec_model_it_makes():
    """Own fields in `scene.json` are read back with the kind's `spec_model`; a kind whose
    `spec()` makes another model is stopped at once instead of writing a scene that cannot be
    read back."""
    from twinsim.sensors.rig import resolve_sensors

    class ForgetfulConfig(AltimeterConfig):
        kind: Literal["forgetful"] = "forgetful"

    class Forgetful(Altimeter):
        type: ClassVar[str] = "forgetful"
        config_model = ForgetfulConfig
        spec_model = SensorSpec

    with SENSORS.registered("forgetful", Forgetful()):
        cfg = load_config("tiny", ["sensors.alt0.kind=forgetful"])
        with pytest.raises(TypeError, match="set spec_model = AltimeterSpec"):
            resolve_sensors(cfg.robots["robot"].sensors)
