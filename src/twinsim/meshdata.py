"""A mesh asset's arrays and their one byte form (`assets/<sha256>.npz` in a sequence folder).

`MeshData` is what every consumer of a mesh asset reads: the visual triangles in the asset's
own frame (metres, z up, origin at the middle of its footprint on the floor), what colours them
(per-vertex texture coordinates and a texture, or vertex colours, times `base_rgba`) and the
convex parts it collides with. `encode_mesh_data` writes it as an uncompressed NPZ whose zip
entries carry a fixed date, so equal meshes give equal bytes and one sha256 names them.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

import numpy as np

_DATE = (1980, 1, 1, 0, 0, 0)  # zip's earliest date: the entries carry no time of writing
_OPTIONAL = ("uv", "colors", "texture")


@dataclass(frozen=True, eq=False)
class MeshData:
    """A mesh asset: visual triangles, their colouring and the convex collision parts."""

    vertices: np.ndarray  # (n, 3) float64, metres in the asset frame
    faces: np.ndarray  # (m, 3) int32 vertex indices
    base_rgba: np.ndarray  # (4,) float64 in [0, 1]: the colour, or what multiplies the texture
    parts: tuple[tuple[np.ndarray, np.ndarray], ...]  # convex (vertices (k, 3), faces (j, 3))
    uv: np.ndarray | None = None  # (n, 2) float32 texture coordinates, v up (OBJ's)
    colors: np.ndarray | None = None  # (n, 4) uint8 vertex colours
    texture: np.ndarray | None = None  # (h, w, 3) uint8 RGB, first row at the top

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The (min, max) corners of the visual mesh in the asset frame."""
        return self.vertices.min(axis=0), self.vertices.max(axis=0)


def encode_mesh_data(data: MeshData) -> bytes:
    """The NPZ bytes of `data`: arrays in a fixed order and dtype, entries dated `_DATE`."""
    sizes = np.array([[len(v), len(f)] for v, f in data.parts], np.int64).reshape(-1, 2)
    empty = (np.empty((0, 3)), np.empty((0, 3), np.int32))
    arrays = {
        "vertices": np.asarray(data.vertices, np.float64),
        "faces": np.asarray(data.faces, np.int32),
        "base_rgba": np.asarray(data.base_rgba, np.float64),
        "part_sizes": sizes,
        "part_vertices": np.concatenate([empty[0], *(v for v, _ in data.parts)]).astype(float),
        "part_faces": np.concatenate([empty[1], *(f for _, f in data.parts)]).astype(np.int32),
    }
    dtypes = {"uv": np.float32, "colors": np.uint8, "texture": np.uint8}
    for name in _OPTIONAL:
        value = getattr(data, name)
        if value is not None:
            arrays[name] = np.asarray(value, dtypes[name])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name in sorted(arrays):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(arrays[name]), (1, 0), False)
            archive.writestr(zipfile.ZipInfo(f"{name}.npy", _DATE), member.getvalue())
    return buffer.getvalue()


def decode_mesh_data(blob: bytes) -> MeshData:
    """The `MeshData` of NPZ bytes `encode_mesh_data` wrote; `ValueError` saying what is wrong."""
    try:
        with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise ValueError(f"not a mesh asset NPZ ({exc})") from None
    required = ("vertices", "faces", "base_rgba", "part_sizes", "part_vertices", "part_faces")
    missing = [name for name in required if name not in arrays]
    if missing:
        raise ValueError(f"mesh asset lacks {', '.join(missing)}")
    vertices, faces = arrays["vertices"], arrays["faces"]
    _check_mesh("the mesh", vertices, faces)
    sizes = arrays["part_sizes"]
    if sizes.ndim != 2 or sizes.shape[1] != 2 or (sizes < 0).any():
        raise ValueError(f"part_sizes has shape {sizes.shape}; expected (parts, 2) counts")
    ends = np.cumsum(sizes, axis=0)
    part_v, part_f = arrays["part_vertices"], arrays["part_faces"]
    if len(sizes) and (ends[-1, 0] != len(part_v) or ends[-1, 1] != len(part_f)):
        raise ValueError("part_sizes do not add up to part_vertices and part_faces")
    parts = []
    for (nv, nf), (v_end, f_end) in zip(sizes.tolist(), ends.tolist(), strict=True):
        v, f = part_v[v_end - nv : v_end], part_f[f_end - nf : f_end]
        _check_mesh("a collision part", v, f)
        parts.append((v, f))
    data = MeshData(
        vertices,
        faces,
        arrays["base_rgba"],
        tuple(parts),
        *(arrays.get(name) for name in _OPTIONAL),
    )
    _check_colouring(data)
    return data


def _check_mesh(what: str, vertices: np.ndarray, faces: np.ndarray) -> None:
    """Vertices (n, 3) finite floats and faces (m ≥ 1, 3) indices of them."""
    if vertices.ndim != 2 or vertices.shape[1] != 3 or vertices.dtype != np.float64:
        raise ValueError(f"{what}: vertices must be (n, 3) float64, got {vertices.shape}")
    if faces.ndim != 2 or faces.shape[1] != 3 or len(faces) == 0 or faces.dtype != np.int32:
        raise ValueError(f"{what}: faces must be (m ≥ 1, 3) int32, got {faces.shape}")
    if not np.isfinite(vertices).all():
        raise ValueError(f"{what}: vertices are not all finite")
    if faces.min() < 0 or faces.max() >= len(vertices):
        raise ValueError(f"{what}: a face names a vertex it does not have")


def _check_colouring(data: MeshData) -> None:
    """Texture coordinates and colours, one per vertex; a texture only with coordinates."""
    n = len(data.vertices)
    if data.base_rgba.shape != (4,) or not ((data.base_rgba >= 0) & (data.base_rgba <= 1)).all():
        raise ValueError("base_rgba must be 4 values in [0, 1]")
    if data.uv is not None and data.uv.shape != (n, 2):
        raise ValueError(f"uv has shape {data.uv.shape}; expected ({n}, 2)")
    if data.colors is not None and data.colors.shape != (n, 4):
        raise ValueError(f"colors has shape {data.colors.shape}; expected ({n}, 4)")
    texture = data.texture
    if texture is not None and (texture.ndim != 3 or texture.shape[2] != 3 or data.uv is None):
        raise ValueError("texture must be (h, w, 3) and come with uv")
