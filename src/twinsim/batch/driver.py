"""`run_batch`: a plan's job graph through an executor into a dataset folder, resumably.

Jobs whose output is there for the same config hash are skipped; the rest run as soon as
their inputs are done (or, on Ray, in flight); a failed job is retried up to the plan's
`retries` and then reported, its dependents blocked, the others going on. The driver alone
writes `dataset.json`, after every finished job, so killing it loses only the jobs in flight.
"""

from __future__ import annotations

import fcntl
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from twinsim.atomic import check_names, check_plain_folder
from twinsim.batch.executors import make_executor
from twinsim.batch.jobs import STATE
from twinsim.batch.manifest import new_manifest, read_manifest, reconcile, write_manifest
from twinsim.batch.plan import Job, Plan, job_graph, load_plan
from twinsim.errors import OutputFolderError

#: the states a job goes through (blocked: an input failed for good)
STATES = ("pending", "running", "done", "failed", "blocked")


@dataclass
class BatchProgress:
    """What a progress callback gets after every change: job counts by (type, state), an
    estimate of the seconds left, and the executor's description."""

    counts: Counter
    eta_s: float | None
    elapsed_s: float
    executor: str
    last: str = ""


@dataclass
class BatchResult:
    """The outcome: every job's final state and the failed jobs' records."""

    dataset: Path
    states: dict[str, str]
    failed: list[dict] = field(default_factory=list)
    skipped: int = 0
    stale: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(state == "done" for state in self.states.values())


def prepare_dataset(out: Path) -> dict | None:
    """The manifest of an existing dataset, None for a new or empty folder; anything else
    (a non-empty folder that is no dataset) is refused."""
    manifest = read_manifest(out)
    if manifest is None and out.exists():
        if not out.is_dir():
            raise OutputFolderError(f"{out}: exists and is not a folder")
        if any(out.iterdir()):
            raise OutputFolderError(f"{out}: exists, is not empty and has no dataset.json")
    return manifest


def _lock(out: Path):
    """An exclusive lock on the dataset for this driver (released when the file closes)."""
    (out / STATE).mkdir(parents=True, exist_ok=True)
    handle = open(out / STATE / "lock", "w")  # noqa: SIM115 (held for the whole batch)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise OutputFolderError(f"{out}: another twinsim batch is writing this dataset") from None
    return handle


def _sweep_partials(out: Path) -> None:
    """Remove what interrupted jobs left under temporary names (no job is running now)."""
    for kind in ("runs", "twins", "noise", "exports", "bench"):
        for partial in (out / kind).rglob(".*.partial") if (out / kind).is_dir() else ():
            shutil.rmtree(partial, ignore_errors=True)


def plan_jobs(plan_path: str | Path) -> tuple[Plan, list[Job]]:
    """The plan in `plan_path` and its job graph (everything checked, nothing run)."""
    plan, base = load_plan(plan_path)
    return plan, job_graph(plan, base)


class _Run:
    """The driver's bookkeeping of one `run_batch`."""

    def __init__(self, jobs: list[Job], done: dict[str, dict], retries: int) -> None:
        self.jobs = {job.id: job for job in jobs}
        self.state = {job.id: "done" if job.id in done else "pending" for job in jobs}
        self.handles: dict[str, Any] = {}  # in flight: id → executor handle
        self.tries: Counter = Counter()
        self.retries = retries
        self.walls: dict[str, list[float]] = {}

    def ready(self, eager: bool) -> list[Job]:
        """Pending jobs whose inputs are done (or, `eager`, in flight); blocks those whose
        input failed for good."""
        out = []
        for job_id, job in self.jobs.items():
            if self.state[job_id] != "pending":
                continue
            deps = [self.state[d] for d in job.deps]
            if any(s in ("failed", "blocked") for s in deps):
                self.state[job_id] = "blocked"
            elif all(s == "done" or (eager and s == "running") for s in deps):
                out.append(job)
        return out

    def eta(self, parallel: int) -> float | None:
        """Seconds left: the mean time of each type's finished jobs over what is left."""
        if not self.walls:
            return None
        overall = [w for ws in self.walls.values() for w in ws]
        mean = {t: sum(ws) / len(ws) for t, ws in self.walls.items()}
        left = [
            mean.get(self.jobs[i].type, sum(overall) / len(overall))
            for i, s in self.state.items()
            if s in ("pending", "running")
        ]
        return sum(left) / max(parallel, 1)


