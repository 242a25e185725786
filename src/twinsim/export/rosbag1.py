"""ROS 1 bag (format 2.0, one chunked `.bag` file) written with `rosbags`, no ROS install needed.

The topics, frames and stamps are those of `ros_messages` (shared with the `rosbag2` export);
messages are serialized with the ROS 1 Noetic definitions and md5sums, each header's `seq` is the
message's index on its topic, and `/tf_static` is latched, as ROS 1 publishes it. Chunks (1 MiB)
are stored uncompressed or compressed with `bz2` or `lz4` (`compression`); lz4 chunks are LZ4
frames as ROS 1's own `roslz4` writes and requires them (`_roslz4_frame`).
"""

from __future__ import annotations

from pathlib import Path

from twinsim.export.common import ExportError, Progress, no_progress, prepare_output
from twinsim.export.ros_messages import message_stream
from twinsim.sequence.reader import SequenceReader

BAG_FILE = "twinsim.bag"

#: tf2_msgs/TFMessage, which rosbags' Noetic typestore lacks (ROS 1 md5sum 94810edd…)
TF_MESSAGE = "geometry_msgs/TransformStamped[] transforms\n"


def export_rosbag1(
    seq: SequenceReader,
    out: Path,
    *,
    compression: str = "none",
    progress: Progress = no_progress,
) -> Path:
    """Write every stream of `seq` as the ROS 1 bag `out/twinsim.bag`; returns the bag file."""
    from rosbags.rosbag1 import Writer

    formats = {f.name.lower(): f for f in Writer.CompressionFormat}
    if compression != "none" and compression not in formats:
        allowed = ", ".join(["none", *formats])
        raise ExportError(
            f"compression={compression!r} is not a rosbag1 compression; allowed: {allowed}"
        )
    store = _noetic_store()
    out = prepare_output(out)
    topics, messages = message_stream(seq, store)
    total = sum(topic.count for topic in topics.values())
    writer = Writer(out / BAG_FILE)
    if compression != "none":
        writer.set_compression(formats[compression])
    if compression == "lz4":
        writer.compressor = _roslz4_frame
    with writer:
        connections = {
            name: writer.add_connection(
                name,
                topic.msgtype,
                typestore=store,
                latching=1 if name == "/tf_static" else None,
            )
            for name, topic in topics.items()
        }
        for done, (t_ns, name, message) in enumerate(messages, start=1):
            connection = connections[name]
            writer.write(connection, t_ns, store.serialize_ros1(message, connection.msgtype))
            progress(done, total)
    return out / BAG_FILE


def _noetic_store():
    """rosbags' ROS 1 Noetic typestore, with tf2_msgs/TFMessage added."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.ROS1_NOETIC)
    store.register(get_types_from_msg(TF_MESSAGE, "tf2_msgs/msg/TFMessage"))
    return store


def _roslz4_frame(data: bytes) -> bytes:
    """An lz4 chunk as ROS 1's roslz4 reads it: independent 1 MiB blocks, a content checksum
    and no content size (rosbags' default frame, with the size, no checksum and linked blocks,
    is refused as malformed by roslz4, and so by Debian's `rosbag`)."""
    from lz4.frame import BLOCKSIZE_MAX1MB, compress

    return compress(
        data,
        block_size=BLOCKSIZE_MAX1MB,
        block_linked=False,
        content_checksum=True,
        store_size=False,
    )
