"""The arm's live commands in task space: a `tool` pose (the hand's frame in the world) turned
into joint targets by the same IK that plans the scan (mink, joint ranges kept), then reached
at the joints' speed limit like a `joints` command."""

from __future__ import annotations

import numpy as np

from twinsim.geometry import make_T, ypr_to_matrices
from twinsim.robots.arm.spec import ArmSpec, arm_body
from twinsim.robots.common.commands import CommandError, CommandMode
from twinsim.robots.common.live_reference import LiveJoints

#: the hand (mount link) frame: x, y, z in the world (m); roll, pitch, yaw (rad) of its
#: orientation in the world, all three or none (none: the orientation the targets have now)
TOOL = CommandMode(
    ("x", "y", "z", "roll", "pitch", "yaw"),
    "hand frame to world x, y, z (m), roll-pitch-yaw (rad; unset = keep the orientation), by IK",
    ("x", "y", "z"),
)
_ANGLES = ("roll", "pitch", "yaw")
_HAND = ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0))  # the tool frame: the mount link's own


class ToolJoints(LiveJoints):
    """`LiveJoints` of an arm that also take `tool` commands: the IK solution from the current
    targets becomes the new targets; a pose out of reach is refused with how far it is."""

    def __init__(self, spec: ArmSpec, names: tuple[str, ...], start, max_speed) -> None:
        from twinsim.engine.kinematics import ArmKinematics  # mujoco after the GL backend

        super().__init__(names, start, max_speed)
        self.robot = spec.name
        self.kinematics = ArmKinematics(arm_body(spec), _HAND)

    def tool_pose(self) -> np.ndarray:
        """T_world_hand at the current joint targets."""
        return self.kinematics.tool_poses(self.target)[0]

    def command(self, mode: str, fields: dict[str, float]) -> None:
        if mode != "tool":
            super().command(mode, fields)
            return
        given = [a for a in _ANGLES if a in fields]
        if given and len(given) != len(_ANGLES):
            raise CommandError(f"{self.robot}.tool: roll, pitch and yaw together, or none")
        if given:
            R = ypr_to_matrices(fields["yaw"], fields["pitch"], fields["roll"])
        else:
            R = self.tool_pose()[:3, :3]
        target = make_T(R, np.array([fields["x"], fields["y"], fields["z"]]))
        solution = self.kinematics.solve(target[None], self.target, self.target)
        if not solution.reached:
            raise CommandError(
                f"{self.robot}.tool: pose out of reach (the closest is "
                f"{solution.position_error_m[-1]:.3f} m and "
                f"{solution.rotation_error_deg[-1]:.1f}° away); target nearer the base"
            )
        self.target = solution.q[-1].copy()
