"""The appearance baseline: colour only, no depth, no map, after Ulrich & Nourbakhsh (2000,
"Appearance-based obstacle detection with monocular color vision"). Each camera frame it learns
the floor's look from a reference trapezoid at the bottom of the image (the floor just ahead,
assumed free), calls every pixel whose colour that floor rarely shows an obstacle, and reads
the lowest obstacle pixel of each column as where an obstacle meets the floor (z = 0): a ray
from the camera through it, cut with the floor plane, is an obstacle point. The free distance
per bearing and the steering are reactive_depth's (`BearingSteering`). Whatever the light or
the weather does to the colours, it does to the free space this method sees; and it breaks
where its assumptions do: walls that look like the floor, a floor that changes at a doorway,
furniture overhanging its foot, an obstacle already inside the reference area.
"""

from __future__ import annotations

import cv2
import numpy as np

from twinsim.navigation.api import NavContext
from twinsim.navigation.steering import BearingNavigator

#: OpenCV's 8-bit HSV ranges: hue 0..179, saturation and value 0..255
_HS_RANGES = [0, 180, 0, 256]
_V_RANGES = [0, 256]


class FloorColourDetector:
    """Floor / not-floor per pixel from one RGB image, and where obstacles meet the floor.

    The reference area is a trapezoid on the bottom `ref_height` of the image, `ref_width`
    (bottom, top) of its width, centred. A pixel is floor when both its hue-saturation bin
    (`hs_bins`) and its value (brightness) bin (`v_bins`) hold at least `min_share` of the
    reference's fullest bin of that histogram; the image is smoothed first (`blur`, Gaussian)
    and an opening then a closing with a `kernel`-pixel square drop specks of either class.
    """

    def __init__(
        self,
        K: np.ndarray,
        width: int,
        height: int,
        *,
        ref_height: float = 0.15,
        ref_width: tuple[float, float] = (0.8, 0.5),
        hs_bins: tuple[int, int] = (30, 32),
        v_bins: int = 16,
        min_share: float = 0.05,
        blur: int = 5,
        kernel: int = 5,
    ) -> None:
        self.K, self.width, self.height = K, width, height
        self.hs_bins, self.v_bins, self.min_share = list(hs_bins), [v_bins], min_share
        self.blur = blur
        self.kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (kernel, kernel))
        self.reference = np.zeros((height, width), np.uint8)
        top = height - 1 - round(ref_height * (height - 1))
        half_bottom, half_top = ref_width[0] * width / 2, ref_width[1] * width / 2
        centre = (width - 1) / 2
        corners = [
            (centre - half_bottom, height - 1),
            (centre + half_bottom, height - 1),
            (centre + half_top, top),
            (centre - half_top, top),
        ]
        cv2.fillConvexPoly(self.reference, np.round(corners).astype(np.int32), 1)

    def floor_mask(self, rgb: np.ndarray) -> np.ndarray:
        """(H, W) bool: the pixels that look like the reference trapezoid's floor."""
        image = cv2.GaussianBlur(rgb, (self.blur, self.blur), 0) if self.blur > 1 else rgb
        hsv = cv2.cvtColor(image, cv2.COLOR_RGB2HSV)
        floor = np.ones((self.height, self.width), bool)
        for channels, bins, ranges in (
            ([0, 1], self.hs_bins, _HS_RANGES),
            ([2], self.v_bins, _V_RANGES),
        ):
            hist = cv2.calcHist([hsv], channels, self.reference, bins, ranges)
            share = hist / max(float(hist.max()), 1.0)
            back = cv2.calcBackProject([hsv], channels, share, ranges, 255.0)
            floor &= back >= self.min_share * 255
        obstacle = (~floor).astype(np.uint8)
        obstacle = cv2.morphologyEx(obstacle, cv2.MORPH_OPEN, self.kernel)
        obstacle = cv2.morphologyEx(obstacle, cv2.MORPH_CLOSE, self.kernel)
        return obstacle == 0

    def obstacle_points(self, rgb: np.ndarray, T_world_cam: np.ndarray) -> np.ndarray:
        """World points (N, 3) on the floor where each column's lowest obstacle pixel meets
        it (the ray through that pixel's lower edge cut with z = 0); columns that are floor
        up to the horizon add none."""
        obstacle = ~self.floor_mask(rgb)
        seen = obstacle.any(axis=0)
        lowest = self.height - 1 - np.argmax(obstacle[::-1], axis=0)
        u = np.arange(self.width)[seen]
        v = lowest[seen] + 0.5
        rays_cam = np.stack(
            [(u - self.K[0, 2]) / self.K[0, 0], (v - self.K[1, 2]) / self.K[1, 1], np.ones(len(u))],
            axis=1,
        )
        rays = rays_cam @ T_world_cam[:3, :3].T
        origin = T_world_cam[:3, 3]
        down = rays[:, 2] < -1e-9
        t = -origin[2] / rays[down, 2]
        return origin + t[:, None] * rays[down]


class FloorColourNavigator(BearingNavigator):
    """Steers by the floor's colour in the latest RGB frame towards the goal, keeping `clear_m`
    free ahead: farther than reactive_depth's, as the floor nearer than the image's lowest row
    is out of its sight (1.5 m reached 7 of 10 tiny-world goals, 1.0 m 6 and 2.0 m 5). The other
    keywords are `FloorColourDetector`'s."""

    name = "floor_colour"

    def __init__(
        self,
        clear_m: float = 1.5,
        slow_m: float = 1.5,
        ref_height: float = 0.15,
        ref_width: tuple[float, float] = (0.8, 0.5),
        min_share: float = 0.05,
    ) -> None:
        super().__init__(clear_m, slow_m)
        self.detector_args = {
            "ref_height": ref_height,
            "ref_width": tuple(ref_width),
            "min_share": min_share,
        }

    def reset(self, context: NavContext) -> None:
        """Take the first camera's intrinsics and the base's limits; a detector for its size."""
        super().reset(context)
        cam = context.camera_config
        self.detector = FloorColourDetector(self.K, cam.width, cam.height, **self.detector_args)

    def obstacle_points(self, frame) -> np.ndarray:
        """Where the colour image's obstacles meet the floor."""
        return self.detector.obstacle_points(frame.rgb, frame.T_world_cam)
