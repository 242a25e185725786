"""Rendered round surfaces lie within 1 mm (or 0.1 % of their size) of the analytic shapes
that physics and the LiDAR use: depth back-projects onto the exact sphere, capsule, cylinder
and ellipsoid (a flying object's at the size it is scaled to); a flat face in the same view
shows that depth itself is far finer than that."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import box_room_scene, place
from twinsim.engine.round_meshes import builtin_error, round_mesh, surface_tolerance
from twinsim.model.scene import (
    FlyingObjectSpec,
    GeomSpec,
    Keyframe,
    MaterialSpec,
    ObjectSpec,
    TextureSpec,
)
from twinsim.model.sections import RenderConfig
from twinsim.sensors.annotate import annotate_frame
from twinsim.sensors.camera import backproject, intrinsics
from twinsim.sensors.kinds.camera import CameraConfig

EYE = (0.0, 0.0, 1.2)  # the drone's body; its camera sits 0.12 m ahead of it
#: instance id → (shape, size, centre, yaw that faces it); the crown is a town tree's
SHAPES = {
    1: ("sphere", (2.89,), (7.5, 0.0, 1.2), 0.0),
    2: ("sphere", (0.05,), (0.0, 0.45, 1.2), np.pi / 2),
    3: ("capsule", (0.12, 0.5), (-1.2, 0.0, 1.2), np.pi),
    4: ("cylinder", (0.15, 0.8), (0.0, -1.3, 1.2), -np.pi / 2),
    5: ("ellipsoid", (0.2, 0.15, 0.3), (-0.9, -0.9, 1.2), -3 * np.pi / 4),
    7: ("sphere", (0.14,), (0.9, 0.9, 1.2), np.pi / 4),  # a flying ball of 0.1 m scaled 1.4
}
FLYER, FLYER_SCALE = 7, 1.4
BOX = 6  # a flat-faced box in the crown's view, as far away: the depth's own precision
BOX_CENTRE, BOX_HALF = np.array([5.0, -3.2, 1.2]), np.array([0.5, 0.5, 1.0])
DEPTH_PRECISION_M = 5e-5


def _scene():
    objects = [
        ObjectSpec(
            instance_id=iid,
            name=f"{shape}{iid}",
            semantic_class="vegetation",
            room_id=0,
            pos=centre,
            geoms=(GeomSpec(type=shape, size=size, material="wood"),),
        )
        for iid, (shape, size, centre, _) in SHAPES.items()
        if iid != FLYER
    ]
    _, (radius,), centre, _ = SHAPES[FLYER]
    keys = tuple(Keyframe(t_s=t, pos=centre, quat=(1, 0, 0, 0), scale=FLYER_SCALE) for t in (0, 9))
    ball = GeomSpec(type="sphere", size=(radius / FLYER_SCALE,), material="wood")
    flyer = FlyingObjectSpec(
        instance_id=FLYER, name="ball", semantic_class="ball", geoms=(ball,), keyframes=keys
    )
    box = GeomSpec(type="box", size=tuple(BOX_HALF), material="grey")
    objects.append(
        ObjectSpec(
            instance_id=BOX,
            name="box",
            semantic_class="cabinet",
            room_id=0,
            pos=tuple(BOX_CENTRE),
            geoms=(box,),
        )
    )
    cam = CameraConfig(width=320, height=240, hfov_deg=90)
    return box_room_scene(cam, start=EYE).model_copy(
        update={"objects": tuple(objects), "flying_objects": (flyer,)}
    )


def _distance(shape: str, size: tuple, p: np.ndarray) -> np.ndarray:
    """Distance (m) of points in the shape's frame to its analytic surface (the ellipsoid's
    to first order, ample at these millimetres)."""
    r = size[0]
    if shape == "sphere":
        return np.abs(np.linalg.norm(p, axis=-1) - r)
    if shape == "capsule":
        axial = p[:, 2] - np.clip(p[:, 2], -size[1], size[1])
        return np.abs(np.hypot(np.hypot(p[:, 0], p[:, 1]), axial) - r)
    if shape == "cylinder":
        a = np.stack([np.hypot(p[:, 0], p[:, 1]) - r, np.abs(p[:, 2]) - size[1]], -1)
        return np.abs(np.minimum(a.max(-1), 0) + np.linalg.norm(np.maximum(a, 0), axis=-1))
    semi = np.asarray(size)
    f = np.sum((p / semi) ** 2, axis=-1)
    return np.abs(f - 1) / np.linalg.norm(2 * p / semi**2, axis=-1)


@pytest.fixture(scope="module")
def views(gl_backend):
    """Each shape's instance id → its pixels' world points, from a view facing it."""
    from twinsim.engine.world import World

    world = World(_scene(), RenderConfig(shadow_size=512), physics_hz=240)
    try:
        cam = next(s for s in world.scene.sensors if s.type == "camera")
        K = intrinsics(cam.width, cam.height, cam.hfov_deg)
        world.pose_actors(1.0)  # the ball at its scale
        seen = {}
        for iid, (*_, yaw) in SHAPES.items():
            place(world, EYE, yaw=yaw)
            frame = annotate_frame(world, cam, 0, 0)
            pts = backproject(frame.depth, K, frame.T_world_cam)
            for j in (iid, BOX) if iid == 1 else (iid,):
                seen[j] = pts[frame.instance == j]
    finally:
        world.close()
    return seen


def test_depth_is_far_finer_than_the_bound(views):
    pts = views[BOX] - BOX_CENTRE
    assert len(pts) > 500
    outside = np.abs(pts) - BOX_HALF  # the box's signed distance, exact
    sdf = np.minimum(outside.max(-1), 0) + np.linalg.norm(np.maximum(outside, 0), axis=-1)
    assert np.abs(sdf).max() < DEPTH_PRECISION_M


@pytest.mark.parametrize("iid", sorted(SHAPES))
def test_rendered_round_surface_within_bound(views, iid):
    shape, size, centre, _ = SHAPES[iid]
    pts = views[iid]
    assert len(pts) > 300, "the shape must fill enough of its view to sample its facets"
    error = _distance(shape, size, pts - np.asarray(centre)).max()
    bound = max(1e-3, 1e-3 * max(size if shape == "ellipsoid" else size[:1]))
    assert error <= bound, f"{shape} {size}: rendered up to {error * 1e3:.2f} mm off"


@pytest.mark.parametrize(
    ("shape", "size"),
    [
        ("sphere", (2.89, 0, 0)),
        ("sphere", (0.05, 0, 0)),
        ("sphere", (12.0, 0, 0)),
        ("capsule", (0.12, 0.5, 0)),
        ("capsule", (1.5, 0.2, 0)),
        ("cylinder", (0.15, 0.8, 0)),
        ("cylinder", (6.0, 0.1, 0)),
        ("ellipsoid", (0.2, 0.15, 0.3)),
        ("ellipsoid", (3.0, 0.5, 1.0)),
    ],
)
def test_camera_mesh_lies_within_bound_of_the_surface(shape, size):
    size = np.asarray(size, float)
    tolerance = surface_tolerance(shape, size)
    verts, normals, _, faces = round_mesh(shape, size, tolerance)
    dims = tuple(size[:3] if shape == "ellipsoid" else size[:2])
    on_vertices = _distance(shape, dims, verts).max()
    assert on_vertices <= tolerance
    assert np.allclose(np.linalg.norm(normals, axis=1), 1.0)
    w = np.random.default_rng(0).dirichlet((1, 1, 1), size=(len(faces), 8))
    on_facets = np.einsum("fsk,fkd->fsd", w, verts[faces]).reshape(-1, 3)
    assert _distance(shape, dims, on_facets).max() <= tolerance
    if shape == "sphere":  # balanced: every vertex a little outside, facets reach inside
        radii = np.linalg.norm(verts, axis=1)
        assert np.allclose(radii, radii[0]) and radii[0] > size[0]
    a, b, c = (verts[faces[:, i]] for i in range(3))
    facing = np.einsum("ij,ij->i", np.cross(b - a, c - a), normals[faces].sum(axis=1))
    assert (facing > 0).all()  # every facet wound outwards, as its vertices' normals point


def test_camera_meshes_keep_the_texture_where_mujoco_puts_it(gl_backend):
    """A mesh is stored in its inertial frame, turned against the geom's: its texture comes
    from coordinates like MuJoCo's primitive's, so the colour barely changes (texture made
    from the mesh's own axes differs in ~40 % of these pixels)."""
    from twinsim.engine.render import CameraRenderer
    from twinsim.engine.world import World

    shapes = [
        ("sphere", (0.3,), (1.2, -0.7, 1.2)),
        ("capsule", (0.15, 0.3), (1.2, 0.0, 1.2)),
        ("ellipsoid", (0.3, 0.2, 0.25), (1.2, 0.7, 1.2)),
        ("cylinder", (0.25, 0.2), (1.5, 0.0, 0.5)),
    ]
    objects = tuple(
        ObjectSpec(
            instance_id=i + 1,
            name=f"{shape}{i}",
            semantic_class="vegetation",
            room_id=0,
            pos=centre,
            geoms=(GeomSpec(type=shape, size=size, material=("tiles", "metric")[i % 2]),),
        )
        for i, (shape, size, centre) in enumerate(shapes)
    )
    tex = TextureSpec(name="t", kind="tiles", seed=0, color_a=(0.9, 0.2, 0.2), color_b=(0, 0, 1))
    scene = box_room_scene(CameraConfig(width=160, height=120))
    materials = (
        MaterialSpec(name="tiles", texture="t", texrepeat=(2.0, 3.0), texuniform=False),
        MaterialSpec(name="metric", texture="t", texrepeat=(3.0, 2.0), texuniform=True),
    )
    scene = scene.model_copy(
        update={"objects": objects, "textures": (tex,), "materials": scene.materials + materials}
    )
    world = World(scene, RenderConfig(shadow_size=512), physics_hz=240)
    cam = next(s for s in world.scene.sensors if s.type == "camera")
    meshes = CameraRenderer(world.model, cam.name, cam.width, cam.height)
    primitives = CameraRenderer(world.model, cam.name, cam.width, cam.height)
    primitives._round_mesh[:] = -1  # MuJoCo's own tessellation
    try:
        place(world, (0.0, 0.0, 1.5), pitch=0.3)
        a, b = meshes.render(world.data), primitives.render(world.data)
    finally:
        meshes.close()
        primitives.close()
        world.close()
    seen = (a.geom_ids >= 0) & (b.geom_ids >= 0)
    assert seen.sum() > 3000
    differ = np.abs(a.rgb.astype(int) - b.rgb.astype(int)).sum(-1)[seen] > 30
    assert differ.mean() < 0.05


def test_mujoco_tessellation_error_is_what_the_issue_measured():
    # 16 × 8 draws a 2.89 m tree crown up to 108 mm inside the sphere (issue 31)
    assert builtin_error("sphere", np.array([2.89, 0, 0]), 16, 8) == pytest.approx(0.108, abs=5e-4)
