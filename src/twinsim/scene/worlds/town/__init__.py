"""The `town` generator: a road grid with lanes, junctions, buildings, props and hills."""
