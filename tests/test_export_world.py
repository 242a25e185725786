"""The recorded world out again: `mjcf`, `mesh`, `occupancy` and `pointcloud` exports of a real
static run, each read back with the format's own reader (MuJoCo, trimesh, a map_server-rule
reader, a PCD reader) and checked against what the run's sensors recorded."""

from __future__ import annotations

import base64
import json
import re
import shutil
import struct
from types import SimpleNamespace

import mujoco
import numpy as np
import pytest
import trimesh
import yaml
from typer.testing import CliRunner

from conftest import digest_folder, make_robot
from twinsim.cli import app
from twinsim.export import ExportError, export_sequence
from twinsim.export.mesh import world_meshes
from twinsim.export.mjcf import export_mjcf
from twinsim.export.occupancy import export_occupancy
from twinsim.geometry import pose_to_T, primitive_half_extents
from twinsim.model.scene import (
    GeomSpec,
    LightSpec,
    MaterialSpec,
    ObjectSpec,
    SceneSpec,
    TerrainSpec,
)
from twinsim.scene.terrain import surface_z
from twinsim.scene.textures import make_texture
from twinsim.scene.vocabulary import class_id
from twinsim.sequence import open_sequence

WORLD_OVERRIDES = (
    "cameras.cam0.width=128",
    "cameras.cam0.height=96",
    "lidars.lidar0.model=vlp-16",
    "lidars.lidar0.columns=360",
)
FRAMES = (0, 15, 29)  # camera frames checked: first, middle, last of the 1 s run


@pytest.fixture(scope="module")
def world_sequence(tmp_path_factory, gl_backend):
    """A 1 s tiny world (no people, no flying objects) with a camera and a VLP-16 LiDAR."""
    from twinsim.config import load_config
    from twinsim.sim import run

    out = tmp_path_factory.mktemp("world") / "seq"
    return run(load_config("tiny", WORLD_OVERRIDES, seed=2, duration_s=1.0), out)


@pytest.fixture(scope="module")
def hits(world_sequence):
    """Depth of `FRAMES` back-projected: world points (n, 3), unit view rays (n, 3) and the
    instance each pixel saw (n,)."""
    cam = open_sequence(world_sequence).camera("cam0")
    points, rays, instances = [], [], []
    for i in FRAMES:
        frame = cam[i]
        v, u = np.nonzero(frame.depth > 0)
        z = frame.depth[v, u].astype(np.float64)
        K, T = frame.K, frame.T_world_cam
        local = np.stack([(u - K[0, 2]) * z / K[0, 0], (v - K[1, 2]) * z / K[1, 1], z], axis=1)
        world = local @ T[:3, :3].T + T[:3, 3]
        ray = world - T[:3, 3]
        points.append(world)
        rays.append(ray / np.linalg.norm(ray, axis=1, keepdims=True))
        instances.append(frame.instance[v, u].astype(np.int64))
    return np.concatenate(points), np.concatenate(rays), np.concatenate(instances)


@pytest.fixture(scope="module")
def mesh_export(world_sequence, tmp_path_factory):
    return export_sequence(world_sequence, "mesh", tmp_path_factory.mktemp("mesh") / "mesh")


@pytest.fixture(scope="module")
def world_ply(mesh_export):
    """The exported world as trimesh reads it, with each face's instance and class ids."""
    mesh = trimesh.load(mesh_export / "world.ply", process=False)
    faces = mesh.metadata["_ply_raw"]["face"]["data"]
    return mesh, np.asarray(faces["instance"]), np.asarray(faces["semantic"])


def distances_to_instances(world_ply, points: np.ndarray, instances: np.ndarray) -> np.ndarray:
    """Each point's distance to the exported surface of the instance it belongs to."""
    mesh, face_instance, _ = world_ply
    distance = np.full(len(points), np.inf)
    for iid in np.unique(instances):
        own = instances == iid
        part = trimesh.Trimesh(mesh.vertices, mesh.faces[face_instance == iid], process=False)
        if len(part.faces):
            distance[own] = part.nearest.on_surface(points[own])[1]
    return distance


# --- mjcf ---------------------------------------------------------------------------------


