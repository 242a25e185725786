"""Traffic and walkers in a town: vehicles never overlap each other, the robot's planned drive
or a person; none crosses a stop line at red; speeds stay within the drawn 80–120 % of the
limit and IDM's bounds; walkers keep to sidewalks and crosswalks and cross only at red for the
traffic; the same config gives the same scene bytes; the counts are in the metadata and
`info` (walkers apart from the `people` section's); bad requests are one-line errors or
warnings with the numbers placed.
"""

from __future__ import annotations

import json
import logging
import math
import subprocess
import sys

import numpy as np
import pytest
import shapely

from twinsim.actors.flying import FlyingMotion
from twinsim.actors.motion import motion_for
from twinsim.actors.pedestrians import WALKER_PREFIX
from twinsim.actors.traffic.simulation import DT_S, KEY_EVERY, simulate_traffic
from twinsim.actors.traffic.vehicles import CLASSES
from twinsim.assemble import build_scene
from twinsim.config import load_config
from twinsim.registries import ROBOTS
from twinsim.scene.worlds.town.generator import TownConfig, generate_town

#: a variant of a capability the everyday tier checks elsewhere (`make test` runs it)
pytestmark = pytest.mark.slow

WEIGHTS = {"car": 0.6, "van": 0.15, "truck": 0.1, "bus": 0.1, "bicycle": 0.05}
TOWN = ("traffic.vehicles=18", "traffic.walkers=10")


@pytest.fixture(scope="module")
def network():
    cfg = TownConfig(preset="small_town", blocks_x=2, blocks_y=2, texture_size=16)
    return generate_town(cfg, np.random.default_rng(2)).roads


@pytest.fixture(scope="module")
def traffic(network):
    return simulate_traffic(network, 30, (0.8, 1.2), WEIGHTS, 90.0, np.random.default_rng(4))


@pytest.fixture(scope="module")
def scene():
    return build_scene(load_config("town", TOWN, seed=1, duration_s=20.0))


