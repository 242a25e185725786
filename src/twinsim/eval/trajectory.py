"""A timestamped pose trajectory, cleaned of bad rows with a note for everything dropped."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

from twinsim.errors import TwinsimError
from twinsim.sequence.poses import rows_to_poses


class TrajectoryError(TwinsimError):
    """A trajectory file or pair cannot be evaluated (unreadable, empty, no overlap, …)."""


@dataclass(frozen=True)
class Trajectory:
    """Poses `T_world_x` at int64 nanosecond stamps: positions (N, 3) m, quaternions (N, 4) xyzw.

    `notes` says, in words, what was dropped or changed while reading (never silently).
    """

    t_ns: np.ndarray
    xyz: np.ndarray
    quat_xyzw: np.ndarray
    name: str = "trajectory"
    notes: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.t_ns)

    @property
    def t_s(self) -> np.ndarray:
        """Stamps in float seconds (what evo and the text formats use)."""
        return self.t_ns / 1e9

    @property
    def poses(self) -> np.ndarray:
        """(N, 4, 4) float64 transforms."""
        return rows_to_poses(np.concatenate([self.xyz, self.quat_xyzw], axis=1))

    def to_evo(self):
        """An `evo.core.trajectory.PoseTrajectory3D` built exactly as evo's own readers do."""
        from evo.core.trajectory import PoseTrajectory3D

        return PoseTrajectory3D(
            positions_xyz=self.xyz.copy(),
            orientations_quat_wxyz=np.roll(self.quat_xyzw, 1, axis=1),
            timestamps=self.t_s,
            name=self.name,
        )


def from_poses(t_ns: np.ndarray, poses: np.ndarray, name: str = "trajectory") -> Trajectory:
    """A trajectory from (N, 4, 4) transforms, quaternions with qw >= 0."""
    poses = np.asarray(poses, dtype=np.float64).reshape(-1, 4, 4)
    quat = Rotation.from_matrix(poses[:, :3, :3]).as_quat(canonical=True) if len(poses) else None
    return clean(
        np.asarray(t_ns, dtype=np.int64),
        poses[:, :3, 3],
        quat if quat is not None else np.zeros((0, 4)),
        name,
    )


def clean(
    t_ns: np.ndarray,
    xyz: np.ndarray,
    quat_xyzw: np.ndarray,
    name: str,
    notes: tuple[str, ...] = (),
) -> Trajectory:
    """Drop non-finite or zero-quaternion rows, sort, drop duplicate stamps; note each change."""
    t_ns = np.asarray(t_ns, dtype=np.int64).reshape(-1)
    xyz = np.asarray(xyz, dtype=np.float64).reshape(-1, 3)
    quat = np.asarray(quat_xyzw, dtype=np.float64).reshape(-1, 4)
    if not len(t_ns) == len(xyz) == len(quat):
        raise TrajectoryError(
            f"{name}: {len(t_ns)} stamps for {len(xyz)} positions and {len(quat)} orientations"
        )
    notes = list(notes)
    norm = np.linalg.norm(quat, axis=1)
    bad = ~(np.isfinite(xyz).all(axis=1) & np.isfinite(quat).all(axis=1)) | ~(norm > 1e-9)
    if bad.any():
        rows = np.flatnonzero(bad)
        notes.append(
            f"{name}: dropped {len(rows)} pose(s) with NaN/inf values or a zero quaternion "
            f"(pose indices {_list(rows)})"
        )
        keep = ~bad
        t_ns, xyz, quat, norm = t_ns[keep], xyz[keep], quat[keep], norm[keep]
    quat = quat / norm[:, None]
    if len(t_ns) and np.any(np.diff(t_ns) < 0):
        order = np.argsort(t_ns, kind="stable")
        moved = int(np.count_nonzero(order != np.arange(len(order))))
        notes.append(f"{name}: timestamps were not sorted; sorted them ({moved} poses moved)")
        t_ns, xyz, quat = t_ns[order], xyz[order], quat[order]
    if len(t_ns) > 1:
        dup = np.concatenate([[False], np.diff(t_ns) == 0])
        if dup.any():
            notes.append(
                f"{name}: dropped {int(dup.sum())} pose(s) with a duplicate timestamp, kept the "
                f"first of each (t = {_list(t_ns[dup] / 1e9)} s)"
            )
            t_ns, xyz, quat = t_ns[~dup], xyz[~dup], quat[~dup]
    if not len(t_ns):
        raise TrajectoryError(f"{name}: no valid poses" + (f" ({notes[-1]})" if notes else ""))
    return Trajectory(t_ns=t_ns, xyz=xyz, quat_xyzw=quat, name=name, notes=tuple(notes))


def _list(values: np.ndarray, limit: int = 5) -> str:
    shown = ", ".join(f"{v:g}" for v in values[:limit])
    return shown + (f", … {len(values) - limit} more" if len(values) > limit else "")
