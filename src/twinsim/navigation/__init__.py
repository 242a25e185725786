"""Navigation and exploration methods that drive a closed-loop `Session`, the episode loop that
scores them, and `twinsim navbench` (methods × worlds × adversity × trials)."""