def render_depth(model: mujoco.MjModel, frame) -> np.ndarray:
    """MuJoCo's own renderer's depth (metres, 0 where nothing) of a pinhole camera with the
    frame's intrinsics at its recorded optical-frame pose."""
    height, width = frame.depth.shape
    renderer = mujoco.Renderer(model, height, width)
    renderer.enable_depth_rendering()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    free = mujoco.MjvCamera()
    free.type = mujoco.mjtCamera.mjCAMERA_FREE
    renderer.update_scene(data, camera=free)
    K, T = frame.K, frame.T_world_cam
    near, far = (model.vis.map.znear * model.stat.extent, model.vis.map.zfar * model.stat.extent)
    cx, cy = K[0, 2] + 0.5, K[1, 2] + 0.5  # the principal point from the image's corner
    for eye in renderer.scene.camera:  # OpenGL looks along −z with y up: optical z and −y
        eye.pos[:], eye.forward[:], eye.up[:] = T[:3, 3], T[:3, 2], -T[:3, 1]
        eye.frustum_near, eye.frustum_far = near, far
        eye.frustum_top = near * cy / K[1, 1]
        eye.frustum_bottom = -near * (height - cy) / K[1, 1]
        eye.frustum_center = near * (width / 2 - cx) / K[0, 0]
        eye.frustum_width = near * (width / 2) / K[0, 0]
    depth = renderer.render().copy()
    renderer.close()
    depth[depth >= 0.999 * far] = 0.0
    return depth


def test_mjcf_loads_anywhere_and_renders_the_recorded_depth(world_sequence, tmp_path) -> None:
    xml = export_sequence(world_sequence, "mjcf", tmp_path / "mjcf")
    assert xml == tmp_path / "mjcf/world.xml"
    text = xml.read_text()
    assert str(tmp_path) not in text and "<camera" not in text  # relative files; no robot
    textures, meshes = sorted((xml.parent / "textures").glob("*.png")), (xml.parent / "meshes")
    moved = shutil.copytree(xml.parent, tmp_path / "elsewhere")  # the folder moves whole
    model = mujoco.MjModel.from_xml_path(str(moved / "world.xml"))
    scene = open_sequence(world_sequence).scene
    assert model.ngeom == sum(len(o.geoms) for o in scene.objects)
    assert model.ntex == len(textures) == len(scene.textures) > 0
    assert model.nmesh == len(list(meshes.glob("*.obj"))) > 0
    assert model.nbody == len(scene.objects) + 1
    cam = open_sequence(world_sequence).camera("cam0")
    differences, disagree = [], 0
    for i in FRAMES:
        frame = cam[i]
        depth = render_depth(model, frame)
        both = (depth > 0) & (frame.depth > 0)
        disagree += int(((depth > 0) != (frame.depth > 0)).sum())
        differences.append(np.abs(depth[both] - frame.depth[both]))
    diff = np.concatenate(differences)
    assert len(diff) > 0.99 * len(FRAMES) * cam.width * cam.height and disagree == 0
    assert np.median(diff) <= 1e-3
    assert np.mean(diff > 0.01) < 0.01  # only silhouette pixels differ by more than 1 cm


# --- mesh ---------------------------------------------------------------------------------


def read_glb(path) -> dict:
    """The JSON chunk of a glTF binary (the spec's 12-byte header, then chunk 0: JSON)."""
    data = path.read_bytes()
    magic, version, length = struct.unpack_from("<4sII", data)
    assert (magic, version, length) == (b"glTF", 2, len(data))
    size, kind = struct.unpack_from("<I4s", data, 12)
    assert kind == b"JSON"
    return json.loads(data[20 : 20 + size])


def test_mesh_ply_faces_carry_the_scene_ids_and_colours(world_sequence, world_ply) -> None:
    mesh, face_instance, face_semantic = world_ply
    scene = open_sequence(world_sequence).scene
    assert sorted(set(face_instance.tolist())) == sorted(o.instance_id for o in scene.objects)
    materials = {m.name: m for m in scene.materials}
    textures = {t.name: t for t in scene.textures}
    for obj in scene.objects:
        own = face_instance == obj.instance_id
        assert set(face_semantic[own].tolist()) == {class_id(obj.semantic_class)}
        corners = []  # every vertex of the object lies within its geoms' world boxes
        for g in obj.geoms:
            T = pose_to_T(obj.pos, obj.quat) @ pose_to_T(g.pos, g.quat)
            reach = np.abs(T[:3, :3]) @ primitive_half_extents(g.type, g.size)
            corners += [T[:3, 3] - reach, T[:3, 3] + reach]
        vertices = mesh.vertices[np.unique(mesh.faces[own])]
        assert np.all(vertices >= np.min(corners, axis=0) - 1e-5)
        assert np.all(vertices <= np.max(corners, axis=0) + 1e-5)
        expected = set()  # the base colour of each geom's material: RGBA × the mean texel
        for g in obj.geoms:
            material = materials[g.material]
            rgba = np.asarray(material.rgba, float)
            if material.texture:
                rgba[:3] *= make_texture(textures[material.texture]).mean(axis=(0, 1)) / 255
            expected.add(tuple(np.round(255 * rgba).astype(int).tolist()))
        colours = mesh.visual.vertex_colors[np.unique(mesh.faces[own])]
        assert {tuple(c) for c in colours.tolist()} == expected


