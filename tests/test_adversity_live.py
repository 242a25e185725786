"""Adversity at record time: a run or a live episode with `weather:` / `light:` sections is
rendered, composited and scanned by the replay's own code (`twinsim.adversity`), so it equals the
twin of its clear run with the same variations, and replays byte for byte."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import digest_folder
from twinsim.cli import app
from twinsim.closedloop import Session
from twinsim.config import load_config
from twinsim.replay import Variations, replay
from twinsim.sequence import open_sequence, validate_sequence
from twinsim.sim import run

SEED = 3  # not the twin's default seed (0): the twin must be given the run's to match
LIDAR = ("lidars.lidar0.model=vlp-16", "lidars.lidar0.columns=60")
WET = ("weather.rain=0.7", "weather.snow=0.3", "weather.smoke=0.5", "light.preset=dusk")
WET_TWIN = {"rain": 0.7, "snow": 0.3, "smoke": 0.5, "light": {"preset": "dusk"}}
runner = CliRunner()


def _run(tmp_path_factory, name: str, *overrides: str):
    cfg = load_config("tiny", [*LIDAR, *overrides], seed=SEED, duration_s=0.5)
    return run(cfg, tmp_path_factory.mktemp(name) / "seq")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, gl_backend):
    """The same run in clear air, in fog 0.6, and in rain, snow, smoke and dusk light."""
    return {
        "clear": _run(tmp_path_factory, "clear"),
        "fog": _run(tmp_path_factory, "fog", "weather.fog=0.6"),
        "wet": _run(tmp_path_factory, "wet", *WET),
    }


def _differing(a, b) -> set[str]:
    da, db = digest_folder(a), digest_folder(b)
    return {p for p in da.keys() | db.keys() if da.get(p) != db.get(p)}


def test_the_weather_changes_the_colour_images_and_the_lidar(runs):
    changed = _differing(runs["clear"], runs["fog"])
    assert any(p.startswith("cam0/rgb/") for p in changed)
    assert any(p.startswith("lidar0/") for p in changed)
    assert not any(p.startswith(("cam0/depth/", "cam0/instance/", "imu0")) for p in changed)
    clear, fog = (
        open_sequence(runs["clear"]).lidar("lidar0"),
        open_sequence(runs["fog"]).lidar("lidar0"),
    )
    assert (fog[0].semantic == 0).sum() > 0 == (clear[0].semantic == 0).sum()  # fog clutter
    assert fog[0].range.max() < clear[0].range.max()


@pytest.mark.parametrize(
    ("name", "variations"), [("fog", {"fog": 0.6}), ("wet", WET_TWIN)], ids=["fog", "wet"]
)
def test_a_run_in_weather_equals_the_twin_of_its_clear_run(runs, tmp_path, name, variations):
    """Same pixels and LiDAR points for the same poses: every file but metadata.json."""
    twin = replay(runs["clear"], tmp_path / "twin", Variations(**variations, seed=SEED))
    assert _differing(runs[name], twin) == {"metadata.json"}
    other_seed = replay(runs["clear"], tmp_path / "seed0", Variations(**variations))
    assert any(p.startswith("lidar0/") for p in _differing(runs[name], other_seed))


@pytest.mark.parametrize("name", ["fog", "wet"])
def test_a_replay_of_a_run_in_weather_is_byte_identical(runs, tmp_path, name):
    twin = replay(runs[name], tmp_path / "twin", rerender=True)
    assert _differing(runs[name], twin) == {"metadata.json"}
    meta = json.loads((runs[name] / "metadata.json").read_text())
    twin_meta = json.loads((twin / "metadata.json").read_text())
    assert twin_meta["twin"]["look"] == meta["look"]
    assert twin_meta["twin"]["weather"] == {
        k: meta["weather"][k] for k in twin_meta["twin"]["weather"]
    }


def test_the_metadata_names_the_weather_and_light(runs):
    clear = json.loads((runs["clear"] / "metadata.json").read_text())
    assert not {"weather", "light", "look", "lidar_weather"} & clear.keys()
    fog = json.loads((runs["fog"] / "metadata.json").read_text())
    assert fog["weather"] == {"fog": 0.6, "rain": 0.0, "snow": 0.0, "smoke": 0.0, "seed": SEED}
    assert fog["look"]["fog_end_m"] == pytest.approx(5.0)  # 3 m / 0.6
    assert fog["lidar_weather"]["fog_visibility_m"] == pytest.approx(5.0)
    assert "light" not in fog
    wet = json.loads((runs["wet"] / "metadata.json").read_text())
    assert wet["light"] == {"preset": "dusk"}
    assert wet["weather"]["smoke"] == 0.5
    assert validate_sequence(runs["wet"]).ok


def _episode(out, *overrides: str) -> tuple[list, object]:
    cfg = load_config("tiny", ["robot.kind=omni", *LIDAR, *overrides], seed=SEED, duration_s=0.5)
    with Session(cfg, out.parent) as session:
        observations = [session.reset(seed=SEED, out=out)]
        for _ in range(6):
            observations.append(session.step({"velocity": {"vx": 0.3, "wz": 0.4}}))
    return observations, out


def test_a_live_episode_in_fog_looks_and_scans_like_the_fog_twin(tmp_path, gl_backend):
    observations, foggy = _episode(tmp_path / "fog" / "ep", "weather.fog=0.6")
    _, clear = _episode(tmp_path / "clear" / "ep")
    # each step observes the frames and sweeps the episode records, fog included
    seq = open_sequence(foggy)
    frames = [f for o in observations for f in o.robots["robot"].frames["cam0"]]
    assert len(frames) == len(seq.camera("cam0")) > 3
    for frame in frames:
        np.testing.assert_array_equal(frame.rgb, seq.camera("cam0")[frame.index].rgb)
    scans = [s for o in observations for s in o.robots["robot"].scans.get("lidar0", [])]
    recorded = seq.lidar("lidar0")
    assert 0 < len(scans) <= len(recorded)  # the last, cut short, is written at the close
    for scan in scans:
        np.testing.assert_array_equal(scan.points, recorded[scan.index].points)
        np.testing.assert_array_equal(scan.semantic, recorded[scan.index].semantic)
    # and the fog twin of the clear episode: the same pixels and points for the same poses
    twin = replay(clear, tmp_path / "twin", Variations(fog=0.6, seed=SEED))
    assert _differing(foggy, twin) == {"metadata.json"}
    assert any(p.startswith("cam0/rgb/") for p in _differing(foggy, clear))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--set", "weather.fog=2"], r"^error: weather\.fog: .*less than or equal to 1"),
        (["--set", "weather.hail=0.5"], r"'weather\.hail'; allowed here: fog, rain, snow, smoke"),
        (["--set", "light.preset=dawn"], r"^error: light\.preset"),
        (
            ["--set", "light.flicker=0.3", "--set", "render.flicker=0.5"],
            r"light\.flicker=0\.3 and render\.flicker=0\.5 both",
        ),
    ],
    ids=["range", "unknown", "preset", "contradiction"],
)
def test_bad_weather_is_one_line_exit_2_before_anything_is_written(tmp_path, args, expected):
    out = tmp_path / "seq"
    result = runner.invoke(app, ["run", "--config", "tiny", "--out", str(out), *args])
    assert result.exit_code == 2, result.output
    text = result.output.strip()
    assert len(text.splitlines()) == 1, text
    assert re.search(expected, text), text
    assert not out.exists()


def test_session_reset_and_the_gym_take_weather_and_light(tmp_path, gl_backend):
    """`Session.reset(weather=...)` is the config's section for one episode; the gym's
    `reset(options={"weather": ...})` passes it on; bad values are one line."""
    from twinsim.closedloop.gym_env import TwinsimNavEnv
    from twinsim.errors import ConfigError

    _, configured = _episode(tmp_path / "configured" / "ep", "weather.fog=0.6")
    cfg = load_config("tiny", ["robot.kind=omni", *LIDAR], seed=SEED, duration_s=0.5)
    with Session(cfg, tmp_path / "reset") as session:
        session.reset(seed=SEED, out=tmp_path / "reset" / "ep", weather={"fog": 0.6})
        for _ in range(6):
            session.step({"velocity": {"vx": 0.3, "wz": 0.4}})
        with pytest.raises(ConfigError, match=r"^weather\.fog: .*less than or equal to 1$"):
            session.reset(weather={"fog": 2})
        assert session.running  # refused before the episode was touched: it ends as closed
    assert _differing(configured, tmp_path / "reset" / "ep") == set()  # metadata.json too
    meta = [
        json.loads((p / "metadata.json").read_text()) for p in (configured, session.episode_path)
    ]
    assert meta[0]["weather"] == meta[1]["weather"] and meta[0]["look"] == meta[1]["look"]
    env = TwinsimNavEnv("tiny", ["sensors.cam0.width=32", "sensors.cam0.height=24"])
    try:
        env.reset(seed=SEED, options={"light": {"preset": "night"}, "weather": {"smoke": 0.4}})
        night = env.session.scene.lights
        episode = env.session._episode
        assert episode.world.look.lamp_rgb is not None  # night: the robot's lamp
        assert episode.cfg.weather.smoke == 0.4 and episode.cfg.light.preset == "night"
        env.reset(seed=SEED)
        assert env.session._episode.world.look.lamp_rgb is None  # the config's again
        assert env.session.scene.lights[0].diffuse != night[0].diffuse  # night relit them
    finally:
        env.close()
