"""The `omni` kind: a planar omnidirectional base on PID control."""
