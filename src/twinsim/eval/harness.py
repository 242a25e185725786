"""The benchmark harness: every method × sequence × trial in parallel processes, resumable.

A report folder holds `bench.json` (what was asked), `runs/<method>/<sequence>/trial_NN/`
(`estimate.tum`, `log.txt`, `status.json`, written last), `exports/` (what external methods
read), and the report: `results.csv`, `table.md`, `table.tex`, `plots/`. Running the same
command again skips every trial that has a `status.json`.
"""

from __future__ import annotations

import json
import math
import shutil
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from twinsim.errors import OutputFolderError, TwinsimError
from twinsim.eval.io import read_tum
from twinsim.eval.methods import ESTIMATE_FILE, ExternalMethod, Method, MethodError, get_method
from twinsim.eval.metrics import Evaluation, evaluate
from twinsim.eval.trajectory import TrajectoryError
from twinsim.sequence import open_sequence
from twinsim.sequence.writer import check_output_folder

MANIFEST = "bench.json"
STATUS = "status.json"

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
) -> BenchReport:
    """Run and evaluate every trial not yet done, then write results, tables and plots.

    Trial `i` runs with seed `seed + i`. A method that raises, crashes or times out is a failed
    trial (its log kept), never a failed benchmark.
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
    _prepare_output(out, methods, seqs, trials, seed)
    exports = _exports(resolved.values(), seqs, out)

    pending = []
    for spec, method in resolved.items():
        for seq_name, seq_path in seqs.items():
            for index in range(trials):
                trial = Trial(method.name, seq_name, index)
                if not (trial.folder(out) / STATUS).is_file():
                    export = exports.get((method.name, seq_name))
                    pending.append((spec, trial, seq_path, seed + index, export))
    total = len(pending)
    _run_pending(pending, out, workers, total, progress)

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


def _prepare_output(out: Path, methods, seqs: dict[str, Path], trials: int, seed: int) -> None:
    """A new or empty folder gets a manifest; a folder with a manifest is resumed."""
    manifest = out / MANIFEST
    if manifest.is_file():
        previous = json.loads(manifest.read_text(encoding="utf-8"))
        if previous.get("seed") != seed:
            raise OutputFolderError(
                f"{out}: was run with seed {previous.get('seed')}, not {seed}; resume with the "
                "same seed or use a new --out folder"
            )
    else:
        check_output_folder(out)
        out.mkdir(parents=True, exist_ok=True)
    data = {
        "methods": list(methods),
        "sequences": {name: str(path) for name, path in seqs.items()},
        "trials": trials,
        "seed": seed,
    }
    manifest.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


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


def _run_pending(pending, out: Path, workers: int, total: int, progress: Progress | None) -> None:
    if not pending:
        return
    done = 0
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = {
            pool.submit(run_trial, spec, seq_path, trial.folder(out), trial_seed, export): trial
            for spec, trial, seq_path, trial_seed, export in pending
        }
        for future in as_completed(futures):
            trial = futures[future]
            try:
                future.result()
            except BrokenProcessPool:
                _write_status(trial.folder(out), False, "the worker process died", math.nan)
            done += 1
            if progress is not None:
                progress(done, total, f"{trial.method} · {trial.sequence} · trial {trial.index}")


def run_trial(
    spec: str, seq_path: Path, folder: Path, seed: int, export: Path | None = None
) -> dict:
    """Run one trial in this process: a fresh folder, a log, `status.json` written last."""
    if folder.exists():
        shutil.rmtree(folder)  # leftovers of an interrupted trial (no status.json)
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
    return _write_status(folder, ok, error, time.perf_counter() - start)


def _write_status(folder: Path, ok: bool, error: str, wall_s: float) -> dict:
    status = {"ok": ok, "error": error, "wall_s": None if math.isnan(wall_s) else wall_s}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / STATUS).write_text(json.dumps(status, sort_keys=True) + "\n", encoding="utf-8")
    return status


def _evaluate(method: Method, trial: Trial, seq_path: Path, out: Path) -> TrialResult:
    folder = trial.folder(out)
    status = json.loads((folder / STATUS).read_text(encoding="utf-8"))
    wall = status.get("wall_s")
    wall_s = math.nan if wall is None else wall
    result = TrialResult(trial, status["ok"], status.get("error", ""), wall_s)
    if not result.ok:
        return result
    try:
        seq = open_sequence(seq_path)
        result.evaluation = evaluate(
            method.ground_truth(seq),
            read_tum(folder / ESTIMATE_FILE),
            frame_period_s=method.frame_period_s(seq),
        )
    except (TrajectoryError, TwinsimError) as exc:
        result.ok, result.error = False, f"evaluation: {exc}"
    return result
