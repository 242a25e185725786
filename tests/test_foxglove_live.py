"""Foxglove live for closed-loop episodes: `Session(..., observe=live_observer(publisher))`
publishes each episode exactly as its steps observe it (weather composited), through one
server that stays up across resets and tells its clients at each new episode that the data
starts over; `twinsim serve --foxglove` does so for the episodes a ZeroMQ client drives. A
Foxglove client that sends garbage and vanishes mid-episode never stops it. Every message is
decoded from the wire by `foxglove_client.Client` and compared with the observations."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from typer.testing import CliRunner

from foxglove_client import EXPECTED, LIDAR, Client, ns, send_garbage
from live_truth import POSE_ATOL
from twinsim import Session
from twinsim.cli import app
from twinsim.closedloop.client import TwinsimClient
from twinsim.config import load_config
from twinsim.foxglove import live
from twinsim.foxglove.live import live_observer
from twinsim.foxglove.server import Publisher
from twinsim.sequence import open_sequence
from twinsim.sim import step_range

OMNI = ("robot.kind=omni",)
SEED = 3
#: the two episodes' commands: ahead, then turning (their poses part after the first steps)
AHEAD = {"velocity": {"vx": 0.3}}
TURNING = {"velocity": {"vx": 0.2, "wz": 0.6}}
STEPS = 10
TWINSIM = str(Path(sys.executable).with_name("twinsim"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _matrix(position, orientation) -> np.ndarray:
    """A decoded Foxglove position and quaternion as a 4×4 transform."""
    T = np.eye(4)
    q = orientation
    T[:3, :3] = Rotation.from_quat([q.x, q.y, q.z, q.w]).as_matrix()
    T[:3, 3] = position.x, position.y, position.z
    return T


def _of(messages, topic: str) -> list[tuple[int, object]]:
    return [(t, m) for name, t, m in messages if name == topic]


def _episode(session: Session, client: Client, command: dict, weather=None):
    """One episode of `STEPS` steps, then closed: its observations, every message the client
    got (it reads until the server falls quiet) and the sequence it recorded."""
    observations = [session.reset(seed=SEED, weather=weather)]
    client.read_control(set(EXPECTED))
    if not client.subs:  # subscriptions outlive a restarted session
        client.subscribe(sorted(EXPECTED))
    observations += [session.step(command) for _ in range(STEPS)]
    path = session.close()  # a sweep the episode's end cut short is written (published) now
    return observations, client.drain(), open_sequence(path)


@pytest.fixture(scope="module")
def two_episodes(tmp_path_factory, gl_backend):
    """Two recorded episodes of the same world (clear and driven ahead, then in rain and
    turning) published by one session to one server, watched by a client connected before
    the first reset: each episode's observations, messages and sequence, and the client."""
    cfg = load_config("tiny", [*LIDAR, *OMNI], duration_s=1.0)
    out = tmp_path_factory.mktemp("episodes")
    with Publisher(port=0) as publisher:
        client = Client(publisher.url)
        try:
            client.drain()  # the serverInfo; nothing is advertised before a reset
            assert client.channels == {} and len(client.sessions) == 1
            session = Session(cfg, out, observe=live_observer(publisher))
            episodes = [_episode(session, client, AHEAD)]
            episodes.append(_episode(session, client, TURNING, weather={"rain": 0.8}))
        finally:
            client.close()
    return episodes, client


def test_every_channel_is_advertised_with_its_schema_and_each_episode_restarts(two_episodes):
    _, client = two_episodes
    assert {topic: c["schemaName"] for topic, c in client.channels.items()} == EXPECTED
    # the second reset told the client the data starts over: a new session id
    assert len(client.sessions) == 2 and client.sessions[0] != client.sessions[1]


