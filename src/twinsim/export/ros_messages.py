"""The ROS message stream of a sequence, shared by the `rosbag1` and `rosbag2` exports.

`message_stream(seq, store)` says which topics a bag of `seq` has (type and message count) and
yields every message in time order, each built only when it is reached, with the message types
of `store` (a `rosbags` typestore: ROS 2 Humble or ROS 1 Noetic). The two ROS versions differ
only where their definitions do: a ROS 1 header has a `seq` (here the message's index on its
topic) and ROS 1 names CameraInfo's matrices `D, K, R, P` where ROS 2 writes `d, k, r, p`.

Topics (frame ids in brackets): `/tf_static` (base_link → every sensor), `/tf` (world →
base_link), `/groundtruth/pose` and `/groundtruth/<camera>/pose` (PoseStamped [world]),
`/odom` (Odometry [world → base_link], twist in base_link), `/joint_states` (JointState of the
robot's joints), `/<imu>/data` (Imu), per camera `/<camera>/image_raw` (rgb8), `/<camera>/depth`
(32FC1 metres, 0 = no reading), `/<camera>/instance` and `/<camera>/semantic` (16UC1 ids),
`/<camera>/camera_info`, per LiDAR `/<lidar>/points` (PointCloud2), per radar
`/<radar>/detections` (PointCloud2 of `RADAR_FIELDS`, one per scan) and per GNSS `/<gnss>/fix`
(NavSatFix: status −1 in outages, ENU covariance from the noise σ when noise added it, else
unknown). Every stamp is the
sequence clock's exact nanoseconds; each topic keeps its stream's recorded rate (`/tf` that of
`groundtruth_body`, `/joint_states` that of `joint_states`).
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Callable, Iterator
from typing import NamedTuple

import numpy as np

from twinsim.export.common import T_body_sensor, streams_of_type
from twinsim.noise.gnss import position_sigma
from twinsim.noise.profiles import GnssNoise
from twinsim.sequence.poses import pose_to_row, rows_to_poses
from twinsim.sequence.reader import SequenceReader

WORLD, BASE = "world", "base_link"
CAMERA_TOPICS = ("image_raw", "depth", "instance", "semantic", "camera_info")

#: PointCloud2 layout of a LiDAR scan: name -> (numpy type, ROS PointField datatype).
CLOUD_FIELDS = {
    "x": ("<f4", 7),
    "y": ("<f4", 7),
    "z": ("<f4", 7),
    "intensity": ("<f4", 7),
    "t": ("<u4", 6),  # capture time minus the header stamp, ns (Ouster's convention)
    "ring": ("<u2", 4),
    "semantic": ("<u2", 4),
    "instance": ("<u4", 6),
    "dynamic": ("u1", 2),
}


def packed_dtype(fields: dict[str, tuple[str, int]], itemsize: int) -> np.dtype:
    """The record type of PointCloud2 `fields` laid one after the other, padded to `itemsize`."""
    packed = np.dtype([(name, kind) for name, (kind, _) in fields.items()])
    return np.dtype(
        {
            "names": list(fields),
            "formats": [kind for kind, _ in fields.values()],
            "offsets": [packed.fields[name][1] for name in fields],
            "itemsize": itemsize,
        }
    )


CLOUD_DTYPE = packed_dtype(CLOUD_FIELDS, 32)

#: PointCloud2 layout of a radar scan: the detection in Cartesian and polar form (m, rad), its
#: radial velocity (m/s, negative approaching) and the labels of what it hit.
RADAR_FIELDS = {
    "x": ("<f4", 7),
    "y": ("<f4", 7),
    "z": ("<f4", 7),
    "range": ("<f4", 7),
    "azimuth": ("<f4", 7),
    "elevation": ("<f4", 7),
    "velocity": ("<f4", 7),
    "instance": ("<u4", 6),
    "semantic": ("<u2", 4),
    "dynamic": ("u1", 2),
}
RADAR_DTYPE = packed_dtype(RADAR_FIELDS, 36)


class Topic(NamedTuple):
    """A topic of the bag: its message type (`rosbags` name) and how many messages it gets."""

    msgtype: str
    count: int


# (t_ns, rank, topic, make message) — rank keeps equal stamps in a fixed order
_Item = tuple[int, int, str, Callable[[], object]]


def message_stream(
    seq: SequenceReader, store
) -> tuple[dict[str, Topic], Iterator[tuple[int, str, object]]]:
    """The topics of a bag of `seq`, and its `(t_ns, topic, message)` in time order (one pass)."""
    sources = _Messages(seq, store).sources()
    topics = {topic: Topic(msgtype, n) for topic, (n, msgtype, _) in sources.items()}
    merged = heapq.merge(*(items for _, _, items in sources.values()))
    return topics, ((t_ns, topic, make()) for t_ns, _, topic, make in merged)


class _Messages:
    """Builds each topic's messages lazily, in time order, from the sequence's streams."""

    def __init__(self, seq: SequenceReader, store) -> None:
        self.seq, self.types = seq, store.types
        self._streams: dict[str, _LastFrame] = {}
        self._has_seq = "seq" in _field_names(self.types["std_msgs/msg/Header"])
        info_fields = _field_names(self.types["sensor_msgs/msg/CameraInfo"])
        self._info_names = {name.lower(): name for name in info_fields}

    def sources(self) -> dict[str, tuple[int, str, Iterator[_Item]]]:
        """topic -> (message count, message type, time-ordered items)."""
        seq, out = self.seq, {}
        t_ns, T = seq.groundtruth("groundtruth_body")
        static = iter([(int(t_ns[0]), 0, "/tf_static", lambda: self._static(int(t_ns[0])))])
        out["/tf_static"] = (1, "tf2_msgs/msg/TFMessage", static)
        out["/tf"] = (len(t_ns), "tf2_msgs/msg/TFMessage", self._tf(t_ns, T))
        out["/groundtruth/pose"] = (
            len(t_ns), "geometry_msgs/msg/PoseStamped", self._poses("/groundtruth/pose", t_ns, T)
        )  # fmt: skip
        for camera in streams_of_type(seq, "camera"):
            name = f"groundtruth_{camera}"
            if name in seq.streams:
                topic = f"/groundtruth/{camera}/pose"
                t_c, T_c = seq.groundtruth(name)
                out[topic] = (
                    len(t_c),
                    "geometry_msgs/msg/PoseStamped",
                    self._poses(topic, t_c, T_c),
                )
        if "odometry" in seq.streams:
            odom = seq.table("odometry")
            out["/odom"] = (len(odom["t_ns"]), "nav_msgs/msg/Odometry", self._odometry(odom))
        if "joint_states" in seq.streams:
            joints = seq.table("joint_states")
            out["/joint_states"] = (
                len(joints["t_ns"]), "sensor_msgs/msg/JointState", self._joints(joints)
            )  # fmt: skip
        for imu in streams_of_type(seq, "imu"):
            data = seq.imu(imu)
            out[f"/{imu}/data"] = (len(data.t_ns), "sensor_msgs/msg/Imu", self._imu(imu, data))
        for camera in streams_of_type(seq, "camera"):
            n = seq.stream_info(camera)["count"]
            for kind in CAMERA_TOPICS:
                msgtype = "sensor_msgs/msg/" + ("CameraInfo" if kind == "camera_info" else "Image")
                out[f"/{camera}/{kind}"] = (n, msgtype, self._camera(camera, kind))
        for lidar in streams_of_type(seq, "lidar"):
            n = seq.stream_info(lidar)["count"]
            out[f"/{lidar}/points"] = (n, "sensor_msgs/msg/PointCloud2", self._lidar(lidar))
        for radar in streams_of_type(seq, "radar"):
            n = seq.stream_info(radar)["count"]
            topic = f"/{radar}/detections"
            out[topic] = (n, "sensor_msgs/msg/PointCloud2", self._radar(radar))
        for gnss in streams_of_type(seq, "gnss"):
            table = seq.table(gnss)
            out[f"/{gnss}/fix"] = (
                len(table["t_ns"]), "sensor_msgs/msg/NavSatFix", self._fix(gnss, table)
            )  # fmt: skip
        return out

    # message parts -----------------------------------------------------------------------------

    def _header(self, t_ns: int, frame_id: str, index: int):
        """A header stamped `t_ns`; in ROS 1 with `seq` = the message's index on its topic."""
        Time, Header = self.types["builtin_interfaces/msg/Time"], self.types["std_msgs/msg/Header"]
        stamp = Time(sec=int(t_ns) // 10**9, nanosec=int(t_ns) % 10**9)
        counter = {"seq": int(index)} if self._has_seq else {}
        return Header(stamp=stamp, frame_id=frame_id, **counter)

    def _pose(self, T: np.ndarray):
        """A (4, 4) pose as a geometry_msgs Pose."""
        t = self.types
        x, y, z, qx, qy, qz, qw = (float(v) for v in pose_to_row(T))
        return t["geometry_msgs/msg/Pose"](
            position=t["geometry_msgs/msg/Point"](x=x, y=y, z=z),
            orientation=t["geometry_msgs/msg/Quaternion"](x=qx, y=qy, z=qz, w=qw),
        )

    def _vector(self, v) -> object:
        """Three numbers as a geometry_msgs Vector3."""
        x, y, z = (float(c) for c in v)
        return self.types["geometry_msgs/msg/Vector3"](x=x, y=y, z=z)

    def _transform(self, t_ns: int, parent: str, child: str, T: np.ndarray, index: int):
        """The pose of `child` in `parent` as a TransformStamped."""
        t = self.types
        pose = self._pose(T)
        return t["geometry_msgs/msg/TransformStamped"](
            header=self._header(t_ns, parent, index),
            child_frame_id=child,
            transform=t["geometry_msgs/msg/Transform"](
                translation=self._vector((pose.position.x, pose.position.y, pose.position.z)),
                rotation=pose.orientation,
            ),
        )

    def _image(self, t_ns: int, frame_id: str, array: np.ndarray, encoding: str, index: int):
        """An (H, W[, C]) array as a little-endian sensor_msgs Image."""
        array = np.ascontiguousarray(array)
        height, width = array.shape[:2]
        return self.types["sensor_msgs/msg/Image"](
            header=self._header(t_ns, frame_id, index),
            height=height,
            width=width,
            encoding=encoding,
            is_bigendian=0,
            step=array.strides[0],
            data=array.view(np.uint8).reshape(-1),
        )

    # topics ------------------------------------------------------------------------------------

    def _static(self, t0: int):
        """The one /tf_static message: base_link → every sensor's frame."""
        seq = self.seq
        sensors = [n for n, info in seq.metadata["streams"].items() if "T_body_sensor" in info]
        transforms = [
            self._transform(t0, BASE, _frame_id(seq, n), T_body_sensor(seq, n), 0) for n in sensors
        ]
        return self.types["tf2_msgs/msg/TFMessage"](transforms=transforms)

    def _tf(self, t_ns: np.ndarray, T: np.ndarray) -> Iterator[_Item]:
        """/tf: world → base_link at every ground-truth body pose."""
        TF = self.types["tf2_msgs/msg/TFMessage"]
        for i, (t, pose) in enumerate(zip(t_ns, T, strict=True)):
            yield (
                int(t),
                1,
                "/tf",
                lambda t=t, p=pose, i=i: TF(transforms=[self._transform(t, WORLD, BASE, p, i)]),
            )

    def _poses(self, topic: str, t_ns: np.ndarray, T: np.ndarray) -> Iterator[_Item]:
        """A ground-truth pose stream as PoseStamped in the world frame."""
        PoseStamped = self.types["geometry_msgs/msg/PoseStamped"]
        for i, (t, pose) in enumerate(zip(t_ns, T, strict=True)):
            yield (
                int(t),
                2,
                topic,
                lambda t=t, p=pose, i=i: PoseStamped(
                    header=self._header(t, WORLD, i), pose=self._pose(p)
                ),
            )

    def _odometry(self, odom: dict[str, np.ndarray]) -> Iterator[_Item]:
        """/odom: pose in world, twist in base_link, zero covariances."""
        t = self.types
        rows = np.stack([odom[c] for c in ("x", "y", "z", "qx", "qy", "qz", "qw")], axis=1)
        twist = np.stack([odom[c] for c in ("vx", "vy", "vz", "wx", "wy", "wz")], axis=1)
        poses = rows_to_poses(rows)

        def make(i: int):
            return t["nav_msgs/msg/Odometry"](
                header=self._header(odom["t_ns"][i], WORLD, i),
                child_frame_id=BASE,
                pose=t["geometry_msgs/msg/PoseWithCovariance"](
                    pose=self._pose(poses[i]), covariance=np.zeros(36)
                ),
                twist=t["geometry_msgs/msg/TwistWithCovariance"](
                    twist=t["geometry_msgs/msg/Twist"](
                        linear=self._vector(twist[i, :3]), angular=self._vector(twist[i, 3:])
                    ),
                    covariance=np.zeros(36),
                ),
            )

        for i, stamp in enumerate(odom["t_ns"]):
            yield int(stamp), 3, "/odom", lambda i=i: make(i)

    def _joints(self, table: dict[str, np.ndarray]) -> Iterator[_Item]:
        """/joint_states: names, positions, velocities and efforts of the robot's joints."""
        JointState = self.types["sensor_msgs/msg/JointState"]
        names = [c.removeprefix("position_") for c in table if c.startswith("position_")]
        n = len(table["t_ns"])
        values = {
            kind: np.array([table[f"{kind}_{j}"] for j in names], float).reshape(-1, n).T
            for kind in ("position", "velocity", "effort")
        }

        def make(i: int):
            return JointState(
                header=self._header(table["t_ns"][i], "", i),
                name=names,
                **{kind: v[i].copy() for kind, v in values.items()},
            )

        for i, stamp in enumerate(table["t_ns"]):
            yield int(stamp), 3, "/joint_states", lambda i=i: make(i)

    def _imu(self, name: str, data) -> Iterator[_Item]:
        """/<imu>/data: gyro and accelerometer, orientation marked as not provided."""
        t = self.types
        unknown_orientation = np.zeros(9)
        unknown_orientation[0] = -1.0  # ROS: orientation not provided

        def make(i: int):
            return t["sensor_msgs/msg/Imu"](
                header=self._header(data.t_ns[i], name, i),
                orientation=t["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
                orientation_covariance=unknown_orientation,
                angular_velocity=self._vector(data.gyro[i]),
                angular_velocity_covariance=np.zeros(9),
                linear_acceleration=self._vector(data.accel[i]),
                linear_acceleration_covariance=np.zeros(9),
            )

        for i, stamp in enumerate(data.t_ns):
            yield int(stamp), 4, f"/{name}/data", lambda i=i: make(i)

    def _camera(self, camera: str, kind: str) -> Iterator[_Item]:
        """One of a camera's topics (`CAMERA_TOPICS`), one message per frame."""
        stream = self._streams.setdefault(camera, _LastFrame(self.seq.camera(camera)))
        frame_id = _frame_id(self.seq, camera)
        topic = f"/{camera}/{kind}"
        rank = 5 + CAMERA_TOPICS.index(kind)
        for i, stamp in enumerate(stream.t_ns):
            if kind == "camera_info":
                yield (
                    int(stamp),
                    rank,
                    topic,
                    lambda s=stamp, i=i: self._info(stream, s, frame_id, i),
                )
                continue

            def make(i=i, s=stamp):
                frame = stream[i]
                if kind == "image_raw":
                    return self._image(s, frame_id, frame.rgb, "rgb8", i)
                if kind == "depth":
                    return self._image(s, frame_id, frame.depth.astype("<f4"), "32FC1", i)
                return self._image(s, frame_id, getattr(frame, kind).astype("<u2"), "16UC1", i)

            yield int(stamp), rank, topic, make

    def _info(self, stream, t_ns: int, frame_id: str, index: int):
        """CameraInfo: plumb_bob with zero distortion, P = [K | 0]."""
        K = stream.K
        P = np.zeros(12)
        P.reshape(3, 4)[:, :3] = K
        matrices = {"d": np.zeros(5), "k": K.ravel().copy(), "r": np.eye(3).ravel(), "p": P}
        return self.types["sensor_msgs/msg/CameraInfo"](
            header=self._header(t_ns, frame_id, index),
            height=stream.height,
            width=stream.width,
            distortion_model="plumb_bob",
            **{self._info_names[key]: value for key, value in matrices.items()},
            binning_x=0,
            binning_y=0,
            roi=self.types["sensor_msgs/msg/RegionOfInterest"](
                x_offset=0, y_offset=0, height=0, width=0, do_rectify=False
            ),
        )

    def _lidar(self, name: str) -> Iterator[_Item]:
        """/<lidar>/points: one PointCloud2 per sweep."""
        stream = self.seq.lidar(name)
        topic = f"/{name}/points"
        for i, t_ns in enumerate(stream.t_ns):
            yield int(t_ns), 10, topic, lambda i=i: self._cloud(name, stream[i], i)

    def _radar(self, name: str) -> Iterator[_Item]:
        """/<radar>/detections: one PointCloud2 per scan, in the radar's frame."""
        stream = self.seq.radar(name)
        topic = f"/{name}/detections"
        for i, t_ns in enumerate(stream.t_ns):
            yield int(t_ns), 10, topic, lambda i=i: self._radar_cloud(name, stream[i], i)

    def _fix(self, name: str, table: dict[str, np.ndarray]) -> Iterator[_Item]:
        """/<gnss>/fix: NavSatFix per sample, the covariance diagonal when noise gave σ."""
        t, noise = self.types, self.seq.metadata.get("noise", {})
        NavSatFix, Status = t["sensor_msgs/msg/NavSatFix"], t["sensor_msgs/msg/NavSatStatus"]
        known = np.zeros(9)
        if name in noise.get("streams", ()):
            horizontal, vertical = position_sigma(GnssNoise(**noise["parameters"]["gnss"]))
            known[[0, 4, 8]] = horizontal**2, horizontal**2, vertical**2  # east, north, up

        def make(i: int):
            fix = table["status"][i] >= Status.STATUS_FIX
            diagonal = NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
            unknown = NavSatFix.COVARIANCE_TYPE_UNKNOWN
            kind = diagonal if known.any() and fix else unknown
            return NavSatFix(
                header=self._header(table["t_ns"][i], name, i),
                status=Status(status=int(table["status"][i]), service=Status.SERVICE_GPS),
                latitude=float(table["lat_deg"][i]),
                longitude=float(table["lon_deg"][i]),
                altitude=float(table["alt_m"][i]),
                position_covariance=known.copy() if kind == diagonal else np.zeros(9),
                position_covariance_type=kind,
            )

        for i, stamp in enumerate(table["t_ns"]):
            yield int(stamp), 11, f"/{name}/fix", lambda i=i: make(i)

    def _cloud(self, name: str, scan, index: int):
        """A LiDAR scan as a PointCloud2 with the `CLOUD_FIELDS` layout."""
        return self._point_cloud(name, scan.t_ns, index, scan_to_records(scan), CLOUD_FIELDS)

    def _radar_cloud(self, name: str, scan, index: int):
        """A radar scan as a PointCloud2 with the `RADAR_FIELDS` layout."""
        points = np.zeros(len(scan), dtype=RADAR_DTYPE)
        for axis, column in zip("xyz", scan.points.astype(np.float32).T, strict=True):
            points[axis] = column
        for field in ("range", "azimuth", "elevation", "velocity", "instance", "semantic"):
            points[field] = getattr(scan, field)
        points["dynamic"] = scan.dynamic
        return self._point_cloud(name, scan.t_ns, index, points, RADAR_FIELDS)

    def _point_cloud(self, name: str, t_ns: int, index: int, points: np.ndarray, layout: dict):
        """Records of a packed layout (name → (type, ROS PointField datatype)) as a PointCloud2."""
        t = self.types
        fields = [
            t["sensor_msgs/msg/PointField"](
                name=f, offset=points.dtype.fields[f][1], datatype=code, count=1
            )
            for f, (_, code) in layout.items()
        ]
        return t["sensor_msgs/msg/PointCloud2"](
            header=self._header(t_ns, name, index),
            height=1,
            width=len(points),
            fields=fields,
            is_bigendian=False,
            point_step=points.dtype.itemsize,
            row_step=points.dtype.itemsize * len(points),
            data=points.view(np.uint8).reshape(-1),
            is_dense=True,
        )


class _LastFrame:
    """A camera stream that keeps its last loaded frame: the image, depth and mask topics of
    one instant are written one after another, so each frame is read once."""

    def __init__(self, stream) -> None:
        self.stream, self.K = stream, stream.K
        self.width, self.height, self.t_ns = stream.width, stream.height, stream.t_ns
        self._last = None

    def __getitem__(self, index: int):
        """Frame `index`, read from disk only when it is not the last one read."""
        if self._last is None or self._last.index != index:
            self._last = self.stream[index]
        return self._last


def cloud_fields() -> list[tuple[str, int, int]]:
    """(name, byte offset, ROS PointField datatype) of each `CLOUD_DTYPE` field, in order: the
    PointCloud2 layout the bag exports and the ROS 1 bridge share."""
    return [(f, CLOUD_DTYPE.fields[f][1], code) for f, (_, code) in CLOUD_FIELDS.items()]


def scan_to_records(scan) -> np.ndarray:
    """A LiDAR scan as a structured array with the PointCloud2 layout `CLOUD_DTYPE`."""
    points = np.zeros(len(scan.points), dtype=CLOUD_DTYPE)
    for axis, column in zip("xyz", np.asarray(scan.points, np.float32).T, strict=True):
        points[axis] = column
    points["intensity"] = scan.intensity
    points["t"] = scan.t_offset_ns
    points["ring"] = scan.ring
    points["semantic"] = scan.semantic
    points["instance"] = scan.instance
    points["dynamic"] = scan.dynamic
    return points


def _field_names(msgtype: type) -> list[str]:
    """The field names of a `rosbags` message class."""
    return [f.name for f in dataclasses.fields(msgtype) if f.name != "__msgtype__"]


def _frame_id(seq: SequenceReader, stream: str) -> str:
    """TF frame of a sensor: `<camera>_optical_frame` for cameras, else the stream name."""
    return f"{stream}_optical_frame" if seq.stream_info(stream).get("type") == "camera" else stream
