"""Run a closed-loop `Session` as a ROS 1 node: /clock, /tf, /tf_static, odometry, images,
IMU rows and LiDAR clouds out; cmd_vel and goal in (docs/ros1-bridge.md). `Bridge` is shared by
`twinsim ros1-bridge` (its own loop, `run`) and navbench's ROS 1 policies (`ros1.navigation`,
which drives `publish` and `next_command` from `run_episode`)."""

from __future__ import annotations

import math
import queue
import sys
import time

import numpy as np

ROS_PATH = "/usr/lib/python3/dist-packages"
if ROS_PATH not in sys.path:
    sys.path.append(ROS_PATH)

import rospy  # noqa: E402
from geometry_msgs.msg import PoseStamped, TransformStamped, Twist  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image, Imu, PointCloud2, PointField  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from twinsim.closedloop.observations import Observations  # noqa: E402
from twinsim.closedloop.session import Session  # noqa: E402
from twinsim.errors import TwinsimError  # noqa: E402
from twinsim.export.ros_messages import CLOUD_DTYPE, cloud_fields, scan_to_records  # noqa: E402
from twinsim.geometry import matrix_to_quat_wxyz, pose_to_T  # noqa: E402
from twinsim.sensors.camera import intrinsics  # noqa: E402

#: sensor types whose frame is an OpenCV optical frame (`<robot>/<name>_optical`)
_OPTICAL = ("camera", "event_camera")


def _stamp(t_ns: int) -> rospy.Time:
    """The exact ROS time of an integer-ns sim stamp."""
    return rospy.Time(t_ns // 1_000_000_000, t_ns % 1_000_000_000)


def _quaternion(R: np.ndarray) -> tuple[float, float, float, float]:
    """x, y, z, w of a rotation matrix: the recorded rows' quaternion, bit for bit (a trace
    formula per component loses small components to cancellation, 1e-8 rad)."""
    w, x, y, z = matrix_to_quat_wxyz(R)
    return x, y, z, w


def _yaw(q) -> float:
    """The yaw of a geometry_msgs quaternion."""
    return math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))


def twist_command(msg: Twist) -> dict | None:
    """A velocity command from a Twist, or None when a field is not finite."""
    values = {"vx": msg.linear.x, "vy": msg.linear.y, "vz": msg.linear.z, "wz": msg.angular.z}
    if not all(math.isfinite(v) for v in values.values()):
        return None
    return {"velocity": values}


def goal_command(msg: PoseStamped) -> dict | None:
    """A waypoint command from a PoseStamped, or None when a field is not finite."""
    p, q = msg.pose.position, msg.pose.orientation
    values = {"x": p.x, "y": p.y, "yaw": _yaw(q)}
    if not all(math.isfinite(v) for v in values.values()):
        return None
    return {"waypoint": values}


