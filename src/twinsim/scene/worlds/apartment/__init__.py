"""The `apartment` generator: GRADE-style furnished rooms joined by doors."""
