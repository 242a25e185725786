"""Rendering stays right when another world's renderer is garbage-collected mid-run.

Each camera renders in its own OpenGL context. A world dropped without `close()` (a test, a
user's notebook) is freed later by Python's garbage collector, possibly while another world's
context is current. Its MuJoCo render context must then free its GL objects in its own context:
freed in the current one, they delete the live renderer's framebuffer, and every later frame
of that run repeats the last one (seen as a quadruped twin that was not byte-identical)."""

from __future__ import annotations

import gc

import numpy as np

from conftest import box_room_scene, place
from twinsim.model.sections import RenderConfig


def _world():
    from twinsim.engine.world import World

    return World(box_room_scene(), RenderConfig(shadow_size=512), physics_hz=240)


def _depth(world, pos, yaw):
    place(world, pos, yaw=yaw)
    return world.render("cam0", 64, 48).depth  # the box room's camera


def test_a_collected_world_does_not_freeze_another_worlds_frames(gl_backend):
    views = [((-0.5, -0.3, 1.1), 0.3), ((0.4, 0.5, 1.4), -0.6), ((0.0, -0.6, 1.2), 1.2)]
    reference = _world()
    try:
        expected = [_depth(reference, pos, yaw) for pos, yaw in views]
    finally:
        reference.close()
    assert not np.array_equal(expected[1], expected[2])  # the views differ

    live = _world()
    try:
        got = [_depth(live, *views[0])]
        dropped = _world()
        _depth(dropped, *views[0])  # its renderer holds a GL context and MuJoCo's GL objects
        cycle = [dropped]
        cycle.append(cycle)  # freed only by the cyclic collector, as a forgotten world is
        del dropped, cycle
        _depth(live, *views[1])  # the live world's context is current ...
        gc.collect()  # ... when the dropped world's renderer is freed
        got += [_depth(live, pos, yaw) for pos, yaw in views[1:]]
    finally:
        live.close()
    for a, b in zip(got, expected, strict=True):
        assert np.array_equal(a, b)
