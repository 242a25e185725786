"""MuJoCo's lights as Cycles lights, with the intensity conversion.

MuJoCo lights are OpenGL's: a surface of colour c lit by a light of diffuse colour d shows
c·d·cos θ, at any distance (twinsim's lights have attenuation (1, 0, 0)). A Cycles point or
spot light of power P watts gives irradiance P / (4π r²) at distance r and a diffuse surface
radiance c·E / π, so the light is matched where it matters most, at its reference distance
h (its height above the floor, z = 0, at least 0.5 m): **P = 4π² h² · d**, beyond which it
falls off with the square of distance as a real lamp does. A directional light (and MuJoCo's
headlight, a directional light along the camera's axis) becomes a sun of strength **π · d**
(W/m²), the same c·d·cos θ everywhere. MuJoCo's ambient terms (the lights' and the
headlight's) are each material's emission of its own colour indoors (`materials`) and the
sky's radiance outdoors (`atmosphere`): both add c·a on an open surface as MuJoCo does. Colours are
MuJoCo's display values, turned to linear light. A spot's cone is its cutoff (at most a
half-space) with a soft edge in place of MuJoCo's cosᵉ falloff.

A town's street lamps at night are lit in MuJoCo by a small pool of spot lights moved to the
lamps each camera sees (`twinsim.engine.lamps`); Cycles has no limit on lights, so every lamp
gets its own spot of the pool lights' colour and cone, fixed where it stands, and the pool
itself is left dark. Each traffic vehicle's headlamps then shine too: a spot just in front of
each headlamp geom, along the vehicle's heading and dipped `HEADLAMP_DIP_DEG`, as bright as a
MuJoCo light of `HEADLAMP_DIFFUSE` at `HEADLAMP_REFERENCE_M` (a dipped beam lights the road
some 10 m ahead), posed with the vehicle every frame.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from twinsim.render.cycles.materials import linear

if TYPE_CHECKING:
    from twinsim.engine.lamps import LampPool

_SPOT, _DIRECTIONAL = 0, 1  # mjtLightType values (MuJoCo's stable enum)
_MIN_REFERENCE_M = 0.5
HEADLAMP_RGB = (1.0, 0.95, 0.85)
HEADLAMP_DIFFUSE = 0.5
HEADLAMP_REFERENCE_M = 10.0
HEADLAMP_DIP_DEG = 4.0
HEADLAMP_CONE_DEG = 50.0
_HEADLAMP_AHEAD_M = 0.06  # the spot sits this far in front of the lamp's centre (outside it)


def point_power_w(diffuse: np.ndarray, height_m: float) -> float:
    """The power of the Cycles lamp that lights like MuJoCo's `diffuse` at `height_m` (max RGB)."""
    h = max(height_m, _MIN_REFERENCE_M)
    return 4.0 * math.pi**2 * h**2 * max(linear(diffuse))


