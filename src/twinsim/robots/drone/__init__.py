"""The `drone` kind: a quadrotor with its flight controller, flying planned tours."""