class Bridge:
    """Publishes a session's observations and feeds it the commands received."""

    def __init__(
        self, session: Session, *, rtf: float | None = None, timeout_s: float = 10.0
    ) -> None:
        self.session, self.rtf, self.timeout_s = session, rtf, timeout_s
        rospy.set_param("/use_sim_time", True)
        rospy.init_node("twinsim_bridge", anonymous=False, disable_signals=True)
        self.commands: queue.Queue[tuple[str, dict]] = queue.Queue()
        self.clock = rospy.Publisher("/clock", Clock, queue_size=10)
        self.tf = rospy.Publisher("/tf", TFMessage, queue_size=10)
        self.tf_static = rospy.Publisher("/tf_static", TFMessage, queue_size=10, latch=True)
        self.mounts: dict[str, TransformStamped] = {}  # child frame → body-to-sensor transform
        self._latched_for = None  # the scene whose mounts /tf_static holds
        robots = session.robots
        self.ns = {r: (f"/{r}/" if len(robots) > 1 else "/") for r in robots}
        self.odom = {
            r: rospy.Publisher(f"{n}odom", Odometry, queue_size=10) for r, n in self.ns.items()
        }
        self.sensors: dict[str, rospy.Publisher] = {}
        for robot, ns in self.ns.items():
            rospy.Subscriber(f"{ns}cmd_vel", Twist, self._on(robot, twist_command), queue_size=10)
            rospy.Subscriber(f"{ns}goal", PoseStamped, self._on(robot, goal_command), queue_size=10)

    def _on(self, robot: str, convert):
        """A subscriber callback queueing the converted command, logging malformed ones."""

        def callback(msg) -> None:
            command = convert(msg)
            if command is None:
                rospy.logwarn("twinsim bridge: ignored a command with a non-finite value")
                return
            ((mode, values),) = command.items()
            taken = self.session.command_space(robot).modes.get(mode)
            if taken is None:
                rospy.logwarn(f"twinsim bridge: {robot} takes no {mode} commands")
                return
            # a Twist or PoseStamped sets every field; the robot keeps those its kind takes
            kept = {k: v for k, v in values.items() if k in taken.fields}
            self.commands.put((robot, {mode: kept}))

        return callback

    def _pub(self, topic: str, msgtype: type) -> rospy.Publisher:
        """The publisher of a sensor topic, made on first use."""
        if topic not in self.sensors:
            self.sensors[topic] = rospy.Publisher(topic, msgtype, queue_size=50)
        return self.sensors[topic]

    def publish(self, obs: Observations) -> None:
        """Publish the clock, the transforms, odometry, IMU rows, camera frames and LiDAR
        clouds of one step (and, at an episode's first step, every sensor mount)."""
        stamp = _stamp(obs.t_ns)
        self.clock.publish(Clock(clock=stamp))
        if self._latched_for is not self.session.scene:
            self._latch_mounts(stamp)
        transforms = []
        for robot, ro in obs.robots.items():
            T = ro.T_world_body
            base = f"{robot}/base_link"
            tf = TransformStamped()
            tf.header.stamp, tf.header.frame_id, tf.child_frame_id = stamp, "world", base
            tf.transform.translation.x, tf.transform.translation.y, tf.transform.translation.z = T[
                :3, 3
            ]
            r = tf.transform.rotation
            r.x, r.y, r.z, r.w = _quaternion(T[:3, :3])
            transforms.append(tf)
            odom = Odometry()
            odom.header.stamp, odom.header.frame_id, odom.child_frame_id = stamp, "world", base
            p = odom.pose.pose
            p.position.x, p.position.y, p.position.z = T[:3, 3]
            p.orientation = r
            v = ro.velocity
            odom.twist.twist.linear.x, odom.twist.twist.linear.y, odom.twist.twist.linear.z = v[:3]
            odom.twist.twist.angular.x, odom.twist.twist.angular.y, odom.twist.twist.angular.z = v[
                3:6
            ]
            self.odom[robot].publish(odom)
            for imu in self._sensors_of(robot, "imu"):
                if imu in ro.tables:
                    self._publish_imu(self.ns[robot] + imu, f"{robot}/{imu}", ro.tables[imu])
            for cam, frames in ro.frames.items():
                optical = f"{robot}/{cam}_optical"
                for frame in frames:
                    self._publish_frame(self.ns[robot] + cam, optical, frame)
                    self._publish_info(robot, cam, optical, frame.t_ns)
            for lidar, scans in ro.scans.items():
                for scan in scans:
                    self._publish_cloud(f"{self.ns[robot]}{lidar}/points", f"{robot}/{lidar}", scan)
        self.tf.publish(TFMessage(transforms=transforms))

    def _sensors_of(self, robot: str, kind: str) -> list[str]:
        """The robot's sensors of a type, by their own stream names."""
        sensors = self.session.scene.robot_sensors(robot)
        return [s.name.removeprefix(f"{robot}.") for s in sensors if s.type == kind]

    def _latch_mounts(self, stamp) -> None:
        """Latch every sensor's mount (base_link → sensor frame, from the scene) on /tf_static."""
        scene, self.mounts = self.session.scene, {}
        for robot in self.session.robots:
            for sensor in scene.robot_sensors(robot):
                own = sensor.name.removeprefix(f"{robot}.")
                child = f"{robot}/{own}" + ("_optical" if sensor.type in _OPTICAL else "")
                T = pose_to_T(sensor.pos, sensor.quat)
                tf = TransformStamped()
                tf.header.stamp, tf.header.frame_id = stamp, f"{robot}/base_link"
                tf.child_frame_id = child
                t, r = tf.transform.translation, tf.transform.rotation
                t.x, t.y, t.z = (float(v) for v in T[:3, 3])
                r.x, r.y, r.z, r.w = _quaternion(T[:3, :3])
                self.mounts[child] = tf
        self.tf_static.publish(TFMessage(transforms=list(self.mounts.values())))
        self._latched_for = scene

    def _publish_info(self, robot: str, cam: str, frame_id: str, t_ns: int) -> None:
        """Publish the camera's CameraInfo (pinhole, no distortion: the images are ideal)."""
        config = self.session.config.robots[robot].sensors[cam]
        K = intrinsics(config.width, config.height, config.hfov_deg)
        msg = CameraInfo(height=config.height, width=config.width, distortion_model="plumb_bob")
        msg.header.stamp, msg.header.frame_id = _stamp(t_ns), frame_id
        msg.D = [0.0] * 5
        msg.K = [float(v) for v in K.ravel()]
        msg.R = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        msg.P = [float(K[0, 0]), 0.0, float(K[0, 2]), 0.0, 0.0, float(K[1, 1]), float(K[1, 2])]
        msg.P += [0.0, 0.0, 0.0, 1.0, 0.0]
        self._pub(f"{self.ns[robot]}{cam}/camera_info", CameraInfo).publish(msg)

    def _publish_imu(self, topic: str, frame_id: str, table) -> None:
        """Publish an IMU's rows: gyro and accelerometer, orientation marked not provided."""
        for t_ns, row in zip(table.t_ns, table.values, strict=True):
            msg = Imu()
            msg.header.stamp, msg.header.frame_id = _stamp(int(t_ns)), frame_id
            msg.orientation.w = 1.0
            msg.orientation_covariance[0] = -1.0
            g, a = msg.angular_velocity, msg.linear_acceleration
            g.x, g.y, g.z, a.x, a.y, a.z = (float(v) for v in row)
            self._pub(f"{topic}/data", Imu).publish(msg)

    def _publish_frame(self, topic: str, frame_id: str, frame) -> None:
        """Publish a camera frame's rgb8 and 32FC1 depth images."""
        for kind, array, encoding in (("rgb", frame.rgb, "rgb8"), ("depth", frame.depth, "32FC1")):
            if array is None:
                continue
            array = np.ascontiguousarray(array)
            msg = Image(height=array.shape[0], width=array.shape[1], encoding=encoding)
            msg.header.stamp, msg.header.frame_id = _stamp(frame.t_ns), frame_id
            msg.is_bigendian = 0
            msg.step = array.strides[0]
            msg.data = array.tobytes()
            self._pub(f"{topic}/{kind}/image_raw", Image).publish(msg)

    def _publish_cloud(self, topic: str, frame_id: str, scan) -> None:
        """Publish a LiDAR sweep as a PointCloud2 in the bag exports' layout (`cloud_fields`),
        stamped at the sweep's start."""
        points = scan_to_records(scan)
        msg = PointCloud2(height=1, width=len(points), is_bigendian=False, is_dense=True)
        msg.header.stamp, msg.header.frame_id = _stamp(int(scan.t_ns)), frame_id
        msg.fields = [
            PointField(name=n, offset=o, datatype=d, count=1) for n, o, d in cloud_fields()
        ]
        msg.point_step = CLOUD_DTYPE.itemsize
        msg.row_step = CLOUD_DTYPE.itemsize * len(points)
        msg.data = points.tobytes()
        self._pub(topic, PointCloud2).publish(msg)

    def next_command(self, timeout_s: float) -> dict | None:
        """Wait up to `timeout_s` for a command message; then the latest queued command of
        each robot (None: none came)."""
        try:
            robot, command = self.commands.get(timeout=timeout_s)
        except queue.Empty:
            return None
        return {robot: command, **self._drain()}

    def _drain(self) -> dict:
        """The latest queued command of each robot."""
        latest: dict = {}
        while True:
            try:
                robot, command = self.commands.get_nowait()
            except queue.Empty:
                return latest
            latest[robot] = command

    def run(self, seed: int | None) -> str:
        """Run one episode; returns how it ended (time_limit, timeout or closed)."""
        obs = self.session.reset(seed)
        time.sleep(0.5)  # let subscribers connect before the first clock tick
        period = 1.0 / (self.session.control_hz * (self.rtf or 1.0))
        due = time.monotonic() + period
        while not rospy.is_shutdown():
            self.publish(obs)
            if obs.done:
                return "time_limit"
            if self.rtf is None:
                latest = self.next_command(self.timeout_s)
                if latest is None:
                    self.session.close("timeout")
                    return "timeout"
            else:  # paced by a deadline, so the step's own cost is not added to the period
                now = time.monotonic()
                time.sleep(max(0.0, due - now))
                due = max(due + period, now - period)  # a late step does not rush to catch up
                latest = self._drain()
            try:
                obs = self.session.step(latest)
            except TwinsimError as exc:
                rospy.logwarn(f"twinsim bridge: refused command: {exc}")
                obs = self.session.step({})
        self.session.close("closed")
        return "closed"