def test_published_poses_are_the_poses_each_step_returned(two_episodes):
    episodes, _ = two_episodes
    last_poses = []
    for observations, messages, sequence in episodes:
        returned = {o.t_ns: o.robots["robot"].T_world_body for o in observations}
        stamps, poses_recorded = sequence.groundtruth()
        recorded = dict(zip(stamps.tolist(), poses_recorded, strict=True))
        poses = _of(messages, "/robot/pose")
        assert len(poses) >= STEPS  # two a step at 60 Hz, from the step the client subscribed
        for t, message in poses:
            assert ns(message.timestamp) == t and message.frame_id == "world"
            T = _matrix(message.pose.position, message.pose.orientation)
            np.testing.assert_allclose(T, recorded[t], rtol=0, atol=POSE_ATOL)
        shared = [(t, m) for t, m in poses if t in returned]
        assert len(shared) >= STEPS // 2
        for t, message in shared:  # the pose a step returned, published as the next records it
            T = _matrix(message.pose.position, message.pose.orientation)
            np.testing.assert_allclose(T, returned[t], rtol=0, atol=POSE_ATOL)
        for t, tf in _of(messages, "/tf"):
            world = tf.transforms[0]
            assert (world.parent_frame_id, world.child_frame_id) == ("world", "robot")
            T = _matrix(world.translation, world.rotation)
            np.testing.assert_allclose(T, recorded[t], rtol=0, atol=POSE_ATOL)
            assert {f.child_frame_id for f in tf.transforms[1:]} == {"cam0", "imu0", "lidar0"}
        last_poses.append(observations[-1].robots["robot"].T_world_body)
    turned = Rotation.from_matrix(last_poses[0][:3, :3].T @ last_poses[1][:3, :3]).magnitude()
    assert turned > 0.02  # the episodes part: a message of one is no pose of the other


def _readings(observations, kind: str, stream: str) -> dict[int, object]:
    """The frames or sweeps (`kind`) of `stream` the steps observed, by stamp."""
    return {
        r.t_ns: r for o in observations for r in getattr(o.robots["robot"], kind).get(stream, [])
    }


def test_images_depth_and_sweeps_are_what_the_steps_observed_in_rain_too(two_episodes):
    episodes, _ = two_episodes
    for observations, messages, sequence in episodes:
        frames = _readings(observations, "frames", "cam0")
        observed = _readings(observations, "scans", "lidar0")
        lidar = sequence.lidar("lidar0")  # the observed sweeps, and the one the end cut short
        sweeps = {int(t): lidar[i] for i, t in enumerate(lidar.t_ns)}
        rgbs, depths = _of(messages, "/cam0/rgb"), _of(messages, "/cam0/depth")
        clouds = _of(messages, "/lidar0/points")
        assert len(rgbs) >= STEPS // 2 and len(depths) == len(rgbs)
        for t, rgb in rgbs:
            assert (rgb.width, rgb.height, rgb.encoding) == (64, 48, "rgb8")
            assert rgb.data == frames[t].rgb.tobytes()
        for t, depth in depths:
            pixels = np.frombuffer(depth.data, "<f4").reshape(48, 64)
            np.testing.assert_array_equal(pixels, frames[t].depth)
        assert observed.keys() & dict(clouds).keys()
        for t, cloud in clouds:
            sweep = observed.get(t, sweeps[t])
            assert len(sweep) > 0 and len(cloud.data) == cloud.point_stride * len(sweep)
            records = np.frombuffer(cloud.data, np.uint8).reshape(len(sweep), cloud.point_stride)
            np.testing.assert_array_equal(records[:, :12].copy().view("<f4"), sweep.points)
            np.testing.assert_array_equal(sweeps[t].points, sweep.points)
    # the rain is in what was published: the same world's first frames, clear and in rain,
    # differ, and the rain episode's were published as observed (the episode's own, subscribed)
    clear, rain = (
        {f.t_ns: f.rgb for f in observations[0].robots["robot"].frames["cam0"]}
        for observations, _, _ in episodes
    )
    assert clear.keys() == rain.keys()
    assert all(np.abs(clear[t].astype(int) - rain[t]).mean() > 5 for t in clear)
    published = dict(_of(episodes[1][1], "/cam0/rgb"))
    assert all(published[t].data == rain[t].tobytes() for t in rain)
    # the map is sent at an episode's first pose: the client, subscribed since the first
    # episode, gets the second's (the first's went before the client knew its channels)
    maps = _of(episodes[1][1], "/map")
    assert maps and maps[0][0] == min(rain) and len(maps[0][1].entities) > 0


