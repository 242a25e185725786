"""A LiDAR sees every other robot where it is, labelled as it, and never its own robot.

Two robots face each other along x in the box room: `a`, a drone with a second link (a cage
box around its LiDAR, larger than its frame), and `b`, a plain drone 2 m ahead.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
import pytest

from conftest import box_room_scene, make_robot
from twinsim.config import load_config
from twinsim.geometry import pose_to_T
from twinsim.model.body import BodySpec, LinkGeomSpec, LinkSpec
from twinsim.model.sections import RenderConfig
from twinsim.registries import ROBOTS
from twinsim.robots.drone.robot import Drone
from twinsim.robots.drone.spec import DroneSpec
from twinsim.scene.vocabulary import class_id
from twinsim.sensors.kinds.lidar import LidarConfig, lidar_spec
from twinsim.sensors.lidar import LidarScanner, beam_directions
from twinsim.sensors.rig import resolve_sensors
from twinsim.sequence import open_sequence, validate_sequence

STEPS = 24  # sectors per sweep (240 Hz physics, 10 Hz LiDAR)
STEP_NS = 1_000_000_000 // 240
CAGE_HALF = 0.3  # the cage box around a's LiDAR: every ray of a would hit it first
A_POS, B_POS = (-1.5, 0.0, 1.2), (0.5, 0.0, 1.2)
A_ID, B_ID = 20, 21
CASTERS = ("embree", "split", "whole")
# beams near the horizon meet b's 10 cm tall frame 1.8 m away; the others its surroundings
LIDAR = LidarConfig(
    model="custom",
    elevations_deg=[-40, -10, -1.2, -0.4, 0, 0.4, 1.2, 10, 40],
    columns=720,
    pos=(0.05, 0.0, 0.0),  # inside a's own frame box
)


class CagedSpec(DroneSpec):
    kind: Literal["caged"] = "caged"


class Caged(Drone):
    """The drone with a second, welded link: a cage box around the frame (not its mount)."""

    kind: ClassVar[str] = "caged"
    spec_model = CagedSpec

    def body(self, spec: CagedSpec) -> BodySpec:
        base = super().body(spec)
        cage = LinkSpec(
            name="cage",
            parent=base.mount,
            mass_kg=0.01,
            inertia=(1e-5, 1e-5, 1e-5),
            geoms=(LinkGeomSpec(name="cage_box", type="box", size=(CAGE_HALF,) * 3),),
        )
        return base.model_copy(update={"links": (*base.links, cage)})


@pytest.fixture(scope="module")
def robots_world(gl_backend):
    """The box room with robots a (caged, a LiDAR) and b (a LiDAR), and a scanner per robot
    and caster."""
    from twinsim.engine.world import World

    a = CagedSpec.model_validate(
        make_robot(start=A_POS).model_dump() | {"kind": "caged", "name": "a", "instance_id": A_ID}
    )
    b = make_robot(start=B_POS).model_copy(update={"name": "b", "instance_id": B_ID})
    sensors = tuple(s for r in ("a", "b") for s in resolve_sensors({"lidar0": LIDAR}, r))
    scene = box_room_scene().model_copy(update={"robots": (a, b), "sensors": sensors})
    with ROBOTS.registered("caged", Caged()):
        world = World(scene, RenderConfig(shadow_size=0), physics_hz=240)
        scanners = {
            (s.robot, caster): LidarScanner(world.robot(s.robot), s, STEPS, caster=caster)
            for s in sensors
            for caster in CASTERS
        }
        try:
            yield world, sensors[0], scanners
        finally:
            for scanner in scanners.values():
                scanner.close()
            world.close()


def _place(world, name: str, pos, yaw: float = 0.0) -> None:
    world.robot(name).set_state(np.array([*pos, yaw, 0.0, 0.0]), np.zeros(6))


def _sweep(robots_world, robot: str, caster: str):
    """One sweep of `robot`'s LiDAR at the current state, and its pose."""
    world, sensor, scanners = robots_world
    scanner = scanners[robot, caster]
    T = world.robot(robot).T_world_body() @ pose_to_T(sensor.pos, sensor.quat)
    scanner.begin(0, 0, T)
    for s in range(STEPS):
        scanner.cast_sector(s, s * STEP_NS, T)
    return scanner.finish(), T


