"""Datasets at scale: a plan's matrix of runs, twins, noisy copies, exports and benchmarks,
run by local processes or Ray into one resumable dataset folder (`twinsim batch`)."""

from twinsim.batch.card import dataset_summary
from twinsim.batch.driver import BatchProgress, BatchResult, plan_jobs, run_batch
from twinsim.batch.manifest import MANIFEST, read_manifest
from twinsim.batch.plan import Job, Plan, PlanError, job_graph, load_plan

__all__ = [
    "MANIFEST",
    "BatchProgress",
    "BatchResult",
    "Job",
    "Plan",
    "PlanError",
    "dataset_summary",
    "job_graph",
    "load_plan",
    "plan_jobs",
    "read_manifest",
    "run_batch",
]