def test_mesh_glb_has_a_node_per_instance(world_sequence, mesh_export, world_ply) -> None:
    scene = open_sequence(world_sequence).scene
    gltf = read_glb(mesh_export / "world.glb")
    nodes = {n["name"]: n for n in gltf["nodes"]}
    assert set(nodes) == {f"{o.semantic_class}_{o.instance_id}" for o in scene.objects}
    for obj in scene.objects:
        extras = nodes[f"{obj.semantic_class}_{obj.instance_id}"]["extras"]
        assert extras["instance_id"] == obj.instance_id
        assert extras["semantic_class"] == obj.semantic_class
    loaded = trimesh.load(mesh_export / "world.glb")
    assert sum(len(g.faces) for g in loaded.geometry.values()) == len(world_ply[0].faces)


def test_recorded_depth_lies_on_the_mesh_of_the_instance_seen(world_ply, hits) -> None:
    points, _, instances = hits
    distance = distances_to_instances(world_ply, points, instances)
    assert np.median(distance) <= 1e-3
    assert np.percentile(distance, 95) <= 2e-3  # round geoms: both tessellations within 1 mm


# --- occupancy ----------------------------------------------------------------------------


class MapServerMap:
    """A map as ROS map_server loads it: `image` beside the YAML, trinary with `negate`,
    occupied above `occupied_thresh`, free below `free_thresh`; `origin` is the lower-left
    pixel's corner and image row 0 is the top (highest y)."""

    def __init__(self, yaml_path) -> None:
        meta = yaml.safe_load(yaml_path.read_text())
        self.meta = meta
        pixels = self._read_pgm(yaml_path.parent / meta["image"])
        p = pixels / 255.0 if meta["negate"] else (255.0 - pixels) / 255.0
        self.occupied = p > meta["occupied_thresh"]
        self.free = p < meta["free_thresh"]
        self.resolution = meta["resolution"]
        self.origin = np.asarray(meta["origin"][:2], float)

    @staticmethod
    def _read_pgm(path) -> np.ndarray:
        data = path.read_bytes()
        fields, pos = [], 0
        while len(fields) < 4:  # magic, width, height, maxval; `#` comments to end of line
            match = re.compile(rb"\s*(#[^\n]*\n|\S+)").match(data, pos)
            pos = match.end()
            if not match.group(1).startswith(b"#"):
                fields.append(match.group(1))
        assert fields[0] == b"P5" and int(fields[3]) == 255
        width, height = int(fields[1]), int(fields[2])
        return np.frombuffer(data, np.uint8, width * height, pos + 1).reshape(height, width)

    def cell(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row, column) of the pixel holding each world point (n, 2)."""
        col = np.floor((xy[:, 0] - self.origin[0]) / self.resolution).astype(int)
        row = len(self.occupied) - 1 - np.floor((xy[:, 1] - self.origin[1]) / self.resolution)
        return row.astype(int), col

    def occupied_at(self, xy: np.ndarray) -> np.ndarray:
        return self.occupied[self.cell(xy)]


def solid_boxes(scene, z_min: float, z_max: float):
    """World AABBs (lo, hi) of every geom reaching into the band, and of the walls' boxes."""
    boxes, walls = [], []
    for obj in scene.objects:
        for g in obj.geoms:
            T = pose_to_T(obj.pos, obj.quat) @ pose_to_T(g.pos, g.quat)
            reach = np.abs(T[:3, :3]) @ primitive_half_extents(g.type, g.size)
            lo, hi = T[:3, 3] - reach, T[:3, 3] + reach
            if hi[2] > z_min and lo[2] < z_max:
                boxes.append((lo, hi))
                if obj.semantic_class == "wall" and g.type == "box":
                    walls.append((lo, hi))
    return boxes, walls


