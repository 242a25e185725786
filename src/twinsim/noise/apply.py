"""`apply_noise`: a new sequence whose sensor streams carry the noise of a profile.

Streams the profile changes (IMU and GNSS tables, camera RGB and depth, LiDAR and radar scans)
are rewritten through `SequenceWriter`, a camera's masks, pose lines and boxes copied as they
are; every other stream (ground truth, odometry, joint and robot state) is copied file by file,
byte-identical. The metadata keeps the source's and adds `noise`: the profile, every parameter,
the seed and what was drawn (biases, readout times, exposures, radar detections lost and added).
"""

from __future__ import annotations

import shutil
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from twinsim.errors import OutputFolderError
from twinsim.model.layout import IMU_COLUMNS, SCENE, surface_kinds
from twinsim.noise.depth import add_depth_noise
from twinsim.noise.gnss import write_gnss
from twinsim.noise.imu import add_imu_noise
from twinsim.noise.lidar import lidar_noise
from twinsim.noise.motion import PoseSpline
from twinsim.noise.profiles import NoiseError, NoiseProfile
from twinsim.noise.radar import radar_noise
from twinsim.noise.rgb import add_rgb_noise, frame_draws, readout_draw
from twinsim.replay.frame_source import frame_source
from twinsim.sensors.spline_imu import POSE_STREAM, sequence_spline_imu
from twinsim.sequence import (
    ImuData,
    LidarScan,
    SequenceReader,
    SequenceWriter,
    check_output_folder,
    open_sequence,
)
from twinsim.sequence.radar import INDEX_COLUMNS, detections_relpath

ProgressCallback = Callable[[int, int], None]

#: Suffix of the spline IMU stream written next to each IMU when `imu.spline` is on.
SPLINE_SUFFIX = "_spline"


def stream_rng(seed: int, stream: str) -> np.random.Generator:
    """The generator of one stream: independent of every other stream's draws."""
    return np.random.default_rng([seed, zlib.crc32(stream.encode("utf-8"))])


def apply_noise(
    src: Path,
    dst: Path,
    profile: NoiseProfile,
    seed: int = 0,
    progress: ProgressCallback | None = None,
) -> Path:
    """Write a noisy copy of the sequence `src` into the new folder `dst`; returns `dst`."""
    src, dst = Path(src), Path(dst)
    if dst.resolve() == src.resolve() or src.resolve() in dst.resolve().parents:
        raise NoiseError(f"--out {dst} is inside the source sequence {src}; choose another folder")
    check_output_folder(dst)
    seq = open_sequence(src)
    types = {name: info.get("type") for name, info in seq.metadata["streams"].items()}
    _check_requirements(profile, seq, types, src)
    plan = _noisy_streams(profile, types)
    metadata = _output_metadata(seq, profile, seed, plan)
    scene_json = (src / SCENE).read_text(encoding="utf-8")
    total = sum(_units(seq, s, types.get(s, "imu")) for s in plan)
    done, draws = 0, {}
    assets = seq.scene.asset_files()
    with SequenceWriter(
        dst, scene_json, metadata, rgb_png_level=_png_level(seq), assets=assets
    ) as writer:
        for stream in types:
            if stream not in plan:
                _copy_stream(src / stream, dst / stream)
        for stream in plan:
            write = _WRITERS[types.get(stream, "imu")]  # a new spline IMU has no type yet
            for _ in write(seq, writer, stream, profile, seed, draws):
                done += 1
                if progress is not None:
                    progress(done, total)
        writer.close({"noise": {"draws": draws}})
    return dst


def _copy_stream(source: Path, target: Path) -> None:
    """Copy a stream the profile leaves as it is; a failed copy (a full disk) is one line."""
    try:
        shutil.copytree(source, target)
    except shutil.Error as exc:  # the files that failed: (source, target, reason) each
        _, failed, reason = exc.args[0][0]
        raise OutputFolderError(f"{failed}: cannot be written ({reason})") from None
    except OSError as exc:
        raise OutputFolderError(f"{target}: cannot be written ({exc.strerror})") from None


def _check_requirements(
    profile: NoiseProfile, seq: SequenceReader, types: dict[str, str], src: Path
) -> None:
    present = set(types.values())
    for kind in profile.requires:
        if kind not in present:
            have = ", ".join(f"{n} ({t})" for n, t in types.items())
            raise NoiseError(
                f"profile {profile.name!r} needs a {kind} stream, but {src} has none "
                f"(streams: {have})"
            )
    if profile.imu.enabled and profile.imu.spline:
        for imu in (n for n, t in types.items() if t == "imu"):
            pose = seq.stream_prefix(imu) + POSE_STREAM  # the IMU's robot's body poses
            if pose not in types:
                raise NoiseError(f"imu.spline needs the pose stream {pose!r}, missing in {src}")


