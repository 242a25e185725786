"""Lighting and atmosphere of a run or a twin: scene lights as data, the engine's `Look` for
the rest.

Presets (multipliers on the recorded lights, then on the camera headlight):
day = as recorded; dusk = 45 % warm light; night = 6 % cold light, headlight dimmed, and a lamp
carried by the robot. Fog density d in (0, 1] is MuJoCo's linear fog reaching full strength at
`FOG_VISIBILITY_M / d` metres (d = 0.3: everything beyond 10 m is fog).
"""

from __future__ import annotations

import numpy as np

from twinsim.engine.look import Look
from twinsim.model.scene import LightSpec, SceneSpec
from twinsim.model.sections import LightConfig, LightPreset

FOG_VISIBILITY_M = 3.0
LAMP_RGB = (0.9, 0.88, 0.8)

# preset → (intensity, colour, headlight scale, robot lamp)
PRESETS: dict[LightPreset, tuple[float, tuple[float, float, float], float, bool]] = {
    LightPreset.day: (1.0, (1.0, 1.0, 1.0), 1.0, False),
    LightPreset.dusk: (0.45, (1.0, 0.78, 0.58), 0.5, False),
    LightPreset.night: (0.06, (0.75, 0.82, 1.0), 0.12, True),
}
_TINTS = ((1.0, 0.9, 0.75), (1.0, 1.0, 1.0), (0.85, 0.93, 1.0))


def _scaled(rgb, gain) -> tuple[float, float, float]:
    return tuple(float(min(1.0, c * g)) for c, g in zip(rgb, gain, strict=True))


def relight(scene: SceneSpec, light: LightConfig) -> SceneSpec:
    """The scene's lights after a preset, a new random tint and level per light, colour, gain."""
    if light == LightConfig():
        return scene
    intensity, color, _, _ = PRESETS[light.preset or LightPreset.day]
    gain = np.asarray(color) * intensity * light.intensity * np.asarray(light.color)
    rng = None if light.seed is None else np.random.default_rng(light.seed)
    lights = []
    for spec in scene.lights:
        diffuse, update = spec.diffuse, {}
        if rng is not None:  # the apartment's own ranges: a tint and a level per light
            tint = np.asarray(_TINTS[int(rng.integers(len(_TINTS)))])
            diffuse = tuple(float(v) for v in np.clip(rng.uniform(0.4, 0.8) * tint, 0.3, 0.8))
            update["cutoff_deg"] = float(rng.uniform(60.0, 90.0))
        update |= {
            "diffuse": _scaled(diffuse, gain),
            "specular": _scaled(spec.specular, gain),
            "ambient": _scaled(spec.ambient, gain),
        }
        lights.append(LightSpec.model_validate({**spec.model_dump(), **update}))
    return scene.model_copy(update={"lights": tuple(lights)})


def look_for(light: LightConfig, fog: float | None, seed: int) -> Look:
    """The engine look of a twin: headlight and lamp of the preset, flicker, fog."""
    _, _, headlight, lamp = PRESETS[light.preset or LightPreset.day]
    fog_end = None if not fog else FOG_VISIBILITY_M / fog
    return Look(
        fog_start_m=None if fog_end is None else 0.0,
        fog_end_m=fog_end if fog_end is not None else Look().fog_end_m,
        headlight=headlight * light.intensity,
        lamp_rgb=LAMP_RGB if lamp else None,
        flicker=light.flicker,
        flicker_hz=light.flicker_hz,
        flicker_seed=seed,
    )
