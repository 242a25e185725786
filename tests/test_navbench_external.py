"""External policies in `twinsim navbench`, joined by a small YAML: a ZeroMQ client of the
closed-loop protocol and a rospy node (Debian's python, a roscore per trial) each steer straight
at the goal and score success; a policy that exits at once or stays silent is a failed trial
with its reason, not a hang; a bad YAML is refused in one line before anything runs; and
`twinsim serve`, which runs no task, sends no `task` field (protocol 1.1)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from twinsim.sequence import validate_sequence

DATA = Path(__file__).parent / "data"
PYTHON = sys.executable
TWINSIM = str(Path(sys.executable).with_name("twinsim"))
SMALL = ["--set", "sensors.cam0.width=32", "--set", "sensors.cam0.height=24"]


def _yaml(path: Path, **fields) -> str:
    """A policy YAML at `path` (values written as JSON, which YAML reads)."""
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in fields.items()))
    return str(path)


def _navbench(out: Path, methods: list[str], *extra: str) -> subprocess.CompletedProcess:
    args = [TWINSIM, "navbench", "--methods", ",".join(methods), "--worlds", "apartment"]
    args += ["--adversity", "none", "--trials", "1", "--preset", "tiny", "--duration", "20"]
    args += ["--goal-min", "2", "--goal-max", "4", "--out", str(out), *SMALL, *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=240)


def _table(out: Path) -> dict[str, dict]:
    with open(out / "table.csv") as f:
        return {row["method"]: row for row in csv.DictReader(f)}


def _trial(out: Path, method: str) -> Path:
    return out / "runs" / method / "apartment" / "none" / "trial_00"


@pytest.fixture(scope="module")
def zmq_run(tmp_path_factory, gl_backend):
    """One navbench run: the ZeroMQ policy, one that exits at once and one that stays silent."""
    tmp = tmp_path_factory.mktemp("nb_zmq")
    straight = _yaml(
        tmp / "straight.yaml",
        name="straight_zmq",
        protocol="zmq",
        command=[PYTHON, str(DATA / "zmq_goal_policy.py"), "{endpoint}", "{goal_x}", "{goal_y}"],
        timeout_s=20,
    )
    dies = _yaml(
        tmp / "dies.yaml",
        name="dies",
        protocol="zmq",
        command=[PYTHON, "-c", "import sys; print('giving up'); sys.exit(3)", "{endpoint}"],
    )
    silent = _yaml(
        tmp / "silent.yaml",
        name="silent",
        protocol="zmq",
        command=[PYTHON, "-c", "import time; time.sleep(60)"],
        timeout_s=2,
    )
    start = time.monotonic()
    done = _navbench(tmp / "nb", [straight, dies, silent], "--workers", "2")
    return done, tmp / "nb", time.monotonic() - start


@pytest.mark.slow
def test_a_zeromq_policy_reaches_the_goal_in_navbench(zmq_run):
    done, out, _ = zmq_run
    assert done.returncode == 0, done.stderr
    row = _table(out)["straight_zmq"]
    trial = _trial(out, "straight_zmq")
    status = (trial / "status.json").read_text()
    assert float(row["success_rate"]) == 100.0 and row["failed"] == "0", status
    assert row["crashed"] == "0", status
    said = (trial / "policy.log").read_text()
    assert "protocol 1.2" in said and "success True" in said  # the task field of the replies
    assert json.loads((trial / "result.json").read_text())["ended_by"] == "task_done"
    assert validate_sequence(trial / "episode").ok
    assert "straight_zmq" in (out / "table.md").read_text()


@pytest.mark.slow
def test_a_policy_that_exits_or_falls_silent_is_a_crashed_trial(zmq_run):
    _, out, seconds = zmq_run
    table = _table(out)
    assert table["dies"]["crashed"] == "1" and table["dies"]["failed"] == "0"
    assert float(table["dies"]["success_rate"]) == 0.0
    status = json.loads((_trial(out, "dies") / "status.json").read_text())
    assert not status["ok"] and "exited (code 3)" in status["error"]
    assert "giving up" in status["error"]  # its own last words
    silent = json.loads((_trial(out, "silent") / "status.json").read_text())
    assert not silent["ok"] and "no reset request within 2 s" in silent["error"], silent
    assert silent["wall_s"] < 20 and seconds < 150, (silent, seconds)  # no hang


@pytest.mark.slow
@pytest.mark.ros
def test_a_ros1_policy_reaches_the_goal_in_navbench(tmp_path, gl_backend):
    policy = _yaml(
        tmp_path / "ros.yaml",
        name="straight_ros",
        protocol="ros1",
        command=["/usr/bin/python3", str(DATA / "ros1_goal_policy.py")],
        timeout_s=20,
    )
    done = _navbench(tmp_path / "nb", [policy])
    assert done.returncode == 0, done.stderr
    trial = _trial(tmp_path / "nb", "straight_ros")
    status = (trial / "status.json").read_text()
    assert float(_table(tmp_path / "nb")["straight_ros"]["success_rate"]) == 100.0, status
    assert "in world" in (trial / "policy.log").read_text()  # it got the latched goal
    assert json.loads((trial / "result.json").read_text())["ended_by"] == "task_done"


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"name": "p", "protocol": "zmq", "command": ["python3"], "speed": 2}, "speed"),
        ({"name": "p", "protocol": "grpc", "command": ["python3"]}, "protocol"),
        ({"name": "p", "protocol": "zmq", "command": ["python3", "{port}"]}, "{endpoint}"),
        ({"name": "p", "protocol": "zmq", "command": ["./nowhere"]}, "not an executable"),
        ({"name": "p", "protocol": "zmq", "command": ["python3"], "tasks": ["explore"]}, "tasks"),
    ],
)
def test_a_bad_policy_yaml_is_refused_in_one_line(tmp_path, fields, says):
    policy = _yaml(tmp_path / "bad.yaml", **fields)
    done = _navbench(tmp_path / "nb", ["planner", policy])
    assert done.returncode == 2, done.stderr
    error = done.stderr.strip()
    assert says in error and "bad.yaml" in error and "Traceback" not in error
    assert len(error.splitlines()) == 1, error
    assert not (tmp_path / "nb").exists()


def test_twinsim_serve_runs_no_task_and_sends_none(tmp_path, gl_backend):
    from live_truth import served
    from twinsim.closedloop import protocol
    from twinsim.closedloop.session import Session
    from twinsim.config import load_config

    cfg = load_config(
        "tiny", ["robot.kind=omni", "sensors.cam0.width=32", "sensors.cam0.height=24"]
    )
    with served(Session(cfg, record=False)) as (_, client):
        hello = client.hello()
        assert (hello["protocol"], hello["protocol_minor"]) == (1, protocol.MINOR)
        client.reset(seed=1)
        assert client.task is None
        client.step({"velocity": {"vx": 0.1}})
        assert client.task is None
        client.close()