def _noisy_streams(profile: NoiseProfile, types: dict[str, str]) -> list[str]:
    """Streams to write with noise, in order (new spline IMUs right after their IMU)."""
    others = {
        "camera": profile.depth.enabled or profile.rgb.enabled,
        "lidar": profile.lidar.enabled,
        "gnss": profile.gnss.enabled,
        "radar": profile.radar.enabled,
    }
    plan = []
    for name, kind in types.items():
        if kind == "imu" and profile.imu.enabled:
            plan.append(name)
            # a spline IMU already in the source gets noise like any IMU, not a second spline
            spline = name + SPLINE_SUFFIX
            is_spline = name.endswith(SPLINE_SUFFIX) and name.removesuffix(SPLINE_SUFFIX) in types
            if profile.imu.spline and spline not in types and not is_spline:
                plan.append(spline)
        elif others.get(kind, False):
            plan.append(name)
    return plan


def _output_metadata(
    seq: SequenceReader, profile: NoiseProfile, seed: int, plan: list[str]
) -> dict:
    metadata = {
        k: v for k, v in seq.metadata.items() if k not in ("status", "format", "format_version")
    }
    streams = {name: dict(info) for name, info in metadata["streams"].items()}
    for name in plan:
        if name in streams:
            streams[name]["noise"] = f"noise profile {profile.name!r} (see metadata noise)"
            continue
        imu = name.removesuffix(SPLINE_SUFFIX)
        source = streams[imu]
        streams[name] = {
            "type": "imu",
            "robot": source.get("robot"),
            "rate_hz": source["rate_hz"],
            "T_body_sensor": source.get("T_body_sensor"),
            "frame": source.get("frame", "IMU frame"),
            "source": f"cubic splines through {seq.stream_prefix(imu)}{POSE_STREAM} "
            f"differentiated at the IMU's samples (CARLA-Loc), mounted like {imu}",
            "noise": f"noise profile {profile.name!r} (see metadata noise)",
        }
    metadata["streams"] = streams
    metadata["noise"] = {
        "profile": profile.name,
        "parameters": profile.model_dump(mode="json"),
        "seed": seed,
        "source_sequence": str(seq.path.resolve()),
        "streams": plan,
    }
    if "noise" in seq.metadata:  # noise on noise: keep the chain
        metadata["noise"]["previous"] = seq.metadata["noise"]
    return metadata


def _png_level(seq: SequenceReader) -> int:
    return int(seq.metadata.get("config", {}).get("output", {}).get("rgb_png_level", 0))


def _write_imu(seq, writer, stream, profile: NoiseProfile, seed: int, draws: dict):
    """Write an IMU stream (or the spline IMU named after one) with noise; yields once."""
    source = stream.removesuffix(SPLINE_SUFFIX) if stream not in seq.streams else stream
    clean: ImuData = seq.imu(stream) if source == stream else sequence_spline_imu(seq, source)
    rate_hz = float(seq.stream_info(source)["rate_hz"])
    noisy, draws[stream] = add_imu_noise(clean, rate_hz, profile.imu, stream_rng(seed, stream))
    writer.add_table(stream, IMU_COLUMNS)
    for t_ns, gyro, accel in zip(noisy.t_ns.tolist(), noisy.gyro, noisy.accel, strict=True):
        writer.append(stream, t_ns, np.concatenate([gyro, accel]))
    yield stream


#: progress units of a stream of each type with frames or scans (a table is 1)
_UNITS: dict[str, Callable[[SequenceReader, str], int]] = {
    "camera": lambda seq, stream: len(seq.camera(stream)),
    "lidar": lambda seq, stream: len(seq.lidar(stream)),
    "radar": lambda seq, stream: len(seq.radar(stream)),
}


def _units(seq: SequenceReader, stream: str, kind: str) -> int:
    """Progress units of a stream: its frames or scans, or 1 for a table."""
    units = _UNITS.get(kind)
    return 1 if units is None else units(seq, stream)


def _write_lidar(seq, writer, stream, profile: NoiseProfile, seed: int, draws: dict):
    """Write every scan of a LiDAR with range noise and dropouts; yields once per scan."""
    rng = stream_rng(seed, stream)
    writer.add_lidar(stream)
    lidar = seq.lidar(stream)
    for scan, line in zip(lidar, lidar.scan_lines, strict=True):
        keep, points, ranges = lidar_noise(scan.points, scan.range, profile.lidar, rng)
        writer.write_scan(
            stream,
            LidarScan(
                index=scan.index,
                t_ns=scan.t_ns,
                T_world_lidar=scan.T_world_lidar,
                points=points,
                t_offset_ns=scan.t_offset_ns[keep],
                ring=scan.ring[keep],
                intensity=scan.intensity[keep],
                range=ranges,
                instance=scan.instance[keep],
                semantic=scan.semantic[keep],
                dynamic=scan.dynamic[keep],
            ),
            scan_line=line,  # the sweep's time and pose, byte for byte
        )
        yield scan.index


