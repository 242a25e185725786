"""The dataset card: `DATASET/README.md` (the matrix, per-sequence statistics, size, the
command and version) and `contact_sheet.png` (one frame of every sequence), both from the
manifest; `dataset_summary` is what `twinsim info DATASET` prints (a typed `DatasetSummary`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from twinsim.atomic import atomic_file, write_text_atomic
from twinsim.batch.jobs import SEQUENCE_TYPES
from twinsim.batch.manifest import read_manifest
from twinsim.batch.tables import TABLES_FILE, carla_loc_tables
from twinsim.errors import OutputFolderError

CARD = "README.md"
CONTACT_SHEET = "contact_sheet.png"
_TILE_W = 160


@dataclass(frozen=True)
class DatasetSummary:
    """What `dataset_summary` read from `dataset.json`: versions, command and executor, the
    plan, jobs by type and status, the sequences done with their statistics, total size and
    the benchmark results.

    `as_dict()` is the JSON `twinsim info DATASET --json` prints; `facts()` and
    `sequence_rows()` the text rows of the tables `twinsim info DATASET` prints.
    """

    path: str
    twinsim_version: str | None
    command: str
    executor: str
    plan: dict[str, Any]
    jobs: dict[str, int]  # "type:status" → count
    n_jobs: int
    n_done: int
    sequences: dict[str, dict[str, Any]]  # sequence id → its statistics
    size_bytes: int
    bench: dict[str, dict[str, Any]]  # bench job id → its result

    def as_dict(self) -> dict:
        """Everything as plain JSON data, in the order of the fields."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def facts(self) -> list[tuple[str, str]]:
        """(label, text) rows: version, executor, command, jobs, sequences, size."""
        return [
            ("twinsim", str(self.twinsim_version)),
            ("executor", self.executor),
            ("command", self.command),
            ("jobs", ", ".join(f"{k} {n}" for k, n in self.jobs.items())),
            ("sequences", str(len(self.sequences))),
            ("size", f"{self.size_bytes / 1024**2:.1f} MiB"),
        ]

    def sequence_rows(self) -> list[tuple[str, str, str, str, str]]:
        """(sequence, frames, duration, people, dynamic fraction) rows, a row per sequence."""
        rows = []
        for seq_id, stats in self.sequences.items():
            dyn = stats.get("dynamic_fraction")
            rows.append(
                (
                    seq_id,
                    str(stats.get("frames")),
                    str(stats.get("duration_s")),
                    str(stats.get("people_placed")),
                    "-" if dyn is None else f"{dyn:.3f}",
                )
            )
        return rows


def dataset_summary(dataset: str | Path) -> DatasetSummary:
    """Counts of jobs by type and status, the sequences with their statistics, total size,
    command and versions, from `dataset.json`."""
    dataset = Path(dataset)
    manifest = read_manifest(dataset)
    if manifest is None:
        raise OutputFolderError(f"{dataset}: has no dataset.json")
    jobs = manifest["jobs"].values()
    counts = Counter((j["type"], j["status"]) for j in jobs)
    sequences = {
        j["id"]: j.get("stats", {})
        for j in jobs
        if j["type"] in SEQUENCE_TYPES and j["status"] == "done"
    }
    return DatasetSummary(
        path=str(dataset),
        twinsim_version=manifest.get("twinsim_version"),
        command=manifest.get("command", ""),
        executor=manifest.get("executor", ""),
        plan=manifest.get("plan", {}),
        jobs={f"{t}:{s}": n for (t, s), n in sorted(counts.items())},
        n_jobs=len(manifest["jobs"]),
        n_done=sum(j["status"] == "done" for j in jobs),
        sequences=sequences,
        size_bytes=sum(j.get("size_bytes", 0) for j in jobs if j["status"] == "done"),
        bench={j["id"]: j.get("result", {}) for j in jobs if j["type"] == "bench"},
    )


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024
    return f"{n} B"


def _motion(stats: dict, key: str) -> str:
    values = ((stats.get("statistics") or {}).get("camera_motion") or {}).get(key)
    return " ".join(f"{v:.2f}" for v in values) if values else "-"


def _matrix_lines(plan: dict) -> list[str]:
    runs, noise = plan.get("runs", {}), plan.get("noise", {})
    lines = [
        f"- configs: {', '.join(runs.get('configs', []))}",
        f"- seeds: {', '.join(str(s) for s in runs.get('seeds', []))}",
        *(f"- axis `{k}`: {', '.join(map(str, v))}" for k, v in runs.get("axes", {}).items()),
        f"- every run: duration {runs.get('duration') or 'as configured'} s, "
        f"set {', '.join(f'`{s}`' for s in runs.get('set', [])) or 'nothing'}",
        f"- twins: {', '.join(plan.get('twins', {})) or 'none'}",
        "- noise: " + (", ".join(f"{k} ({v['profile']})" for k, v in noise.items()) or "none"),
        f"- exports: {', '.join(plan.get('exports', {})) or 'none'}",
        f"- bench: {', '.join((plan.get('bench') or {}).get('methods', [])) or 'none'}",
    ]
    return lines


