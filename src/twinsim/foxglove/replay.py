"""`stream_sequence`: a recorded sequence published over Foxglove's WebSocket protocol in
recorded time order, at `rate` × real time, each message's log time its sample's ns stamp."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from twinsim.foxglove.publish import MAP_EVERY_S, WorldPublisher
from twinsim.foxglove.server import Publisher
from twinsim.sequence.reader import SequenceReader, open_sequence

Progress = Callable[[int, int], None]
#: the order of simultaneous samples: the pose first (the TF a frame is shown with)
_POSE, _FRAME, _SCAN = 0, 1, 2


def stream_sequence(
    path: str | Path,
    port: int = 8765,
    rate: float = 1.0,
    progress: Progress | None = None,
    *,
    host: str = "127.0.0.1",
    loop: bool = False,
    stop: threading.Event | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> int:
    """Serve the sequence at `path` on `ws://host:port` (0: a free port) and publish every pose,
    camera frame and LiDAR sweep in time order; returns the number of messages published.

    `on_ready(url)` is called once the server listens; `progress(done, total)` after each
    sample; `loop` plays the sequence again from its start (clients are told the session
    restarts) until `stop` is set. Returns when the sequence ends (without `loop`) or `stop` is set.
    """
    if not rate > 0:
        raise ValueError(f"rate: a positive factor of real time, got {rate}")
    seq = open_sequence(path)
    stop = stop if stop is not None else threading.Event()
    with Publisher(host, port) as publisher:
        world = WorldPublisher(
            publisher,
            seq.metadata["streams"],
            seq.scene,
            {i["instance_id"] for i in seq.metadata.get("instances", []) if i.get("dynamic")},
        )
        world.advertise(seq.robots)
        samples = _samples(seq, world)
        if on_ready is not None:
            on_ready(publisher.url)
        first = True
        while first or (loop and not stop.is_set()):
            if not first:
                publisher.restart_session()
            first = False
            _play(seq, world, samples, rate, progress, stop)
        return publisher.messages


def _samples(seq: SequenceReader, world: WorldPublisher) -> list[tuple[int, int, str, int]]:
    """(t_ns, order, stream, index) of every sample to publish, sorted."""
    samples = []
    robots = seq.robots
    for robot in robots:
        stream = f"{robot}.groundtruth_body" if len(robots) > 1 else "groundtruth_body"
        t_ns, _ = seq.groundtruth(stream)
        samples += [(int(t), _POSE, robot, i) for i, t in enumerate(t_ns)]
    for camera in world.cameras:
        samples += [(int(t), _FRAME, camera, i) for i, t in enumerate(seq.camera(camera).t_ns)]
    for lidar in world.lidars:
        samples += [(int(t), _SCAN, lidar, i) for i, t in enumerate(seq.lidar(lidar).t_ns)]
    samples.sort()
    return samples


def _play(seq, world: WorldPublisher, samples, rate, progress, stop: threading.Event) -> None:
    robots = seq.robots
    poses = {
        r: seq.groundtruth(f"{r}.groundtruth_body" if len(robots) > 1 else "groundtruth_body")[1]
        for r in robots
    }
    cameras = {c: seq.camera(c) for c in world.cameras}
    lidars = {name: seq.lidar(name) for name in world.lidars}
    t0 = samples[0][0] if samples else 0
    start = time.monotonic()
    last_map = None
    for done, (t_ns, kind, stream, index) in enumerate(samples, 1):
        due = start + (t_ns - t0) / 1e9 / rate
        while not stop.is_set() and (wait := due - time.monotonic()) > 0:
            stop.wait(min(wait, 0.1))
        if stop.is_set():
            return
        if last_map is None or time.monotonic() - last_map >= MAP_EVERY_S:
            world.world_map(t_ns)
            last_map = time.monotonic()
        if kind == _POSE:
            world.body(stream, t_ns, poses[stream][index])
        elif kind == _FRAME:
            world.frame(stream, cameras[stream][index])
        else:
            world.scan(stream, lidars[stream][index])
        if progress is not None:
            progress(done, len(samples))
