"""A robot's body as data: links, joints, collision shapes, motors, or a user's model file.

Apart from `spec.py` (the world) because a robot kind derives its `BodySpec` from its own
spec when the engine builds it; only a user's model file and joints (`ModelFileSpec`,
`JointSpec`) are recorded in `scene.json`, inside that robot's spec. Conventions as `spec.py`.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field

from twinsim.model.base import (
    IDENTITY_QUAT,
    RGBA,
    ROBOT_GEOM_GROUP,
    FrozenSpec,
    GeomType,
    Quat,
    Vec2,
    Vec3,
)


class JointSpec(FrozenSpec):
    """A joint of a robot link, in the link's frame; `range` limits it where given."""

    name: str
    type: Literal["slide", "hinge"]
    axis: Vec3
    range: tuple[float, float] | None = None
    armature: float = 0.0


class LinkGeomSpec(FrozenSpec):
    """A robot part's collision shape, in its link's frame: coloured, hidden from on-board
    cameras (MuJoCo geom group `group`), massless when the link states its inertia.

    `friction` (sliding, torsional, rolling, as MuJoCo has it), `solref` (the contact's
    time constant and damping ratio: a tyre's stiffness) and `solimp` (MuJoCo's impedance
    d_min, d_max, width, midpoint, power: how the contact's hold grows with penetration)
    replace MuJoCo's defaults where given; a contact takes them from the geom of higher
    `priority` (a wheel's grip or a caster's slip, whatever the floor's); None and 0 leave
    MuJoCo's defaults.
    """

    name: str
    type: GeomType
    size: tuple[float, ...]
    pos: Vec3 = (0.0, 0.0, 0.0)
    quat: Quat = IDENTITY_QUAT
    rgba: RGBA = (0.15, 0.15, 0.18, 1.0)
    group: int = ROBOT_GEOM_GROUP
    mass_kg: float = 0.0
    friction: Vec3 | None = None
    solref: Vec2 | None = None
    solimp: tuple[float, float, float, float, float] | None = None
    priority: int = 0

    @property
    def volume(self) -> float:
        """The shape's volume (m³), which weights it in its link's centroid."""
        size = self.size
        if self.type == "box":
            return 8.0 * size[0] * size[1] * size[2]
        if self.type == "sphere":
            return 4.0 / 3.0 * math.pi * size[0] ** 3
        if self.type == "ellipsoid":
            return 4.0 / 3.0 * math.pi * size[0] * size[1] * size[2]
        barrel = 2.0 * math.pi * size[0] ** 2 * size[1]  # cylinder or capsule: r, half length
        return barrel + (4.0 / 3.0 * math.pi * size[0] ** 3 if self.type == "capsule" else 0.0)


class LinkSpec(FrozenSpec):
    """A rigid link of a robot: placed on its parent (the world for the root), with joints;
    its centre of mass at `com` in its frame (None: where its geometry is, the volume-weighted
    centroid of its geoms), its principal moments of inertia `inertia` about it."""

    name: str
    parent: str | None = None
    pos: Vec3 = (0.0, 0.0, 0.0)
    quat: Quat = IDENTITY_QUAT
    mass_kg: float = Field(gt=0.0)
    inertia: Vec3
    com: Vec3 | None = None
    joints: tuple[JointSpec, ...] = ()
    geoms: tuple[LinkGeomSpec, ...] = ()

    @property
    def centre_of_mass(self) -> Vec3:
        """`com` where given, else the volume-weighted centroid of the geoms (the origin for a
        link without any), in the link's frame: the mass sits where the link's material is."""
        if self.com is not None:
            return self.com
        volumes = [g.volume for g in self.geoms]
        total = sum(volumes)
        if total <= 0.0:
            return (0.0, 0.0, 0.0)
        return tuple(
            sum(v * g.pos[i] for v, g in zip(volumes, self.geoms, strict=True)) / total
            for i in range(3)
        )


class ActuatorSpec(FrozenSpec):
    """A motor on a joint: the control is its force (slide) or torque (hinge)."""

    name: str
    joint: str


class ModelAssetSpec(FrozenSpec):
    """A file a robot model file references (a mesh, a texture), embedded whole so a replay
    needs nothing on disk: `path` as the model names it, relative to the model file's folder."""

    path: str
    sha256: str
    data_b64: str


