"""`SceneSpec`: the fully resolved world as plain, JSON-serialisable data.

Everything the engine needs to build a world lives here, with no randomness left: the same
`scene.json` always builds the same world. Conventions: SI units, world z up, floors at z = 0,
quaternions in MuJoCo order (w, x, y, z), object geometry given in the object's own frame.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from twinsim.plugins import keyed_config
from twinsim.robots.registry import DEFAULT_ROBOT, ROBOTS
from twinsim.scene.roads import RoadNetworkSpec

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]
RGB = tuple[float, float, float]
RGBA = tuple[float, float, float, float]

IDENTITY_QUAT: Quat = (1.0, 0.0, 0.0, 0.0)

TextureKind = Literal["wood", "tiles", "carpet", "plaster", "wallpaper", "fabric"]
RoomType = Literal["living_room", "kitchen", "bedroom", "bathroom", "corridor", "office"]
GeomType = Literal["box", "cylinder", "sphere", "capsule", "ellipsoid"]

#: 2: `robots` (each with its `name`) replaced the one `robot`, and sensors name their robot;
#: format 1 still reads (as one robot named `robot`)
#: 3: `hinge_range_unit` (older scenes' hinge ranges were read by MuJoCo as degrees)
SCENE_FORMAT_VERSION = 3
ROBOT_GEOM_GROUP = 3  # MuJoCo geom group of robot parts: they collide, on-board cameras skip them


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TextureSpec(_Spec):
    """A procedural texture: regenerated bit for bit from (kind, seed, size, colours, params)."""

    name: str
    kind: TextureKind
    seed: int
    size: int = 256
    color_a: RGB
    color_b: RGB
    params: dict[str, float] = Field(default_factory=dict)


class MaterialSpec(_Spec):
    name: str
    texture: str | None = None
    rgba: RGBA = (1.0, 1.0, 1.0, 1.0)
    specular: float = 0.3
    shininess: float = 0.3
    reflectance: float = 0.0
    texrepeat: Vec2 = (1.0, 1.0)
    texuniform: bool = True


class GeomSpec(_Spec):
    """A primitive in its object's frame; `size` as MuJoCo has it (half extents, radius, …)."""

    type: GeomType
    size: tuple[float, ...]
    pos: Vec3 = (0.0, 0.0, 0.0)
    quat: Quat = IDENTITY_QUAT
    material: str


class ObjectSpec(_Spec):
    """One instance: structure (wall, floor, …) or furniture, with its semantic class."""

    instance_id: int = Field(ge=1, le=65535)
    name: str
    semantic_class: str
    room_id: int | None = None
    pos: Vec3
    quat: Quat = IDENTITY_QUAT
    geoms: tuple[GeomSpec, ...]
    dynamic: bool = False


class RoomSpec(_Spec):
    room_id: int
    type: RoomType
    name: str
    polygon: tuple[Vec2, ...]


class DoorSpec(_Spec):
    """An opening in the wall between two rooms; `axis` is the direction the wall runs."""

    door_id: int
    rooms: tuple[int, int]
    center: Vec2
    width: float
    height: float
    axis: Literal["x", "y"]


class LightSpec(_Spec):
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


class TerrainSpec(_Spec):
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


class PathPoint(_Spec):
    """A timed waypoint of the robot's planned path: time since the start of motion, pose, yaw."""

    t_s: float
    pos: Vec3
    yaw: float


class RobotSpec(_Spec):
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


class JointSpec(_Spec):
    """A joint of a robot link, in the link's frame; `range` limits it where given."""

    name: str
    type: Literal["slide", "hinge"]
    axis: Vec3
    range: tuple[float, float] | None = None
    armature: float = 0.0


