"""Exports of a sequence to the formats the field reads: TUM, EuRoC, KITTI, ROS bags, COCO,
YOLO and Rerun, and of its world: MJCF, meshes, occupancy maps and a LiDAR point-cloud map.
Each format is one module; `export_sequence` dispatches by name.

Formats, files, frames and units are documented in docs/exports.md.
"""

from twinsim._lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ExportError": "twinsim.export.common",
        "FORMATS": "twinsim.registries",
        "ExportFormat": "twinsim.export.registry",
        "export_sequence": "twinsim.export.registry",
    },
)

__all__ = ["FORMATS", "ExportError", "ExportFormat", "export_sequence"]
