"""A Foxglove WebSocket client for the tests: it reads the advertised channels, subscribes,
and decodes the protobuf messages with the schema each channel carries, so a test checks what
a Foxglove app would receive (shared by test_foxglove.py and test_foxglove_live.py)."""

from __future__ import annotations

import base64
import functools
import json
import struct
import time

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from websockets.sync.client import connect

#: foxglove-sdk 0.30's server speaks `foxglove.sdk.v1` (it refuses `foxglove.websocket.v1`)
SUBPROTOCOL = "foxglove.sdk.v1"
#: the tiny world's small LiDAR, and the channels a client sees of that world
LIDAR = (
    "sensors.lidar0.kind=lidar",
    "sensors.lidar0.model=custom",
    "sensors.lidar0.elevations_deg=[-15,0,15]",
    "sensors.lidar0.columns=90",
)
EXPECTED = {
    "/tf": "foxglove.FrameTransforms",
    "/robot/pose": "foxglove.PoseInFrame",
    "/map": "foxglove.SceneUpdate",
    "/cam0/rgb": "foxglove.RawImage",
    "/cam0/depth": "foxglove.RawImage",
    "/cam0/calibration": "foxglove.CameraCalibration",
    "/cam0/boxes": "foxglove.ImageAnnotations",
    "/cam0/boxes3d": "foxglove.SceneUpdate",
    "/lidar0/points": "foxglove.PointCloud",
}


class Client:
    """A Foxglove WebSocket client: the advertised channels, subscriptions, decoded messages."""

    def __init__(self, url: str) -> None:
        self.ws = connect(url, subprotocols=[SUBPROTOCOL], open_timeout=5, legacy=True)
        assert self.ws.subprotocol == SUBPROTOCOL
        self.channels: dict[str, dict] = {}  # topic -> channel
        self.subs: dict[int, dict] = {}  # subscription id -> channel
        self.info = None
        self.sessions: list[str] = []  # the sessionId of every serverInfo, in order

    def read_control(self, wanted: set[str], timeout: float = 5.0) -> None:
        """Read JSON messages until every topic of `wanted` is advertised."""
        end = time.monotonic() + timeout
        while not wanted <= set(self.channels):
            data = self.ws.recv(timeout=max(0.01, end - time.monotonic()))
            if isinstance(data, str):
                self._control(json.loads(data))

    def _control(self, op: dict) -> None:
        if op["op"] == "serverInfo":
            self.info = op
            self.sessions.append(op.get("sessionId"))
        elif op["op"] == "advertise":
            self.channels.update({c["topic"]: c for c in op["channels"]})

    def subscribe(self, topics) -> None:
        subs = []
        for topic in topics:
            channel = self.channels[topic]
            sid = len(self.subs) + 1
            self.subs[sid] = channel
            subs.append({"id": sid, "channelId": channel["id"]})
        self.ws.send(json.dumps({"op": "subscribe", "subscriptions": subs}))

    def messages(self, topics: set[str], timeout: float = 5.0) -> dict[str, list]:
        """The first message of each of `topics` as (log time ns, decoded message)."""
        got: dict[str, list] = {}
        end = time.monotonic() + timeout
        while not topics <= set(got):
            message = self._receive(max(0.01, end - time.monotonic()))
            if message is not None:
                topic, log_time, decoded = message
                got.setdefault(topic, [log_time, decoded])
        return got

    def drain(self, quiet: float = 0.3) -> list[tuple[str, int, object]]:
        """Every message until none comes for `quiet` seconds, in arrival order, as (topic,
        log time ns, decoded message); control messages are taken in on the way."""
        got = []
        while True:
            try:
                message = self._receive(quiet)
            except TimeoutError:
                return got
            if message is not None:
                got.append(message)

    def _receive(self, timeout: float) -> tuple[str, int, object] | None:
        """The next frame: a data message as (topic, log time ns, decoded message), or None
        for a control message (taken in)."""
        data = self.ws.recv(timeout=timeout)
        if isinstance(data, str):
            self._control(json.loads(data))
            return None
        assert data[0] == 1  # messageData
        sid, log_time = struct.unpack_from("<IQ", data, 1)
        channel = self.subs[sid]
        return channel["topic"], log_time, decode(channel, data[13:])

    def close(self) -> None:
        self.ws.close()


def decode(channel: dict, payload: bytes):
    """A protobuf message of the channel's schema (a base64 FileDescriptorSet)."""
    assert channel["encoding"] == "protobuf" and channel["schemaEncoding"] == "protobuf"
    return _message_class(channel["schemaName"], channel["schema"]).FromString(payload)


@functools.cache
def _message_class(name: str, schema: str) -> type:
    files = descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(schema))
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


def ns(stamp) -> int:
    return stamp.seconds * 1_000_000_000 + stamp.nanos


def send_garbage(client: Client) -> None:
    for junk in (b"\x00garbage", b"\x01\xff", "not json", '{"op": "bogus"}', '{"op": 3}'):
        client.ws.send(junk)
    client.ws.send(json.dumps({"op": "subscribe", "subscriptions": [{"id": 9, "channelId": 999}]}))
