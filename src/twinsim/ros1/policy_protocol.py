"""Registers the `ros1` protocol of navbench's external policies: its command may use
`{ros_master_uri}`, and a trial runs through `Ros1PolicyNavigator` (a roscore and the bridge),
whose module is imported only when a `ros1` policy runs."""

from __future__ import annotations

from pathlib import Path

from twinsim.navigation.external import ExternalPolicy, PolicyError, PolicyProtocol
from twinsim.registries import POLICY_PROTOCOLS


def _ros1_navigator(policy: ExternalPolicy, folder: Path, seed: int):
    try:
        from twinsim.ros1.navigation import Ros1PolicyNavigator
    except ImportError as exc:
        raise PolicyError(f"{policy.name}: ROS 1 is not installed ({exc})") from None
    return Ros1PolicyNavigator(policy, folder, seed)


POLICY_PROTOCOLS.register("ros1", PolicyProtocol(("ros_master_uri",), _ros1_navigator))