class LinkGeomSpec(_Spec):
    """A robot part's collision shape, in its link's frame: coloured, hidden from on-board
    cameras (MuJoCo geom group `group`), massless when the link states its inertia.

    `friction` (sliding, torsional, rolling, as MuJoCo has it) and `solref` (the contact's
    time constant and damping ratio: a tyre's stiffness) replace MuJoCo's defaults where
    given; a contact takes them from the geom of higher `priority` (a wheel's grip or a
    caster's slip, whatever the floor's); None and 0 leave MuJoCo's defaults.
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
    priority: int = 0


class LinkSpec(_Spec):
    """A rigid link of a robot: placed on its parent (the world for the root), with joints;
    its centre of mass at `com` in its frame (None: at its origin), its principal moments of
    inertia `inertia` about it."""

    name: str
    parent: str | None = None
    pos: Vec3 = (0.0, 0.0, 0.0)
    quat: Quat = IDENTITY_QUAT
    mass_kg: float = Field(gt=0.0)
    inertia: Vec3
    com: Vec3 | None = None
    joints: tuple[JointSpec, ...] = ()
    geoms: tuple[LinkGeomSpec, ...] = ()


class ActuatorSpec(_Spec):
    """A motor on a joint: the control is its force (slide) or torque (hinge)."""

    name: str
    joint: str


class ModelAssetSpec(_Spec):
    """A file a robot model file references (a mesh, a texture), embedded whole so a replay
    needs nothing on disk: `path` as the model names it, relative to the model file's folder."""

    path: str
    sha256: str
    data_b64: str


class ModelFileSpec(_Spec):
    """A user's robot file (MJCF or URDF) as it was read: its text, SHA-256 and the files it
    references; `source` is where it was read from (for the record only)."""

    format: Literal["mjcf", "urdf"]
    source: str
    sha256: str
    text: str
    assets: tuple[ModelAssetSpec, ...] = ()


class AttachedModelSpec(_Spec):
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


class BodySpec(_Spec):
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


def _robot_spec_model(entry) -> type[RobotSpec]:
    return entry.spec_model


class LidarSpec(_Spec):
    """A spinning multi-beam LiDAR: one elevation per ring (ring 0 lowest), columns per turn."""

    model: str
    elevations_deg: tuple[float, ...]
    columns: int = Field(gt=0)
    min_range_m: float = Field(ge=0.0)
    max_range_m: float = Field(gt=0.0)


class EventSpec(_Spec):
    """Event camera model (ESIM / v2e): log-intensity contrast thresholds, refractory period."""

    threshold_pos: float = Field(gt=0.0)
    threshold_neg: float = Field(gt=0.0)
    refractory_ns: int = Field(ge=0)
    log_eps: float = Field(gt=0.0)


class GnssSpec(_Spec):
    """A GNSS receiver's datum: the WGS-84 point (deg, deg, m) at the world ENU origin."""

    origin_lat_deg: float = Field(ge=-90.0, le=90.0)
    origin_lon_deg: float = Field(ge=-180.0, le=180.0)
    origin_alt_m: float


class SensorSpec(_Spec):
    """A sensor on the body of the robot `robot`; `pos`/`quat` give T_body_sensor (camera: its
    optical frame).

    A LiDAR's frame is x forward, y left, z up; an event camera's is an OpenCV optical frame and
    its `rate_hz` is the internal render rate events are interpolated between. A camera's
    `exposure_s` and `rolling_shutter_readout_s` are simulated at render time (0: one instant).
    """

    name: str
    type: str  # a registered sensor kind (`twinsim.sensors.registry`)
    robot: str = DEFAULT_ROBOT
    rate_hz: int
    pos: Vec3
    quat: Quat
    width: int | None = None
    height: int | None = None
    hfov_deg: float | None = None
    near_m: float | None = None
    far_m: float | None = None
    lidar: LidarSpec | None = None
    events: EventSpec | None = None
    gnss: GnssSpec | None = None
    exposure_s: float = Field(0.0, ge=0.0)
    rolling_shutter_readout_s: float = Field(0.0, ge=0.0)


