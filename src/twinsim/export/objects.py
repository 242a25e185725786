"""Per-frame objects for detector formats: one mask per instance, a person's body and clothing
instances merged into one `person` object (as COCO and YOLO annotate people)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinsim.export.common import ExportError
from twinsim.sequence.frames import Frame
from twinsim.sequence.reader import SequenceReader

#: Structure ("stuff") classes left out of detector annotations unless asked for.
STUFF_CLASSES = ("wall", "floor", "ceiling", "door_frame")


@dataclass(frozen=True)
class FrameObject:
    """A visible object: id (the instance id, a person's body instance), class id, pixel mask."""

    object_id: int
    class_id: int
    mask: np.ndarray


class ObjectTable:
    """Maps instance ids to objects and classes, from the sequence's instance table."""

    def __init__(self, seq: SequenceReader) -> None:
        self.classes: list[str] = list(seq.metadata["classes"])
        instances = seq.metadata["instances"]
        class_index = {name: i for i, name in enumerate(self.classes)}
        bodies = {
            i["person_id"]: i["instance_id"]
            for i in instances
            if "person_id" in i and i["semantic_class"] == "person"
        }
        size = max((i["instance_id"] for i in instances), default=0) + 1
        self.object_of = np.zeros(size, dtype=np.int64)
        self.class_of = np.zeros(size, dtype=np.int64)
        for inst in instances:
            iid = inst["instance_id"]
            person = inst.get("person_id")
            self.object_of[iid] = bodies.get(person, iid) if person is not None else iid
            cls = "person" if person is not None and person in bodies else inst["semantic_class"]
            self.class_of[iid] = class_index[cls]

    def objects(
        self, frame: Frame, class_ids: frozenset[int], min_area: int = 1
    ) -> list[FrameObject]:
        """Objects of the wanted classes with at least `min_area` visible pixels, by id."""
        object_map = self.object_of[frame.instance.astype(np.int64)]
        found = []
        for oid in np.unique(object_map):
            cls = int(self.class_of[oid])
            if oid == 0 or cls not in class_ids:
                continue
            mask = object_map == oid
            if int(mask.sum()) >= min_area:
                found.append(FrameObject(int(oid), cls, mask))
        return found


def class_selection(
    classes: list[str], wanted: str | None, default_skip: tuple[str, ...] = STUFF_CLASSES
) -> frozenset[int]:
    """Class ids to annotate: a comma-separated list of names, or every class but the skipped."""
    if wanted is None:
        return frozenset(i for i, c in enumerate(classes) if i and c not in default_skip)
    names = [n.strip() for n in wanted.split(",") if n.strip()]
    for name in names:
        if name not in classes[1:]:
            raise ExportError(f"classes: unknown class {name!r}; allowed: {', '.join(classes[1:])}")
    if not names:
        raise ExportError(f"classes={wanted!r} names no class; e.g. classes=person,chair")
    return frozenset(classes.index(name) for name in names)


def check_min_area(min_area: int) -> int:
    """`min_area` as a positive pixel count, or a clear error."""
    if isinstance(min_area, bool) or not isinstance(min_area, int) or min_area < 1:
        raise ExportError(f"min_area={min_area!r} must be a whole number of pixels >= 1")
    return min_area
