"""What a Cycles render is asked for (plain data; importing it loads no Blender)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from twinsim.errors import ConfigError

GROUND_TRUTHS = ("mujoco", "cycles")
EXPOSURES = ("fixed", "auto")


def _about(description: str) -> dict[str, str]:
    """A field's metadata: its description (the help of its `twinsim replay` option)."""
    return {"description": description}


@dataclass(frozen=True)
class CyclesSettings:
    """How a twin's frames are path-traced and what it stores.

    `samples` per pixel, OpenImageDenoise on or off, the sampling `seed`, every `every`-th
    frame of each camera rendered (the others keep the source's colour); `ground_truth`:
    which renderer's depth, masks and boxes the twin stores (MuJoCo's, copied, by default);
    `exposure`: the camera's fixed exposure or auto-exposure; `vignetting` (0–1, the share of
    cos⁴ fall-off) and `chromatic_aberration` (lateral, the red and blue channels scaled by
    1 ± this about the principal point) are lens effects, off by default; `motion_blur`: a
    camera with an exposure time is blurred by Cycles' own shutter over the recorded motion;
    `bump`: the strength of the bump maps made from each material's texture (0: flat);
    `workers`: processes rendering frames side by side (the same bytes as one);
    `adaptive_threshold`: Cycles' adaptive sampling noise threshold (0: off, every pixel takes
    all `samples`; 0.01 is Blender's default)."""

    samples: int = field(default=16, metadata=_about("Samples per pixel."))
    denoise: bool = field(default=True, metadata=_about("OpenImageDenoise the images."))
    seed: int = field(default=0, metadata=_about("Seed of the path tracer's sampling."))
    every: int = field(
        default=1, metadata=_about("Render every K-th frame, copy the others' colour.")
    )
    ground_truth: Literal["mujoco", "cycles"] = field(
        default="mujoco",
        metadata=_about("Whose depth, masks and boxes the twin stores: mujoco or cycles."),
    )
    exposure: Literal["fixed", "auto"] = field(
        default="fixed", metadata=_about("The camera's exposure, fixed or auto.")
    )
    vignetting: float = field(
        default=0.0, metadata=_about("Vignetting strength in [0, 1] (cos⁴ fall-off).")
    )
    chromatic_aberration: float = field(
        default=0.0, metadata=_about("Lateral chromatic aberration in [0, 0.05].")
    )
    motion_blur: bool = field(
        default=True, metadata=_about("Blur shuttered cameras with Cycles' own shutter.")
    )
    bump: float = field(
        default=0.3, metadata=_about("Strength of the textures' bump maps in [0, 1].")
    )
    workers: int = field(
        default=1, metadata=_about("Processes rendering frames side by side (same bytes).")
    )
    adaptive_threshold: float = field(
        default=0.0, metadata=_about("Adaptive sampling noise threshold (0: off).")
    )

    def __post_init__(self) -> None:
        if self.samples <= 0:
            raise ConfigError(f"--samples must be > 0, got {self.samples}")
        if self.every <= 0:
            raise ConfigError(f"--every must be > 0, got {self.every}")
        if self.ground_truth == "cycles" and self.every != 1:
            raise ConfigError(
                "--ground-truth cycles renders every frame (a twin never mixes MuJoCo's and "
                f"Cycles' ground truth); drop --every {self.every}"
            )
        if self.workers < 1:
            raise ConfigError(f"--workers must be >= 1, got {self.workers}")
        if self.ground_truth == "cycles" and self.workers != 1:
            raise ConfigError(
                "--ground-truth cycles annotates each frame from the world at its instant, in "
                f"this process; drop --workers {self.workers}"
            )
        if self.ground_truth not in GROUND_TRUTHS:
            raise ConfigError(
                f"--ground-truth: unknown {self.ground_truth!r}; valid: {', '.join(GROUND_TRUTHS)}"
            )
        if self.exposure not in EXPOSURES:
            raise ConfigError(
                f"--exposure: unknown {self.exposure!r}; valid: {', '.join(EXPOSURES)}"
            )
        if not 0.0 <= self.vignetting <= 1.0:
            raise ConfigError(f"--vignetting must be in [0, 1], got {self.vignetting}")
        if not 0.0 <= self.chromatic_aberration <= 0.05:
            raise ConfigError(
                f"--chromatic-aberration must be in [0, 0.05], got {self.chromatic_aberration}"
            )
        if not 0.0 <= self.adaptive_threshold <= 1.0:
            raise ConfigError(
                f"--adaptive-threshold must be in [0, 1] (0: off), got {self.adaptive_threshold}"
            )
        if not 0.0 <= self.bump <= 1.0:
            raise ConfigError(f"--bump must be in [0, 1], got {self.bump}")
