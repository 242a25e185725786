"""`twinsim navbench`: navigation methods × worlds × adversity × trials, each trial a recorded
closed-loop episode in a process of its own, resumable, reported as Unreal Robotics Lab's
Table I (`twinsim.navigation.bench_report`).

A report folder holds `navbench.json` (what was asked), `runs/<method>/<world>/<adversity>/
trial_NN/` (`episode/` the recorded sequence, `episode.metrics/`, `result.json`, `path.csv`,
`floor.npz`, `log.txt`, `status.json` written last) and the report. Trial i of every method runs
in the world and with the goal of seed `seed + i`, so methods meet the same worlds. Running the
same command again runs only the trials without a successful status.

A `--methods` entry ending in `.yaml`/`.yml` is an external policy (`navigation.external`): every
such file is read and checked before anything runs, and the policy's `name` stands for it in the
folders and the tables.
"""

from __future__ import annotations

import json
import shutil
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from twinsim.atomic import write_text_atomic
from twinsim.errors import OutputFolderError, TwinsimError
from twinsim.eval.harness import Job, Progress, read_status, run_jobs, write_status
from twinsim.registries import (
    DEFAULT_LIVE_ROBOT_KIND,
    DEFAULT_NAV_WORLDS,
    DEFAULT_PRESET,
    DEFAULT_TASK,
)
from twinsim.sequence.writer import resumable_output

MANIFEST = "navbench.json"
#: adversity level → its bundle: config overrides, key → value (docs/navbench.md lists them).
#: `none` changes nothing of the base world (no people, no flying objects, the preset's weather
#: and light); `minor`: light rain, dusk light and a few walking people; `major`: dense smoke,
#: night (the robot's lamp on) and a crowd with flying objects. `--adversity-set
#: level.key=value` (`NavBenchSpec.adversity_set`) changes one value of a bundle or adds one,
#: e.g. heavy rain instead of smoke: `major.weather.smoke=0`, `major.weather.rain=0.8`.
ADVERSITY: dict[str, dict[str, Any]] = {
    "none": {},
    "minor": {"weather.rain": 0.3, "light.preset": "dusk", "people.count": 8},
    "major": {
        "weather.smoke": 0.8,
        "light.preset": "night",
        "people.count": 20,
        "flying_objects.count": 5,
    },
}
#: what every trial's world gets unless `--set` says otherwise: a small RGB-D camera, no people
#: and no flying objects (the adversity bundles add them)
BASE_OVERRIDES = (
    "sensors.cam0.width=160",
    "sensors.cam0.height=120",
    "people.count=0",
    "flying_objects.count=0",
)


def as_overrides(bundle: dict[str, Any]) -> list[str]:
    """A bundle as `--set` overrides (each value in YAML's flow form, which JSON's is)."""
    return [f"{key}={json.dumps(value)}" for key, value in bundle.items()]


def _about(description: str) -> dict[str, str]:
    """A field's metadata: its description (the help of its `twinsim navbench` option)."""
    return {"description": description}


@dataclass(frozen=True)
class NavTrial:
    """One episode of one method in one world at one adversity level."""

    method: str
    world: str
    adversity: str
    index: int

    def folder(self, out: Path) -> Path:
        trial = f"trial_{self.index:02d}"
        return out / "runs" / self.method / self.world / self.adversity / trial


