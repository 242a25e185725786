"""`twinsim serve` and `TwinsimClient`: a client drives an omni robot to a goal over ZeroMQ and
the episode is an ordinary sequence (valid, replayed byte-identically); garbage gets an error
reply and the server serves on; a silent client ends the episode as a timeout; free-running
time advances without step requests. Every socket has a timeout and every server is stopped."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgpack
import numpy as np
import pytest
import zmq

from conftest import digest_folder
from live_truth import served as served_session
from twinsim import Session
from twinsim.closedloop import protocol
from twinsim.closedloop.client import ServerError, ServerTimeoutError, TwinsimClient
from twinsim.closedloop.server import Server
from twinsim.config import load_config
from twinsim.replay import replay
from twinsim.sequence import open_sequence, validate_sequence

OVERRIDES = ["robot.kind=omni", "sensors.cam0.width=32", "sensors.cam0.height=24"]
TWINSIM = str(Path(sys.executable).with_name("twinsim"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def served(out: Path, **options) -> Iterator[tuple[Server, TwinsimClient]]:
    """An omni robot's session served in a thread (`live_truth.served`), and a client of it."""
    cfg = load_config("tiny", OVERRIDES, duration_s=options.pop("duration_s", 2.0))
    with served_session(Session(cfg, out), **options) as pair:
        yield pair


@pytest.fixture(scope="module")
def driven(tmp_path_factory, gl_backend):
    """A `twinsim serve` process and a client steering its omni robot by a P-controller on
    the observed pose to a goal 0.5 m ahead: hello, the observations, the episode folder."""
    out = tmp_path_factory.mktemp("serve") / "episodes"
    address = f"tcp://127.0.0.1:{_free_port()}"
    overrides = [a for o in [*OVERRIDES, "sim.duration_s=6"] for a in ("--set", o)]
    command = [TWINSIM, "serve", "tiny", "--out", str(out), "--bind", address, *overrides]
    log = open(out.parent / "server.log", "w")  # noqa: SIM115 (closed in finally)
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        with TwinsimClient(address, timeout_s=30) as client:
            hello = client.hello()
            observations = [client.reset(seed=3)]
            T0 = observations[0].robots["robot"].T_world_body
            goal = T0[:2, 3] + T0[:2, 0] * 0.5
            for _ in range(120):
                T = observations[-1].robots["robot"].T_world_body
                error = T[:2, :2].T @ (goal - T[:2, 3])
                if np.hypot(*error) < 0.2:
                    break
                vx, vy = np.clip(1.5 * error, -0.4, 0.4)
                observations.append(client.step({"velocity": {"vx": vx, "vy": vy}}))
            path = Path(client.close())
        assert server.wait(timeout=20) == 0, (out.parent / "server.log").read_text()
    finally:
        server.kill()
        server.wait()
        log.close()
    return hello, observations, goal, path


def test_hello_lists_the_robots_command_modes(driven):
    hello = driven[0]
    assert hello["protocol"] == protocol.VERSION
    assert (hello["mode"], hello["control_hz"], hello["physics_hz"]) == ("lockstep", 30, 240)
    robot = hello["robots"]["robot"]
    assert robot["kind"] == "omni"
    assert robot["modes"]["velocity"]["fields"] == ["vx", "vy", "wz"]
    assert robot["modes"]["waypoint"]["required"] == ["x", "y"]


def test_a_client_drives_the_robot_to_its_goal(driven):
    _, observations, goal, _ = driven
    last = observations[-1]
    assert np.hypot(*(last.robots["robot"].T_world_body[:2, 3] - goal)) < 0.2
    assert not last.done
    steps = [o.step for o in observations]
    assert np.all(np.diff(steps) == 8)  # one 30 Hz control period of 240 Hz physics a step
    frames = [f for o in observations for f in o.robots["robot"].frames.get("cam0", [])]
    assert frames[0].rgb.shape == (24, 32, 3) and frames[0].depth.dtype == np.float32


