"""The closed-loop wire protocol of `twinsim serve`: msgpack messages, versioned, the same
step/reset a `Session` offers in Python (docs/closed-loop-protocol.md is the reference).

A request is a map `{"v": 1, "op": "hello" | "reset" | "step" | "close", ...}`; a reply is
`{"v": 1, "ok": true, ...}` or `{"v": 1, "ok": false, "error": "one line"}`. Stamps are
integer nanoseconds; a numeric array travels as `{"dtype": "<f4", "shape": [...], "data":
bytes}` (C order, the dtype in NumPy's `dtype.str` notation), a structured array (contacts)
as `{"fields": {name: array, ...}, "length": n}`, the fields in the record's order. Both
sides use the functions here: the server encodes observations, the client decodes them into
the very dataclasses a `Session` returns.

Minor version 1 (1.1) adds, in reset and step replies, the optional `task` field (the goal of
the episode's task, `encode_task`), sent where a task runs (navbench's external policies); a
v1.0 client ignores it and `twinsim serve`, which runs no task, does not send it.

Minor version 2 (1.2) adds the optional `weather` and `light` fields of the reset request (the
episode's config sections of those names, checked by `WeatherConfig` and `LightConfig`). A
server of 1.1 refuses them as unknown fields, so a client that sends them reads
`protocol_minor` >= 2 in hello first; a client that does not send them sees no change.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

import msgpack
import numpy as np
from pydantic import ValidationError

from twinsim._version import __version__
from twinsim.closedloop.observations import Events, Observations, RobotObservations, Table
from twinsim.configmodel import format_validation_error
from twinsim.errors import TwinsimError
from twinsim.model.sections import LightConfig, WeatherConfig
from twinsim.robots.common.commands import CommandSpace
from twinsim.sequence.frames import CameraFrame
from twinsim.sequence.scans import LidarScan
from twinsim.sequence.stream_writers import json_default

VERSION = 1
#: additions within VERSION that a client may ignore or leave out (1: the optional `task` reply
#: field; 2: the optional `weather` and `light` reset fields)
MINOR = 2
#: each op and the fields its request may carry besides `v` and `op`
REQUEST_FIELDS: dict[str, tuple[str, ...]] = {
    "hello": (),
    "reset": ("seed", "out", "weather", "light"),
    "step": ("commands",),
    "close": (),
}
_IMAGES = ("rgb", "depth", "instance", "semantic", "T_world_cam")
_SCAN_ARRAYS = (
    "T_world_lidar",
    "points",
    "t_offset_ns",
    "ring",
    "intensity",
    "range",
    "instance",
    "semantic",
    "dynamic",
)
EVENT_FIELDS = ("x", "y", "t_ns", "polarity")


class ProtocolError(TwinsimError):
    """A message is not a valid request or reply of this protocol version."""


def pack(message: Mapping) -> bytes:
    """One message as msgpack bytes; NumPy values left in free-form parts (boxes, people)
    become plain numbers and lists."""
    return msgpack.packb(
        message, use_bin_type=True, default=json_default
    )  # NumPy scalars outside the typed parts


def unpack(data: bytes) -> dict:
    """A message's map, its version checked; raises `ProtocolError` on anything else."""
    try:
        message = msgpack.unpackb(data, raw=False)  # map keys: strings or bytes only
    except (
        ValueError,
        TypeError,
        msgpack.ExtraData,
        msgpack.FormatError,
        msgpack.StackError,
    ) as exc:
        raise ProtocolError(f"not a msgpack message ({exc})") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"a message is a map, got a {type(message).__name__}")
    version = message.get("v")
    if isinstance(version, bool) or version != VERSION:  # True == 1 in Python, not on the wire
        raise ProtocolError(f"protocol version {version!r} is not spoken here; this is v{VERSION}")
    return message


def request(op: str, **fields: Any) -> dict:
    """A request map of `op` with its fields (the client's side)."""
    return {"v": VERSION, "op": op, **fields}


