"""Camera meshes of round geoms, fine enough that the rendered surface stays within tolerance.

MuJoCo draws every sphere, capsule, cylinder and ellipsoid from one unit tessellation of
`visual.quality.numslices` × `numstacks`, scaled to the geom: its facets are chords lying
inside the analytic surface, up to a fixed fraction of the size below it (3.7 % of a sphere's
radius at 16 × 8: 108 mm on a 2.89 m tree crown), while physics and the LiDAR use the exact
shape. A round geom that this tessellation draws deeper than `surface_tolerance` gets a mesh
asset of its own shape and size (texture coordinates as MuJoCo gives its primitive),
referenced by no geom, so physics, rays and ids are unchanged; `CameraRenderer` draws that
mesh in the geom's place. A facet inscribed in the unit sphere with circumradius ρ (half its
longest side if the circumcentre falls outside it) lies at most 1 − √(1 − ρ²) below it; the
mesh's vertices stand outside the surface by as much as its facets then reach inside (a grid
of depth D scaled by 2 / (2 − D)), so the whole mesh lies within D / (2 − D) of the surface
with half the facets an inscribed mesh would need.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import mujoco
import numpy as np

ABS_TOLERANCE_M = 1e-3  # the rendered surface stays within this of the analytic one …
REL_TOLERANCE = 1e-3  # … or within this fraction of the geom's size, whichever is larger
_G = mujoco.mjtGeom
ROUND_TYPES = {
    int(_G.mjGEOM_SPHERE): "sphere",
    int(_G.mjGEOM_CAPSULE): "capsule",
    int(_G.mjGEOM_ELLIPSOID): "ellipsoid",
    int(_G.mjGEOM_CYLINDER): "cylinder",
}
_PREFIX = "twinsim_round_"
_TABLE = "twinsim_round_meshes"  # custom numeric data: per geom, its mesh's number, size[0]
_UP = np.array([0.0, 0.0, 1.0])


class RoundMesh(NamedTuple):
    """A camera mesh in its geom's frame; texture coordinates as MuJoCo gives its primitive
    (u along the azimuth, v down the sides; flat caps mapped from x, y)."""

    vertices: np.ndarray  # (n, 3)
    normals: np.ndarray  # (n, 3) unit
    texcoords: np.ndarray  # (n, 2)
    faces: np.ndarray  # (m, 3) wound outwards


def round_size(kind: str, size: np.ndarray) -> float:
    """The size a tolerance is relative to: the radius (an ellipsoid's largest semi-axis)."""
    return float(max(size[:3]) if kind == "ellipsoid" else size[0])


def surface_tolerance(kind: str, size: np.ndarray) -> float:
    """How far (m) the rendered surface of a round geom may lie from the analytic one."""
    return max(ABS_TOLERANCE_M, REL_TOLERANCE * round_size(kind, size))


def sphere_grid_depth(n_az: int, n_el: int) -> float:
    """Deepest point below the unit sphere of a latitude-longitude grid of `n_az` slices and
    `n_el` bands from pole to pole (fans at the poles), as a fraction of the radius."""
    el = np.linspace(-np.pi / 2, np.pi / 2, n_el + 1)
    az = 2 * np.pi / n_az
    lo, hi = el[:-1], el[1:]  # one column of the grid: every other column is a rotation of it
    a, b = _unit(0.0, lo), _unit(az, lo)
    c, d = _unit(az, hi), _unit(0.0, hi)
    return float(max(_triangle_depth(a, b, c).max(), _triangle_depth(a, c, d).max()))


def builtin_error(kind: str, size: np.ndarray, slices: int, stacks: int) -> float:
    """How deep (m) MuJoCo's own tessellation (`render_context.c`: spheres and capsule ends in
    bands of π / (2 ⌊stacks / 2⌋), `slices` around; cylinders flat-sided) draws the geom."""
    if kind == "cylinder":
        return float(size[0]) * (1.0 - math.cos(math.pi / slices))
    return round_size(kind, size) * sphere_grid_depth(slices, 2 * (stacks // 2))


def sphere_bands(depth: float) -> int:
    """The fewest bands (even, with twice as many slices) whose grid lies within `depth` of
    the unit sphere: from the square facet at the equator (depth ≈ Δ² / 4), then checked."""
    n = 2 * max(2, math.ceil(math.pi / (4 * math.sqrt(depth))))
    while sphere_grid_depth(2 * n, n) > depth:
        n += 2
    return n


def cylinder_slices(depth: float) -> int:
    """The fewest sides of a polygon whose edges lie within `depth` of the unit circle."""
    return max(8, math.ceil(math.pi / math.acos(max(-1.0, 1.0 - depth))))


def round_mesh(kind: str, size: np.ndarray, tolerance: float) -> RoundMesh:
    """A round geom's camera mesh, every point of it within `tolerance` of the analytic
    surface (vertices outside it, facets' deepest points inside, balanced)."""
    eps = tolerance / round_size(kind, size)
    depth = 2 * eps / (1 + eps)  # the facets' depth D whose D / (2 − D) is eps
    if kind == "cylinder":
        n = cylinder_slices(depth)
        r = float(size[0]) * 2 / (1 + math.cos(math.pi / n))  # 2 / (2 − D)
        caps = [_cap(n, sign) for sign in (-1.0, 1.0)]
        return _place(_join([_side(n), *caps]), np.array([r, r, size[1]]), np.zeros(3))
    n = sphere_bands(depth)
    outset = 2 / (2 - sphere_grid_depth(2 * n, n))
    r = float(size[0]) * outset
    if kind == "capsule":  # MuJoCo's parts: each half sphere's v runs from 0 at its rim
        half, ball = float(size[1]), np.full(3, r)
        bottom = _sphere_part(n, -np.pi / 2, 0.0, lambda el: -2 * el / np.pi)
        top = _sphere_part(n, 0.0, np.pi / 2, lambda el: 1 - 2 * el / np.pi)
        return _join(
            [
                _place(bottom, ball, -half * _UP),
                _place(_side(2 * n), np.array([r, r, half]), np.zeros(3)),
                _place(top, ball, half * _UP),
            ]
        )
    sphere = _sphere_part(n, -np.pi / 2, np.pi / 2, lambda el: 0.5 - el / np.pi)
    scale = np.asarray(size[:3], float) * outset if kind == "ellipsoid" else np.full(3, r)
    return _place(sphere, scale, np.zeros(3))


def add_round_meshes(spec: mujoco.MjSpec, model: mujoco.MjModel, max_scale: np.ndarray) -> bool:
    """Add to `spec` a camera mesh for every round geom of `model` (compiled from it) that
    MuJoCo's tessellation would draw deeper than its tolerance at any size it takes at run
    time (`max_scale`, (ngeom,): the largest factor its size is scaled by), one mesh per
    distinct shape, and the table of which geom takes which (`round_mesh_table`); True if
    any. Scaled, a mesh's deviation scales too: it is made for the largest size."""
    slices, stacks = int(model.vis.quality.numslices), int(model.vis.quality.numstacks)
    meshes: dict[tuple, int] = {}
    table = np.full((model.ngeom, 2), -1.0)
    for gid in range(model.ngeom):
        kind = ROUND_TYPES.get(int(model.geom_type[gid]))
        if kind is None:
            continue
        size = model.geom_size[gid]
        tolerance = max(REL_TOLERANCE * round_size(kind, size), ABS_TOLERANCE_M / max_scale[gid])
        if builtin_error(kind, size, slices, stacks) <= tolerance:
            continue
        key = (kind, *size.tolist(), tolerance)
        if key not in meshes:
            meshes[key] = len(meshes)
            _add_mesh(spec, f"{_PREFIX}{meshes[key]}", round_mesh(kind, size, tolerance))
        table[gid] = meshes[key], size[0]
    if meshes:
        numeric = spec.add_numeric()
        numeric.name = _TABLE
        numeric.data = table.ravel().tolist()
        numeric.size = table.size
    return bool(meshes)


def round_mesh_table(model: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray]:
    """Each geom's camera mesh (`add_round_meshes`; −1: none) and its size[0] the mesh was
    made for (float32, as a scene geom's size), (ngeom,) each."""
    table = np.tile([-1.0, 1.0], (model.ngeom, 1))
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_NUMERIC, _TABLE)
    if i >= 0:
        adr, n = model.numeric_adr[i], model.numeric_size[i]
        table = model.numeric_data[adr : adr + n].reshape(-1, 2)
    number = table[:, 0].astype(int)
    mesh = mujoco.mjtObj.mjOBJ_MESH
    ids = {k: mujoco.mj_name2id(model, mesh, f"{_PREFIX}{k}") for k in set(number) - {-1}}
    return np.array([ids.get(k, -1) for k in number], int), table[:, 1].astype(np.float32)


def cube_textured(model: mujoco.MjModel) -> np.ndarray:
    """(ngeom,) whether a cube map colours the geom: MuJoCo maps it from the vertices'
    coordinates, not from texture coordinates as every other texture of a primitive."""
    cube = np.zeros(model.ngeom, bool)
    for gid in np.flatnonzero(model.geom_matid >= 0):
        tex = model.mat_texid[model.geom_matid[gid], mujoco.mjtTextureRole.mjTEXROLE_RGB]
        cube[gid] = tex >= 0 and model.tex_type[tex] != mujoco.mjtTexture.mjTEXTURE_2D
    return cube


def mesh_frames(model: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray]:
    """Where MuJoCo put each mesh (it stores one in its inertial frame) in the frame its
    vertices were given in: positions (nmesh, 3), rotations (nmesh, 3, 3), float32 as a scene
    geom's."""
    rot = np.zeros((model.nmesh, 9))
    for i in range(model.nmesh):
        mujoco.mju_quat2Mat(rot[i], model.mesh_quat[i])
    return model.mesh_pos.astype(np.float32), rot.reshape(-1, 3, 3).astype(np.float32)


def _unit(az: float, el: np.ndarray) -> np.ndarray:
    """Points of the unit sphere at azimuth `az` and elevations `el`, (len(el), 3)."""
    el = np.asarray(el, float)
    return np.stack([math.cos(az) * np.cos(el), math.sin(az) * np.cos(el), np.sin(el)], -1)


def _triangle_depth(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Depth below the unit sphere of triangles with vertices on it (rows; 0 if degenerate)."""
    sides = np.sort(np.linalg.norm(np.stack([b - c, c - a, a - b]), axis=-1), axis=0)
    area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=-1)
    acute = sides[0] ** 2 + sides[1] ** 2 >= sides[2] ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(acute, sides.prod(axis=0) / (4 * area), sides[2] / 2)
    rho = np.where(area > 1e-15, np.minimum(rho, 1.0), 0.0)
    return 1.0 - np.sqrt(1.0 - rho**2)


def _sphere_part(n: int, lo: float, hi: float, v_of: Callable) -> RoundMesh:
    """The unit sphere between elevations `lo` and `hi` in bands of π / n and 2n slices, with
    v = `v_of`(elevation); at a pole (±π/2) a fan of triangles, as MuJoCo draws it."""
    el = np.linspace(lo, hi, round((hi - lo) * n / np.pi) + 1)
    rings = el[(lo == -np.pi / 2) : len(el) - (hi == np.pi / 2)]
    az = np.linspace(0.0, 2 * np.pi, 2 * n + 1)  # the seam twice: at u = 0 and u = 1
    pts = np.stack([_unit(a, rings) for a in az], axis=1)  # (rings, 2n + 1, 3)
    uv = np.stack(np.broadcast_arrays(az / (2 * np.pi), v_of(rings)[:, None]), -1)
    parts = [_grid(pts, pts, uv)]
    u_mid = (np.arange(2 * n) + 0.5) / (2 * n)
    for k, pole in ((0, lo), (len(rings) - 1, hi)):
        if abs(pole) == np.pi / 2:
            apex_uv = np.stack([u_mid, np.full(2 * n, v_of(pole))], -1)
            sign = math.copysign(1.0, pole)
            parts.append(_fan(pts[k], pts[k], uv[k], sign * _UP, sign * _UP, apex_uv))
    return _join(parts)


def _side(n: int) -> RoundMesh:
    """The unit cylinder's side, z from −1 to 1, in `n` slices (v from 1 at z = −1 to 0)."""
    az = np.linspace(0.0, 2 * np.pi, n + 1)
    radial = np.stack([np.cos(az), np.sin(az), np.zeros_like(az)], -1)
    u = az / (2 * np.pi)
    uv = np.stack([np.stack([u, np.full_like(u, v)], -1) for v in (1.0, 0.0)])
    return _grid(np.stack([radial - _UP, radial + _UP]), np.stack([radial, radial]), uv)


def _cap(n: int, sign: float) -> RoundMesh:
    """The unit cylinder's flat end at z = `sign`, `n` slices, u, v = (1 + x, 1 + y) / 2."""
    az = np.linspace(0.0, 2 * np.pi, n + 1)
    rim = np.stack([np.cos(az), np.sin(az), np.full_like(az, sign)], -1)
    normal = np.tile(sign * _UP, (n + 1, 1))
    centre_uv = np.full((n, 2), 0.5)
    return _fan(rim, normal, 0.5 + 0.5 * rim[:, :2], sign * _UP, sign * _UP, centre_uv)


def _grid(points: np.ndarray, normals: np.ndarray, uv: np.ndarray) -> RoundMesh:
    """Rings (k, m + 1, ·), the lowest first, joined ring to ring by two triangles a quad."""
    k, m1 = points.shape[:2]
    j = np.arange(m1 - 1)
    faces = [np.zeros((0, 3), int)]
    for ring in range(k - 1):
        lo, hi = ring * m1 + j, (ring + 1) * m1 + j
        faces += [np.stack([lo, lo + 1, hi + 1], 1), np.stack([lo, hi + 1, hi], 1)]
    return RoundMesh(
        points.reshape(-1, 3), normals.reshape(-1, 3), uv.reshape(-1, 2), np.concatenate(faces)
    )


def _fan(rim, rim_normals, rim_uv, apex, apex_normal, apex_uv: np.ndarray) -> RoundMesh:
    """Triangles from a ring (m + 1 vertices) to an apex on the z axis, facing its side of
    the ring (up if the apex's normal points up); the apex once per triangle (`apex_uv`)."""
    m = len(rim) - 1
    j = np.arange(m)
    tip = m + 1 + j
    faces = [j, j + 1, tip] if apex_normal[2] > 0 else [tip, j + 1, j]
    return RoundMesh(
        np.concatenate([rim, np.tile(apex, (m, 1))]),
        np.concatenate([rim_normals, np.tile(apex_normal, (m, 1))]),
        np.concatenate([rim_uv, apex_uv]),
        np.stack(faces, 1),
    )


def _place(mesh: RoundMesh, scale: np.ndarray, shift: np.ndarray) -> RoundMesh:
    """The mesh scaled along the axes (normals as a surface's: divided, renormalised), moved."""
    normals = mesh.normals / scale
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    return RoundMesh(mesh.vertices * scale + shift, normals, mesh.texcoords, mesh.faces)


def _add_mesh(spec: mujoco.MjSpec, name: str, rm: RoundMesh) -> None:
    """A mesh asset of `rm` (referenced by no geom)."""
    mesh = spec.add_mesh()
    mesh.name = name
    mesh.uservert = rm.vertices.ravel().tolist()
    mesh.usernormal = rm.normals.ravel().tolist()
    mesh.usertexcoord = rm.texcoords.ravel().tolist()
    mesh.userface = mesh.userfacenormal = mesh.userfacetexcoord = rm.faces.ravel().tolist()


def _join(parts: list[RoundMesh]) -> RoundMesh:
    """One mesh of several (their vertices kept apart: they differ in normal or texture)."""
    offsets = np.cumsum([0] + [len(p.vertices) for p in parts[:-1]])
    return RoundMesh(
        np.concatenate([p.vertices for p in parts]),
        np.concatenate([p.normals for p in parts]),
        np.concatenate([p.texcoords for p in parts]),
        np.concatenate([p.faces + o for p, o in zip(parts, offsets, strict=True)]),
    )
