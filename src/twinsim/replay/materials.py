"""Re-randomise the static world's appearance from a seed: textures, colours, reflectance.

Only what the static objects wear changes (people and flying objects keep theirs); geometry
does not, so depth, masks and boxes of a twin with new materials equal the original's.
Each texture keeps its kind and tiling but gets a new pattern seed and a colour pair shifted
in hue; plain colours shift the same way; specular, shininess and reflectance are re-drawn.
"""

from __future__ import annotations

import colorsys

import numpy as np

from twinsim.model.scene import SceneSpec


def _recolor(rgb, rng: np.random.Generator) -> tuple[float, float, float]:
    """The colour with a new hue and a saturation/value jitter (keeps light walls light)."""
    h, s, v = colorsys.rgb_to_hsv(*rgb[:3])
    h = (h + rng.uniform(0.0, 1.0)) % 1.0
    s = float(np.clip(s * rng.uniform(0.6, 1.4) + rng.uniform(0.0, 0.15), 0.0, 1.0))
    v = float(np.clip(v * rng.uniform(0.8, 1.2), 0.05, 1.0))
    return tuple(round(c, 3) for c in colorsys.hsv_to_rgb(h, s, v))


def rematerial(scene: SceneSpec, seed: int) -> SceneSpec:
    """The scene with every static object's textures and materials re-drawn from `seed`."""
    rng = np.random.default_rng(seed)
    used = {g.material for o in scene.objects for g in o.geoms}
    materials, retextured = [], set()
    for mat in scene.materials:
        if mat.name not in used:
            materials.append(mat)
            continue
        update = {
            "specular": round(float(rng.uniform(0.05, 0.6)), 3),
            "shininess": round(float(rng.uniform(0.05, 0.7)), 3),
            "reflectance": round(float(rng.uniform(0.0, 0.2)) if mat.reflectance else 0.0, 3),
        }
        if mat.texture:
            retextured.add(mat.texture)
        else:
            update["rgba"] = (*_recolor(mat.rgba, rng), mat.rgba[3])
        materials.append(mat.model_copy(update=update))
    textures = []
    for tex in scene.textures:
        if tex.name not in retextured:
            textures.append(tex)
            continue
        shift = rng.uniform(0.0, 1.0)
        pair = []
        for c in (tex.color_a, tex.color_b):
            h, s, v = colorsys.rgb_to_hsv(*c)
            pair.append(tuple(round(x, 3) for x in colorsys.hsv_to_rgb((h + shift) % 1.0, s, v)))
        textures.append(
            tex.model_copy(
                update={
                    "seed": int(rng.integers(0, 2**31 - 1)),
                    "color_a": pair[0],
                    "color_b": pair[1],
                }
            )
        )
    return scene.model_copy(update={"materials": tuple(materials), "textures": tuple(textures)})
