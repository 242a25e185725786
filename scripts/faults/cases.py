"""The fault sweep's shared vocabulary: a `Case` and its outcomes, running one `twinsim`
command (in process, or as a process with a timeout), digests of folders, and the sweep's own
empty working directory (a command that writes there has escaped its output folder).

Outcomes: `ok`, `refused` (exit 2, one line, no traceback; `validate` exiting 1 with
`invalid:`), `traceback`, `silent` (exit 0 on broken input, or an output that looks complete
and is not), `hang` (no exit or no reply within a timeout), `escape` (something written,
changed or deleted outside the command's own output folder), `skipped`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from twinsim.cli import app

TWINSIM = Path(sys.executable).parent / "twinsim"
#: the outcomes that fail the sweep
FAILING = ("traceback", "silent", "hang", "escape")
#: seconds a command may take before it counts as hanging
TIMEOUT_S = 120
#: the working directory of every command the sweep starts (see `use_sandbox`)
_SANDBOX: list[Path] = []


@dataclass
class Case:
    group: str
    name: str
    outcome: str
    detail: str = ""


@dataclass
class Ran:
    """One finished (or timed-out) `twinsim` process: its outcome and what it printed."""

    outcome: str
    detail: str
    code: int | None
    stdout: str = ""
    stderr: str = ""


def classify(result, broken: bool) -> tuple[str, str]:
    """The outcome of one in-process invocation."""
    text = result.output or ""
    exc = result.exception
    if "Traceback" in text or (exc is not None and not isinstance(exc, SystemExit)):
        return "traceback", f"{type(exc).__name__}: {exc}"[:200]
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if result.exit_code == 2 or (result.exit_code == 1 and "invalid:" in text):  # validate
        return "refused", (lines[-1] if lines else "")[:200]
    if result.exit_code == 0:
        return ("silent", text.strip()[-200:]) if broken else ("ok", "")
    return "traceback", f"exit {result.exit_code}: {text.strip()[-200:]}"


def invoke(args: list[str]):
    return CliRunner().invoke(app, args, catch_exceptions=True)


def use_sandbox(folder: Path) -> Path:
    """Make `folder` (created empty) the working directory of every command started here."""
    folder.mkdir(parents=True, exist_ok=True)
    _SANDBOX[:] = [folder.resolve()]
    return _SANDBOX[0]


def sandbox() -> Path:
    """The commands' working directory (a fresh temporary one unless `use_sandbox` named one)."""
    if not _SANDBOX:
        use_sandbox(Path(tempfile.mkdtemp(prefix="twinsim-sweep-cwd-")))
    return _SANDBOX[0]


def sandbox_leftovers(clear: bool = True) -> list[str]:
    """What commands left in the working directory (emptied again unless `clear` is False)."""
    folder = sandbox()
    names = sorted(os.listdir(folder))
    if clear:
        remove(*(folder / name for name in names))
    return names


def start_cli(args: list[str], cwd: Path | None = None, **popen) -> subprocess.Popen:
    """`twinsim ARGS` started in its own process group (so a hang can be killed whole)."""
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen(
        [str(TWINSIM), *map(str, args)],
        cwd=cwd or sandbox(),
        text=True,
        start_new_session=True,
        preexec_fn=_default_signals,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
        **popen,
    )


