"""The `quadruped` kind: a Go1-class trunk on four three-joint legs, trotting."""
