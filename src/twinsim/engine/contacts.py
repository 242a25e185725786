"""A robot's active contacts at the current physics step, as `contacts` stream records.

Read after `World.step_end`: MuJoCo's collision pass of step k found the contacts (`mj_step1`)
and its constraint solver gave their forces (`mj_step2`), so each record describes instant k.
A contact counts when one of its geoms belongs to the robot; its `part` is that geom's link,
its instance and class the other geom's (another robot's parts carry that robot's instance
where a world has several robots). The force is the one the robot's part feels.
"""

from __future__ import annotations

import mujoco
import numpy as np

from twinsim.sequence.contacts import CONTACT_DTYPE, NO_PART


class RobotContacts:
    """Finds one robot's contacts in the world's data and turns them into records."""

    def __init__(
        self, model: mujoco.MjModel, maps, robot_geoms: np.ndarray, part_bodies: list[int]
    ) -> None:
        """`robot_geoms`: the robot's geom ids; `part_bodies`: the MuJoCo body of each part
        (the robot's links in `parts` order)."""
        self.model, self.maps = model, maps
        part_of_body = {body: i for i, body in enumerate(part_bodies)}
        self.geom_part = np.full(model.ngeom, -1, dtype=np.int64)
        for g in robot_geoms:
            body = int(model.geom_bodyid[g])
            while body not in part_of_body and body > 0:  # a body of a part's own (user files)
                body = int(model.body_parentid[body])
            self.geom_part[g] = part_of_body.get(body, 0)
        self._force = np.zeros(6)

    def records(self, data: mujoco.MjData, t_ns: int) -> np.ndarray:
        """The robot's active contacts now, one record each (possibly none)."""
        n = data.ncon
        contact = data.contact
        g1, g2 = contact.geom1[:n], contact.geom2[:n]
        p1, p2 = self.geom_part[g1], self.geom_part[g2]
        active = np.flatnonzero(((p1 >= 0) | (p2 >= 0)) & (contact.efc_address[:n] >= 0))
        out = np.zeros(len(active), dtype=CONTACT_DTYPE)
        if not len(active):
            return out
        out["t_ns"] = t_ns
        maps = self.maps
        for row, i in enumerate(active):
            mujoco.mj_contactForce(self.model, data, int(i), self._force)
            # the frame's normal points from geom1 to geom2: it pushes geom2 along +normal
            robot_is_first = p1[i] >= 0
            mine, other = (g1[i], g2[i]) if robot_is_first else (g2[i], g1[i])
            normal = contact.frame[i, :3] * (-1.0 if robot_is_first else 1.0)
            instance = int(maps.geom_instance[other])
            other_part = self.geom_part[other]
            out[row]["part"] = self.geom_part[mine]
            out[row]["other_part"] = other_part if other_part >= 0 else NO_PART
            out[row]["instance"] = instance
            out[row]["semantic"] = int(maps.instance_class[instance]) if instance else 0
            out[row]["normal_force_n"] = max(float(self._force[0]), 0.0)
            out[row]["x"], out[row]["y"], out[row]["z"] = contact.pos[i]
            out[row]["nx"], out[row]["ny"], out[row]["nz"] = normal
        return out
