"""Frames a new stream takes from a recorded camera stream of the same camera, as they are.

A twin that provably sees what its source saw (`twinsim.replay.reuse`) and `twinsim noise`,
which changes only some images, copy masks, poses and boxes file for file instead of rendering
them again; `SequenceWriter.write_copied_frame` writes the `CopiedFrame`s made here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from twinsim.sensors.exposure import FrameShutter
from twinsim.sequence.frames import CameraFrame, CopiedFrame
from twinsim.sequence.reader import CameraStream


@dataclass(frozen=True)
class FrameSource:
    """A recorded camera stream whose frames a new stream of the same camera takes as they are.

    `colour`: whether the colour images are taken too (else the caller renders them anew).
    """

    folder: Path
    t_ns: np.ndarray  # (N,) int64
    frame_lines: tuple[str, ...]
    boxes_lines: tuple[str, ...]
    colour: bool

    def frame(
        self,
        index: int,
        t_ns: int,
        T_world_cam: np.ndarray,
        rgb: np.ndarray | None = None,
        depth: np.ndarray | None = None,
        shutter: FrameShutter | None = None,
    ) -> CopiedFrame:
        """Frame `index` of the source as frame `index` of the new stream, at the same time
        (`shutter`: the frame's exposure, for a source whose renderer blurs by itself)."""
        if index >= len(self.t_ns) or int(self.t_ns[index]) != t_ns:
            raise ValueError(
                f"{self.folder.name}: the source has no frame {index} at t_ns {t_ns} to copy"
            )
        lines = self.frame_lines[index], self.boxes_lines[index]
        return CopiedFrame(index, t_ns, self.folder, *lines, T_world_cam, rgb, depth)

    def dynamic_fraction(self, index: int) -> float:
        """The recorded share of pixels on dynamic instances in frame `index`."""
        return float(json.loads(self.boxes_lines[index]).get("dynamic_fraction", 0.0))


@dataclass(frozen=True)
class RecolouredSource(FrameSource):
    """A source stream whose frames a twin copies but whose colour another renderer gives:
    `recolour(index, t_ns, T_world_cam, shutter)` is frame `index`'s new image, or None to
    keep the source's."""

    recolour: Callable[[int, int, np.ndarray, FrameShutter | None], np.ndarray | None]

    def frame(
        self,
        index: int,
        t_ns: int,
        T_world_cam: np.ndarray,
        rgb: np.ndarray | None = None,
        depth: np.ndarray | None = None,
        shutter: FrameShutter | None = None,
    ) -> CopiedFrame:
        """Frame `index` of the source with the other renderer's colour image."""
        if rgb is None:
            rgb = self.recolour(index, t_ns, T_world_cam, shutter)
        return super().frame(index, t_ns, T_world_cam, rgb, depth)


@dataclass(frozen=True)
class RerenderedSource(FrameSource):
    """A source stream whose frames another renderer makes whole, ground truth included:
    `render(index, t_ns, shutter)` is frame `index` as a `CameraFrame` (the source still
    checks that the frame exists at that time)."""

    render: Callable[[int, int, FrameShutter | None], CameraFrame]

    def frame(
        self,
        index: int,
        t_ns: int,
        T_world_cam: np.ndarray,
        rgb: np.ndarray | None = None,
        depth: np.ndarray | None = None,
        shutter: FrameShutter | None = None,
    ) -> CameraFrame:
        """Frame `index` rendered anew by the other renderer."""
        super().frame(index, t_ns, T_world_cam)
        return self.render(index, t_ns, shutter)


def frame_source(stream: CameraStream, colour: bool) -> FrameSource:
    """`stream` as frames another stream of the same camera copies (with its colour images if
    `colour`)."""
    return FrameSource(stream.folder, stream.t_ns, stream.frame_lines, stream.boxes_lines, colour)
