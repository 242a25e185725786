"""`CameraWriter`: one camera stream's frames.csv and boxes.jsonl, its images on the I/O queue.

A frame's four images (RGB, depth, instance, semantic), and its normals where the stream
records them, are one batch of the writer's `WriteQueue`, encoded and written while the
simulation goes on; its pose row and boxes line are written at once, in frame order. A frame's
forward flow needs the next frame, so it is written just before that frame (`write_flow`);
the last frame has none.
"""

from __future__ import annotations

import json
import operator
from pathlib import Path

import cv2
import numpy as np

from twinsim.model.layout import (
    BOXES_FILE,
    FRAME_COLUMNS,
    FRAMES_FILE,
    IMAGE_KINDS,
    SURFACE_KINDS,
    frame_path,
)
from twinsim.sequence.frames import CameraFrame, CopiedFrame
from twinsim.sequence.images import copy_image, write_npy, write_png
from twinsim.sequence.poses import pose_to_row
from twinsim.sequence.stream_writers import (
    StreamWriter,
    file_size,
    json_default,
    later_time,
    open_lines,
    remove_files_from,
    reopen_lines,
)
from twinsim.sequence.tables import format_row
from twinsim.sequence.write_queue import Task, WriteQueue


class CameraWriter(StreamWriter):
    """A camera's image folders, frames.csv (a pose row a frame) and boxes.jsonl (a line)."""

    label, opener = "camera", "add_camera"

    def __init__(
        self,
        name: str,
        folder: Path,
        queue: WriteQueue,
        rgb_png_level: int,
        resume: dict | None = None,
        kinds: tuple[str, ...] = (),
    ) -> None:
        """`resume`: a `checkpoint` of this stream in an interrupted run, continued from there;
        `kinds`: the optional per-frame files (`SURFACE_KINDS`) the stream holds."""
        super().__init__(name)
        self.folder, self._queue, self._rgb_png_level = folder, queue, rgb_png_level
        unknown = set(kinds) - set(SURFACE_KINDS)
        if unknown:
            raise ValueError(f"{name}: unknown per-frame kinds {sorted(unknown)}")
        self.kinds = tuple(kinds)
        if resume is None:
            folder.mkdir()
            for kind in (*IMAGE_KINDS, *self.kinds):
                (folder / kind).mkdir()
            self.frames = open_lines(folder / FRAMES_FILE)
            self.frames.write(",".join(FRAME_COLUMNS) + "\n")
            self.boxes = open_lines(folder / BOXES_FILE)
            self.count, self.last_t_ns = 0, None
            self.shape: tuple[int, int] | None = None
        else:
            self.frames = reopen_lines(folder / FRAMES_FILE, resume["frames_size"])
            self.boxes = reopen_lines(folder / BOXES_FILE, resume["boxes_size"])
            self.count, self.last_t_ns = resume["count"], resume["last_t_ns"]
            self.shape = None if resume["shape"] is None else tuple(resume["shape"])
            for kind in (*IMAGE_KINDS, *self.kinds):
                # a frame's flow is written with the next frame: the last one's comes again
                flow = kind in ("flow", "flow_valid")
                remove_files_from(folder / kind, max(self.count - 1, 0) if flow else self.count)

    def write(self, frame: CameraFrame) -> None:
        """Queue the next frame's images and record its pose and boxes."""
        t_ns = self._next_time(frame.index, frame.t_ns)
        images = self._frame_images(frame)
        pose = pose_to_row(frame.T_world_cam)
        boxes = json.dumps(
            {
                "frame": self.count,
                "t_ns": t_ns,
                "boxes": frame.boxes,
                "people": frame.people,
                "dynamic_fraction": frame.dynamic_fraction,
            },
            default=json_default,
            allow_nan=False,
            separators=(",", ":"),
        )
        if "normals" in self.kinds:
            images["normals"] = self._checked(frame.index, "normals", frame.normals, (3,))
        self._queue.submit([self._image_task(kind, image) for kind, image in images.items()])
        self.frames.write(format_row((self.count, t_ns), pose))
        self.boxes.write(boxes + "\n")
        self.count += 1
        self.last_t_ns = t_ns

    def write_flow(self, index: int, flow: np.ndarray, valid: np.ndarray) -> None:
        """Queue the forward flow (H, W, 2) float32 and its validity (H, W) uint8 of the last
        frame written, `index`, now that the next frame is known (before that frame)."""
        if "flow" not in self.kinds:
            raise ValueError(f"{self.name}: the stream records no flow")
        if operator.index(index) != self.count - 1:
            raise ValueError(f"{self.name}: flow of frame {index}, expected {self.count - 1}")
        tasks = [
            self._image_task("flow", self._checked(index, "flow", flow, (2,)), index),
            self._image_task("flow_valid", self._checked(index, "flow_valid", valid), index),
        ]
        self._queue.submit(tasks)

    def write_copied(self, frame: CopiedFrame) -> None:
        """Record a frame of another sequence: its image files copied (new colour and depth
        images written where the frame gives them), its two lines kept verbatim; its normals
        and the previous frame's flow, where the stream holds them, copied too."""
        t_ns = self._next_time(frame.index, frame.t_ns)
        # both lines begin with the frame index and time, as `write` writes them
        if not (
            frame.frame_line.startswith(f"{self.count},{t_ns},")
            and frame.boxes_line.startswith(f'{{"frame":{self.count},"t_ns":{t_ns},')
        ):
            raise ValueError(
                f"{self.name}: copied lines are not frame {self.count} at t_ns {t_ns}: "
                f"{frame.frame_line[:40]!r}, {frame.boxes_line[:40]!r}"
            )
        new = self._new_images(frame)
        tasks: list[Task] = []
        for kind in IMAGE_KINDS:
            if kind in new:
                tasks.append(self._image_task(kind, new[kind]))
            else:
                source = frame_path(frame.source, kind, frame.index)
                tasks.append((copy_image, source, frame_path(self.folder, kind, self.count)))
        for kind in self.kinds:
            i = self.count if kind == "normals" else self.count - 1  # flow: the frame before
            if i >= 0:
                source = frame_path(frame.source, kind, i)
                tasks.append((copy_image, source, frame_path(self.folder, kind, i)))
        self._queue.submit(tasks)
        self.frames.write(frame.frame_line.rstrip("\n") + "\n")
        self.boxes.write(frame.boxes_line.rstrip("\n") + "\n")
        self.count += 1
        self.last_t_ns = t_ns

    def checkpoint(self) -> dict:
        return {
            "count": self.count,
            "last_t_ns": self.last_t_ns,
            "shape": None if self.shape is None else list(self.shape),
            "frames_size": file_size(self.frames),
            "boxes_size": file_size(self.boxes),
        }

    def appended_files(self) -> dict[Path, int]:
        return {Path(self.frames.name): 0, Path(self.boxes.name): 0}

    def close(self) -> None:
        self.frames.close()
        self.boxes.close()

    def _next_time(self, index: int, t_ns: int) -> int:
        """The frame's time, checking that frame `index` is the next one and comes later."""
        if operator.index(index) != self.count:
            raise ValueError(f"{self.name}: frame index {index}, expected {self.count}")
        return later_time(self.name, t_ns, self.last_t_ns)

    def _image_task(self, kind: str, image: np.ndarray, index: int | None = None) -> Task:
        """The write of frame `index`'s (default: the next frame's) image of `kind`: depth,
        normals and flow as .npy, the others as PNG."""
        path = frame_path(self.folder, kind, self.count if index is None else index)
        if path.suffix == ".npy":
            return (write_npy, path, image)
        if kind == "rgb":
            return (write_png, path, image, self._rgb_png_level)
        return (write_png, path, image)

    def _checked(
        self, index: int, kind: str, array: np.ndarray | None, channels: tuple[int, ...] = ()
    ) -> np.ndarray:
        """A copy of frame `index`'s `kind` array, checked to be (H, W, *channels) of the
        kind's dtype (float32; flow_valid uint8)."""
        dtype = np.uint8 if kind == "flow_valid" else np.float32
        want = None if self.shape is None else (*self.shape, *channels)
        if array is None or array.dtype != dtype or array.shape != want:
            got = "nothing" if array is None else f"{array.dtype}{array.shape}"
            raise ValueError(
                f"{self.name}: frame {index} {kind} is {got}, expected {np.dtype(dtype)}{want}"
            )
        return array.copy()

    def _frame_images(self, frame: CameraFrame) -> dict[str, np.ndarray]:
        """Check shapes and dtypes; copy the arrays (BGR for OpenCV) so callers may reuse them."""
        name = self.name
        rgb, depth = np.asarray(frame.rgb), np.asarray(frame.depth)
        instance, semantic = np.asarray(frame.instance), np.asarray(frame.semantic)
        shape = depth.shape
        if len(shape) != 2:
            raise ValueError(f"{name}: frame {frame.index} depth must be (H, W), got shape {shape}")
        if self.shape is not None and shape != self.shape:
            raise ValueError(f"{name}: frame {frame.index} is {shape}, earlier frames {self.shape}")
        expected = {
            "rgb": (rgb, (*shape, 3), (np.uint8,)),
            "depth": (depth, shape, (np.float32,)),
            "instance": (instance, shape, (np.uint16,)),
            "semantic": (semantic, shape, (np.uint16, np.uint8)),
        }
        for kind, (array, want_shape, dtypes) in expected.items():
            if array.shape != want_shape or array.dtype not in dtypes:
                allowed = " or ".join(np.dtype(d).name for d in dtypes)
                raise ValueError(
                    f"{name}: frame {frame.index} {kind} is {array.dtype}{array.shape}, "
                    f"expected {allowed}{want_shape} (H, W from depth)"
                )
        self.shape = shape
        return {
            "rgb": cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR),
            "depth": depth.copy(),
            "instance": instance.copy(),
            "semantic": semantic.copy(),
        }

    def _new_images(self, frame: CopiedFrame) -> dict[str, np.ndarray]:
        """The colour (BGR for OpenCV) and depth images a copied frame replaces, checked."""
        new = {}
        if frame.rgb is not None:
            rgb = np.asarray(frame.rgb)
            if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
                raise ValueError(f"{self.name}: frame {frame.index} rgb is {rgb.dtype}{rgb.shape}")
            new["rgb"] = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
        if frame.depth is not None:
            depth = np.asarray(frame.depth)
            if depth.dtype != np.float32 or depth.ndim != 2:
                raise ValueError(
                    f"{self.name}: frame {frame.index} depth is {depth.dtype}{depth.shape}"
                )
            new["depth"] = depth.copy()
        return new
