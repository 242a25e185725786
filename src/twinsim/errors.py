"""One exception root for everything a user can get wrong; the CLI maps these to exit code 2."""


class TwinsimError(Exception):
    """Base of twinsim's user-facing errors (bad config, bad input folder, missing library)."""


class ConfigError(TwinsimError):
    """A configuration value is missing, misspelt or out of range."""


class RenderBackendError(TwinsimError):
    """No headless OpenGL backend could be started."""


class SequenceError(TwinsimError):
    """A sequence folder is missing, incomplete or corrupt."""


class OutputFolderError(TwinsimError):
    """The output folder cannot be used (exists and is not empty, or is not writable)."""


class PhysicsError(TwinsimError):
    """The simulation cannot go on faithfully (MuJoCo reported a diverged state)."""


class PlanningError(TwinsimError):
    """No tour or route satisfies the request in this scene (unreachable rooms, no free space,
    ...)."""
