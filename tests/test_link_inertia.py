"""Every robot kind carries each link's mass where the link's material is: the compiled centre
of mass (MuJoCo's `body_ipos`, in the link's frame) of a link twinsim builds is the `com` its
body data gives or, without one, the volume-weighted centroid of its geoms, inside the box
they span; a user's robot file keeps the centres of mass the file's own compilation gives.

MuJoCo puts an unset centre of mass at the body's position in its parent: the diff-drive's
wheels once carried theirs 11.5 cm outboard of the tyres. The centroid here is computed from
the compiled geoms (type, size, pose), independently of the body data's own arithmetic.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from twinsim.assemble import build_scene
from twinsim.config import load_config
from twinsim.engine.build import compile_model, robot_body
from twinsim.registries import ROBOTS

#: a user's MJCF whose bodies state no inertia (MuJoCo derives it from the geoms, one of them
#: off-centre) and a URDF whose links state theirs
ROVER_MJCF = """<mujoco model="rover">
  <worldbody>
    <body name="chassis" pos="0 0 0.3">
      <freejoint name="root"/>
      <geom type="box" size="0.15 0.1 0.05" mass="5"/>
      <geom type="box" size="0.03 0.03 0.03" pos="0.12 0 0.08" mass="0.5"/>
      <body name="head" pos="0 0 0.1">
        <joint name="pan" type="hinge" axis="0 0 1"/>
        <geom type="cylinder" size="0.03 0.02" pos="0.02 0 0.01" mass="0.2"/>
        <site name="cam_site" pos="0.05 0 0.02"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
ARM_URDF = """<robot name="arm">
  <link name="base_link">
    <inertial><mass value="2"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision>
  </link>
  <link name="upper">
    <inertial><origin xyz="0 0 0.15"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.15"/>
      <geometry><cylinder radius="0.03" length="0.3"/></geometry></collision>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base_link"/><child link="upper"/><origin xyz="0 0 0.05"/>
    <axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="50" velocity="2"/>
  </joint>
</robot>
"""
#: per kind: the preset, its overrides and the run's length (as the kind's own tests build
#: them; the car drives a town's roads); a kind's user file is written by `_config`
KINDS: dict[str, tuple[str, tuple[str, ...], float]] = {
    "drone": ("tiny", (), 2.0),
    "omni": ("tiny", ("robot.kind=omni",), 2.0),
    "diff_drive": ("tiny", ("robot.kind=diff_drive",), 2.0),
    "quadruped": ("tiny", ("robot.kind=quadruped", "robot.min_rooms_visited=1"), 2.0),
    "arm": (
        "tiny",
        ("robot.kind=arm", "robot.arc_span_deg=60", "robot.max_joint_speed_dps=120"),
        4.0,
    ),
    "car": ("town", ("robot.kind=car", "traffic.vehicles=0", "people.count=0"), 2.0),
    "mjcf": ("tiny", ("robot.kind=mjcf", "robot.mount=cam_site"), 2.0),
    "urdf": ("tiny", ("robot.kind=urdf", "robot.mount=upper"), 2.0),
}
USER_FILES = {"mjcf": ("rover.xml", ROVER_MJCF), "urdf": ("arm.urdf", ARM_URDF)}
TOLERANCE_M = 1e-6


def _config(kind: str, folder):
    preset, overrides, duration_s = KINDS[kind]
    if kind in USER_FILES:
        name, text = USER_FILES[kind]
        (folder / name).write_text(text)
        overrides = (*overrides, f"robot.path={folder / name}")
    return load_config(preset, list(overrides), seed=3, duration_s=duration_s)


def _geom_half_extents(model: mujoco.MjModel, g: int) -> np.ndarray:
    """Half extents of geom `g` along its own axes."""
    size = model.geom_size[g]
    kind = mujoco.mjtGeom(model.geom_type[g])
    if kind in (mujoco.mjtGeom.mjGEOM_BOX, mujoco.mjtGeom.mjGEOM_ELLIPSOID):
        return size.copy()
    if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
        return np.full(3, size[0])
    if kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
        return np.array([size[0], size[0], size[1] + size[0]])
    if kind == mujoco.mjtGeom.mjGEOM_CYLINDER:
        return np.array([size[0], size[0], size[1]])
    raise AssertionError(f"no extent for geom type {kind}")


