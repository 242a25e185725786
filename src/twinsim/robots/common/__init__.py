"""What several robot kinds share: tours and their planner, ground-robot settings, PID,
pose joints, velocity commands, live references and clamped-command counts."""
