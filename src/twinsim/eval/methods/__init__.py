"""Benchmark methods: in-process baselines and external programs, by name or YAML file."""

from __future__ import annotations

from collections.abc import Callable

from twinsim.eval.methods.base import ESTIMATE_FILE, Method, MethodError
from twinsim.eval.methods.external import ExternalMethod, load_external
from twinsim.eval.methods.feature_vo import FeatureVO
from twinsim.eval.methods.kiss_icp import KissIcpOdometry
from twinsim.eval.methods.rgbd_odometry import RgbdOdometry

#: Built-in baselines by name (`twinsim bench --methods`).
BUILTIN: dict[str, Callable[[], Method]] = {
    "rgbd_odometry": RgbdOdometry,
    "feature_vo": FeatureVO,
    "feature_vo_masked": lambda: FeatureVO(mask_dynamic=True),
    "kiss_icp": KissIcpOdometry,
    "kiss_icp_static": lambda: KissIcpOdometry(remove_dynamic=True),
}


def get_method(spec: str) -> Method:
    """A built-in baseline by name, or an external method from a YAML file path."""
    if spec in BUILTIN:
        return BUILTIN[spec]()
    if spec.endswith((".yaml", ".yml")):
        return load_external(spec)
    raise MethodError(
        f"unknown method {spec!r}; built-in: {', '.join(BUILTIN)}, or a path to a method YAML"
    )


__all__ = [
    "BUILTIN",
    "ESTIMATE_FILE",
    "ExternalMethod",
    "FeatureVO",
    "KissIcpOdometry",
    "Method",
    "MethodError",
    "RgbdOdometry",
    "get_method",
]
