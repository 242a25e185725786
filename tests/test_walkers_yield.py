"""Walkers wait for robots to pass (`twinsim.actors.yielding`): their roots keep a clearance
from every robot's planned position, and the waits are part of the motion as a pure function
of time (`HumanMotionSpec.pauses`), with nothing changed for a person without any."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError

from twinsim.actors.gait import procedural_source
from twinsim.actors.human import PART_NAMES, build_body
from twinsim.actors.motion import motion_for
from twinsim.actors.playback import PoseTable, own_time
from twinsim.actors.surface import sample_surface_points
from twinsim.actors.yielding import (
    PERSON_RADIUS_M,
    YIELD_MARGIN_M,
    RobotTrack,
    clearances,
    yield_times,
    yield_to_robots,
)
from twinsim.assemble import build_scene
from twinsim.config import load_config
from twinsim.geometry import quats_xyzw_to_matrices
from twinsim.model.people import HumanBodySpec, HumanMotionSpec, PersonSpec
from twinsim.model.scene import SceneSpec
from twinsim.model.trajectory import Trajectory
from twinsim.registries import ROBOTS

WALKERS = ["people.count=8", "people.motions={walk: 1.0}", "sim.duration_s=20"]
FEET = [PART_NAMES.index("l_foot"), PART_NAMES.index("r_foot")]


def _walker(pauses=()) -> PersonSpec:
    return PersonSpec(
        person_id=0,
        name="p0",
        body_instance_id=1,
        clothing_instance_id=2,
        body=HumanBodySpec(
            height_m=1.72,
            skin_material="skin",
            shirt_material="shirt",
            pants_material="pants",
            shoes_material="shoes",
        ),
        motion=HumanMotionSpec(
            kind="walk",
            waypoints=((0.0, 0.0), (3.0, 0.0), (3.0, 2.0)),
            speed_mps=1.1,
            cycle_s=4.6,
            phase_s=0.8,
            gait_frequency_hz=1.7,
            pauses=pauses,
        ),
    )


def _without_pauses(person: PersonSpec) -> PersonSpec:
    return person.model_copy(update={"motion": person.motion.model_copy(update={"pauses": ()})})


def _gaps(scene: SceneSpec, person: PersonSpec, t: np.ndarray) -> np.ndarray:
    """Root-to-planned-position distance less the clearance, per robot (R, N)."""
    root = motion_for(person).root_pose(t)[:, :2, 3]
    gaps = []
    for robot in scene.robots:
        planned = Trajectory.from_path_points(robot.path).sample(t).pos[:, :2]
        _, radius = ROBOTS.get(robot.kind).planned_footprint(robot, t[:1])
        clearance = PERSON_RADIUS_M + radius + YIELD_MARGIN_M
        gaps.append(np.linalg.norm(root - planned, axis=1) - clearance)
    return np.array(gaps)


def _walkers(scene: SceneSpec) -> list[PersonSpec]:
    return [p for p in scene.people if p.motion.kind == "walk"]


@pytest.mark.parametrize(
    ("preset", "overrides"),
    [
        ("tiny", ["robot.kind=omni", *WALKERS]),
        ("tiny", ["robot.kind=diff_drive", *WALKERS]),
        ("tiny", ["robot.kind=drone", *WALKERS]),
        ("team", []),  # two drones and an omni among the default world's 20 people, 60 s
    ],
)
def test_walkers_keep_clear_of_every_robots_planned_position(preset, overrides):
    """Every walker keeps clear of every robot's planned position, but one whom no stop keeps
    clear (a tour runs along its whole route: `yielding` warns), which stays where robots come
    least close, still short of contact (the two radii); the team's world has two such."""
    cfg = load_config(preset, overrides, seed=0)
    scene = build_scene(cfg)
    total = cfg.sim.bootstrap_s + cfg.sim.duration_s
    t = np.arange(round(total * 100) + 1) / 100.0  # 100 Hz
    walkers = _walkers(scene)
    before = [_gaps(scene, _without_pauses(p), t).min() for p in walkers]
    assert min(before) < -0.1  # without waits some walker would walk into a robot
    assert any(p.motion.pauses for p in walkers)
    after = {p.name: _gaps(scene, p, t).min() for p in walkers}
    assert min(after.values()) > -YIELD_MARGIN_M
    clear = [p for p in walkers if after[p.name] >= 0.0]
    assert len(walkers) - len(clear) <= (2 if preset == "team" else 0), after
    # between the samples (at the physics rate) the gap shrinks by at most a few millimetres
    fine = np.arange(round(total * 240) + 1) / 240.0
    assert min(_gaps(scene, p, fine).min() for p in clear) > -0.01
    # the people who keep their place have no waits
    assert not any(p.motion.pauses for p in scene.people if p.motion.kind != "walk")


