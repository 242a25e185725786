"""The colour images of a twin rendered by Cycles: one `CyclesScene` of the twin's world,
asked for every `every`-th frame of each camera (the others keep the source's colour)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from twinsim.render.cycles.blender import blender_version
from twinsim.render.cycles.scene import CyclesScene
from twinsim.render.cycles.settings import CyclesSettings
from twinsim.scene.spec import SensorSpec
from twinsim.sensors.camera import intrinsics


class CyclesColour:
    """Cycles colour images of the cameras of a running twin `world` at its current state."""

    def __init__(self, world, settings: CyclesSettings, workdir: Path) -> None:
        self.settings = settings
        self._scene = CyclesScene(world, settings, workdir)

    def camera(self, cam: SensorSpec) -> Callable[[int, np.ndarray], np.ndarray | None]:
        """The colour function of camera `cam`: frame index → image (None: keep the source's)."""
        K = intrinsics(cam.width, cam.height, cam.hfov_deg)

        def colour(index: int, T_world_cam: np.ndarray) -> np.ndarray | None:
            if index % self.settings.every:
                return None
            size, clip = (cam.width, cam.height), (cam.near_m, cam.far_m)
            return self._scene.render(T_world_cam, cam.robot, K, size, clip).rgb

        return colour


def cycles_metadata(s: CyclesSettings) -> dict:
    """What a twin's metadata records of its Cycles renderer."""
    return {
        "name": "cycles",
        "blender_version": blender_version(),
        "device": "CPU",
        "samples": s.samples,
        "denoise": "OpenImageDenoise" if s.denoise else None,
        "seed": s.seed,
        "every": s.every,
    }
