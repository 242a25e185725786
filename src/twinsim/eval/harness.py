"""The benchmark harness: every method × sequence × trial in parallel processes, resumable.

A report folder holds `bench.json` (what was asked, and each sequence's path and content
digest), `runs/<method>/<sequence>/trial_NN/` (`estimate.tum`, `log.txt`, `status.json`, written
last), `exports/` (what external methods read), and the report: `results.csv`, `table.md`,
`table.tex`, `plots/`. Each trial runs in a process of its own, so a process that dies costs
only its trial. Running the same command again runs every trial without a successful
`status.json` (unfinished and failed ones) and refuses a sequence whose content differs from the
one benchmarked under its name.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import signal
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing import get_context
from multiprocessing.connection import wait
from pathlib import Path

from twinsim.atomic import write_text_atomic
from twinsim.errors import OutputFolderError, TwinsimError
from twinsim.eval.io import read_tum
from twinsim.eval.methods import ESTIMATE_FILE, ExternalMethod, Method, MethodError, get_method
from twinsim.eval.metrics import Evaluation, evaluate
from twinsim.eval.trajectory import TrajectoryError
from twinsim.sequence import open_sequence
from twinsim.sequence.writer import resumable_output

MANIFEST = "bench.json"
STATUS = "status.json"
#: The files of a sequence its content digest covers: these two, and each stream folder's index.
DIGEST_FILES = ("metadata.json", "scene.json")
INDEX_FILES = ("data.csv", "frames.csv", "scans.csv")

#: progress(done, total, label) after every finished trial.
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Trial:
    """One run of one method on one sequence."""

    method: str
    sequence: str
    index: int

    def folder(self, out: Path) -> Path:
        return out / "runs" / self.method / self.sequence / f"trial_{self.index:02d}"


@dataclass
class TrialResult:
    """A finished trial: its status and, when it produced an estimate, its evaluation."""

    trial: Trial
    ok: bool
    error: str = ""
    wall_s: float = math.nan
    evaluation: Evaluation | None = None


@dataclass
class BenchReport:
    """Every trial's result and the files written."""

    out: Path
    results: list[TrialResult]
    files: dict[str, Path] = field(default_factory=dict)


def bench(
    methods: Sequence[str],
    sequences: Sequence[str | Path],
    trials: int,
    out: str | Path,
    *,
    workers: int = 2,
    seed: int = 0,
    progress: Progress | None = None,
    ray: str | None = None,
) -> BenchReport:
    """Run and evaluate every trial not yet done, then write results, tables and plots.

    Trial `i` runs with seed `seed + i`. A method that raises, crashes, times out or takes its
    process down is a failed trial (its log kept), never a failed benchmark; failed trials run
    again on the next resume. `ray`: run the trials as Ray tasks there (`twinsim.cluster`)
    instead of local processes.
    """
    from twinsim.eval.report import write_report

    if trials < 1:
        raise TwinsimError(f"--trials must be at least 1, got {trials}")
    if workers < 1:
        raise TwinsimError(f"--workers must be at least 1, got {workers}")
    resolved = {spec: get_method(spec) for spec in methods}
    names = [m.name for m in resolved.values()]
    if len(set(names)) != len(names) or not names:
        raise MethodError(f"methods must be given once each, got {', '.join(names) or 'none'}")
    seqs = _sequences(sequences)
    out = Path(out)
    with resumable_output(out, MANIFEST):  # a second bench into `out` is refused meanwhile
        _prepare_output(out, methods, seqs, trials, seed)
        exports = _exports(resolved.values(), seqs, out)

        pending = []
        for spec, method in resolved.items():
            for seq_name, seq_path in seqs.items():
                for index in range(trials):
                    trial = Trial(method.name, seq_name, index)
                    status = read_status(trial.folder(out))
                    if status is None or not status.get("ok"):
                        export = exports.get((method.name, seq_name))
                        pending.append((spec, trial, seq_path, seed + index, export))
        _run_pending(pending, out, workers, progress, ray)

        results = []
        for method in resolved.values():
            for seq_name, seq_path in seqs.items():
                for index in range(trials):
                    trial = Trial(method.name, seq_name, index)
                    results.append(_evaluate(method, trial, seq_path, out))
        report = BenchReport(out=out, results=results)
        report.files = write_report(report, seqs, resolved)
        return report


