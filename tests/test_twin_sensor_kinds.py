"""A twin adds, changes and removes sensors of any registered kind, with no edit in replay/ or
the CLI: a toy kind defined in this module alone is added through `Variations(sensors=...)` and
`--sensor`, changed in a twin of that twin and removed with `--remove-sensor`, and robot-prefixed
names (`bravo.rear`) reach one robot of a two-robot sequence."""

from __future__ import annotations

import re
from typing import ClassVar, Literal

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import digest_folder
from twinsim.cli import app
from twinsim.config import load_config, validate_config
from twinsim.errors import ConfigError
from twinsim.model.sensors import SensorSpec
from twinsim.registries import SENSORS
from twinsim.replay import Variations, replay
from twinsim.replay.replay import plan_twin
from twinsim.replay.source import load_source
from twinsim.replay.variations import merge_variations, parse_variations
from twinsim.sensors.base import SensorConfig, SensorKind, SensorRecorder, base_metadata
from twinsim.sensors.rig import body_mounted
from twinsim.sequence import open_sequence, validate_sequence

SMALL = ["cameras.cam0.width=32", "cameras.cam0.height=24"]
TWIN_ONLY = ("metadata.json", "scene.json", "checksums.csv")  # what a twin adding a sensor rewrites


class CompassConfig(SensorConfig):
    kind: Literal["compass"] = "compass"
    rate_hz: int = 60
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    declination_deg: float = 0.0


class CompassRecorder(SensorRecorder):
    """The body's heading (degrees from the world x axis) plus the declination, one column."""

    def __init__(self, sensor: SensorSpec, ctx) -> None:
        self.sensor, self.ctx = sensor, ctx
        self.period = ctx.physics_hz // sensor.rate_hz
        ctx.writer.add_table(sensor.name, ("heading_deg",))

    def before_step(self, k, t_ns, q) -> None:
        if k % self.period == 0:
            T = self.ctx.world.T_world_body()
            heading = np.degrees(np.arctan2(T[1, 0], T[0, 0])) + self.sensor.declination_deg
            self.ctx.writer.append(self.sensor.name, t_ns, np.array([heading]))


class CompassSpec(SensorSpec):
    declination_deg: float


class Compass(SensorKind):
    type: ClassVar[str] = "compass"
    config_model = CompassConfig
    spec_model = CompassSpec

    def spec(self, name, cfg) -> SensorSpec:
        return CompassSpec(
            name=name, type="compass", declination_deg=cfg.declination_deg, **body_mounted(cfg)
        )

    def mounts(self, sensor):
        return ()

    def metadata(self, sensor) -> dict:
        return base_metadata(sensor) | {"units": "deg from world x"}

    def recorder(self, sensor, ctx) -> CompassRecorder:
        return CompassRecorder(sensor, ctx)


@pytest.fixture(scope="module")
def compass_kind():
    with SENSORS.registered("compass", Compass()):
        yield


@pytest.fixture(scope="module")
def source(tmp_path_factory, gl_backend):
    from twinsim.sim import run

    cfg = load_config("tiny", SMALL, seed=2, duration_s=0.5)
    return run(cfg, tmp_path_factory.mktemp("kinds") / "source")


@pytest.fixture(scope="module")
def two_drones(tmp_path_factory, gl_backend):
    from twinsim.sim import run

    robots = ["robots.alpha.kind=drone", "robots.bravo.kind=drone"]
    cfg = load_config("tiny", robots + SMALL, seed=4, duration_s=0.25)
    return run(cfg, tmp_path_factory.mktemp("kinds_two") / "source")


def _cli_replay(source, out, *args: str):
    return CliRunner().invoke(app, ["replay", str(source), "--out", str(out), *args])


