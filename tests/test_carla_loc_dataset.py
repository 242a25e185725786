"""CARLA-Loc's dataset template: the built-in plan's matrix, a small copy of it run end to end
(one drive in a small town with traffic, its static and rainy-night twins keeping the ego
motion, KISS-ICP raw and with dynamic points removed), and the tables in CARLA-Loc's layout.
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from twinsim.batch import run_batch
from twinsim.batch.plan import load_plan
from twinsim.batch.tables import TABLES_FILE, condition
from twinsim.cli import app
from twinsim.sequence import open_sequence

SMALL_TWINS = {
    "static": {"static": True},
    "rain_night": {"rain": 0.8, "light": {"preset": "night"}},
}


def test_the_built_in_plan_is_five_towns_six_sequences_each():
    plan, _ = load_plan("carla_loc")
    assert plan.runs.configs == ["carla_loc"]
    assert plan.runs.axes["scene.preset"] == [
        "small_town", "mid_city", "highway", "skyscraper_city", "rural"
    ]  # fmt: skip
    conditions = sorted(condition(v) for v in plan.twins.values())
    assert sorted([*conditions, condition(None)]) == sorted(
        ["CN(s)", "CN(d)", "FN(s)", "FN(d)", "RN(s)", "RN(d)"]
    )
    assert plan.bench.table == "carla_loc"
    result = CliRunner().invoke(app, ["batch", "carla_loc", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "│ twin  │ 25" in result.output


def test_an_unknown_plan_names_the_built_in_ones(tmp_path):
    result = CliRunner().invoke(app, ["batch", "carla_lok", "--out", str(tmp_path / "d")])
    assert result.exit_code == 2
    assert "built-in plans: carla_loc" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("variations", "expected"),
    [
        (None, "CN(d)"),
        ({"static": True}, "CN(s)"),
        ({"fog": 0.3, "light": {"preset": None}}, "FN(d)"),
        ({"static": True, "rain": 0.5, "light": {"preset": "night"}}, "RN(s)"),
        ({"rain": 0.5}, None),  # rain at noon is not one of CARLA-Loc's conditions
        ({"static": True, "add_people": 3}, None),
        ({"light": {"preset": "dusk"}}, None),
    ],
)
def test_twin_variations_name_carla_loc_conditions(variations, expected):
    assert condition(variations) == expected


@pytest.mark.slow
def test_a_small_template_gives_twins_of_one_drive_and_carla_loc_tables(gl_backend, tmp_path):
    plan = {
        "runs": {
            "configs": ["town"],
            "seeds": [3],
            "duration": 2.0,
            "set": [
                "robot.kind=car",
                "traffic.vehicles=6",
                "traffic.walkers=4",
                "sensors.lidar0.kind=lidar",
                "sensors.lidar0.model=vlp-16",
                "sensors.lidar0.pos=[0.0,0.0,1.8]",
            ],
        },
        "twins": SMALL_TWINS,
        "bench": {
            "methods": ["kiss_icp", "kiss_icp_static"],
            "of": ["runs", "twins"],
            "table": "carla_loc",
        },
    }
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(plan))
    dataset = tmp_path / "d"
    result = run_batch(path, dataset, workers=2)
    assert result.ok, result.failed
    run = open_sequence(next((dataset / "runs").iterdir()))
    t_run, pose_run = run.groundtruth("groundtruth_body")
    for twin in SMALL_TWINS:
        seq = open_sequence(next((dataset / "twins").iterdir()) / twin)
        t, pose = seq.groundtruth("groundtruth_body")
        np.testing.assert_array_equal(t, t_run)
        np.testing.assert_array_equal(pose, pose_run)  # the same ego motion, bit for bit
    static = open_sequence(next((dataset / "twins").iterdir()) / "static")
    assert run.scene.flying_objects and not static.scene.flying_objects
    tables = (dataset / TABLES_FILE).read_text()
    rows = {
        line.split("|")[2].strip(): [c.strip() for c in line.split("|")[3:-1]]
        for line in tables.splitlines()
        if line.startswith("|") and line.count("|") > 3 and "---" not in line
    }
    for name in ("CN(s)", "CN(d)", "RN(d)", "raw (s)", "seg (d)", "raw (d)"):
        assert all(float(c) < 5.0 for c in rows[name]), (name, rows[name])  # tracked, metres
    for name in ("FN(s)", "FN(d)", "RN(s)"):
        assert rows[name] == ["-", "-"]  # not in this plan
    assert "Table IV" in (dataset / "README.md").read_text()
