"""twinsim: physics-enabled dynamic worlds, exact twins of every run, annotated sensor data."""

__version__ = "0.1.0"