def test_the_episode_is_a_valid_sequence_replayed_byte_identically(driven, tmp_path):
    path = driven[3]
    assert validate_sequence(path).ok
    metadata = json.loads((path / "metadata.json").read_text())
    assert metadata["closed_loop"]["ended_by"] == "closed"
    twin = replay(path, tmp_path / "twin", rerender=True)
    a, b = digest_folder(path), digest_folder(twin)
    assert {p for p in a if a[p] != b.get(p)} == {"metadata.json"}


def _raw(address: str, data: bytes) -> dict:
    """One raw request and its decoded reply, with a timeout."""
    with zmq.Context() as context, context.socket(zmq.REQ) as sock:
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(address)
        sock.send(data)
        assert sock.poll(10_000), "no reply"
        return msgpack.unpackb(sock.recv())


def test_garbage_gets_an_error_reply_and_the_server_serves_on(tmp_path, gl_backend):
    with served(tmp_path / "episodes") as (server, client):
        client.reset(seed=1)
        garbage = {
            b"\xc1 not msgpack": "not a msgpack message",
            msgpack.packb([1, 2]): "a message is a map",
            msgpack.packb({"v": 2, "op": "hello"}): "protocol version 2",
            msgpack.packb({"v": True, "op": "hello"}): "protocol version True",
            msgpack.packb({"v": 1, "op": "jump"}): "op: one of hello, reset, step, close",
            msgpack.packb({"v": 1, "op": "reset", "seed": "x"}): "reset.seed",
            msgpack.packb({"v": 1, "op": "step", "speed": 1}): "unknown field 'speed'",
            msgpack.packb({"v": 1, "op": [1]}): "op: one of",
            msgpack.packb({"v": 1, "op": {"a": 1}}): "op: one of",
            msgpack.packb({"v": 1, (1, 2): 3}): "not a msgpack message",
            msgpack.packb({"v": 1, "op": "reset", "seed": -1}): "reset.seed: an integer >= 0",
            msgpack.packb({"v": 1, "op": "reset", "out": "a" * 300}): "at most 255 bytes",
            msgpack.packb({"v": 1, "op": "reset", "out": "a/" * 5000}): "at most 255 bytes",
        }
        for data, reason in garbage.items():
            reply = _raw(server.address, data)
            assert reply["ok"] is False and reason in reply["error"], reply
        with pytest.raises(ServerError, match=r"'fly'.*velocity \(vx, vy, wz\)"):
            client.step({"fly": {"vx": 1}})
        assert client.step({"velocity": {"vx": 0.1}}).step == 240 + 2 * 8


def test_a_silent_client_ends_the_episode_as_a_timeout(tmp_path, gl_backend):
    with served(tmp_path / "episodes", timeout_s=1.5) as (server, client):
        client.reset(seed=1)
        client.step({"velocity": {"vx": 0.2}})
        start = time.monotonic()
        while not server.finished and time.monotonic() - start < 10:
            time.sleep(0.1)
        waited = time.monotonic() - start
    assert 1.4 < waited < 4.0
    metadata = json.loads((Path(client.episode) / "metadata.json").read_text())
    assert metadata["closed_loop"]["ended_by"] == "timeout"
    assert validate_sequence(client.episode).ok


def test_free_running_time_advances_without_step_requests(tmp_path, gl_backend):
    with served(tmp_path / "episodes", rtf=1.0, duration_s=5.0) as (_, client):
        first = client.reset(seed=1)
        a = client.step({"velocity": {"vx": 0.3}})
        time.sleep(0.6)
        b = client.step()
    period_ns = 1_000_000_000 // 30
    assert b.t_ns - a.t_ns > 5 * period_ns  # ~0.6 s of simulated time
    imu = b.robots["robot"].tables["imu0"]
    assert len(imu.t_ns) == (b.step - a.step) and np.all(np.diff(imu.t_ns) > 0)
    moved = b.robots["robot"].T_world_body[:2, 3] - first.robots["robot"].T_world_body[:2, 3]
    assert np.hypot(*moved) > 0.02  # the command held while the client slept