def test_occupancy_map_as_map_server_reads_it(world_sequence, hits, tmp_path) -> None:
    out = export_sequence(world_sequence, "occupancy", tmp_path / "occ")
    grid = MapServerMap(out / "map.yaml")
    assert grid.meta["mode"] == "trinary" and grid.meta["resolution"] == 0.05
    assert np.all(grid.occupied ^ grid.free)  # 0 or 254 only: the geometry is known everywhere
    scene = open_sequence(world_sequence).scene
    boxes, walls = solid_boxes(scene, 0.1, 2.0)
    rows, cols = np.indices(grid.occupied.shape)
    x0 = grid.origin[0] + cols * grid.resolution  # each cell's lower-left corner
    y0 = grid.origin[1] + (len(grid.occupied) - 1 - rows) * grid.resolution
    near = np.zeros(grid.occupied.shape, bool)  # cells a geom's box reaches into
    for lo, hi in boxes:
        inside = (x0 < hi[0]) & (x0 + grid.resolution > lo[0])
        near |= inside & (y0 < hi[1]) & (y0 + grid.resolution > lo[1])
    assert not np.any(grid.occupied & ~near)  # nothing occupied where no geometry is
    cx, cy = x0 + grid.resolution / 2, y0 + grid.resolution / 2
    for lo, hi in walls:  # the cells whose centres lie inside a wall are occupied
        inside = (cx > lo[0]) & (cx < hi[0]) & (cy > lo[1]) & (cy < hi[1])
        assert inside.any() and np.all(grid.occupied[inside])
    points, rays, _ = hits
    in_band = (points[:, 2] > 0.1) & (points[:, 2] < 2.0)
    behind = points[in_band] + 0.001 * rays[in_band]  # just past the surface the camera saw
    assert np.mean(grid.occupied_at(behind[:, :2])) >= 0.95
    assert 0.05 < np.mean(grid.occupied) < 0.5


def test_occupancy_voxels_and_the_robot_start(world_sequence, hits, tmp_path) -> None:
    robot = open_sequence(world_sequence).scene.robot
    z = robot.start_pos[2]
    out = export_sequence(
        world_sequence, "occupancy", tmp_path / "occ", z_min_m=z - 0.1, z_max_m=z + 0.1
    )
    grid = MapServerMap(out / "map.yaml")
    assert not grid.occupied_at(np.array([robot.start_pos[:2]]))[0]
    with np.load(out / "voxels.npz", allow_pickle=False) as saved:
        occupancy, origin = saved["occupancy"], saved["origin"]
        voxel = float(saved["voxel_size"])
    assert voxel == 0.1 and occupancy.dtype == bool and occupancy.ndim == 3

    def voxel_at(p: np.ndarray) -> np.ndarray:
        i = np.floor((p - origin) / voxel).astype(int)
        return occupancy[i[:, 0], i[:, 1], i[:, 2]]

    assert not voxel_at(np.array([robot.start_pos]))[0]
    points, rays, _ = hits
    assert np.mean(voxel_at(points + 0.001 * rays)) >= 0.95  # past the surface: occupied
    assert np.mean(voxel_at(points - 0.3 * rays)) <= 0.1  # three voxels short of it: free


# --- pointcloud ---------------------------------------------------------------------------


def read_pcd(path) -> tuple[dict[str, list[str]], np.ndarray]:
    """A binary PCD v0.7 as PCL reads it: header lines up to DATA, then packed records of the
    FIELDS with SIZE bytes of TYPE (F float, U unsigned, I signed) each."""
    data = path.read_bytes()
    header, pos = {}, 0
    while True:
        end = data.index(b"\n", pos)
        line = data[pos:end].decode("ascii")
        pos = end + 1
        if line.startswith("#"):
            continue
        key, *values = line.split()
        header[key] = values
        if key == "DATA":
            break
    assert header["VERSION"] == ["0.7"] and header["DATA"] == ["binary"]
    kinds = {"F": "f", "U": "u", "I": "i"}
    dtype = np.dtype(
        [
            (name, f"<{kinds[t]}{s}")
            for name, s, t in zip(header["FIELDS"], header["SIZE"], header["TYPE"], strict=True)
        ]
    )
    count = int(header["POINTS"][0])
    assert count == int(header["WIDTH"][0]) * int(header["HEIGHT"][0])
    return header, np.frombuffer(data, dtype, count, pos)


