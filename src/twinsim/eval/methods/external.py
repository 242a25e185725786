"""Any external program as a benchmark method, described by a small YAML file.

```yaml
name: orbslam3_rgbd
command: "/opt/orbslam3/rgbd_tum Vocabulary/ORBvoc.txt TUM3.yaml {export} {export}/associations.txt"
format: tum                      # export the method reads (or `sequence`: the twinsim folder)
trajectory: "{trial}/CameraTrajectory.txt"   # the TUM trajectory it writes
timeout_s: 600
target: cam0                     # optional: stream whose ground truth the estimate follows
alignment: se3                   # se3 (stereo, RGB-D, LiDAR) or sim3 (monocular: scale unknown)
```

The command is split into words once, shell-style, when the YAML is read; placeholders are then
filled in word by word, so a path with spaces or quotes stays one argument. Placeholders:
`{export}` (the exported folder), `{sequence}` (the twinsim sequence), `{trial}` (the trial's own
folder, also the working directory), `{seed}`, `{trial_index}`. The program (first word, no
placeholders) is resolved when the YAML is read: a word with a `/` relative to the YAML's folder,
a bare name on `PATH`. A crash, a time-out or a missing trajectory fails the trial; the program's
output stays in its log.
"""

from __future__ import annotations

import os
import shlex
import shutil
import string
import subprocess
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from twinsim.configmodel import load_yaml_model
from twinsim.eval.io import read_tum, write_tum
from twinsim.eval.methods.base import ESTIMATE_FILE, Log, Method, MethodError, first_stream
from twinsim.sequence import SequenceReader

#: The placeholders a command or trajectory template may use.
PLACEHOLDERS = ("export", "sequence", "trial", "seed", "trial_index")


class ExternalSpec(BaseModel):
    """The YAML entry of an external method."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    command: str
    format: str = "sequence"
    trajectory: str
    timeout_s: float = Field(default=600.0, gt=0)
    target: str | None = None
    alignment: Literal["se3", "sim3"] = "se3"


def load_external(path: str | Path) -> ExternalMethod:
    """Read an external method's YAML, with one-line errors naming the bad field."""
    path = Path(path).absolute()
    return ExternalMethod(load_yaml_model(path, ExternalSpec, "method field", MethodError), path)


def _check_template(source: Path, field: str, template: str) -> None:
    """Refuse a template word with an unknown placeholder or a stray brace (at load time)."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise MethodError(f"{source}: {field}: bad placeholder in {template!r} ({exc})") from None
    for _, placeholder, spec, conversion in parsed:
        if placeholder is None:
            continue
        if placeholder not in PLACEHOLDERS or spec or conversion:
            raw = (
                placeholder
                + (f"!{conversion}" if conversion else "")
                + (f":{spec}" if spec else "")
            )
            raise MethodError(
                f"{source}: {field}: unknown placeholder {{{raw}}} in {template!r}; allowed: "
                f"{', '.join('{' + p + '}' for p in PLACEHOLDERS)} (no conversion or format)"
            )


def resolve_program(source: Path, word: str) -> str:
    """The program's absolute path: a word with a `/` relative to the YAML's folder, a bare name
    looked up on PATH; the same path is checked here and run in every trial."""
    if "/" in word:
        program = source.parent / word
        if not (program.is_file() and os.access(program, os.X_OK)):
            raise MethodError(
                f"{source}: command: program {word!r} ({program}) is not an executable file "
                "(a path with '/' is relative to the YAML's folder)"
            )
        return os.path.abspath(program)  # not resolved: a venv's python is a symlink
    found = shutil.which(word)
    if found is None:
        raise MethodError(f"{source}: command: program {word!r} not found on PATH")
    return os.path.abspath(found)


class ExternalMethod(Method):
    """Runs the command template on an export of the sequence and reads back its TUM file."""

    def __init__(self, spec: ExternalSpec, source: Path) -> None:
        self.spec = spec
        self.source = source
        self.name = spec.name
        self.alignment = spec.alignment
        try:
            words = shlex.split(spec.command)
        except ValueError as exc:
            raise MethodError(f"{source}: command: cannot split {spec.command!r} ({exc})") from None
        if not words:
            raise MethodError(f"{source}: command: is empty")
        for word in words:
            _check_template(source, "command", word)
        _check_template(source, "trajectory", spec.trajectory)
        try:
            program = words[0].format()
        except (KeyError, IndexError):
            raise MethodError(
                f"{source}: command: the program {words[0]!r} takes no placeholders"
            ) from None
        self.program = resolve_program(source, program)
        self.arguments = words[1:]

    @property
    def export_format(self) -> str | None:
        """The export the program consumes (None: it reads the twinsim sequence itself)."""
        return None if self.spec.format == "sequence" else self.spec.format

    def target_stream(self, seq: SequenceReader) -> str:
        return self.spec.target or first_stream(seq, "camera")

    def argv(self, fields: dict[str, str]) -> list[str]:
        """The program and its arguments for one trial, each placeholder filled in its own word."""
        return [self.program, *(word.format(**fields) for word in self.arguments)]

    def run(
        self, seq_path: Path, trial_dir: Path, seed: int, log: Log, export_dir: Path | None = None
    ) -> Path:
        fields = {
            "export": str(export_dir or seq_path),
            "sequence": str(seq_path),
            "trial": str(trial_dir),
            "seed": str(seed),
            "trial_index": trial_dir.name.rsplit("_", 1)[-1],
        }
        argv = self.argv(fields)
        trajectory = Path(self.spec.trajectory.format(**fields))
        log(f"$ {shlex.join(argv)}")
        with open(trial_dir / "program.log", "w", encoding="utf-8") as out:
            try:
                done = subprocess.run(
                    argv,
                    cwd=trial_dir,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    timeout=self.spec.timeout_s,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise MethodError(
                    f"{self.name}: timed out after {self.spec.timeout_s:g} s (see program.log)"
                ) from None
        if done.returncode != 0:
            raise MethodError(f"{self.name}: exited with code {done.returncode} (see program.log)")
        if not trajectory.is_absolute():
            trajectory = trial_dir / trajectory
        if not trajectory.is_file():
            raise MethodError(f"{self.name}: wrote no trajectory at {trajectory}")
        estimate = trial_dir / ESTIMATE_FILE
        traj = read_tum(trajectory)
        for note in traj.notes:  # estimate.tum is written clean: the notes live on in the log
            log(f"note: {note}")
        write_tum(estimate, traj)
        return estimate
