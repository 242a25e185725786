"""Exports of a sequence to the formats the field reads: TUM, EuRoC, KITTI, ROS 2 bags, COCO,
YOLO and Rerun. Each format is one module; `export_sequence` dispatches by name.

Formats, files, frames and units are documented in docs/exports.md.
"""

from twinsim.export.common import ExportError
from twinsim.export.registry import FORMATS, ExportFormat, export_sequence

__all__ = ["FORMATS", "ExportError", "ExportFormat", "export_sequence"]
