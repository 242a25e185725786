"""External navigation policies: a program that `twinsim navbench` starts per trial and drives
through `run_episode` like any registered method, described by a small YAML file.

```yaml
name: straight_line                 # its name in the tables
protocol: zmq                       # zmq (a client of twinsim serve's protocol) or ros1
command: [python3, policy.py, "{endpoint}", --goal, "{goal_x}", "{goal_y}"]
tasks: [pointgoal]                  # registered tasks it does (TASKS); default [pointgoal]
timeout_s: 30                       # longest silence (start-up included) before the trial fails
cwd: .                              # optional, relative to the YAML's folder (its default)
env: {POLICY_GAIN: "0.8"}           # optional, added to the environment
```

`command` is a list: each argument has its placeholders filled on its own, so a value with
spaces stays one argument. The program (the first item, no placeholders) is resolved once, when
the YAML is read: a word with a `/` relative to the YAML's folder, a bare name on `PATH`.
`protocol` names an entry of `twinsim.registries.POLICY_PROTOCOLS`: the ZeroMQ adapter is
`ZmqPolicyNavigator` (here, registered by `twinsim.navigation.builtin`); the ROS 1 one lives in
`twinsim.ros1.navigation` (registered by `twinsim.ros1.policy_protocol`), imported only for a
`ros1` policy.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from twinsim.closedloop import protocol
from twinsim.configmodel import load_yaml_model
from twinsim.errors import TwinsimError
from twinsim.eval.methods.external import resolve_program  # the same rule as bench's YAMLs
from twinsim.registries import DEFAULT_TASK, POLICY_PROTOCOLS, TASKS

#: placeholders every command may use (each protocol adds its own)
COMMON_PLACEHOLDERS = ("goal_x", "goal_y", "seed", "robot", "trial", "timeout_s")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: how long a policy may take to exit by itself once its episode ended
EXIT_GRACE_S = 3.0


class PolicyError(TwinsimError):
    """An external policy's YAML is bad, or its process failed during a trial."""


@dataclass(frozen=True)
class PolicyProtocol:
    """How navbench talks to an external policy: the placeholders its command may use besides
    the common ones, and the `Navigator` adapter of one trial (policy, trial folder, seed)."""

    placeholders: tuple[str, ...]
    navigator: Callable[[ExternalPolicy, Path, int], Any]


def _registered_protocol(name: str) -> str:
    if name not in POLICY_PROTOCOLS:
        raise ValueError(POLICY_PROTOCOLS.unknown(name))
    return name


