"""A body's pose as six one-degree-of-freedom joints: slides x, y, z along the world axes, then
hinges yaw (z), pitch (y), roll (x), so the rotation is Rz(yaw)·Ry(pitch)·Rx(roll) and qpos
reads as a pose. The drone drives them; a wheeled chassis leaves them to gravity and contacts.
"""

from __future__ import annotations

from twinsim.model.body import JointSpec

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


def free_pose_joints() -> tuple[JointSpec, ...]:
    """The six pose joints, unlimited and unactuated: a body only gravity and contacts move
    (a wheeled chassis, a legged trunk)."""
    return tuple(
        JointSpec(name=name, type="slide" if slide else "hinge", axis=axis)
        for name, axis, slide in zip(POSE_JOINTS, POSE_AXES, POSE_IS_SLIDE, strict=True)
    )
