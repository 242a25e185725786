"""Playback of a person's motion: a tabulated pose source, ping-pong in time, and the poses
of parts, joints and keypoints it gives at any simulation time."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.spatial.transform import Rotation

from twinsim.actors.human import HumanModel
from twinsim.geometry import quats_xyzw_to_matrices
from twinsim.model.people import HumanMotionSpec

# A motion's core: clip times τ (N,) → part world orientations (N, P, 3, 3), pelvis (N, 3).
PoseSource = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]

TABLE_HZ = 120.0  # rate at which procedural motions are tabulated
_CHUNK = 4096  # samples evaluated at once while tabulating


class PoseTable:
    """A motion tabulated at a fixed step: part quaternions and pelvis positions.

    Playback interpolates linearly between samples (normalised quaternions), which costs a few
    numpy calls however complex the motion, so a pose per physics step stays cheap; times past
    the last sample hold it.
    """

    def __init__(self, R: np.ndarray, root: np.ndarray, step_s: float) -> None:
        q = Rotation.from_matrix(R.reshape(-1, 3, 3)).as_quat().reshape(*R.shape[:2], 4)
        flips = np.sign(np.einsum("fpi,fpi->fp", q[1:], q[:-1]))
        flips[flips == 0] = 1.0
        q[1:] *= np.cumprod(flips, axis=0)[..., None]
        self._q = q.astype(np.float32)
        self._root = np.asarray(root, dtype=float)
        self.step_s = float(step_s)
        self._last = len(q) - 1

    @classmethod
    def sample(cls, source: PoseSource, duration_s: float, rate_hz: float = TABLE_HZ) -> PoseTable:
        """Tabulate `source` on [0, duration_s], both ends included."""
        n = max(int(np.ceil(duration_s * rate_hz)), 1)
        tau = np.linspace(0.0, duration_s, n + 1)
        parts = [source(tau[i : i + _CHUNK]) for i in range(0, len(tau), _CHUNK)]
        R = np.concatenate([r for r, _ in parts])
        return cls(R, np.concatenate([p for _, p in parts]), duration_s / n)

    def __call__(self, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Part quaternions (N, P, 4; x y z w, unnormalised) and pelvis (N, 3) at clip times τ."""
        x = np.minimum(np.maximum(tau / self.step_s, 0.0), self._last)
        i0 = np.minimum(x.astype(int), max(self._last - 1, 0))
        i1 = np.minimum(i0 + 1, self._last)
        w = (x - i0)[:, None]
        q0, r0 = self._q[i0], self._root[i0]
        return q0 + w[:, :, None] * (self._q[i1] - q0), r0 + w * (self._root[i1] - r0)

    def at(self, tau: float) -> tuple[np.ndarray, np.ndarray]:
        """`self(np.array([tau]))` for one time, with scalar index arithmetic (the hot path)."""
        x = min(max(tau / self.step_s, 0.0), float(self._last))
        i0 = min(int(x), max(self._last - 1, 0))
        i1 = min(i0 + 1, self._last)
        w = np.float64(x - i0)
        q0, r0 = self._q[i0], self._root[i0]
        return (q0 + w * (self._q[i1] - q0))[None], (r0 + w * (self._root[i1] - r0))[None]


def own_time(t_s: float | np.ndarray, pauses: Sequence[tuple[float, float]]) -> float | np.ndarray:
    """A person's own time at simulation times `t_s` (a float or an array): the simulation's
    less the waits `(start_s, duration_s)` begun before, so it stands still during each wait.

    Without waits it is `t_s` itself; the scalar and array forms do the same arithmetic.
    """
    if not pauses:
        return t_s
    if isinstance(t_s, float):
        held = 0.0
        for start, duration in pauses:
            held += min(max(t_s - start, 0.0), duration)
        return t_s - held
    t = np.asarray(t_s, dtype=float)
    held = np.zeros_like(t)
    for start, duration in pauses:
        held += np.minimum(np.maximum(t - start, 0.0), duration)
    return t - held


