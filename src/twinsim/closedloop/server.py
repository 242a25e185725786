"""`Server`: one `Session` served over a ZeroMQ REP socket in the protocol of
`twinsim.closedloop.protocol` (`twinsim serve`).

Lock-step (the default, GRADE's software-in-the-loop): the simulation advances one control
period per step request, so the client's thinking time costs no simulated time. Free-running
(`rtf`): the simulation advances on its own at `rtf` × real time, applying the latest command
received; a step request only hands over its commands and gets back every reading made since
the previous reply. Either way the loop polls the socket with a timeout between control
periods, so a request is answered within one period and a client silent for `timeout_s`
while an episode runs ends it with `close("timeout")`. The server exits once `episodes`
episodes have ended (0: never); until then, a new client may `reset` another.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import zmq

from twinsim.assemble import build_scene
from twinsim.closedloop import protocol
from twinsim.closedloop.observations import Events, Observations, RobotObservations, Table
from twinsim.closedloop.session import Session
from twinsim.errors import TwinsimError
from twinsim.registries import ROBOTS
from twinsim.robots.common.commands import CommandError, CommandSpace

#: the longest the loop waits on its socket before looking again (for `stop`, an idle server)
_MAX_POLL_S = 0.5


class ServeError(TwinsimError):
    """The server cannot start (its address is taken or malformed)."""


class Server:
    """Serves `session` on a REP socket bound to `bind` (`tcp://host:port`; port `*` picks a
    free one, see `address`). `rtf`: free-running at that real-time factor (None: lock-step).
    `timeout_s`: the silence that ends a running episode. `episodes`: how many to serve."""

    def __init__(
        self,
        session: Session,
        bind: str = "tcp://127.0.0.1:5555",
        *,
        rtf: float | None = None,
        timeout_s: float = 10.0,
        episodes: int = 1,
        log: Callable[[str], None] | None = None,
    ) -> None:
        if rtf is not None and not rtf > 0:
            raise ServeError(f"rtf: a positive real-time factor, got {rtf}")
        if not timeout_s > 0:
            raise ServeError(f"timeout: a positive number of seconds, got {timeout_s}")
        if episodes < 0:
            raise ServeError(f"episodes: 0 (no limit) or more, got {episodes}")
        self.session, self.rtf, self.timeout_s, self.episodes = session, rtf, timeout_s, episodes
        self.log = log or (lambda line: None)
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.REP)
        self._socket.setsockopt(zmq.LINGER, 0)
        try:
            _check_port(bind)
            self._socket.bind(bind)
        except zmq.ZMQError as exc:
            self.close()
            raise ServeError(f"cannot bind {bind}: {exc}") from None
        self.address: str = self._socket.getsockopt_string(zmq.LAST_ENDPOINT)
        self._last_request = time.monotonic()
        self._spaces: dict[str, CommandSpace] | None = None
        self._kinds: dict[str, str] = {}
        # free-running state: commands not yet applied, readings not yet sent, next period due
        self._pending: dict[str, Mapping] = {}
        self._unsent: list[Observations] = []
        self._latest: Observations | None = None
        self._due = 0.0
        self._stopped = False

    @property
    def finished(self) -> bool:
        """All the episodes it serves have ended."""
        started, running = self.session.episodes, self.session.running
        return bool(self.episodes) and started - running >= self.episodes

    def serve(self) -> None:
        """Answer requests (and run free) until the last episode ends and its last readings
        are sent (free-running), or the client has been silent past the timeout."""
        while not (self._served_all() or self._stopped):
            if self._socket.poll(round(1000 * self._wait_s())):
                self._answer(self._socket.recv_multipart())
            self._tick()

    def _served_all(self) -> bool:
        """Every episode ended, and what free-running recorded since the last reply sent
        (the client's next step gets it) or its client gone silent."""
        if not self.finished:
            return False
        silent = time.monotonic() - self._last_request >= self.timeout_s
        return not self._unsent or silent

    def stop(self) -> None:
        """Make `serve` return within a poll (from another thread; the episode stays open)."""
        self._stopped = True

    def close(self) -> None:
        """Release the socket (the session is the caller's)."""
        self._socket.close(linger=0)
        self._context.term()

    def _wait_s(self) -> float:
        """How long to wait for a request before the next thing the loop must do."""
        if not self.session.running:
            return _MAX_POLL_S
        now = time.monotonic()
        wait = self._last_request + self.timeout_s - now
        if self.rtf is not None:
            wait = min(wait, self._due - now)
        return min(max(0.0, wait), _MAX_POLL_S)

    def _tick(self) -> None:
        """End a running episode whose client fell silent, or run the next free period."""
        if not self.session.running:
            return
        now = time.monotonic()
        if now - self._last_request >= self.timeout_s:
            path = self.session.close("timeout")
            self.log(f"no request for {self.timeout_s:g} s: episode {path} ended (timeout)")
        elif self.rtf is not None and now >= self._due:
            self._run_period(now)

    def _run_period(self, now: float) -> None:
        """One free-running control period with the latest commands; a late server does not
        rush to catch up more than one period."""
        observations = self.session.step(self._pending)
        self._pending = {}
        self._unsent.append(observations)
        self._latest = observations
        period = 1.0 / (self.session.control_hz * self.rtf)
        self._due = max(self._due + period, now - period)

    def _answer(self, parts: list[bytes]) -> None:
        """Reply to one request (a message of one part); whatever is wrong with it becomes an
        error reply."""
        self._last_request = time.monotonic()
        try:
            if len(parts) != 1:
                raise protocol.ProtocolError(f"a request is one message part, got {len(parts)}")
            op, fields = protocol.parse_request(parts[0])
            reply = protocol.ok_reply(**getattr(self, f"_op_{op}")(**fields))
        except TwinsimError as exc:
            reply = protocol.error_reply(str(exc))
        except Exception as exc:  # a bug must not take the server (and its episode) down
            traceback.print_exc()
            reply = protocol.error_reply(f"internal error: {type(exc).__name__}: {exc}")
        self._socket.send(protocol.pack(reply))

    def _op_hello(self) -> dict:
        """The protocol, the robots and their commands, the rates and the mode."""
        return protocol.hello_fields(
            *self._command_spaces(),
            control_hz=self.session.control_hz,
            physics_hz=self.session.config.sim.physics_hz,
            rtf=self.rtf,
            timeout_s=self.timeout_s,
            episodes=self.episodes,
            running=self.session.running,
        )

    def _op_reset(
        self,
        seed: int | None = None,
        out: str | None = None,
        weather: Mapping | None = None,
        light: Mapping | None = None,
    ) -> dict:
        """Start an episode (ending the current one) and return its first observations;
        `weather`, `light` (protocol 1.2): the episode's config sections of those names."""
        if self.episodes and self.session.episodes >= self.episodes:
            raise TwinsimError(f"this server serves {self.episodes} episode(s), all started")
        folder = None if out is None else self._episode_folder(out)
        observations = self.session.reset(seed, folder, weather=weather, light=light)
        self._pending, self._unsent, self._latest = {}, [], observations
        self._due = time.monotonic() + 1.0 / (self.session.control_hz * (self.rtf or 1.0))
        self.log(f"episode {self.session.episode_path} started (seed {seed})")
        return self._observed(observations)

    def _episode_folder(self, out: str) -> Path:
        """A client's `out` (relative, checked by the protocol) as a folder under the episodes
        folder; a link that leads out of it is refused too."""
        root = self.session.episodes_dir
        if root is None:
            raise TwinsimError("reset.out: this server records no episodes")
        folder = root / out
        if not folder.resolve().is_relative_to(root.resolve()):
            raise TwinsimError(f"reset.out: {out!r} leads out of the episodes folder {root}")
        return folder

    def _op_step(self, commands: Mapping | None = None) -> dict:
        """Lock-step: apply the commands and advance one period. Free-running: keep the
        commands for the next period and return the readings made since the last reply."""
        if self.rtf is None:
            return self._observed(self.session.step(commands))
        if not self.session.running and not self._unsent:
            raise TwinsimError("no episode running: reset to start one")
        if self.session.running:
            self._pending |= self._checked(commands or {})
        observations = merge(self._unsent) if self._unsent else _still(self._latest)
        self._unsent = []
        return self._observed(observations)

    def _op_close(self) -> dict:
        """End the episode; its folder."""
        path = self.session.close("closed")
        self._unsent = []
        return {"episode": None if path is None else str(path), "ended_by": "closed"}

    def _observed(self, observations: Observations) -> dict:
        """A reply's observations and the folder of the episode recorded."""
        path = self.session.episode_path
        return {
            "observations": protocol.encode_observations(observations),
            "episode": None if path is None else str(path),
        }

    def _checked(self, commands: Mapping) -> dict[str, Mapping]:
        """Commands by robot, each checked against its command space now (free-running
        applies them later, when no reply can refuse them)."""
        names = self.session.robots
        if len(names) == 1 and commands and names[0] not in commands:
            commands = {names[0]: commands}
        for robot, command in commands.items():
            if robot not in names:
                raise CommandError(f"robot {robot!r} is not in this world; robots: {names}")
            self.session.command_space(robot).parse(robot, command)
        return dict(commands)

    def _command_spaces(self) -> tuple[dict[str, CommandSpace], dict[str, str]]:
        """Each robot's command space and kind: the episode's, or before the first one those
        of the config's world (built once, for hello)."""
        scene = self.session.scene
        if scene is None and self._spaces is None:
            scene = build_scene(self.session.config, live=True)
        if scene is not None:
            self._spaces = {r.name: ROBOTS.get(r.kind).command_space(r) for r in scene.robots}
            self._kinds = {r.name: r.kind for r in scene.robots}
        return self._spaces, self._kinds


def _check_port(bind: str) -> None:
    """A TCP address's port is `*` or 1-65535 (ZeroMQ would take 99999 as some other port)."""
    if not bind.startswith("tcp://"):
        return
    port = bind.rpartition(":")[2]
    if port != "*" and not (port.isdigit() and 1 <= int(port) <= 65535):
        raise zmq.ZMQError(msg=f"the port must be * or 1-65535, got {port!r}")


def merge(steps: list[Observations]) -> Observations:
    """Several steps' observations as one: every reading in order, the state of the last."""
    last = steps[-1]
    robots = {name: _merge_robot([s.robots[name] for s in steps]) for name in last.robots}
    return Observations(last.step, last.t_ns, robots, last.done)


def _merge_robot(parts: list[RobotObservations]) -> RobotObservations:
    """One robot's readings of several steps, concatenated stream by stream."""
    last = parts[-1]
    return RobotObservations(
        last.T_world_body,
        last.velocity,
        tables=_merged([p.tables for p in parts], _join_tables),
        frames=_merged([p.frames for p in parts], list.__add__),
        scans=_merged([p.scans for p in parts], list.__add__),
        events=_merged([p.events for p in parts], _join_events),
        contacts=_merged([p.contacts for p in parts], lambda a, b: np.concatenate([a, b])),
        arrived=last.arrived,
    )


def _merged(streams: list[dict], join: Callable) -> dict:
    """Streams by name, each the `join` of its parts in order."""
    out: dict = {}
    for part in streams:
        for name, value in part.items():
            out[name] = join(out[name], value) if name in out else value
    return out


def _join_tables(a: Table, b: Table) -> Table:
    """Rows of `a`, then of `b`."""
    return Table(b.columns, np.concatenate([a.t_ns, b.t_ns]), np.vstack([a.values, b.values]))


def _join_events(a: Events, b: Events) -> Events:
    """Events of `a`, then of `b` (both sorted by time, `b` later)."""
    return Events(*(np.concatenate([getattr(a, k), getattr(b, k)]) for k in protocol.EVENT_FIELDS))


def _still(observations: Observations) -> Observations:
    """The latest state with no readings (a free-running step asked again before the next
    period ran)."""
    robots = {
        name: RobotObservations(r.T_world_body, r.velocity, arrived=r.arrived)
        for name, r in observations.robots.items()
    }
    return Observations(observations.step, observations.t_ns, robots, observations.done)
