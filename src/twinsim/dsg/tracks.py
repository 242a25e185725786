"""Agent tracks: time-stamped world poses of the robots (recorded), every person and walker, and
every vehicle of a town's traffic (from their motion, a pure function of time)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from twinsim.actors.flying import FlyingMotion
from twinsim.actors.motion import motion_for
from twinsim.actors.traffic.vehicles import CLASSES as VEHICLE_CLASSES
from twinsim.dsg.errors import DsgError
from twinsim.model.scene import SceneSpec
from twinsim.sequence.reader import SequenceReader


@dataclass(frozen=True)
class AgentTrack:
    """Poses T_world_body (N, 4, 4) of one agent at int64 times t_ns (N,), strictly increasing."""

    name: str
    kind: Literal["robot", "person", "vehicle"]
    t_ns: np.ndarray
    T_world_body: np.ndarray


def sequence_tracks(reader: SequenceReader, rate_hz: int) -> list[AgentTrack]:
    """Each robot's ground-truth poses and each person's pelvis pose, every 1/rate_hz seconds.

    A robot's samples are those of its `groundtruth_body` kept at `rate_hz` (which must divide
    its rate); its track is named after it (`robot` for the robot of a one-robot run). People
    and vehicles are posed at the first robot's instants by their motion.
    """
    tracks = []
    for robot in reader.robots:
        own = reader.for_robot(robot)
        info = own.stream_info("groundtruth_body")
        gt_rate = int(info["rate_hz"])
        if rate_hz <= 0 or gt_rate % rate_hz:
            divisors = [r for r in range(1, gt_rate + 1) if gt_rate % r == 0]
            raise DsgError(
                f"agent rate_hz={rate_hz} must divide the ground-truth pose rate {gt_rate} Hz; "
                f"allowed: {', '.join(map(str, divisors))}"
            )
        t_ns, T = own.groundtruth("groundtruth_body")
        stride = gt_rate // rate_hz
        tracks.append(AgentTrack(robot, "robot", t_ns[::stride], T[::stride]))
    t_ns = tracks[0].t_ns
    return [*tracks, *people_tracks(reader.scene, t_ns), *vehicle_tracks(reader.scene, t_ns)]


def people_tracks(scene: SceneSpec, t_ns: np.ndarray) -> list[AgentTrack]:
    """Pelvis poses of every person of `scene` at times t_ns (simulation time, t_s = t_ns / 1e9)."""
    t_s = np.asarray(t_ns, dtype=np.int64) / 1e9
    return [
        AgentTrack(p.name, "person", np.asarray(t_ns, np.int64), motion_for(p).root_pose(t_s))
        for p in scene.people
    ]


def vehicle_tracks(scene: SceneSpec, t_ns: np.ndarray) -> list[AgentTrack]:
    """Poses of every traffic vehicle (a keyframed object of a vehicle class) at times t_ns;
    other flying objects (balls, boxes) are objects in motion, not agents."""
    t_ns = np.asarray(t_ns, dtype=np.int64)
    tracks = []
    for obj in scene.flying_objects:
        if obj.semantic_class not in VEHICLE_CLASSES:
            continue
        motion = FlyingMotion(obj)
        T = np.tile(np.eye(4), (len(t_ns), 1, 1))
        for i, t in enumerate(t_ns):
            pos, rot, _ = motion.pose(float(t) / 1e9)
            T[i, :3, :3], T[i, :3, 3] = rot, pos
        tracks.append(AgentTrack(obj.name, "vehicle", t_ns, T))
    return tracks