@dataclass(frozen=True)
class NavBenchSpec:
    """What a navbench runs: methods, worlds (scene generators), adversity levels, trials, the
    robot kind, the episode time limit, the goal range, extra config overrides, the preset
    they apply to, and the task (registered in `TASKS`; one whose config takes the goal range,
    `min_distance_m` and `max_distance_m`)."""

    methods: tuple[str, ...] = field(
        metadata=_about(
            "Registered methods (planner, reactive_depth, floor_colour) or external policy YAML "
            "files (*.yaml, docs/navbench.md)."
        )
    )
    worlds: tuple[str, ...] = field(
        default=DEFAULT_NAV_WORLDS, metadata=_about("World generators.")
    )
    adversity: tuple[str, ...] = field(
        default=("none", "minor", "major"), metadata=_about("Levels: none, minor, major.")
    )
    trials: int = field(default=5, metadata=_about("Trials per method, world and level."))
    seed: int = field(default=0, metadata=_about("Trial i runs in the world and goal of seed + i."))
    robot: str = field(default=DEFAULT_LIVE_ROBOT_KIND, metadata=_about("Robot kind driven."))
    duration_s: float = field(default=60.0, metadata=_about("Episode time limit (s)."))
    goal_m: tuple[float, float] = field(
        default=(2.0, 6.0), metadata=_about("Shortest and longest goal distance (m, geodesic).")
    )
    overrides: tuple[str, ...] = field(
        default=(), metadata=_about("Config override key=value for every trial.")
    )
    preset: str = field(
        default=DEFAULT_PRESET, metadata=_about("Preset or YAML the worlds start from.")
    )
    external: tuple[tuple[str, str], ...] = field(
        default=(), metadata=_about("(name, YAML path) of each external policy.")
    )
    task: str = field(
        default=DEFAULT_TASK, metadata=_about("The task of every trial (a registered task).")
    )
    localization: str = field(
        default="ground_truth",
        metadata=_about(
            "Where the methods believe they are: ground_truth, or a localizer on the live "
            "sensors (rgbd_odometry, kiss_icp; `twinsim plugins localizers`)."
        ),
    )
    adversity_set: tuple[str, ...] = field(
        default=(),
        metadata=_about(
            "Change an adversity bundle: level.key=value, e.g. major.weather.smoke=0.9 "
            "(docs/navbench.md)."
        ),
    )

    def check(self) -> None:
        """Every name known, every count positive: one line naming what is wrong."""
        from twinsim.registries import GENERATORS, LOCALIZERS, NAVIGATORS, TASKS

        if not self.methods or len(set(self.methods)) != len(self.methods):
            raise TwinsimError(f"--methods: each method once, got {', '.join(self.methods)}")
        TASKS.get(self.task).config(self.task, self.task_settings())
        external = dict(self.external)
        for method in self.methods:
            if method in external:
                continue  # checked when its YAML was read (`with_policies`)
            entry = NAVIGATORS.get(method)
            if self.task not in entry.tasks:
                raise TwinsimError(f"--methods: {method!r} does not do the task {self.task!r}")
        if self.localization not in LOCALIZERS:
            raise TwinsimError(f"--localization: {LOCALIZERS.unknown(self.localization)}")
        for world in self.worlds or ("",):
            if world not in GENERATORS:
                raise TwinsimError(f"--worlds: {GENERATORS.unknown(world)}")
        for level in self.adversity or ("",):
            if level not in ADVERSITY:
                raise TwinsimError(f"--adversity: one of {', '.join(ADVERSITY)}, got {level!r}")
        self._check_adversity_set()
        if self.trials < 1:
            raise TwinsimError(f"--trials must be at least 1, got {self.trials}")
        if not 0 < self.goal_m[0] <= self.goal_m[1]:
            raise TwinsimError(f"--goal-min/--goal-max: 0 < min <= max, got {self.goal_m}")

    def adversity_bundles(self) -> dict[str, dict[str, Any]]:
        """Every level's bundle (`ADVERSITY`) with `adversity_set` applied, in order."""
        bundles = {level: dict(bundle) for level, bundle in ADVERSITY.items()}
        for entry in self.adversity_set:
            level, key, value = _split_set(entry)
            bundles[level][key] = value
        return bundles

    def _check_adversity_set(self) -> None:
        """Each `--adversity-set` entry names a level and a config field and gives it a value
        the config takes (on top of the base world and the level's bundle): one line if not."""
        from twinsim.config import load_config

        bundles = self.adversity_bundles()  # a malformed entry or an unknown level: refused
        for entry in self.adversity_set:
            level, key, value = _split_set(entry)
            try:
                overrides = [*BASE_OVERRIDES, *as_overrides(bundles[level] | {key: value})]
                load_config(self.preset, overrides)
            except TwinsimError as exc:
                raise TwinsimError(f"--adversity-set {entry}: {exc}") from None

    def task_settings(self) -> dict[str, float]:
        """The task's settings: the goal range."""
        return {"min_distance_m": self.goal_m[0], "max_distance_m": self.goal_m[1]}

    def config_overrides(self, world: str, adversity: str) -> list[str]:
        """The overrides of the preset for one world and adversity level."""
        return [
            f"robot.kind={self.robot}",
            f"scene.generator={world}",
            *BASE_OVERRIDES,
            *as_overrides(self.adversity_bundles()[adversity]),
            *self.overrides,
        ]

    def trials_list(self) -> list[NavTrial]:
        return [
            NavTrial(m, w, a, i)
            for m in self.methods
            for w in self.worlds
            for a in self.adversity
            for i in range(self.trials)
        ]


