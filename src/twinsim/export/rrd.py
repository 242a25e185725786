"""Rerun recording (.rrd) of a sequence: cameras (RGB, depth, instance and semantic masks,
boxes, keypoints), trajectories, 3D boxes of moving things, people's skeletons, IMU, LiDAR.

Entities live under `world` (z up); each camera is a pinhole in OpenCV's RDF convention posed
by its ground truth. Time is the `sim_time` timeline, the sequence clock in exact nanoseconds.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import timedelta
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from twinsim.actors.human import COCO_KEYPOINTS
from twinsim.export.coco import COCO_SKELETON
from twinsim.export.common import (
    Progress,
    class_palette,
    no_progress,
    prepare_output,
    streams_of_type,
)
from twinsim.model.layout import CHECKSUMS, METADATA
from twinsim.sequence.reader import SequenceReader

TIMELINE = "sim_time"
RRD_NAME = "recording.rrd"
# Chunks are cut by size only (Rerun's default 2 MiB), never by the batcher's wall-clock tick,
# so their boundaries depend on the sequence alone.
CHUNK_BYTES = 2 << 20
CHUNK_ROWS = 1 << 32
_NO_TICK = timedelta(days=365)


def export_rerun(seq: SequenceReader, out: Path, *, progress: Progress = no_progress) -> Path:
    """Log every stream of `seq` into `out/recording.rrd` (no viewer is started); returns it."""
    import rerun as rr

    out = prepare_output(out)
    path = out / RRD_NAME
    rec = rr.RecordingStream(
        "twinsim",
        recording_id=content_recording_id(seq.path),
        send_properties=False,  # its only property is the wall-clock start time
        batcher_config=rr.ChunkBatcherConfig(
            flush_tick=_NO_TICK, flush_num_bytes=CHUNK_BYTES, flush_num_rows=CHUNK_ROWS
        ),
    )
    rec.save(path)
    rec.set_log_time_enabled(False)
    rec.set_log_tick_enabled(False)
    logger = _Logger(rr, rec, seq)
    logger.static()
    rec.flush()  # logged rows go through the batcher's thread, sent columns do not: in turn
    cameras, lidars = streams_of_type(seq, "camera"), streams_of_type(seq, "lidar")
    total = sum(seq.stream_info(s)["count"] for s in cameras + lidars) + 1
    done = 0
    logger.tables()
    rec.flush()
    for camera in cameras:
        for frame in seq.camera(camera):
            logger.frame(camera, frame)
            done += 1
            progress(done, total)
    for lidar in lidars:
        for scan in seq.lidar(lidar):
            logger.scan(lidar, scan)
            done += 1
            progress(done, total)
    rec.flush()
    rec.disconnect()
    progress(total, total)
    return path


def content_recording_id(seq_path: Path) -> uuid.UUID:
    """A recording id that names the sequence's content, not its folder: a UUID-5 of the bytes
    of `metadata.json` and `checksums.csv` (every other file's CRC-32 and size), where present."""
    digest = hashlib.sha256()
    for name in (METADATA, CHECKSUMS):
        path = seq_path / name
        data = path.read_bytes() if path.is_file() else b""
        digest.update(f"{name}\0{len(data)}\0".encode() + data)
    return uuid.uuid5(uuid.NAMESPACE_URL, f"twinsim:sequence:{digest.hexdigest()}")


class _Logger:
    """Writes entities of one sequence into a recording stream."""

    def __init__(self, rr, rec, seq: SequenceReader) -> None:
        self.rr, self.rec, self.seq = rr, rec, seq
        self.classes = list(seq.metadata["classes"])
        self.dynamic = {i["instance_id"] for i in seq.metadata["instances"] if i.get("dynamic")}

    def time(self, t_ns: int) -> None:
        self.rec.set_time(TIMELINE, duration=np.timedelta64(int(t_ns), "ns"))

    def static(self) -> None:
        rr, rec = self.rr, self.rec
        colors = class_palette(len(self.classes))
        rec.log(  # one call: two would be two chunks of one entity, in the batcher's hash order
            "world",
            rr.ViewCoordinates.RIGHT_HAND_Z_UP,
            rr.AnnotationContext(
                [
                    rr.AnnotationInfo(id=i, label=name, color=tuple(colors[i]))
                    for i, name in enumerate(self.classes)
                ]
            ),
            static=True,
        )
        person = self.classes.index("person")
        rec.log(
            "world/people",
            rr.AnnotationContext(
                rr.ClassDescription(
                    info=rr.AnnotationInfo(id=person, label="person"),
                    keypoint_annotations=[
                        rr.AnnotationInfo(id=k, label=n) for k, n in enumerate(COCO_KEYPOINTS)
                    ],
                    keypoint_connections=[(a - 1, b - 1) for a, b in COCO_SKELETON],
                )
            ),
            static=True,
        )
        _, T = self.seq.groundtruth("groundtruth_body")
        rec.log(
            "world/trajectory/body",
            rr.LineStrips3D([T[:, :3, 3]], colors=[(255, 200, 0)]),
            static=True,
        )
        for camera in streams_of_type(self.seq, "camera"):
            stream = self.seq.camera(camera)
            rec.log(
                f"world/{camera}",
                rr.Pinhole(
                    image_from_camera=stream.K,
                    resolution=[stream.width, stream.height],
                    camera_xyz=rr.ViewCoordinates.RDF,
                ),
                static=True,
            )

    def tables(self) -> None:
        """Body pose and IMU samples as time series (sent column-wise, not row by row)."""
        rr, rec, seq = self.rr, self.rec, self.seq
        t_ns, T = seq.groundtruth("groundtruth_body")
        times = [rr.TimeColumn(TIMELINE, duration=t_ns.astype("timedelta64[ns]"))]
        rec.send_columns(
            "world/body",
            indexes=times,
            columns=rr.Transform3D.columns(
                translation=T[:, :3, 3],
                quaternion=Rotation.from_matrix(T[:, :3, :3]).as_quat(),
            ),
        )
        for imu in streams_of_type(seq, "imu"):
            data = seq.imu(imu)
            imu_times = [rr.TimeColumn(TIMELINE, duration=data.t_ns.astype("timedelta64[ns]"))]
            for kind, values in (("gyro", data.gyro), ("accel", data.accel)):
                rec.send_columns(
                    f"imu/{imu}/{kind}",
                    indexes=imu_times,
                    columns=rr.Scalars.columns(scalars=values),
                )

    def frame(self, camera: str, frame) -> None:
        rr, rec = self.rr, self.rec
        self.time(frame.t_ns)
        T = frame.T_world_cam
        base = f"world/{camera}"
        rec.log(
            base,
            rr.Transform3D(
                translation=T[:3, 3], quaternion=Rotation.from_matrix(T[:3, :3]).as_quat()
            ),
        )
        rec.log(f"{base}/rgb", rr.Image(frame.rgb))
        rec.log(f"{base}/depth", rr.DepthImage(frame.depth, meter=1.0))
        rec.log(f"{base}/semantic", rr.SegmentationImage(frame.semantic))
        rec.log(f"{base}/instance", rr.SegmentationImage(frame.instance))
        boxes = frame.boxes
        tight = np.array([b["tight"] for b in boxes], dtype=np.float64).reshape(-1, 4)
        rec.log(
            f"{base}/boxes",
            rr.Boxes2D(
                array=tight + np.array([0, 0, 1, 1]),  # inclusive pixels to edges
                array_format=rr.Box2DFormat.XYXY,
                class_ids=[self.classes.index(b["semantic_class"]) for b in boxes],
                labels=[f"{b['semantic_class']} {b['instance_id']}" for b in boxes],
            ),
        )
        person = self.classes.index("person")
        for pid, keypoints in frame.keypoints.items():
            seen = keypoints[:, 2] > 0
            rec.log(
                f"{base}/keypoints/{pid}",
                rr.Points2D(
                    keypoints[seen, :2] + 0.5,
                    class_ids=person,
                    keypoint_ids=np.flatnonzero(seen),
                ),
            )
        moving = [b for b in boxes if b["instance_id"] in self.dynamic]
        rec.log(
            "world/moving_boxes",
            rr.Boxes3D(
                centers=[b["obb"]["center"] for b in moving],
                half_sizes=[b["obb"]["half_extents"] for b in moving],
                quaternions=[
                    Rotation.from_matrix(np.array(b["obb"]["rotation"])).as_quat() for b in moving
                ],
                class_ids=[self.classes.index(b["semantic_class"]) for b in moving],
                labels=[str(b["instance_id"]) for b in moving],
            ),
        )
        for pid, joints in frame.joints_world.items():
            rec.log(f"world/people/{pid}", rr.Points3D(joints, class_ids=person, radii=0.03))

    def scan(self, lidar: str, scan) -> None:
        rr, rec = self.rr, self.rec
        self.time(scan.t_ns)
        T = np.asarray(scan.T_world_lidar)
        rec.log(
            f"world/{lidar}",
            rr.Transform3D(
                translation=T[:3, 3], quaternion=Rotation.from_matrix(T[:3, :3]).as_quat()
            ),
        )
        rec.log(
            f"world/{lidar}/points",
            rr.Points3D(np.asarray(scan.points), class_ids=np.asarray(scan.semantic), radii=0.01),
        )
