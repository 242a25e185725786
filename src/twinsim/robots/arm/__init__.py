"""The `arm` kind: a Franka Panda on a pedestal, its scan planned by IK, computed-torque control."""