def run_batch(
    plan_path: str | Path,
    out: str | Path,
    *,
    ray: str | None = None,
    workers: int | None = None,
    command: str = "",
    progress: Callable[[BatchProgress], None] | None = None,
) -> BatchResult:
    """Run every job of the plan not already done into the dataset folder `out`, then write
    the dataset card; `ray` is a Ray address (`local`, `auto`, HOST:PORT) or None for local
    processes (`workers` of them; one per core by default)."""
    check_names(out)
    out = Path(out).resolve()
    plan, jobs = plan_jobs(plan_path)
    manifest = prepare_dataset(out) or new_manifest({}, command)
    manifest["plan"], manifest["command"] = plan.model_dump(mode="json"), command
    executor = make_executor(ray, workers)
    try:
        executor.check(jobs)
        out.mkdir(parents=True, exist_ok=True)
        check_plain_folder(out, "write the dataset there")
        lock = _lock(out)
        try:
            return _drive(out, manifest, jobs, plan.retries, executor, progress)
        finally:
            lock.close()
    finally:
        executor.close()


def _drive(out: Path, manifest: dict, jobs: list[Job], retries: int, executor, progress):
    """Run the pending jobs through `executor`, then write the card."""
    from twinsim.batch.card import write_card

    _sweep_partials(out)
    done = reconcile(out, manifest, jobs)
    write_manifest(out, manifest)
    run = _Run(jobs, done, retries)
    parallel = executor.slots or int(getattr(executor, "cpus", 1))
    manifest["executor"] = executor.description
    start = time.perf_counter()

    def report(last: str = "") -> None:
        if progress is not None:
            counts = Counter((run.jobs[i].type, s) for i, s in run.state.items())
            elapsed = time.perf_counter() - start
            progress(BatchProgress(counts, run.eta(parallel), elapsed, executor.description, last))

    report()
    while True:
        _submit_ready(run, executor, manifest, out)
        if not run.handles:
            break
        write_manifest(out, manifest)
        report()
        for _, record in executor.wait():
            _finished(run, manifest, record)
            report(f"{record['status']}: {record['id']}")
        write_manifest(out, manifest)
    for job_id, state in run.state.items():
        if state == "blocked":
            manifest["jobs"][job_id]["status"] = "blocked"
    write_manifest(out, manifest)
    report()
    write_card(out)
    failed = [manifest["jobs"][i] for i, s in run.state.items() if s == "failed"]
    return BatchResult(out, dict(run.state), failed, len(done), sorted(manifest["stale"]))


def _submit_ready(run: _Run, executor, manifest: dict, out: Path) -> None:
    """Submit every ready job the executor has room for, marking it running."""
    for job in run.ready(executor.eager):
        if executor.slots is not None and len(run.handles) >= executor.slots:
            return
        deps = [run.handles[d] for d in job.deps if run.state[d] == "running"]
        deps += [manifest["jobs"][d] for d in job.deps if run.state[d] == "done"]
        run.handles[job.id] = executor.submit(job, str(out), deps)
        run.state[job.id] = "running"
        entry = manifest["jobs"][job.id]
        entry |= {"status": "running", "submitted": time.time()}


def _finished(run: _Run, manifest: dict, record: dict) -> None:
    """Note one job's record: done; skipped (an input failed: pending again); or failed,
    pending again while it has retries left."""
    job_id = record["id"]
    run.handles.pop(job_id, None)
    entry = manifest["jobs"][job_id]
    if record["status"] == "skipped":
        run.state[job_id] = "pending"
        entry["status"] = "pending"
        return
    run.tries[job_id] += 1
    attempts = entry.get("attempts", 0) + 1
    manifest["jobs"][job_id] = entry = {**entry, **record, "attempts": attempts}
    entry.pop("submitted", None)
    if record["status"] == "done":
        run.state[job_id] = "done"
        entry.pop("error", None)
        run.walls.setdefault(run.jobs[job_id].type, []).append(record["wall_s"])
    elif run.tries[job_id] <= run.retries:
        run.state[job_id] = entry["status"] = "pending"
    else:
        run.state[job_id] = entry["status"] = "failed"
