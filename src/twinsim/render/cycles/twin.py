"""The frames of a twin rendered by Cycles: one `CyclesScene` of the twin's world, asked for
every `every`-th frame of each camera (the others keep the source's colour), motion-blurred
by Cycles' shutter where the camera has an exposure, through the lens effects and
auto-exposure asked for, and, with `ground_truth="cycles"`, the frame's depth and instance
masks (hence semantics, boxes, keypoints) from Cycles' own passes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from twinsim.engine.render import RenderedFrame
from twinsim.model.sensors import SensorSpec
from twinsim.render.cycles.blender import blender_version
from twinsim.render.cycles.lens import AutoExposure, chromatic_aberration, vignette
from twinsim.render.cycles.passes import CyclesPasses, srgb8
from twinsim.render.cycles.scene import CyclesScene, WorldPoser
from twinsim.render.cycles.settings import CyclesSettings
from twinsim.sensors.annotate import annotate_frame
from twinsim.sensors.camera import intrinsics
from twinsim.sensors.exposure import FrameShutter
from twinsim.sequence.frames import CameraFrame


class PendingImage:
    """A colour image a pool worker is rendering: `result()` waits for it and develops it
    (exposure, lens); the twin's writer calls it in frame order."""

    def __init__(self, future, develop: Callable[[CyclesPasses], CyclesPasses]) -> None:
        self._future, self._develop = future, develop

    def result(self) -> np.ndarray:
        return self._develop(self._future.result()).rgb


class CyclesColour:
    """Cycles images of the cameras of a running twin `world` at its current state, rendered
    here or, with `settings.workers` > 1, by a pool of worker processes (`pool`); `backend`
    is the OpenGL backend the workers' MuJoCo uses."""

    def __init__(
        self, world, settings: CyclesSettings, workdir: Path, backend: str = "egl"
    ) -> None:
        self.settings = settings
        self._exposures: dict[tuple[str, str], AutoExposure | None] = {}
        self._scene, self._pool = None, None
        if settings.workers > 1:
            from twinsim.render.cycles.pool import CyclesPool, recipe_of

            self._poser = WorldPoser(world)
            self._pool = CyclesPool(recipe_of(world, backend), settings, workdir, settings.workers)
        else:
            self._scene = CyclesScene(world, settings, workdir)
            self._poser = self._scene.poser

    def close(self) -> None:
        """Stop the worker processes, if any."""
        if self._pool is not None:
            self._pool.close()

    def _motion(self, T_world_cam: np.ndarray, shutter: FrameShutter | None):
        """The instants a frame integrates over (None: sharp) and its rolling-shutter share."""
        if shutter is None or not self.settings.motion_blur:
            return None, None
        instants = shutter.states(lambda data, T: self._poser.instant(data, T_world_cam=T))
        return instants, shutter.row_share

    def passes(
        self, cam: SensorSpec, T_world_cam: np.ndarray, shutter: FrameShutter | None, t_s: float
    ) -> CyclesPasses:
        """Camera `cam`'s frame now, rendered here: motion-blurred over `shutter` if it has one,
        its colour through the camera's auto-exposure and lens (`linear` stays Cycles' light)."""
        K = intrinsics(cam.width, cam.height, cam.hfov_deg)
        size, clip = (cam.width, cam.height), (cam.near_m, cam.far_m)
        motion, rolling = self._motion(T_world_cam, shutter)
        passes = self._scene.render(T_world_cam, cam.robot, K, size, clip, motion, rolling)
        return _developed(passes, self._lens(cam), K, t_s)

    def _lens(self, cam: SensorSpec) -> tuple[CyclesSettings, AutoExposure | None]:
        """The lens settings and camera `cam`'s own exposure controller (None: fixed)."""
        key = (cam.robot, cam.name)
        if key not in self._exposures:
            self._exposures[key] = AutoExposure() if self.settings.exposure == "auto" else None
        return self.settings, self._exposures[key]

    def camera(self, cam: SensorSpec) -> Callable:
        """The colour function of camera `cam`: (frame index, t_ns, T_world_cam, shutter) →
        image (a `PendingImage` from a pool), or None on the frames `every` skips (they keep
        the source's)."""
        K = intrinsics(cam.width, cam.height, cam.hfov_deg)
        size, clip = (cam.width, cam.height), (cam.near_m, cam.far_m)

        def colour(index: int, t_ns: int, T_world_cam: np.ndarray, shutter):
            if index % self.settings.every:
                return None
            if self._pool is None:
                return self.passes(cam, T_world_cam, shutter, t_ns / 1e9).rgb
            motion, rolling = self._motion(T_world_cam, shutter)
            motion = motion or [self._poser.instant(T_world_cam=T_world_cam)]
            future = self._pool.submit(T_world_cam, cam.robot, K, size, clip, motion, rolling)
            lens = self._lens(cam)
            return PendingImage(future, lambda p: _developed(p, lens, K, t_ns / 1e9))

        return colour

    def frames(self, cam: SensorSpec, world_view) -> Callable:
        """The frame function of camera `cam` whose ground truth is Cycles' (every frame,
        rendered here): (index, t_ns, shutter) → `CameraFrame`, annotated from Cycles' depth
        and masks, sharp at the frame's instant as MuJoCo's are."""

        def frame(index: int, t_ns: int, shutter: FrameShutter | None) -> CameraFrame:
            T_world_cam = world_view.T_world_cam(cam.name)
            t_s = t_ns / 1e9
            colour = self.passes(cam, T_world_cam, shutter, t_s)
            sharp = colour if shutter is None else self.passes(cam, T_world_cam, None, t_s)
            rendered = RenderedFrame(colour.rgb, sharp.depth, None, sharp.instance)
            return annotate_frame(world_view, cam, index, t_ns, t_s, rendered)

        return frame


def _developed(
    passes: CyclesPasses, lens: tuple[CyclesSettings, AutoExposure | None], K, t_s: float
) -> CyclesPasses:
    """`passes` with the colour through auto-exposure, vignetting and chromatic aberration."""
    settings, exposure = lens
    if exposure is None and settings.vignetting == 0.0 and settings.chromatic_aberration == 0.0:
        return passes
    light = passes.linear
    if exposure is not None:
        light = light * np.float32(exposure.gain(light, t_s))
    light = vignette(light, K, settings.vignetting)
    light = chromatic_aberration(light, K, settings.chromatic_aberration)
    return CyclesPasses(srgb8(light), passes.depth, passes.instance, light, passes.normal)


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
        "ground_truth": s.ground_truth,
        "exposure": s.exposure,
        "vignetting": s.vignetting,
        "chromatic_aberration": s.chromatic_aberration,
        "motion_blur": "Cycles shutter over the recorded motion" if s.motion_blur else None,
        "bump": s.bump,
    }