def test_pointcloud_map_lies_on_the_world_mesh(world_sequence, world_ply, tmp_path) -> None:
    out = export_sequence(world_sequence, "pointcloud", tmp_path / "pc")
    header, cloud = read_pcd(out / "map.pcd")
    assert header["FIELDS"] == ["x", "y", "z", "intensity", "semantic", "instance"]
    xyz = np.stack([cloud["x"], cloud["y"], cloud["z"]], axis=1).astype(np.float64)
    voxels = np.floor(xyz / 0.05).astype(np.int64)
    assert len(np.unique(voxels, axis=0)) == len(cloud) > 1000  # one point a voxel
    ply = trimesh.load(out / "map.ply")
    np.testing.assert_array_equal(np.asarray(ply.vertices, np.float32), xyz.astype(np.float32))
    distance = distances_to_instances(world_ply, xyz, cloud["instance"].astype(np.int64))
    assert np.percentile(distance, 95) <= 0.01 and np.median(distance) <= 1e-3
    # placed with the sweep's start pose instead (no per-point time), the map would be off
    seq = open_sequence(world_sequence)
    scan = seq.lidar("lidar0")[5]
    start = scan.points.astype(np.float64) @ scan.T_world_lidar[:3, :3].T
    start += scan.T_world_lidar[:3, 3]
    skewed = distances_to_instances(world_ply, start, scan.instance.astype(np.int64))
    assert np.percentile(skewed, 95) > 0.01


def test_pointcloud_with_every_point(world_sequence, tmp_path) -> None:
    out = export_sequence(world_sequence, "pointcloud", tmp_path / "all", voxel_m=0.0)
    _, cloud = read_pcd(out / "map.pcd")
    scans = open_sequence(world_sequence).lidar("lidar0")
    assert len(cloud) == sum(len(s) for s in scans)
    np.testing.assert_array_equal(cloud["instance"], np.concatenate([s.instance for s in scans]))


def test_pointcloud_static_only_drops_people_and_flying_objects(tmp_path, gl_backend) -> None:
    from twinsim.config import load_config
    from twinsim.sim import run

    overrides = ("people.count=2", "flying_objects.count=2", "lidars.lidar0.model=vlp-16")
    seq = run(load_config("tiny", overrides, seed=2, duration_s=0.5), tmp_path / "seq")
    moving = {r["instance_id"] for r in open_sequence(seq).metadata["instances"] if r["dynamic"]}
    _, every = read_pcd(export_sequence(seq, "pointcloud", tmp_path / "a", voxel_m=0.0) / "map.pcd")
    out = export_sequence(seq, "pointcloud", tmp_path / "s", voxel_m=0.0, static_only=True)
    _, static = read_pcd(out / "map.pcd")
    assert np.isin(every["instance"], list(moving)).sum() > 0
    assert not np.isin(static["instance"], list(moving)).any()
    assert len(static) == len(every) - np.isin(every["instance"], list(moving)).sum()


# --- hills -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hill():
    """A reader of a hand-built world: flat land with one hill, a 2 m pyramid over a 3 × 3
    height field 8 m across, centred on the origin (what the exporters read of a sequence)."""
    heights = np.zeros((3, 3), "<u2")
    heights[1, 1] = 65535
    terrain = TerrainSpec(
        instance_id=1,
        material="grass",
        center=(0.0, 0.0),
        half_size=(4.0, 4.0),
        base_z=0.0,
        top_m=2.0,
        rows=3,
        cols=3,
        heights_b64=base64.b64encode(heights.tobytes()).decode("ascii"),
    )
    ground = ObjectSpec(
        instance_id=1,
        name="ground",
        semantic_class="terrain",
        pos=(0.0, 0.0, -0.05),
        geoms=(GeomSpec(type="box", size=(6.0, 6.0, 0.05), material="grass"),),
    )
    scene = SceneSpec(
        seed=0,
        wall_height=3.0,
        bounds_min=(-6.0, -6.0, -0.1),
        bounds_max=(6.0, 6.0, 2.0),
        rooms=(),
        doors=(),
        objects=(ground,),
        textures=(),
        materials=(MaterialSpec(name="grass", rgba=(0.2, 0.6, 0.2, 1.0)),),
        lights=(LightSpec(name="sun", pos=(0.0, 0.0, 10.0), diffuse=(0.7, 0.7, 0.7)),),
        robots=(make_robot(),),
        terrain=terrain,
    )
    return SimpleNamespace(scene=scene, metadata={"physics_hz": 240}, path="hill")


