"""A researcher's own package adds plug-ins through entry points: `tests/data/plugin_pkg` (a
barometer sensor kind and an export format) is installed by pip (offline, into a folder put on
the path) and used from the CLI with no line of twinsim changed: `twinsim plugins` lists it
with its package, a run records the barometer, validate passes, and its format exports."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from twinsim.sequence import open_sequence, validate_sequence

PACKAGE = Path(__file__).parent / "data" / "plugin_pkg"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, str]:
    """The environment of a twinsim that has the plug-in package installed."""
    target = tmp_path_factory.mktemp("site")
    build = tmp_path_factory.mktemp("build")
    done = subprocess.run(
        [
            *(str(BIN / "pip"), "install", "--quiet", "--no-index", "--no-build-isolation"),
            *("--no-deps", "--target", str(target), str(PACKAGE)),
        ],
        capture_output=True,
        text=True,
        cwd=build,
    )
    assert done.returncode == 0, done.stderr
    assert (target / "twinsim_barometer" / "sensor.py").is_file()
    return {**os.environ, "PYTHONPATH": str(target), "COLUMNS": "200"}


def _twinsim(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "twinsim"), *args], env=env, capture_output=True, text=True)


def test_twinsim_plugins_lists_the_package_s_entries(installed):
    done = _twinsim(installed, "plugins")
    assert done.returncode == 0, done.stderr
    rows = {tuple(line.split()[:3]) for line in done.stdout.splitlines()}
    assert ("sensors", "barometer", "twinsim-barometer") in rows
    assert ("exports", "pressure_csv", "twinsim-barometer") in rows
    assert ("sensors", "imu", "twinsim") in rows
    without = _twinsim({**installed, "PYTHONPATH": ""}, "plugins", "sensors")
    assert "barometer" not in without.stdout


def test_a_plugin_sensor_records_and_its_format_exports_from_the_cli(installed, tmp_path):
    seq, out = tmp_path / "seq", tmp_path / "csv"
    done = _twinsim(
        installed,
        *("run", "--config", "tiny", "--duration", "0.5", "--out", str(seq)),
        *("--set", "sensors.baro0.kind=barometer"),
    )
    assert done.returncode == 0, done.stderr
    assert validate_sequence(seq).ok
    reader = open_sequence(seq)
    assert reader.metadata["streams"]["baro0"]["units"] == "Pa"
    # the pressure is the standard atmosphere at the sensor, 2 cm above the body frame
    table = reader.table("baro0")
    t_ns, T = reader.groundtruth()
    at = np.searchsorted(t_ns, table["t_ns"])
    assert np.array_equal(t_ns[at], table["t_ns"]) and len(at) == 10
    height = T[at, 2, 3] + T[at, 2, 2] * 0.02
    expected = 101325.0 * np.exp(-height / 8434.5)
    np.testing.assert_allclose(table["pressure_pa"], expected, rtol=1e-12)

    done = _twinsim(installed, "export", str(seq), "--format", "pressure_csv", "--out", str(out))
    assert done.returncode == 0, done.stderr
    with (out / "baro0.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [float(r["pressure_pa"]) for r in rows] == table["pressure_pa"].tolist()


def test_a_plugin_that_cannot_be_imported_is_one_line(installed, tmp_path):
    broken = tmp_path / "broken"
    dist = broken / "twinsim_broken-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: twinsim-broken\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[twinsim.robots]\nghost = no_such_module:GHOST\n")
    env = {**installed, "PYTHONPATH": f"{broken}{os.pathsep}{installed['PYTHONPATH']}"}
    done = _twinsim(env, "plugins", "robots")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "twinsim.robots entry point 'ghost' of twinsim-broken" in done.stderr
    assert "ModuleNotFoundError" in done.stderr
