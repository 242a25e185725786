"""Closed loop: drive any robot live from Python (`Session`), and the tasks, metrics and
front ends (gymnasium, ZeroMQ, ROS 1) built on it."""

from twinsim.closedloop.observations import Observations, RobotObservations
from twinsim.closedloop.session import EpisodeEndedError, Session

__all__ = ["EpisodeEndedError", "Observations", "RobotObservations", "Session"]