class Lights:
    """The model's lights as Cycles lights, moved and dimmed to the world's current state."""

    def __init__(
        self,
        bpy,
        model,
        collection,
        lamps: LampPool | None = None,
        headlamps: np.ndarray | None = None,
    ) -> None:
        """`lamps`: a night town's street lamps; `headlamps`: the indices, among an
        `Instant`'s geoms, of the vehicles' headlamp geoms that shine."""
        self._bpy, self._model = bpy, model
        self._objects = []
        self._pool = set() if lamps is None else set(lamps.ids.tolist())
        for i in range(model.nlight):
            directional = int(model.light_type[i]) == _DIRECTIONAL
            data = bpy.data.lights.new(f"light{i}", "SUN" if directional else "SPOT")
            if not directional:
                data.spot_size = min(math.pi, 2.0 * math.radians(float(model.light_cutoff[i])))
                data.spot_blend = 1.0
                data.shadow_soft_size = 0.05
            obj = bpy.data.objects.new(f"light{i}", data)
            collection.objects.link(obj)
            self._objects.append(obj)
        head = bpy.data.lights.new("headlight", "SUN")
        self._headlight = bpy.data.objects.new("headlight", head)
        collection.objects.link(self._headlight)
        if lamps is not None and self._pool:
            self._street_lamps(collection, lamps.lamps, next(iter(self._pool)))
        self._headlamps = np.empty(0, int) if headlamps is None else np.asarray(headlamps, int)
        self._beams = [self._headlamp(collection, k) for k in range(len(self._headlamps))]

    def _headlamp(self, collection, k: int):
        data = self._bpy.data.lights.new(f"headlamp{k}", "SPOT")
        data.spot_size, data.spot_blend = math.radians(HEADLAMP_CONE_DEG), 0.3
        data.shadow_soft_size = 0.05
        data.color = HEADLAMP_RGB
        data.energy = point_power_w(np.full(3, HEADLAMP_DIFFUSE), HEADLAMP_REFERENCE_M)
        obj = self._bpy.data.objects.new(f"headlamp{k}", data)
        collection.objects.link(obj)
        return obj

    def _street_lamps(self, collection, positions: np.ndarray, pool_light: int) -> None:
        """One spot per street lamp, as the pool light `pool_light` would light it there."""
        import mathutils

        m = self._model
        diffuse = np.asarray(m.light_diffuse[pool_light], float)
        peak = max(max(linear(diffuse)), 1e-9)
        for k, pos in enumerate(positions):
            data = self._bpy.data.lights.new(f"street_lamp{k}", "SPOT")
            data.spot_size = min(math.pi, 2.0 * math.radians(float(m.light_cutoff[pool_light])))
            data.spot_blend, data.shadow_soft_size = 1.0, 0.05
            data.color = tuple(c / peak for c in linear(diffuse))
            data.energy = point_power_w(diffuse, float(pos[2]))
            obj = self._bpy.data.objects.new(f"street_lamp{k}", data)
            obj.matrix_world = mathutils.Matrix(_aim(pos, np.array([0.0, 0.0, -1.0])).tolist())
            collection.objects.link(obj)

    def update(self, instant, cam_matrix_world: np.ndarray) -> None:
        """Place every light where MuJoCo has it at `instant` (an `Instant`), with its colour
        and power then."""
        import mathutils

        for i, obj in enumerate(self._objects):
            pos, direction = instant.light_xpos[i], instant.light_xdir[i]
            diffuse = np.asarray(instant.light_diffuse[i], float)
            if i in self._pool:  # each lamp has its own light here
                diffuse = np.zeros(3)
            obj.matrix_world = mathutils.Matrix(_aim(pos, direction).tolist())
            peak = max(max(linear(diffuse)), 1e-9)
            obj.data.color = tuple(c / peak for c in linear(diffuse))
            if obj.data.type == "SUN":
                obj.data.energy = math.pi * peak
            else:
                obj.data.energy = point_power_w(diffuse, float(pos[2]))
        dip = math.radians(HEADLAMP_DIP_DEG)
        for j, obj in zip(self._headlamps.tolist(), self._beams, strict=True):
            M = instant.geom_matrix[j]
            forward = M[:3, 0] / np.linalg.norm(M[:3, 0])
            beam = math.cos(dip) * forward - math.sin(dip) * np.array([0.0, 0.0, 1.0])
            pos = M[:3, 3] + _HEADLAMP_AHEAD_M * forward
            obj.matrix_world = mathutils.Matrix(_aim(pos, beam).tolist())
        head = np.asarray(instant.headlight_diffuse, float)
        self._headlight.data.energy = math.pi * max(linear(head))
        self._headlight.matrix_world = mathutils.Matrix(np.asarray(cam_matrix_world).tolist())

    def ambient(self) -> float:
        """The linear ambient radiance (every ambient term of the model, brightest channel)."""
        total = np.asarray(self._model.vis.headlight.ambient, float).copy()
        total += np.asarray(self._model.light_ambient, float).sum(axis=0)
        return max(linear(total))


def _aim(pos: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """A 4×4 pose at `pos` whose −z axis (where Blender lights point) is `direction`."""
    z = -np.asarray(direction, float) / np.linalg.norm(direction)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    T = np.eye(4)
    T[:3, 0], T[:3, 1], T[:3, 2], T[:3, 3] = x, np.cross(z, x), z, pos
    return T
