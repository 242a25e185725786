"""Rigid-transform helpers shared by every stage: rotations, quaternions, poses and boxes.

Quaternions are MuJoCo's (w, x, y, z) unless a name says xyzw (scipy's and the files' order).
Several functions compute the same rotation by different float operations; each caller keeps
the one it was built on, so recorded worlds and sequences stay byte-identical.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial.transform import Rotation

if TYPE_CHECKING:
    from twinsim.model.scene import GeomSpec

# Rotation from the OpenCV optical frame (x right, y down, z forward) to MuJoCo's camera frame
# (x right, y up, looking along -z): a half turn about x.
R_OPTICAL_MJCAM = np.diag([1.0, -1.0, -1.0])

#: The eight corners of the box [-1, 1]³; corner c has the signs of its bits x y z (x slowest).
BOX_CORNERS = np.array(
    [[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float
)


def quat_wxyz_to_matrix(q) -> np.ndarray:
    """Rotation(s) (3, 3) or (N, 3, 3) of (w, x, y, z) quaternion(s) (4,) or (N, 4), normalised."""
    return Rotation.from_quat(np.asarray(q, dtype=float), scalar_first=True).as_matrix()


def unit_quat_wxyz_to_matrix(q: Sequence[float]) -> np.ndarray:
    """3×3 rotation of a unit (w, x, y, z) quaternion by the closed form, not normalised (cheap)."""
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _quat_products_map() -> np.ndarray:
    """M (16, 9) with R.ravel() = (q qᵀ).ravel() @ M / |q|² for q in (x, y, z, w) order."""
    terms = {  # R entry → ((i, j), coefficient) over products q_i q_j
        0: (((3, 3), 1), ((0, 0), 1), ((1, 1), -1), ((2, 2), -1)),
        1: (((0, 1), 2), ((2, 3), -2)),
        2: (((0, 2), 2), ((1, 3), 2)),
        3: (((0, 1), 2), ((2, 3), 2)),
        4: (((3, 3), 1), ((0, 0), -1), ((1, 1), 1), ((2, 2), -1)),
        5: (((1, 2), 2), ((0, 3), -2)),
        6: (((0, 2), 2), ((1, 3), -2)),
        7: (((1, 2), 2), ((0, 3), 2)),
        8: (((3, 3), 1), ((0, 0), -1), ((1, 1), -1), ((2, 2), 1)),
    }
    M = np.zeros((16, 9))
    for entry, products in terms.items():
        for (i, j), coef in products:
            M[4 * i + j, entry] = coef
    return M


_QUAT_PRODUCTS_TO_MATRIX = _quat_products_map()


def quats_xyzw_to_matrices(q: np.ndarray) -> np.ndarray:
    """Rotations (..., 3, 3) of non-zero, not necessarily unit quaternions (..., 4) in (x, y, z,
    w) order, in one matrix product (fast for many at once, e.g. interpolated poses)."""
    qq = (q[..., :, None] * q[..., None, :]).reshape(*q.shape[:-1], 16)
    R = qq @ _QUAT_PRODUCTS_TO_MATRIX / (q * q).sum(axis=-1)[..., None]
    return R.reshape(*q.shape[:-1], 3, 3)


#: a Gramian entry this close to the identity's passes scipy's orthogonality test (`isclose`,
#: atol 1e-12, rtol 1e-5) whatever the order it sums in: half its tolerance, to spare rounding
_ORTHO_TOL_OFF, _ORTHO_TOL_DIAG = 0.5e-12, 0.5e-5


def _orthogonal_quat_xyzw(R) -> tuple[float, float, float, float] | None:
    """scipy's `Rotation.from_matrix(R).as_quat()` for a 3×3 rotation its orthogonality test
    surely passes, by the same float operations (Markley's method, then normalised) without
    its per-call overhead; None for anything else (the caller asks scipy)."""
    R = np.asarray(R, dtype=float)
    if R.shape != (3, 3):
        return None
    m = R.tolist()
    (m00, m01, m02), (m10, m11, m12), (m20, m21, m22) = m
    d0 = m00 * m00 + m01 * m01 + m02 * m02  # R Rᵀ: its diagonal, then the rest
    d1 = m10 * m10 + m11 * m11 + m12 * m12
    d2 = m20 * m20 + m21 * m21 + m22 * m22
    o01 = m00 * m10 + m01 * m11 + m02 * m12
    o02 = m00 * m20 + m01 * m21 + m02 * m22
    o12 = m10 * m20 + m11 * m21 + m12 * m22
    diag, off = _ORTHO_TOL_DIAG, _ORTHO_TOL_OFF
    if not (
        abs(d0 - 1.0) <= diag
        and abs(d1 - 1.0) <= diag
        and abs(d2 - 1.0) <= diag
        and abs(o01) <= off
        and abs(o02) <= off
        and abs(o12) <= off
    ):
        return None  # NaN included
    if (
        m00 * (m11 * m22 - m12 * m21)
        - m01 * (m10 * m22 - m12 * m20)
        + m02 * (m10 * m21 - m11 * m20)
        <= 0.5
    ):
        return None  # left-handed (an orthogonal matrix's determinant is ±1): scipy says why
    decision = (m00, m11, m22, m00 + m11 + m22)
    choice = 0
    for i in (1, 2, 3):
        if decision[i] > decision[choice]:
            choice = i
    q = [0.0, 0.0, 0.0, 0.0]
    if choice != 3:
        i = choice
        j, k = (i + 1) % 3, (i + 2) % 3
        q[i] = 1 - decision[3] + 2 * m[i][i]
        q[j] = m[j][i] + m[i][j]
        q[k] = m[k][i] + m[i][k]
        q[3] = m[k][j] - m[j][k]
    else:
        q = [m21 - m12, m02 - m20, m10 - m01, 1 + decision[3]]
    norm = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return (q[0] / norm, q[1] / norm, q[2] / norm, q[3] / norm)


def matrix_to_quat_wxyz(R: np.ndarray) -> tuple[float, float, float, float]:
    """(w, x, y, z) quaternion of a rotation matrix, with w >= 0 (scipy's, bit for bit)."""
    quat = _orthogonal_quat_xyzw(R)
    x, y, z, w = Rotation.from_matrix(R).as_quat() if quat is None else quat
    if w < 0:
        x, y, z, w = -x, -y, -z, -w
    return (float(w), float(x), float(y), float(z))


def rpy_deg_to_matrix(rpy_deg) -> np.ndarray:
    """Rotation R = Rz(yaw) · Ry(pitch) · Rx(roll) from roll, pitch, yaw in degrees."""
    return Rotation.from_euler(
        "ZYX", np.asarray(rpy_deg, dtype=float)[::-1], degrees=True
    ).as_matrix()


def ypr_to_matrices(yaw, pitch, roll) -> np.ndarray:
    """Rotations Rz(yaw)·Ry(pitch)·Rx(roll), (..., 3, 3), of broadcast angles in radians by the
    closed form; positive pitch tips +x down."""
    yaw, pitch, roll = np.broadcast_arrays(yaw, pitch, roll)
    cy, sy, cp, sp, cr, sr = (f(a) for a in (yaw, pitch, roll) for f in (np.cos, np.sin))
    m = [
        cy * cp,
        cy * sp * sr - sy * cr,
        cy * sp * cr + sy * sr,
        sy * cp,
        sy * sp * sr + cy * cr,
        sy * sp * cr - cy * sr,
        -sp,
        cp * sr,
        cp * cr,
    ]
    return np.stack(m, axis=-1).reshape(*yaw.shape, 3, 3)


def axis_rotations(axis: int, angle: np.ndarray) -> np.ndarray:
    """Rotations (N, 3, 3) by angles (N,) in radians about coordinate axis 0, 1 or 2 (x, y, z)."""
    c, s = np.cos(angle), np.sin(angle)
    R = np.zeros((len(angle), 3, 3))
    i, j = (axis + 1) % 3, (axis + 2) % 3
    R[:, axis, axis] = 1.0
    R[:, i, i], R[:, i, j], R[:, j, i], R[:, j, j] = c, -s, s, c
    return R


def yaw_quat_wxyz(yaw: float) -> tuple[float, float, float, float]:
    """(w, x, y, z) quaternion of a rotation by `yaw` radians about z."""
    return (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))


def random_quat_wxyz(rng: np.random.Generator) -> np.ndarray:
    """A uniformly random unit quaternion (w, x, y, z) with w >= 0."""
    q = rng.standard_normal(4)
    q /= np.linalg.norm(q)
    return -q if q[0] < 0 else q


def make_T(R: np.ndarray, t) -> np.ndarray:
    """4×4 homogeneous transform from a rotation and a translation."""
    T = np.zeros((4, 4))  # cheaper than np.eye, which every physics step paid for
    T[:3, :3] = R
    T[:3, 3] = t
    T[3, 3] = 1.0
    return T


def pose_to_T(pos, quat_wxyz) -> np.ndarray:
    """4×4 transform from a position and a (w, x, y, z) quaternion."""
    return make_T(quat_wxyz_to_matrix(quat_wxyz), pos)


def T_to_pos_quat_xyzw(T: np.ndarray) -> np.ndarray:
    """Row (x, y, z, qx, qy, qz, qw) of a 4×4 transform, the TUM order used in our CSV files."""
    w, x, y, z = matrix_to_quat_wxyz(T[:3, :3])
    return np.array([*T[:3, 3].tolist(), x, y, z, w])


def primitive_half_extents(kind: str, size: Sequence[float]) -> np.ndarray:
    """Half extents (3,), in its own frame, of the box around a MuJoCo primitive of `size`."""
    if kind in ("box", "ellipsoid"):
        return np.array(size[:3], dtype=float)
    if kind == "sphere":
        return np.full(3, size[0], dtype=float)
    if kind == "cylinder":
        return np.array([size[0], size[0], size[1]], dtype=float)
    # capsule: radius, half length of the cylinder part
    return np.array([size[0], size[0], size[1] + size[0]], dtype=float)


def box_corners(half: np.ndarray, R: np.ndarray, center) -> np.ndarray:
    """(8, 3) corners, in the parent frame, of the box of `half` extents turned by R at center."""
    return (BOX_CORNERS * half) @ R.T + np.asarray(center)


def geoms_box(geoms: Iterable[GeomSpec]) -> tuple[np.ndarray, np.ndarray]:
    """Centre and half extents of the axis-aligned box, in the geoms' common frame, around the
    corners of every geom's own box."""
    pts = np.concatenate(
        [
            box_corners(primitive_half_extents(g.type, g.size), quat_wxyz_to_matrix(g.quat), g.pos)
            for g in geoms
        ]
    )
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    return (lo + hi) / 2, (hi - lo) / 2