def _split_set(entry: str) -> tuple[str, str, Any]:
    """(level, config key, value) of an `--adversity-set` entry `level.key=value`, the value
    read as YAML (as `--set` reads it); one line if malformed or of an unknown level."""
    from twinsim.textdata import TextDataError, parse_yaml

    target, sep, raw = entry.partition("=")
    level, dot, key = target.strip().partition(".")
    if not sep or not dot or not key.strip(".") or not raw.strip():
        raise TwinsimError(
            f"--adversity-set: level.key=value, e.g. major.weather.smoke=0.9; got {entry!r}"
        )
    if level not in ADVERSITY:
        raise TwinsimError(
            f"--adversity-set {entry}: unknown level {level!r}; levels: {', '.join(ADVERSITY)}"
        )
    try:
        value = parse_yaml(raw)
    except TextDataError as exc:
        raise TwinsimError(f"--adversity-set {entry}: not a YAML value ({exc})") from None
    return level, key, value


def with_policies(spec: NavBenchSpec) -> NavBenchSpec:
    """The spec with each policy YAML among its methods read, checked and replaced by the
    policy's name (remembered in `external`); one line naming the file on any problem."""
    from twinsim.navigation.external import is_policy_file, load_policy
    from twinsim.registries import NAVIGATORS

    methods, external = [], dict(spec.external)
    for method in spec.methods:
        if not is_policy_file(method):
            methods.append(method)
            continue
        policy = load_policy(method)
        if spec.task not in policy.spec.tasks:
            raise TwinsimError(
                f"{policy.source}: tasks: navbench runs {spec.task}, got {policy.spec.tasks}"
            )
        if policy.name in NAVIGATORS or policy.name in external:
            raise TwinsimError(
                f"{policy.source}: name: {policy.name!r} is already a method; choose another"
            )
        external[policy.name] = str(policy.source)
        methods.append(policy.name)
    return replace(spec, methods=tuple(methods), external=tuple(external.items()))


def navbench(
    spec: NavBenchSpec,
    out: str | Path,
    *,
    workers: int = 2,
    progress: Progress | None = None,
    ray: str | None = None,
) -> dict[str, Path]:
    """Run every trial not yet done (in local processes, or as Ray tasks at `ray`), then write
    the tables, the path plots and results.csv; returns report name → path."""
    from twinsim.navigation.bench_report import write_navbench_report

    spec = with_policies(spec)
    spec.check()
    if workers < 1:
        raise TwinsimError(f"--workers must be at least 1, got {workers}")
    out = Path(out)
    _check_configs(spec)
    with resumable_output(out, MANIFEST):  # a second navbench into `out` is refused meanwhile
        _prepare(out, spec)
        jobs = []
        for trial in spec.trials_list():
            folder = trial.folder(out)
            status = read_status(folder)
            if status is None or not status.get("ok"):
                args = (trial, spec, folder)
                label = f"{trial.method} · {trial.world} · {trial.adversity} · trial {trial.index}"
                jobs.append(Job(folder, label, run_nav_trial, args))
        if jobs:  # an earlier report goes: killed now, the folder must not look finished
            (out / "results.csv").unlink(missing_ok=True)
        run_jobs(jobs, workers, progress, ray)
        return write_navbench_report(out, spec)


def _check_configs(spec: NavBenchSpec) -> None:
    """Every world × adversity config validates, and gives the robot the sensor the localizer
    reads, before any trial starts."""
    from twinsim.config import load_config
    from twinsim.registries import LOCALIZERS

    needs = LOCALIZERS.get(spec.localization).sensor
    for world in spec.worlds:
        for level in spec.adversity:
            cfg = load_config(
                spec.preset, spec.config_overrides(world, level), duration_s=spec.duration_s
            )
            robot = next(iter(cfg.robots.values()))  # the one `run_episode` drives
            if needs and not any(s.kind == needs for s in robot.sensors.values()):
                raise TwinsimError(
                    f"--localization {spec.localization}: the robot has no {needs}; add one "
                    f"with --set (e.g. sensors.{needs}0.kind={needs})"
                )


def _manifest(spec: NavBenchSpec) -> dict:
    return {
        "seed": spec.seed,
        "robot": spec.robot,
        "duration_s": spec.duration_s,
        "goal_m": list(spec.goal_m),
        "overrides": list(spec.overrides),
        "preset": spec.preset,
        "task": spec.task,
        "adversity_bundles": spec.adversity_bundles(),
        "localization": spec.localization,
    }