def test_in_the_default_world_no_walker_reaches_the_quadruped():
    """A default world where, without waits, walkers would walk into the quadruped: with them
    every walker keeps clear of its planned position but at most one, which stays short of
    contact (the two radii). (Seed 0, the world where a walker once knocked the quadruped
    over, has furnished differently since furniture keeps a passage between doors; in it a
    walker whose whole route lies on the tour still comes within contact.)"""
    cfg = load_config("default", ["robot.kind=quadruped"], seed=6)
    scene = build_scene(cfg)
    t = np.arange(round(61.0 * 100) + 1) / 100.0
    contact = -YIELD_MARGIN_M  # the gap where the two radii touch
    walkers = _walkers(scene)
    before = np.array([_gaps(scene, _without_pauses(p), t).min() for p in walkers])
    after = np.array([_gaps(scene, p, t).min() for p in walkers])
    assert (before < contact).sum() >= 2
    assert after.min() > contact
    assert (after < 0.0).sum() <= 1


def test_a_motion_without_pauses_plays_as_the_ping_pong_of_its_table():
    """A person without waits moves exactly as before waits existed: the pose table at the
    clip time of the triangle wave, bit for bit, array and scalar alike."""
    person = _walker()
    motion = motion_for(person)
    spec = person.motion
    model = build_body(person.body)
    table = PoseTable.sample(procedural_source(model, spec), spec.cycle_s)
    t = np.linspace(-1.0, 23.0, 997)
    u = np.mod(t + spec.phase_s, 2.0 * spec.cycle_s)
    q, root = table(np.where(u <= spec.cycle_s, u, 2.0 * spec.cycle_s - u))
    want = model.forward_kinematics(quats_xyzw_to_matrices(q), root)
    assert np.array_equal(motion.part_poses(t)[:, :, :3, 3], want)
    assert np.array_equal(motion.root_xy(t), root[:, :2])
    for k in (0, 311, 996):
        assert np.array_equal(motion.part_poses(float(t[k]))[:, :3, 3], want[k])


def test_a_paused_walker_stands_still_then_walks_on_along_its_path():
    pauses = ((1.3, 2.0), (5.0, 0.7))
    paused, free = motion_for(_walker(pauses)), motion_for(_walker())
    t = np.linspace(0.0, 12.0, 2401)
    held = np.where(t < 1.3, 0.0, np.minimum(t - 1.3, 2.0))
    held += np.where(t < 5.0, 0.0, np.minimum(t - 5.0, 0.7))
    assert np.allclose(paused.part_poses(t), free.part_poses(t - held), atol=1e-12)
    for start, duration in pauses:
        during = t[(t >= start) & (t <= start + duration)]
        poses = paused.part_poses(during)
        assert len(during) > 10 and np.array_equal(poses, np.broadcast_to(poses[0], poses.shape))
    # it walks on from where it stopped, at its speed (1.1 m/s)
    stop, on, later = paused.root_xy(np.array([1.3, 3.3 + 1e-9, 4.3]))
    assert np.linalg.norm(on - stop) < 1e-6 and np.linalg.norm(later - on) > 0.9
    k = 777
    assert np.allclose(paused.part_poses(float(t[k])), paused.part_poses(t)[k], atol=1e-12)


def _straight_walker() -> PersonSpec:
    """Walking (0, 0) → (8, 0) at 1 m/s, 8 s a pass."""
    motion = HumanMotionSpec(
        kind="walk",
        waypoints=((0.0, 0.0), (8.0, 0.0)),
        speed_mps=1.0,
        cycle_s=8.0,
        gait_frequency_hz=1.8,
    )
    return _walker().model_copy(update={"motion": motion})


