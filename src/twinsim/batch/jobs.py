"""The one job function both executors call: a job's output written under a temporary name,
checked, and renamed into the dataset only when complete.

`execute(job, dataset)` never raises: a failure is returned (with its error and the log that
holds its traceback), so one bad cell never stops the others. A finished job also leaves a
record of its own (`.batch/done/<job>.json`, written after the rename) from which a driver that
was killed before it could note the job in the manifest adopts it on the next run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from twinsim.atomic import write_text_atomic
from twinsim.batch.plan import Job

#: where jobs keep their own records and logs, inside the dataset
STATE = ".batch"
LOGS = "logs"


def job_key(job_id: str) -> str:
    """A job id as one file name (`runs/a` → `runs__a`)."""
    return job_id.replace("/", "__")


def log_path(job_id: str) -> str:
    """A job's log, relative to the dataset."""
    return f"{LOGS}/{job_key(job_id)}.log"


def done_record(dataset: Path, job_id: str) -> Path:
    """The file a finished job writes after its output is in place."""
    return dataset / STATE / "done" / f"{job_key(job_id)}.json"


def tree_checksum(folder: Path) -> tuple[str, int]:
    """sha256 over every file below `folder` (relative path, size, bytes; sorted) and the
    total size in bytes: the same for the same content wherever the folder is."""
    digest, total = hashlib.sha256(), 0
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    for path in files:
        size = path.stat().st_size
        total += size
        digest.update(f"{path.relative_to(folder).as_posix()}\0{size}\0".encode())
        with path.open("rb") as f:  # in chunks: a bag export can be gigabytes
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    return "sha256:" + digest.hexdigest(), total


def _run(job: Job, dataset: Path, tmp: Path) -> dict:
    from twinsim.config import load_config
    from twinsim.sim import run

    p = job.params
    run(load_config(p["config"], p["set"], seed=p["seed"], duration_s=p["duration"]), tmp)
    return {}


def _twin(job: Job, dataset: Path, tmp: Path) -> dict:
    from twinsim.replay import replay
    from twinsim.replay.variations import parse_variations

    replay(dataset / job.deps[0], tmp, parse_variations(job.params))
    return {}


def _noise(job: Job, dataset: Path, tmp: Path) -> dict:
    from twinsim.noise import NoiseProfile, apply_noise

    profile = NoiseProfile.model_validate(job.params["profile"])
    apply_noise(dataset / job.deps[0], tmp, profile, seed=job.params["seed"])
    return {}


def _export(job: Job, dataset: Path, tmp: Path) -> dict:
    from twinsim.export import export_sequence

    export_sequence(dataset / job.deps[0], job.params["format"], tmp, **job.params["options"])
    return {}


def _bench(job: Job, dataset: Path, tmp: Path) -> dict:
    from twinsim.eval.harness import bench

    p = job.params
    report = bench(
        [p["method"]], [dataset / job.deps[0]], p["trials"], tmp, workers=1, seed=p["seed"]
    )
    ates = [r.evaluation.ate_rmse for r in report.results if r.ok and r.evaluation is not None]
    ok = sum(r.ok for r in report.results)
    return {"trials_ok": ok, "ate_rmse_mean": sum(ates) / len(ates) if ates else None}


_RUNNERS: dict[str, Callable[[Job, Path, Path], dict]] = {
    "run": _run,
    "twin": _twin,
    "noise": _noise,
    "export": _export,
    "bench": _bench,
}
#: the job types whose output is a sequence folder
SEQUENCE_TYPES = frozenset({"run", "twin", "noise"})


def sequence_stats(folder: Path) -> dict:
    """What the dataset card shows of one sequence, from its metadata."""
    meta = json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
    streams = meta.get("streams", {})
    cameras = [n for n, s in streams.items() if s.get("type") == "camera"]
    hz, (k0, k1) = meta.get("physics_hz", 1), meta.get("recorded_steps", [0, 0])
    dynamic = (meta.get("statistics") or {}).get("dynamic_content") or {}
    return {
        "frames": streams[cameras[0]].get("count") if cameras else 0,
        "camera": cameras[0] if cameras else None,
        "duration_s": (k1 - k0) / hz,
        "people_placed": (meta.get("people") or {}).get("placed", 0),
        "dynamic_fraction": dynamic.get("mean_dynamic_coverage"),
        "statistics": meta.get("statistics") or {},
    }


def _check_sequence(folder: Path) -> None:
    from twinsim.sequence import validate_sequence

    report = validate_sequence(folder, decode=False)
    if not report.ok:
        raise RuntimeError(f"the output does not validate: {report.problems[0]}")


def _move_into_place(tmp: Path, final: Path) -> None:
    """Rename `tmp` to `final`; an older output there (another config) is replaced."""
    if final.exists():
        stale = final.with_name(f".{final.name}.stale")
        shutil.rmtree(stale, ignore_errors=True)
        final.rename(stale)
        tmp.rename(final)
        shutil.rmtree(stale)
    else:
        tmp.rename(final)


def execute(job: Job, dataset: str | Path) -> dict:
    """Run `job` into `dataset/<job.id>` (temporary name, renamed when complete and checked);
    returns its record: status, timings, host, output checksum and size, or the error."""
    dataset = Path(dataset)
    final = dataset / job.id
    tmp = final.with_name(f".{final.name}.partial")
    log_file = dataset / log_path(job.id)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    record = {"id": job.id, "type": job.type, "config_hash": job.config_hash}
    record |= {"host": socket.gethostname(), "pid": os.getpid(), "started": time.time()}
    start = time.perf_counter()
    with open(log_file, "w", encoding="utf-8") as log:
        log.write(f"{job.type} {job.id}\nparams {json.dumps(job.params, sort_keys=True)}\n")
        try:
            shutil.rmtree(tmp, ignore_errors=True)  # an interrupted attempt's
            done_record(dataset, job.id).unlink(missing_ok=True)
            tmp.parent.mkdir(parents=True, exist_ok=True)
            result = _RUNNERS[job.type](job, dataset, tmp)
            if job.type in SEQUENCE_TYPES:
                _check_sequence(tmp)
                record["stats"] = sequence_stats(tmp)
            record["checksum"], record["size_bytes"] = tree_checksum(tmp)
            record["result"] = result
            _move_into_place(tmp, final)
            record["status"] = "done"
        except Exception as exc:  # a failed job is a record, never a failed batch
            log.write(traceback.format_exc())
            record |= {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
            shutil.rmtree(tmp, ignore_errors=True)
        record |= {"finished": time.time(), "wall_s": time.perf_counter() - start}
        record["log"] = log_path(job.id)
        log.write(f"{record['status']} after {record['wall_s']:.2f} s\n")
    if record["status"] == "done":
        path = done_record(dataset, job.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(record, sort_keys=True) + "\n")
    return record
