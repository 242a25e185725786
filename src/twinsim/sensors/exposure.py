"""Exposure effects at render time: motion blur over the exposure and rolling-shutter readout.

A frame fires at physics step k (time t_k). Row r of H is read out at
t_r = t_k − readout · (1 − r / (H − 1)) (top row first, bottom row at t_k) and integrates the
light of [t_r − exposure, t_r]. We can pose the world at any instant, so the image is built
from sharp sub-frame renders on a uniform grid of instants across [t_k − readout − exposure,
t_k], at least `SAMPLES_PER_STEP` per physics step: the robot at its joint positions
interpolated linearly between recorded physics steps, people, flying objects and lights at the
exact instant. Each sub-frame stands for the instants nearest it, so a row averages the
sub-frames in proportion to how much of its exposure they stand for (trapezoid rule), and with
no exposure takes the sub-frame nearest its readout time.

Annotations describe the blurred image: a pixel's instance (hence semantic class, tight box and
keypoint visibility) is the label that covers it for the largest share of its exposure, ties to
the later instant. Depth stays the sharp z-depth at t_k, consistent with the frame's pose, its
3D and loose boxes. Instants before the first recorded step take that step's state.
"""

from __future__ import annotations

import dataclasses
import math
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from twinsim.model.sensors import SensorSpec

if TYPE_CHECKING:
    from twinsim.engine.render import RenderedFrame

SAMPLES_PER_STEP = 2  # sub-frame renders per physics step of the exposure and readout window
SHUTTER_NOTE = (
    "row r of H is read at t - rolling_shutter_readout_s * (1 - r / (H - 1)) and integrates "
    "the exposure_s before it; instance/semantic: the label covering the pixel for the largest "
    "share of its exposure; depth: sharp at t"
)


def has_exposure_effects(cam: SensorSpec) -> bool:
    """Whether a camera needs sub-frame renders (any exposure or rolling-shutter readout)."""
    return cam.exposure_s > 0.0 or cam.rolling_shutter_readout_s > 0.0


def window_steps(cam: SensorSpec, physics_hz: int) -> float:
    """Length, in physics steps, of the window a frame's rows integrate over."""
    return (cam.exposure_s + cam.rolling_shutter_readout_s) * physics_hz


class StateHistory:
    """The robot's joint positions at the latest recorded steps, interpolated between them."""

    def __init__(self, steps: int) -> None:
        self._q: deque[np.ndarray] = deque(maxlen=steps + 1)
        self._last = -1

    def push(self, k: int, qpos: np.ndarray) -> None:
        """Remember the joint positions at step k (a gap in k starts the history afresh)."""
        if k != self._last + 1:
            self._q.clear()
        self._q.append(np.array(qpos, dtype=float))
        self._last = k

    def state(self) -> dict[str, np.ndarray]:
        """The remembered steps (oldest first) and the last step, for a resume checkpoint."""
        n = len(self._q)
        q = np.array(self._q, float) if n else np.empty((0, 0))
        return {"q": q, "last": np.array(self._last)}

    def restore(self, state: dict[str, np.ndarray]) -> None:
        """Take back a `state`."""
        self._q.clear()
        self._q.extend(np.array(row, float) for row in state["q"])
        self._last = int(state["last"])

    @property
    def oldest(self) -> int:
        return self._last - len(self._q) + 1

    def qpos_at(self, u: float) -> np.ndarray:
        """Joint positions at fractional step u (clamped to the remembered steps)."""
        u = min(max(u, float(self.oldest)), float(self._last))
        i = math.floor(u)
        frac = u - i
        q0 = self._q[i - self.oldest]
        if frac == 0.0:
            return q0.copy()
        return (1.0 - frac) * q0 + frac * self._q[i + 1 - self.oldest]


@dataclasses.dataclass(frozen=True)
class ShutterPlan:
    """Sub-frame instants (fractional steps, latest first) and each row's weight on each."""

    steps: np.ndarray  # (n,) fractional physics steps, steps[0] = k
    weights: np.ndarray  # (H, n) rows sum to 1