def _track_gaps(person: PersonSpec, tracks: list[RobotTrack], t: np.ndarray) -> np.ndarray:
    root = motion_for(person).root_pose(t)[:, :2, 3]
    gaps = [np.linalg.norm(root - track.xy, axis=1) for track in tracks]
    return np.array(gaps) - clearances(tracks)[:, None]


def test_a_wait_that_meets_a_robot_coming_later_is_followed_by_another():
    """Robot a crosses the walker's path at x = 3 at 4 s; robot b crosses x = 5 at 7.5 s,
    clear of the walker as planned, but not of the walker who waited for a."""
    person, t = _straight_walker(), yield_times(20.0)
    x = np.ones_like(t)
    a = RobotTrack(np.stack([3.0 * x, -2.0 + 0.5 * t], axis=1), 0.3)
    b = RobotTrack(np.stack([5.0 * x, 3.75 - 0.5 * t], axis=1), 0.3)
    assert _track_gaps(person, [a], t).min() < 0.0 < _track_gaps(person, [b], t).min()
    (wait_a,) = yield_to_robots(person, [a], t).motion.pauses
    assert yield_to_robots(person, [b], t) is person
    both = yield_to_robots(person, [a, b], t)
    assert both.motion.pauses[0] == wait_a and len(both.motion.pauses) == 2
    assert _track_gaps(both, [a, b], t).min() >= 0.0
    # each wait begins at a heel strike: both feet down, in step with the gait
    for start, _ in both.motion.pauses:
        steps = (own_time(start, both.motion.pauses) * 1.8) % 1.0
        assert min(steps, 1.0 - steps) < 1e-9


def test_a_motion_capture_clip_that_moves_waits_too(tmp_path):
    """A clip whose root walks forward and back (test_bvh's) stops before a robot crossing
    just beyond the far end of its walk."""
    from test_bvh import clip_text
    from test_bvh import person as clip_person

    path = tmp_path / "walk.bvh"
    path.write_text(clip_text())
    person, t = clip_person(path), yield_times(12.0)
    root = motion_for(person).root_xy(t)
    fwd = np.array([np.cos(0.7), np.sin(0.7)])  # the clip's heading
    far = root[0] + ((root - root[0]) @ fwd).max() * fwd + 0.6 * fwd
    robot = RobotTrack(far + (0.5 * t - 3.0)[:, None] * np.array([-fwd[1], fwd[0]]), 0.3)
    assert _track_gaps(person, [robot], t).min() < 0.0
    waited = yield_to_robots(person, [robot], t)
    assert waited.motion.pauses and _track_gaps(waited, [robot], t).min() >= 0.0


def test_a_walker_waits_on_both_feet():
    cfg = load_config("tiny", ["robot.kind=omni", *WALKERS], seed=0)
    scene = build_scene(cfg)
    paused = [p for p in _walkers(scene) if p.motion.pauses]
    assert paused
    for person in paused:
        motion = motion_for(person)
        points = sample_surface_points(motion.model, 60)
        for start, duration in person.motion.pauses:
            T = motion.part_poses(start + 0.5 * duration)
            lowest = [(T[i, :3, :3] @ points[i].T + T[i, :3, 3:])[2].min() for i in FEET]
            assert max(lowest) < 0.01, (person.name, start)


def test_pauses_are_in_order_and_old_scenes_without_them_load():
    with pytest.raises(ValidationError):
        _walker(((3.0, 1.0), (3.5, 1.0)))  # overlapping
    with pytest.raises(ValidationError):
        _walker(((3.0, 0.0),))
    cfg = load_config("tiny", ["robot.kind=omni", *WALKERS], seed=0)
    scene = build_scene(cfg)
    assert SceneSpec.from_json(scene.to_json()) == scene
    data = json.loads(scene.to_json())
    for person in data["people"]:
        del person["motion"]["pauses"]
    old = SceneSpec.from_json(json.dumps(data))
    assert [p.motion.pauses for p in old.people] == [()] * len(old.people)
    assert old.people == tuple(_without_pauses(p) for p in scene.people)
