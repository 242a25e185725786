"""Street lamps at night: a few MuJoCo spot lights moved, before each camera's render, to the
lamps that light what it sees.

MuJoCo's renderer draws with at most eight lights, and a town has hundreds of lamps, so the
model carries a pool of `POOL` spot lights (no shadows) and each render places them at the
lamps nearest a point `AHEAD_M` in front of the camera, within `REACH_M` of it; a pool light
with no lamp to take is put far below the ground. The lamps' glass glows (material emission)
while they are on (`twinsim.scene.sky.lamps_on`). Only the lights' places in `MjData` change,
which the next physics step recomputes, so nothing else the run records depends on them.
"""

from __future__ import annotations

import mujoco
import numpy as np

from twinsim.model.scene import SceneSpec
from twinsim.scene.sky import lamps_on

POOL = 5  # with the sun, the robot's lamp and the headlight: within MuJoCo's eight
AHEAD_M = 12.0
REACH_M = 70.0
LAMP_RGB = (1.0, 0.86, 0.62)  # sodium-ish warm white
LAMP_NAME = "street_lamp_{}"
_PARKED_M = -1000.0  # a pool light with no lamp waits this far below the ground


def add_lamp_pool(spec: mujoco.MjSpec, scene: SceneSpec) -> None:
    """The pool of spot lights and the lamps' glow, in a town whose lamps are on."""
    if not lamps_on(scene):
        return
    for i in range(POOL):
        light = spec.worldbody.add_light()
        light.name = LAMP_NAME.format(i)
        light.pos = (0.0, 0.0, _PARKED_M)
        light.dir = (0.0, 0.0, -1.0)
        light.diffuse, light.specular, light.ambient = LAMP_RGB, (0.1, 0.1, 0.1), (0.0, 0.0, 0.0)
        light.castshadow = False
        light.cutoff, light.exponent = 75.0, 2.0
        light.attenuation = (1.0, 0.0, 0.004)  # a quarter of its light left at ~25 m
    glowing = set(scene.roads.lamp_materials)
    for mat in spec.materials:
        if mat.name in glowing:
            mat.emission = 1.0


class LampPool:
    """The pool's light ids and the lamps' positions, placed per camera."""

    def __init__(self, model: mujoco.MjModel, scene: SceneSpec) -> None:
        light = mujoco.mjtObj.mjOBJ_LIGHT
        names = (LAMP_NAME.format(i) for i in range(POOL))
        self.ids = np.array([mujoco.mj_name2id(model, light, name) for name in names])
        self.lamps = np.asarray(scene.roads.street_lamps, float).reshape(-1, 3)

    @classmethod
    def of(cls, model: mujoco.MjModel, scene: SceneSpec) -> LampPool | None:
        """The pool of a world whose street lamps are on, else None."""
        return cls(model, scene) if lamps_on(scene) else None

    def place(self, data: mujoco.MjData, eye: np.ndarray, forward: np.ndarray) -> None:
        """Put the pool lights at the lamps nearest a point ahead of the camera (in `data`)."""
        flat = np.array([forward[0], forward[1], 0.0])
        norm = np.linalg.norm(flat)
        target = eye + (AHEAD_M * flat / norm if norm > 1e-9 else 0.0)
        dist = np.linalg.norm(self.lamps[:, :2] - target[:2], axis=1)
        near = np.argsort(dist, kind="stable")[: len(self.ids)]
        near = near[np.linalg.norm(self.lamps[near, :2] - eye[:2], axis=1) <= REACH_M]
        data.light_xpos[self.ids] = (0.0, 0.0, _PARKED_M)
        data.light_xpos[self.ids[: len(near)]] = self.lamps[near]
        data.light_xdir[self.ids] = (0.0, 0.0, -1.0)
