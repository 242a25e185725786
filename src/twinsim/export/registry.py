"""The export formats by name, and `export_sequence`, which checks options and dispatches."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import shutil
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from twinsim._version import __version__
from twinsim.atomic import folder_lock
from twinsim.errors import SequenceError
from twinsim.export.common import ExportError, Progress, no_progress
from twinsim.registries import FORMATS
from twinsim.sequence.reader import open_sequence
from twinsim.sequence.writer import check_output_folder

#: written last into every finished export: format, options, robot, source, twinsim version
EXPORT_MARKER = "twinsim-export.json"


@dataclass(frozen=True)
class ExportFormat:
    """A format: its exporter function (`package.module:function`, imported lazily, so a
    format costs nothing until it is used) and a one-line summary."""

    name: str
    target: str
    summary: str

    def exporter(self):
        """The exporter function `(seq, out, *, <options>, progress) -> Path`."""
        module, function = self.target.split(":")
        return getattr(importlib.import_module(module), function)

    def options(self) -> dict[str, object]:
        """The format's options and their defaults (keyword arguments besides `progress`)."""
        parameters = inspect.signature(self.exporter()).parameters.values()
        return {
            p.name: p.default
            for p in parameters
            if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name != "progress"
        }


def export_sequence(
    seq_path: str | Path,
    fmt: str,
    out_dir: str | Path,
    progress: Progress = no_progress,
    robot: str | None = None,
    overwrite: bool = False,
    **options: object,
) -> Path:
    """Export the streams of one robot (`robot`; default the only or first one) of the
    sequence at `seq_path` as `fmt` into the new folder `out_dir`; returns what the format's
    exporter returns (the folder, or its main file) at its final place.

    Options are the format's keyword arguments (`FORMATS[fmt].options()`); unknown ones are
    refused by name. The export is written into a hidden sibling folder renamed to `out_dir`
    when complete (with `EXPORT_MARKER` saying what made it), so a killed export never looks
    finished; `overwrite` replaces an existing `out_dir` (never a sequence). The source
    sequence is only read.
    """
    if fmt not in FORMATS:
        raise ExportError(f"format {fmt!r} is unknown; allowed: {', '.join(FORMATS)}")
    entry = FORMATS[fmt]
    allowed = entry.options()
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        names = ", ".join(allowed) or "none"
        raise ExportError(f"{fmt}: unknown option {unknown[0]!r}; allowed: {names}")
    seq = open_sequence(seq_path)
    try:
        seq = seq.for_robot(robot)
    except SequenceError as exc:
        raise ExportError(f"--robot: {exc}") from None
    final = Path(out_dir)
    out = final.resolve()
    if out == seq.path.resolve() or seq.path.resolve() in out.parents:
        raise ExportError(f"{out_dir}: is inside the source sequence {seq_path}; choose another")
    replaced = _replaceable(final) if overwrite else None
    if replaced is None:
        check_output_folder(final)
    made = not final.exists()
    try:
        final.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"{final}: cannot be created ({exc.strerror})") from None
    partial = final.with_name(f".{final.name}.partial-{os.getpid()}")
    with folder_lock(final):  # a second export to `final` is refused while this one runs
        try:
            shutil.rmtree(partial, ignore_errors=True)
            written = Path(entry.exporter()(seq, partial, progress=progress, **options))
            marker = {"format": fmt, "options": options, "robot": seq.robots[0]}
            marker |= {"source": str(seq.path.resolve()), "twinsim_version": __version__}
            (partial / EXPORT_MARKER).write_text(json.dumps(marker, default=str, indent=1) + "\n")
            if replaced is not None:
                shutil.rmtree(replaced)
            os.rename(partial, final)  # over the empty folder held
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            if made:
                with suppress(OSError):
                    final.rmdir()  # the folder made to hold the lock
            raise
    return final / written.relative_to(partial)  # what the exporter returned (a folder or file)


def _replaceable(final: Path) -> Path | None:
    """The existing folder `--overwrite` may replace (none if there is nothing there)."""
    if not final.exists():
        return None
    if not final.is_dir():
        raise ExportError(f"{final}: exists and is not a folder; --overwrite replaces folders")
    if (final / "metadata.json").is_file() or (final / "INCOMPLETE").exists():
        raise ExportError(f"{final}: is a twinsim sequence; --overwrite never replaces one")
    return final
