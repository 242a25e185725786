"""Kinematics of a fixed-base arm on a MuJoCo model of its own: forward kinematics of a tool
frame, inverse kinematics with `mink` (differential IK, joint limits kept), and clearances
from nearby furniture and between its own links.

The model is the arm's `BodySpec` alone (its links built as `twinsim.engine.build` builds
them, so its kinematics are the simulated arm's), a site at the tool (the camera's optical
frame) on the mount link, and the furniture near it as static geoms. Planning runs at
`resolve` time, which may come before a run has chosen its OpenGL backend; MuJoCo binds one
on import, so this module imports it (and mink) only once a headless backend is exported.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from twinsim.engine.backend import configure_backend
from twinsim.geometry import make_T, primitive_half_extents, quat_wxyz_to_matrix
from twinsim.model.base import Quat, Vec3
from twinsim.model.body import BodySpec, LinkGeomSpec
from twinsim.model.scene import GeomSpec, ObjectSpec

TOOL_SITE = "tool"
_IK_DT = 1.0  # mink's step scale: with a unit task gain one step takes the whole correction
_IK_DAMPING = 1e-6
_GAIN = 0.5
_LM = 1.0
_POSTURE_COST = 1e-2
_POSTURE_OFF_ERR = 0.02  # within this (m or rad) the posture task lets go: exact convergence
_MAX_ITERS = 200
_POS_TOL_M = 1e-5
_ROT_TOL_RAD = 1e-5
#: a target counts as reached within these
REACH_POSITION_M = 1e-4
REACH_ROTATION_DEG = 0.05
_OBSTACLE_REACH_M = 1.4  # furniture farther from the base than this is left out


def _libraries() -> tuple[Any, Any]:
    """mujoco and mink, imported after a headless GL backend is exported (a no-op when the
    run chose one already)."""
    configure_backend("auto")
    return importlib.import_module("mujoco"), importlib.import_module("mink")


@dataclass(frozen=True)
class IkSolution:
    """Joint angles (M, n) reaching the first M of N targets in turn, what is left of each
    one's error, and whether all N were reached (solving stops at the first one missed)."""

    q: np.ndarray
    position_error_m: np.ndarray  # (M,)
    rotation_error_deg: np.ndarray  # (M,)
    reached: bool


