"""How dynamic things move (people, flying objects); every motion is a pure function of time."""
