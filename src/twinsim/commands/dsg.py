"""`twinsim dsg`, `twinsim dsg-query`, `twinsim dsg-plan`: ground-truth 3D dynamic scene graphs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from twinsim.atomic import atomic_file, write_text_atomic
from twinsim.commands.common import console, fail
from twinsim.errors import OutputFolderError, TwinsimError
from twinsim.sequence.writer import check_output_outside_sequences


def _xy(text: str, option: str) -> tuple[float, float]:
    try:
        x, y = (float(v) for v in text.split(","))
    except ValueError:
        raise typer.BadParameter(f"{option} must be 'x,y' in metres, got {text!r}") from None
    return x, y


def dsg(
    seq: Annotated[Path, typer.Argument(help="Sequence folder.")],
    out: Annotated[Path, typer.Option("--out", help="Graph file to write (spark-dsg JSON).")],
    rate: Annotated[int, typer.Option(help="Agent pose samples per second.")] = 10,
    spacing: Annotated[
        float | None,
        typer.Option(
            min=0.1, max=10.0, help="Place spacing in metres (0.1-10; default 0.5, a town 5)."
        ),
    ] = None,
    mesh: Annotated[
        bool, typer.Option(help="Add the class-labelled mesh of the static geometry.")
    ] = False,
    plot: Annotated[
        Path | None, typer.Option(help="Also draw the graph over the floor plan (PNG).")
    ] = None,
) -> None:
    """Build the ground-truth 3D dynamic scene graph of a sequence and save it with spark-dsg."""
    from twinsim.dsg import free_grid, sequence_graph
    from twinsim.dsg.plot import plot_graph
    from twinsim.dsg.save import check_graph_path, save_graph
    from twinsim.sequence import open_sequence

    try:
        check_graph_path(out)
        if plot is not None:
            check_output_outside_sequences(plot)
        graph = sequence_graph(seq, agent_rate_hz=rate, place_spacing_m=spacing, mesh=mesh)
        save_graph(graph, out, mesh)
        if plot is not None:
            with atomic_file(plot) as tmp:
                scene = open_sequence(seq).scene
                grid = free_grid(scene) if scene.roads is None else None  # a town: its regions
                plot_graph(graph, tmp, grid)
    except TwinsimError as exc:
        fail(exc)
    counts = {
        name: graph.get_layer(name).num_nodes()
        for name in ("ROOMS", "PLACES", "OBJECTS", "STRUCTURES")
    }
    meta = graph.metadata.get()
    agents = [a["name"] for a in meta["agents"]]
    console.print(
        f"scene graph written to [bold]{out}[/]: "
        + ", ".join(f"{v} {k.lower()}" for k, v in counts.items())
        + f", agents: {', '.join(agents)}; rooms from the {meta['rooms_from'].replace('_', ' ')}"
    )


def dsg_query(
    graph_file: Annotated[Path, typer.Argument(help="Graph file written by `twinsim dsg`.")],
    where: Annotated[str | None, typer.Option(help="Agent whose pose and room to report.")] = None,
    t_ns: Annotated[int | None, typer.Option("--t-ns", help="Time for --where (ns).")] = None,
    room_at: Annotated[str | None, typer.Option(help="Room holding point 'x,y'.")] = None,
    objects: Annotated[str | None, typer.Option(help="Objects of this class.")] = None,
    room: Annotated[str | None, typer.Option(help="Room (id or name) for --objects.")] = None,
    visits: Annotated[
        str | None, typer.Option(help="Rooms this agent visited, with times.")
    ] = None,
) -> None:
    """Answer questions from a scene graph: where, which room, which objects, which visits."""
    from twinsim.dsg.queries import SceneGraphQueries, load_graph

    try:
        q = SceneGraphQueries(load_graph(graph_file))
        if where is not None:
            if t_ns is None:
                raise typer.BadParameter("--where needs --t-ns")
            T = q.agent_pose(where, t_ns)
            r = q.agent_room(where, t_ns)
            x, y, z = T[:3, 3]
            console.print(
                f"{where} at t_ns={t_ns}: x={x:.3f} y={y:.3f} z={z:.3f} m, "
                f"room {r.name if r else 'none'}"
            )
        if room_at is not None:
            r = q.room_at(_xy(room_at, "--room-at"))
            console.print(f"point {room_at}: room {r.name if r else 'none'}")
        if objects is not None:
            found = q.objects(objects, room)
            console.print(f"{len(found)} {objects} object(s)" + (f" in {room}" if room else ""))
            for o in found:
                p = o.position
                console.print(
                    f"  {o.name} (instance {o.instance_id}, room {o.room_id}) "
                    f"at {p[0]:.2f}, {p[1]:.2f}, {p[2]:.2f}"
                )
        if visits is not None:
            for v in q.rooms_visited(visits):
                console.print(f"{visits}: {v.room.name} from {v.t_enter_ns} to {v.t_exit_ns} ns")
    except TwinsimError as exc:
        fail(exc)


def dsg_plan(
    seq: Annotated[Path, typer.Argument(help="Sequence folder (its floor plan is planned in).")],
    start: Annotated[str, typer.Option(help="Start 'x,y' in metres.")],
    goal: Annotated[str, typer.Option(help="Goal 'x,y' in metres.")],
    clearance: Annotated[
        float, typer.Option(min=0.0, max=5.0, help="Clearance to keep, metres (0-5).")
    ] = 0.25,
    plot: Annotated[
        Path | None, typer.Option(help="Draw both paths over the graph and floor plan (PNG).")
    ] = None,
) -> None:
    """Plan hierarchically on the scene graph and with flat A*; print lengths and the speed-up."""
    from twinsim.dsg import HierarchicalPlanner, free_grid, plan_flat, sequence_graph
    from twinsim.dsg.errors import DsgError
    from twinsim.dsg.plot import plot_graph
    from twinsim.sequence import open_sequence

    try:
        a, b = _xy(start, "--start"), _xy(goal, "--goal")
        if plot is not None:
            check_output_outside_sequences(plot)
        scene = open_sequence(seq).scene
        if scene.roads is not None:
            raise DsgError(
                f"{seq}: a town; dsg-plan plans over a floor's clearance grid, a town's drives "
                "are planned over its lanes (robot.goal_lane)"
            )
        graph = sequence_graph(seq, min_clearance_m=clearance)
        grid = free_grid(scene)
        planner = HierarchicalPlanner(graph, grid, clearance)
        t0 = time.perf_counter()
        hier = planner.plan(a, b)
        t1 = time.perf_counter()
        flat = plan_flat(grid, a, b, clearance)
        t2 = time.perf_counter()
        if plot is not None:
            paths = {"hierarchical path": hier.path_xy, "flat A* path": flat.path_xy}
            with atomic_file(plot) as tmp:
                plot_graph(graph, tmp, grid, paths)
    except TwinsimError as exc:
        fail(exc)
    console.print(
        f"hierarchical: {hier.length_m:.2f} m through rooms {list(hier.rooms)} "
        f"in {1e3 * (t1 - t0):.1f} ms; flat A*: {flat.length_m:.2f} m in {1e3 * (t2 - t1):.1f} ms; "
        f"length ratio {hier.length_m / flat.length_m:.3f}, speed-up {(t2 - t1) / (t1 - t0):.1f}x"
    )


def dsg_reconstruct(
    seq: Annotated[Path, typer.Argument(help="Sequence folder with RGB-D frames.")],
    out: Annotated[Path, typer.Option("--out", help="Evaluation report to write (JSON).")],
    graph_out: Annotated[
        Path | None, typer.Option("--graph", help="Also save the estimated graph (spark-dsg).")
    ] = None,
    camera: Annotated[str, typer.Option(help="Camera stream.")] = "cam0",
    stride: Annotated[int, typer.Option(help="Fuse every n-th frame.", min=1)] = 1,
    voxel: Annotated[float, typer.Option(help="TSDF voxel size, metres.")] = 0.04,
) -> None:
    """Reconstruct the graph from RGB-D with and without dynamic masking; evaluate both."""
    import json

    from twinsim.dsg.estimated import estimated_scene_graph
    from twinsim.dsg.evaluate import evaluate
    from twinsim.dsg.reconstruct import ReconstructionOptions, reconstruct
    from twinsim.dsg.save import check_graph_path, save_graph
    from twinsim.sequence import open_sequence

    try:
        check_output_outside_sequences(out)
        if out.exists():
            raise OutputFolderError(f"{out}: exists; refusing to overwrite it")
        if graph_out is not None:
            check_graph_path(graph_out)
        reader = open_sequence(seq)
        report: dict = {"sequence": str(seq), "camera": camera, "stride": stride, "voxel_m": voxel}
        results = {}
        for masked in (True, False):
            opts = ReconstructionOptions(voxel_m=voxel, frame_stride=stride, mask_dynamic=masked)
            with console.status(f"fusing {camera} ({'masked' if masked else 'unmasked'})"):
                est = reconstruct(reader, camera, opts)
                results[masked] = evaluate(reader, est, camera, stride)
            report["masked" if masked else "unmasked"] = results[masked].as_dict()
            if masked and graph_out is not None:
                save_graph(estimated_scene_graph(est), graph_out, True)
        write_text_atomic(out, json.dumps(report, indent=1) + "\n")
    except TwinsimError as exc:
        fail(exc)
    m, u = results[True], results[False]
    console.print(
        f"mesh accuracy {100 * m.mesh_accuracy_m:.1f} cm, completeness "
        f"{100 * m.mesh_completeness:.0f} %; where people were: error "
        f"{100 * m.trail_error_m:.1f} cm masked vs {100 * u.trail_error_m:.1f} cm unmasked, "
        f"{m.trail_outliers} vs {u.trail_outliers} contrail points; objects precision "
        f"{m.object_precision:.2f} recall {m.object_recall:.2f}; room recall "
        f"{m.room_recall:.2f} of {m.rooms_observed} seen; report in [bold]{out}[/]"
    )


def register(app: typer.Typer) -> None:
    app.command("dsg")(dsg)
    app.command("dsg-query")(dsg_query)
    app.command("dsg-plan")(dsg_plan)
    app.command("dsg-reconstruct")(dsg_reconstruct)
