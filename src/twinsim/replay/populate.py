"""Add people and flying objects to a recorded world, keeping clear of the recorded robot path.

People are drawn and placed as in a generated world (GRADE's tries per person, rejected when
the animation's 3D trace hits something or the trace of a person placed before, here those
already in the world too), with one more obstacle: floor-to-ceiling columns along the path the
robot flew (from the replayed log). Flying objects are drawn as usual; they pass through the
robot (no contact), so they never change its motion. New instance ids follow the largest
recorded one.
"""

from __future__ import annotations

import numpy as np

from twinsim.assemble import make_actors
from twinsim.model.scene import GeomSpec, ObjectSpec, SceneSpec
from twinsim.model.sections import FlyingObjectsConfig, PeopleConfig

PATH_CLEARANCE_M = 0.6  # half width of the column kept free around the robot's path
COLUMN_STEP_M = 0.25


def _columns(iid: int, name: str, xy: np.ndarray, half: float, height: float) -> ObjectSpec:
    """An obstacle for placement only: square columns at points spaced along a polyline."""
    pts = [xy[0]]
    for p in xy[1:]:
        if np.linalg.norm(p - pts[-1]) >= COLUMN_STEP_M:
            pts.append(p)
    geoms = tuple(
        GeomSpec(
            type="box",
            size=(half, half, height / 2),
            pos=(float(x), float(y), height / 2),
            material="none",
        )
        for x, y in pts
    )
    return ObjectSpec(instance_id=iid, name=name, semantic_class="wall", pos=(0, 0, 0), geoms=geoms)


def added_people_config(
    recorded: PeopleConfig, count: int, motions: dict[str, float] | None
) -> PeopleConfig:
    """The recorded run's people config for `count` added people; `motions` (weights of the
    procedural motions, e.g. walkers only) replaces its mix and its motion-capture clips."""
    update: dict = {"count": count}
    if motions is not None:
        update |= {"motions": dict(motions), "bvh_files": []}
    return recorded.model_copy(update=update)


def add_actors(
    scene: SceneSpec,
    robot_xy: np.ndarray,
    people_cfg: PeopleConfig,
    flying_cfg: FlyingObjectsConfig,
    total_s: float,
    rng: np.random.Generator,
) -> tuple[SceneSpec, int]:
    """The scene with `people_cfg.count` people and `flying_cfg.count` flying objects added.

    Returns the scene and how many of the requested people could be placed.
    """
    path = _columns(65535, "robot_path", robot_xy, PATH_CLEARANCE_M, scene.wall_height)
    actors = make_actors(
        scene,
        people_cfg,
        flying_cfg,
        total_s,
        rng,
        rng,
        max(r["instance_id"] for r in scene.instance_table()) + 1,
        obstacles=(*scene.objects, path),
        occupied=scene.people,
        first_person_id=max((p.person_id for p in scene.people), default=-1) + 1,
        name_prefix="added",
    )
    return actors.into(scene), actors.placed