class HumanBodySpec(_Spec):
    """Body proportions and materials of one person (see `twinsim.actors.human`).

    `segment_scale` multiplies the reference skeleton's segment lengths per segment name so
    people differ in build, not only in height; materials name entries of `SceneSpec.materials`.
    """

    height_m: float = Field(ge=1.2, le=2.2)
    segment_scale: dict[str, float] = Field(default_factory=dict)
    girth_scale: float = 1.0
    skin_material: str
    shirt_material: str
    pants_material: str
    shoes_material: str
    hair_material: str | None = None


class HumanMotionSpec(_Spec):
    """How a person moves, fully resolved: a pure function of time built by `twinsim.actors`.

    Walks follow `waypoints` (world x, y of the root on the floor) at `speed_mps`; stationary
    motions (idle, wave, sit) stand at the first waypoint facing `heading`; a sit with a seat
    lowers the pelvis onto that seat's height (the waypoint is the seat's middle). One pass lasts
    `cycle_s`; playback runs forward then reversed (GRADE), so motion never stops. BVH clips are
    referenced by path and sha256 so a replay can check it uses the same file. `pauses` are
    waits `(start_s, duration_s)` in simulation time, in order and apart, during which the
    person's own time (what playback runs on) stands still: a walker yielding to a robot.
    """

    kind: Literal["walk", "idle", "wave", "sit", "bvh"]
    waypoints: tuple[Vec2, ...]
    heading: float = 0.0
    speed_mps: float = Field(1.0, ge=0.0)
    cycle_s: float = Field(gt=0.0)
    phase_s: float = 0.0
    gait_frequency_hz: float = Field(1.8, gt=0.0)
    bvh_path: str | None = None
    bvh_sha256: str | None = None
    seat_instance_id: int | None = None  # "sit" on this chair, armchair or sofa
    seat_height_m: float | None = Field(None, gt=0.0)  # its seat's top above the floor
    pauses: tuple[tuple[float, float], ...] = ()

    @field_validator("pauses")
    @classmethod
    def _pauses_in_order(
        cls, pauses: tuple[tuple[float, float], ...]
    ) -> tuple[tuple[float, float], ...]:
        """Each wait lasts a while and begins after the one before has ended."""
        end = float("-inf")
        for start, duration in pauses:
            if duration <= 0.0 or start < end:
                raise ValueError(f"pauses must last > 0 s and be in order apart, got {pauses}")
            end = start + duration
        return pauses


class PersonSpec(_Spec):
    """An animated person: two instances, body/skin (class person) and clothing (class clothing)."""

    person_id: int
    name: str
    body_instance_id: int = Field(ge=1, le=65535)
    clothing_instance_id: int = Field(ge=1, le=65535)
    body: HumanBodySpec
    motion: HumanMotionSpec


class Keyframe(_Spec):
    t_s: float
    pos: Vec3
    quat: Quat
    scale: float = Field(1.0, gt=0.0)


class FlyingObjectSpec(_Spec):
    """An object moved by time-keyed transforms (position, orientation, scale) between goals."""

    instance_id: int = Field(ge=1, le=65535)
    name: str
    semantic_class: str
    geoms: tuple[GeomSpec, ...]
    keyframes: tuple[Keyframe, ...]


ROBOT_SPEC = keyed_config(ROBOTS, "kind", "drone", _robot_spec_model)


class SceneSpec(_Spec):
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
    sensors: tuple[SensorSpec, ...] = ()
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

    @model_serializer(mode="wrap")
    def _leave_out_absent_parts(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        """The dump without `roads` or `terrain` when the world has none."""
        data = handler(self)
        for name in ("roads", "terrain"):
            if getattr(self, name) is None:
                data.pop(name, None)
        return data

    @model_validator(mode="before")
    @classmethod
    def _read_older_formats(cls, data: Any) -> Any:
        """A format-1 scene (one `robot`) as format 2: that robot, named `robot`; a format-1
        or -2 scene as format 3, with its hinge ranges built as they were (`"deg"`)."""
        if not isinstance(data, dict) or data.get("format_version") not in (1, 2):
            return data
        if data.get("format_version") == 1 and "robot" in data:
            robot = data["robot"]
            data = {k: v for k, v in data.items() if k != "robot"} | {"robots": [robot]}
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
