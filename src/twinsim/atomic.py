"""Outputs written whole or not at all, by one writer at a time.

Every single-file output (a preview, a scene graph, a plot, a report) goes through
`atomic_file`: a temporary sibling renamed over the target when done, so a full disk, a
read-only folder or a crash never leaves a truncated file that looks finished, and a writer
that fails silently (OpenCV's `imwrite` returns False) is caught. A folder being written (a
sequence, a benchmark, an export) is held with `lock_folder`/`folder_lock`, so a second
twinsim on the same folder is refused instead of interleaving with the first, and a folder a
command goes on writing (a resume, a benchmark, a dataset) must hold only regular files and
folders (`check_plain_folder`): a link would lead its writes out of it.
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from twinsim.errors import OutputFolderError

#: the longest file or folder name Linux file systems take, in bytes (NAME_MAX)
NAME_MAX = 255


def check_names(path: str | Path) -> None:
    """Refuse (`OutputFolderError`, one line) an output path with a name the file system
    would refuse: every stat of it, even a check whether it exists, fails with ENAMETOOLONG."""
    for part in Path(path).parts:
        if len(part.encode("utf-8", "surrogateescape")) > NAME_MAX:
            raise OutputFolderError(f"{path}: the name {part[:20]}… is over {NAME_MAX} bytes")


@contextmanager
def atomic_file(path: str | Path) -> Iterator[Path]:
    """A temporary path beside `path` (the same suffix and no other, so format-by-extension
    writers work, even where `path` has none) for the block to write; renamed over `path` if
    the block wrote a non-empty file, else removed, with `OutputFolderError` naming `path`."""
    path = Path(path)
    check_names(path)
    if not path.parent.is_dir():
        raise OutputFolderError(f"{path}: its folder {path.parent} does not exist")
    tmp = path.with_name(f".{path.stem}-partial-{os.getpid()}{path.suffix}")
    try:
        yield tmp
        if not tmp.is_file() or tmp.stat().st_size == 0:
            raise OutputFolderError(f"{path}: nothing was written (is the disk full?)")
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputFolderError(f"{path}: cannot be written ({exc.strerror or exc})") from None
    finally:
        with suppress(OSError):  # nothing there to remove (or a name the system refuses)
            tmp.unlink(missing_ok=True)


def write_text_atomic(path: str | Path, text: str) -> None:
    """`path` holds `text` (UTF-8) in full, or is left as it was."""
    with atomic_file(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def lock_folder(path: Path) -> int:
    """An exclusive lock on the folder `path` (`flock` on its descriptor, released when the
    descriptor closes or the process dies), so a second writer, such as a second
    `run --resume` of one folder, is refused instead of interleaving with the first."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise OutputFolderError(f"{path}: another twinsim is writing it; let it end") from None
    return fd


@contextmanager
def folder_lock(path: Path) -> Iterator[None]:
    """`lock_folder` held for the block."""
    fd = lock_folder(path)
    try:
        yield
    finally:
        os.close(fd)


def special_entries(root: Path) -> list[str]:
    """Every entry below `root` that is not a regular file or a folder (a link, a FIFO, a
    socket, a device), one problem line each: twinsim's folders hold only what it wrote."""
    problems = []
    for folder, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            entry = Path(folder) / name
            mode = entry.lstat().st_mode
            if stat.S_ISLNK(mode):
                what = "a symbolic link"
            elif stat.S_ISDIR(mode) or stat.S_ISREG(mode):
                continue
            else:
                what = "not a regular file (a FIFO, socket or device)"
            name = entry.relative_to(root).as_posix()
            problems.append(f"{name}: {what}; only regular files and folders belong here")
    return problems  # os.walk does not descend through links


def check_plain_folder(root: Path, doing: str) -> None:
    """Refuse (`OutputFolderError`, one line) to go on `doing` in `root` when it holds a link,
    a FIFO, a socket or a device: writes would follow it out of the folder, reads would block."""
    special = special_entries(root)
    if special:
        more = f" (and {len(special) - 1} more)" if len(special) > 1 else ""
        raise OutputFolderError(f"{root}: cannot {doing}: {special[0]}{more}")
