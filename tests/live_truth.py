"""Independent checks of live and recorded state, shared by the live-interface tests.

A live interface (Session, serve, the ROS 1 bridge, the gym Env) reports a robot's pose and
velocity at a stamp; the sequence the same episode recorded holds that robot's
`groundtruth_body` and `odometry` rows at the same stamps. `RecordedTruth` indexes those rows
so a test can compare field by field, and `odometry_vs_pose_difference` derives the body
velocity from the recorded poses alone, which the recorded odometry must agree with.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from twinsim import Session
from twinsim.closedloop.client import TwinsimClient
from twinsim.closedloop.server import Server
from twinsim.sequence import SequenceReader

#: rotation matrices from a quaternion round trip agree to a few ulps
POSE_ATOL = 1e-12

WHEELBOT = Path(__file__).parents[1] / "examples" / "robots" / "wheelbot.xml"
#: one robot of every kind the apartment takes, by robot name
KINDS = {"d": "drone", "o": "omni", "w": "diff_drive", "q": "quadruped", "a": "arm", "m": "mjcf"}
MOBILE = ("d", "o", "w", "q", "m")
#: the tiny apartment with `KINDS`, odometry and poses at the physics rate
SETS = [
    *(f"robots.{name}.kind={kind}" for name, kind in KINDS.items()),
    "robots.a.arc_span_deg=60",
    "robots.a.max_joint_speed_dps=120",
    f"robots.m.path={WHEELBOT}",
    "robots.m.base=planar",
    "robots.m.mount=cam_site",
    "robots.w.sensors.gnss0.kind=gnss",
    "robots.w.sensors.gnss0.rate_hz=240",
    "robots.w.sensors.gnss0.pos=[0.1,0.05,0.3]",
    "sensors.cam0.width=32",
    "sensors.cam0.height=24",
    "scene.min_rooms=4",
    "scene.max_rooms=4",
    # poses and odometry at the physics rate: the difference check is then exact
    "groundtruth.pose_rate_hz=240",
    "groundtruth.odometry_rate_hz=240",
]


@dataclass
class RecordedTruth:
    """One robot's recorded pose and odometry rows by stamp."""

    poses: dict[int, np.ndarray]  # t_ns → T_world_body (4, 4)
    twists: dict[int, np.ndarray]  # t_ns → (vx, vy, vz, wx, wy, wz), body frame

    @classmethod
    def of(cls, seq: SequenceReader, robot: str | None = None) -> RecordedTruth:
        own = seq.for_robot(robot) if robot is not None else seq
        t, T = own.groundtruth()
        odom = own.table("odometry")
        twist = np.stack([odom[c] for c in ("vx", "vy", "vz", "wx", "wy", "wz")], axis=1)
        return cls(
            {int(s): p for s, p in zip(t, T, strict=True)},
            {int(s): v for s, v in zip(odom["t_ns"], twist, strict=True)},
        )

    def check(self, t_ns: int, T_world_body: np.ndarray, velocity: np.ndarray, what: str) -> bool:
        """Assert a live (pose, velocity) equals the rows recorded at `t_ns`; False when that
        stamp has no recorded row (the episode's last instant, or between pose samples)."""
        if t_ns not in self.poses or t_ns not in self.twists:
            return False
        np.testing.assert_allclose(
            T_world_body, self.poses[t_ns], rtol=0, atol=POSE_ATOL, err_msg=f"{what} pose @{t_ns}"
        )
        np.testing.assert_array_equal(velocity, self.twists[t_ns], err_msg=f"{what} twist @{t_ns}")
        return True


def quat_xyzw_to_matrix(q) -> np.ndarray:
    """A rotation matrix from (x, y, z, w), the ROS message order."""
    return Rotation.from_quat(np.asarray(q, dtype=float)).as_matrix()


def odometry_vs_pose_difference(seq: SequenceReader, robot: str | None = None) -> np.ndarray:
    """Per pose sample after the first, |recorded odometry − backward difference of the
    recorded poses| as (linear m/s, angular rad/s), in the body frame of the later sample.

    MuJoCo's semi-implicit step moves the state to k with the velocity of k, so the body's
    velocity at k is exactly (p_k − p_{k−1}) / h where its frame's origin moves with the pose
    joints (and to O(h) where it is carried by a rotating link); a one-axis rotation agrees as
    exactly, a chain of hinges (the drone's yaw, pitch, roll) to the rotation's change over h.
    Needs odometry at the pose rate, both at the physics rate for the exact agreement."""
    own = seq.for_robot(robot) if robot is not None else seq
    t, T = own.groundtruth()
    odom = own.table("odometry")
    assert np.array_equal(odom["t_ns"], t), "odometry and pose need one rate for this check"
    h = (t[1:] - t[:-1]) * 1e-9
    v_world = (T[1:, :3, 3] - T[:-1, :3, 3]) / h[:, None]
    v_body = np.einsum("nji,nj->ni", T[1:, :3, :3], v_world)
    turn = Rotation.from_matrix(np.einsum("nji,njk->nik", T[:-1, :3, :3], T[1:, :3, :3]))
    w_body = turn.as_rotvec() / h[:, None]
    linear = np.stack([odom[c] for c in ("vx", "vy", "vz")], axis=1)[1:]
    angular = np.stack([odom[c] for c in ("wx", "wy", "wz")], axis=1)[1:]
    return np.stack(
        [np.linalg.norm(linear - v_body, axis=1), np.linalg.norm(angular - w_body, axis=1)], axis=1
    )


@contextmanager
def served(session: Session, **options) -> Iterator[tuple[Server, TwinsimClient]]:
    """`session` served in a thread on a free port, and a client of it; both stopped on exit.
    The session closes in the server's thread, where its renderer's GL context is current."""
    server = Server(session, "tcp://127.0.0.1:*", **options)

    def run() -> None:
        try:
            server.serve()
        finally:
            session.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    client = TwinsimClient(server.address, timeout_s=20)
    try:
        yield server, client
    finally:
        client.disconnect()
        server.stop()
        thread.join(timeout=10)
        server.close()
