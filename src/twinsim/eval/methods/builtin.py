"""Registers the built-in baselines (one line per method)."""

from __future__ import annotations

from twinsim.eval.methods.feature_vo import FeatureVO
from twinsim.eval.methods.kiss_icp import KissIcpOdometry
from twinsim.eval.methods.rgbd_odometry import RgbdOdometry
from twinsim.registries import METHODS

METHODS.register("rgbd_odometry", RgbdOdometry)
METHODS.register("feature_vo", FeatureVO)
METHODS.register("feature_vo_masked", lambda: FeatureVO(mask_dynamic=True))
METHODS.register("kiss_icp", KissIcpOdometry)
METHODS.register("kiss_icp_static", lambda: KissIcpOdometry(remove_dynamic=True))
