"""Benchmark trials (`bench`, `navbench`) as Ray tasks: the same `Job`s the local harness runs
in processes, one CPU each, their folders on a file system every node sees (as the dataset of
`twinsim batch`). A task whose worker dies gets the failed status the local harness writes."""

from __future__ import annotations

import math
from collections.abc import Sequence

from twinsim.cluster import ray_session
from twinsim.eval.harness import STATUS, Job, Progress, read_status, write_status


def _run(job: Job) -> None:
    """One trial in a Ray worker: the job writes its folder and `status.json` last."""
    job.target(*job.args)


def run_jobs_on_ray(
    jobs: Sequence[Job], address: str, workers: int, progress: Progress | None
) -> None:
    """Run every job as a Ray task at `address` (`local`: `workers` CPUs here); a trial whose
    task failed without a status gets one saying how."""
    if not jobs:
        return
    with ray_session(address, workers, "twinsim-bench") as ray:
        task = ray.remote(num_cpus=1, max_retries=0)(_run)
        running = {}
        for job in jobs:
            (job.folder / STATUS).unlink(missing_ok=True)  # a failed trial's, run again
            running[task.options(name=job.label).remote(job)] = job
        done = 0
        try:
            while running:
                ready, _ = ray.wait(list(running), num_returns=1)
                for ref in ready:
                    job = running.pop(ref)
                    try:
                        ray.get(ref)
                        why = "the Ray task ended without a status"
                    except Exception as exc:  # a dead worker, or the trial's own crash
                        why = f"the Ray task failed ({type(exc).__name__})"
                    if read_status(job.folder) is None:
                        write_status(job.folder, False, why, math.nan)
                    done += 1
                    if progress is not None:
                        progress(done, len(jobs), job.label)
        finally:
            for ref in running:  # interrupted: no trial outlives the benchmark
                ray.cancel(ref, force=True)
