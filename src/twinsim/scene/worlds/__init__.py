"""The built-in world generators, one folder each (registered by `twinsim.scene.builtin`)."""
