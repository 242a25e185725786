"""`validate_sequence`: every check a downstream tool relies on, each failure named precisely.

Checks the completion marker and status, metadata and scene parse, every file against
`checksums.csv` (where the sequence has one), and hands every stream to
its check: a registered sensor kind's `validate_stream` hook for a sensor stream (cameras decode
every image and boxes.jsonl line, LiDARs every scan, ...), the table checks (`data.csv`: counts
against the metadata and the step clock, exact integer timestamps, CSV cells) for the rest.
The checks themselves live in `twinsim.sequence.stream_checks`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from twinsim.atomic import special_entries
from twinsim.errors import SequenceError
from twinsim.model.layout import ASSETS, CHECKSUMS, INCOMPLETE, METADATA, SCENE, STATUS_COMPLETE
from twinsim.model.scene import SceneSpec
from twinsim.registries import SENSORS
from twinsim.sequence.assets import asset_problems
from twinsim.sequence.checksums import checksum_problems
from twinsim.sequence.contacts import check_contacts
from twinsim.sequence.reader import read_metadata
from twinsim.sequence.stream_checks import (
    SequenceContext,
    StreamCheck,
    check_pose_table,
    check_table,
)

#: Checks of stream types no sensor kind owns (ground truth, robot state); other types are tables.
_OTHER_TYPES = {"pose": check_pose_table, "contacts": check_contacts}


@dataclass
class ValidationReport:
    """Outcome of `validate_sequence`: ok iff no problems; `checked` counts what was read."""

    ok: bool
    problems: list[str]
    checked: dict[str, int] = field(default_factory=dict)


def validate_sequence(path: str | Path, *, decode: bool = True) -> ValidationReport:
    """Check a sequence folder against docs/sequence-format.md and list every problem found.

    `decode=False` is the quick check every reader runs (`open_sequence`): metadata, scene,
    every index table and timestamp, every file present, and every file's size and CRC-32
    against `checksums.csv` (CRC-32 runs at several GB/s, so this costs about one read of the
    folder); images and sweeps are not decoded."""
    path = Path(path)
    problems: list[str] = []
    checked = {"streams": 0, "rows": 0, "frames": 0, "files": 0}
    if not path.is_dir():
        return ValidationReport(False, [f"{path}: no such sequence folder"], checked)
    special = special_entries(path)
    if special:  # nothing is read: a FIFO would block, a link lead out of the folder
        return ValidationReport(False, special, checked)
    if (path / INCOMPLETE).exists():
        problems.append(
            f"{INCOMPLETE} marker present: the run was interrupted or is still being written, "
            "so the sequence is partial"
        )
    try:
        metadata = read_metadata(path)
    except SequenceError as exc:
        return ValidationReport(False, [*problems, str(exc)], checked)
    status = metadata.get("status")
    if status != STATUS_COMPLETE:
        problems.append(
            f"{METADATA}: status is {status!r}, not {STATUS_COMPLETE!r}: the run was interrupted "
            "or the sequence is partial"
        )
    _check_scene(path, problems, decode)
    context = SequenceContext.from_metadata(metadata, problems)
    if context is not None:
        for name, info in metadata["streams"].items():
            checked["streams"] += 1
            if not isinstance(info, dict) or not (path / name).is_dir():
                problems.append(f"{name}: listed in {METADATA} but its folder does not exist")
            else:
                check = StreamCheck(path, name, info, context, problems, checked, decode)
                _check_stream(check)
    for child in sorted(path.iterdir()):
        if child.is_dir() and child.name not in metadata["streams"] and child.name != ASSETS:
            problems.append(f"{child.name}/: folder is not a stream listed in {METADATA}")
    if "checksums" in metadata or (path / CHECKSUMS).exists():  # older sequences have none
        problems += checksum_problems(path)
    return ValidationReport(not problems, problems, checked)


def _check_stream(check: StreamCheck) -> None:
    """A stream whose type is a registered sensor kind is checked by that kind; others here."""
    kind = check.info.get("type")
    kind = kind if isinstance(kind, str) else ""
    if kind in SENSORS:
        SENSORS.get(kind).validate_stream(check)
    else:
        _OTHER_TYPES.get(kind, check_table)(check)


def _check_scene(path: Path, problems: list[str], decode: bool) -> None:
    """The scene parses, and its mesh assets (`assets/`) are there, whole and alone."""
    try:
        scene = SceneSpec.from_json((path / SCENE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        reason = " ".join(str(exc).split())
        problems.append(f"{SCENE}: cannot be parsed as a SceneSpec ({reason})")
        return
    problems += asset_problems(path, scene, decode)
