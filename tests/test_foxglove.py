"""Foxglove live viewing: a recorded sequence streamed (`stream_sequence`, `view --foxglove`)
and a run published as it records (`run --foxglove`), checked with a WebSocket client that
reads the advertised channels and decodes the protobuf messages against the sequence."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from foxglove_client import EXPECTED, LIDAR, Client, ns, send_garbage
from twinsim.config import load_config
from twinsim.foxglove.live import live_observer
from twinsim.foxglove.replay import stream_sequence
from twinsim.foxglove.server import Publisher
from twinsim.sequence import open_sequence
from twinsim.sim import run


@pytest.fixture(scope="module")
def sequence(tmp_path_factory, gl_backend):
    out = tmp_path_factory.mktemp("foxglove") / "seq"
    return run(load_config("tiny", LIDAR, seed=0, duration_s=0.5), out)


def start_stream(path, **kwargs):
    stop, urls, errors = threading.Event(), [], []

    def target():
        try:
            stream_sequence(path, 0, stop=stop, on_ready=urls.append, **kwargs)
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    end = time.monotonic() + 5
    while not urls and not errors and time.monotonic() < end:
        time.sleep(0.01)
    assert urls, errors
    return urls[0], stop, thread, errors


def test_stream_sequence_channels_and_decoded_messages(sequence):
    seq = open_sequence(sequence)
    cam, lidar = seq.camera("cam0"), seq.lidar("lidar0")
    gt_t, gt_T = seq.groundtruth()
    url, stop, thread, errors = start_stream(sequence, rate=2.0, loop=True)
    client = Client(url)
    try:
        client.read_control(set(EXPECTED))
        assert client.info is not None and client.info["op"] == "serverInfo"
        assert {t: c["schemaName"] for t, c in client.channels.items()} == EXPECTED
        client.subscribe(["/cam0/rgb", "/cam0/depth", "/lidar0/points", "/tf", "/cam0/calibration"])
        got = client.messages({"/cam0/rgb", "/cam0/depth", "/lidar0/points", "/tf"})

        log_time, rgb = got["/cam0/rgb"]
        i = int(np.flatnonzero(cam.t_ns == log_time)[0])  # log time is a recorded stamp
        frame = cam[i]
        assert ns(rgb.timestamp) == log_time and rgb.frame_id == "cam0"
        assert (rgb.width, rgb.height, rgb.encoding) == (cam.width, cam.height, "rgb8")
        assert rgb.data == frame.rgb.tobytes()

        log_time, depth = got["/cam0/depth"]
        frame = cam[int(np.flatnonzero(cam.t_ns == log_time)[0])]
        assert depth.encoding == "32FC1" and depth.step == 4 * cam.width
        np.testing.assert_array_equal(
            np.frombuffer(depth.data, "<f4").reshape(cam.height, cam.width), frame.depth
        )

        log_time, cloud = got["/lidar0/points"]
        scan = lidar[int(np.flatnonzero(lidar.t_ns == log_time)[0])]
        assert len(scan) > 0 and len(cloud.data) == cloud.point_stride * len(scan)
        names = [f.name for f in cloud.fields]
        assert names[:4] == ["x", "y", "z", "intensity"] and "instance" in names
        xyz = np.frombuffer(cloud.data, np.uint8).reshape(len(scan), cloud.point_stride)
        xyz = xyz[:, :12].copy().view("<f4")
        np.testing.assert_array_equal(xyz, scan.points)

        log_time, tf = got["/tf"]
        k = int(np.flatnonzero(gt_t == log_time)[0])
        world = tf.transforms[0]
        assert (world.parent_frame_id, world.child_frame_id) == ("world", "robot")
        t = world.translation
        np.testing.assert_allclose([t.x, t.y, t.z], gt_T[k, :3, 3])
        assert {f.child_frame_id for f in tf.transforms[1:]} == {"cam0", "imu0", "lidar0"}

        # garbage and a client that drops mid-stream do not stop the stream
        send_garbage(client)
        rude = Client(url)
        rude.read_control({"/tf"})
        rude.subscribe(["/tf"])
        rude.ws.socket.close()  # no closing handshake
        later = client.messages({"/tf"})  # still publishing to the well-behaved client
        assert later["/tf"][0] in set(gt_t.tolist())
    finally:
        client.close()
        stop.set()
        thread.join(5)
    assert not thread.is_alive() and not errors


def test_stream_sequence_plays_once_in_time_order(sequence):
    """Without a loop it returns at the sequence's end, at about `rate` × real time."""
    seq = open_sequence(sequence)
    done = []
    start = time.monotonic()
    sent = stream_sequence(sequence, 0, rate=4.0, progress=lambda d, n: done.append((d, n)))
    elapsed = time.monotonic() - start
    span_s = (seq.groundtruth()[0][-1] - seq.groundtruth()[0][0]) / 1e9
    assert elapsed >= span_s / 4.0
    total = done[-1][1]
    assert done[-1][0] == total and [d for d, _ in done] == list(range(1, total + 1))
    assert sent > total  # several messages per sample, and the map


def test_bad_rate_and_taken_port(sequence):
    with pytest.raises(ValueError, match="rate"):
        stream_sequence(sequence, 0, rate=0.0)
    with Publisher(port=0) as taken, pytest.raises(Exception, match="foxglove"):
        Publisher(port=taken.port)


def test_run_published_live(tmp_path, gl_backend):
    """`sim.run(observe=...)`: a client receives poses and frames stamped as recorded, and its
    garbage (then its vanishing) never stops the run."""
    cfg = load_config("tiny", LIDAR, seed=0, duration_s=0.5)
    out = tmp_path / "live"
    errors = []
    with Publisher(port=0) as publisher:

        def target():
            try:
                run(cfg, out, observe=live_observer(publisher))
            except BaseException as exc:
                errors.append(exc)

        client = Client(publisher.url)
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        try:
            client.read_control({"/tf", "/cam0/rgb", "/lidar0/points"}, timeout=8)
            client.subscribe(["/tf", "/cam0/rgb", "/lidar0/points"])
            send_garbage(client)
            got = client.messages({"/tf", "/cam0/rgb", "/lidar0/points"}, timeout=8)
        finally:
            client.ws.socket.close()  # vanishes mid-run
            thread.join(20)
    assert not thread.is_alive() and not errors
    seq = open_sequence(out)
    assert got["/tf"][0] in set(seq.groundtruth()[0].tolist())
    log_time, rgb = got["/cam0/rgb"]
    cam = seq.camera("cam0")
    assert ns(rgb.timestamp) == log_time and log_time in set(cam.t_ns.tolist())
    assert rgb.data == cam[int(np.flatnonzero(cam.t_ns == log_time)[0])].rgb.tobytes()
    log_time, cloud = got["/lidar0/points"]
    lidar = seq.lidar("lidar0")
    scan = lidar[int(np.flatnonzero(lidar.t_ns == log_time)[0])]
    assert len(cloud.data) == cloud.point_stride * len(scan)


def test_view_foxglove_cli(sequence):
    from typer.testing import CliRunner

    from twinsim.cli import app

    result = CliRunner().invoke(
        app, ["view", str(sequence), "--foxglove", "--once", "--rate", "8", "--port", "0"]
    )
    assert result.exit_code == 0, result.output
    assert "ws://127.0.0.1:" in result.output and "messages published" in result.output
    bad = CliRunner().invoke(app, ["view", str(sequence), "--foxglove", "--rate", "0"])
    assert bad.exit_code == 2 and "--rate" in bad.output
