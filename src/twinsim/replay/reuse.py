"""Which camera streams a twin takes from its source instead of rendering them again.

A teleport twin repeats every pose bit for bit. A camera whose spec, render settings and world
geometry (rooms, furniture, people, flying objects) are those of the source therefore sees the
same depth, masks, boxes and keypoints, and a twin copies them file by file; if the world's look
(lights, materials, textures, fog, weather) is the source's too, so are its colour images. A
camera whose look changed renders only its colour pass. Rendering is deterministic, so this is
what rendering again would give: `rerender=True` renders everything, and the tests compare both.
Sources made by another twinsim version or changed by `twinsim noise` are always rendered
again (the twin of a noisy sequence is clean), as are cameras with render-time exposure effects
whose look changed (their masks come from sub-frame renders).
"""

from __future__ import annotations

from twinsim._version import __version__
from twinsim.config import TwinsimConfig
from twinsim.model.scene import SceneSpec
from twinsim.replay.frame_source import FrameSource, frame_source
from twinsim.replay.source import ReplaySource
from twinsim.replay.variations import ReplayMode
from twinsim.sensors.exposure import has_exposure_effects
from twinsim.sequence import open_sequence


def _geometry(scene: SceneSpec) -> SceneSpec:
    """The scene without what only changes colours (and without its sensors)."""
    return scene.model_copy(update={"textures": (), "materials": (), "lights": (), "sensors": ()})


def _look(scene: SceneSpec) -> tuple:
    """What colours the images besides geometry; a robot's lamp is aimed along its first
    camera."""
    firsts = tuple(
        next((s for s in scene.robot_sensors(r.name) if s.type == "camera"), None)
        for r in scene.robots
    )
    return scene.textures, scene.materials, scene.lights, firsts


def reusable_cameras(
    source: ReplaySource,
    config: TwinsimConfig,
    scene: SceneSpec,
    same_look: bool,
    mode: ReplayMode,
    rerender: bool = False,
) -> dict[str, FrameSource]:
    """The twin's cameras (by stream name) whose frames the source already holds (see the
    module docstring).

    `same_look`: the twin's look and weather are the source's (no visual variation).
    """
    if rerender or mode is not ReplayMode.teleport:
        return {}
    if source.metadata.get("twinsim_version") != __version__ or "noise" in source.metadata:
        return {}  # another renderer, or images a noise profile changed: render them
    if config.render != source.config.render or _geometry(scene) != _geometry(source.scene):
        return {}
    colour = (
        same_look
        and _look(scene) == _look(source.scene)
        and config.output == source.config.output  # the RGB PNG level
    )
    if not colour and config.render.reflections:  # mirrors would show the new look in masks
        return {}
    recorded = {(s.robot, s.name): s for s in source.scene.sensors if s.type == "camera"}
    sequence = open_sequence(source.path)
    reused = {}
    for cam in scene.sensors:
        if cam.type != "camera" or recorded.get((cam.robot, cam.name)) != cam:
            continue
        if not colour and has_exposure_effects(cam):
            continue
        stream = scene.stream_prefix(cam.robot) + cam.name
        reused[stream] = frame_source(sequence.camera(stream), colour)
    return reused
