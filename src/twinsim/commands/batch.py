"""`twinsim batch PLAN.yaml --out DATASET [--dry-run] [--ray ADDRESS]`: a whole matrix of
runs, twins, noisy copies, exports and benchmarks into one resumable dataset folder."""

from __future__ import annotations

import shlex
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.live import Live
from rich.table import Table
from rich.tree import Tree

from twinsim.commands.common import RayOption, console, err_console, fail
from twinsim.errors import TwinsimError

_TYPES = ("run", "twin", "noise", "export", "bench")
_STATES = ("pending", "running", "done", "failed", "blocked")


def _progress_table(progress) -> Table:
    """Jobs by type and state, with the estimate of the time left."""
    eta = "-" if progress.eta_s is None else f"{progress.eta_s:.0f} s"
    table = Table(
        title=f"twinsim batch · {progress.executor}",
        caption=f"elapsed {progress.elapsed_s:.0f} s · ETA {eta} · {progress.last}",
    )
    for column in ("job", *_STATES, "total"):
        table.add_column(column, justify="left" if column == "job" else "right")
    for kind in _TYPES:
        row = [progress.counts.get((kind, s), 0) for s in _STATES]
        if sum(row):
            table.add_row(kind, *map(str, row), str(sum(row)))
    return table


def _dry_run(jobs, out: Path | None) -> None:
    """Print the job graph: each run with what derives from it, and the counts by type."""
    from twinsim.batch.driver import prepare_dataset
    from twinsim.batch.manifest import finished

    manifest = prepare_dataset(out) if out is not None else None
    done = {j.id for j in jobs if manifest is not None and finished(out, manifest, j)}
    children: dict[str, list] = {}
    for job in jobs:
        for dep in job.deps:
            children.setdefault(dep, []).append(job)

    def add(node: Tree, job) -> None:
        mark = " [green](done)[/]" if job.id in done else ""
        branch = node.add(f"[bold]{job.type}[/] {job.id}{mark}")
        for child in children.get(job.id, []):
            add(branch, child)

    tree = Tree("job graph (runs → twins, noise → exports, bench)")
    for job in jobs:
        if not job.deps:
            add(tree, job)
    console.print(tree)
    counts = Counter(job.type for job in jobs)
    todo = Counter(job.type for job in jobs if job.id not in done)
    summary = Table(title="jobs")
    for column in ("type", "total", "to run"):
        summary.add_column(column)
    for kind in _TYPES:
        if counts[kind]:
            summary.add_row(kind, str(counts[kind]), str(todo[kind]))
    summary.add_row("all", str(len(jobs)), str(sum(todo.values())))
    console.print(summary)


def batch(
    plan: Annotated[Path, typer.Argument(help="The batch plan (YAML; see docs/batch.md).")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Dataset folder (new, empty, or to resume).")
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Print the expanded job graph and counts; run nothing."),
    ] = False,
    ray: RayOption = None,
    workers: Annotated[
        int | None,
        typer.Option(help="Local worker processes (default: one per core); CPUs of --ray local."),
    ] = None,
) -> None:
    """Generate, twin, add noise to, export and benchmark a whole matrix of runs."""
    from twinsim.batch.driver import plan_jobs, run_batch

    try:
        _, jobs = plan_jobs(plan)
        if dry_run:
            _dry_run(jobs, out)
            return
        if out is None:
            raise TwinsimError("--out: the dataset folder to write (or --dry-run)")
        options = [("--ray", ray), ("--workers", workers)]
        given = [str(part) for option in options if option[1] is not None for part in option]
        command = shlex.join(["twinsim", "batch", str(plan), "--out", str(out), *given])
        with Live(console=console, refresh_per_second=4, transient=False) as live:
            result = run_batch(
                plan,
                out,
                ray=ray,
                workers=workers,
                command=command,
                progress=lambda p: live.update(_progress_table(p)),
            )
        if not console.is_terminal:
            console.line()
    except TwinsimError as exc:
        fail(exc)
    done = sum(s == "done" for s in result.states.values())
    console.print(
        f"{done} of {len(result.states)} jobs done ({result.skipped} already there); "
        f"dataset in [bold]{result.dataset}[/] (card: README.md)"
    )
    if result.stale:
        console.print(f"{len(result.stale)} outputs are no longer in the plan (kept; see stale)")
    if not result.ok:
        for record in result.failed:
            err_console.print(
                f"[red]✗[/] {record['id']}: {record.get('error')} (log: {record.get('log')})",
                highlight=False,
                soft_wrap=True,
            )
        blocked = sum(s == "blocked" for s in result.states.values())
        err_console.print(f"[bold red]{len(result.failed)} failed, {blocked} blocked[/]")
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    """Add `twinsim batch`."""
    app.command("batch")(batch)
