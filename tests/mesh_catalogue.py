"""Small mesh assets written with trimesh for the tests (nothing is downloaded): a chair of
boxes in centimetres with vertex colours (OBJ), a textured crate in a y-up glTF binary (upper
half of its sides red, lower half blue), and an L-shaped block in millimetres (STL), whose
concavity CoACD must cut."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import trimesh
from PIL import Image

CHAIR_RGB = (180, 120, 60)
CRATE_SIZE_YUP = (0.6, 0.5, 0.4)  # x, y (up in the file), z
ELL_SIZE_M = (0.6, 0.3, 0.9)  # after units: x, y, z

#: the three meshes; the chair collides as its hull (CoACD's manifold pre-pass takes ~20 s on
#: its boxes, which meet without forming one manifold), the crate and the L as CoACD cuts them
CATALOGUE_YAML = """\
assets:
  - file: chair.obj
    class: chair
    units: cm
    count: {min: 1, max: 2}
    collision: {method: hull}
  - file: crate.glb
    class: box
    count: 1
  - file: ell.stl
    class: shelf
    units: mm
    count: 1
    collision: {threshold: 0.05, preprocess: "off"}
"""
#: the same copies, every one colliding as its hull (no CoACD)
HULLS_YAML = """\
assets:
  - {file: chair.obj, class: chair, units: cm, count: {min: 1, max: 2}, collision: {method: hull}}
  - {file: crate.glb, class: box, collision: {method: hull}}
  - {file: ell.stl, class: shelf, units: mm, collision: {method: hull}}
"""


def chair() -> trimesh.Trimesh:
    """A chair in cm: seat, back and four legs (boxes meeting, not one manifold)."""

    def box(extents, at):
        b = trimesh.creation.box(extents)
        b.apply_translation(at)
        return b

    parts = [box((45, 45, 5), (0, 0, 45)), box((5, 45, 45), (-20, 0, 70))]
    parts += [box((4, 4, 43), (sx, sy, 21.5)) for sx in (-20, 20) for sy in (-20, 20)]
    mesh = trimesh.util.concatenate(parts)
    mesh.visual.vertex_colors = np.tile([*CHAIR_RGB, 255], (len(mesh.vertices), 1))
    return mesh


def crate() -> trimesh.Trimesh:
    """A crate in metres, y up, textured: the image's upper half red on the upper half."""
    box = trimesh.creation.box(CRATE_SIZE_YUP)
    v = box.vertices
    uv = np.column_stack([(v[:, 0] + 0.3) / 0.6, (v[:, 1] + 0.25) / 0.5])  # v up with y
    image = np.zeros((64, 64, 3), np.uint8)
    image[:32], image[32:] = (220, 40, 40), (40, 40, 220)
    material = trimesh.visual.material.PBRMaterial(baseColorTexture=Image.fromarray(image))
    visual = trimesh.visual.TextureVisuals(uv=uv, material=material)
    return trimesh.Trimesh(v, box.faces, visual=visual, process=False)


def ell() -> trimesh.Trimesh:
    """An L-shaped block in mm, z up: a 600 mm foot and a 900 mm post, 300 mm deep (one
    watertight manifold, not convex): the L outline in x, z, pulled along y."""
    outline = [(-300, 0), (300, 0), (300, 900), (0, 900), (0, 300), (-300, 300)]
    fan = [(4, 5, 0), (4, 0, 1), (4, 1, 2), (4, 2, 3)]  # from the inner corner (0, 300)
    vertices = [(x, y, z) for y in (-150.0, 150.0) for x, z in outline]
    faces = [(a, b, c) for a, b, c in fan] + [(6 + a, 6 + c, 6 + b) for a, b, c in fan]
    for i in range(6):
        j = (i + 1) % 6
        faces += [(i, 6 + i, j), (j, 6 + i, 6 + j)]
    mesh = trimesh.Trimesh(np.array(vertices, float), np.array(faces), process=True)
    trimesh.repair.fix_normals(mesh)
    return mesh


def write_meshes(folder: Path) -> None:
    """The three mesh files into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    chair().export(folder / "chair.obj")
    (folder / "crate.glb").write_bytes(trimesh.exchange.gltf.export_glb(trimesh.Scene(crate())))
    ell().export(folder / "ell.stl")


def write_catalogue(folder: Path, yaml_text: str = CATALOGUE_YAML) -> Path:
    """A catalogue folder with the three meshes and `yaml_text` as its assets.yaml."""
    write_meshes(folder)
    (folder / "assets.yaml").write_text(yaml_text, encoding="utf-8")
    return folder
