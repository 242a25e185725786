"""Hostile `twinsim serve` clients: each request answered with an error reply, the server serving
on, nothing written outside its episodes folder; SIGINT stops it."""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
from pathlib import Path

import msgpack
import zmq

from faults.cases import (
    Case,
    differences,
    digest,
    invoke,
    kill_group,
    remove,
    run_cli,
    sandbox_leftovers,
    shorten,
    start_cli,
)
from faults.common import (
    free_port,
    fresh,
    watch,
)

SERVE_SETS = ["robot.kind=omni", "sensors.cam0.width=32", "sensors.cam0.height=24"]
REPLY_TIMEOUT_S = 30


def _msg(**fields) -> bytes:
    return msgpack.packb({"v": 1, **fields}, use_bin_type=True)


def _nested_msgpack(depth: int) -> bytes:
    """A reset request whose `out` is a list nested `depth` deep (packb itself would refuse)."""
    head = msgpack.packb({"v": 1, "op": "reset"}, use_bin_type=True)
    head = bytes([head[0] + 1]) + head[1:]  # a fixmap of three entries, not two
    return head + msgpack.packb("out") + b"\x91" * depth + b"\xc0"


def _hostile_messages(abs_target: Path) -> dict[str, list[list[bytes]]]:
    """Each hostile request (a list of message parts), by name; several requests in a row
    for one case where the last is the hostile one."""
    nan, inf = math.nan, math.inf
    step = lambda commands: [_msg(op="step", commands=commands)]  # noqa: E731
    return {
        "step before reset": [step({})],
        "multipart message": [[_msg(op="hello"), b"more"]],
        "empty message": [[b""]],
        "bytes not msgpack": [[b"\xc1\xc1 not json, not msgpack {"]],
        "JSON text": [[b'{"v": 1, "op": "hello"}']],
        "JSON not an object": [[b"[1, 2, 3]"]],
        "msgpack not a map": [[msgpack.packb([1, 2, 3])]],
        "v true": [[msgpack.packb({"v": True, "op": "hello"})]],
        "v missing": [[msgpack.packb({"op": "hello"})]],
        "unknown op": [[_msg(op="explode")]],
        "op a list": [[_msg(op=["hello"])]],
        "op a map": [[_msg(op={"a": 1})]],
        "unknown field": [[_msg(op="hello", extra=1)]],
        "map key a list": [[b"\x82\xa1v\x01\x91\x01\x01"]],
        "reset out absolute": [[_msg(op="reset", out=str(abs_target))]],
        "reset out ../x": [[_msg(op="reset", out="../x")]],
        "reset out empty": [[_msg(op="reset", out="")]],
        "reset out .": [[_msg(op="reset", out=".")]],
        "reset out NUL": [[_msg(op="reset", out="a\0b")]],
        "reset out 300-byte name": [[_msg(op="reset", out="x" * 300)]],
        "reset out nested 5000 folders": [[_msg(op="reset", out="a/" * 5000 + "b")]],
        "reset out nested list 100000": [[_nested_msgpack(100_000)]],
        "reset out through a link": [[_msg(op="reset", out="link/episode")]],
        "reset out a number": [[_msg(op="reset", out=5)]],
        "reset seed -1": [[_msg(op="reset", seed=-1)]],
        "reset seed 2**64-1": [[_msg(op="reset", seed=2**64 - 1)]],
        "reset seed 1.5": [[_msg(op="reset", seed=1.5)]],
        "step NaN": [step({"velocity": {"vx": nan}})],
        "step inf": [step({"velocity": {"vx": inf, "vy": -inf}})],
        "step value a list": [step({"velocity": {"vx": [1.0, 2.0, 3.0]}})],
        "step value a string": [step({"velocity": {"vx": "fast"}})],
        "step mode a number": [step({"velocity": 5})],
        "step unknown mode": [step({"warp": {"x": 1}})],
        "step unknown robot": [step({"ghost": {"velocity": {"vx": 1}}})],
        "step commands a list": [[_msg(op="step", commands=[1, 2])]],
        "step commands 1e308": [step({"velocity": {"vx": 1e308, "wz": -1e308}})],
        "step after close": [[_msg(op="close")], step({})],
        "10 MB field": [[_msg(op="hello", pad="x" * 10_000_000)]],
        "10 MB of junk": [[b"\xc1" * 10_000_000]],
    }