class ArmKinematics:
    """A fixed-base arm's tool frame: where joint angles put it, and the joint angles that put
    it at given poses; `obstacles` (static objects) are the furniture its links must clear."""

    def __init__(
        self,
        body: BodySpec,
        tool: tuple[Vec3, Quat],
        obstacles: Sequence[ObjectSpec] = (),
    ) -> None:
        mujoco, self._mink = _libraries()
        from twinsim.engine.build import add_link  # after the backend is chosen, as mujoco

        self._mujoco = mujoco
        spec = mujoco.MjSpec()
        bodies: dict[str, Any] = {}
        for link in body.links:
            parent = spec.worldbody if link.parent is None else bodies[link.parent]
            bodies[link.name] = add_link(spec, parent, link)
        site = bodies[body.mount].add_site()
        site.name = TOOL_SITE
        site.pos, site.quat = tool
        base = np.asarray(body.links[0].pos, float)
        for obj in obstacles:
            holder = spec.worldbody.add_body()
            holder.name = f"obstacle_{obj.instance_id}"
            holder.pos, holder.quat = obj.pos, obj.quat
            R = quat_wxyz_to_matrix(obj.quat)
            for j, g in enumerate(obj.geoms):
                centre = np.asarray(obj.pos) + R @ np.asarray(g.pos)
                reach = float(np.linalg.norm(primitive_half_extents(g.type, g.size)))
                if np.linalg.norm(centre - base) - reach > _OBSTACLE_REACH_M:
                    continue
                _add_geom(mujoco, holder, f"obstacle_{obj.instance_id}_{j}", g)
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        self.joint_names = tuple(j.name for j in body.joints)
        self._site = self.model.site(TOOL_SITE).id
        self._pairs = _clearance_pairs(self.model, body)
        self._fromto = np.zeros(6)

    def tool_poses(self, q: np.ndarray) -> np.ndarray:
        """T_world_tool (N, 4, 4) at each row of joint angles q (N, n)."""
        q = np.atleast_2d(q)
        out = np.empty((len(q), 4, 4))
        for i, row in enumerate(q):
            self._pose(row)
            out[i] = make_T(
                self.data.site_xmat[self._site].reshape(3, 3), self.data.site_xpos[self._site]
            )
        return out

    def solve(self, targets: np.ndarray, q_start: np.ndarray, posture: np.ndarray) -> IkSolution:
        """Joint angles reaching each target pose T_world_tool (N, 4, 4) in turn (within
        REACH_POSITION_M and REACH_ROTATION_DEG), each solve starting from the previous one
        (the first from `q_start`), within the joint ranges, the redundancy leaning towards
        `posture`; it stops at the first target it cannot reach."""
        mink = self._mink
        config = mink.Configuration(self.model, np.asarray(q_start, float))
        frame = mink.FrameTask(
            TOOL_SITE, "site", position_cost=1.0, orientation_cost=1.0, gain=_GAIN, lm_damping=_LM
        )
        lean = mink.PostureTask(self.model, cost=_POSTURE_COST)
        lean.set_target(np.asarray(posture, float))
        limits = [mink.ConfigurationLimit(self.model)]
        qs, pos_err, rot_err = [], [], []
        for T in targets:
            frame.set_target(mink.SE3.from_matrix(np.asarray(T, float)))
            for _ in range(_MAX_ITERS):
                err = frame.compute_error(config)
                if np.linalg.norm(err[:3]) < _POS_TOL_M and np.linalg.norm(err[3:]) < _ROT_TOL_RAD:
                    break
                tasks = [frame] if np.abs(err).max() < _POSTURE_OFF_ERR else [frame, lean]
                v = mink.solve_ik(config, tasks, _IK_DT, "daqp", damping=_IK_DAMPING, limits=limits)
                config.integrate_inplace(v, _IK_DT)
            q = config.q.copy()
            reached = self.tool_poses(q)[0]
            qs.append(q)
            pos_err.append(float(np.linalg.norm(reached[:3, 3] - T[:3, 3])))
            rot_err.append(_angle_deg(reached[:3, :3], T[:3, :3]))
            if pos_err[-1] > REACH_POSITION_M or rot_err[-1] > REACH_ROTATION_DEG:
                break
        done = len(qs) == len(targets) and pos_err[-1] <= REACH_POSITION_M
        done = done and rot_err[-1] <= REACH_ROTATION_DEG
        return IkSolution(np.array(qs), np.array(pos_err), np.array(rot_err), done)

    def clearances(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The smallest gaps (m, capped at 0.5) at each row of q (N, n): between a moving
        link and the furniture, and between two links neither the same nor adjacent (the
        base included); <= 0 where they touch."""
        q = np.atleast_2d(q)
        out = np.full((2, len(q)), 0.5)
        for i, row in enumerate(q):
            self._pose(row)
            for g1, g2, own in self._pairs:
                d = self._mujoco.mj_geomDistance(
                    self.model, self.data, g1, g2, out[own, i], self._fromto
                )
                out[own, i] = min(out[own, i], d)
        return out[0], out[1]

    def _pose(self, q: np.ndarray) -> None:
        self.data.qpos[:] = q
        self._mujoco.mj_kinematics(self.model, self.data)


def _add_geom(mujoco, body, name: str, g: GeomSpec | LinkGeomSpec) -> None:
    """A massless collision shape on `body`."""
    geom = body.add_geom()
    geom.name = name
    geom.type = getattr(mujoco.mjtGeom, f"mjGEOM_{g.type.upper()}")
    geom.size = (*g.size, *(0.0,) * (3 - len(g.size)))
    geom.pos, geom.quat = g.pos, g.quat
    geom.mass = 0.0


def _clearance_pairs(model, body: BodySpec) -> list[tuple[int, int, int]]:
    """Geom pairs whose gaps matter, with 0 for furniture and 1 for the arm's own: each moving
    link's geoms against the furniture's and against the arm's geoms on links neither the same
    nor adjacent (the base included)."""
    arm_bodies = {model.body(link.name).id for link in body.links}
    root = model.body(body.links[0].name).id
    geom_body = model.geom_bodyid
    arm = [g for g in range(model.ngeom) if geom_body[g] in arm_bodies]
    furniture = [g for g in range(model.ngeom) if geom_body[g] not in arm_bodies]
    parent = model.body_parentid
    pairs = []
    for a in arm:
        ba = geom_body[a]
        if ba == root:
            continue
        pairs += [(a, f, 0) for f in furniture]
        for b in arm:
            bb = geom_body[b]
            if b < a and bb != ba and parent[ba] != bb and parent[bb] != ba:
                pairs.append((a, b, 1))
    return pairs


def _angle_deg(Ra: np.ndarray, Rb: np.ndarray) -> float:
    """The angle (degrees) of the rotation between two orientations."""
    c = 0.5 * (np.trace(Ra.T @ Rb) - 1.0)
    return math.degrees(math.acos(float(np.clip(c, -1.0, 1.0))))