def _default_signals() -> None:
    """In the child: SIGINT back to its default (a sweep started in the background, `cmd &`,
    ignores it, and the ignoring would pass on to every command: `serve` could not be
    stopped with SIGINT)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    """Send `sig` to the process group of a `start_cli` process (it may have workers)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def finish(
    proc: subprocess.Popen, timeout: float = TIMEOUT_S, broken: bool = True, sandboxed: bool = True
) -> Ran:
    """Wait for a `start_cli` process and class it; killed (and `hang`) past `timeout`;
    `escape` if it left anything in the sandbox (`sandboxed`: it ran there, alone)."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        return Ran("hang", f"no exit within {timeout:g} s", None, out or "", err or "")
    kill_group(proc)  # workers it left behind
    ran = Ran(*outcome_of(proc.returncode, out or "", err or "", broken), proc.returncode, out, err)
    if sandboxed:
        left = sandbox_leftovers()
        if left:
            ran.outcome, ran.detail = "escape", f"left in the working directory: {left[:5]}"
    return ran


def run_cli(
    args: list[str], cwd: Path | None = None, timeout: float = TIMEOUT_S, broken: bool = True
) -> Ran:
    """Run `twinsim ARGS` as a process (working directory: the sandbox unless `cwd`) and class
    it: `hang` past `timeout`, `escape` if it left anything in the sandbox."""
    return finish(start_cli(args, cwd), timeout, broken, sandboxed=cwd is None)


def outcome_of(code: int, stdout: str, stderr: str, broken: bool) -> tuple[str, str]:
    """The outcome of a finished process from its exit code and output."""
    text = f"{stdout}\n{stderr}"
    lines = [line.strip(" │") for line in stderr.splitlines() if line.strip(" │╭╰─")]
    if "Traceback" in text or "RecursionError" in text:
        raised = [line for line in lines if re.match(r"^[\w.]+(Error|Exception|Exit)\b", line)]
        return "traceback", shorten((raised or lines or [""])[-1])
    if code == 2 or (code == 1 and "invalid:" in text):
        errors = [line for line in lines if line.startswith(("error:", "invalid:", "Invalid"))]
        errors = [line for line in lines if line.startswith("✗")][:1] or errors  # validate
        return "refused", shorten((errors or lines or [""])[-1])
    if code == 0:
        said = [line.strip() for line in stdout.splitlines() if line.strip()]
        said = [line for line in said if "written to" in line] or said[:1] or ["(nothing)"]
        return ("silent", shorten(f"exit 0: {said[-1]}")) if broken else ("ok", "")
    return "traceback", shorten(f"exit {code}: {' | '.join(lines[-2:])}")


def shorten(text: str, limit: int = 300) -> str:
    """`text` on one line, long repeats (a 300-byte name, a/a/a/…) cut, at most `limit` long."""
    text = re.sub(
        r"(.{1,2}?)\1{15,}", lambda m: f"{m[1] * 3}…({len(m[0])} chars)", " ".join(text.split())
    )
    return text if len(text) <= limit else text[: limit - 1] + "…"


def remove(*paths: Path) -> None:
    """Delete files, links (not what they lead to) and folders; what is not there is skipped."""
    for path in paths:
        try:
            mode = os.lstat(path).st_mode
        except OSError:  # absent, or a name the system refuses (too long)
            continue
        if stat.S_ISDIR(mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def digest(path: Path) -> dict[str, str]:
    """sha256 of a file, or of every file below a folder, by relative path; links, folders and
    special files (FIFOs: never opened) are listed as such, so any change shows."""
    path = Path(path)
    if path.is_file() and not path.is_symlink():
        return {path.name: _sha(path)}
    found: dict[str, str] = {}
    if not path.is_dir():
        return found
    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            entry = Path(folder) / name
            rel = str(entry.relative_to(path))
            mode = entry.lstat().st_mode
            if stat.S_ISLNK(mode):
                found[rel] = f"link -> {os.readlink(entry)}"
            elif stat.S_ISDIR(mode):
                found[rel] = "folder"
            elif stat.S_ISREG(mode):
                found[rel] = _sha(entry)
            else:
                found[rel] = f"special {stat.S_IFMT(mode):o}"
    return found


def _sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def differences(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """What changed between two digests: `+added`, `-removed`, `~changed`, sorted."""
    added = [f"+{k}" for k in after if k not in before]
    removed = [f"-{k}" for k in before if k not in after]
    changed = [f"~{k}" for k in before if k in after and before[k] != after[k]]
    return sorted(added + removed + changed)
