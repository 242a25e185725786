"""The twinsim version, recorded in every sequence."""

__version__ = "0.1.0"