def parse_request(data: bytes) -> tuple[str, dict]:
    """(op, fields) of a request, checked: a known op with only its own fields, typed."""
    message = unpack(data)
    op = message.get("op")
    if not isinstance(op, str) or op not in REQUEST_FIELDS:
        raise ProtocolError(f"op: one of {', '.join(REQUEST_FIELDS)}, got {op!r}")
    fields = {k: v for k, v in message.items() if k not in ("v", "op")}
    unknown = sorted(str(k) for k in fields if k not in REQUEST_FIELDS[op])
    if unknown:
        allowed = ", ".join(REQUEST_FIELDS[op]) or "none"
        raise ProtocolError(f"{op}: unknown field {unknown[0]!r}; allowed: {allowed}")
    seed = fields.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ProtocolError(f"reset.seed: an integer >= 0 or nil, got {seed!r}")  # msgpack: < 2**64
    out = fields.get("out")
    if out is not None and not _relative_folder(out):
        raise ProtocolError(
            "reset.out: a folder name relative to the server's episodes folder (not empty, not "
            f"absolute, no '..', names of at most 255 bytes) or nil, got {str(out)[:80]!r}"
        )
    for name, model in (("weather", WeatherConfig), ("light", LightConfig)):
        _check_section(name, model, fields.get(name))
    if not isinstance(fields.get("commands", {}), Mapping | None):
        raise ProtocolError("step.commands: a map of robot name to {mode: {field: value}}")
    return op, fields


def _check_section(name: str, model: type, value: Any) -> None:
    """A reset's `weather` or `light`: nil or a map that `model` (the config section of that
    name) takes; else one line naming the field."""
    if value is None:
        return
    where = f"reset.{name}"
    if not isinstance(value, Mapping):
        raise ProtocolError(f"{where}: a map of field to value or nil, got {str(value)[:80]!r}")
    try:
        model.model_validate(dict(value))
    except ValueError as exc:  # a ValidationError is a ValueError too
        if not isinstance(exc, ValidationError):
            raise ProtocolError(f"{where}: {' '.join(str(exc).split())}") from None
        message = format_validation_error(exc, model, dict(value), prefix=where, what="field")
        raise ProtocolError(" ".join(message.split())) from None


def _relative_folder(out: Any) -> bool:
    """Whether a client's `out` names a folder below the server's episodes folder."""
    if not isinstance(out, str) or not out.strip() or "\0" in out:
        return False
    path = PurePosixPath(out.replace("\\", "/"))
    if len(out.encode()) > 1024 or any(len(part.encode()) > 255 for part in path.parts):
        return False  # what the file system would refuse (ENAMETOOLONG)
    return bool(path.parts) and not path.is_absolute() and ".." not in path.parts


def ok_reply(**fields: Any) -> dict:
    """A successful reply carrying `fields`."""
    return {"v": VERSION, "ok": True, **fields}


def error_reply(message: str) -> dict:
    """A refused request's reply, its reason on one line."""
    return {"v": VERSION, "ok": False, "error": " ".join(str(message).split())}


def encode_array(array: np.ndarray) -> dict:
    """A numeric array as dtype, shape and its C-order bytes."""
    array = np.ascontiguousarray(array)
    return {"dtype": array.dtype.str, "shape": list(array.shape), "data": array.tobytes()}


def decode_array(encoded: Mapping) -> np.ndarray:
    """The array `encode_array` wrote (a read-only view on the message's bytes)."""
    dtype = np.dtype(encoded["dtype"])
    return np.frombuffer(encoded["data"], dtype).reshape(encoded["shape"])


def encode_records(records: np.ndarray) -> dict:
    """A structured array as its fields in order, each a plain array, and its length."""
    names = records.dtype.names or ()
    return {"fields": {name: encode_array(records[name]) for name in names}, "length": len(records)}


def decode_records(encoded: Mapping) -> np.ndarray:
    """The structured array `encode_records` wrote."""
    fields = {name: decode_array(a) for name, a in encoded["fields"].items()}
    dtype = np.dtype([(name, a.dtype, a.shape[1:]) for name, a in fields.items()])
    records = np.empty(int(encoded["length"]), dtype)
    for name, values in fields.items():
        records[name] = values
    return records


def describe_commands(spaces: Mapping[str, CommandSpace], kinds: Mapping[str, str]) -> dict:
    """Each robot's kind and command modes, for the hello reply."""
    return {
        name: {
            "kind": kinds[name],
            "modes": {
                mode: {"fields": list(m.fields), "required": list(m.required), "summary": m.summary}
                for mode, m in space.modes.items()
            },
        }
        for name, space in spaces.items()
    }


def hello_fields(
    spaces: Mapping[str, CommandSpace],
    kinds: Mapping[str, str],
    *,
    control_hz: int,
    physics_hz: int,
    rtf: float | None,
    timeout_s: float,
    episodes: int,
    running: bool,
) -> dict:
    """The fields of a hello reply: the protocol, the robots and their commands, the rates and
    the mode (`lockstep` without an `rtf`, else `free_running`)."""
    return {
        "protocol": VERSION,
        "protocol_minor": MINOR,
        "twinsim": __version__,
        "robots": describe_commands(spaces, kinds),
        "control_hz": control_hz,
        "physics_hz": physics_hz,
        "mode": "lockstep" if rtf is None else "free_running",
        "rtf": rtf,
        "timeout_s": timeout_s,
        "episodes": episodes,
        "running": running,
    }


