"""A running world published as it records: `LivePublisher` receives the recorder's writes
after the sequence writer (`twinsim.sim.run(..., observe=...)`, or each episode of a
`twinsim.closedloop.Session(..., observe=...)`) and publishes each pose, frame and sweep at
the stamp it is recorded with."""

from __future__ import annotations

import time

import numpy as np

from twinsim.foxglove.publish import MAP_EVERY_S, WorldPublisher
from twinsim.foxglove.server import Publisher
from twinsim.model.scene import SceneSpec
from twinsim.sequence.poses import rows_to_poses

_POSE_STREAM = "groundtruth_body"


class LivePublisher:
    """The listener of one run or episode (`observe(metadata)` returns it): `append` of each
    robot's `groundtruth_body` row → `/tf` and `/<robot>/pose`; `write_frame` → the camera's
    topics; `write_scan` → `/<lidar>/points`. Publishes the map at the first pose and every
    `MAP_EVERY_S` wall seconds after, for clients that connect later. On a publisher that
    already published (an earlier episode), it first tells clients the data starts over."""

    def __init__(self, publisher: Publisher, metadata: dict, scene: SceneSpec | None = None):
        self.publisher = publisher
        if publisher.messages:
            publisher.restart_session()
        robots = [
            str(r.get("name")) if isinstance(r, dict) else str(r)
            for r in metadata.get("robots") or [{"name": "robot"}]
        ]
        self.robot_of_pose = (
            {f"{r}.{_POSE_STREAM}": r for r in robots}
            if len(robots) > 1
            else {_POSE_STREAM: robots[0]}
        )
        dynamic = {i["instance_id"] for i in metadata.get("instances", []) if i.get("dynamic")}
        self.world = WorldPublisher(publisher, metadata.get("streams", {}), scene, dynamic)
        self.world.advertise(robots)
        self._mapped_at: float | None = None  # time.monotonic() of the last map sent

    def append(self, stream: str, t_ns: int, values) -> None:
        robot = self.robot_of_pose.get(stream)
        if robot is None:
            return
        now = time.monotonic()
        if self._mapped_at is None or now - self._mapped_at >= MAP_EVERY_S:
            self.world.world_map(int(t_ns))
            self._mapped_at = now
        T = rows_to_poses(np.asarray(values, float).reshape(1, -1))[0]
        self.world.body(robot, int(t_ns), T)

    def write_frame(self, name: str, frame) -> None:
        self.world.frame(name, frame)

    def write_scan(self, name: str, scan, scan_line: str | None = None) -> None:
        self.world.scan(name, scan)


def live_observer(publisher: Publisher):
    """The `observe` hook (`twinsim.sim.Observer`) of `twinsim.sim.run` or of a closed-loop
    `Session` that publishes the run, or each episode, through `publisher`."""

    def observe(metadata: dict, scene: SceneSpec | None = None) -> LivePublisher:
        return LivePublisher(publisher, metadata, scene)

    return observe
