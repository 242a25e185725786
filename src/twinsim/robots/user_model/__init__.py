"""The `mjcf` and `urdf` kinds: a robot read from a user's file through MuJoCo's compiler."""
