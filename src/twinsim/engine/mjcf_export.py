"""The static world of a scene as a standalone MJCF file that any MuJoCo loads.

The engine's own `MjSpec` of the scene (`build.build_spec`) without its robots, people and
flying objects, written with MuJoCo's `MjSpec.to_xml`. What lives only in memory becomes files
beside the XML, referenced relative to it: every procedural texture a PNG (`textures/`), every
mesh (textured boxes, the hills' surface) a Wavefront OBJ (`meshes/`) whose numbers read back
exactly, as do the places and sizes written in the XML (MuJoCo's XML writer prints six
significant digits; they are written again in full). Round geoms keep their primitives;
the MJCF asks for a tessellation fine enough (`visual/quality`) that MuJoCo's own drawing of
them stays within the tolerance twinsim's cameras keep (`round_meshes`), as the camera meshes
twinsim substitutes at render time are no part of a plain MuJoCo reader.
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree

import mujoco
import numpy as np

from twinsim.engine.build import build_spec, camera_mounts
from twinsim.engine.round_meshes import ROUND_TYPES, builtin_error, surface_tolerance
from twinsim.model.scene import SceneSpec
from twinsim.model.sections import RenderConfig
from twinsim.sequence.images import write_png

TEXTURE_DIR = "textures"
MESH_DIR = "meshes"
_MAX_SLICES = 1024  # MuJoCo draws every round geom with one tessellation: stop refining here


def write_mjcf(
    scene: SceneSpec, render: RenderConfig, physics_hz: int, folder: Path, name: str
) -> Path:
    """Write the static world of `scene` as `folder/name` with its textures and meshes beside
    it; returns the XML's path. Cameras' clip planes and offscreen size are the recorded
    cameras' (so a depth render at a recorded pose sees what they saw)."""
    static = scene.model_copy(
        update={"robots": (), "sensors": (), "people": (), "flying_objects": ()}
    )
    spec = build_spec(static, render, physics_hz)
    cams = camera_mounts(scene)
    spec.visual.global_.offwidth = max([640, *(c.width for c in cams)])
    spec.visual.global_.offheight = max([480, *(c.height for c in cams)])
    folder = Path(folder)
    _write_textures(spec, folder)
    _write_meshes(spec, folder)
    spec.modelfiledir = str(folder.resolve())
    model = spec.compile()
    slices = _round_slices(model, render.geom_slices)
    spec.visual.quality.numslices, spec.visual.quality.numstacks = slices, slices // 2
    if cams:  # MuJoCo's clip planes are fractions of the model's extent
        spec.visual.map.znear = min(c.near_m for c in cams) / model.stat.extent
        spec.visual.map.zfar = max(c.far_m for c in cams) / model.stat.extent
    path = folder / name
    path.write_text(_exact_numbers(spec.to_xml(), spec), encoding="utf-8")
    return path


def _exact_numbers(xml: str, spec: mujoco.MjSpec) -> str:
    """`xml` with every body's, geom's and light's `pos`, `quat`, `size` and `dir` in shortest
    round-trip decimals from the spec (MuJoCo's writer rounds them to six significant digits:
    half a millimetre 500 m from the origin)."""
    root = ElementTree.fromstring(xml)
    for tag, find in (("body", spec.body), ("geom", spec.geom), ("light", spec.light)):
        for element in root.iter(tag):
            source = find(element.get("name"))
            for attribute in ("pos", "quat", "size", "dir"):
                written = element.get(attribute)
                if written is not None:
                    values = getattr(source, attribute)[: len(written.split())]
                    element.set(attribute, " ".join(repr(float(v)) for v in values))
    return ElementTree.tostring(root, encoding="unicode") + "\n"


def _round_slices(model: mujoco.MjModel, slices: int) -> int:
    """The fewest slices (from the render config's, doubling; stacks half as many) with which
    MuJoCo draws every round geom of `model` within its surface tolerance."""
    round_geoms = [
        (ROUND_TYPES[int(t)], model.geom_size[g])
        for g, t in enumerate(model.geom_type)
        if int(t) in ROUND_TYPES
    ]
    while slices < _MAX_SLICES and any(
        builtin_error(kind, size, slices, slices // 2) > surface_tolerance(kind, size)
        for kind, size in round_geoms
    ):
        slices *= 2
    return slices


def _write_textures(spec: mujoco.MjSpec, folder: Path) -> None:
    """Each in-memory texture as `textures/<name>.png`, referenced by file instead."""
    if not spec.textures:
        return
    (folder / TEXTURE_DIR).mkdir()
    for texture, file in zip(spec.textures, _file_names(spec.textures), strict=True):
        rgb = np.frombuffer(bytes(texture.data), np.uint8)
        rgb = rgb.reshape(texture.height, texture.width, texture.nchannel)
        write_png(folder / TEXTURE_DIR / f"{file}.png", np.ascontiguousarray(rgb[..., ::-1]))
        texture.file = f"{TEXTURE_DIR}/{file}.png"
        texture.data = b""


def _write_meshes(spec: mujoco.MjSpec, folder: Path) -> None:
    """Each mesh given by its vertices as `meshes/<name>.obj` (vertices, texture coordinates
    and faces as given, in shortest round-trip decimals), referenced by file instead."""
    if not spec.meshes:
        return
    (folder / MESH_DIR).mkdir()
    for mesh, file in zip(spec.meshes, _file_names(spec.meshes), strict=True):
        verts = np.asarray(mesh.uservert, float).reshape(-1, 3)
        uvs = np.asarray(mesh.usertexcoord, float).reshape(-1, 2)
        faces = np.asarray(mesh.userface, int).reshape(-1, 3) + 1
        uv_faces = np.asarray(mesh.userfacetexcoord, int).reshape(-1, 3) + 1
        lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in verts.tolist()]
        lines += [f"vt {u!r} {1.0 - v!r}" for u, v in uvs.tolist()]  # OBJ's v runs up
        if len(uvs):
            lines += [
                f"f {a}/{ta} {b}/{tb} {c}/{tc}"
                for (a, b, c), (ta, tb, tc) in zip(faces.tolist(), uv_faces.tolist(), strict=True)
            ]
        else:
            lines += [f"f {a} {b} {c}" for a, b, c in faces.tolist()]
        (folder / MESH_DIR / f"{file}.obj").write_text("\n".join(lines) + "\n", encoding="utf-8")
        mesh.file = f"{MESH_DIR}/{file}.obj"
        mesh.uservert = mesh.usertexcoord = mesh.userface = mesh.userfacetexcoord = []


def _file_names(elements) -> list[str]:
    """A file name per spec element from its name (characters other than letters, digits,
    `-`, `_` replaced, so a scene's names never lead out of the folder), unique."""
    names = [re.sub(r"[^A-Za-z0-9_-]", "_", e.name) or "unnamed" for e in elements]
    if len(set(names)) == len(names):
        return names
    return [f"{n}_{i}" for i, n in enumerate(names)]
