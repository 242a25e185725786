"""`SceneSpec`: the fully resolved world as plain, JSON-serialisable data.

Everything the engine needs to build a world lives here, with no randomness left: the same
`scene.json` always builds the same world. Conventions: SI units, world z up, floors at z = 0,
quaternions in MuJoCo order (w, x, y, z), object geometry given in the object's own frame.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from twinsim.compat.sequence import upgrade_scene
from twinsim.model.base import (
    IDENTITY_QUAT,
    RGB,
    RGBA,
    FrozenSpec,
    GeomType,
    Quat,
    Vec2,
    Vec3,
)
from twinsim.model.layout import ASSETS
from twinsim.model.people import PersonSpec
from twinsim.model.roads import RoadNetworkSpec
from twinsim.model.sensors import SENSOR_SPEC, SensorSpec
from twinsim.plugins import keyed_config
from twinsim.registries import DEFAULT_ROBOT, DEFAULT_ROBOT_KIND, ROBOTS

TextureKind = Literal["wood", "tiles", "carpet", "plaster", "wallpaper", "fabric"]
RoomType = Literal["living_room", "kitchen", "bedroom", "bathroom", "corridor", "office"]

#: 2: `robots` (each with its `name`) replaced the one `robot`, and sensors name their robot;
#: format 1 still reads (as one robot named `robot`, `twinsim.compat` until its removal)
#: 3: `hinge_range_unit` (older scenes' hinge ranges were read by MuJoCo as degrees)
SCENE_FORMAT_VERSION = 3


class TextureSpec(FrozenSpec):
    """A procedural texture: regenerated bit for bit from (kind, seed, size, colours, params)."""

    name: str
    kind: TextureKind
    seed: int
    size: int = 256
    color_a: RGB
    color_b: RGB
    params: dict[str, float] = Field(default_factory=dict)


class MaterialSpec(FrozenSpec):
    name: str
    texture: str | None = None
    rgba: RGBA = (1.0, 1.0, 1.0, 1.0)
    specular: float = 0.3
    shininess: float = 0.3
    reflectance: float = 0.0
    texrepeat: Vec2 = (1.0, 1.0)
    texuniform: bool = True


class GeomSpec(FrozenSpec):
    """A primitive in its object's frame; `size` as MuJoCo has it (half extents, radius, …)."""

    type: GeomType
    size: tuple[float, ...]
    pos: Vec3 = (0.0, 0.0, 0.0)
    quat: Quat = IDENTITY_QUAT
    material: str


