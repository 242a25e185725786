"""LiDAR presets against their sources: the datasheets (VLP-16, OS1-64 rev 6/7, HDL-32E's
firing rate) and CARLA-Loc's simulated HDL-32E (20 Hz, ~1 330 k points/s, 10 sectors a turn)."""

from __future__ import annotations

import numpy as np
import pytest

from twinsim.config import load_config
from twinsim.sensors.kinds.lidar import LidarConfig, lidar_spec

# CARLA-Loc's rates: a 200 Hz simulation (and IMU), cameras and LiDAR at 20 Hz.
CARLA_LOC = (
    "sensors.lidar0.kind=lidar",
    "sensors.lidar0.model=carla-hdl-32e",
    "sim.physics_hz=200",
    "sensors.imu0.rate_hz=200",
    "sensors.cam0.rate_hz=20",
    "groundtruth.pose_rate_hz=50",
    "groundtruth.odometry_rate_hz=50",
    "groundtruth.joint_state_rate_hz=100",
    "groundtruth.contact_rate_hz=100",
)


def _points_per_s(model: str, rate_hz: int | None = None) -> int:
    cfg = LidarConfig(model=model) if rate_hz is None else LidarConfig(model=model, rate_hz=rate_hz)
    spec = lidar_spec(cfg)
    return spec.columns * cfg.rate_hz * len(spec.elevations_deg)


@pytest.mark.parametrize(
    ("model", "beams", "lowest", "highest", "max_range_m", "rate_hz", "columns"),
    [
        ("hdl-32e", 32, -30.0, 10.0, 120.0, 10, 2170),
        ("carla-hdl-32e", 32, -30.0, 10.0, 120.0, 20, 2078),
        ("vlp-16", 16, -15.0, 15.0, 100.0, 10, 1800),
        ("os1-64", 64, -22.5, 22.5, 120.0, 10, 1024),
    ],
)
def test_each_preset_has_its_beams_range_rate_and_columns(
    model, beams, lowest, highest, max_range_m, rate_hz, columns
) -> None:
    cfg = LidarConfig(model=model)
    spec = lidar_spec(cfg)
    elevations = np.array(spec.elevations_deg)
    assert len(elevations) == beams
    assert (elevations[0], elevations[-1]) == (lowest, highest)
    np.testing.assert_allclose(np.diff(elevations), (highest - lowest) / (beams - 1), atol=1e-5)
    assert spec.max_range_m == max_range_m
    assert cfg.rate_hz == rate_hz and spec.columns == columns


def test_velodyne_presets_keep_the_firing_rate_and_the_datasheet_resolutions() -> None:
    """HDL-32E ~695 k points/s single return at any rate; VLP-16 ~300 k points/s with
    0.1°/0.2°/0.4° azimuth steps at 5/10/20 Hz, 2° between beams."""
    assert {_points_per_s("hdl-32e", hz) for hz in (5, 10, 20)} == {694_400}
    assert lidar_spec(LidarConfig(model="hdl-32e", rate_hz=20)).columns == 1085
    assert np.allclose(np.diff(lidar_spec(LidarConfig(model="vlp-16")).elevations_deg), 2.0)
    for hz, step_deg in ((5, 0.1), (10, 0.2), (20, 0.4)):
        columns = lidar_spec(LidarConfig(model="vlp-16", rate_hz=hz)).columns
        assert 360.0 / columns == pytest.approx(step_deg)
        assert _points_per_s("vlp-16", hz) == 288_000


def test_os1_64_gives_ousters_1024x10_and_512x20_modes() -> None:
    assert lidar_spec(LidarConfig(model="os1-64", rate_hz=20)).columns == 512
    assert _points_per_s("os1-64") == _points_per_s("os1-64", 20) == 655_360


def test_carla_preset_spins_at_20_hz_unless_told_otherwise() -> None:
    assert _points_per_s("carla-hdl-32e") == 1_329_920  # CARLA-Loc: "around 1,330k points/s"
    assert LidarConfig(model="carla-hdl-32e", rate_hz=10).rate_hz == 10
    assert LidarConfig(model="custom", elevations_deg=[0.0], columns=8).rate_hz == 10
    cfg = load_config("tiny", ["sensors.lidar0.kind=lidar", "sensors.lidar0.model=carla-hdl-32e"])
    assert cfg.robot.sensors["lidar0"].rate_hz == 20


def test_carla_loc_rates_record_10_sectors_a_turn_and_1330k_points_per_s(
    tmp_path, gl_backend
) -> None:
    """A short run at CARLA-Loc's rates: each sweep holds 10 capture times 5 ms apart and, as
    every ray returns indoors, 2078 × 32 points, 20 sweeps a second."""
    from twinsim.sequence import open_sequence
    from twinsim.sim import run

    seq = open_sequence(run(load_config("tiny", CARLA_LOC, duration_s=0.1), tmp_path / "seq"))
    info = seq.stream_info("lidar0")
    assert (info["rate_hz"], info["columns"], info["rings"]) == (20, 2078, 32)
    scan = seq.lidar("lidar0")[0]
    np.testing.assert_array_equal(np.unique(scan.t_offset_ns), np.arange(10) * 5_000_000)
    assert len(scan.points) * info["rate_hz"] == 1_329_920
