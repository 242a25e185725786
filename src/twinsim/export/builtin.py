"""Registers the built-in export formats (one line per format)."""

from __future__ import annotations

from twinsim.export.registry import ExportFormat
from twinsim.registries import FORMATS

for _format in (
    ExportFormat(
        "tum", "twinsim.export.tum:export_tum", "TUM RGB-D: rgb/, depth/ (x5000), groundtruth"
    ),
    ExportFormat(
        "euroc", "twinsim.export.euroc:export_euroc", "EuRoC MAV: mav0/ cameras, imu0, ground truth"
    ),
    ExportFormat(
        "kitti", "twinsim.export.kitti:export_kitti", "KITTI odometry + SemanticKITTI labels"
    ),
    ExportFormat(
        "kitti_tracking",
        "twinsim.export.kitti_tracking:export_kitti_tracking",
        "KITTI tracking: image_02, label_02 tracks, calib",
    ),
    ExportFormat(
        "rosbag2", "twinsim.export.rosbag2:export_rosbag2", "ROS 2 bag (MCAP): images, IMU, tf"
    ),
    ExportFormat(
        "rosbag1", "twinsim.export.rosbag1:export_rosbag1", "ROS 1 bag (.bag): images, IMU, tf"
    ),
    ExportFormat(
        "coco", "twinsim.export.coco:export_coco", "COCO instances (RLE masks) and keypoints"
    ),
    ExportFormat(
        "yolo", "twinsim.export.yolo:export_yolo", "YOLO detection or segmentation labels"
    ),
    ExportFormat(
        "rerun", "twinsim.export.rrd:export_rerun", "Rerun .rrd recording of every stream"
    ),
    ExportFormat(
        "mjcf", "twinsim.export.mjcf:export_mjcf", "MuJoCo MJCF of the static world + assets"
    ),
    ExportFormat(
        "mesh", "twinsim.export.mesh:export_mesh", "static world meshes: PLY (labels), glTF"
    ),
    ExportFormat(
        "occupancy",
        "twinsim.export.occupancy:export_occupancy",
        "2D map_server map (YAML + PGM) and 3D voxels",
    ),
    ExportFormat(
        "pointcloud",
        "twinsim.export.pointcloud:export_pointcloud",
        "ground-truth LiDAR map: PCD and PLY",
    ),
    ExportFormat(
        "usd", "twinsim.export.usd:export_usd", "USD stage: world, lights, robots, people (Isaac)"
    ),
):
    FORMATS.register(_format.name, _format)