class ObjectSpec(FrozenSpec):
    """One instance: structure (wall, floor, …) or furniture, with its semantic class.

    An object with a `mesh` (the sha256 of one of `SceneSpec.mesh_assets`) is that mesh posed
    at `pos`/`quat`: cameras, the LiDAR, physics and the mesh exports take the mesh and its
    convex parts, and its `geoms` are the boxes around those parts (material: the asset's),
    for what works with primitives (planning, free space, occupancy, the live map).
    """

    instance_id: int = Field(ge=1, le=65535)
    name: str
    semantic_class: str
    room_id: int | None = None
    pos: Vec3
    quat: Quat = IDENTITY_QUAT
    geoms: tuple[GeomSpec, ...]
    dynamic: bool = False
    mesh: str | None = None

    @model_serializer(mode="wrap")
    def _leave_out_no_mesh(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        """The dump without `mesh` when the object has none (scenes without assets keep their
        bytes)."""
        data = handler(self)
        if self.mesh is None:
            data.pop("mesh", None)
        return data


class MeshAssetSpec(FrozenSpec):
    """A mesh asset of the scene: its processed arrays (`twinsim.meshdata`) are the file
    `file` (`assets/<sha256>.npz`) of the sequence folder, whose bytes hash to `sha256`.

    `material` names the scene material of its mean colour (of the untextured mesh, of its
    part boxes). The rest says where it came from and how it was made: the catalogue entry's
    `source` file and that file's sha256, the `scale` (from `units` or `scale`) and `up_axis`
    applied, how it is coloured, its vertex and face counts, and its collision: `coacd` parts
    (at `coacd_threshold`), or the convex `hull` or the bounding `box` where the decomposition
    failed or was not asked for (`collision_note` says why it failed).
    """

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    file: str
    name: str
    material: str
    source: str
    source_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    scale: float = Field(gt=0.0)
    up_axis: Literal["y", "z"]
    colouring: Literal["texture", "vertex", "material"]
    vertices: int = Field(ge=3)
    faces: int = Field(ge=1)
    collision: Literal["coacd", "hull", "box"]
    collision_parts: int = Field(ge=1)
    coacd_threshold: float | None = None
    collision_note: str | None = None

    @model_validator(mode="after")
    def _file_is_named_by_its_hash(self) -> MeshAssetSpec:
        """`file` is `assets/<sha256>.npz`: a scene never points outside its assets folder."""
        expected = f"{ASSETS}/{self.sha256}.npz"
        if self.file != expected:
            raise ValueError(f"mesh asset file {self.file!r} must be {expected!r}")
        return self


class RoomSpec(FrozenSpec):
    room_id: int
    type: RoomType
    name: str
    polygon: tuple[Vec2, ...]


class DoorSpec(FrozenSpec):
    """An opening in the wall between two rooms; `axis` is the direction the wall runs."""

    door_id: int
    rooms: tuple[int, int]
    center: Vec2
    width: float
    height: float
    axis: Literal["x", "y"]


class LightSpec(FrozenSpec):
    name: str
    pos: Vec3
    dir: Vec3 = (0.0, 0.0, -1.0)
    diffuse: RGB
    specular: RGB = (0.1, 0.1, 0.1)
    ambient: RGB = (0.0, 0.0, 0.0)
    directional: bool = False
    castshadow: bool = False
    attenuation: Vec3 = (1.0, 0.0, 0.0)
    cutoff_deg: float = 90.0
    exponent: float = 1.0


class TerrainSpec(FrozenSpec):
    """Hills as a height field over the world (`scene/terrain.py` makes and meshes it).

    Samples lie on a `rows` × `cols` grid spanning `center` ± `half_size` (row index along y,
    column along x); a sample's height above `base_z` is `top_m` × h / 65535 for its uint16 h
    (little-endian, row-major, base64 in `heights_b64`). Height 0 is the flat land, which the
    object `instance_id` (class terrain) already covers; the terrain belongs to that object.
    """

    instance_id: int = Field(ge=1, le=65535)
    material: str
    center: Vec2
    half_size: Vec2
    base_z: float
    top_m: float = Field(gt=0.0)
    rows: int = Field(ge=2)
    cols: int = Field(ge=2)
    heights_b64: str

    @model_validator(mode="after")
    def _samples_fill_the_grid(self) -> TerrainSpec:
        """`heights_b64` is base64 of exactly rows × cols uint16 samples."""
        try:
            size = len(base64.b64decode(self.heights_b64, validate=True))
        except binascii.Error as err:
            raise ValueError(f"heights_b64 is not base64: {err}") from None
        if size != 2 * self.rows * self.cols:
            raise ValueError(
                f"heights_b64 holds {size} bytes; rows × cols = {self.rows} × {self.cols} "
                f"uint16 samples need {2 * self.rows * self.cols}"
            )
        return self


class PathPoint(FrozenSpec):
    """A timed waypoint of the robot's planned path: time since the start of motion, pose, yaw."""

    t_s: float
    pos: Vec3
    yaw: float


class RobotSpec(FrozenSpec):
    """What every robot kind records of itself; a kind adds its own fields (`twinsim.robots`).

    `kind` names the registered robot kind that builds, drives and restarts it; `name` is the
    robot's name in the run (its streams say it); `path` is the planned motion of a scripted
    run (empty when the robot is driven from outside).
    """

    kind: str
    name: str = DEFAULT_ROBOT
    # the robot as an instance (class `robot`) in the other robots' images; None when it is
    # the only robot (no camera sees it) and in format 1
    instance_id: int | None = Field(None, ge=1, le=65535)
    start_pos: Vec3
    start_yaw: float
    path: tuple[PathPoint, ...] = ()

    def footprint_radius(self) -> float:
        """The radius of a circle about the body frame that holds the robot's footprint, which
        planning, people and traffic keep clear of; a ground kind's spec says its own."""
        return DEFAULT_FOOTPRINT_RADIUS_M


#: the footprint radius of a robot whose spec does not say it (a drone, a user's robot file)
DEFAULT_FOOTPRINT_RADIUS_M = 0.3


def _robot_spec_model(entry) -> type[RobotSpec]:
    return entry.spec_model


class Keyframe(FrozenSpec):
    t_s: float
    pos: Vec3
    quat: Quat
    scale: float = Field(1.0, gt=0.0)


class FlyingObjectSpec(FrozenSpec):
    """An object moved by time-keyed transforms (position, orientation, scale) between goals."""

    instance_id: int = Field(ge=1, le=65535)
    name: str
    semantic_class: str
    geoms: tuple[GeomSpec, ...]
    keyframes: tuple[Keyframe, ...]


class RedrawSpec(FrozenSpec):
    """How a world was built when the first draw of its seed left no room for its robots
    (`twinsim.assemble.build_scene`): the draw of people and robot starts that built it (0 is
    the seed's own; the layout is always the seed's), the people asked for in it (the config's
    count, or fewer once redraws of the whole crowd failed), and why each earlier draw failed."""

    draw: int = Field(ge=0)
    people_requested: int = Field(ge=0)
    failures: tuple[str, ...]


ROBOT_SPEC = keyed_config(ROBOTS, "kind", DEFAULT_ROBOT_KIND, _robot_spec_model)


class SceneSpec(FrozenSpec):
    format_version: int = SCENE_FORMAT_VERSION
    seed: int
    wall_height: float
    bounds_min: Vec3
    bounds_max: Vec3
    rooms: tuple[RoomSpec, ...]
    doors: tuple[DoorSpec, ...]
    objects: tuple[ObjectSpec, ...]
    textures: tuple[TextureSpec, ...]
    materials: tuple[MaterialSpec, ...]
    lights: tuple[LightSpec, ...]
    robots: tuple[ROBOT_SPEC, ...]  # type: ignore[valid-type]
    sensors: tuple[SENSOR_SPEC, ...] = ()  # type: ignore[valid-type]
    people: tuple[PersonSpec, ...] = ()
    flying_objects: tuple[FlyingObjectSpec, ...] = ()
    #: how the engine gives MuJoCo the robots' hinge ranges (`JointSpec.range`, in rad): "rad"
    #: converts them for MuJoCo's degree-reading compiler; "deg" hands the numbers over as
    #: they are, as twinsim did up to scene format 2 (a 0.44 rad limit became 0.44°), so old
    #: sequences replay exactly as they were recorded
    hinge_range_unit: Literal["rad", "deg"] = "rad"
    #: an outdoor world's road network (lanes, junctions, lights, sidewalks, crossings,
    #: blocks); absent indoors, and then left out of `scene.json` so indoor scenes keep
    #: their bytes
    roads: RoadNetworkSpec | None = None
    #: hills over the flat land (a hilly town); absent elsewhere, and then left out of
    #: `scene.json` as `roads` is
    terrain: TerrainSpec | None = None
    #: how the world was built when its seed's first draw did not fit; absent (and left out
    #: of `scene.json`) when it did
    redraw: RedrawSpec | None = None
    #: the mesh assets objects show (`ObjectSpec.mesh`); left out of `scene.json` when none
    mesh_assets: tuple[MeshAssetSpec, ...] = ()
    #: each asset's NPZ bytes by sha256, attached by whoever made or read the scene
    #: (`with_asset_bytes`); never in `scene.json`, whose assets are files beside it
    _asset_bytes: dict[str, bytes] = PrivateAttr(default_factory=dict)

    @model_serializer(mode="wrap")
    def _leave_out_absent_parts(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        """The dump without `roads`, `terrain`, `redraw` or `mesh_assets` when the world has
        none."""
        data = handler(self)
        for name in ("roads", "terrain", "redraw"):
            if getattr(self, name) is None:
                data.pop(name, None)
        if not self.mesh_assets:
            data.pop("mesh_assets", None)
        return data

    @model_validator(mode="before")
    @classmethod
    def _read_older_formats(cls, data: Any) -> Any:
        """A format-1 scene as format 2 (`twinsim.compat`); a format-2 scene as format 3,
        with its hinge ranges built as they were (`"deg"`)."""
        if not isinstance(data, dict) or data.get("format_version") not in (1, 2):
            return data
        data = upgrade_scene(data)
        return data | {"format_version": SCENE_FORMAT_VERSION, "hinge_range_unit": "deg"}

    @model_validator(mode="after")
    def _terrain_belongs_to_an_object(self) -> SceneSpec:
        """The terrain names an object of the scene and a material it has."""
        terrain = self.terrain
        if terrain is None:
            return self
        if not any(o.instance_id == terrain.instance_id for o in self.objects):
            raise ValueError(f"terrain.instance_id={terrain.instance_id} is no object's")
        if not any(m.name == terrain.material for m in self.materials):
            raise ValueError(f"terrain.material={terrain.material!r} is not among the materials")
        return self

    @model_validator(mode="after")
    def _meshes_are_assets(self) -> SceneSpec:
        """Every object's mesh is one of the scene's assets, each listed once with a material
        of the scene."""
        known = {a.sha256 for a in self.mesh_assets}
        if len(known) != len(self.mesh_assets):
            raise ValueError("mesh_assets lists an asset twice")
        materials = {m.name for m in self.materials}
        for asset in self.mesh_assets:
            if asset.material not in materials:
                raise ValueError(f"mesh asset {asset.name!r}: no material {asset.material!r}")
        for obj in self.objects:
            if obj.mesh is not None and obj.mesh not in known:
                raise ValueError(f"object {obj.name!r}: mesh {obj.mesh} is not in mesh_assets")
        return self

    def with_asset_bytes(self, blobs: Mapping[str, bytes]) -> SceneSpec:
        """This scene with each mesh asset's NPZ bytes (by sha256) attached; `ValueError`
        where one is missing or does not hash to its name."""
        attached = {}
        for asset in self.mesh_assets:
            blob = blobs.get(asset.sha256)
            if blob is None:
                raise ValueError(f"{asset.file}: mesh asset {asset.name!r} is missing")
            if hashlib.sha256(blob).hexdigest() != asset.sha256:
                raise ValueError(f"{asset.file}: its content does not hash to its name")
            attached[asset.sha256] = blob
        scene = self.model_copy()
        scene._asset_bytes = attached
        return scene

    def asset_bytes(self, sha256: str) -> bytes:
        """The NPZ bytes of the mesh asset `sha256` (attached by `with_asset_bytes`)."""
        blob = self._asset_bytes.get(sha256)
        if blob is None:
            raise ValueError(
                f"mesh asset {sha256} has no bytes attached: read the scene with its sequence "
                "folder (SequenceReader.scene) or build it with its assets"
            )
        return blob

    def asset_files(self) -> dict[str, bytes]:
        """Each mesh asset's file in a sequence folder (`assets/<sha256>.npz`) → its bytes."""
        return {a.file: self.asset_bytes(a.sha256) for a in self.mesh_assets}

    def mesh_asset(self, sha256: str) -> MeshAssetSpec:
        """The mesh asset named by `sha256` (an `ObjectSpec.mesh`)."""
        return next(a for a in self.mesh_assets if a.sha256 == sha256)

    @property
    def robot(self) -> RobotSpec:
        """The first robot (the only one of a one-robot run)."""
        return self.robots[0]

    def robot_named(self, name: str) -> RobotSpec:
        """The robot called `name`."""
        for robot in self.robots:
            if robot.name == name:
                return robot
        raise KeyError(f"no robot {name!r}; robots: {', '.join(r.name for r in self.robots)}")

    def robot_sensors(self, name: str) -> tuple[SensorSpec, ...]:
        """The sensors on the robot called `name`, in order."""
        return tuple(s for s in self.sensors if s.robot == name)

    def stream_prefix(self, robot: str) -> str:
        """What a stream name of the robot starts with: nothing when it is the only robot,
        else `<robot>.` (so `cam0` of robot `b` is the stream `b.cam0`)."""
        return "" if len(self.robots) == 1 else f"{robot}."

    def to_json(self) -> str:
        """Canonical JSON text (stable key order, so equal scenes give equal bytes)."""
        return self.model_dump_json(indent=1)

    @classmethod
    def from_json(cls, text: str) -> SceneSpec:
        return cls.model_validate_json(text)

    def instance_table(self) -> list[dict]:
        """One row per instance: id, name, class, room, dynamic (the metadata's instance table)."""
        rows = [
            {
                "instance_id": o.instance_id,
                "name": o.name,
                "semantic_class": o.semantic_class,
                "room_id": o.room_id,
                "dynamic": o.dynamic,
            }
            for o in self.objects
        ]
        for p in self.people:
            for iid, cls in ((p.body_instance_id, "person"), (p.clothing_instance_id, "clothing")):
                rows.append(
                    {
                        "instance_id": iid,
                        "name": f"{p.name}_{cls}",
                        "semantic_class": cls,
                        "room_id": None,
                        "dynamic": True,
                        "person_id": p.person_id,
                    }
                )
        for f in self.flying_objects:
            rows.append(
                {
                    "instance_id": f.instance_id,
                    "name": f.name,
                    "semantic_class": f.semantic_class,
                    "room_id": None,
                    "dynamic": True,
                }
            )
        for r in self.robots:
            if r.instance_id is not None:
                rows.append(
                    {
                        "instance_id": r.instance_id,
                        "name": r.name,
                        "semantic_class": "robot",
                        "room_id": None,
                        "dynamic": True,
                        "robot": r.name,
                    }
                )
        return rows