def _write_radar(seq, writer, stream, profile: NoiseProfile, seed: int, draws: dict):
    """Write every scan of a radar with its noise (`noise/radar.py`), in the recorder's files
    and index (times and poses as read, the noisy counts); yields once per scan."""
    rng = stream_rng(seed, stream)
    info = seq.stream_info(stream)
    range_m = float(info["range_m"])
    fov = (float(info["horizontal_fov_deg"]), float(info["vertical_fov_deg"]))
    radar = seq.radar(stream)
    writer.add_files(stream, index_columns=INDEX_COLUMNS)
    dropped = alarms = 0
    for scan, pose in zip(radar, radar.pose_rows, strict=True):
        records, k = radar_noise(scan.to_records(), profile.radar, range_m, fov, rng)
        writer.write_file(stream, detections_relpath(scan.index), records)
        writer.append(stream, scan.t_ns, [*pose, len(records)])
        dropped += len(scan) - (len(records) - k)
        alarms += k
        yield scan.index
    draws[stream] = {"dropped": dropped, "false_alarms": alarms}


def _reflective_ids(seq: SequenceReader, threshold: float) -> np.ndarray:
    """Lookup instance id → whether its most reflective material reaches `threshold`."""
    scene = seq.scene
    reflectance = {m.name: m.reflectance for m in scene.materials}
    table = np.zeros(65536, dtype=bool)
    for obj in scene.objects:
        if any(reflectance.get(g.material, 0.0) >= threshold for g in obj.geoms):
            table[obj.instance_id] = True
    return table


def _camera_poses(seq: SequenceReader, camera: str) -> PoseSpline:
    """A spline through the camera's densest pose stream (its ground truth, else its frames)."""
    prefix = seq.stream_prefix(camera)
    gt = f"{prefix}groundtruth_{camera.removeprefix(prefix)}"
    if gt in seq.metadata["streams"]:
        t_ns, T = seq.groundtruth(gt)
    else:
        cam = seq.camera(camera)
        t_ns, T = cam.t_ns, cam.T_world_cam
    if len(t_ns) < 4:
        raise NoiseError(f"{camera}: motion blur needs at least 4 camera poses, got {len(t_ns)}")
    return PoseSpline(t_ns, T)


def _write_camera(seq, writer, stream, profile: NoiseProfile, seed: int, draws: dict):
    """Write every frame of a camera with RGB and depth noise; yields once per frame."""
    rng = stream_rng(seed, stream)
    cam = seq.camera(stream)
    rgb_on, depth_on = profile.rgb.enabled, profile.depth.enabled
    poses = _camera_poses(seq, stream) if rgb_on else None
    readout = readout_draw(profile.rgb, rng) if rgb_on else 0.0
    # blur and rolling shutter simulated at render time are in the images already
    info = seq.stream_info(stream)
    blurred = float(info.get("exposure_s", 0.0)) > 0.0
    if float(info.get("rolling_shutter_readout_s", 0.0)) > 0.0:
        readout = 0.0
    reflective = _reflective_ids(seq, profile.depth.reflective_min) if depth_on else None
    frames_drawn = []
    writer.add_camera(stream, surface_kinds(info))
    # masks, poses, boxes, normals and flow are copied as they are; only the noisy images are
    # written anew
    source = frame_source(cam, colour=False)
    for frame in cam:
        rgb = depth = None
        if rgb_on:
            drawn = frame_draws(profile.rgb, rng)
            if blurred:
                drawn["exposure_s"] = 0.0
            frames_drawn.append(drawn)
            t_s = poses.seconds(frame.t_ns)
            rgb = add_rgb_noise(
                frame.rgb, frame.depth, frame.K, poses, t_s, readout, drawn, profile.rgb, rng
            )
        if depth_on:
            depth = add_depth_noise(
                frame.depth, profile.depth, rng, frame.rgb, reflective[frame.instance]
            )
        copied = source.frame(frame.index, frame.t_ns, frame.T_world_cam, rgb, depth)
        writer.write_copied_frame(stream, copied)
        yield frame.index
    if rgb_on:
        draws[stream] = {
            "rolling_shutter_readout_s": readout,
            "frames": {k: [d[k] for d in frames_drawn] for k in ("exposure_s", "gain", "gamma")},
        }


def _write_gnss(seq, writer, stream, profile: NoiseProfile, seed: int, draws: dict):
    """Write a GNSS table with its noise (`noise/gnss.py`); yields once."""
    return write_gnss(seq, writer, stream, profile.gnss, stream_rng(seed, stream), draws)


#: the writer of each stream type the profiles add noise to (`_noisy_streams` picks them)
_WRITERS = {
    "camera": _write_camera,
    "imu": _write_imu,
    "gnss": _write_gnss,
    "lidar": _write_lidar,
    "radar": _write_radar,
}
