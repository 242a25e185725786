"""Remove dynamic actors from a recorded world: all of them (a static twin), by class or by id.

A person is two instances (body/skin `person`, clothes `clothing`); naming either removes the
whole person. Only dynamic instances can be removed: the static world stays as recorded.
"""

from __future__ import annotations

from twinsim.errors import ConfigError
from twinsim.model.scene import SceneSpec


def _dynamic_instances(scene: SceneSpec) -> dict[int, str]:
    """Dynamic instance id → semantic class."""
    out: dict[int, str] = {}
    for p in scene.people:
        out[p.body_instance_id] = "person"
        out[p.clothing_instance_id] = "clothing"
    for f in scene.flying_objects:
        out[f.instance_id] = f.semantic_class
    return out


def remove_actors(
    scene: SceneSpec, static: bool, classes: tuple[str, ...], instances: tuple[int, ...]
) -> SceneSpec:
    """The scene without the named dynamic actors; `ConfigError` naming unknown classes or ids."""
    if not (static or classes or instances):
        return scene
    dynamic = _dynamic_instances(scene)
    present = sorted(set(dynamic.values()))
    for cls in classes:
        if cls not in present:
            raise ConfigError(
                f"remove_classes: no dynamic instance of class {cls!r} in this sequence; "
                f"dynamic classes present: {', '.join(present) or 'none'}"
            )
    static_ids = {o.instance_id: o.name for o in scene.objects}
    for iid in instances:
        if iid in static_ids:
            raise ConfigError(
                f"remove_instances: instance {iid} ({static_ids[iid]}) is part of the static "
                "world; only dynamic instances can be removed"
            )
        if iid not in dynamic:
            ids = ", ".join(str(i) for i in sorted(dynamic)) or "none"
            raise ConfigError(
                f"remove_instances: no instance {iid} in this sequence; dynamic instances: {ids}"
            )
    gone = set(dynamic) if static else {i for i, c in dynamic.items() if c in classes}
    gone |= set(instances)
    people = tuple(
        p
        for p in scene.people
        if p.body_instance_id not in gone and p.clothing_instance_id not in gone
    )
    flying = tuple(f for f in scene.flying_objects if f.instance_id not in gone)
    return scene.model_copy(update={"people": people, "flying_objects": flying})
