"""Errors of the scene-graph stage: sequences with no graph, and queries it cannot answer."""

from twinsim.errors import TwinsimError


class DsgError(TwinsimError):
    """A scene graph cannot be built or read (no floor plan, unreadable graph file, ...)."""


class QueryError(DsgError):
    """A query names an unknown agent, room or class, or a time outside the recorded run."""
