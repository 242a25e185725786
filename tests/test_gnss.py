"""The `gnss` sensor: true WGS-84 fixes of the antenna, its noise model (white, Gauss-Markov
bias, outages) and its exports, read back with pymap3d, Debian's ROS 1 `rosbag`, `rosbags`
and plain CSV parsing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pymap3d
import pytest
from rosbags.highlevel import AnyReader

from test_export_rosbag1 import ROS_PYTHON, _check_ros1_installed, _ros_env
from twinsim.config import load_config
from twinsim.errors import ConfigError
from twinsim.export import export_sequence
from twinsim.model.sensors import GnssSpec
from twinsim.noise import apply_noise, resolve_profile
from twinsim.noise.gnss import add_gnss_noise, outage_intervals
from twinsim.noise.profiles import GnssNoise
from twinsim.sensors.kinds.gnss import COLUMNS
from twinsim.sequence import open_sequence, validate_sequence
from twinsim.sim import run

ANTENNA = (0.12, -0.07, 0.25)
DATUM = GnssSpec(origin_lat_deg=49.0, origin_lon_deg=8.0, origin_alt_m=110.0)
GNSS = (
    "sensors.gnss0.kind=gnss",
    f"sensors.gnss0.pos=[{ANTENNA[0]},{ANTENNA[1]},{ANTENNA[2]}]",
    "sensors.gnss0.rate_hz=20",
    "sensors.gnss0.origin_alt_m=110.0",
    "cameras.cam0.width=64",
    "cameras.cam0.height=48",
)
#: outages frequent enough to show in a 3 s run
NOISY = (
    "gnss.outage_rate_per_min=40",
    "gnss.outage_duration_s=[0.3,0.6]",
)


@pytest.fixture(scope="module")
def gnss_sequence(tmp_path_factory) -> Path:
    return run(
        load_config("tiny", GNSS, seed=4, duration_s=3.0), tmp_path_factory.mktemp("g") / "s"
    )


@pytest.fixture(scope="module")
def noisy_sequence(gnss_sequence, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gn") / "noisy"
    return apply_noise(gnss_sequence, out, resolve_profile("gnss", NOISY), seed=5)


def test_fixes_are_the_antenna_on_the_ground_truth_pose(gnss_sequence):
    seq = open_sequence(gnss_sequence)
    assert validate_sequence(gnss_sequence).ok
    fix = seq.table("gnss0")
    assert len(fix["t_ns"]) == 60 and (fix["status"] == 0).all()
    t_pose, T = seq.groundtruth("groundtruth_body")
    index = np.searchsorted(t_pose, fix["t_ns"])
    assert np.array_equal(t_pose[index], fix["t_ns"])
    antenna = T[index, :3, 3] + T[index, :3, :3] @ np.array(ANTENNA)
    e, n, u = pymap3d.geodetic2enu(fix["lat_deg"], fix["lon_deg"], fix["alt_m"], 49.0, 8.0, 110.0)
    back = np.stack([e, n, u], axis=1)
    assert np.abs(back - antenna).max() < 1e-3
    assert np.abs(np.stack([fix[c] for c in "xyz"], axis=1) - antenna).max() < 1e-9
    assert np.ptp(antenna[:, :2], axis=0).max() > 0.05  # the drone moved: not a trivial match
    # the velocity column is the antenna's: it integrates to the positions
    v = np.stack([fix[c] for c in ("vx", "vy", "vz")], axis=1)
    dt = np.diff(fix["t_ns"]) * 1e-9
    step = antenna[1:] - antenna[:-1]
    assert np.abs(0.5 * (v[1:] + v[:-1]) * dt[:, None] - step).max() < 2e-3
    text = (gnss_sequence / "gnss0" / "data.csv").read_text().splitlines()[1]
    assert len(text.split(",")[1].split(".")[1]) >= 9  # ≥ 1e-9 deg printed


def test_the_datum_is_validated_with_one_line():
    with pytest.raises(ConfigError, match="origin_lat_deg"):
        load_config("tiny", ["sensors.g.kind=gnss", "sensors.g.origin_lat_deg=95"])


def _table(n: int, rate_hz: float) -> dict[str, np.ndarray]:
    t_ns = (np.arange(n) * (1e9 / rate_hz)).astype(np.int64)
    zeros = np.zeros(n)
    table = {"t_ns": t_ns} | {c: zeros.copy() for c in COLUMNS}
    table["lat_deg"][:], table["lon_deg"][:] = 49.0, 8.0
    return table


def test_white_noise_has_the_configured_sigma():
    params = GnssNoise(enabled=True, horizontal_sigma_m=0.5, vertical_sigma_m=1.5)
    rows, _ = add_gnss_noise(_table(20000, 10.0), DATUM, params, np.random.default_rng(1))
    sigma = rows[:, 3:6].std(axis=0)
    assert np.allclose(sigma, [0.5, 0.5, 1.5], rtol=0.15)
    e, n, u = pymap3d.geodetic2enu(rows[:, 0], rows[:, 1], rows[:, 2], 49.0, 8.0, 110.0)
    assert np.abs(np.stack([e, n, u], axis=1) - rows[:, 3:6]).max() < 1e-3


def test_bias_is_gauss_markov_with_its_correlation_time():
    params = GnssNoise(
        enabled=True, bias_horizontal_sigma_m=2.0, bias_vertical_sigma_m=3.0, bias_tau_s=5.0
    )
    rate = 10.0
    rows, _ = add_gnss_noise(_table(200_000, rate), DATUM, params, np.random.default_rng(2))
    bias = rows[:, 3:6]
    assert np.allclose(bias.std(axis=0), [2.0, 2.0, 3.0], rtol=0.15)
    x = bias[:, 0] - bias[:, 0].mean()
    for lag_s in (1.0, 5.0, 10.0):
        lag = int(lag_s * rate)
        rho = float(x[:-lag] @ x[lag:] / (x @ x))
        assert abs(rho - np.exp(-lag_s / 5.0)) < 0.06, (lag_s, rho)


def test_outages_follow_the_configured_rate_and_durations():
    params = GnssNoise(enabled=True, outage_rate_per_min=2.0, outage_duration_s=(2.0, 10.0))
    hours = 20.0
    intervals = outage_intervals(0.0, hours * 3600, params, np.random.default_rng(3))
    durations = np.array([b - a for a, b in intervals])
    assert durations.min() >= 2.0 and durations.max() <= 10.0
    # starts are Poisson in time with a fix: N ≈ T / (1/rate + mean duration)
    expected = hours * 3600 / (30.0 + 6.0)
    assert abs(len(intervals) - expected) < 4 * np.sqrt(expected)
    rows, drawn = add_gnss_noise(_table(36000, 10.0), DATUM, params, np.random.default_rng(4))
    out = rows[:, -1] == -1
    assert np.isnan(rows[out, :-1]).all() and np.isfinite(rows[~out]).all()
    assert drawn["no_fix_rows"] == out.sum()
    assert abs(out.mean() - 6.0 / 36.0) < 0.06


def test_noise_profile_gnss_writes_a_valid_noisy_sequence(gnss_sequence, noisy_sequence):
    clean, noisy = open_sequence(gnss_sequence), open_sequence(noisy_sequence)
    report = validate_sequence(noisy_sequence)
    assert report.ok, report.problems
    a, b = clean.table("gnss0"), noisy.table("gnss0")
    assert np.array_equal(a["t_ns"], b["t_ns"])
    out = b["status"] == -1
    assert out.any() and not out.all()
    assert np.isnan(b["lat_deg"][out]).all()
    error = np.stack([b[c] - a[c] for c in "xyz"], axis=1)[~out]
    assert 0.05 < np.abs(error).mean() < 10.0
    drawn = noisy.metadata["noise"]["draws"]["gnss0"]
    assert drawn["no_fix_rows"] == int(out.sum())
    assert (gnss_sequence / "imu0" / "data.csv").read_bytes() == (
        noisy_sequence / "imu0" / "data.csv"
    ).read_bytes()


READ_FIXES = r"""
import json, sys, rosbag
fixes = []
for topic, msg, t in rosbag.Bag(sys.argv[1]).read_messages(topics=[sys.argv[2]]):
    fixes.append([msg._type, msg.header.stamp.to_nsec(), msg.header.frame_id, msg.status.status,
                  msg.status.service, msg.latitude, msg.longitude, msg.altitude,
                  list(msg.position_covariance), msg.position_covariance_type])
