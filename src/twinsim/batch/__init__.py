"""Datasets at scale: a plan's matrix of runs, twins, noisy copies, exports and benchmarks,
run by local processes or Ray into one resumable dataset folder (`twinsim batch`)."""

from twinsim._lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "dataset_summary": "twinsim.batch.card",
        "BatchProgress": "twinsim.batch.driver",
        "BatchResult": "twinsim.batch.driver",
        "plan_jobs": "twinsim.batch.driver",
        "run_batch": "twinsim.batch.driver",
        "MANIFEST": "twinsim.batch.manifest",
        "read_manifest": "twinsim.batch.manifest",
        "Job": "twinsim.batch.plan",
        "Plan": "twinsim.batch.plan",
        "PlanError": "twinsim.batch.plan",
        "job_graph": "twinsim.batch.plan",
        "load_plan": "twinsim.batch.plan",
    },
)

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