#: hostile-looking requests a server may also accept: the largest seed msgpack carries, and a
#: finite command far past the robot's limits (clamped, and the clamp noted in the metadata)
MAY_ACCEPT = ("reset seed 2**64-1", "step commands 1e308")


class _Served:
    """A `twinsim serve` process on a free local port, its episodes in `root/episodes`."""

    def __init__(self, root: Path, log: Path) -> None:
        self.root, self.episodes, self.log = root, root / "episodes", log
        root.mkdir(parents=True, exist_ok=True)
        self.address = f"tcp://127.0.0.1:{free_port()}"
        sets = [a for s in SERVE_SETS for a in ("--set", s)]
        args = ["serve", "tiny", "--out", self.episodes, "--bind", self.address, *sets]
        args += ["--episodes", "0", "--timeout", "60"]
        self._log = open(log, "a")  # noqa: SIM115 (closed in stop)
        self.proc = start_cli(args, stdout=self._log, stderr=subprocess.STDOUT)
        self.context = zmq.Context()

    def request(self, parts: list[bytes], timeout_s: float = REPLY_TIMEOUT_S) -> dict | None:
        """One request on a fresh REQ socket; its reply, or None past the timeout."""
        sock = self.context.socket(zmq.REQ)
        sock.setsockopt(zmq.LINGER, 0)
        try:
            sock.connect(self.address)
            sock.send_multipart(parts)
            if not sock.poll(round(1000 * timeout_s)):
                return None
            reply = msgpack.unpackb(sock.recv(), raw=False, strict_map_key=False)
            return reply if isinstance(reply, dict) else {"ok": None, "error": repr(reply)}
        finally:
            sock.close(linger=0)

    def usable(self) -> str | None:
        """None when a reset and a step are served; else what went wrong."""
        for parts in ([_msg(op="reset", seed=1)], [_msg(op="step", commands={})]):
            op = msgpack.unpackb(parts[0])["op"]
            reply = self.request(parts, timeout_s=60)
            if reply is None:
                return f"hang: no reply to a valid {op} ({self._state()})"
            if reply.get("ok") is not True:
                return f"traceback: a valid {op} refused: {reply.get('error')}"
        return None

    def _state(self) -> str:
        code = self.proc.poll()
        return "server running" if code is None else f"server exited {code}"

    def stop(self) -> tuple[str, str]:
        """SIGINT, then SIGTERM, then SIGKILL: (outcome, detail)."""
        outcome, detail = "ok", ""
        for sig, wait in ((signal.SIGINT, 30), (signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            if self.proc.poll() is not None:
                break
            self.proc.send_signal(sig)
            try:
                self.proc.wait(wait)
            except subprocess.TimeoutExpired:
                outcome, detail = "hang", f"no exit within {wait} s of {sig.name}"
        kill_group(self.proc)
        self.proc.wait()
        self._log.close()
        self.context.term()
        if outcome == "ok":
            detail = f"exit {self.proc.returncode}"
            if self.proc.returncode not in (0, 130, -signal.SIGINT):
                outcome = "traceback"
        return outcome, detail


def sweep_serve(work: Path) -> list[Case]:
    """Hostile requests to `twinsim serve`: each answered with an error reply, the server then
    still serving a reset and a step, nothing written outside its episodes folder; the server
    stops on SIGINT; bad bind addresses refused."""
    base = fresh(work / "serve")
    outside = base / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("outside the episodes folder\n")
    abs_target = base / "absolute-target"
    log = base / "server.log"
    watched = watch(outside)
    servers = [_Served(base / "root0", log)]
    killed: list[_Served] = []
    cases = []
    try:
        started = _started(servers[-1], outside)
        if started is not None:
            return [started]
        for name, requests in _hostile_messages(abs_target).items():
            cases.append(_hostile_case(servers[-1], name, requests, watched, abs_target))
            if cases[-1].outcome == "hang" or servers[-1].proc.poll() is not None:
                servers[-1].stop()  # wedged or gone: a fresh server for the cases that follow
                killed.append(servers[-1])
                servers.append(_Served(base / f"root{len(servers)}", log))
                started = _started(servers[-1], outside)
                broken = servers[-1].usable()  # an episode running, as before
                if started is not None or broken is not None:
                    kind, _, why = (broken or "").partition(": ")
                    return [*cases, started or Case("serve", "restarted server", kind, why)]
    finally:
        outcome, detail = servers[-1].stop()
    cases.append(Case("serve", "stop with SIGINT", outcome, detail))
    cases.append(_log_case(log.read_text(errors="replace"), cases))
    stopped = [s.episodes for s in servers if s not in killed] if outcome == "ok" else []
    cases += _episodes_valid(stopped)  # a server killed leaves its last episode partial
    for port in ("99999", "-1", "0x50", ""):
        args = ["serve", "tiny", "--out", base / f"bind{port}"]
        ran = run_cli([*args, "--bind", f"tcp://127.0.0.1:{port}"], timeout=60)
        cases.append(Case("serve", f"--bind tcp://127.0.0.1:{port}", ran.outcome, ran.detail))
    return cases


def _started(server: _Served, outside: Path) -> Case | None:
    """Wait for a new server's hello and put a link to `outside` in its episodes folder; a
    case when it does not answer."""
    hello = server.request([_msg(op="hello")], timeout_s=90)
    if hello is None or not hello.get("ok"):
        outcome = "hang" if hello is None else "traceback"
        tail = shorten(server.log.read_text(errors="replace")[-300:])
        return Case("serve", "start", outcome, f"hello: {hello}; log: {tail}")
    server.episodes.mkdir(exist_ok=True)
    (server.episodes / "link").symlink_to(outside, target_is_directory=True)
    return None


def _hostile_case(server: _Served, name: str, requests, watched: dict, abs_target: Path) -> Case:
    """Send the case's requests (the last is the hostile one), then a valid reset and step."""
    reply = None
    for parts in requests:
        reply = server.request(parts)
        if reply is None and server.proc.poll() is not None:
            log = server.log.read_text(errors="replace")
            return Case("serve", name, "traceback", f"server exited: {shorten(log[-200:])}")
        if reply is None:
            return Case("serve", name, "hang", f"no reply within {REPLY_TIMEOUT_S} s")
    if reply.get("ok") is True:
        silent = name not in MAY_ACCEPT
        outcome, detail = ("silent", "accepted") if silent else ("ok", "accepted")
    elif "internal error" in str(reply.get("error")):
        outcome, detail = "traceback", shorten(str(reply.get("error")))
    else:
        outcome, detail = "refused", shorten(str(reply.get("error")))
    broken = server.usable()
    if broken is not None:
        kind, _, why = broken.partition(": ")
        outcome, detail = kind, f"after the reply ({detail[:120]}): {why}"
    parent = sorted(os.listdir(server.root))
    escaped = [f"{server.root}: {parent}"] if parent != ["episodes"] else []
    escaped += [f"{abs_target} created"] if abs_target.exists() else []
    escaped += [f"working directory: {left}" for left in [sandbox_leftovers()] if left]
    escaped += [f"outside: {d[:3]}" for p, b in watched.items() if (d := differences(b, digest(p)))]
    if escaped:
        outcome, detail = "escape", f"{'; '.join(escaped)[:300]} ({outcome}: {detail[:100]})"
        remove(abs_target)
    return Case("serve", name, outcome, detail)


def _log_case(text: str, cases: list[Case]) -> Case:
    """The server's log: a traceback beyond those of the `internal error` replies counted
    already is one more."""
    logged = text.count("Traceback (most recent call last)")
    replied = sum("internal error" in c.detail for c in cases)
    detail = f"{logged} tracebacks logged, {replied} internal error replies"
    if logged <= replied:
        return Case("serve", "server log", "ok", detail)
    raised = [line for line in text.splitlines() if re.match(r"^[\w.]+(Error|Exception)\b", line)]
    return Case("serve", "server log", "traceback", f"{detail}; last: {raised[-1:]}"[:300])


def _episodes_valid(roots: list[Path]) -> list[Case]:
    """Every episode the servers recorded is a valid sequence once they have stopped."""
    folders = sorted(p for r in roots for p in r.iterdir() if p.is_dir() and not p.is_symlink())
    invalid = [p.name for p in folders if invoke(["validate", str(p)]).exit_code != 0]
    outcome = "silent" if invalid else "ok"
    detail = f"{len(invalid)} of {len(folders)} invalid: {invalid[:4]}"
    return [Case("serve", "episodes recorded are valid", outcome, detail)]
