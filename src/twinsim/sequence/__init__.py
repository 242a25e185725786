"""The on-disk sequence format: the contract between generation and everything downstream.

Layout, files, columns, units and frames are documented in docs/sequence-format.md.
"""

from twinsim._lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "expected_count": "twinsim.model.clock",
        "step_to_ns": "twinsim.model.clock",
        "stream_steps": "twinsim.model.clock",
        "CameraFrame": "twinsim.sequence.frames",
        "Frame": "twinsim.sequence.frames",
        "summarize_sequence": "twinsim.sequence.info",
        "pose_to_row": "twinsim.sequence.poses",
        "rows_to_poses": "twinsim.sequence.poses",
        "CameraStream": "twinsim.sequence.reader",
        "ImuData": "twinsim.sequence.reader",
        "LidarStream": "twinsim.sequence.reader",
        "SequenceReader": "twinsim.sequence.reader",
        "open_sequence": "twinsim.sequence.reader",
        "read_metadata": "twinsim.sequence.reader",
        "RadarScan": "twinsim.sequence.radar",
        "RadarStream": "twinsim.sequence.radar",
        "EventData": "twinsim.sequence.scans",
        "LidarScan": "twinsim.sequence.scans",
        "ValidationReport": "twinsim.sequence.validate",
        "validate_sequence": "twinsim.sequence.validate",
        "SequenceWriter": "twinsim.sequence.writer",
        "check_output_folder": "twinsim.sequence.writer",
        "check_output_outside_sequences": "twinsim.sequence.writer",
    },
)

__all__ = [
    "CameraFrame",
    "CameraStream",
    "EventData",
    "Frame",
    "ImuData",
    "LidarScan",
    "LidarStream",
    "RadarScan",
    "RadarStream",
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