def test_free_running_sends_every_reading_up_to_the_end(tmp_path, gl_backend):
    """The readings of the periods between the client's last request and the time limit
    still reach it: the server waits for that step before it stops."""
    with served(tmp_path / "episodes", rtf=4.0, duration_s=1.0, episodes=1) as (_, client):
        obs = client.reset(seed=1)
        received = [obs.robots["robot"].tables["imu0"].t_ns]
        while not obs.done:
            time.sleep(0.1)
            obs = client.step({"velocity": {"vx": 0.2}})
            received.append(obs.robots["robot"].tables["imu0"].t_ns)
        episode = client.episode
    stamps = np.concatenate(received)
    recorded = open_sequence(episode).table("imu0")["t_ns"]
    assert np.array_equal(stamps, recorded)


def test_a_client_times_out_on_a_server_that_is_gone():
    client = TwinsimClient(f"tcp://127.0.0.1:{_free_port()}", timeout_s=0.3)
    with client, pytest.raises(ServerTimeoutError, match=r"no reply .* within 0\.3 s"):
        client.hello()


def _serve_bound_to(port, tmp_path) -> subprocess.CompletedProcess:
    """`twinsim serve` told to bind 127.0.0.1:`port` (it should refuse at once)."""
    command = [TWINSIM, "serve", "tiny", "--out", str(tmp_path / "e")]
    return subprocess.run(
        [*command, "--bind", f"tcp://127.0.0.1:{port}"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_serve_refuses_a_taken_port_in_one_line(tmp_path):
    with zmq.Context() as context, context.socket(zmq.REP) as taken:
        done = _serve_bound_to(taken.bind_to_random_port("tcp://127.0.0.1"), tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().startswith("error: cannot bind") and "\n" not in done.stderr.strip()


def test_a_multipart_request_gets_an_error_and_the_episode_goes_on(tmp_path, gl_backend):
    with served(tmp_path / "episodes") as (server, client):
        client.reset(seed=1)
        with zmq.Context() as context, context.socket(zmq.REQ) as sock:
            sock.setsockopt(zmq.LINGER, 0)
            sock.connect(server.address)
            sock.send_multipart([protocol.pack(protocol.request("hello")), b"more"])
            assert sock.poll(10_000), "no reply"
            reply = msgpack.unpackb(sock.recv())
        assert reply["ok"] is False and "one message part, got 2" in reply["error"]
        assert client.step({"velocity": {"vx": 0.1}}).step == 240 + 2 * 8


def test_a_client_cannot_record_outside_the_episodes_folder(tmp_path, gl_backend):
    episodes = tmp_path / "episodes"
    with served(episodes) as (_, client):
        for out in ["/tmp/elsewhere", "../escaped", "a/../../b", "", ".", 5]:
            with pytest.raises(ServerError, match=r"reset\.out: a folder name relative"):
                client.reset(seed=1, out=out)
        (episodes / "link").parent.mkdir(parents=True, exist_ok=True)
        (episodes / "link").symlink_to(tmp_path)  # inside by name, outside in fact
        with pytest.raises(ServerError, match="leads out of the episodes folder"):
            client.reset(seed=1, out="link/run")
        first = client.reset(seed=1, out="named/run")
        assert first.step == 240 + 8 and client.episode == str(episodes / "named" / "run")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["episodes"]


@pytest.mark.parametrize("port", ["99999", "-1", "0x50", ""])
def test_serve_refuses_a_port_out_of_range_in_one_line(port, tmp_path):
    done = _serve_bound_to(port, tmp_path)
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert line.startswith("error: cannot bind") and "1-65535" in line and "\n" not in line
