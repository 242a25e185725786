"""Files written whole or not at all: a temporary sibling, renamed over the target when done.

Every single-file output (a preview, a scene graph, a plot, a report) goes through
`atomic_file`, so a full disk, a read-only folder or a crash never leaves a truncated file that
looks finished, and a writer that fails silently (OpenCV's `imwrite` returns False) is caught.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from twinsim.errors import OutputFolderError


@contextmanager
def atomic_file(path: str | Path) -> Iterator[Path]:
    """A temporary path beside `path` (the same suffix and no other, so format-by-extension
    writers work, even where `path` has none) for the block to write; renamed over `path` if
    the block wrote a non-empty file, else removed, with `OutputFolderError` naming `path`."""
    path = Path(path)
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
