"""Ground-truth surface geometry under a camera's pixels, from the geom each pixel shows.

The segmentation pass names the geom under every pixel and the depth pass where along the
pixel's ray it lies. A point is carried in that geom's own frame (`to_geom_frame`,
`from_geom_frame`), so a later state moves it rigidly with the geom: what optical flow needs.
Its normal is the geom's analytic one at that point (box face, sphere/capsule/cylinder/ellipsoid
gradient, plane axis) or, on a mesh, the normal of the triangle the pixel's ray meets in the
mesh (Embree, in the geom's frame), never a difference of depths. The hills are a mesh to the
cameras (`engine/terrain.py`); height fields and SDFs are not drawn by them and get none.
"""

from __future__ import annotations

import mujoco
import numpy as np

from twinsim.engine.triangle_bvh import TriangleBVH

_T = mujoco.mjtGeom


def to_geom_frame(data: mujoco.MjData, geoms: np.ndarray, points: np.ndarray) -> np.ndarray:
    """World points (n, 3) in the frames of their geoms (n,) at `data`'s state."""
    R = data.geom_xmat[geoms].reshape(-1, 3, 3)
    return np.einsum("nji,nj->ni", R, points - data.geom_xpos[geoms])


def from_geom_frame(data: mujoco.MjData, geoms: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Points (n, 3) given in the frames of their geoms (n,) as world points at `data`'s state."""
    R = data.geom_xmat[geoms].reshape(-1, 3, 3)
    return np.einsum("nij,nj->ni", R, local) + data.geom_xpos[geoms]


class SurfaceNormals:
    """Unit normals of a model's geoms at points on them; mesh BVHs are built on first use."""

    def __init__(self, model: mujoco.MjModel) -> None:
        self._model = model
        self._meshes: dict[int, TriangleBVH] = {}

    def normals(
        self, data: mujoco.MjData, geoms: np.ndarray, points: np.ndarray, origin: np.ndarray
    ) -> np.ndarray:
        """World unit normals (n, 3) of geoms (n,) at world points (n, 3) seen from `origin`,
        turned to face it; 0 where the geom has none (a mesh the pixel's ray misses)."""
        model = self._model
        local = to_geom_frame(data, geoms, points)
        n_local = np.zeros_like(local)
        types, sizes = model.geom_type[geoms], model.geom_size[geoms]
        for kind in np.unique(types):
            rows = np.flatnonzero(types == kind)
            if kind == _T.mjGEOM_MESH:
                for g in np.unique(geoms[rows]):
                    sel = rows[geoms[rows] == g]
                    eye = to_geom_frame(data, np.array([g]), origin[None])[0]
                    n_local[sel] = self._mesh_normals(int(g), eye, local[sel])
            else:
                n_local[rows] = _primitive_normals(int(kind), local[rows], sizes[rows])
        R = data.geom_xmat[geoms].reshape(-1, 3, 3)
        n = np.einsum("nij,nj->ni", R, n_local)
        length = np.linalg.norm(n, axis=1, keepdims=True)
        n = np.divide(n, length, out=np.zeros_like(n), where=length > 0.0)
        facing = np.einsum("ij,ij->i", n, points - origin) > 0.0
        n[facing] *= -1.0
        return n

    def _mesh_normals(self, geom: int, origin: np.ndarray, local: np.ndarray) -> np.ndarray:
        """Normals of the mesh triangles met first by the rays from `origin` through `local`
        points (all in the geom's frame); 0 for a ray that misses (a pixel on the outline)."""
        mesh = int(self._model.geom_dataid[geom])
        bvh = self._meshes.get(mesh)
        if bvh is None:
            m = self._model
            verts = m.mesh_vert[m.mesh_vertadr[mesh] : m.mesh_vertadr[mesh] + m.mesh_vertnum[mesh]]
            faces = m.mesh_face[m.mesh_faceadr[mesh] : m.mesh_faceadr[mesh] + m.mesh_facenum[mesh]]
            bvh = self._meshes[mesh] = TriangleBVH(verts, faces)
        rays = local - origin
        reach = np.linalg.norm(rays, axis=1, keepdims=True)
        tri = bvh.nearest_triangles(origin, rays / reach, 2.0 * float(reach.max()))
        out = np.zeros_like(local)
        out[tri >= 0] = bvh.normals[tri[tri >= 0]]
        return out


def _primitive_normals(kind: int, p: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Outward (unnormalised) normals of primitives of type `kind` at points `p` (n, 3) in
    their frames; 0 for types the cameras do not draw (height fields, SDFs)."""
    n = np.zeros_like(p)
    if kind == _T.mjGEOM_PLANE:
        n[:, 2] = 1.0
    elif kind == _T.mjGEOM_SPHERE:
        n = p.copy()
    elif kind == _T.mjGEOM_ELLIPSOID:
        n = p / size**2
    elif kind == _T.mjGEOM_CAPSULE:
        n = p.copy()
        n[:, 2] -= np.clip(p[:, 2], -size[:, 1], size[:, 1])
    elif kind == _T.mjGEOM_CYLINDER:
        rho = np.hypot(p[:, 0], p[:, 1])
        side = np.abs(rho - size[:, 0]) < np.abs(np.abs(p[:, 2]) - size[:, 1])
        n[side, :2] = p[side, :2]
        n[~side, 2] = np.sign(p[~side, 2])
    elif kind == _T.mjGEOM_BOX:
        face = np.argmax(np.abs(p) / size, axis=1)
        rows = np.arange(len(p))
        n[rows, face] = np.sign(p[rows, face])
    return n