def test_a_rude_client_never_stops_an_unrecorded_episode(gl_backend, monkeypatch):
    """record=False: nothing is written but the episode is published; a client that sends
    garbage and vanishes without a closing handshake leaves it stepping to its time limit, and
    a client that joins mid-episode gets the map (sent again, here with every pose)."""
    monkeypatch.setattr(live, "MAP_EVERY_S", 0.0)
    cfg = load_config("tiny", OMNI, duration_s=0.5)
    with Publisher(port=0) as publisher:
        session = Session(cfg, record=False, observe=live_observer(publisher))
        observations = [session.reset(seed=SEED)]
        rude = Client(publisher.url)
        rude.read_control({"/robot/pose", "/cam0/rgb"})
        rude.subscribe(sorted(rude.channels))
        send_garbage(rude)
        observations.append(session.step(AHEAD))
        rude.ws.socket.close()
        observations.append(session.step(AHEAD))
        late = Client(publisher.url)
        late.read_control({"/robot/pose", "/map", "/cam0/calibration"})
        late.subscribe(["/robot/pose", "/map"])
        left_at = observations[-1].t_ns
        while not observations[-1].done:
            observations.append(session.step(AHEAD))
        messages = late.drain()
        late.close()
        assert session.close() is None and session.episode_path is None
    assert observations[-1].done and observations[-1].step == step_range(cfg).end
    returned = {o.t_ns: o.robots["robot"].T_world_body for o in observations}
    poses = [(t, m) for t, m in _of(messages, "/robot/pose") if t in returned]
    assert poses and max(t for t, _ in poses) > left_at
    for t, message in poses:
        T = _matrix(message.pose.position, message.pose.orientation)
        np.testing.assert_allclose(T, returned[t], rtol=0, atol=POSE_ATOL)
    assert _of(messages, "/map") and len(_of(messages, "/map")[0][1].entities) > 0


def test_serve_foxglove_publishes_the_episode_a_client_drives(tmp_path, gl_backend):
    """`twinsim serve --foxglove --port P`: it prints the ws:// URL, and a Foxglove client sees
    the channels and the poses the ZeroMQ client's steps return."""
    out = tmp_path / "episodes"
    address, port = f"tcp://127.0.0.1:{_free_port()}", _free_port()
    sets = [
        a for o in (*OMNI, "sensors.cam0.width=32", "sensors.cam0.height=24") for a in ("--set", o)
    ]
    command = [TWINSIM, "serve", "tiny", "--out", str(out), "--bind", address, *sets]
    command += ["--foxglove", "--port", str(port)]
    log_path = tmp_path / "server.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            with TwinsimClient(address, timeout_s=30) as driver:
                driver.hello()  # the server is up, its Foxglove server too
                watcher = Client(f"ws://127.0.0.1:{port}")
                observations = [driver.reset(seed=SEED)]
                wanted = {t for t in EXPECTED if not t.startswith("/lidar0")}
                watcher.read_control(wanted)
                watcher.subscribe(["/robot/pose", "/cam0/rgb"])
                observations += [driver.step(AHEAD) for _ in range(STEPS)]
                messages = watcher.drain()
                watcher.close()
                driver.close()
            assert server.wait(timeout=20) == 0, log_path.read_text()
        finally:
            server.kill()
            server.wait()
    assert f"ws://127.0.0.1:{port}" in log_path.read_text()
    assert {t: c["schemaName"] for t, c in watcher.channels.items()} == {
        t: EXPECTED[t] for t in wanted
    }
    returned = {o.t_ns: o.robots["robot"].T_world_body for o in observations}
    poses = [(t, m) for t, m in _of(messages, "/robot/pose") if t in returned]
    assert len(poses) >= STEPS // 2
    for t, message in poses:
        T = _matrix(message.pose.position, message.pose.orientation)
        np.testing.assert_allclose(T, returned[t], rtol=0, atol=POSE_ATOL)
    frames = _readings(observations, "frames", "cam0")
    rgbs = _of(messages, "/cam0/rgb")
    assert rgbs and all(rgb.data == frames[t].rgb.tobytes() for t, rgb in rgbs)


def test_serve_foxglove_on_a_taken_port_fails_in_one_line(tmp_path):
    with Publisher(port=0) as taken:
        result = CliRunner().invoke(
            app,
            [
                "serve",
                "tiny",
                "--out",
                str(tmp_path / "e"),
                "--foxglove",
                "--port",
                str(taken.port),
            ],
        )
    assert result.exit_code == 2, result.output
    assert "foxglove: cannot serve on" in result.output and "Traceback" not in result.output
