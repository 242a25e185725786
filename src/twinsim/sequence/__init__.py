"""The on-disk sequence format: the contract between generation and everything downstream.

Layout, files, columns, units and frames are documented in docs/sequence-format.md.
"""

from twinsim.sequence.clock import expected_count, step_to_ns, stream_steps
from twinsim.sequence.frames import CameraFrame, Frame
from twinsim.sequence.info import summarize_sequence
from twinsim.sequence.poses import pose_to_row, rows_to_poses
from twinsim.sequence.reader import (
    CameraStream,
    ImuData,
    LidarStream,
    SequenceReader,
    open_sequence,
    read_metadata,
)
from twinsim.sequence.scans import EventData, LidarScan
from twinsim.sequence.validate import ValidationReport, validate_sequence
from twinsim.sequence.writer import (
    SequenceWriter,
    check_output_folder,
    check_output_outside_sequences,
)

__all__ = [
    "CameraFrame",
    "CameraStream",
    "EventData",
    "Frame",
    "ImuData",
    "LidarScan",
    "LidarStream",
    "SequenceReader",
    "SequenceWriter",
    "ValidationReport",
    "check_output_folder",
    "check_output_outside_sequences",
    "expected_count",
    "open_sequence",
    "pose_to_row",
    "read_metadata",
    "rows_to_poses",
    "step_to_ns",
    "stream_steps",
    "summarize_sequence",
    "validate_sequence",
]