class ExternalPolicySpec(BaseModel):
    """The YAML file of an external policy."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    protocol: Annotated[str, AfterValidator(_registered_protocol)]
    command: list[str] = Field(min_length=1)
    tasks: list[str] = Field(default_factory=lambda: [DEFAULT_TASK], min_length=1)
    timeout_s: float = Field(30.0, gt=0, allow_inf_nan=False)
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)


def is_policy_file(method: str) -> bool:
    """Whether a `--methods` entry names a policy YAML rather than a registered method."""
    return method.endswith((".yaml", ".yml"))


def load_policy(path: str | Path) -> ExternalPolicy:
    """Read and check a policy YAML; every problem is one line naming the file and the field."""
    path = Path(path).absolute()
    spec = load_yaml_model(path, ExternalPolicySpec, "policy field", PolicyError)
    return ExternalPolicy(spec, path)


class ExternalPolicy:
    """A checked policy YAML: its program resolved, its arguments' placeholders known."""

    def __init__(self, spec: ExternalPolicySpec, source: Path) -> None:
        self.spec, self.source, self.name = spec, source, spec.name
        for task in spec.tasks:
            if task not in TASKS:
                raise PolicyError(f"{source}: tasks: {TASKS.unknown(task)}")
        allowed = COMMON_PLACEHOLDERS + POLICY_PROTOCOLS.get(spec.protocol).placeholders
        program, *arguments = spec.command
        if _PLACEHOLDER.search(program):
            raise PolicyError(f"{source}: command: the program {program!r} takes no placeholders")
        for argument in arguments:
            for name in _PLACEHOLDER.findall(argument):
                if name not in allowed:
                    raise PolicyError(
                        f"{source}: command: unknown placeholder {{{name}}} in {argument!r}; "
                        f"allowed with protocol {spec.protocol}: "
                        + ", ".join("{" + p + "}" for p in allowed)
                    )
        self.program = resolve_program(source, program)
        self.arguments = arguments
        self.cwd = (source.parent / (spec.cwd or ".")).absolute()
        if not self.cwd.is_dir():
            raise PolicyError(f"{source}: cwd: {self.cwd} is not a folder")

    def argv(self, fields: dict[str, str]) -> list[str]:
        """The program and its arguments for one trial, each placeholder filled in its own
        argument (a value is never split or parsed)."""
        return [self.program, *(_fill(a, fields) for a in self.arguments)]

    def start(self, fields: dict[str, str], log_path: Path, env: dict[str, str]) -> PolicyProcess:
        """Start the program for one trial, its output into `log_path`."""
        argv = self.argv(fields)
        with open(log_path, "w", encoding="utf-8") as log:
            log.write("$ " + " ".join(argv) + "\n")
            log.flush()
            process = subprocess.Popen(
                argv,
                cwd=self.cwd,
                env={**os.environ, **env, **self.spec.env},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return PolicyProcess(self.name, process, log_path)

    def navigator(self, folder: Path, seed: int):
        """The adapter that runs this policy in one trial (`folder`: the trial's own)."""
        return POLICY_PROTOCOLS.get(self.spec.protocol).navigator(self, folder, seed)

    def fields(self, context, folder: Path, seed: int, **protocol_fields: str) -> dict[str, str]:
        """The placeholder values of one trial."""
        goal_x, goal_y = (repr(float(v)) for v in list(context.goal)[:2])
        return {
            "goal_x": goal_x,
            "goal_y": goal_y,
            "seed": str(seed),
            "robot": context.robot,
            "trial": str(folder),
            "timeout_s": f"{self.spec.timeout_s:g}",
            **protocol_fields,
        }


class PolicyProcess:
    """A running policy program: whether it lives, how it ended, its log's last lines."""

    def __init__(self, name: str, process: subprocess.Popen, log_path: Path) -> None:
        self.name, self.process, self.log_path = name, process, log_path

    def alive(self) -> bool:
        return self.process.poll() is None

    def failure(self, waiting_for: str) -> PolicyError:
        """The error of a policy that exited while the trial waited for it."""
        code = self.process.returncode
        how = f"signal {-code}" if code is not None and code < 0 else f"code {code}"
        return PolicyError(
            f"policy {self.name!r} exited ({how}) while the trial waited for {waiting_for}; "
            f"its output: {self.tail()}"
        )

    def tail(self, lines: int = 5) -> str:
        """The last lines of its output, on one line."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        kept = [line.strip() for line in text.splitlines()[1:] if line.strip()][-lines:]
        return " | ".join(kept) or "(nothing)"

    def stop(self, grace_s: float = EXIT_GRACE_S) -> None:
        """Let it exit by itself within `grace_s`, then end its process group."""
        from twinsim.processes import stop

        try:
            self.process.wait(grace_s)
        except subprocess.TimeoutExpired:
            stop(self.process)


def _fill(argument: str, fields: dict[str, str]) -> str:
    """One argument with its `{name}` placeholders replaced by their values."""
    return _PLACEHOLDER.sub(lambda m: fields[m.group(1)], argument)


class ZmqPolicyNavigator:
    """A `Navigator` whose decisions come from a client of the closed-loop protocol: this side
    is the REP server (the simulator), the policy the REQ client. `reset` starts the program and
    waits for its `reset` request; each `act` replies to the pending request with the
    observations and the task, and returns the command of the policy's next `step`."""

    def __init__(self, policy: ExternalPolicy, folder: Path, seed: int) -> None:
        import zmq

        self.policy, self.folder, self.seed = policy, folder, seed
        self.timeout_s = policy.spec.timeout_s
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.REP)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.bind("tcp://127.0.0.1:*")
        self.endpoint: str = self._socket.getsockopt_string(zmq.LAST_ENDPOINT)
        self.process: PolicyProcess | None = None
        self._owed = False  # a request was received and awaits its reply
        self._last: tuple | None = None
        self._command: dict = {}

    def reset(self, context) -> None:
        """Start the policy and wait for its `reset` request (hello answered meanwhile)."""
        self.context = context
        fields = self.policy.fields(context, self.folder, self.seed, endpoint=self.endpoint)
        self.process = self.policy.start(fields, self.folder / "policy.log", {})
        self._command = {"velocity": {}} if "velocity" in context.command_space.modes else {}
        self._next("reset")

    def act(self, obs, info) -> dict:
        """Answer the pending request with this step's observations; the next step's command."""
        self._reply(obs, info)
        return self._next("step")

    def observe(self, obs, info) -> None:
        """`run_episode`'s per-step hook: keep the latest step for the last reply."""
        self._last = (obs, info)

    def close(self) -> None:
        """Answer the last pending request with the final step (done: the episode ended), let
        the program exit, and release the socket."""
        try:
            if self._owed and self._last is not None:
                obs, info = self._last
                self._reply(replace(obs, done=True), info)
            if self.process is not None:
                self.process.stop()
        finally:
            self._socket.close(linger=0)
            self._context.term()

    def _reply(self, obs, info) -> None:
        """The reply of a reset or step: observations, the episode folder and the task."""
        path = self.context.session.episode_path
        reply = protocol.ok_reply(
            observations=protocol.encode_observations(obs),
            episode=None if path is None else str(path),
            task=protocol.encode_task(self.context.task.name, info),
        )
        self._send(reply)

    def _send(self, reply: dict) -> None:
        self._socket.send(protocol.pack(reply))
        self._owed = False

    def _next(self, op: str) -> dict:
        """Wait for the policy's next `op` request (answering hello, refusing anything else);
        its command for a step. Raises when the program exits or stays silent `timeout_s`."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            while not self._socket.poll(100):
                if not self.process.alive():
                    raise self.process.failure(f"its {op} request")
                if time.monotonic() > deadline:
                    raise PolicyError(
                        f"policy {self.policy.name!r} sent no {op} request within "
                        f"{self.timeout_s:g} s (timeout_s); its output: {self.process.tail()}"
                    )
            data = self._socket.recv()
            self._owed = True
            deadline = time.monotonic() + self.timeout_s
            got = None
            try:
                got, fields = protocol.parse_request(data)
                if got == op:
                    return {} if op == "reset" else self._checked(fields.get("commands") or {})
                self._send(protocol.ok_reply(**self._answer_other(got, op)))
            except TwinsimError as exc:
                self._send(protocol.error_reply(str(exc)))
            if got == "close":
                raise PolicyError(f"policy {self.policy.name!r} closed the episode before it ended")

    def _answer_other(self, got: str, expected: str) -> dict:
        """The reply fields of a hello or a close; any other request out of turn is refused."""
        if got == "close":
            path = self.context.session.episode_path
            return {"episode": None if path is None else str(path), "ended_by": "closed"}
        if got == "hello":
            c = self.context
            return protocol.hello_fields(
                {c.robot: c.command_space},
                {c.robot: c.spec.kind},
                control_hz=c.control_hz,
                physics_hz=c.config.sim.physics_hz,
                rtf=None,
                timeout_s=self.timeout_s,
                episodes=1,
                running=True,
            )
        raise PolicyError(
            f"{got}: navbench runs one episode per trial, in lock-step; expected {expected}"
        )

    def _checked(self, commands: dict) -> dict:
        """The robot's command of a step request (bare or by robot name; empty: the last)."""
        robot = self.context.robot
        command = commands.get(robot, commands) if isinstance(commands, dict) else commands
        if command:
            self.context.command_space.parse(robot, command)
            self._command = dict(command)
        return self._command