def card_text(summary: DatasetSummary, sheet: bool) -> str:
    """The card's Markdown."""
    lines = [f"# {Path(summary.path).name}", "", "A twinsim dataset (`twinsim batch`).", ""]
    lines += ["## Matrix", "", *_matrix_lines(summary.plan), ""]
    lines += ["## Jobs", "", "| job | count |", "|---|---|"]
    lines += [f"| {k} | {n} |" for k, n in summary.jobs.items()]
    lines += ["", f"{summary.n_done} of {summary.n_jobs} jobs done.", ""]
    lines += ["## Sequences", ""]
    lines += ["| sequence | frames | duration (s) | people | dynamic fraction |"]
    lines[-1] += " camera mean abs. linear speed x y z (m/s) | angular speed (rad/s) |"
    lines += ["|---|---|---|---|---|---|---|"]
    for seq_id, s in summary.sequences.items():
        dyn = s.get("dynamic_fraction")
        lines.append(
            f"| `{seq_id}` | {s.get('frames')} | {s.get('duration_s')} | {s.get('people_placed')}"
            f" | {'-' if dyn is None else f'{dyn:.3f}'} | {_motion(s, 'linear_speed')}"
            f" | {_motion(s, 'angular_speed')} |"
        )
    if summary.bench:
        lines += ["", "## Benchmarks", "", "| job | trials ok | mean ATE (m) |", "|---|---|---|"]
        for job_id, r in summary.bench.items():
            ate = r.get("ate_rmse_mean")
            ate_text = "-" if ate is None else f"{ate:.4f}"
            lines.append(f"| `{job_id}` | {r.get('trials_ok', '-')} | {ate_text} |")
    if sheet:
        lines += ["", "## Contact sheet", "", f"![one frame per sequence]({CONTACT_SHEET})"]
    lines += ["", "## Provenance", ""]
    lines += [f"- total size: {_size(summary.size_bytes)}"]
    lines += [f"- twinsim {summary.twinsim_version}, executor: {summary.executor}"]
    lines += ["- command:", "", "```bash", summary.command or "(library call)", "```", ""]
    return "\n".join(lines)


def _tile(seq: Path, stats: dict, label: str) -> np.ndarray | None:
    """The middle frame's colour image of a sequence, `_TILE_W` wide, with its label below."""
    import cv2

    from twinsim.sequence import open_sequence

    if not stats.get("camera") or not stats.get("frames"):
        return None
    stream = open_sequence(seq).camera(stats["camera"])
    rgb = np.ascontiguousarray(stream[len(stream) // 2].rgb)
    h = max(1, round(rgb.shape[0] * _TILE_W / rgb.shape[1]))
    image = cv2.resize(rgb, (_TILE_W, h), interpolation=cv2.INTER_NEAREST)
    kind, _, rest = label.partition("/")
    cell, _, variant = rest.partition("/")
    lines = [cell, f"{kind} {variant}".strip()]
    strip = np.full((12 * len(lines) + 2, _TILE_W, 3), 255, np.uint8)
    for row, text in enumerate(lines):
        origin = (2, 10 + 12 * row)
        cv2.putText(strip, text[:28], origin, cv2.FONT_HERSHEY_PLAIN, 0.65, (0, 0, 0), 1)
    return np.vstack([image, strip])


def write_contact_sheet(dataset: Path, sequences: dict[str, dict]) -> bool:
    """`contact_sheet.png`: one frame per sequence in a grid; False if none has a camera."""
    import cv2

    tiles = [t for i, s in sequences.items() if (t := _tile(dataset / i, s, i)) is not None]
    if not tiles:
        return False
    h = max(t.shape[0] for t in tiles)
    tiles = [np.vstack([t, np.full((h - t.shape[0], _TILE_W, 3), 255, np.uint8)]) for t in tiles]
    cols = min(4, len(tiles))
    blank = np.full_like(tiles[0], 255)
    tiles += [blank] * (-len(tiles) % cols)
    rows = [np.hstack(tiles[r : r + cols]) for r in range(0, len(tiles), cols)]
    with atomic_file(dataset / CONTACT_SHEET) as tmp:
        if not cv2.imwrite(str(tmp), np.vstack(rows)[..., ::-1]):
            raise OutputFolderError(f"{dataset / CONTACT_SHEET}: could not be written")
    return True


def write_card(dataset: Path) -> None:
    """Write the card and contact sheet of `dataset` from its manifest, and the benchmark
    tables in CARLA-Loc's layout when the plan asks for them."""
    summary = dataset_summary(dataset)
    sheet = write_contact_sheet(dataset, summary.sequences)
    text = card_text(summary, sheet)
    if (summary.plan.get("bench") or {}).get("table") == "carla_loc":
        manifest = read_manifest(dataset)
        tables = carla_loc_tables(manifest["jobs"], summary.plan.get("twins") or {})
        write_text_atomic(dataset / TABLES_FILE, tables)
        text += "\n" + tables.replace("## ", "### ")
    write_text_atomic(dataset / CARD, text)