def test_the_hill_in_the_mjcf_mesh_and_occupancy(hill, tmp_path) -> None:
    xml = export_mjcf(hill, tmp_path / "mjcf")
    model = mujoco.MjModel.from_xml_path(str(xml))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    geomid = np.zeros(1, np.int32)
    for x, z in ((0.0, 2.0), (2.0, 1.0), (5.0, 0.0)):  # straight down onto the hill, the land
        down = np.array([0.0, 0.0, -1.0])
        hit = mujoco.mj_ray(model, data, np.array([x, 0.0, 5.0]), down, None, 1, -1, geomid)
        assert hit == pytest.approx(5.0 - z, abs=1e-6)
    (land,) = world_meshes(hill.scene)
    assert land.vertices[:, 2].max() == 2.0
    rng = np.random.default_rng(0)
    xy = rng.uniform(-3.9, 3.9, (200, 2))
    top = np.column_stack([xy, surface_z(hill.scene.terrain, xy[:, 0], xy[:, 1])])
    surface = trimesh.Trimesh(land.vertices, land.faces, process=False)
    assert np.abs(surface.nearest.on_surface(top)[1]).max() < 1e-9
    out = export_occupancy(hill, tmp_path / "occ", z_min_m=0.1, z_max_m=1.9)
    with np.load(out / "voxels.npz") as saved:
        occupancy, origin = saved["occupancy"], saved["origin"]

    def voxel_at(x: float, y: float, z: float) -> bool:
        i = np.floor((np.array([x, y, z]) - origin) / 0.1).astype(int)
        return bool(occupancy[tuple(i)])

    assert voxel_at(0.01, 0.01, 1.95) and voxel_at(2.01, 0.01, 0.95)  # under the surface
    assert not voxel_at(2.01, 0.01, 1.15) and not voxel_at(5.01, 0.01, 0.05)  # above it
    grid = MapServerMap(out / "map.yaml")
    assert grid.occupied_at(np.array([[0.0, 0.0], [2.0, 2.0]])).all()  # the hill over 0.1 m
    assert not grid.occupied_at(np.array([[3.9, 3.9], [5.0, 0.0]])).any()  # below 0.1 m


# --- every format -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["mjcf", "mesh", "occupancy", "pointcloud"])
def test_same_input_same_bytes(world_sequence, tmp_path, fmt) -> None:
    first = export_sequence(world_sequence, fmt, tmp_path / "a")
    second = export_sequence(world_sequence, fmt, tmp_path / "b")
    a = first if first.is_dir() else first.parent
    b = second if second.is_dir() else second.parent
    assert digest_folder(a) == digest_folder(b)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-f", "occupancy", "-o", "z_min_m=2", "-o", "z_max_m=1"], r"z_min_m=2.0 must be below"),
        (["-f", "occupancy", "-o", "resolution_m=0"], r"resolution_m=0.0 must be a cell size"),
        (["-f", "occupancy", "-o", "resolution_m=-1"], r"resolution_m=-1.0 must be a cell size"),
        (["-f", "occupancy", "-o", "resolution_m=0.00001"], r"resolution_m=1e-05 is too fine"),
        (["-f", "occupancy", "-o", "voxel_m=nan"], r"voxel_m=nan must be a cell size"),
        (["-f", "occupancy", "-o", "z_max_m=high"], r"z_max_m must be a number"),
        (["-f", "pointcloud", "-o", "static_only=maybe"], r"static_only must be true or false"),
        (["-f", "pointcloud", "-o", "voxel_m=-0.1"], r"voxel_m=-0.1 must be a voxel size"),
    ],
)
def test_bad_options_are_refused_in_one_line(world_sequence, tmp_path, args, message) -> None:
    out = tmp_path / "o"
    result = CliRunner().invoke(app, ["export", str(world_sequence), "--out", str(out), *args])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert text.startswith("error:") and re.search(message, text), text
    assert "Traceback" not in result.output and not out.exists()


def test_pointcloud_refuses_a_sequence_without_lidar(dynamic_sequence, tmp_path) -> None:
    with pytest.raises(ExportError, match="has no lidar stream"):
        export_sequence(dynamic_sequence, "pointcloud", tmp_path / "pc")
    assert not (tmp_path / "pc").exists()
