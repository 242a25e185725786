"""twinsim's data: what a run is and what it writes, as plain models with no behaviour beyond
validation and derived values.

The scene and body specs a config resolves into (`scene`, `body`, `base`, `roads`,
`mounts`), the plain config sections (`sections`), trajectories (`trajectory`), the integer
step clock (`clock`) and the names of a sequence folder's files and columns (`layout`). It is
the floor every other package stands on: it imports nothing of twinsim but the foundation
(`configmodel`, `plugins`, `registries`, `geometry`, `errors`), which `lint-imports` enforces.
"""
