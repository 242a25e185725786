"""`TwinsimClient`: drive a `twinsim serve` server from Python, with the same reset/step a
`Session` offers and the same `Observations` back (their arrays read-only views on the
message). Every request waits at most `timeout_s`; an error reply or a timeout raises.
"""

from __future__ import annotations

from collections.abc import Mapping

import zmq

from twinsim.closedloop import protocol
from twinsim.closedloop.observations import Observations
from twinsim.errors import TwinsimError


class ServerError(TwinsimError):
    """The server refused a request (its one-line reason is the message)."""


class ServerTimeoutError(TwinsimError):
    """The server did not answer within the client's timeout."""


class TwinsimClient:
    """A REQ connection to the server at `address` (e.g. `tcp://127.0.0.1:5555`)."""

    def __init__(self, address: str, timeout_s: float = 30.0) -> None:
        self.address, self.timeout_s = address, timeout_s
        self.episode: str | None = None  # the folder of the episode last reset, stepped or closed
        #: the last reset or step reply's `task` (goal, distances, success; protocol 1.1), or
        #: None where the server runs no task (`twinsim serve`)
        self.task: dict | None = None
        self._context = zmq.Context()
        self._socket = self._connect()

    def hello(self) -> dict:
        """The server's protocol version, robots (kind, command modes and their fields),
        control and physics rates, mode (`lockstep` or `free_running`), rtf and timeout."""
        return self._call("hello")

    def reset(
        self,
        seed: int | None = None,
        out: str | None = None,
        *,
        weather: Mapping | None = None,
        light: Mapping | None = None,
    ) -> Observations:
        """Start an episode (ending the current one); its first observations. `weather`,
        `light`: the episode's config sections of those names (e.g. `{"fog": 0.6}`,
        `{"preset": "night"}`) in place of the server's config's; protocol 1.2, sent only
        when given (a 1.1 server refuses them)."""
        sections = {
            k: dict(v) for k, v in (("weather", weather), ("light", light)) if v is not None
        }
        return self._observations(self._call("reset", seed=seed, out=out, **sections))

    def step(self, commands: Mapping | None = None) -> Observations:
        """Send commands (robot → `{mode: {field: value}}`, or one robot's command bare) and
        get the readings of the period (lock-step) or since the last reply (free-running)."""
        return self._observations(self._call("step", commands=dict(commands or {})))

    def close(self) -> str | None:
        """End the episode; its folder on the server (None when it records nothing)."""
        self.episode = self._call("close")["episode"]
        return self.episode

    def disconnect(self) -> None:
        """Drop the connection (the episode runs on until closed or timed out)."""
        self._socket.close(linger=0)
        self._context.term()

    def __enter__(self) -> TwinsimClient:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.disconnect()

    def _connect(self) -> zmq.Socket:
        """A fresh REQ socket (a REQ socket that missed its reply cannot send again)."""
        socket = self._context.socket(zmq.REQ)
        socket.setsockopt(zmq.LINGER, 0)
        socket.connect(self.address)
        return socket

    def _call(self, op: str, **fields) -> dict:
        """One request and its checked reply, less `v` and `ok`."""
        self._socket.send(protocol.pack(protocol.request(op, **fields)))
        if not self._socket.poll(round(1000 * self.timeout_s)):
            self._socket.close(linger=0)
            self._socket = self._connect()
            wait = f"{self.timeout_s:g} s"
            raise ServerTimeoutError(f"{op}: no reply from {self.address} within {wait}")
        reply = protocol.unpack(self._socket.recv())
        if not reply.get("ok"):
            raise ServerError(f"{op}: {reply.get('error', 'refused without a reason')}")
        return {k: v for k, v in reply.items() if k not in ("v", "ok")}

    def _observations(self, reply: dict) -> Observations:
        """The decoded observations of a reset or step reply; notes the episode folder and
        the task's state."""
        self.episode, self.task = reply["episode"], reply.get("task")
        return protocol.decode_observations(reply["observations"])
