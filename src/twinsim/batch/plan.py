"""A batch plan: the YAML model (pydantic, extra="forbid"), its matrix and the job graph.

A plan names base configs and a matrix (configs × seeds × each `--set` axis); every cell is
one run, and from each run the plan derives twins, noisy copies, exports and benchmarks. Every
job is checked here (configs loaded, variations, noise profiles, export formats and methods
resolved), so a bad plan fails before anything runs, naming the field and what is allowed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from twinsim import __version__
from twinsim.configmodel import Seed, format_validation_error
from twinsim.errors import TwinsimError
from twinsim.registries import DEFAULT_PRESET
from twinsim.textdata import TextDataError, parse_yaml

#: the job types in the order the graph runs them
JOB_TYPES: tuple[str, ...] = ("run", "twin", "noise", "export", "bench")
#: the kinds of sequence exports and benchmarks can read
SequenceKind = Literal["runs", "twins", "noise"]
ALL_KINDS: tuple[SequenceKind, ...] = ("runs", "twins", "noise")


class PlanError(TwinsimError):
    """A batch plan is unreadable or names something twinsim does not have."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Runs(_Model):
    """The matrix: every config × seed × value of each axis is one run (a cell)."""

    configs: list[str] = Field(default_factory=lambda: [DEFAULT_PRESET], min_length=1)
    seeds: list[Seed] = Field(default_factory=lambda: [0], min_length=1)
    duration: float | None = Field(None, gt=0)
    set: list[str] = Field(default_factory=list)
    axes: dict[str, list[Any]] = Field(default_factory=dict)

    @field_validator("axes")
    @classmethod
    def _axes_have_values(cls, axes: dict[str, list[Any]]) -> dict[str, list[Any]]:
        empty = [key for key, values in axes.items() if not values]
        if empty:
            raise ValueError(f"axis {empty[0]!r} has no values")
        return axes


class Noise(_Model):
    """A noisy copy of every run: a profile, its `section.key=value` changes and a seed."""

    profile: str
    seed: Seed = 0
    set: list[str] = Field(default_factory=list)


class Export(_Model):
    """An export of every sequence of the kinds in `of`."""

    format: str
    options: dict[str, Any] = Field(default_factory=dict)
    of: list[SequenceKind] = Field(default_factory=lambda: list(ALL_KINDS))


class Bench(_Model):
    """A benchmark of each method on every sequence of the kinds in `of`; `table: carla_loc`
    also tabulates the results in CARLA-Loc's layout (`twinsim.batch.tables`)."""

    methods: list[str] = Field(min_length=1)
    trials: int = Field(1, ge=1)
    seed: Seed = 0
    of: list[SequenceKind] = Field(default_factory=lambda: list(ALL_KINDS))
    table: Literal["carla_loc"] | None = None


class Resources(_Model):
    """What one job of a type asks a Ray cluster for (the local executor runs one per worker)."""

    cpus: float = Field(1.0, gt=0)
    memory_gb: float = Field(0.5, ge=0)
    gpus: float = Field(0.0, ge=0)


class Plan(_Model):
    """A whole batch plan, as written in PLAN.yaml."""

    runs: Runs
    twins: dict[str, dict[str, Any]] = Field(default_factory=dict)
    noise: dict[str, Noise] = Field(default_factory=dict)
    exports: dict[str, Export] = Field(default_factory=dict)
    bench: Bench | None = None
    retries: int = Field(1, ge=0)
    resources: dict[str, Resources] = Field(default_factory=dict)

    @field_validator("resources")
    @classmethod
    def _job_types(cls, resources: dict[str, Resources]) -> dict[str, Resources]:
        unknown = sorted(set(resources) - set(JOB_TYPES))
        if unknown:
            raise ValueError(f"unknown job type {unknown[0]!r}; allowed: {', '.join(JOB_TYPES)}")
        return resources


@dataclass(frozen=True)
class Job:
    """One node of the job graph: its id (= its output folder inside the dataset), type,
    parameters (plain JSON), the ids it reads, its config hash and the resources it asks for."""

    id: str
    type: str
    params: dict
    deps: tuple[str, ...]
    config_hash: str
    resources: Resources = field(default_factory=Resources)


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


#: the plans shipped with twinsim, by name (`twinsim batch carla_loc`)
BUILTIN_PLANS = Path(__file__).resolve().parent.parent / "plans"


def plan_path(name: str | Path) -> Path:
    """A plan file, or the built-in plan of that name when no such file exists."""
    path = Path(name)
    builtin = BUILTIN_PLANS / f"{name}.yaml"
    if not path.exists() and path.suffix == "" and builtin.is_file():
        return builtin
    return path


def builtin_plans() -> list[str]:
    return sorted(p.stem for p in BUILTIN_PLANS.glob("*.yaml"))


def load_plan(path: str | Path) -> tuple[Plan, Path]:
    """The plan in the YAML file `path`, or the built-in plan of that name (validated), and the
    folder its relative paths are in."""
    path = plan_path(path)
    try:
        data = parse_yaml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        builtin = ", ".join(builtin_plans())
        raise PlanError(
            f"{path}: cannot be read ({exc.strerror or exc}); built-in plans: {builtin}"
        ) from None
    except (UnicodeDecodeError, TextDataError) as exc:
        raise PlanError(f"{path}: is not valid YAML ({exc})".replace("\n", " ")) from None
    if isinstance(data, dict) and isinstance(data.get("exports"), list):
        data["exports"] = {name: {"format": name} for name in data["exports"]}  # [tum, euroc]
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:
        message = format_validation_error(exc, Plan, data, what="plan key")
        raise PlanError(f"{path}: {message}") from None
    return plan, path.parent.resolve()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text).strip("_") or "_"


