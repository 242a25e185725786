"""A twin's colour images from another renderer than MuJoCo (`--renderer cycles`).

The twin repeats the source's poses bit for bit and keeps its geometry, so every camera takes
depth, masks, boxes and poses from the source as they are (`twinsim.replay.reuse`) and only
its colour comes from Cycles (`twinsim.render.cycles`); IMU, LiDAR and every other stream are
recorded as in any twin, byte-identical to the source's.
"""

from __future__ import annotations

import shutil
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from twinsim.errors import ConfigError
from twinsim.model.scene import SceneSpec
from twinsim.render import check_renderer
from twinsim.render.cycles.settings import CyclesSettings
from twinsim.replay.frame_source import FrameSource, RecolouredSource, RerenderedSource

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


def copied_from_source(settings: CyclesSettings | None, source: FrameSource) -> str:
    """What a twin's camera takes from the source camera `source` (the metadata says it)."""
    if settings is None:
        return "all" if source.colour else "depth, masks, boxes"
    if settings.ground_truth == "cycles":
        return "poses (colour, depth, masks and boxes from Cycles)"
    return "depth, masks, boxes"


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
    world,
    scene: SceneSpec,
    reused: dict[str, FrameSource],
    settings: CyclesSettings,
    out: Path,
    backend: str,
) -> Iterator[dict[str, FrameSource]]:
    """The twin's camera sources with their colour (and, with `ground_truth="cycles"`, their
    depth, masks and boxes) rendered by Cycles; the work folder inside `out` is removed when
    the block ends."""
    from twinsim.render.cycles.twin import CyclesColour

    workdir = Path(out) / WORK_FOLDER
    cycles = None
    try:
        cycles = CyclesColour(world, settings, workdir, backend)
        sources: dict[str, FrameSource] = {}
        for cam in scene.sensors:
            name = scene.stream_prefix(cam.robot) + cam.name
            if name not in reused:
                continue
            base = reused[name]
            fields = (base.folder, base.t_ns, base.frame_lines, base.boxes_lines)
            if settings.ground_truth == "cycles":
                render = cycles.frames(cam, world.robot(cam.robot))
                sources[name] = RerenderedSource(*fields, True, render)
            else:
                sources[name] = RecolouredSource(*fields, True, cycles.camera(cam))
        yield sources
    finally:
        if cycles is not None:
            cycles.close()
        shutil.rmtree(workdir, ignore_errors=True)


class PendingFrameWriter:
    """A writer that takes frames whose colour image is still being rendered (`result()`, a
    pool's `PendingImage`) and writes every frame in the order it came, once its image is
    there, keeping at most `in_flight` frames waiting."""

    def __init__(self, writer, in_flight: int) -> None:
        self._writer, self._in_flight = writer, in_flight
        self._pending: deque[tuple[str, str, object]] = deque()

    def __getattr__(self, name: str):
        return getattr(self._writer, name)

    def write_frame(self, name: str, frame) -> None:
        self._queue("write_frame", name, frame)

    def write_copied_frame(self, name: str, frame) -> None:
        self._queue("write_copied_frame", name, frame)

    def _queue(self, method: str, name: str, frame) -> None:
        self._pending.append((method, name, frame))
        while len(self._pending) > self._in_flight:
            self._write_oldest()

    def _write_oldest(self) -> None:
        method, name, frame = self._pending.popleft()
        if hasattr(frame.rgb, "result"):
            frame.rgb = frame.rgb.result()
        getattr(self._writer, method)(name, frame)

    def flush(self) -> None:
        """Write every waiting frame, then whatever the writer below still holds."""
        while self._pending:
            self._write_oldest()
        if hasattr(self._writer, "flush"):
            self._writer.flush()


def pending_frames(writer, settings: CyclesSettings | None):
    """`writer`, or a `PendingFrameWriter` over it when a pool renders the frames."""
    if settings is None or settings.workers == 1:
        return writer
    return PendingFrameWriter(writer, 2 * settings.workers)
