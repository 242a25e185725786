"""Benchmark methods: in-process baselines and external programs, by name or YAML file."""

from __future__ import annotations

from twinsim.eval.methods.base import ESTIMATE_FILE, Method, MethodError
from twinsim.eval.methods.external import ExternalMethod, load_external
from twinsim.eval.methods.feature_vo import FeatureVO
from twinsim.eval.methods.kiss_icp import KissIcpOdometry
from twinsim.eval.methods.rgbd_odometry import RgbdOdometry
from twinsim.registries import METHODS


def get_method(spec: str) -> Method:
    """A registered method by name (built-in or an installed plug-in's), or an external
    method from a YAML file path."""
    if spec in METHODS:
        return METHODS.get(spec)()
    if spec.endswith((".yaml", ".yml")):
        return load_external(spec)
    raise MethodError(
        f"unknown method {spec!r}; built-in: {', '.join(METHODS)}, or a path to a method YAML"
    )


__all__ = [
    "ESTIMATE_FILE",
    "METHODS",
    "ExternalMethod",
    "FeatureVO",
    "KissIcpOdometry",
    "Method",
    "MethodError",
    "RgbdOdometry",
    "get_method",
]