def _sequences(sequences: Sequence[str | Path]) -> dict[str, Path]:
    """Sequence name (its folder name) → path; every one must open; names must be unique."""
    seqs: dict[str, Path] = {}
    for item in sequences:
        path = Path(item).resolve()
        open_sequence(path)
        if path.name in seqs:
            raise TwinsimError(
                f"two sequences are named {path.name!r} ({seqs[path.name]} and {path}); "
                "rename one folder"
            )
        seqs[path.name] = path
    if not seqs:
        raise TwinsimError("no sequences given (--sequences)")
    return seqs


def content_digest(seq_path: Path) -> str:
    """sha256 over a sequence's `metadata.json`, `scene.json` and each stream folder's index
    (`data.csv`, `frames.csv`, `scans.csv`): what tells two runs apart, without reading images
    or point clouds."""
    digest = hashlib.sha256()
    files = [seq_path / name for name in DIGEST_FILES]
    for folder in sorted(p for p in seq_path.iterdir() if p.is_dir() and not p.is_symlink()):
        files += [folder / name for name in INDEX_FILES]
    for path in files:
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            name = path.relative_to(seq_path).as_posix()
            digest.update(f"{name}\0{len(data)}\0".encode())
            digest.update(data)
    return "sha256:" + digest.hexdigest()


