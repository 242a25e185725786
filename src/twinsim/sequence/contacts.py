"""A robot's contacts as data and their file: `<robot stream prefix>contacts/contacts.npy`.

Every robot records a `contacts` stream: at each step of its rate, one record per active
contact between one of the robot's parts (its links, listed in the stream's metadata `parts`)
and anything else: the other geom's instance and class (0 where it is no instance), the normal
force the robot part feels (N, ≥ 0), where it acts and its direction, in the world frame.
Records of one step share its t_ns; steps without contacts have none. Like an event camera's
events, the records are appended while the run goes and the header's count is sealed at close.
"""

from __future__ import annotations

import numpy as np

from twinsim.errors import SequenceError
from twinsim.model.clock import step_to_ns
from twinsim.model.layout import METADATA
from twinsim.sequence.scans import read_records
from twinsim.sequence.stream_checks import StreamCheck, rate_period

CONTACTS_FILE = "contacts.npy"
#: `other_part`: the robot's own part on the other side of a self-contact, else NO_PART
NO_PART = 0xFFFF
CONTACT_DTYPE = np.dtype(
    [
        ("t_ns", "<i8"),
        ("part", "<u2"),
        ("other_part", "<u2"),
        ("instance", "<u2"),
        ("semantic", "<u2"),
        ("normal_force_n", "<f8"),
        ("x", "<f4"),
        ("y", "<f4"),
        ("z", "<f4"),
        ("nx", "<f4"),
        ("ny", "<f4"),
        ("nz", "<f4"),
    ]
)
CONTACT_FIELDS = {
    "t_ns": "the step's time",
    "part": "index into parts: the robot's link in contact",
    "other_part": f"the robot's own link on the other side of a self-contact, else {NO_PART}",
    "instance": "the other geom's instance id (0: none, e.g. a wall)",
    "semantic": "the other geom's class id (index into classes)",
    "normal_force_n": "normal contact force on the robot's part, N",
    "x, y, z": "contact point in the world frame, m",
    "nx, ny, nz": "unit direction of that normal force on the robot's part, world frame",
}


def read_contacts(path, name: str) -> np.ndarray:
    """The records of a contacts file (`name` labels errors)."""
    return read_records(path, CONTACT_DTYPE, name)


def check_contacts(check: StreamCheck) -> None:
    """contacts.npy: record type and count, times on the stream's step grid and inside the
    recording, parts in range, instances in the instance table, forces finite and ≥ 0."""
    name, info, ctx = check.name, check.info, check.context
    label = f"{name}/{CONTACTS_FILE}"
    parts = info.get("parts")
    if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
        check.problems.append(f"{name}: {METADATA} gives no list of part names (parts)")
        return
    if not (check.folder / CONTACTS_FILE).is_file():
        check.problems.append(f"{label}: missing")
        return
    check.count("files", 1)
    if not check.decode:
        return
    try:
        rec = read_contacts(check.path / label, label)
    except SequenceError as exc:
        check.problems.append(str(exc))
        return
    n, recorded = len(rec), info.get("count")
    if recorded != n:
        check.problems.append(f"{name}: {n} contacts but {METADATA} records count {recorded!r}")
    period = rate_period(check)
    t = rec["t_ns"]
    check.report(
        [
            f"{label} record {i + 1}: t_ns {t[i + 1]} is before {t[i]}"
            for i in np.flatnonzero(np.diff(t) < 0)
        ]
    )
    if period is not None and n:
        steps = np.arange(ctx.k_start, ctx.k_end, dtype=np.int64)
        steps = steps[steps % period == 0]
        grid = np.array([step_to_ns(int(k), ctx.physics_hz) for k in steps], dtype=np.int64)
        off = np.flatnonzero(~np.isin(t, grid))
        check.report([f"{label} record {i}: t_ns {t[i]} is not a step of this stream" for i in off])
    bad_part = np.flatnonzero(rec["part"] >= len(parts))
    check.report([f"{label} record {i}: part {rec['part'][i]} is not in parts" for i in bad_part])
    other = rec["other_part"]
    bad_other = np.flatnonzero((other != NO_PART) & (other >= len(parts)))
    check.report([f"{label} record {i}: other_part {other[i]} is not in parts" for i in bad_other])
    unknown = np.setdiff1d(rec["instance"], ctx.instance_ids)
    if unknown.size:
        check.problems.append(
            f"{label}: instance ids {unknown.tolist()} are not in {METADATA}'s instance table"
        )
    if n and int(rec["semantic"].max()) >= ctx.n_classes:
        check.problems.append(f"{label}: semantic ids at or above len(classes) = {ctx.n_classes}")
    force = rec["normal_force_n"]
    bad_force = np.flatnonzero(~(np.isfinite(force) & (force >= 0.0)))
    check.report(
        [f"{label} record {i}: normal force {force[i]} is not finite and ≥ 0" for i in bad_force]
    )
    normal = np.stack([rec["nx"], rec["ny"], rec["nz"]], axis=1).astype(np.float64)
    bad_normal = np.flatnonzero(np.abs(np.linalg.norm(normal, axis=1) - 1.0) > 1e-3)
    check.report([f"{label} record {i}: direction is not a unit vector" for i in bad_normal])
    check.count("contacts", n)
