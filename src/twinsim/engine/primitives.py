"""A `GeomSpec` primitive as a MuJoCo geom on a spec body (shared by every builder)."""

from __future__ import annotations

import mujoco

from twinsim.model.scene import GeomSpec

GEOM_TYPES = {
    "box": mujoco.mjtGeom.mjGEOM_BOX,
    "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
    "sphere": mujoco.mjtGeom.mjGEOM_SPHERE,
    "capsule": mujoco.mjtGeom.mjGEOM_CAPSULE,
    "ellipsoid": mujoco.mjtGeom.mjGEOM_ELLIPSOID,
}


def add_primitive(body, name: str, g: GeomSpec, collides: bool = True):
    """Add `g` to `body` (an `MjsBody`) under `name`; `collides=False` makes it visual only."""
    geom = body.add_geom()
    geom.name = name
    geom.type = GEOM_TYPES[g.type]
    geom.size = list(g.size) + [0.0] * (3 - len(g.size))
    geom.pos, geom.quat = g.pos, g.quat
    geom.material = g.material
    if not collides:
        geom.contype = geom.conaffinity = 0
    return geom
