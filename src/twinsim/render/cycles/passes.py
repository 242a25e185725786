"""Cycles' colour, z-depth, object-index and normal passes, written as float EXRs by the compositor
into a work folder (inside the output folder) and read back as arrays.

Blender keeps a render result's pixels out of Python's reach, so a File Output node writes
each pass; Blender reads its own EXRs back (`bpy.data.images.load`), so no other image
library is needed. Colour is linear light, encoded here to 8-bit sRGB (what Blender's
"Standard" view transform does); depth is Cycles' z-depth (along the optical axis, as
twinsim's) and 0 where nothing was hit; the object index is the instance id (0: nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

_PASSES = (
    ("rgb", "Image", "RGBA"),
    ("depth", "Depth", "FLOAT"),
    ("index", "Object Index", "FLOAT"),
    ("normal", "Normal", "VECTOR"),
)
_NO_HIT_M = 1e9  # Cycles' depth of the background is 1e10


@dataclass(frozen=True)
class CyclesPasses:
    """One rendered frame: rgb (H, W, 3) uint8 sRGB of `linear` (H, W, 3) float32, the light
    before the view transform; depth (H, W) float32 m; instance uint16; normal (H, W, 3)
    float32, the shading normal in the world frame (0 where nothing was hit)."""

    rgb: np.ndarray
    depth: np.ndarray
    instance: np.ndarray
    linear: np.ndarray
    normal: np.ndarray


def add_pass_outputs(bpy, scene, folder: Path) -> None:
    """Enable the passes and route them, as 32-bit float EXRs, into `folder`."""
    layer = scene.view_layers[0]
    layer.use_pass_z = True
    layer.use_pass_object_index = True
    layer.use_pass_normal = True
    tree = bpy.data.node_groups.new("twinsim passes", "CompositorNodeTree")
    scene.compositing_node_group = tree
    layers = tree.nodes.new("CompositorNodeRLayers")
    out = tree.nodes.new("CompositorNodeOutputFile")
    out.directory, out.file_name = str(folder), "pass_"
    out.format.media_type = "IMAGE"
    out.format.file_format = "OPEN_EXR"
    out.format.color_depth = "32"
    out.format.exr_codec = "ZIP"
    for name, socket, kind in _PASSES:
        out.file_output_items.new(kind, name)
        tree.links.new(layers.outputs[socket], out.inputs[name])


def read_passes(bpy, folder: Path, width: int, height: int) -> CyclesPasses:
    """The passes of the last render, read from `folder` (and removed from it)."""
    planes = {}
    for name, _, _ in _PASSES:
        path = _written(folder, name)
        image = bpy.data.images.load(str(path))
        try:
            pixels = np.empty(width * height * image.channels, np.float32)
            image.pixels.foreach_get(pixels)
        finally:
            bpy.data.images.remove(image)
        path.unlink()
        planes[name] = pixels.reshape(height, width, -1)[::-1]  # Blender's rows run upwards
    depth = planes["depth"][..., 0].copy()
    depth[depth > _NO_HIT_M] = 0.0
    linear = np.ascontiguousarray(planes["rgb"][..., :3], np.float32)
    return CyclesPasses(
        rgb=srgb8(linear),
        depth=depth.astype(np.float32),
        instance=np.rint(planes["index"][..., 0]).astype(np.uint16),
        linear=linear,
        normal=np.ascontiguousarray(planes["normal"][..., :3], np.float32),
    )


def srgb8(linear: np.ndarray) -> np.ndarray:
    """Linear light in [0, 1] as 8-bit sRGB (values above 1 clip, as Blender's Standard view)."""
    c = np.clip(linear, 0.0, 1.0)
    encoded = np.where(c <= 0.0031308, 12.92 * c, 1.055 * np.power(c, 1 / 2.4) - 0.055)
    return np.rint(encoded * 255.0).astype(np.uint8)


def _written(folder: Path, name: str) -> Path:
    """The file the File Output node wrote for pass `name` (it appends the frame number)."""
    found = sorted(folder.glob(f"pass_{name}*.exr"))
    if len(found) != 1:
        raise RuntimeError(f"Cycles wrote {len(found)} files for the {name} pass in {folder}")
    return found[0]
