"""Closed loop: drive any robot live from Python (`Session`), and the tasks, metrics and
front ends (gymnasium, ZeroMQ, ROS 1) built on it."""

from twinsim._lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Observations": "twinsim.closedloop.observations",
        "RobotObservations": "twinsim.closedloop.observations",
        "EpisodeEndedError": "twinsim.closedloop.session",
        "Session": "twinsim.closedloop.session",
    },
)

__all__ = ["EpisodeEndedError", "Observations", "RobotObservations", "Session"]
