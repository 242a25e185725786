"""A barometer for twinsim: static pressure of the standard atmosphere at the sensor's height."""