def _prepare(out: Path, spec: NavBenchSpec) -> None:
    """A new or empty folder gets a manifest; one with a manifest is resumed when the seed,
    robot, time limit, goal range, overrides and task agree (methods, worlds, levels may grow)."""
    manifest = out / MANIFEST
    fixed = _manifest(spec)
    if manifest.is_file():
        try:
            previous = json.loads(manifest.read_text(encoding="utf-8"))
            previous.setdefault("task", DEFAULT_TASK)  # written before tasks had names
            previous.setdefault("adversity_bundles", None)  # before the bundles: other levels
            previous.setdefault("localization", "ground_truth")  # before localizers
            before = {k: previous[k] for k in fixed}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise OutputFolderError(f"{manifest}: cannot be read ({exc})") from None
        for key, value in fixed.items():
            if before[key] != value:
                raise OutputFolderError(
                    f"{out}: was run with {key} {before[key]!r}, not {value!r}; resume with the "
                    "same options or use a new --out folder"
                )
    data = {
        **fixed,
        "methods": list(spec.methods),
        "worlds": list(spec.worlds),
        "adversity": list(spec.adversity),
        "trials": spec.trials,
        "external": dict(spec.external),
    }
    write_text_atomic(manifest, json.dumps(data, indent=2, sort_keys=True) + "\n")


def run_nav_trial(trial: NavTrial, spec: NavBenchSpec, folder: Path) -> dict:
    """Run one trial in this process: a fresh folder, the episode, its result, path and floor
    plan, a log, and `status.json` last."""
    if folder.exists():
        shutil.rmtree(folder)  # leftovers of an interrupted or failed trial
    folder.mkdir(parents=True)
    start = time.perf_counter()
    seed = spec.seed + trial.index
    with open(folder / "log.txt", "w", encoding="utf-8") as log:
        log.write(f"{trial}, seed {seed}\n")
        bundle = spec.adversity_bundles()[trial.adversity]
        log.write(f"adversity {trial.adversity}: {json.dumps(bundle, sort_keys=True)}\n")
        try:
            _episode(trial, spec, folder, seed)
            ok, error = True, ""
        except Exception as exc:  # a failing method is a failed trial, with its log
            log.write(traceback.format_exc())
            ok, error = False, f"{type(exc).__name__}: {exc}"
    return write_status(folder, ok, error, time.perf_counter() - start)


def _episode(trial: NavTrial, spec: NavBenchSpec, folder: Path, seed: int) -> None:
    from twinsim.closedloop.session import Session
    from twinsim.closedloop.tasks import make_task
    from twinsim.config import load_config
    from twinsim.navigation.api import run_episode
    from twinsim.registries import NAVIGATORS

    overrides = spec.config_overrides(trial.world, trial.adversity)
    cfg = load_config(spec.preset, overrides, duration_s=spec.duration_s)
    task = make_task(spec.task, spec.task_settings())
    external = dict(spec.external)
    if trial.method in external:
        from twinsim.navigation.external import load_policy

        navigator = load_policy(external[trial.method]).navigator(folder, seed)
    else:
        navigator = NAVIGATORS.get(trial.method).factory()
    session = Session(cfg, folder)
    try:
        on_step = getattr(navigator, "observe", None)
        result = run_episode(
            session,
            task,
            navigator,
            seed,
            out=folder / "episode",
            on_step=on_step,
            localizer=spec.localization,
        )
    finally:
        if hasattr(navigator, "close"):
            navigator.close()  # an external policy's program and sockets end with the trial
    rows = ["x,y"] + [f"{x!r},{y!r}" for x, y in result.trajectory.tolist()]
    write_text_atomic(folder / "path.csv", "\n".join(rows) + "\n")
    fs = task.grid.fs
    floor = folder / "floor.tmp.npz"
    np.savez_compressed(
        floor,
        free=fs.grid_clearance >= fs.clearance_m,
        origin=np.asarray(fs.origin),
        cell_m=fs.cell_m,
        start=result.trajectory[0],
        goal=np.asarray(result.goal),
    )
    floor.replace(folder / "floor.npz")
    bundle = spec.adversity_bundles()[trial.adversity]
    summary = {**result.summary, "ended_by": result.ended_by, "seed": seed}
    summary["adversity"] = {"level": trial.adversity, "values": bundle}
    write_text_atomic(folder / "result.json", json.dumps(summary, indent=2) + "\n")


def trial_result(folder: Path) -> dict | None:
    """A finished trial's `result.json` (None for a failed or unfinished one)."""
    status = read_status(folder)
    if status is None or not status.get("ok"):
        return None
    try:
        return json.loads((folder / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def parse_list(values: Sequence[str]) -> tuple[str, ...]:
    """Comma separated or repeated option values, in order."""
    return tuple(item for value in values for item in value.split(",") if item)
