"""Any external program as a benchmark method, described by a small YAML file.

```yaml
name: orbslam3_rgbd
command: "/opt/orbslam3/rgbd_tum Vocabulary/ORBvoc.txt TUM3.yaml {export} {export}/associations.txt"
format: tum                      # export the method reads (or `sequence`: the twinsim folder)
trajectory: "{trial}/CameraTrajectory.txt"   # the TUM trajectory it writes
timeout_s: 600
target: cam0                     # optional: stream whose ground truth the estimate follows
```

Placeholders: `{export}` (the exported folder), `{sequence}` (the twinsim sequence), `{trial}`
(the trial's own folder, also the working directory), `{seed}`, `{trial_index}`. A crash, a
time-out or a missing trajectory fails the trial; the program's output stays in its log.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from twinsim.configmodel import format_validation_error
from twinsim.eval.io import read_tum, write_tum
from twinsim.eval.methods.base import ESTIMATE_FILE, Log, Method, MethodError, first_stream
from twinsim.sequence import SequenceReader


class ExternalSpec(BaseModel):
    """The YAML entry of an external method."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    command: str
    format: str = "sequence"
    trajectory: str
    timeout_s: float = Field(default=600.0, gt=0)
    target: str | None = None


def load_external(path: str | Path) -> ExternalMethod:
    """Read an external method's YAML, with one-line errors naming the bad field."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise MethodError(f"{path}: cannot read the method YAML ({exc})") from None
    try:
        spec = ExternalSpec.model_validate(data)
    except ValidationError as exc:
        message = format_validation_error(exc, ExternalSpec, data, what="method field")
        raise MethodError(f"{path}: {message}") from None
    return ExternalMethod(spec, path)


class ExternalMethod(Method):
    """Runs the command template on an export of the sequence and reads back its TUM file."""

    def __init__(self, spec: ExternalSpec, source: Path) -> None:
        self.spec = spec
        self.source = source
        self.name = spec.name

    @property
    def export_format(self) -> str | None:
        """The export the program consumes (None: it reads the twinsim sequence itself)."""
        return None if self.spec.format == "sequence" else self.spec.format

    def target_stream(self, seq: SequenceReader) -> str:
        return self.spec.target or first_stream(seq, "camera")

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
        try:
            command = self.spec.command.format(**fields)
            trajectory = Path(self.spec.trajectory.format(**fields))
        except (KeyError, IndexError) as exc:
            raise MethodError(
                f"{self.source}: unknown placeholder {exc} in command or trajectory"
            ) from None
        argv = shlex.split(command)
        if not argv or (shutil.which(argv[0]) is None and not Path(argv[0]).is_file()):
            raise MethodError(f"{self.name}: program {argv[0] if argv else ''!r} not found")
        log(f"$ {command}")
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
        write_tum(estimate, read_tum(trajectory))
        return estimate