class ModelFileSpec(FrozenSpec):
    """A user's robot file (MJCF or URDF) as it was read: its text, SHA-256 and the files it
    references; `source` is where it was read from (for the record only)."""

    format: Literal["mjcf", "urdf"]
    source: str
    sha256: str
    text: str
    assets: tuple[ModelAssetSpec, ...] = ()


class AttachedModelSpec(FrozenSpec):
    """A robot model file compiled by MuJoCo and attached to the world (`engine/user_model.py`).

    Its root body `root` (the file's name) is placed at `pos`/`quat` on the world, its own free
    joint (if any) replaced by `base_joints`; every MuJoCo name from the file starts with
    `prefix`. `joints`, `actuators` and `geoms` list the file's (MuJoCo names, qpos and control
    order; unnamed geoms named by the engine). Where `mount_parent` is given (a body, MuJoCo
    name) the engine adds the body the robot's sensors mount on there, at `mount_pos` /
    `mount_quat` (a site's frame).
    """

    file: ModelFileSpec
    prefix: str
    root: str
    pos: Vec3 = (0.0, 0.0, 0.0)
    quat: Quat = IDENTITY_QUAT
    base_joints: tuple[JointSpec, ...] = ()
    joints: tuple[JointSpec, ...] = ()
    actuators: tuple[str, ...] = ()
    geoms: tuple[str, ...] = ()
    mount_parent: str | None = None
    mount_pos: Vec3 = (0.0, 0.0, 0.0)
    mount_quat: Quat = IDENTITY_QUAT

    def prefixed(self, prefix: str) -> AttachedModelSpec:
        """The same model with every MuJoCo name it lists starting with `prefix` too."""

        def joints(specs: tuple[JointSpec, ...]) -> tuple[JointSpec, ...]:
            return tuple(j.model_copy(update={"name": prefix + j.name}) for j in specs)

        return self.model_copy(
            update={
                "prefix": prefix + self.prefix,
                "base_joints": joints(self.base_joints),
                "joints": joints(self.joints),
                "actuators": tuple(prefix + a for a in self.actuators),
                "geoms": tuple(prefix + g for g in self.geoms),
                "mount_parent": None if self.mount_parent is None else prefix + self.mount_parent,
            }
        )


class BodySpec(FrozenSpec):
    """A robot's body as data, built by the engine: links (root first), actuators, and the link
    its sensors are mounted on (its frame is the robot's body frame, x forward, z up).

    `model` is a robot model file attached as it is (a user's MJCF or URDF); its joints follow
    the links', its own actuators the `actuators` (plain motors twinsim adds)."""

    links: tuple[LinkSpec, ...]
    actuators: tuple[ActuatorSpec, ...] = ()
    mount: str
    model: AttachedModelSpec | None = None

    @property
    def joints(self) -> tuple[JointSpec, ...]:
        """Every joint in kinematic order (the order of the robot's qpos and qvel)."""
        links = tuple(j for link in self.links for j in link.joints)
        if self.model is None:
            return links
        return (*links, *self.model.base_joints, *self.model.joints)

    @property
    def controls(self) -> tuple[str, ...]:
        """MuJoCo names of every actuator in control order: the motors, then the model's own."""
        own = () if self.model is None else self.model.actuators
        return (*(a.name for a in self.actuators), *own)

    @property
    def geom_names(self) -> tuple[str, ...]:
        """MuJoCo names of every geom of the body (the links', then the model's)."""
        own = () if self.model is None else self.model.geoms
        return (*(g.name for link in self.links for g in link.geoms), *own)

    def prefixed(self, prefix: str) -> BodySpec:
        """The same body with every MuJoCo name (links, joints, geoms, actuators) prefixed, so
        several robots of one kind share a model."""
        if not prefix:
            return self

        def link(spec: LinkSpec) -> LinkSpec:
            return spec.model_copy(
                update={
                    "name": prefix + spec.name,
                    "parent": None if spec.parent is None else prefix + spec.parent,
                    "joints": tuple(
                        j.model_copy(update={"name": prefix + j.name}) for j in spec.joints
                    ),
                    "geoms": tuple(
                        g.model_copy(update={"name": prefix + g.name}) for g in spec.geoms
                    ),
                }
            )

        actuators = tuple(
            a.model_copy(update={"name": prefix + a.name, "joint": prefix + a.joint})
            for a in self.actuators
        )
        links = tuple(link(x) for x in self.links)
        model = None if self.model is None else self.model.prefixed(prefix)
        return BodySpec(links=links, actuators=actuators, mount=prefix + self.mount, model=model)