def _prepare_output(out: Path, methods, seqs: dict[str, Path], trials: int, seed: int) -> None:
    """A new or empty folder gets a manifest; a folder with a manifest is resumed, if the seed
    and the content of every sequence already benchmarked under the same name agree."""
    manifest = out / MANIFEST
    previous: dict = {"methods": [], "sequences": {}}
    if manifest.is_file():
        try:
            previous = json.loads(manifest.read_text(encoding="utf-8"))
            previous_sequences = dict(previous["sequences"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise OutputFolderError(f"{manifest}: cannot be read ({exc})") from None
        if previous.get("seed") != seed:
            raise OutputFolderError(
                f"{out}: was run with seed {previous.get('seed')}, not {seed}; resume with the "
                "same seed or use a new --out folder"
            )
    else:
        previous_sequences = {}
    sequences = dict(previous_sequences)
    for name, path in seqs.items():
        entry = {"path": str(path), "content": content_digest(path)}
        before = previous_sequences.get(name)
        before = before if isinstance(before, dict) else {"path": before}
        if name in previous_sequences and before.get("content") != entry["content"]:
            raise OutputFolderError(
                f"{out}: sequence {name!r} at {path} differs in content from the one benchmarked "
                f"there under that name ({before.get('path')}); use a new --out folder"
            )
        sequences[name] = entry
    data = {
        "methods": list(dict.fromkeys([*previous.get("methods", []), *methods])),
        "sequences": sequences,
        "trials": trials,
        "seed": seed,
    }
    write_text_atomic(manifest, json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n")


def _exports(methods, seqs: dict[str, Path], out: Path) -> dict[tuple[str, str], Path]:
    """Export each sequence once per format an external method reads (kept for resuming)."""
    exports: dict[tuple[str, str], Path] = {}
    for method in methods:
        if not isinstance(method, ExternalMethod) or method.export_format is None:
            continue
        fmt = method.export_format
        for seq_name, seq_path in seqs.items():
            folder = out / "exports" / seq_name / fmt
            if not (folder / ".done").is_file():
                try:
                    from twinsim.export import export_sequence
                except ImportError:
                    raise MethodError(
                        f"{method.name}: reads the {fmt!r} export, but twinsim.export is not "
                        "available in this installation"
                    ) from None
                if folder.exists():
                    shutil.rmtree(folder)
                export_sequence(seq_path, fmt, folder)
                (folder / ".done").write_text("export finished\n", encoding="utf-8")
            exports[(method.name, seq_name)] = folder
    return exports


def _run_pending(
    pending, out: Path, workers: int, progress: Progress | None, ray: str | None
) -> None:
    """Run each pending trial of the benchmark in a process (or a Ray task) of its own."""
    jobs = [
        Job(
            trial.folder(out),
            f"{trial.method} · {trial.sequence} · trial {trial.index}",
            run_trial,
            (spec, seq_path, trial.folder(out), trial_seed, export),
        )
        for spec, trial, seq_path, trial_seed, export in pending
    ]
    if jobs:  # an earlier report goes: killed now, the folder must not look finished
        (out / "results.csv").unlink(missing_ok=True)
    run_jobs(jobs, workers, progress, ray)


@dataclass(frozen=True)
class Job:
    """One trial to run in a process of its own: its folder (where `target(*args)` writes
    `status.json` last), a label for progress, and the function with its arguments."""

    folder: Path
    label: str
    target: Callable
    args: tuple


def run_jobs(
    jobs: Sequence[Job], workers: int, progress: Progress | None, ray: str | None = None
) -> None:
    """Run each job in a spawned process of its own, at most `workers` at a time (or as a Ray
    task at `ray`, `twinsim.eval.ray_trials`); a job that ends without writing its status
    gets a failed status naming how it ended."""
    if ray is not None:
        from twinsim.eval.ray_trials import run_jobs_on_ray

        run_jobs_on_ray(jobs, ray, workers, progress)
        return
    context = get_context("spawn")
    queue = list(reversed(jobs))
    running: dict = {}  # sentinel → (process, job)
    done = 0
    try:
        while queue or running:
            while queue and len(running) < workers:
                job = queue.pop()
                (job.folder / STATUS).unlink(missing_ok=True)  # a failed trial's, run again
                process = context.Process(
                    target=job.target, args=job.args, name=f"twinsim {job.label}"
                )
                process.start()
                running[process.sentinel] = (process, job)
            for sentinel in wait(list(running)):
                process, job = running.pop(sentinel)
                process.join()
                if read_status(job.folder) is None:
                    how = _exit_description(process.exitcode)
                    write_status(job.folder, False, f"the worker process died ({how})", math.nan)
                done += 1
                if progress is not None:
                    progress(done, len(jobs), job.label)
    finally:
        for process, _ in running.values():  # interrupted: no trial outlives the benchmark
            process.terminate()
            process.join()


def _exit_description(exitcode: int | None) -> str:
    """'signal SIGKILL' or 'exit code 3', from a multiprocessing exit code."""
    if exitcode is not None and exitcode < 0:
        try:
            return f"signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


def run_trial(
    spec: str, seq_path: Path, folder: Path, seed: int, export: Path | None = None
) -> dict:
    """Run one trial in this process: a fresh folder, a log, `status.json` written last."""
    if folder.exists():
        shutil.rmtree(folder)  # leftovers of an interrupted or failed trial
    folder.mkdir(parents=True)
    start = time.perf_counter()
    with open(folder / "log.txt", "w", encoding="utf-8") as log_file:

        def log(line: str) -> None:
            log_file.write(line + "\n")
            log_file.flush()

        log(f"method {spec}, sequence {seq_path}, seed {seed}")
        try:
            method = get_method(spec)
            if isinstance(method, ExternalMethod):
                method.run(seq_path, folder, seed, log, export_dir=export)
            else:
                method.run(seq_path, folder, seed, log)
            ok, error = True, ""
        except Exception as exc:  # any failure of a method is a failed trial, with its log
            log(traceback.format_exc())
            ok, error = False, f"{type(exc).__name__}: {exc}"
    return write_status(folder, ok, error, time.perf_counter() - start)


def write_status(folder: Path, ok: bool, error: str, wall_s: float) -> dict:
    status = {"ok": ok, "error": error, "wall_s": None if math.isnan(wall_s) else wall_s}
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(status, sort_keys=True, allow_nan=False) + "\n"
    write_text_atomic(folder / STATUS, text)
    return status


def read_status(folder: Path) -> dict | None:
    """A trial's status, or None when it has none that reads as one (unfinished)."""
    try:
        status = json.loads((folder / STATUS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return status if isinstance(status, dict) and isinstance(status.get("ok"), bool) else None


def _evaluate(method: Method, trial: Trial, seq_path: Path, out: Path) -> TrialResult:
    status = read_status(trial.folder(out))
    if status is None:
        return TrialResult(trial, False, f"{STATUS} is missing or cannot be read")
    wall = status.get("wall_s")
    wall_s = wall if isinstance(wall, int | float) else math.nan
    result = TrialResult(trial, status["ok"], str(status.get("error", "")), wall_s)
    if not result.ok:
        return result
    try:
        seq = open_sequence(seq_path)
        result.evaluation = evaluate(
            method.ground_truth(seq),
            read_tum(trial.folder(out) / ESTIMATE_FILE),
            sim3=method.alignment == "sim3",
            frame_period_s=method.frame_period_s(seq),
        )
    except (TrajectoryError, TwinsimError) as exc:
        result.ok, result.error = False, f"evaluation: {exc}"
    return result
