"""ROS 2 bag (MCAP storage) written with `rosbags`, no ROS install needed.

The topics, frames and stamps are those of `ros_messages` (shared with the `rosbag1` export);
messages are CDR-serialized with the ROS 2 Humble definitions, and `/tf_static` is offered
transient local, as ROS 2 latches it.
"""

from __future__ import annotations

from pathlib import Path

from twinsim.export.common import Progress, no_progress, prepare_output
from twinsim.export.ros_messages import message_stream
from twinsim.sequence.reader import SequenceReader

BAG_NAME = "bag"


def export_rosbag2(seq: SequenceReader, out: Path, *, progress: Progress = no_progress) -> Path:
    """Write every stream of `seq` as one MCAP ROS 2 bag in `out/bag`; returns the bag folder."""
    from rosbags.interfaces import (
        Qos,
        QosDurability,
        QosHistory,
        QosLiveliness,
        QosReliability,
        QosTime,
    )
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    out = prepare_output(out)
    topics, messages = message_stream(seq, store)
    total = sum(topic.count for topic in topics.values())
    latched = Qos(
        QosHistory.KEEP_LAST, 1, QosReliability.RELIABLE, QosDurability.TRANSIENT_LOCAL,
        QosTime(0, 0), QosTime(0, 0), QosLiveliness.AUTOMATIC, QosTime(0, 0), False,
    )  # fmt: skip
    with Writer(out / BAG_NAME, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connections = {
            name: writer.add_connection(
                name,
                topic.msgtype,
                typestore=store,
                offered_qos_profiles=[latched] if name == "/tf_static" else [],
            )
            for name, topic in topics.items()
        }
        for done, (t_ns, name, message) in enumerate(messages, start=1):
            connection = connections[name]
            writer.write(connection, t_ns, store.serialize_cdr(message, connection.msgtype))
            progress(done, total)
    return out / BAG_NAME
