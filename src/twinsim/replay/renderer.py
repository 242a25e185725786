"""A twin's colour images from another renderer than MuJoCo (`--renderer cycles`).

The twin repeats the source's poses bit for bit and keeps its geometry, so every camera takes
depth, masks, boxes and poses from the source as they are (`twinsim.replay.reuse`) and only
its colour comes from Cycles (`twinsim.render.cycles`); IMU, LiDAR and every other stream are
recorded as in any twin, byte-identical to the source's.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from twinsim.errors import ConfigError
from twinsim.render import check_renderer
from twinsim.render.cycles.settings import CyclesSettings
from twinsim.replay.frame_source import FrameSource, RecolouredSource
from twinsim.scene.spec import SceneSpec

WORK_FOLDER = ".cycles-work"  # inside the twin's folder while it is written, removed after


def renderer_settings(renderer: str, cycles: CyclesSettings | None) -> CyclesSettings | None:
    """The Cycles settings of a twin (None for MuJoCo); one-line errors for a renderer twinsim
    does not have or a missing Blender, before anything is written."""
    if check_renderer(renderer) == "mujoco":
        return None
    from twinsim.render.cycles.blender import import_bpy

    import_bpy()
    return cycles or CyclesSettings()


def renderer_metadata(settings: CyclesSettings) -> dict:
    """The twin metadata's `renderer` entry."""
    from twinsim.render.cycles.twin import cycles_metadata

    return cycles_metadata(settings)


def check_recolourable(scene: SceneSpec, reused: dict[str, FrameSource]) -> None:
    """Every camera of the twin must take its geometry passes from the source."""
    cameras = [scene.stream_prefix(s.robot) + s.name for s in scene.sensors if s.type == "camera"]
    missing = [c for c in cameras if c not in reused]
    if missing:
        raise ConfigError(
            f"--renderer cycles: cameras {', '.join(missing)} do not see the source's world "
            "(it re-renders the colour of a teleport twin with the source's geometry, cameras "
            "and render settings; drop --rerender, --mode control and geometry variations)"
        )


@contextmanager
def cycles_sources(
    world, scene: SceneSpec, reused: dict[str, FrameSource], settings: CyclesSettings, out: Path
) -> Iterator[dict[str, FrameSource]]:
    """The twin's camera sources with their colour rendered by Cycles; the work folder inside
    `out` is removed when the block ends."""
    from twinsim.render.cycles.twin import CyclesColour

    workdir = Path(out) / WORK_FOLDER
    try:
        colour = CyclesColour(world, settings, workdir)
        sources = {}
        for cam in scene.sensors:
            name = scene.stream_prefix(cam.robot) + cam.name
            if name in reused:
                base = reused[name]
                sources[name] = RecolouredSource(
                    base.folder,
                    base.t_ns,
                    base.frame_lines,
                    base.boxes_lines,
                    True,
                    colour.camera(cam),
                )
        yield sources
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
