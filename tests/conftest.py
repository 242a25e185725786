"""Shared fixtures: a hand-built room whose geometry the tests know exactly."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from twinsim.engine.backend import configure_backend

# Chosen before any test module imports mujoco (importing it fixes the GL platform).
GL_BACKEND = configure_backend("auto")

from twinsim.config import TwinsimConfig  # noqa: E402
from twinsim.model.scene import (  # noqa: E402
    GeomSpec,
    LightSpec,
    MaterialSpec,
    ObjectSpec,
    RoomSpec,
    SceneSpec,
)
from twinsim.model.sections import RenderConfig  # noqa: E402
from twinsim.robots.drone.spec import DroneSpec  # noqa: E402
from twinsim.sensors.kinds.camera import CameraConfig  # noqa: E402
from twinsim.sensors.kinds.imu import ImuConfig  # noqa: E402
from twinsim.sensors.rig import resolve_sensors  # noqa: E402

ROOM_X = (-3.0, 3.0)  # inner faces of the walls along x
ROOM_Y = (-2.0, 2.0)
WALL_HEIGHT = 2.5
WALL_T = 0.1


def _box(iid: int, name: str, cls: str, center, half, material: str) -> ObjectSpec:
    return ObjectSpec(
        instance_id=iid,
        name=name,
        semantic_class=cls,
        room_id=0,
        pos=tuple(float(c) for c in center),
        geoms=(GeomSpec(type="box", size=tuple(float(h) for h in half), material=material),),
    )


def make_robot(start=(0.0, 0.0, 1.2), start_yaw: float = 0.0) -> DroneSpec:
    """GRADE's drone limits on a 1.5 kg body, at rest at `start` (no planned path)."""
    return DroneSpec(
        mass_kg=1.5,
        inertia=(0.0165, 0.0165, 0.0324),
        half_size=(0.18, 0.18, 0.05),
        start_pos=tuple(start),
        start_yaw=start_yaw,
        max_speed_mps=0.5,
        max_roll_pitch_rate_dps=40,
        max_yaw_rate_dps=30,
        max_roll_pitch_deg=25,
    )


def box_room_scene(
    cam: CameraConfig | None = None, start=(0.0, 0.0, 1.2), start_yaw: float = 0.0
) -> SceneSpec:
    """A 6 × 4 m room with walls whose inner faces lie exactly at x = ±3 m and y = ±2 m."""
    hx, hy, t = ROOM_X[1], ROOM_Y[1], WALL_T / 2
    h = WALL_HEIGHT / 2
    objects = [
        _box(1, "floor", "floor", (0, 0, -0.05), (hx, hy, 0.05), "grey"),
        _box(2, "ceiling", "ceiling", (0, 0, WALL_HEIGHT + 0.05), (hx, hy, 0.05), "white"),
        _box(3, "wall_east", "wall", (hx + t, 0, h), (t, hy + 2 * t, h), "red"),
        _box(4, "wall_west", "wall", (-hx - t, 0, h), (t, hy + 2 * t, h), "green"),
        _box(5, "wall_north", "wall", (0, hy + t, h), (hx, t, h), "blue"),
        _box(6, "wall_south", "wall", (0, -hy - t, h), (hx, t, h), "grey"),
        _box(7, "cabinet", "cabinet", (2.0, 1.2, 0.5), (0.3, 0.4, 0.5), "wood"),
        _box(8, "table", "table", (-1.5, -0.8, 0.375), (0.6, 0.4, 0.375), "wood"),
    ]
    colors = {
        "grey": (0.5, 0.5, 0.5, 1),
        "white": (0.9, 0.9, 0.9, 1),
        "red": (0.8, 0.3, 0.3, 1),
        "green": (0.3, 0.8, 0.3, 1),
        "blue": (0.3, 0.3, 0.8, 1),
        "wood": (0.6, 0.4, 0.2, 1),
    }
    cfg = TwinsimConfig(
        cameras={"cam0": cam or CameraConfig(width=64, height=48)},
        imus={"imu0": ImuConfig()},
    )
    return SceneSpec(
        seed=0,
        wall_height=WALL_HEIGHT,
        bounds_min=(ROOM_X[0], ROOM_Y[0], 0.0),
        bounds_max=(ROOM_X[1], ROOM_Y[1], WALL_HEIGHT),
        rooms=(
            RoomSpec(
                room_id=0,
                type="living_room",
                name="room",
                polygon=((-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy)),
            ),
        ),
        doors=(),
        objects=tuple(objects),
        textures=(),
        materials=tuple(MaterialSpec(name=n, rgba=c) for n, c in colors.items()),
        lights=(LightSpec(name="sun", pos=(0, 0, 2.4), diffuse=(0.7, 0.7, 0.7)),),
        robots=(make_robot(start, start_yaw),),
        sensors=resolve_sensors(cfg.robot.sensors),
    )


