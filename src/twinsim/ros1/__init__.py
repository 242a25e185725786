"""A ROS 1 bridge for closed-loop sessions (docs/ros1-bridge.md) and navbench's ROS 1 policies
(`navigation`); the rest of twinsim imports only `launch` (plain processes), never rospy."""
