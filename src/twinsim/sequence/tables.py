"""CSV rows that round-trip exactly: integer leading columns, float64 values written with `repr`.

`repr(float)` is the shortest text that parses back to the same bits, so a table read back gives
identical float64 values (replay relies on this).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from twinsim.errors import SequenceError


def is_int(value: object) -> bool:
    """An int that is not a bool (JSON's true/false load as bools)."""
    return isinstance(value, int) and not isinstance(value, bool)


def format_row(ints: Iterable[int], values: np.ndarray) -> str:
    """One CSV line: the integers as written, then every float64 value bit-exactly."""
    return ",".join([*map(str, ints), *map(repr, values.tolist())]) + "\n"


@dataclass(frozen=True)
class Table:
    """A parsed CSV file: header names, integer leading columns (N, k), float columns (N, m)."""

    columns: tuple[str, ...]
    ints: np.ndarray
    values: np.ndarray


def parse_table(path: Path, n_int: int, name: str) -> Table:
    """Read a CSV written by `format_row`; `name` (e.g. "imu0/data.csv") prefixes every error."""
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise SequenceError(f"{name}: cannot be read ({exc})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or not lines[0]:
        raise SequenceError(f"{name}: missing header row")
    columns = tuple(lines[0].split(","))
    width = len(columns)
    if width < n_int:
        raise SequenceError(f"{name}: header has {width} columns, expected at least {n_int}")
    ints: list[list[int]] = []
    values: list[list[float]] = []
    for line_no, line in enumerate(lines[1:], start=2):
        cells = line.split(",")
        if len(cells) != width:
            raise SequenceError(
                f"{name} line {line_no}: {len(cells)} columns, expected {width} like the header"
            )
        try:
            ints.append([int(c) for c in cells[:n_int]])
            values.append([float(c) for c in cells[n_int:]])
        except ValueError as exc:
            raise SequenceError(f"{name} line {line_no}: not a number ({exc})") from None
    return Table(
        columns=columns,
        ints=np.array(ints, dtype=np.int64).reshape(len(ints), n_int),
        values=np.array(values, dtype=np.float64).reshape(len(values), width - n_int),
    )
