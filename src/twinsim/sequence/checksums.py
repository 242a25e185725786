"""Per-file content checksums of a sequence: written when it closes, checked by `validate`.

A flipped byte in a depth image or a LiDAR sweep still decodes, so decoding alone cannot catch
it; like rosbag2/MCAP's CRCs, `checksums.csv` lists the CRC-32 and size of every file the
sequence holds (`scene.json` and every stream file; not `metadata.json`, which the checksums'
own entry in it changes, nor itself). It is written after every stream file is closed and
before the metadata says `complete`.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from twinsim.model.layout import CHECKSUMS, INCOMPLETE, METADATA

_CHUNK = 1 << 20
_HEADER = "path,crc32,size"
#: the metadata is not covered, as its `checksums` entry changes it; nor the checksums file
_SKIP = frozenset({CHECKSUMS, INCOMPLETE, METADATA})


def folder_files(root: Path, skip: frozenset[str]) -> Iterator[str]:
    """Every file below `root` but those named in `skip`, as sorted `/`-separated relative
    paths (what checksums and a checkpoint's ledger cover)."""
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        rel = Path(folder).relative_to(root)
        for name in sorted(files):
            path = (rel / name).as_posix()
            if path not in skip:
                yield path


def file_crc32(path: Path) -> tuple[int, int]:
    """(CRC-32, size in bytes) of one file, read in 1 MiB chunks."""
    crc, size = 0, 0
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            crc = zlib.crc32(chunk, crc)
            size += len(chunk)
    return crc, size


def _crcs(root: Path, paths: list[str]) -> list[tuple[int, int]]:
    """The CRC-32 and size of each path, on a few threads (zlib releases the GIL)."""
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        return list(pool.map(lambda p: file_crc32(root / p), paths))


def write_checksums(root: Path) -> None:
    """Write `checksums.csv` for the sequence at `root` (temporary name, then renamed)."""
    paths = list(folder_files(root, _SKIP))
    rows = [
        f"{p},{crc:08x},{size}" for p, (crc, size) in zip(paths, _crcs(root, paths), strict=True)
    ]
    tmp = root / f".{CHECKSUMS}.tmp"
    tmp.write_text("\n".join([_HEADER, *rows]) + "\n", encoding="utf-8")
    os.replace(tmp, root / CHECKSUMS)


def checksum_problems(root: Path) -> list[str]:
    """Files whose content, size or presence differs from `checksums.csv`, one line each."""
    try:
        lines = (root / CHECKSUMS).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{CHECKSUMS}: cannot be read ({exc})"]
    if not lines or lines[0] != _HEADER:
        return [f"{CHECKSUMS}: header must be {_HEADER}"]
    listed: dict[str, tuple[int, int]] = {}
    problems = []
    for number, line in enumerate(lines[1:], start=2):
        parts = line.rsplit(",", 2)
        try:
            path, crc, size = parts[0], int(parts[1], 16), int(parts[2])
        except (IndexError, ValueError):
            problems.append(f"{CHECKSUMS}:{number}: expected path,crc32,size, got {line!r}")
            continue
        listed[path] = (crc, size)
    present = list(folder_files(root, _SKIP))
    problems += [
        f"{p}: missing (listed in {CHECKSUMS})" for p in sorted(set(listed) - set(present))
    ]
    problems += [f"{p}: not listed in {CHECKSUMS}" for p in present if p not in listed]
    known = [p for p in present if p in listed]
    for path, (crc, size) in zip(known, _crcs(root, known), strict=True):
        want_crc, want_size = listed[path]
        if size != want_size:
            problems.append(f"{path}: {size} bytes, {CHECKSUMS} says {want_size}")
        elif crc != want_crc:
            problems.append(
                f"{path}: content changed (CRC-32 {crc:08x}, {CHECKSUMS} says {want_crc:08x})"
            )
    return problems