print(json.dumps(fixes).replace("NaN", "null"))
"""


@pytest.mark.ros
def test_rosbag1_navsatfix_read_by_debian_rosbag(noisy_sequence, tmp_path):
    _check_ros1_installed()
    bag = export_sequence(noisy_sequence, "rosbag1", tmp_path / "bag1")
    done = subprocess.run(
        [ROS_PYTHON, "-c", READ_FIXES, str(bag), "/gnss0/fix"],
        capture_output=True, text=True, env=_ros_env(tmp_path), check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    fixes = json.loads(done.stdout)
    table = open_sequence(noisy_sequence).table("gnss0")
    assert [f[1] for f in fixes] == table["t_ns"].tolist()
    assert {f[0] for f in fixes} == {"sensor_msgs/NavSatFix"} and fixes[0][2] == "gnss0"
    params = resolve_profile("gnss", NOISY).gnss
    h2 = params.horizontal_sigma_m**2 + params.bias_horizontal_sigma_m**2
    v2 = params.vertical_sigma_m**2 + params.bias_vertical_sigma_m**2
    for fix, lat, status in zip(fixes, table["lat_deg"], table["status"], strict=True):
        assert fix[3] == status and fix[4] == 1  # SERVICE_GPS
        if status == 0:
            assert fix[5] == lat and fix[9] == 2  # DIAGONAL_KNOWN
            assert np.allclose(fix[8], [h2, 0, 0, 0, h2, 0, 0, 0, v2])
        else:
            assert fix[5] is None and fix[9] == 0  # nan, COVARIANCE_TYPE_UNKNOWN


def test_rosbag2_navsatfix_read_by_rosbags(gnss_sequence, tmp_path):
    bag = export_sequence(gnss_sequence, "rosbag2", tmp_path / "bag2")
    table = open_sequence(gnss_sequence).table("gnss0")
    with AnyReader([bag]) as reader:
        connections = [c for c in reader.connections if c.topic == "/gnss0/fix"]
        assert [c.msgtype for c in connections] == ["sensor_msgs/msg/NavSatFix"]
        msgs = [reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages(connections)]
    assert len(msgs) == len(table["t_ns"])
    got = np.array([[m.latitude, m.longitude, m.altitude] for m in msgs])
    want = np.stack([table[c] for c in ("lat_deg", "lon_deg", "alt_m")], axis=1)
    assert np.array_equal(got, want)
    assert {m.position_covariance_type for m in msgs} == {0}  # ground truth: no σ known
    assert {m.status.status for m in msgs} == {0}


def test_euroc_and_kitti_write_geodetic_columns(gnss_sequence, tmp_path):
    table = open_sequence(gnss_sequence).table("gnss0")
    euroc = export_sequence(gnss_sequence, "euroc", tmp_path / "euroc")
    lines = (euroc / "mav0" / "gnss00" / "data.csv").read_text().splitlines()
    assert lines[0].startswith("#timestamp [ns],latitude [deg],longitude [deg],altitude [m]")
    rows = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
    assert rows[:, 0].astype(np.int64).tolist() == table["t_ns"].tolist()
    want = np.stack([table[c] for c in ("lat_deg", "lon_deg", "alt_m")], axis=1)
    assert np.array_equal(rows[:, 1:4], want)
    kitti = export_sequence(gnss_sequence, "kitti", tmp_path / "kitti")
    oxts = np.loadtxt(kitti / "sequences" / "00" / "gnss" / "gnss0" / "oxts.txt")
    assert np.array_equal(oxts[:, :3], want)
    assert np.array_equal(oxts[:, 3:6], np.stack([table[c] for c in ("vy", "vx", "vz")], 1))
    times = np.loadtxt(kitti / "sequences" / "00" / "gnss" / "gnss0" / "times.txt")
    assert np.allclose(times, table["t_ns"] * 1e-9, atol=1e-12, rtol=0)
