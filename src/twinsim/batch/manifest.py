"""`dataset.json`: every job of a dataset, its config hash, status, timings, host and output
checksum; written whole by the driver alone (temporary file, then renamed)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from twinsim import __version__
from twinsim.atomic import write_text_atomic
from twinsim.batch.jobs import done_record
from twinsim.batch.plan import Job
from twinsim.configmodel import format_validation_error
from twinsim.errors import OutputFolderError
from twinsim.textdata import parse_json

MANIFEST = "dataset.json"
FORMAT = "twinsim-dataset"
FORMAT_VERSION = 1


def read_manifest(dataset: Path) -> dict | None:
    """The manifest of `dataset`, or None if it has none; `OutputFolderError` if unreadable."""
    path = Path(dataset) / MANIFEST
    if not path.is_file():
        return None
    try:
        data = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise OutputFolderError(f"{path}: cannot be read ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise OutputFolderError(f"{path}: is not a twinsim dataset manifest")
    try:
        _Manifest.model_validate(data)
    except ValidationError as exc:
        reason = format_validation_error(exc, what="manifest entry")
        raise OutputFolderError(f"{path}: {reason}") from None
    return data


class _Job(BaseModel):
    """The fields of a job's entry that the driver and the card read."""

    model_config = ConfigDict(extra="allow", strict=True)
    id: str
    type: str
    status: str
    config_hash: str | None = None
    attempts: int = 0
    size_bytes: int = 0
    stats: dict = {}
    result: dict = {}


class _Manifest(BaseModel):
    """The shape of `dataset.json` that the driver and `info` rely on, checked on reading so
    an edited file is one line naming the entry."""

    model_config = ConfigDict(extra="allow", strict=True)
    jobs: dict[str, _Job]
    stale: dict[str, dict]
    plan: dict = {}
    command: str = ""
    executor: str = ""


def write_manifest(dataset: Path, manifest: dict) -> None:
    """Write `manifest` (stamped with the time) in full, or leave the old one."""
    manifest["updated"] = time.time()
    text = json.dumps(manifest, indent=1, sort_keys=True, allow_nan=False) + "\n"
    write_text_atomic(Path(dataset) / MANIFEST, text)


def new_manifest(plan: dict, command: str) -> dict:
    """An empty manifest for a plan run by `command`."""
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "twinsim_version": __version__,
        "plan": plan,
        "command": command,
        "jobs": {},
        "stale": {},
    }


def _adopted(dataset: Path, job: Job) -> dict | None:
    """The record a finished job left beside its output, if it is this job's (same hash)."""
    try:
        record = json.loads(done_record(dataset, job.id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if record.get("config_hash") == job.config_hash and record.get("status") == "done":
        return record
    return None


def finished(dataset: Path, manifest: dict, job: Job) -> dict | None:
    """The record of `job` if its output is already there for the same config hash: from the
    manifest, or adopted from the job's own record (a driver killed before noting it)."""
    if not (dataset / job.id).is_dir():
        return None
    entry = manifest["jobs"].get(job.id)
    if entry and entry.get("status") == "done" and entry.get("config_hash") == job.config_hash:
        return entry
    return _adopted(dataset, job)


def reconcile(dataset: Path, manifest: dict, jobs: list[Job]) -> dict[str, dict]:
    """Bring the manifest to the plan's jobs: finished ones kept (or adopted), the others
    pending; entries of jobs the plan no longer has move to `stale`. Returns the finished."""
    ids = {job.id for job in jobs}
    for job_id in [i for i in manifest["jobs"] if i not in ids]:
        manifest["stale"][job_id] = manifest["jobs"].pop(job_id)
    done: dict[str, dict] = {}
    for job in jobs:
        before = manifest["jobs"].get(job.id) or {}
        same = before.get("config_hash") == job.config_hash
        record = finished(dataset, manifest, job)
        if record is not None:
            done[job.id] = manifest["jobs"][job.id] = record
            continue
        manifest["stale"].pop(job.id, None)
        manifest["jobs"][job.id] = {
            "id": job.id,
            "type": job.type,
            "deps": list(job.deps),
            "config_hash": job.config_hash,
            "status": "pending",
            "attempts": before.get("attempts", 0) if same else 0,
        }
    for job in jobs:
        manifest["jobs"][job.id]["deps"] = list(job.deps)
    return done
