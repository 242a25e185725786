"""A ROS 1 bridge for closed-loop sessions (docs/ros1-bridge.md); twinsim never imports it."""
