"""Robots plan their tours around people who keep their place (standing, waving, sitting):
such a person is an obstacle to planning only, never an object of the recorded world."""

from __future__ import annotations

import numpy as np

from twinsim.assemble import STATIONARY_MOTIONS, build_scene
from twinsim.config import load_config
from twinsim.model.trajectory import Trajectory


def test_a_ground_tour_keeps_clear_of_people_standing_still():
    cfg = load_config("default", ["robot.kind=omni", "people.count=20"], seed=0, duration_s=30)
    scene = build_scene(cfg)
    still = [p for p in scene.people if p.motion.kind in STATIONARY_MOTIONS]
    assert len(still) >= 3
    assert not any(o.name.startswith("keep_out") for o in scene.objects)
    robot = scene.robot
    trajectory = Trajectory.from_path_points(robot.path)
    t = np.linspace(0.0, robot.path[-1].t_s, 3000)
    xy = np.array([trajectory.reference(s).pos[:2] for s in t])
    people = np.array([p.motion.waypoints[0] for p in still])
    gaps = np.linalg.norm(xy[:, None, :] - people[None], axis=2).min(axis=0)
    # the base's footprint (0.25 m) and margin beyond the 0.3 m half-side of the keep-out
    assert gaps.min() > 0.3 + 0.25, gaps.min()
