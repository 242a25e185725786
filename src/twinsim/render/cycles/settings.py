"""What a Cycles render is asked for (plain data; importing it loads no Blender)."""

from __future__ import annotations

from dataclasses import dataclass

from twinsim.errors import ConfigError


@dataclass(frozen=True)
class CyclesSettings:
    """Samples per pixel, OpenImageDenoise on or off, the sampling seed, and which frames
    (every `every`-th of each camera; the others keep the source's colour) are rendered."""

    samples: int = 16
    denoise: bool = True
    seed: int = 0
    every: int = 1

    def __post_init__(self) -> None:
        if self.samples <= 0:
            raise ConfigError(f"--samples must be > 0, got {self.samples}")
        if self.every <= 0:
            raise ConfigError(f"--every must be > 0, got {self.every}")
