"""A timestamped pose trajectory: non-finite poses refused, every change made in cleaning noted."""

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


#: A quaternion whose norm differs from 1 by more than this is noted when normalised (printed
#: values rounded to 4+ decimals stay within it).
UNIT_TOLERANCE = 1e-3
#: A quaternion shorter than this has no direction to normalise to.
MIN_QUAT_NORM = 1e-6


def from_poses(t_ns: np.ndarray, poses: np.ndarray, name: str = "trajectory") -> Trajectory:
    """A trajectory from (N, 4, 4) transforms, quaternions with qw >= 0."""
    poses = np.asarray(poses, dtype=np.float64).reshape(-1, 4, 4)
    bad = np.flatnonzero(~np.isfinite(poses).all(axis=(1, 2)))
    if len(bad):
        raise TrajectoryError(f"{name}: pose {bad[0]} has a NaN/inf value; poses must be finite")
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
    lines: list[int] | None = None,
) -> Trajectory:
    """Refuse non-finite values, positions too large to score and null quaternions; normalise,
    sort and drop duplicate stamps, noting each change.

    A refusal names the pose by its file line (`lines`, one per pose) or its index in read order.
    """
    t_ns = np.asarray(t_ns, dtype=np.int64).reshape(-1)
    xyz = np.asarray(xyz, dtype=np.float64).reshape(-1, 3)
    quat = np.asarray(quat_xyzw, dtype=np.float64).reshape(-1, 4)
    if not len(t_ns) == len(xyz) == len(quat):
        raise TrajectoryError(
            f"{name}: {len(t_ns)} stamps for {len(xyz)} positions and {len(quat)} orientations"
        )
    if not len(t_ns):
        raise TrajectoryError(f"{name}: no poses")
    notes = list(notes)

    def where(i: int) -> str:
        return f"{name}:{lines[i]}" if lines is not None else f"{name}: pose {i}"

    bad = np.flatnonzero(~(np.isfinite(xyz).all(axis=1) & np.isfinite(quat).all(axis=1)))
    if len(bad):
        raise TrajectoryError(f"{where(bad[0])}: a NaN/inf value; poses must be finite")
    with np.errstate(over="ignore"):
        # differences of positions are squared and summed by the metrics: (a − b)² ≤ 2a² + 2b²
        scorable = np.isfinite(4.0 * np.square(xyz).sum())
    if not scorable:
        i = int(np.argmax(np.abs(xyz).max(axis=1)))
        raise TrajectoryError(
            f"{where(i)}: position {np.abs(xyz[i]).max():.3g} m is too large to score (its "
            "squared errors overflow float64)"
        )
    with np.errstate(over="ignore"):
        norm = np.linalg.norm(quat, axis=1)
    unusable = np.flatnonzero(~((norm >= MIN_QUAT_NORM) & np.isfinite(norm)))
    if len(unusable):
        raise TrajectoryError(
            f"{where(unusable[0])}: quaternion of norm {norm[unusable[0]]:.3g} cannot be "
            f"normalised (norms must be finite and at least {MIN_QUAT_NORM:g})"
        )
    off = np.flatnonzero(np.abs(norm - 1.0) > UNIT_TOLERANCE)
    if len(off):
        at = f"lines {_list(np.asarray(lines)[off])}" if lines else f"pose indices {_list(off)}"
        notes.append(
            f"{name}: {len(off)} quaternion(s) were not of unit length (norms "
            f"{norm[off].min():.6g}–{norm[off].max():.6g}, {at}); normalised"
        )
    quat = quat / norm[:, None]
    if np.any(np.diff(t_ns) < 0):
        order = np.argsort(t_ns, kind="stable")
        moved = int(np.count_nonzero(order != np.arange(len(order))))
        notes.append(f"{name}: timestamps were not sorted; sorted them ({moved} poses moved)")
        t_ns, xyz, quat = t_ns[order], xyz[order], quat[order]
    dup = np.concatenate([[False], np.diff(t_ns) == 0])
    if dup.any():
        notes.append(
            f"{name}: dropped {int(dup.sum())} pose(s) with a duplicate timestamp, kept the "
            f"first of each (t = {_list(t_ns[dup] / 1e9)} s)"
        )
        t_ns, xyz, quat = t_ns[~dup], xyz[~dup], quat[~dup]
    return Trajectory(t_ns=t_ns, xyz=xyz, quat_xyzw=quat, name=name, notes=tuple(notes))


def _list(values: np.ndarray, limit: int = 5) -> str:
    shown = ", ".join(f"{v:g}" for v in values[:limit])
    return shown + (f", … {len(values) - limit} more" if len(values) > limit else "")
