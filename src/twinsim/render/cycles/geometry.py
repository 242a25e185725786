"""MuJoCo's geoms as triangle meshes in each geom's frame, from the compiled model's arrays.

Boxes and meshes (twinsim's textured boxes, users' robot files) are exact, with the meshes'
texture coordinates; spheres, ellipsoids, cylinders and capsules are drawn as the MuJoCo
cameras draw them: the camera meshes of `engine.round_meshes` where MuJoCo's tessellation
would be too coarse, else that tessellation; either way within 1 mm (or 0.1 % of their size)
of the analytic surface that physics and the LiDAR use.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinsim.engine.primitives import GEOM_TYPES
from twinsim.engine.round_meshes import mesh_frames

_PLANE, _MESH = 0, 7  # mjtGeom values of planes and meshes (MuJoCo's stable enum)
_BOX, _SPHERE = int(GEOM_TYPES["box"]), int(GEOM_TYPES["sphere"])
_CYLINDER, _CAPSULE = int(GEOM_TYPES["cylinder"]), int(GEOM_TYPES["capsule"])
#: the round kinds, drawn as the MuJoCo cameras draw them (`engine.round_meshes`)
_ROUND = {int(GEOM_TYPES[k]) for k in ("sphere", "ellipsoid", "capsule", "cylinder")}
_INFINITE_PLANE_M = 100.0  # the half extent drawn of a plane of size 0 (infinite)


@dataclass(frozen=True)
class GeomMesh:
    """Vertices (n, 3) in the geom frame, triangles (m, 3), per-corner UVs (3m, 2) or None."""

    verts: np.ndarray
    faces: np.ndarray
    loop_uvs: np.ndarray | None
    smooth: bool


def geom_mesh(model, geom: int, camera_meshes: np.ndarray | None = None) -> GeomMesh:
    """The triangle mesh of geom `geom` of the compiled MuJoCo `model`. `camera_meshes`:
    `round_mesh_table(model)[0]`, the mesh asset the MuJoCo cameras draw each round geom with
    (−1 where they draw their own tessellation), so Cycles draws the very same surface."""
    kind, size = int(model.geom_type[geom]), np.asarray(model.geom_size[geom], float)
    if kind in _ROUND:
        mesh = -1 if camera_meshes is None else int(camera_meshes[geom])
        if mesh >= 0:
            return _camera_mesh(model, mesh)
        return _builtin_round(kind, size, model.vis.quality)
    if kind == _BOX:
        return GeomMesh(*_box(size), None, False)
    if kind == _PLANE:
        hx, hy = (s if s > 0 else _INFINITE_PLANE_M for s in size[:2])
        verts = np.array([[-hx, -hy, 0], [hx, -hy, 0], [hx, hy, 0], [-hx, hy, 0]], float)
        return GeomMesh(verts, np.array([[0, 1, 2], [0, 2, 3]]), None, False)
    if kind == _MESH:
        return _model_mesh(model, int(model.geom_dataid[geom]))
    raise ValueError(f"geom {geom}: MuJoCo geom type {kind} has no Cycles mesh")


def _box(half: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    corners = np.array([[sx, sy, sz] for sz in (-1, 1) for sy in (-1, 1) for sx in (-1, 1)])
    quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    faces = [tri for a, b, c, d in quads for tri in ((a, b, c), (a, c, d))]
    return corners * half, np.array(faces, int)


def _camera_mesh(model, mesh: int) -> GeomMesh:
    """A round geom's camera mesh in the geom's frame (MuJoCo stores a mesh in its inertial
    frame: `mesh_frames` turns it back)."""
    pos, rot = mesh_frames(model)
    part = _model_mesh(model, mesh)
    verts = part.verts @ rot[mesh].T.astype(float) + pos[mesh]
    return GeomMesh(verts, part.faces, None, True)


def _builtin_round(kind: int, size: np.ndarray, quality) -> GeomMesh:
    """A small round geom (within its tolerance as MuJoCo tessellates it) at the model's own
    `numslices` × `numstacks`, as the MuJoCo cameras draw it (their vertices are not these,
    but both lie within the tolerance of the exact surface)."""
    slices, stacks = max(8, int(quality.numslices)), max(4, int(quality.numstacks))
    if kind == _CYLINDER:
        return GeomMesh(*_cylinder(size[0], size[1], slices), None, True)
    if kind == _CAPSULE:
        return GeomMesh(*_capsule(size[0], size[1], slices, stacks), None, True)
    radii = np.full(3, size[0]) if kind == _SPHERE else size
    verts, faces = _uv_sphere(slices, stacks)
    return GeomMesh(verts * radii, faces, None, True)


def _uv_sphere(slices: int, stacks: int) -> tuple[np.ndarray, np.ndarray]:
    """A unit sphere of `stacks` bands of `slices` quads."""
    phi = np.linspace(0.0, np.pi, stacks + 1)
    return _revolve(np.sin(phi), np.cos(phi), slices)


def _capsule(r: float, h: float, slices: int, stacks: int) -> tuple[np.ndarray, np.ndarray]:
    """Two hemispheres of radius `r`, `stacks` // 2 bands each, joined by a cylinder of
    half-height `h` (the equator ring twice: once at +h, once at −h)."""
    half = max(2, stacks // 2)
    top = np.linspace(0.0, np.pi / 2, half + 1)
    bottom = np.linspace(np.pi / 2, np.pi, half + 1)
    rho = r * np.concatenate([np.sin(top), np.sin(bottom)])
    z = np.concatenate([r * np.cos(top) + h, r * np.cos(bottom) - h])
    return _revolve(rho, z, slices)


def _cylinder(r: float, h: float, slices: int) -> tuple[np.ndarray, np.ndarray]:
    """A closed cylinder; the rim rings are doubled so caps and side shade apart."""
    rho = np.array([0.0, r, r, r, r, 0.0])
    z = np.array([h, h, h, -h, -h, -h])
    return _revolve(rho, z, slices)


def _revolve(rho: np.ndarray, z: np.ndarray, slices: int) -> tuple[np.ndarray, np.ndarray]:
    """The surface of revolution about z of the profile (rho, z), from top to bottom, whose
    ends lie on the axis (rho = 0): one vertex at each end, `slices` on every other ring."""
    theta = np.linspace(0.0, 2 * np.pi, slices, endpoint=False)
    rings = [
        np.c_[r * np.cos(theta), r * np.sin(theta), np.full(slices, zz)]
        for r, zz in zip(rho[1:-1], z[1:-1], strict=True)
    ]
    verts = np.vstack([[[0.0, 0.0, z[0]]], *rings, [[0.0, 0.0, z[-1]]]])
    top, bottom, n = 0, len(verts) - 1, len(rings)
    faces = []
    for j in range(slices):
        k = (j + 1) % slices
        faces.append((top, 1 + j, 1 + k))
        for i in range(n - 1):
            a, b = 1 + i * slices + j, 1 + i * slices + k
            faces += [(a, a + slices, b + slices), (a, b + slices, b)]
        last = 1 + (n - 1) * slices
        faces.append((bottom, last + k, last + j))
    return verts, np.array(faces, int)


def _model_mesh(model, mesh: int) -> GeomMesh:
    """A mesh asset of the model: its vertices (already in the geom frame) and UVs if any, in
    Blender's convention: MuJoCo's v = 0 is the texture's first row, which Blender's images
    (`materials`, stored bottom row first) hold at v = 1."""
    v0, nv = int(model.mesh_vertadr[mesh]), int(model.mesh_vertnum[mesh])
    f0, nf = int(model.mesh_faceadr[mesh]), int(model.mesh_facenum[mesh])
    verts = np.asarray(model.mesh_vert[v0 : v0 + nv], float)
    faces = np.asarray(model.mesh_face[f0 : f0 + nf], int)
    uvs = None
    t0 = int(model.mesh_texcoordadr[mesh])
    if t0 >= 0 and int(model.mesh_texcoordnum[mesh]) > 0:
        corners = np.asarray(model.mesh_facetexcoord[f0 : f0 + nf], int).ravel()
        uvs = np.asarray(model.mesh_texcoord, float)[t0 + corners]
        uvs[:, 1] = 1.0 - uvs[:, 1]
    return GeomMesh(verts, faces, uvs, False)
