"""What a checkpoint vouches for: the CRC-32 and size of every file a run has written so far.

A resumed run keeps what the interrupted one wrote before its checkpoint and checksums it into
the finished folder, so a file edited or deleted there in between would come out in a folder
`validate` calls valid. The writer keeps a `ContentLedger` as it goes (a file written once is
read once; a file it appends to is read on from where the last checkpoint left it), the
checkpoint stores its entries, and `ledger_problems` checks the folder against them before a
resume changes anything.
"""

from __future__ import annotations

import zlib
from pathlib import Path

from twinsim.model.layout import CHECKSUMS, INCOMPLETE, METADATA, RESUME, RESUME_TMP, SCENE
from twinsim.sequence.checksums import folder_files

_CHUNK = 1 << 20
#: the scene and metadata are compared whole with what the config makes (`_check_same_run`);
#: the rest are the life cycle's own
_SKIP = frozenset({CHECKSUMS, INCOMPLETE, METADATA, RESUME, RESUME_TMP, SCENE})

#: relative path → [CRC-32 of bytes [head, size), size, 1 if the writer appends to it, head];
#: `head` is what closing an appended file rewrites (a record file's .npy header), else 0
Ledger = dict[str, list[int]]


def _crc(path: Path, start: int, end: int, crc: int = 0) -> int:
    """`crc` continued over bytes [start, end) of `path` (fewer when the file is shorter)."""
    with path.open("rb") as f:
        f.seek(start)
        left = end - start
        while left > 0 and (chunk := f.read(min(_CHUNK, left))):
            crc = zlib.crc32(chunk, crc)
            left -= len(chunk)
    return crc


class ContentLedger:
    """The running CRCs of one folder being written, updated at each checkpoint."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[int, int, int]] = {}  # path → (crc, size, mtime_ns)

    def update(self, root: Path, appended: dict[str, int]) -> Ledger:
        """The ledger of `root` as it is now; `appended`: the files the writer appends to
        (relative paths), each with the bytes at its head that closing it rewrites."""
        ledger: Ledger = {}
        for rel in folder_files(root, _SKIP):
            stat = (root / rel).stat()
            size, mtime = stat.st_size, stat.st_mtime_ns
            head = appended.get(rel, 0)
            known = self._known.get(rel)
            if known is not None and known[1:] == (size, mtime):
                crc = known[0]
            elif known is not None and rel in appended and head <= known[1] <= size:
                crc = _crc(root / rel, known[1], size, known[0])
            else:
                crc = _crc(root / rel, head, size)
            self._known[rel] = (crc, size, mtime)
            ledger[rel] = [crc, size, int(rel in appended), head]
        return ledger


def ledger_problems(root: Path, ledger: Ledger) -> list[str]:
    """Files of `root` that differ from what the checkpoint's ledger saw: missing, another
    size (shorter, for an appended file), or other bytes in the part it saw; one line each."""
    problems = []
    for rel, (crc, size, appended, head) in sorted(ledger.items()):
        path = root / rel
        if path.is_symlink() or not path.is_file():
            problems.append(f"{rel}: missing (written before the checkpoint)")
            continue
        now = path.stat().st_size
        if now < size or (now != size and not appended):
            problems.append(f"{rel}: {now} bytes, the checkpoint saw {size}")
        elif _crc(path, head, size) != crc:
            problems.append(f"{rel}: changed since the checkpoint")
    return problems


def check_ledger(ledger: object) -> None:
    """Check the shape of a ledger read from a checkpoint (ValueError naming what is wrong)."""
    if not isinstance(ledger, dict):
        raise ValueError("contents is not a mapping of files")
    for rel, entry in ledger.items():
        if (
            not isinstance(entry, list)
            or len(entry) != 4
            or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in entry)
            or entry[3] > entry[1]
            or Path(rel).is_absolute()
            or ".." in Path(rel).parts
        ):
            raise ValueError(f"contents entry {rel!r} is not path: [crc32, size, appended, head]")