def _box_hits(scan, T, center, half, yaw: float) -> np.ndarray:
    """Per point of a full sweep (every ray returned, in firing order), the distance at which
    its beam enters the box (yawed about z), inf where it misses (the float64 slab test)."""
    beams = beam_directions(lidar_spec(LIDAR)).reshape(-1, 3)
    assert len(scan) == len(beams)  # a closed room: every ray returns
    c, s = np.cos(yaw), np.sin(yaw)
    R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    dirs = beams @ T[:3, :3].T
    o = R.T @ (T[:3, 3] - np.asarray(center))
    v = dirs @ R
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (-np.asarray(half) - o) / v, (np.asarray(half) - o) / v
    t_in = np.minimum(t1, t2).max(axis=1)
    t_out = np.maximum(t1, t2).min(axis=1)
    return np.where((t_in <= t_out) & (t_in > 0), t_in, np.inf)


def _assert_sees_box(scan, T, iid: int, center, half, yaw: float = 0.0) -> int:
    """Every ray entering the box returns from it, at the box face, labelled as instance `iid`
    of class robot; no other point is labelled so. Returns how many rays hit it."""
    t = _box_hits(scan, T, center, half, yaw)
    on = np.isfinite(t)
    np.testing.assert_array_equal(scan.instance == iid, on)
    np.testing.assert_allclose(scan.range[on], t[on], rtol=0, atol=1e-5)
    assert (scan.semantic[on] == class_id("robot")).all() and scan.dynamic[on].all()
    return int(on.sum())


def _reset(world) -> None:
    _place(world, "a", A_POS)
    _place(world, "b", B_POS)


def test_a_lidar_sees_the_other_robot_at_its_face_and_never_its_own_links(robots_world):
    world, _, _ = robots_world
    _reset(world)
    half = make_robot().half_size
    for caster in CASTERS:
        scan, T = _sweep(robots_world, "a", caster)
        # a's LiDAR sits inside its frame and its cage (whose corners are < 0.55 m from it):
        # neither is ever hit
        assert A_ID not in scan.instance and scan.range.min() > 0.55
        assert _assert_sees_box(scan, T, B_ID, B_POS, half) > 50, caster


def test_the_other_robots_every_link_is_seen(robots_world):
    """b's LiDAR sees a's cage (a's second link, not its mount) at the cage's faces."""
    world, _, _ = robots_world
    _reset(world)
    for caster in CASTERS:
        scan, T = _sweep(robots_world, "b", caster)
        assert B_ID not in scan.instance
        assert _assert_sees_box(scan, T, A_ID, A_POS, (CAGE_HALF,) * 3) > 150, caster


def test_every_caster_gives_the_same_points(robots_world):
    world, _, _ = robots_world
    _reset(world)
    for robot in ("a", "b"):
        scans = [_sweep(robots_world, robot, caster)[0] for caster in CASTERS]
        for scan in scans[1:]:
            np.testing.assert_array_equal(scan.instance, scans[0].instance)
            np.testing.assert_allclose(scan.points, scans[0].points, rtol=0, atol=1e-6)
            np.testing.assert_allclose(scan.range, scans[0].range, rtol=0, atol=1e-6)


def test_returns_follow_the_other_robot_as_it_moves(robots_world):
    """b moves (and turns) between two sweeps: a's returns from b follow it, none is left
    where b was."""
    world, _, _ = robots_world
    half = make_robot().half_size
    moved, yaw = (1.4, 0.25, 1.2), 0.6
    for caster in CASTERS:
        _reset(world)
        before, T = _sweep(robots_world, "a", caster)
        near = _assert_sees_box(before, T, B_ID, B_POS, half)
        _place(world, "b", moved, yaw)
        after, T = _sweep(robots_world, "a", caster)
        far = _assert_sees_box(after, T, B_ID, moved, half, yaw)
        assert 0 < far < near, caster  # farther away, b fills fewer beams
        # the beams that met b where it was now pass through: no return from there
        was = _box_hits(after, T, B_POS, half, 0.0)
        through = np.isfinite(was) & (after.instance != B_ID)
        assert through.sum() > near // 2 and (after.range[through] > was[through] + 0.3).all()
    _reset(world)


def test_a_two_drone_run_with_a_lidar_validates(tmp_path, gl_backend):
    from twinsim.sim import run

    overrides = [
        "robots.alpha.kind=drone",
        "robots.bravo.kind=drone",
        "robots.alpha.sensors.lidar0.kind=lidar",
        "robots.alpha.sensors.lidar0.model=vlp-16",
        "robots.alpha.sensors.lidar0.columns=90",
    ]
    cfg = load_config("tiny", overrides, seed=4, duration_s=0.2)
    out = run(cfg, tmp_path / "seq")
    report = validate_sequence(out)
    assert report.ok, report.problems
    seq = open_sequence(out)
    alpha = seq.scene.robot_named("alpha").instance_id
    scans = list(seq.lidar("alpha.lidar0"))
    assert scans and all(len(s) > 0 for s in scans)
    assert not any((s.instance == alpha).any() for s in scans)  # never its own robot
