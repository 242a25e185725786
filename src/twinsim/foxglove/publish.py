"""What is published for each kind of reading, shared by a recorded sequence and a live run.

Topics: `/tf` (FrameTransforms: `world` → each robot, each robot → its sensors), `/<robot>/pose`
(PoseInFrame), `/<camera>/rgb` and `/<camera>/depth` (RawImage `rgb8`, `32FC1`),
`/<camera>/calibration` (CameraCalibration), `/<camera>/boxes` (ImageAnnotations),
`/<camera>/boxes3d` (SceneUpdate of the moving things it sees), `/<lidar>/points` (PointCloud),
`/map` (SceneUpdate of the static world). A robot `b`'s stream `b.cam0` is `/b/cam0/...`.
"""

from __future__ import annotations

import numpy as np
from foxglove import messages as fm

from twinsim.foxglove import messages as msg
from twinsim.foxglove.server import Publisher
from twinsim.model.scene import SceneSpec

TF_TOPIC = "/tf"
MAP_TOPIC = "/map"
#: how often (wall seconds) the map is sent again, for clients that connect later
MAP_EVERY_S = 2.0


def camera_topics(stream: str) -> dict[str, type]:
    return {
        msg.topic(stream, "rgb"): fm.RawImage,
        msg.topic(stream, "depth"): fm.RawImage,
        msg.topic(stream, "calibration"): fm.CameraCalibration,
        msg.topic(stream, "boxes"): fm.ImageAnnotations,
        msg.topic(stream, "boxes3d"): fm.SceneUpdate,
    }


class WorldPublisher:
    """Publishes a world's readings through a `Publisher`.

    `streams`: the sequence metadata's `streams` (a camera's K, width, height; each sensor's
    `T_body_sensor` and `robot`); `dynamic`: instance ids of the things that move."""

    def __init__(
        self,
        publisher: Publisher,
        streams: dict[str, dict],
        scene: SceneSpec | None = None,
        dynamic: set[int] | frozenset[int] = frozenset(),
    ) -> None:
        self.publisher, self.streams, self.scene = publisher, streams, scene
        self.dynamic = set(dynamic)
        self.mounts: dict[str, dict[str, np.ndarray]] = {}
        for stream, info in streams.items():
            if isinstance(info, dict) and "T_body_sensor" in info:
                T = np.asarray(info["T_body_sensor"], float).reshape(4, 4)
                self.mounts.setdefault(str(info.get("robot", "robot")), {})[stream] = T
        self.cameras = [s for s, i in streams.items() if _kind(i) == "camera"]
        self.lidars = [s for s, i in streams.items() if _kind(i) == "lidar"]

    def advertise(self, robots) -> None:
        """Create every channel up front, so a client sees them all when it connects."""
        p = self.publisher
        p.advertise(TF_TOPIC, fm.FrameTransforms)
        if self.scene is not None:
            p.advertise(MAP_TOPIC, fm.SceneUpdate)
        for robot in robots:
            p.advertise(f"/{robot}/pose", fm.PoseInFrame)
        for camera in self.cameras:
            for topic, kind in camera_topics(camera).items():
                p.advertise(topic, kind)
        for lidar in self.lidars:
            p.advertise(msg.topic(lidar, "points"), fm.PointCloud)

    def world_map(self, t_ns: int) -> None:
        if self.scene is not None:
            self.publisher.log(MAP_TOPIC, msg.scene_map(self.scene, t_ns), t_ns)

    def body(self, robot: str, t_ns: int, T_world_body: np.ndarray) -> None:
        mounts = self.mounts.get(robot, {})
        tf = msg.robot_transforms(robot, t_ns, T_world_body, mounts)
        self.publisher.log(TF_TOPIC, tf, t_ns)
        self.publisher.log(f"/{robot}/pose", msg.robot_pose(t_ns, T_world_body), t_ns)

    def frame(self, camera: str, frame) -> None:
        """A camera frame (a recorded `Frame` or a live `CameraFrame`)."""
        p, t = self.publisher, int(frame.t_ns)
        info = self.streams.get(camera, {})
        p.log(msg.topic(camera, "rgb"), msg.rgb_image(camera, t, frame.rgb), t)
        p.log(msg.topic(camera, "depth"), msg.depth_image(camera, t, frame.depth), t)
        if "K" in info:
            h, w = frame.depth.shape[:2]
            p.log(msg.topic(camera, "calibration"), msg.calibration(camera, t, info["K"], w, h), t)
        boxes = list(frame.boxes)
        p.log(msg.topic(camera, "boxes"), msg.box_annotations(t, boxes), t)
        moving = [b for b in boxes if b.get("instance_id") in self.dynamic and "obb" in b]
        p.log(msg.topic(camera, "boxes3d"), msg.moving_boxes(t, moving), t)

    def scan(self, lidar: str, scan) -> None:
        self.publisher.log(msg.topic(lidar, "points"), msg.point_cloud(lidar, scan), scan.t_ns)


def _kind(info) -> str | None:
    return info.get("type") if isinstance(info, dict) else None