class HumanMotion:
    """A person's animation; every method is a pure function of simulation time `t_s`.

    Scalar `t_s` gives one result; a 1-D array of times gives a leading time axis. Playback is
    ping-pong (GRADE): the motion runs forward for `cycle_s`, then backward, period 2·cycle_s,
    shifted by `phase_s`, so it never jumps and never stops; it runs on the person's own time
    (`own_time`), which stands still during the spec's `pauses`, so a waiting person holds the
    pose it stopped in, wherever it was in the cycle.
    """

    def __init__(self, model: HumanModel, spec: HumanMotionSpec, table: PoseTable) -> None:
        self.model = model
        self.spec = spec
        self.cycle_s = float(spec.cycle_s)
        self.period_s = 2.0 * self.cycle_s
        self._table = table

    def playback_time(self, t_s) -> np.ndarray:
        """Clip time τ(t): a triangle wave 0 → cycle_s → 0 of period 2·cycle_s in own time."""
        own = own_time(np.asarray(t_s, dtype=float), self.spec.pauses)
        u = np.mod(own + self.spec.phase_s, self.period_s)
        return np.where(u <= self.cycle_s, u, self.period_s - u)

    def root_xy(self, t_s: np.ndarray) -> np.ndarray:
        """World x, y of the pelvis at times `t_s` (N, 2), without posing the parts (cheap
        enough to sample a whole run densely, as planning does)."""
        _, root = self._table(self.playback_time(t_s))
        return root[:, :2]

    def _state(self, t_s) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """Quaternions (N, P, 4), orientations (N, P, 3, 3), part origins (N, P, 3), scalar?"""
        t = np.asarray(t_s, dtype=float)
        if t.ndim == 0:
            u = (own_time(float(t), self.spec.pauses) + self.spec.phase_s) % self.period_s
            q, root = self._table.at(u if u <= self.cycle_s else self.period_s - u)
        elif t.ndim == 1:
            q, root = self._table(self.playback_time(t))
        else:
            raise ValueError(f"t_s must be a scalar or a 1-D array, got shape {t.shape}")
        R = quats_xyzw_to_matrices(q)
        return q, R, self.model.forward_kinematics(R, root), t.ndim == 0

    def part_poses(self, t_s) -> np.ndarray:
        """World pose T_world_part of every part, (P, 4, 4) in `PART_NAMES` order."""
        _, R, p, scalar = self._state(t_s)
        T = np.zeros((*R.shape[:2], 4, 4))
        T[..., :3, :3] = R
        T[..., :3, 3] = p
        T[..., 3, 3] = 1.0
        return T[0] if scalar else T

    def part_pos_quat(self, t_s) -> tuple[np.ndarray, np.ndarray]:
        """Part positions (P, 3) and unit quaternions (P, 4) in MuJoCo's (w, x, y, z) order."""
        q, _, p, scalar = self._state(t_s)
        q = q[..., [3, 0, 1, 2]] / np.linalg.norm(q, axis=-1, keepdims=True)
        return (p[0], q[0]) if scalar else (p, q)

    def joints_world(self, t_s) -> np.ndarray:
        """World joint positions, (J, 3) in `JOINT_NAMES` order."""
        _, R, p, scalar = self._state(t_s)
        out = self.model.points_world(R, p, self.model.joint_part, self.model.joint_local)
        return out[0] if scalar else out

    def keypoints_world(self, t_s) -> np.ndarray:
        """World positions of the 17 COCO keypoints, (17, 3) in `COCO_KEYPOINTS` order."""
        _, R, p, scalar = self._state(t_s)
        out = self.model.points_world(R, p, self.model.keypoint_part, self.model.keypoint_local)
        return out[0] if scalar else out

    def root_pose(self, t_s) -> np.ndarray:
        """World pose of the pelvis frame, (4, 4)."""
        _, R, p, scalar = self._state(t_s)
        T = np.zeros((len(R), 4, 4))
        T[:, :3, :3] = R[:, 0]
        T[:, :3, 3] = p[:, 0]
        T[:, 3, 3] = 1.0
        return T[0] if scalar else T