def _assert_compass(seq, stream: str, rate_hz: int, declination_deg: float, robot=None) -> None:
    """The compass stream holds its robot's ground-truth heading at each step of its rate."""
    table = seq.table(stream)
    k0, k1 = seq.metadata["recorded_steps"]
    hz = seq.metadata["config"]["sim"]["physics_hz"]
    steps = [k for k in range(k0, k1) if k % (hz // rate_hz) == 0]
    assert table["t_ns"].tolist() == [round(k * 1e9 / hz) for k in steps]
    t_gt, T = seq.for_robot(robot).groundtruth()
    index = np.searchsorted(t_gt, table["t_ns"])
    assert np.array_equal(t_gt[index], table["t_ns"])
    heading = np.degrees(np.arctan2(T[index, 1, 0], T[index, 0, 0])) + declination_deg
    np.testing.assert_allclose(table["heading_deg"], heading, atol=1e-9)


def _shared_files_equal(a, b, skip=()) -> None:
    """Every file of `a` but the twin's rewritten ones and `skip` streams is byte-identical in b."""
    da, db = digest_folder(a), digest_folder(b)
    shared = [p for p in da if p not in TWIN_ONLY and not p.startswith(tuple(skip))]
    assert shared and all(da[p] == db.get(p) for p in shared)


def test_shorthands_fold_into_the_canonical_sensor_variations():
    v = Variations(
        cameras={"top": {"width": 64}},
        lidars={"lidar0": {"model": "vlp-16"}},
        remove_cameras=("cam1",),
    )
    canonical = {
        "sensors": {
            "top": {"width": 64, "kind": "camera"},
            "lidar0": {"model": "vlp-16", "kind": "lidar"},
        },
        "remove_sensors": ["cam1"],
    }
    assert v.summary() == canonical
    # what a twin records reads back into the same variations (a twin of a twin, a script)
    again = parse_variations(v.summary())
    assert again.summary() == canonical and again.sensors == v.sensors
    assert (v.written_as("sensors", "top"), again.written_as("sensors", "top")) == (
        "cameras",
        "sensors",
    )
    with pytest.raises(ConfigError, match=r"cameras\.x: sensor 'x' is a lidar, not a camera"):
        parse_variations({"sensors": {"x": {"kind": "lidar"}}, "cameras": {"x": {}}})
    with pytest.raises(ConfigError, match=r"remove_cameras must be a list of sensor names"):
        parse_variations({"remove_cameras": "cam0"})


def test_flags_merge_onto_a_file_sensor_by_sensor_and_field_by_field():
    base = parse_variations(
        {
            "sensors": {"a": {"kind": "camera", "width": 64}, "b": {"kind": "lidar"}},
            "remove_cameras": ["cam1"],
        }
    )
    merged = merge_variations(
        base, {"sensors": {"a": {"height": 48}}, "remove_sensors": ["b"], "cameras": {"c": {}}}
    )
    assert merged.sensors == {
        "a": {"kind": "camera", "width": 64, "height": 48},
        "c": {"kind": "camera"},
    }
    # a sensor the flags remove loses the file's change of it; the file's removals stay
    assert merged.remove_sensors == ("cam1", "b")
    assert merged.written_as("remove_sensors", "cam1") == "remove_cameras"
    assert merged.written_as("sensors", "c") == "cameras"
    with pytest.raises(ConfigError, match=r"remove_sensors\.0: Input should be a valid string"):
        merge_variations(base, {"remove_sensors": [3]})


def test_a_toy_kind_added_through_variations_measures_what_it_should(
    source, compass_kind, tmp_path
):
    fields = {"kind": "compass", "declination_deg": 10.0}
    twin = replay(source, tmp_path / "twin", Variations(sensors={"north": fields}))
    assert validate_sequence(twin).ok, validate_sequence(twin).problems
    seq = open_sequence(twin)
    assert seq.stream_info("north")["units"] == "deg from world x"
    _assert_compass(seq, "north", 60, 10.0)
    assert seq.metadata["twin"]["variations"] == {"sensors": {"north": fields}}
    assert seq.metadata["twin"]["copied_from_source"] == {"cam0": "all"}
    _shared_files_equal(source, twin)


def test_the_cli_adds_changes_and_removes_a_toy_sensor_twin_of_twin(source, compass_kind, tmp_path):
    added, changed, removed = tmp_path / "added", tmp_path / "changed", tmp_path / "removed"
    res = _cli_replay(
        source, added, "--sensor", "north.kind=compass", "--sensor", "north.rate_hz=30"
    )
    assert res.exit_code == 0, res.output
    _assert_compass(open_sequence(added), "north", 30, 0.0)
    _shared_files_equal(source, added)

    # a twin of the twin changes one field; the sensor keeps its kind and its other fields
    res = _cli_replay(added, changed, "--sensor", "north.declination_deg=-5")
    assert res.exit_code == 0, res.output
    seq = open_sequence(changed)
    assert validate_sequence(changed).ok
    _assert_compass(seq, "north", 30, -5.0)
    assert seq.metadata["twin"]["variations"] == {"sensors": {"north": {"declination_deg": -5}}}
    _shared_files_equal(source, changed)

    res = _cli_replay(changed, removed, "--remove-sensor", "north")
    assert res.exit_code == 0, res.output
    seq, original = open_sequence(removed), open_sequence(source)
    assert "north" not in seq.streams and not (removed / "north").exists()
    assert seq.streams == original.streams and seq.scene == original.scene
    assert validate_config(seq.metadata["config"]) == validate_config(original.metadata["config"])
    assert seq.metadata["twin"]["variations"] == {"remove_sensors": ["north"]}
    _shared_files_equal(source, removed)


def test_sensor_variations_that_cannot_apply_are_refused(source, compass_kind):
    src = load_source(source)
    cases = [
        (
            {"sensors": {"north": {"declination_deg": 3}}},
            r"sensors\.north: 'north' is a new sensor; give its kind, one of .*compass",
        ),
        (
            {"sensors": {"cam0": {"kind": "compass"}}},
            r"sensors\.cam0: sensor 'cam0' is a camera, not a compass",
        ),
        (
            {"sensors": {"north": {"kind": "compas"}}},
            r"sensors\.north\.kind: unknown sensor kind 'compas'; registered: .*compass",
        ),
        (
            {"sensors": {"north": {"kind": "compass", "declination": 3}}},
            r"'sensors\.north\.declination'; allowed here: .*declination_deg",
        ),
        ({"lidars": {"cam0": {}}}, r"lidars\.cam0: sensor 'cam0' is a camera, not a lidar"),
        (
            {"remove_sensors": ["nope"]},
            r"remove_sensors: no sensor 'nope' in this sequence; sensors: cam0, imu0$",
        ),
        (
            {"remove_cameras": ["imu0"]},
            r"remove_cameras: no camera 'imu0' in this sequence; cameras: cam0$",
        ),
    ]
    for data, expected in cases:
        with pytest.raises(ConfigError, match=expected):
            plan_twin(src, parse_variations(data))
    # removals apply first: a removed name given again is a new sensor, of any kind
    plan = plan_twin(
        src, Variations(remove_sensors=("imu0",), sensors={"imu0": {"kind": "compass"}})
    )
    assert plan.config.robot.sensors["imu0"].kind == "compass"
    assert [s.type for s in plan.scene.sensors] == ["camera", "compass"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--sensor", "north"], r"--sensor expects NAME\.field=value"),
        (["--sensor", "north.kind"], r"--sensor expects NAME\.field=value"),
        (["--lidar", "=3"], r"--lidar expects NAME\.field=value"),
        (
            ["--sensor", "north.pos=[0, 1"],
            r"--sensor 'north\.pos=\[0, 1': the value .* is not valid YAML",
        ),
        (
            ["--sensor", "north.kind=compas"],
            r"sensors\.north\.kind: unknown sensor kind 'compas'; registered: camera",
        ),
        (
            ["--remove-sensor", "nope"],
            r"remove_sensors: no sensor 'nope' in this sequence; sensors: cam0, imu0",
        ),
        (["--camera", "imu0.width=8"], r"cameras\.imu0: sensor 'imu0' is a imu, not a camera"),
        (["--remove-camera", "imu0"], r"remove_cameras: no camera 'imu0'.*; cameras: cam0$"),
    ],
)
def test_bad_sensor_options_are_one_line_exit_2(source, tmp_path, args, expected):
    out = tmp_path / "never"
    result = _cli_replay(source, out, *args)
    text = result.output.strip()
    assert result.exit_code == 2, text
    assert "Traceback" not in text and len(text.splitlines()) == 1, text
    assert re.search(expected, text), text
    assert not out.exists()


def test_a_prefixed_sensor_name_reaches_one_robot_of_two(two_drones, compass_kind, tmp_path):
    out = tmp_path / "twin"
    rear = ["bravo.rear.kind=camera", "bravo.rear.width=32", "bravo.rear.height=24"]
    rear += ["bravo.rear.rpy_deg=[0, 0, 180]", "alpha.north.kind=compass"]
    args = [a for item in rear for a in ("--sensor", item)]
    res = _cli_replay(two_drones, out, *args, "--remove-sensor", "bravo.imu0")
    assert res.exit_code == 0, res.output
    seq, original = open_sequence(out), open_sequence(two_drones)
    assert validate_sequence(out).ok
    new = set(seq.streams) - set(original.streams)
    assert new == {"bravo.rear", "bravo.groundtruth_rear", "alpha.north"}
    assert set(original.streams) - set(seq.streams) == {"bravo.imu0"}
    cam = seq.for_robot("bravo").camera("rear")
    assert (cam.width, cam.height) == (32, 24)
    _, T_body = seq.for_robot("bravo").groundtruth()
    assert np.allclose(cam.T_world_cam[0][:3, 2], -T_body[0][:3, 0], atol=1e-9)  # looks back
    _assert_compass(seq, "alpha.north", 60, 0.0, robot="alpha")
    _shared_files_equal(two_drones, out, skip=("bravo.imu0/",))
