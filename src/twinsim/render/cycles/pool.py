"""Cycles frames rendered by a pool of worker processes, for machines with more cores than
one render keeps busy (Blender's scene sync, BVH update and denoising are serial).

Each worker builds its own World and Blender scene of the twin's world once; a job carries
only what changes between frames, the `Instant`s the main process read of its running world
and the camera, so a frame rendered in a worker is the same bytes as one rendered in the
main process (same seed, samples and state; Cycles gives the same bytes on any thread count).
Results are futures, which the twin's writer takes in frame order.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from twinsim.render.cycles.passes import CyclesPasses
from twinsim.render.cycles.scene import Instant
from twinsim.render.cycles.settings import CyclesSettings


@dataclass(frozen=True)
class WorldRecipe:
    """What a worker needs to build the twin's world: scene text and its mesh assets' bytes,
    render config, physics rate, look and the OpenGL backend MuJoCo uses."""

    scene_json: str
    asset_bytes: dict[str, bytes]
    render: object  # twinsim.config.RenderConfig
    physics_hz: int
    look: object  # twinsim.engine.look.Look
    backend: str


def recipe_of(world, backend: str) -> WorldRecipe:
    """The recipe of a running `World`."""
    hz = round(1.0 / float(world.model.opt.timestep))
    scene = world.scene
    blobs = {a.sha256: scene.asset_bytes(a.sha256) for a in scene.mesh_assets}
    return WorldRecipe(scene.to_json(), blobs, world.render_config, hz, world.look, backend)


_WORKER: dict = {}  # the worker process's own world and Blender scene


def _start_worker(recipe: WorldRecipe, settings: CyclesSettings, workdir: str, threads: int):
    """Build this worker's World and Blender scene (once, when the process starts).

    A spawned process starts with its parent's `sys.path`, which holds the folders of
    Blender's own scripts once bpy has loaded there; their `bpy` package (which needs the
    loaded module) would shadow the real one, so they go before bpy is imported here."""
    marker = f"{os.sep}bpy{os.sep}"
    sys.path[:] = [p for p in sys.path if marker not in p]
    from twinsim.engine.backend import configure_backend

    configure_backend(recipe.backend)
    from twinsim.engine.world import World
    from twinsim.model.scene import SceneSpec
    from twinsim.render.cycles.scene import CyclesScene

    scene = SceneSpec.from_json(recipe.scene_json).with_asset_bytes(recipe.asset_bytes)
    world = World(scene, recipe.render, recipe.physics_hz, recipe.look)
    cycles = CyclesScene(world, settings, Path(workdir) / f"worker{os.getpid()}")
    cycles.use_threads(threads)
    _WORKER.update(world=world, cycles=cycles)


def _render_job(
    T_world_cam: np.ndarray,
    robot: str,
    K: np.ndarray,
    size: tuple[int, int],
    clip: tuple[float, float],
    motion: list[Instant],
    rolling: float | None,
) -> CyclesPasses:
    """One frame in this worker: the scene posed to `motion` (one instant: sharp)."""
    return _WORKER["cycles"].render(T_world_cam, robot, K, size, clip, motion, rolling)


class CyclesPool:
    """`workers` processes rendering frames of one world; `submit` returns a future."""

    def __init__(
        self, recipe: WorldRecipe, settings: CyclesSettings, workdir: Path, workers: int
    ) -> None:
        threads = max(1, (os.cpu_count() or 1) // workers)
        self._pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(recipe, settings, str(workdir), threads),
        )

    def submit(
        self,
        T_world_cam: np.ndarray,
        robot: str,
        K: np.ndarray,
        size: tuple[int, int],
        clip: tuple[float, float],
        motion: list[Instant],
        rolling: float | None,
    ) -> Future:
        """Render a frame in a worker: the world at `motion` (its last instant is the frame's;
        several: blurred over them)."""
        return self._pool.submit(_render_job, T_world_cam, robot, K, size, clip, motion, rolling)

    def close(self) -> None:
        """Wait for the workers and stop them."""
        self._pool.shutdown(wait=True, cancel_futures=False)
