"""`twinsim serve` takes weather and light at reset (protocol 1.2): a served episode in fog
sees the very frames a local `Session` reset with the same weather sees; a bad section is a
one-line error reply, the episode running is left running and the server serves on."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest

from live_truth import served
from twinsim import Session
from twinsim.closedloop import protocol
from twinsim.closedloop.client import ServerError
from twinsim.config import load_config

SEED = 4
OVERRIDES = ["robot.kind=omni", "sensors.cam0.width=32", "sensors.cam0.height=24"]
COMMANDS = [{"velocity": {"vx": 0.3, "wz": 0.4}}] * 4


def _config():
    return load_config("tiny", OVERRIDES, duration_s=2.0)


def _frames(observations) -> list[tuple[int, bytes]]:
    """(index, RGB bytes) of every camera frame, in order."""
    frames = [f for o in observations for f in o.robots["robot"].frames["cam0"]]
    return [(f.index, np.ascontiguousarray(f.rgb).tobytes()) for f in frames]


def _local(weather=None, light=None) -> list[tuple[int, bytes]]:
    with Session(_config(), record=False) as session:
        observations = [session.reset(seed=SEED, weather=weather, light=light)]
        observations += [session.step(c) for c in COMMANDS]
    return _frames(observations)


@pytest.fixture(scope="module")
def local(gl_backend):
    return {"clear": _local(), "fog": _local(weather={"fog": 0.6})}


def test_a_served_reset_in_fog_sees_what_a_local_one_sees(tmp_path, local):
    assert local["fog"] != local["clear"]  # fog changes the frames: the comparison can fail
    with served(Session(_config(), tmp_path / "episodes"), episodes=2) as (_, client):
        assert client.hello()["protocol_minor"] == protocol.MINOR >= 2
        observations = [client.reset(seed=SEED, weather={"fog": 0.6})]
        observations += [client.step(c) for c in COMMANDS]
        foggy = _frames(observations)
        observations = [client.reset(seed=SEED)]  # the config's weather again: clear
        observations += [client.step(c) for c in COMMANDS]
        clear = _frames(observations)
        client.close()
    assert len(foggy) > 2
    assert foggy == local["fog"]
    assert clear == local["clear"]


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"weather": {"hail": 0.5}}, r"^reset: unknown field 'reset\.weather\.hail'; allowed"),
        ({"weather": {"fog": 2}}, r"^reset: reset\.weather\.fog: .*less than or equal to 1$"),
        ({"light": {"preset": "dawn"}}, r"^reset: reset\.light\.preset: "),
        ({"weather": [0.5]}, r"^reset: reset\.weather: a map"),
    ],
    ids=["unknown", "range", "preset", "not-a-map"],
)
def test_a_bad_section_is_one_line_and_the_server_serves_on(tmp_path, gl_backend, fields, says):
    with served(Session(_config(), tmp_path / "episodes")) as (_, client):
        first = client.reset(seed=SEED)
        with pytest.raises(ServerError, match=says) as refused:
            client._call("reset", seed=SEED, **fields)
        assert "\n" not in str(refused.value)
        # the episode is untouched and the server answers the next request
        assert client.step(COMMANDS[0]).step > first.step
        assert client.hello()["running"] is True
        client.close()


def test_the_protocol_refuses_bad_sections_before_any_server_sees_them():
    def parse(**fields):
        return protocol.parse_request(msgpack.packb(protocol.request("reset", **fields)))

    assert parse(weather={"fog": 0.6}, light={"preset": "night"})[0] == "reset"
    assert parse(weather=None)[1] == {"weather": None}
    with pytest.raises(protocol.ProtocolError, match=r"reset\.light\.intensity"):
        parse(light={"intensity": -1})
    with pytest.raises(protocol.ProtocolError, match="unknown field 'colour'"):
        parse(colour="red")  # still: only the listed fields