def encode_task(name: str, info: Any) -> dict:
    """A task's state after a step (a point-goal `TaskInfo`) as the `task` reply field: its
    name, the goal's world x, y, the geodesic and straight distances left (m), the geodesic
    distance from the start (m) and whether it succeeded."""
    return {
        "name": name,
        "goal": [float(v) for v in np.asarray(info.goal, dtype=float)[:2]],
        "distance_to_goal": float(info.distance_to_goal),
        "euclidean_to_goal": float(info.euclidean_to_goal),
        "geodesic_start_m": float(info.geodesic_start_m),
        "success": bool(info.success),
    }


def encode_observations(observations: Observations) -> dict:
    """A step's observations as a message part."""
    return {
        "step": observations.step,
        "t_ns": observations.t_ns,
        "done": observations.done,
        "robots": {name: _encode_robot(r) for name, r in observations.robots.items()},
    }


def _encode_robot(robot: RobotObservations) -> dict:
    """One robot's state and readings."""
    return {
        "T_world_body": encode_array(robot.T_world_body),
        "velocity": encode_array(robot.velocity),
        "arrived": robot.arrived,
        "tables": {
            name: {
                "columns": list(t.columns),
                "t_ns": encode_array(t.t_ns),
                "values": encode_array(t.values),
            }
            for name, t in robot.tables.items()
        },
        "frames": {name: [_encode_frame(f) for f in fs] for name, fs in robot.frames.items()},
        "scans": {name: [_encode_scan(s) for s in ss] for name, ss in robot.scans.items()},
        "events": {
            name: {k: encode_array(getattr(e, k)) for k in EVENT_FIELDS}
            for name, e in robot.events.items()
        },
        "contacts": {name: encode_records(c) for name, c in robot.contacts.items()},
    }


def _encode_frame(frame: CameraFrame) -> dict:
    """One camera frame: its images and pose as arrays, boxes and people as plain maps."""
    encoded = {"index": frame.index, "t_ns": frame.t_ns}
    encoded |= {k: encode_array(getattr(frame, k)) for k in _IMAGES}
    return encoded | {
        "boxes": frame.boxes,
        "people": frame.people,
        "dynamic_fraction": float(frame.dynamic_fraction),
    }


def _encode_scan(scan: LidarScan) -> dict:
    """One LiDAR sweep: its start stamp and pose, and its per-point arrays."""
    encoded = {"index": scan.index, "t_ns": scan.t_ns}
    return encoded | {k: encode_array(getattr(scan, k)) for k in _SCAN_ARRAYS}


def decode_observations(encoded: Mapping) -> Observations:
    """The `Observations` that `encode_observations` wrote."""
    robots = {name: _decode_robot(r) for name, r in encoded["robots"].items()}
    return Observations(int(encoded["step"]), int(encoded["t_ns"]), robots, bool(encoded["done"]))


def _decode_robot(encoded: Mapping) -> RobotObservations:
    """One robot's `RobotObservations`."""
    return RobotObservations(
        T_world_body=decode_array(encoded["T_world_body"]),
        velocity=decode_array(encoded["velocity"]),
        arrived=bool(encoded["arrived"]),
        tables={
            name: Table(tuple(t["columns"]), decode_array(t["t_ns"]), decode_array(t["values"]))
            for name, t in encoded["tables"].items()
        },
        frames={
            name: [
                CameraFrame(
                    index=f["index"],
                    t_ns=f["t_ns"],
                    **{k: decode_array(f[k]) for k in _IMAGES},
                    boxes=f["boxes"],
                    people=f["people"],
                    dynamic_fraction=f["dynamic_fraction"],
                )
                for f in frames
            ]
            for name, frames in encoded["frames"].items()
        },
        scans={
            name: [
                LidarScan(s["index"], s["t_ns"], **{k: decode_array(s[k]) for k in _SCAN_ARRAYS})
                for s in scans
            ]
            for name, scans in encoded["scans"].items()
        },
        events={
            name: Events(*(decode_array(e[k]) for k in EVENT_FIELDS))
            for name, e in encoded["events"].items()
        },
        contacts={name: decode_records(c) for name, c in encoded["contacts"].items()},
    )
