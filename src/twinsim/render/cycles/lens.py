"""What a camera's lens and auto-exposure do to the path-traced light before it is encoded:
applied to Cycles' linear colour, in this order (GRADE lists them as realism options).

- auto-exposure: the gain that brings the frame's log-average luminance to middle grey
  (0.18, Reinhard's key), limited to ±4 stops and followed over frames as a camera's
  controller does, converging with time constant `AE_TAU_S`;
- vignetting: natural fall-off, the irradiance at field angle θ scaled by cos⁴θ, blended
  with 1 by its strength;
- lateral chromatic aberration: the red channel magnified by 1 + k about the principal
  point and the blue by 1 − k (green stays), bilinear.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

MIDDLE_GREY = 0.18
AE_STOPS = 4.0  # the gain stays within 2^±4
AE_TAU_S = 0.3  # time constant of the exposure controller
_LUMA = np.array([0.2126, 0.7152, 0.0722])  # Rec. 709 / sRGB primaries, linear light


class AutoExposure:
    """One camera's auto-exposure controller: a gain per frame, smoothed over time."""

    def __init__(self) -> None:
        self._log_gain: float | None = None
        self._t_s: float | None = None

    def gain(self, linear: np.ndarray, t_s: float) -> float:
        """The gain for the frame at `t_s` whose linear colour is `linear` (H, W, 3)."""
        luminance = np.asarray(linear, float) @ _LUMA
        key = math.exp(float(np.mean(np.log(luminance + 1e-4))))
        target = float(np.clip(math.log2(MIDDLE_GREY / key), -AE_STOPS, AE_STOPS))
        if self._log_gain is None or self._t_s is None:
            self._log_gain = target
        else:
            alpha = 1.0 - math.exp(-max(t_s - self._t_s, 0.0) / AE_TAU_S)
            self._log_gain += alpha * (target - self._log_gain)
        self._t_s = t_s
        return 2.0**self._log_gain


def vignette(linear: np.ndarray, K: np.ndarray, strength: float) -> np.ndarray:
    """`linear` with cos⁴θ fall-off (θ each pixel's angle off the optical axis) at `strength`."""
    if strength <= 0.0:
        return linear
    h, w = linear.shape[:2]
    u, v = np.meshgrid(np.arange(w, dtype=float), np.arange(h, dtype=float))
    x, y = (u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1]
    cos4 = 1.0 / (1.0 + x * x + y * y) ** 2
    return linear * (1.0 - strength + strength * cos4)[..., None]


def chromatic_aberration(linear: np.ndarray, K: np.ndarray, k: float) -> np.ndarray:
    """`linear` with its red channel magnified by 1 + k and blue by 1 − k about (cx, cy)."""
    if k <= 0.0:
        return linear
    h, w = linear.shape[:2]
    u, v = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    cx, cy = np.float32(K[0, 2]), np.float32(K[1, 2])
    out = np.array(linear, np.float32)
    for channel, scale in ((0, 1.0 + k), (2, 1.0 - k)):
        # output pixel p shows the input at c + (p − c) / scale: the channel is magnified
        map_u = cx + (u - cx) / np.float32(scale)
        map_v = cy + (v - cy) / np.float32(scale)
        out[..., channel] = cv2.remap(
            np.ascontiguousarray(out[..., channel]),
            map_u,
            map_v,
            cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REPLICATE,
        )
    return out
