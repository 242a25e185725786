"""Format 1, still read, in one place: everything twinsim does to take a format-1 input as the
current format, removed in twinsim 0.3.0 (`REMOVAL_VERSION`).

Format 1 is the layout before several robots (twinsim before sequence format 2):

- a config's sensor sections `cameras:`, `imus:`, `lidars:`, `event_cameras:` (also as
  `--set cameras.cam0.width=...`), folded into the one-robot form's `sensors:` mapping
  (`twinsim.compat.config.upgrade_config`, called once where a config is made canonical:
  `twinsim.config.canonical_form`); `sensors.<name>` with its `kind` replaces them;
- a sequence's `metadata.json` of `format_version` 1 (one robot, event cameras typed
  `events`), read as the current one in memory (`twinsim.compat.sequence.upgrade_metadata`,
  called by `twinsim.sequence.reader.read_metadata`), and its `scene.json` (one `robot`)
  as a `robots` list (`upgrade_scene`, called by `SceneSpec`'s validator). The files are never
  changed; `twinsim replay` of such a sequence writes a current one.

Nothing else in twinsim knows format 1: deleting this package and its call sites ends it.
There is no message at run time (library code never prints, and twinsim has no warning
channel); the removal is announced here, in docs/architecture.md and in
docs/sequence-format.md.
"""

#: the twinsim version that no longer reads format 1
REMOVAL_VERSION = "0.3.0"

__all__ = ["REMOVAL_VERSION"]
