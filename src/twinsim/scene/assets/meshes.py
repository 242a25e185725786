"""A catalogue entry's mesh file read with trimesh and made an asset's visual mesh.

The file is read as one mesh (a glTF scene's nodes joined, their transforms applied), its
vertices as the file has them (nothing merged, so texture seams stay), unreferenced ones
dropped; then scaled to metres, turned z-up (a y-up file turned +90° about x), and moved so
the middle of its footprint is the origin and its lowest point is on z = 0. Colours: a base
colour texture with texture coordinates, else vertex (or face) colours, else the material's
colour; transparency is dropped (alpha 1). A file that does not read, has no faces, has
non-finite vertices or is more than `MAX_SIZE_M` across after scaling is refused in one line.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

import numpy as np

from twinsim.errors import ConfigError
from twinsim.meshdata import MeshData
from twinsim.scene.assets.catalogue import CatalogueItem

MAX_SIZE_M = 200.0  # a larger asset is a unit mistake (millimetres read as metres)
#: y-up to z-up: +90° about x, (x, y, z) → (x, −z, y)
_Y_UP_TO_Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
_WHITE = np.ones(4)


@dataclass(frozen=True)
class VisualMesh:
    """A catalogue entry's processed mesh (no collision parts yet), how it is coloured, its
    mean colour (what a viewer sees on the whole: the texture's mean texel times the base
    colour, the mean vertex colour, or the colour) and the sha256 of the file read."""

    item: CatalogueItem
    data: MeshData
    colouring: Literal["texture", "vertex", "material"]
    mean_rgba: tuple[float, float, float, float]
    source_sha256: str

    def footprint(self) -> tuple[float, float, float]:
        """Half extents along x and y, and the height (the mesh stands on z = 0)."""
        lo, hi = self.data.bounds()
        return float(max(-lo[0], hi[0])), float(max(-lo[1], hi[1])), float(hi[2])


def load_visual_mesh(item: CatalogueItem) -> VisualMesh:
    """Read and process the mesh file of `item` (see the module docstring)."""
    import trimesh  # when a catalogue is read: a world without one does not load it

    path, entry = item.path, item.entry
    blob = path.read_bytes()
    try:
        mesh = trimesh.load(path, force="mesh", process=False)
    except Exception as exc:  # trimesh's loaders raise many kinds for a broken file
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ConfigError(f"{path}: cannot be read as a mesh ({reason})") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise ConfigError(f"{path}: has no faces (a mesh asset needs triangles)")
    used, faces = np.unique(np.asarray(mesh.faces, np.int64), return_inverse=True)
    vertices = np.asarray(mesh.vertices, np.float64)[used]
    if not np.isfinite(vertices).all():
        raise ConfigError(f"{path}: has NaN or infinite vertex coordinates")
    vertices = vertices * entry.scale_m
    if entry.up == "y":
        vertices = vertices @ _Y_UP_TO_Z_UP.T
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    size = hi - lo
    if size.max() > MAX_SIZE_M:
        dims = " × ".join(f"{s:.4g}" for s in size)
        raise ConfigError(
            f"{path}: is {dims} m after scale {entry.scale_m:g}: more than {MAX_SIZE_M:g} m "
            f"across ({item.where}: set units or scale)"
        )
    if size.max() <= 0.0:
        raise ConfigError(f"{path}: has no extent (every vertex at one point)")
    vertices = vertices - np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, lo[2]])
    faces = faces.reshape(-1, 3).astype(np.int32)
    colouring, base, mean, extra = _colours(mesh, used)
    data = MeshData(vertices, faces, base, (), **extra)
    return VisualMesh(item, data, colouring, mean, hashlib.sha256(blob).hexdigest())


def _colours(mesh, used: np.ndarray) -> tuple:
    """(colouring, base RGBA, mean RGBA, the `MeshData` fields uv / colors / texture) of a
    trimesh mesh's visual, for the vertices `used`."""
    visual = mesh.visual
    if visual.kind == "texture":
        image, factor = _base_colour_texture(visual.material)
        if image is not None and visual.uv is not None:
            uv = np.asarray(visual.uv, np.float32)[used]
            texels = np.asarray(image.convert("RGB"), np.uint8)
            mean = factor.copy()
            mean[:3] *= texels.reshape(-1, 3).mean(axis=0) / 255.0
            extra = {"uv": uv, "texture": np.ascontiguousarray(texels)}
            return "texture", factor, _rgba(mean), extra
        return "material", factor, _rgba(factor), {}
    if visual.kind in ("vertex", "face"):
        colors = np.asarray(visual.vertex_colors, np.uint8)[used].copy()
        colors[:, 3] = 255
        mean = np.append(colors[:, :3].mean(axis=0) / 255.0, 1.0)
        return "vertex", mean, _rgba(mean), {"colors": colors}
    colour = np.append(np.asarray(visual.main_color[:3], float) / 255.0, 1.0)
    return "material", colour, _rgba(colour), {}


def _base_colour_texture(material) -> tuple[object | None, np.ndarray]:
    """A trimesh material's base colour image (PIL, or None) and the colour multiplying it
    (alpha 1): glTF's `baseColorTexture`/`baseColorFactor`, OBJ's `map_Kd`/`Kd`."""
    from trimesh.visual.material import PBRMaterial

    if isinstance(material, PBRMaterial):
        image, factor = material.baseColorTexture, material.baseColorFactor
    else:
        image, factor = getattr(material, "image", None), getattr(material, "diffuse", None)
    rgba = _WHITE.copy() if factor is None else np.asarray(factor, float)[:4] / 255.0
    rgba[3] = 1.0
    return image, rgba


def _rgba(values: np.ndarray) -> tuple[float, float, float, float]:
    """Four colour components rounded to 1e-3 (as the generators' materials), alpha 1."""
    r, g, b = (round(float(v), 3) for v in np.clip(values[:3], 0.0, 1.0))
    return (r, g, b, 1.0)