def _geom_volume(model: mujoco.MjModel, g: int) -> float:
    size = model.geom_size[g]
    kind = mujoco.mjtGeom(model.geom_type[g])
    if kind == mujoco.mjtGeom.mjGEOM_BOX:
        return 8.0 * size[0] * size[1] * size[2]
    if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
        return 4.0 / 3.0 * np.pi * size[0] ** 3
    if kind == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
        return 4.0 / 3.0 * np.pi * size[0] * size[1] * size[2]
    if kind == mujoco.mjtGeom.mjGEOM_CYLINDER:
        return 2.0 * np.pi * size[0] ** 2 * size[1]
    if kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
        return 2.0 * np.pi * size[0] ** 2 * size[1] + 4.0 / 3.0 * np.pi * size[0] ** 3
    raise AssertionError(f"no volume for geom type {kind}")


def _box_and_centroid(model: mujoco.MjModel, geoms: list[int]) -> tuple[np.ndarray, ...]:
    """The box (low, high corners) the geoms span and their volume-weighted centroid, in their
    body's frame."""
    lows, highs, volumes = [], [], []
    for g in geoms:
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, model.geom_quat[g])
        half = np.abs(rot.reshape(3, 3)) @ _geom_half_extents(model, g)
        lows.append(model.geom_pos[g] - half)
        highs.append(model.geom_pos[g] + half)
        volumes.append(_geom_volume(model, g))
    volumes = np.array(volumes)
    centroid = volumes @ model.geom_pos[geoms] / volumes.sum()
    return np.min(lows, axis=0), np.max(highs, axis=0), centroid


def _inside(point: np.ndarray, low: np.ndarray, high: np.ndarray) -> bool:
    return bool(np.all(point >= low - TOLERANCE_M) and np.all(point <= high + TOLERANCE_M))


def test_every_registered_kind_is_checked():
    assert set(ROBOTS.names()) <= set(KINDS), "add the new kind's config to KINDS"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_link_carries_its_mass_where_its_geometry_is(kind, tmp_path):
    cfg = _config(kind, tmp_path)
    scene = build_scene(cfg)
    model = compile_model(scene, cfg.render, cfg.sim.physics_hz)
    robot = scene.robots[0]
    body = robot_body(scene, robot)
    for link in body.links:
        b = model.body(link.name)
        geoms = [model.geom(g.name).id for g in link.geoms]
        ipos = b.ipos
        if link.com is not None:  # stated: kept as given
            assert np.allclose(ipos, link.com, atol=TOLERANCE_M), (link.name, ipos, link.com)
            continue
        assert geoms, f"{link.name}: no com and no geoms"
        low, high, centroid = _box_and_centroid(model, geoms)
        assert _inside(ipos, low, high), (link.name, ipos, low, high)
        assert np.allclose(ipos, centroid, atol=TOLERANCE_M), (link.name, ipos, centroid)
    if body.model is not None:
        _check_user_model(model, body.model, tmp_path)


def _check_user_model(model: mujoco.MjModel, attached, folder) -> None:
    """The attached file's bodies keep the centres of mass of the file compiled alone, each
    inside the box its geoms span."""
    name, _ = USER_FILES[attached.file.format]
    alone = mujoco.MjModel.from_xml_path(str(folder / name))
    checked = 0
    for i in range(1, alone.nbody):
        if alone.body_mass[i] <= 0.0:
            continue
        b = model.body(attached.prefix + alone.body(i).name)
        assert np.allclose(b.ipos, alone.body_ipos[i], atol=TOLERANCE_M), b.name
        geoms = list(range(b.geomadr[0], b.geomadr[0] + b.geomnum[0]))
        low, high, _ = _box_and_centroid(model, geoms)
        assert _inside(b.ipos, low, high), (b.name, b.ipos, low, high)
        checked += 1
    assert checked
