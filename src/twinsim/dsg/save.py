"""Saving a scene graph so that a full disk cannot pass for a graph: spark-dsg's `save` does not
report a short write, so the file is read back before it takes its name."""

from __future__ import annotations

from pathlib import Path

import spark_dsg as dsg

from twinsim.atomic import atomic_file
from twinsim.errors import OutputFolderError
from twinsim.sequence.writer import check_output_outside_sequences

#: the suffixes spark-dsg writes by (without one it writes `<path>.sparkdsg`, another name)
GRAPH_SUFFIXES = (".json", ".sparkdsg", ".bson")


def check_graph_path(path: Path) -> None:
    """Refuse, before any work, a graph file that exists or whose suffix spark-dsg cannot
    write."""
    check_output_outside_sequences(path)
    if path.suffix not in GRAPH_SUFFIXES:
        raise OutputFolderError(f"{path}: a scene graph file ends in {', '.join(GRAPH_SUFFIXES)}")
    if path.exists():
        raise OutputFolderError(f"{path}: exists; refusing to overwrite a graph file")


def save_graph(graph: dsg.DynamicSceneGraph, path: str | Path, mesh: bool) -> None:
    """Write `graph` (with its mesh when `mesh`) to `path` whole, or leave `path` as it was."""
    with atomic_file(path) as tmp:
        graph.save(str(tmp), mesh)
        try:
            dsg.DynamicSceneGraph.load(str(tmp))
        except Exception as exc:  # spark-dsg raises its parser's own errors
            raise OutputFolderError(
                f"{path}: the graph written does not read back (is the disk full?): "
                f"{str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__}"
            ) from None
