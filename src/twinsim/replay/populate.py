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

from twinsim.actors.flying import generate_flying_objects
from twinsim.actors.population import generate_people
from twinsim.config import FlyingObjectsConfig, PeopleConfig
from twinsim.scene.placement import place_people
from twinsim.scene.spec import GeomSpec, ObjectSpec, PersonSpec, SceneSpec

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


def _renamed(person: PersonSpec, old: str, new: str) -> PersonSpec:
    """The person named `new`, its material names (`mat_<old>_<part>`) renamed to match."""
    body = person.body.model_copy(
        update={
            field: getattr(person.body, field).replace(f"_{old}_", f"_{new}_")
            for field in (
                "skin_material",
                "shirt_material",
                "pants_material",
                "shoes_material",
                "hair_material",
            )
            if getattr(person.body, field) is not None
        }
    )
    return person.model_copy(update={"body": body, "name": new})


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
    next_id = max(r["instance_id"] for r in scene.instance_table()) + 1
    people, materials, textures = list(scene.people), list(scene.materials), list(scene.textures)
    placed = 0
    if people_cfg.count:
        h = scene.wall_height
        obstacles = [*scene.objects, _columns(65535, "robot_path", robot_xy, PATH_CLEARANCE_M, h)]
        result = generate_people(
            people_cfg,
            scene.rooms,
            scene.objects,
            rng,
            next_id,
            placement_fn=lambda candidates: place_people(
                candidates,
                obstacles,
                scene.rooms,
                h,
                total_s,
                rng,
                people_cfg.placement_attempts,
                people_cfg.max_trace_intersections,
                occupied=scene.people,
            ),
        )
        first_pid = max((p.person_id for p in scene.people), default=-1) + 1
        renames = {}
        for j, person in enumerate(result.people):
            pid = first_pid + j
            old, new = f"person_{j}", f"person_{pid}"
            renames[old] = new
            people.append(_renamed(person, old, new).model_copy(update={"person_id": pid}))

        def rename(name: str) -> str:
            for old, new in renames.items():
                if f"_{old}_" in name:
                    return name.replace(f"_{old}_", f"_{new}_")
            return name

        materials += [
            m.model_copy(
                update={"name": rename(m.name), "texture": m.texture and rename(m.texture)}
            )
            for m in result.materials
        ]
        textures += [t.model_copy(update={"name": rename(t.name)}) for t in result.textures]
        next_id += 2 * result.placed
        placed = result.placed
    flying = list(scene.flying_objects)
    if flying_cfg.count:
        objects, mats = generate_flying_objects(
            flying_cfg,
            scene.bounds_min,
            scene.bounds_max,
            scene.rooms,
            total_s,
            rng,
            next_id,
            name_prefix="added",
        )
        flying += objects
        materials += mats
    update = {
        "people": tuple(people),
        "flying_objects": tuple(flying),
        "materials": tuple(materials),
        "textures": tuple(textures),
    }
    return scene.model_copy(update=update), placed