@pytest.fixture(scope="session")
def gl_backend() -> str:
    return GL_BACKEND


DYNAMIC_OVERRIDES = (
    "people.count=4",
    "flying_objects.count=3",
    "cameras.cam0.width=128",
    "cameras.cam0.height=96",
)


@pytest.fixture(scope="session")
def dynamic_sequence(tmp_path_factory, gl_backend) -> Path:
    """A 3 s sequence of a small world with people and flying objects, recorded once per session.

    Shared by every test module that needs a real dynamic sequence: treat it as read-only.
    """
    from twinsim.config import load_config
    from twinsim.sim import run

    out = tmp_path_factory.mktemp("dynamic") / "seq"
    return run(load_config("tiny", DYNAMIC_OVERRIDES, seed=2, duration_s=3.0), out)


@pytest.fixture
def box_world(gl_backend):
    """A World of the box room with a 64×48 camera; closed after the test."""
    from twinsim.engine.world import World

    world = World(box_room_scene(), RenderConfig(shadow_size=512), physics_hz=240)
    yield world
    world.close()


def place(world, pos, yaw=0.0, pitch=0.0, roll=0.0) -> None:
    """Teleport the robot to a pose, at rest."""
    world.robot().set_state(np.array([*pos, yaw, pitch, roll], float), np.zeros(6))


def object_boxes(objects, classes=None):
    """World AABBs (lo (n, 3), hi (n, 3)) of the geoms of unrotated objects (of `classes`, if
    given), and each geom's object."""
    lo, hi, owner = [], [], []
    for obj in objects:
        if classes is not None and obj.semantic_class not in classes:
            continue
        assert obj.quat == (1.0, 0.0, 0.0, 0.0)
        for g in obj.geoms:
            assert g.quat == (1.0, 0.0, 0.0, 0.0) and g.type in ("box", "cylinder")
            half = np.array(g.size if g.type == "box" else (g.size[0], g.size[0], g.size[1]))
            c = np.asarray(obj.pos) + np.asarray(g.pos)
            lo.append(c - half)
            hi.append(c + half)
            owner.append(obj)
    return np.array(lo), np.array(hi), owner


#: a tiny run with people, flying objects, a small custom LiDAR and an event camera
SENSOR_OVERRIDES = (
    "people.count=2",
    "flying_objects.count=2",
    "lidars.lidar0.model=custom",
    "lidars.lidar0.elevations_deg=[-30,-15,-5,0,5,10]",
    "lidars.lidar0.columns=240",
    "event_cameras.ev0.width=48",
    "event_cameras.ev0.height=36",
    "event_cameras.ev0.rate_hz=120",
)


def structural_problems(path: Path) -> list[str]:
    """`validate`'s problems but those of the checksum layer (`checksums.csv`), for tests of
    the checks that decode files (a damaged file trips both)."""
    from twinsim.sequence import validate_sequence

    return [p for p in validate_sequence(path).problems if "checksums.csv" not in p]


def digest_folder(folder: Path) -> dict[str, str]:
    """sha256 of every file below `folder`, by relative path (byte-identity checks)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def path_smoothness(poses: np.ndarray, dt_s: float) -> tuple[float, float]:
    """(largest heading error from the course while moving, rad; largest sideways (y)
    acceleration, m/s²) of (steps, >= 4) poses x, y, _, yaw sampled every `dt_s` along x."""
    step = np.diff(poses[:, :2], axis=0)
    moving = np.linalg.norm(step, axis=1) > 0.5
    course = np.arctan2(step[:, 1], step[:, 0])
    mid_yaw = 0.5 * (poses[1:, 3] + poses[:-1, 3])
    lateral = np.diff(poses[:, 1], 2) / dt_s**2
    return float(np.abs(course - mid_yaw)[moving].max()), float(np.abs(lateral).max())