def _digest(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _config_ref(name: str, base: Path) -> tuple[str, str]:
    """(what `load_config` takes, the cell-name stem) for a preset name or a YAML path."""
    if name.endswith((".yaml", ".yml")):
        path = (base / name).resolve()
        return str(path), _slug(path.stem)
    return name, _slug(name)


def _run_jobs(plan: Plan, base: Path, resources: dict[str, Resources]) -> list[Job]:
    """One run job per cell; each cell's config is loaded (and so checked) here."""
    from twinsim.config import load_config

    runs = plan.runs
    axes = list(runs.axes.items())
    jobs: dict[str, Job] = {}
    for config, seed, *values in itertools.product(runs.configs, runs.seeds, *(v for _, v in axes)):
        ref, stem = _config_ref(config, base)
        cell_set = [
            f"{key}={json.dumps(value)}" for (key, _), value in zip(axes, values, strict=True)
        ]
        sets = [*runs.set, *cell_set]
        try:
            cfg = load_config(ref, sets, seed=seed, duration_s=runs.duration)
        except TwinsimError as exc:
            where = f"runs (config {config!r}, seed {seed}{''.join(f', {s}' for s in cell_set)})"
            raise PlanError(f"{where}: {exc}") from None
        parts = [
            stem,
            f"s{seed}",
            *(_slug(f"{k}={v}") for (k, _), v in zip(axes, values, strict=True)),
        ]
        job_id = "runs/" + "-".join(parts)
        if job_id in jobs:
            raise PlanError(f"runs: two cells are both named {job_id!r}; make the values differ")
        params = {"config": ref, "set": sets, "seed": seed, "duration": runs.duration}
        resolved = cfg.model_dump(mode="json")
        jobs[job_id] = Job(
            job_id, "run", params, (), _digest(["run", resolved, __version__]), resources["run"]
        )
    return list(jobs.values())


def _derived(plan: Plan, base: Path, runs: list[Job], resources: dict[str, Resources]) -> list[Job]:
    """Twins and noisy copies of every run, then exports and benchmarks of the sequences."""
    from twinsim.noise import resolve_profile
    from twinsim.replay.variations import parse_variations

    twins, noisy = [], []
    for name, fields in plan.twins.items():
        _check_name("twins", name)
        try:
            variations = parse_variations(fields).model_dump(mode="json")
        except TwinsimError as exc:
            raise PlanError(f"twins.{name}: {exc}") from None
        for run in runs:
            twins.append(_job(f"twins/{run.id[5:]}/{name}", "twin", variations, run, resources))
    for name, spec in plan.noise.items():
        _check_name("noise", name)
        try:
            profile = resolve_profile(spec.profile, spec.set).model_dump(mode="json")
        except TwinsimError as exc:
            raise PlanError(f"noise.{name}: {exc}") from None
        params = {"profile": profile, "seed": spec.seed}
        for run in runs:
            noisy.append(_job(f"noise/{run.id[5:]}/{name}", "noise", params, run, resources))
    sequences = {"runs": runs, "twins": twins, "noise": noisy}
    exports = [
        _job(f"exports/{seq.id}/{name}", "export", _export_params(name, spec), seq, resources)
        for name, spec in plan.exports.items()
        for kind in spec.of
        for seq in sequences[kind]
    ]
    bench = []
    if plan.bench is not None:
        for method in plan.bench.methods:
            method = _method_ref(method, base)
            params = {"method": method, "trials": plan.bench.trials, "seed": plan.bench.seed}
            label = _slug(Path(method).stem)
            for kind in plan.bench.of:
                for seq in sequences[kind]:
                    bench.append(_job(f"bench/{seq.id}/{label}", "bench", params, seq, resources))
    return [*twins, *noisy, *exports, *bench]


def _job(job_id: str, kind: str, params: dict, source: Job, resources) -> Job:
    """A job reading the output of `source`; its hash covers the source's."""
    digest = _digest([kind, params, source.config_hash, __version__])
    return Job(job_id, kind, params, (source.id,), digest, resources[kind])


def _check_name(section: str, name: str) -> None:
    if not _NAME.match(name):
        raise PlanError(f"{section}.{name}: a name is letters, digits, '_', '.', '-'")


def _export_params(name: str, spec: Export) -> dict:
    from twinsim.registries import FORMATS

    _check_name("exports", name)
    if spec.format not in FORMATS:
        raise PlanError(
            f"exports.{name}.format: unknown format {spec.format!r}; allowed: {', '.join(FORMATS)}"
        )
    allowed = FORMATS[spec.format].options()
    unknown = sorted(set(spec.options) - set(allowed))
    if unknown:
        raise PlanError(
            f"exports.{name}.options: unknown option {unknown[0]!r}; allowed: "
            f"{', '.join(allowed) or 'none'}"
        )
    return {"format": spec.format, "options": spec.options}


def _method_ref(method: str, base: Path) -> str:
    """A built-in method's name, or a method YAML's absolute path (relative to the plan's
    folder), loaded once here so a bad one fails before anything runs."""
    from twinsim.eval.methods import METHODS, get_method

    ref = str((base / method).resolve()) if method.endswith((".yaml", ".yml")) else method
    if ref not in METHODS:
        try:
            get_method(ref)
        except TwinsimError as exc:
            raise PlanError(f"bench.methods: {exc}") from None
    return ref


def job_graph(plan: Plan, base: Path) -> list[Job]:
    """Every job of the plan, each after the jobs it reads (runs, twins, noise, exports, bench)."""
    resources = {kind: plan.resources.get(kind, Resources()) for kind in JOB_TYPES}
    runs = _run_jobs(plan, base, resources)
    return [*runs, *_derived(plan, base, runs, resources)]
