"""Dynamic actors in MuJoCo: people and flying objects as kinematic (mocap) bodies.

They move exactly as their motion functions say — set before every physics step. The robot
collides with people; flying objects are seen by every sensor but pass through the robot, so an
object swept across the lens (GRADE's WO runs) never changes the recorded flight. People are
one mocap body per body part; a geom belongs to the person's skin or clothing instance by its
layer. Flying objects also change scale, which MuJoCo allows by rewriting geom sizes and
offsets in the model.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from twinsim.actors.flying import FlyingMotion
from twinsim.actors.human import build_body
from twinsim.actors.motion import motion_for
from twinsim.actors.playback import HumanMotion
from twinsim.engine.primitives import add_primitive
from twinsim.model.people import PersonSpec
from twinsim.model.scene import FlyingObjectSpec, SceneSpec

NEAR_ROBOT_M = 3.0  # people farther than this from the robot need no pose between frames


def person_body_name(person: PersonSpec, part: str) -> str:
    return f"person{person.person_id}_{part}"


def flying_body_name(obj: FlyingObjectSpec) -> str:
    return f"fly{obj.instance_id}"


def add_actors(spec: mujoco.MjSpec, scene: SceneSpec) -> None:
    """Add a mocap body per person part and per flying object, with their geoms."""
    for person in scene.people:
        for part in build_body(person.body).parts:
            body = spec.worldbody.add_body()
            body.name = person_body_name(person, part.name)
            body.mocap = True
            for j, (g, layer) in enumerate(zip(part.geoms, part.layers, strict=True)):
                add_primitive(body, f"{body.name}_{layer}_g{j}", g)
    for obj in scene.flying_objects:
        body = spec.worldbody.add_body()
        body.name = flying_body_name(obj)
        body.mocap = True
        for j, g in enumerate(obj.geoms):  # seen by sensors, never pushing the robot
            add_primitive(body, f"{body.name}_g{j}", g, collides=False)


def actor_geom_instances(model: mujoco.MjModel, scene: SceneSpec) -> dict[int, np.ndarray]:
    """Instance id → MuJoCo geom ids of every person layer and flying object."""
    out: dict[int, list[int]] = {}
    for person in scene.people:
        for part in build_body(person.body).parts:
            body = model.body(person_body_name(person, part.name))
            for j, layer in enumerate(part.layers):
                iid = person.body_instance_id if layer == "skin" else person.clothing_instance_id
                out.setdefault(iid, []).append(int(body.geomadr[0]) + j)
    for obj in scene.flying_objects:
        body = model.body(flying_body_name(obj))
        out[obj.instance_id] = list(
            range(int(body.geomadr[0]), int(body.geomadr[0] + body.geomnum[0]))
        )
    return {iid: np.array(ids, dtype=int) for iid, ids in out.items()}


@dataclass
class _Flyer:
    motion: FlyingMotion
    mocap: int
    geoms: np.ndarray
    size: np.ndarray
    pos: np.ndarray
    rbound: np.ndarray
    aabb: np.ndarray


class ActorDriver:
    """Poses every actor at time t: mocap poses for all, geom scale for flying objects."""

    def __init__(self, model: mujoco.MjModel, scene: SceneSpec) -> None:
        self._model = model
        self._people = []
        for person in scene.people:
            names = [p.name for p in build_body(person.body).parts]
            mocap = np.array(
                [model.body_mocapid[model.body(person_body_name(person, n)).id] for n in names]
            )
            self._people.append((person, motion_for(person), mocap))
        self._flyers = []
        self._quat = np.zeros(4)
        for obj in scene.flying_objects:
            body = model.body(flying_body_name(obj))
            geoms = np.arange(int(body.geomadr[0]), int(body.geomadr[0] + body.geomnum[0]))
            self._flyers.append(
                _Flyer(
                    FlyingMotion(obj),
                    int(model.body_mocapid[body.id]),
                    geoms,
                    model.geom_size[geoms].copy(),
                    model.geom_pos[geoms].copy(),
                    model.geom_rbound[geoms].copy(),
                    model.geom_aabb[geoms].copy(),
                )
            )

    def people(self) -> list[tuple[PersonSpec, HumanMotion]]:
        """(spec, motion) of every person, for per-frame annotations."""
        return [(person, motion) for person, motion, _ in self._people]

    def apply(self, data: mujoco.MjData, t_s: float, robots_xy: np.ndarray | None = None) -> None:
        """Set the actors to their poses at t (call before the physics step of that instant).

        With `robots_xy` given ((N, 2), every robot's x, y), people whose pelvis was last seen
        farther than `NEAR_ROBOT_M` from every robot keep their previous pose: they cannot
        touch one before the next full update (one camera frame away), so physics is
        unchanged; flying objects, which never touch them, keep theirs too. Every step a
        sensor observes must be a full update (`robots_xy=None`).
        """
        for _, motion, mocap in self._people:
            if robots_xy is not None:
                d = data.mocap_pos[mocap[0], :2] - robots_xy
                if (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]).min() > NEAR_ROBOT_M**2:
                    continue
            data.mocap_pos[mocap], data.mocap_quat[mocap] = motion.part_pos_quat(t_s)
        if robots_xy is not None:
            return
        model = self._model
        for f in self._flyers:
            pos, R, scale = f.motion.pose(t_s)
            data.mocap_pos[f.mocap] = pos
            mujoco.mju_mat2Quat(self._quat, np.ascontiguousarray(R).ravel())
            data.mocap_quat[f.mocap] = self._quat
            model.geom_size[f.geoms] = f.size * scale
            model.geom_pos[f.geoms] = f.pos * scale
            model.geom_rbound[f.geoms] = f.rbound * scale
            model.geom_aabb[f.geoms] = f.aabb * scale
