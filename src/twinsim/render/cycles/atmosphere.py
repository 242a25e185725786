"""What surrounds and fills a Cycles scene: the world background and the air.

- Indoors the world is black, as MuJoCo's background (the ambient light is each material's
  emission, `materials`).
- Outdoors (a world with a road network) a sky: radiance graded from a pale horizon to a blue
  zenith, scaled so that its cosine-weighted mean over the upper hemisphere is MuJoCo's
  ambient a (an open surface of colour c then shows c·a from the sky, as in MuJoCo), the
  ground below the horizon at `GROUND_ALBEDO` of it. The sun is the scene's directional light.
- Fog (the twin's look, MuJoCo's linear fog from `fog_start_m` to `fog_end_m`) is a
  homogeneous volume filling the world, with extinction σ = 3.912 / fog_end_m (Koschmieder:
  2 % of the light is left at the distance where MuJoCo's fog is complete), the fog colour c
  as its scattering albedo (the lights scatter in it: halos, light shafts) and airlight, an
  emission σ·c·(1 − c), so that a long path converges to c as MuJoCo's fog does (in deep
  fog an emission e gives e / (σ·(1 − albedo))): surfaces fade into the fog colour as
  e^(−σd), where MuJoCo blends linearly from `fog_start_m`.
"""

from __future__ import annotations

import math

import numpy as np

from twinsim.render.cycles.materials import linear
from twinsim.scene.sky import GROUND_ALBEDO, HORIZON_SRGB, ZENITH_SRGB

KOSCHMIEDER = -math.log(0.02)  # 3.912: ln(1 / contrast threshold)
_LUMA = np.array([0.2126, 0.7152, 0.0722])


def fog_extinction_per_m(fog_end_m: float) -> float:
    """The extinction coefficient of fog that leaves 2 % of the light at `fog_end_m`."""
    return KOSCHMIEDER / fog_end_m


def sky_scale(ambient: float) -> float:
    """Strength of the graded sky whose cosine-weighted hemisphere mean has luminance
    `ambient`: with c(z) = H + (Z − H)·z over the hemisphere, that mean is H + ⅔(Z − H)."""
    horizon, zenith = np.array(linear(HORIZON_SRGB)), np.array(linear(ZENITH_SRGB))
    mean = horizon + 2.0 / 3.0 * (zenith - horizon)
    return ambient / float(mean @ _LUMA)


def world_shader(bpy, ambient: float, outdoor: bool, look):
    """The Blender world: black, or the sky (`outdoor`), with the fog of `look` as its volume."""
    world = bpy.data.worlds.new("twinsim world")
    tree = world.node_tree
    nodes, links = tree.nodes, tree.links
    background = nodes["Background"]
    output = nodes["World Output"]
    if outdoor and ambient > 0.0:
        _sky(nodes, links, background, sky_scale(ambient))
    else:
        world.color = (0.0, 0.0, 0.0)
        background.inputs["Color"].default_value = (0.0, 0.0, 0.0, 1.0)
    if look is not None and look.fog_start_m is not None:
        fog = nodes.new("ShaderNodeVolumePrincipled")
        colour, sigma = (*linear(look.fog_rgb), 1.0), fog_extinction_per_m(look.fog_end_m)
        fog.inputs["Color"].default_value = colour
        fog.inputs["Density"].default_value = sigma
        fog.inputs["Anisotropy"].default_value = 0.0
        # airlight: in deep fog of albedo c an emission e converges to e / (σ·(1 − c)), so
        # e = σ·c·(1 − c) brings a long path to the fog's colour c, as MuJoCo's fog does,
        # with the lamps' own scattering on top
        airlight = tuple(c * (1.0 - c) for c in colour[:3])
        fog.inputs["Emission Color"].default_value = (*airlight, 1.0)
        fog.inputs["Emission Strength"].default_value = sigma
        links.new(fog.outputs["Volume"], output.inputs["Volume"])
    return world


def _sky(nodes, links, background, strength: float) -> None:
    """A sky graded by elevation (z of the view direction) into `background`."""
    coords = nodes.new("ShaderNodeTexCoord")
    split = nodes.new("ShaderNodeSeparateXYZ")
    links.new(coords.outputs["Generated"], split.inputs["Vector"])
    ramp = nodes.new("ShaderNodeValToRGB")
    stops = ramp.color_ramp.elements
    horizon, zenith = (*linear(HORIZON_SRGB), 1.0), (*linear(ZENITH_SRGB), 1.0)
    ground = (*(GROUND_ALBEDO * c for c in horizon[:3]), 1.0)
    # the ramp reads (z + 1) / 2: 0 straight down, 0.5 the horizon, 1 the zenith
    stops[0].position, stops[0].color = 0.5, horizon
    stops[1].position, stops[1].color = 1.0, zenith
    below = stops.new(0.4999)
    below.color = ground
    stops.new(0.0).color = ground
    half = nodes.new("ShaderNodeMath")
    half.operation = "MULTIPLY_ADD"
    half.inputs[1].default_value = 0.5
    half.inputs[2].default_value = 0.5
    links.new(split.outputs["Z"], half.inputs[0])
    links.new(half.outputs["Value"], ramp.inputs["Fac"])
    links.new(ramp.outputs["Color"], background.inputs["Color"])
    background.inputs["Strength"].default_value = strength
