"""A body's pose as six one-degree-of-freedom joints: slides x, y, z along the world axes, then
hinges yaw (z), pitch (y), roll (x), so the rotation is Rz(yaw)·Ry(pitch)·Rx(roll) and qpos
reads as a pose. The drone drives them; a wheeled chassis leaves them to gravity and contacts.
"""

from __future__ import annotations

POSE_JOINTS: tuple[str, ...] = ("x", "y", "z", "yaw", "pitch", "roll")
POSE_AXES: tuple[tuple[float, float, float], ...] = (
    (1, 0, 0),
    (0, 1, 0),
    (0, 0, 1),
    (0, 0, 1),
    (0, 1, 0),
    (1, 0, 0),
)
POSE_IS_SLIDE: tuple[bool, ...] = (True, True, True, False, False, False)