def shutter_plan(cam: SensorSpec, physics_hz: int, k: int) -> ShutterPlan:
    """The sub-frames of the frame at step k and the share of each row's exposure they hold."""
    e = cam.exposure_s * physics_hz
    readout = cam.rolling_shutter_readout_s * physics_hz
    span = e + readout
    h = cam.height
    if span == 0.0:
        return ShutterPlan(np.array([float(k)]), np.ones((h, 1)))
    intervals = max(1, math.ceil(span * SAMPLES_PER_STEP - 1e-9))
    delta = span / intervals
    offsets = np.arange(intervals + 1) * delta  # before t_k, in steps
    row_end = readout * (1.0 - np.arange(h) / (h - 1))  # readout of row r, in steps before t_k
    if e > 0.0:
        # share of [row_end, row_end + e] (steps before t_k) nearest each sub-frame
        lo = np.maximum(row_end[:, None], offsets[None] - delta / 2)
        hi = np.minimum(row_end[:, None] + e, offsets[None] + delta / 2)
        weights = np.clip(hi - lo, 0.0, None) / e
    else:
        nearest = np.clip(np.floor(row_end / delta + 0.5).astype(int), 0, intervals)
        weights = np.zeros((h, intervals + 1))
        weights[np.arange(h), nearest] = 1.0
    return ShutterPlan(k - offsets, weights)


@dataclasses.dataclass(frozen=True)
class FrameShutter:
    """What a renderer that blurs by itself (Cycles' shutter) needs of a shuttered frame at
    step k: the world at each sub-frame instant of `shutter_plan`, oldest first."""

    world: object  # the recorder's world view (`RobotView`)
    cam: SensorSpec
    physics_hz: int
    k: int
    history: StateHistory

    def states(self, read: Callable) -> list:
        """`read(data, T_world_cam)` at each sub-frame instant, oldest first (the last at
        step k), with the world posed on a scratch state there."""
        out = []
        for u in shutter_plan(self.cam, self.physics_hz, self.k).steps[::-1]:
            u = max(float(u), float(self.history.oldest))
            with self.world.posed_at(self.history.qpos_at(u), u / self.physics_hz) as data:
                out.append(read(data, self.world.T_world_cam(self.cam.name, data)))
        return out

    @property
    def row_share(self) -> float | None:
        """The share of the whole window one row integrates (None without rolling shutter)."""
        cam = self.cam
        if cam.rolling_shutter_readout_s <= 0.0:
            return None
        return cam.exposure_s / (cam.exposure_s + cam.rolling_shutter_readout_s)


class ExposureRenderer:
    """Renders a camera's frames through its exposure and rolling shutter (module docstring)."""

    def __init__(self, world, cam: SensorSpec, physics_hz: int) -> None:
        self.world, self.cam, self.hz = world, cam, physics_hz
        self._geom_instance = np.append(world.maps.geom_instance, np.uint16(0))  # −1 → nothing

    def render(self, k: int, history: StateHistory) -> RenderedFrame:
        """The frame of step k; `history` must hold the robot's state up to step k."""
        cam, world = self.cam, self.world
        plan = shutter_plan(cam, self.hz, k)
        rgb = np.zeros((cam.height, cam.width, 3))
        labels, geoms, sharp = [], [], None
        for j, u in enumerate(plan.steps):
            w = plan.weights[:, j]
            if j == 0:
                frame = sharp = world.render(cam.name, cam.width, cam.height)
            elif w.any():
                u = max(u, history.oldest)
                q = history.qpos_at(u)
                frame = world.render_at(cam.name, cam.width, cam.height, q, u / self.hz)
            else:
                continue
            rgb += w[:, None, None] * frame.rgb
            labels.append((w, self._geom_instance[frame.geom_ids]))
            geoms.append(frame.geom_ids)
        winner = _majority(labels)
        geom_ids = np.take_along_axis(np.stack(geoms), winner[None], axis=0)[0]
        blurred = np.clip(np.rint(rgb), 0, 255).astype(np.uint8)
        return dataclasses.replace(sharp, rgb=blurred, geom_ids=geom_ids)


def _majority(labels: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Per pixel, the index of the earliest-listed sub-frame showing the label of largest weight.

    `labels` holds (row weights (H,), instance image (H, W)) per sub-frame, latest first; only
    pixels whose label changes during the window are voted on.
    """
    stack = np.stack([lab for _, lab in labels])
    weights = np.stack([w for w, _ in labels])  # (n, H)
    winner = np.zeros(stack.shape[1:], dtype=np.int64)
    rows, cols = np.nonzero((stack != stack[0]).any(axis=0))
    if len(rows) == 0:
        return winner
    seen = stack[:, rows, cols]  # (n, m)
    w = weights[:, rows]  # (n, m)
    votes = np.stack([((seen == own) * w).sum(axis=0) for own in seen])  # weight of own label
    votes[w == 0.0] = -1.0  # a sub-frame outside this row's exposure cannot win
    winner[rows, cols] = np.argmax(votes, axis=0)
    return winner
