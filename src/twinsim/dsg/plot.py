"""A picture of a scene graph over its floor plan (matplotlib): rooms, places, objects, agents."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import spark_dsg as dsg

from twinsim.dsg import layers
from twinsim.dsg.places import FreeGrid
from twinsim.dsg.queries import SceneGraphQueries

_ROOM_COLOURS = {
    "living_room": "#f4e3c3",
    "kitchen": "#d9f0d3",
    "bedroom": "#dbe5f5",
    "bathroom": "#e6dcf0",
    "corridor": "#eeeeee",
    "office": "#f5dada",
    "open_area": "#f2efe6",
    "block": "#e4ecd9",
    "junction": "#d6d6d6",
    "road": "#c4c4c4",
}
_MOVER_COLOURS = {"person": "#7d3c98", "vehicle": "#1e8449"}  # agents other than robots


def plot_graph(
    graph: dsg.DynamicSceneGraph,
    out: str | Path,
    grid: FreeGrid | None = None,
    paths: dict[str, np.ndarray] | None = None,
) -> Path:
    """Draw the graph seen from above (obstacles from `grid`, planned `paths`) and save it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    q = SceneGraphQueries(graph)
    fig, ax = plt.subplots(figsize=(9, 6.5), dpi=110)
    for room in q.rooms.values():
        x, y = room.polygon.exterior.xy
        ax.fill(x, y, color=_ROOM_COLOURS[room.type], ec="#555555", lw=1.5, zorder=0)
    if grid is not None:
        ny, nx = grid.clearance_m.shape
        x0, y0 = grid.origin
        blocked = np.ma.masked_where(grid.clearance_m > 0, np.ones((ny, nx)))
        extent = (x0, x0 + nx * grid.cell_m, y0, y0 + ny * grid.cell_m)
        ax.imshow(
            blocked,
            origin="lower",
            extent=extent,
            cmap="Greys",
            vmin=0,
            vmax=1.6,
            alpha=0.8,
            zorder=0.5,
        )
    places = graph.get_layer(layers.PLACES)
    pos = {n.id.value: np.array(n.attributes.position[:2]) for n in places.nodes}
    for e in places.edges:
        a, b = pos[e.source], pos[e.target]
        ax.plot([a[0], b[0]], [a[1], b[1]], color="#9bb7d4", lw=0.4, zorder=1)
    pts = np.array(list(pos.values()))
    ax.scatter(pts[:, 0], pts[:, 1], s=4, color="#4f7cac", zorder=2, label="places")
    objs = np.array([n.attributes.position[:2] for n in graph.get_layer(layers.OBJECTS).nodes])
    if len(objs):
        ax.scatter(
            objs[:, 0], objs[:, 1], s=22, marker="s", color="#c0792b", zorder=3, label="objects"
        )
    rooms = graph.get_layer(layers.ROOMS)
    centre = {n.id.value: np.array(n.attributes.position[:2]) for n in rooms.nodes}
    for e in rooms.edges:
        a, b = centre[e.source], centre[e.target]
        ax.plot([a[0], b[0]], [a[1], b[1]], color="#b03a2e", lw=2.0, zorder=4)
    c = np.array(list(centre.values()))
    ax.scatter(c[:, 0], c[:, 1], s=90, color="#b03a2e", zorder=5, label="rooms (and their links)")
    for n in rooms.nodes:
        ax.annotate(
            n.attributes.name,
            n.attributes.position[:2],
            xytext=(4, 6),
            textcoords="offset points",
            fontsize=7,
            zorder=6,
        )
    labelled = set()
    for agent in graph.metadata.get()["agents"]:
        _, position = q.trajectory(agent["name"])
        kind = agent.get("kind", "robot")
        if kind == "robot":
            ax.plot(position[:, 0], position[:, 1], lw=2, zorder=7, label=agent["name"])
            continue
        label = None if kind in labelled else f"{kind}s"
        labelled.add(kind)
        colour = _MOVER_COLOURS.get(kind, "#555555")
        ax.plot(position[:, 0], position[:, 1], lw=0.6, alpha=0.6, color=colour, label=label)
    for label, path in (paths or {}).items():
        ax.plot(path[:, 0], path[:, 1], lw=1.6, ls="--", zorder=8, label=label)
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    fig.tight_layout()
    out = Path(out)
    fig.savefig(out)
    plt.close(fig)
    return out
