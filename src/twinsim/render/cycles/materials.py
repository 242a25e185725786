"""MuJoCo's materials as Cycles Principled BSDF materials.

Base colour: the material's rgba times its texture, the same seeded image twinsim generates
for MuJoCo (`twinsim.scene.textures.make_texture`), or a mesh asset's own image as MuJoCo
holds it, handed to Blender from memory. A mesh with
texture coordinates (twinsim's textured boxes, users' meshes) uses them; a primitive maps the
texture as MuJoCo does, projected along its z axis, `texrepeat` times a metre. MuJoCo's Phong
`shininess` s (exponent 128·s) becomes roughness 1 − s; `reflectance` r (MuJoCo's mirror
blend) a clear coat of weight r and roughness 0.02 (a mirror where r = 1); alpha a < 1 glass
(transmission 1 − a, IOR 1.45). A texture also shapes the surface: its luminance is the
height of a bump map (darker grout, grain and weave lie lower); an asset's image, a picture
of a surface rather than a relief, gives none. Geoms without a material
(robot links) take their own rgba.
MuJoCo's ambient term (colour × ambient, never occluded) is the material's emission of its
base colour at the ambient's strength: in a closed room a world background would be hidden
by the walls and leave every surface the lights miss black.
"""

from __future__ import annotations

import numpy as np

from twinsim.model.scene import SceneSpec
from twinsim.scene.textures import make_texture

_GLASS_IOR = 1.45
_MIRROR_ROUGHNESS = 0.02
_TEXROLE_RGB = 1  # mjtTextureRole of the colour texture
_BUMP_DEPTH_M = 0.002  # a texture's relief: grout lines, wood grain, fabric weave


def material_key(model, geom: int) -> int | tuple[float, ...]:
    """What decides a geom's Cycles material: its MuJoCo material id, or its rgba if it has none."""
    matid = int(model.geom_matid[geom])
    return matid if matid >= 0 else tuple(float(c) for c in model.geom_rgba[geom])