def _box(x, y, yaw, half_l, half_w) -> shapely.Geometry:
    c, s = math.cos(yaw), math.sin(yaw)
    corners = [(sx * half_l, sy * half_w) for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
    return shapely.Polygon([(x + c * a - s * b, y + s * a + c * b) for a, b in corners])


def _vehicle_boxes(scene, t):
    """Each vehicle's footprint at each time of `t`, from its keyframed motion."""
    boxes = []
    for obj in (f for f in scene.flying_objects if f.name.startswith("vehicle_")):
        cls = CLASSES[obj.semantic_class]
        motion = FlyingMotion(obj)
        row = []
        for tk in t:
            pos, rot, _ = motion.pose(float(tk))
            yaw = math.atan2(rot[1, 0], rot[0, 0])
            row.append(_box(pos[0], pos[1], yaw, cls.length_m / 2, cls.width_m / 2))
        boxes.append(row)
    return boxes


@pytest.mark.slow
def test_vehicles_keep_clear_of_each_other_the_robot_and_people(scene):
    """At 10 Hz over the run, no two vehicle footprints overlap, none comes within 0.5 m of
    the robot's planned footprint or of a person's root."""
    t = np.arange(0.0, 21.0, 0.1)
    boxes = _vehicle_boxes(scene, t)
    assert len(boxes) >= 10
    robot = scene.robots[0]
    kind = ROBOTS.get(robot.kind)
    robot_xy, radius = kind.planned_footprint(robot, t)
    people_xy = np.stack([motion_for(p).root_xy(t) for p in scene.people])
    for k in range(len(t)):
        polys = [row[k] for row in boxes]
        tree = shapely.STRtree(polys)
        pairs = tree.query(polys, predicate="intersects")
        assert (pairs[0] == pairs[1]).all(), f"vehicles overlap at t={t[k]:.1f}"
        ego = shapely.Point(robot_xy[k]).buffer(radius)
        assert min(p.distance(ego) for p in polys) > 0.5
        people = shapely.points(people_xy[:, k])
        assert min(shapely.distance(p, people).min() for p in polys) > 0.5


def test_no_vehicle_crosses_a_stop_line_at_red(network, traffic):
    """Between two samples where a light is red, no vehicle front passes its stop line."""
    times = traffic.times
    crossings = 0
    for lane in network.lanes:
        if lane.stop_light_id is None or lane.stop_line_s_m is None:
            continue
        light = network.light(lane.stop_light_id)
        stop, heading = lane.point_at(lane.stop_line_s_m)
        u = np.array([math.cos(heading), math.sin(heading)])
        n = np.array([-u[1], u[0]])
        for cls, poses in zip(traffic.classes, traffic.poses, strict=True):
            yaw = poses[:, 3]
            front = poses[:, :2] + CLASSES[cls].length_m / 2 * np.stack(
                [np.cos(yaw), np.sin(yaw)], axis=1
            )
            along, across = (front - stop[:2]) @ u, np.abs((front - stop[:2]) @ n)
            passed = np.flatnonzero((along[:-1] < 0) & (along[1:] >= 0) & (across[1:] < 1.0))
            for k in passed:
                crossings += 1
                red = [light.state_at(float(x)) == "red" for x in (times[k], times[k + 1])]
                assert not all(red), f"lane {lane.lane_id} crossed at red, t={times[k]:.1f}"
    assert crossings >= 10  # the test saw traffic pass lights


def test_speeds_and_accelerations_are_idms(network, traffic):
    """Speeds ≥ 0 and ≤ 1.2 × the fastest limit; accelerations within IDM's bounds; some
    vehicles wait (red lights) and some drive at speed."""
    dt = DT_S * KEY_EVERY
    limit = max(lane.speed_limit_mps for lane in network.lanes)
    speeds = np.linalg.norm(np.diff(traffic.poses[:, :, :2], axis=1), axis=2) / dt
    assert speeds.max() <= 1.2 * limit + 0.5
    assert (speeds < 0.1).mean() > 0.05 and (speeds > 5.0).mean() > 0.1
    for cls, v in zip(traffic.classes, speeds, strict=True):
        accel = np.diff(v) / dt
        c = CLASSES[cls]
        assert accel.max() <= c.accel_mps2 + 0.8  # curves shorten the chord a little
        assert accel.min() >= -3.0 * c.decel_mps2 - 0.8


def test_walkers_keep_to_sidewalks_and_cross_at_red(scene):
    """Walkers' roots stay on sidewalks or crosswalks; on a crosswalk with lights, the
    traffic it crosses has red."""
    net = scene.roads
    walks = shapely.union_all(
        [
            shapely.LineString(
                [*w.centerline, *w.centerline[:1]] if w.closed else w.centerline
            ).buffer(w.width_m / 2 + 0.3)
            for w in net.sidewalks
        ]
    )
    zebras = {
        c.crosswalk_id: shapely.LineString([c.start, c.end]).buffer(c.width_m / 2 + 0.3)
        for c in net.crosswalks
    }
    allowed = shapely.union_all([walks, *zebras.values()])
    walkers = [p for p in scene.people if p.name.startswith(WALKER_PREFIX)]
    assert len(walkers) == 10
    t = np.arange(0.0, 21.0, 0.1)
    on_crossing = 0
    for person in walkers:
        xy = motion_for(person).root_xy(t)
        assert shapely.contains_xy(allowed, xy[:, 0], xy[:, 1]).all(), person.name
        for cid, zone in zebras.items():
            inside = shapely.contains_xy(zone, xy[:, 0], xy[:, 1]) & ~shapely.contains_xy(
                walks, xy[:, 0], xy[:, 1]
            )
            lights = _guards(net, net.crosswalks[cid])
            for k in np.flatnonzero(inside):
                on_crossing += 1
                assert all(net.light(i).state_at(float(t[k])) == "red" for i in lights)
    assert on_crossing > 0


def _guards(net, crosswalk) -> list[int]:
    strip = shapely.LineString([crosswalk.start, crosswalk.end]).buffer(crosswalk.width_m / 2)
    return sorted(
        {
            lane.stop_light_id
            for lane in net.lanes
            if lane.stop_light_id is not None
            and lane.kind != "connector"
            and shapely.LineString([p[:2] for p in lane.centerline]).intersects(strip)
        }
    )


@pytest.mark.slow
def test_the_same_config_gives_the_same_traffic(scene):
    again = build_scene(load_config("town", TOWN, seed=1, duration_s=20.0))
    assert again.to_json() == scene.to_json()
    other = build_scene(load_config("town", TOWN, seed=2, duration_s=20.0))
    assert other.flying_objects != scene.flying_objects


def test_a_town_too_small_warns_with_the_numbers_placed(network, caplog):
    with caplog.at_level(logging.WARNING):
        result = simulate_traffic(network, 400, (0.8, 1.2), WEIGHTS, 5.0, np.random.default_rng(0))
    assert result.placed < 400
    assert f"{result.placed} of 400 vehicles placed" in caplog.text


def test_traffic_without_roads_is_a_one_line_error(tmp_path):
    code = (
        "import sys; from twinsim.cli import main; "
        f"sys.argv = ['twinsim', 'run', '--config', 'tiny', '--set', 'traffic.vehicles=3', "
        f"'--out', {str(tmp_path / 'x')!r}]; main()"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 2
    assert "need a world with roads" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_a_recorded_town_run_with_traffic_validates_and_counts_it(tmp_path, gl_backend):
    from typer.testing import CliRunner

    from twinsim.cli import app
    from twinsim.sequence import validate_sequence
    from twinsim.sim import run

    cfg = load_config("town", TOWN, seed=1, duration_s=0.5)
    out = run(cfg, tmp_path / "seq")
    assert validate_sequence(out).ok
    meta = json.loads((out / "metadata.json").read_text())
    traffic = meta["traffic"]
    assert traffic["vehicles"]["requested"] == 18 and traffic["walkers"]["placed"] == 10
    assert meta["people"] == {"requested": 0, "placed": 0}  # the walkers are the traffic's
    classes = {i["semantic_class"] for i in meta["instances"]}
    assert "car" in classes
    shown = CliRunner().invoke(app, ["info", str(out)]).output
    rows = {
        cells[1].strip(): cells[2].strip()
        for cells in (r.split("│") for r in shown.splitlines())
        if len(cells) == 4
    }
    assert rows["people"] == "0 placed of 0 requested", shown
    assert rows["walkers"] == "10 placed of 10 requested", shown
    assert rows["vehicles"] == f"{traffic['vehicles']['placed']} placed of 18 requested", shown
    assert rows["flying objects"] == "0", shown  # the vehicles are traffic, not flying objects
    assert meta["flying_objects"] == 0
