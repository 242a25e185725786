"""Where jobs run: local processes (`concurrent.futures`) or Ray tasks, both calling
`twinsim.batch.jobs.execute`.

An executor submits a job with the handles of the jobs it reads still in flight (Ray passes
them as task arguments, so Ray starts a twin only once its source is complete; the local
executor is only given jobs whose inputs are done) and hands back each finished job's record.
A worker that dies (killed, out of memory) becomes a failed record naming how, never an
exception of the batch.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any

from twinsim.batch.jobs import execute, log_path
from twinsim.batch.plan import Job
from twinsim.cluster import connect
from twinsim.errors import TwinsimError


def _lost(job: Job, why: str) -> dict:
    """The record of a job whose worker never returned one."""
    now = time.time()
    return {
        "id": job.id,
        "type": job.type,
        "config_hash": job.config_hash,
        "status": "failed",
        "error": why,
        "started": now,
        "finished": now,
        "wall_s": None,
        "log": log_path(job.id),
    }


class LocalExecutor:
    """Jobs in spawned worker processes, `workers` at a time (a pool rebuilt if one dies)."""

    eager = False

    def __init__(self, workers: int) -> None:
        self.slots = workers
        self.description = f"local, {workers} worker process{'es' if workers > 1 else ''}"
        self._pool = self._new_pool()
        self._running: dict[Future, Job] = {}

    def check(self, jobs: list[Job]) -> None:
        """Nothing to refuse: local jobs use what the machine has."""

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.slots, mp_context=get_context("spawn"))

    def submit(self, job: Job, dataset: str, deps: list[Any]) -> Future:
        future = self._pool.submit(execute, job, dataset)
        self._running[future] = job
        return future

    def wait(self) -> list[tuple[Any, dict]]:
        """Block until at least one job has finished; (handle, record) of every finished one."""
        finished, _ = wait(list(self._running), return_when=FIRST_COMPLETED)
        out, broken = [], False
        for future in finished:
            job = self._running.pop(future)
            try:
                out.append((future, future.result()))
            except BrokenProcessPool:
                broken = True
                out.append((future, _lost(job, "the worker process died")))
        if broken:  # every other job in the dead pool fails with it, then a fresh pool
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def _ray_job(job: Job, dataset: str, *upstream: dict) -> dict:
    """The Ray task: skip (without an attempt) if an input failed, else `execute`."""
    bad = [u["id"] for u in upstream if u.get("status") != "done"]
    if bad:
        return _lost(job, f"input {bad[0]} did not finish") | {"status": "skipped"}
    return execute(job, dataset)


class RayExecutor:
    """Jobs as Ray tasks asking for each job type's CPUs, memory and GPUs; a job is submitted
    with its inputs' object refs, so Ray orders the graph."""

    eager = True
    slots = None

    def __init__(self, address: str, workers: int) -> None:
        self._ray = ray = connect(address, workers, "twinsim-batch")
        self.cpus = int(ray.cluster_resources().get("CPU", 1))
        self.description = f"Ray at {address} ({self.cpus} CPUs)"
        self._task = ray.remote(_ray_job)
        self._running: dict[Any, tuple[Job, list[Any]]] = {}

    def check(self, jobs: list[Job]) -> None:
        """Refuse requests the cluster can never meet (Ray would hold such a task forever)."""
        have = self._ray.cluster_resources()
        for job in jobs:
            r = job.resources
            for field, asked, key, scale in (
                ("cpus", r.cpus, "CPU", 1),
                ("gpus", r.gpus, "GPU", 1),
                ("memory_gb", r.memory_gb, "memory", 1024**3),
            ):
                total = have.get(key, 0) / scale
                if asked > total:
                    raise TwinsimError(
                        f"resources.{job.type}.{field}={asked:g}: the Ray cluster has {total:g}"
                    )

    def submit(self, job: Job, dataset: str, deps: list[Any]) -> Any:
        r = job.resources
        options = {"num_cpus": r.cpus, "num_gpus": r.gpus, "max_retries": 0, "name": job.id}
        if r.memory_gb > 0:
            options["memory"] = int(r.memory_gb * 1024**3)
        ref = self._task.options(**options).remote(job, dataset, *deps)
        self._running[ref] = (job, deps)
        return ref

    def wait(self) -> list[tuple[Any, dict]]:
        """Block until at least one task has finished; (handle, record) of every finished one."""
        refs = list(self._running)
        ready, rest = self._ray.wait(refs, num_returns=1)
        if rest:
            more, _ = self._ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        return [(ref, self._record(ref)) for ref in ready]

    def _record(self, ref: Any) -> dict:
        """The task's record, or a failed one when its worker died (skipped when the task
        never ran because an input's worker died)."""
        job, deps = self._running.pop(ref)
        try:
            return self._ray.get(ref)
        except Exception as exc:  # a dead worker, or an input's error passed on by Ray
            for dep in deps:
                try:
                    upstream = self._ray.get(dep, timeout=0)
                except Exception:
                    upstream = {"status": "failed"}
                if upstream.get("status") != "done":
                    return _lost(job, "an input did not finish") | {"status": "skipped"}
            name = type(exc).__name__
            return _lost(job, f"the Ray worker died ({name}: {str(exc).splitlines()[0]})")

    def close(self) -> None:
        for ref in self._running:
            self._ray.cancel(ref, force=True)
        self._running.clear()
        self._ray.shutdown()


def make_executor(ray_address: str | None, workers: int | None) -> LocalExecutor | RayExecutor:
    """The local executor (one worker per core by default), or Ray at `ray_address`."""
    if workers is not None and workers < 1:
        raise TwinsimError(f"--workers must be at least 1, got {workers}")
    workers = workers or os.cpu_count() or 1
    if ray_address is None:
        return LocalExecutor(workers)
    return RayExecutor(ray_address, workers)