class Materials:
    """Cycles materials made on demand, one per `material_key`, and their texture images."""

    def __init__(self, bpy, model, scene: SceneSpec, ambient: float, bump: float = 0.0) -> None:
        """`ambient`: the linear ambient radiance every material emits times its colour;
        `bump`: the strength of the bump map each texture gives its surface (0: flat)."""
        self._bpy, self._model, self._ambient, self._bump = bpy, model, ambient, bump
        self._textures = {t.name: t for t in scene.textures}
        self._images: dict[int, object] = {}
        self._made: dict[int | tuple[float, ...], object] = {}

    def get(self, key: int | tuple[float, ...], has_uvs: bool):
        """The Cycles material of `key` (uv-mapped or projected, as the geom's mesh allows)."""
        full = (key, has_uvs)
        if full not in self._made:
            self._made[full] = self._make(key, has_uvs)
        return self._made[full]

    def _make(self, key: int | tuple[float, ...], has_uvs: bool):
        m = self._model
        if isinstance(key, tuple):
            rgba, shininess, reflectance, texid = np.asarray(key), 0.5, 0.0, -1
            name = "rgba_" + "_".join(f"{c:.3f}" for c in key)
        else:
            rgba, shininess = np.asarray(m.mat_rgba[key], float), float(m.mat_shininess[key])
            reflectance, name = float(m.mat_reflectance[key]), m.material(key).name
            texid = _rgb_texture(m, key)
        mat = self._bpy.data.materials.new(f"{name}{'_uv' if has_uvs else ''}")
        nodes, links = mat.node_tree.nodes, mat.node_tree.links
        bsdf = nodes["Principled BSDF"]
        bsdf.inputs["Roughness"].default_value = float(np.clip(1.0 - shininess, 0.0, 1.0))
        bsdf.inputs["Coat Weight"].default_value = reflectance
        bsdf.inputs["Coat Roughness"].default_value = _MIRROR_ROUGHNESS
        if rgba[3] < 1.0:
            bsdf.inputs["Transmission Weight"].default_value = float(1.0 - rgba[3])
            bsdf.inputs["IOR"].default_value = _GLASS_IOR
        colour = (*linear(rgba[:3]), 1.0)
        # MuJoCo adds a material's emission × its colour (the lamps that glow at night)
        glow = 0.0 if isinstance(key, tuple) else float(m.mat_emission[key])
        bsdf.inputs["Emission Strength"].default_value = self._ambient + glow
        if texid < 0:
            bsdf.inputs["Base Color"].default_value = colour
            bsdf.inputs["Emission Color"].default_value = colour
            return mat
        image = nodes.new("ShaderNodeTexImage")
        image.image = self._image(texid)
        image.extension = "REPEAT"
        links.new(_texture_vector(nodes, links, m, key, has_uvs), image.inputs["Vector"])
        tint = nodes.new("ShaderNodeMix")
        tint.data_type, tint.blend_type = "RGBA", "MULTIPLY"
        tint.inputs["Factor"].default_value = 1.0
        tint.inputs["B"].default_value = colour
        links.new(image.outputs["Color"], tint.inputs["A"])
        links.new(tint.outputs["Result"], bsdf.inputs["Base Color"])
        links.new(tint.outputs["Result"], bsdf.inputs["Emission Color"])
        if self._bump > 0.0 and m.texture(texid).name in self._textures:
            # the texture's darker parts (grout, grain, weave) lie lower: its luminance is
            # the height of a bump map of that strength, `_BUMP_DEPTH_M` deep at most
            height = nodes.new("ShaderNodeRGBToBW")
            links.new(image.outputs["Color"], height.inputs["Color"])
            bump = nodes.new("ShaderNodeBump")
            bump.inputs["Strength"].default_value = self._bump
            bump.inputs["Distance"].default_value = _BUMP_DEPTH_M
            links.new(height.outputs["Val"], bump.inputs["Height"])
            links.new(bump.outputs["Normal"], bsdf.inputs["Normal"])
        return mat

    def _image(self, texid: int):
        """The texture as a Blender image, in memory: made from twinsim's generator, or a mesh
        asset's texels as MuJoCo holds them."""
        if texid not in self._images:
            m = self._model
            name = m.texture(texid).name
            if name in self._textures:
                rgb = make_texture(self._textures[name])
            else:
                h, w, nc = (
                    int(m.tex_height[texid]),
                    int(m.tex_width[texid]),
                    int(m.tex_nchannel[texid]),
                )
                start = int(m.tex_adr[texid])
                rgb = m.tex_data[start : start + h * w * nc].reshape(h, w, nc)[..., :3]
            h, w = rgb.shape[:2]
            rgba = np.concatenate([rgb, np.full((h, w, 1), 255, np.uint8)], axis=2)
            image = self._bpy.data.images.new(name, w, h, alpha=False)
            image.pixels.foreach_set((rgba[::-1].astype(np.float32) / 255.0).ravel())
            image.pack()
            self._images[texid] = image
        return self._images[texid]


def _rgb_texture(model, matid: int) -> int:
    """The id of the material's RGB texture, −1 if it has none."""
    return int(model.mat_texid[matid][_TEXROLE_RGB])


def _texture_vector(nodes, links, model, matid: int, has_uvs: bool):
    """The texture coordinate socket: the mesh's UVs, or object x, y scaled by `texrepeat`."""
    coords = nodes.new("ShaderNodeTexCoord")
    if has_uvs:
        return coords.outputs["UV"]
    scale = nodes.new("ShaderNodeMapping")
    rx, ry = (float(r) for r in model.mat_texrepeat[matid])
    scale.inputs["Scale"].default_value = (rx, ry, 1.0)
    links.new(coords.outputs["Object"], scale.inputs["Vector"])
    return scale.outputs["Vector"]


def linear(srgb: np.ndarray) -> tuple[float, float, float]:
    """sRGB-encoded colour components (as MuJoCo's rgba is displayed) in linear light."""
    c = np.clip(np.asarray(srgb, float), 0.0, 1.0)
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return tuple(float(x) for x in lin)
