"""Rain, snow and drifting smoke: an image-space model driven by particles and volumes in the world
(a run's `weather:` section and a twin's weather variations composite the same way).

MuJoCo has no particle systems or participating media, so weather is composited onto each
rendered colour image (a camera's frame, an event camera's render) from its own depth,
intrinsics and pose:

- rain / snow: particles live in the world box of the scene (drawn once from the seed,
  falling with time, so every camera of a stereo pair and every frame sees the same drops);
  in a world larger than a `TILE_M` cube (a town) they fill one such cube instead, repeated
  across the world (a periodic field, the same density; only the copies within `MAX_RANGE_M`
  of a camera are drawn), so memory and time stay those of a room.
  Each particle in front of the surface the pixel sees is drawn: rain as a streak along its
  fall during a 1/60 s exposure, snow as a flake whose size shrinks with distance.
- smoke: Gaussian density blobs that drift across the world; the optical depth along each
  pixel's ray up to the surface is integrated in closed form (erf), and the colour is blended
  with the smoke colour by the transmittance exp(−τ). Blobs are truncated at 4 σ, so those
  whose truncated sphere misses the camera's view cost nothing.

Only RGB changes: depth, masks and boxes remain the ground truth of the (unchanged) geometry.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinsim.model.scene import SceneSpec

RAIN_PER_M3 = 60.0  # at rain = 1
SNOW_PER_M3 = 30.0  # at snow = 1
RAIN_SPEED_MPS = 6.0
SNOW_SPEED_MPS = 0.8
EXPOSURE_S = 1.0 / 60.0
MAX_RANGE_M = 8.0  # particles farther than this are sub-pixel and not drawn
SMOKE_BLOBS_PER_100M3 = 4.0
SMOKE_SIGMA_M = (0.6, 1.2)
SMOKE_SPEED_MPS = 0.15
SMOKE_DENSITY_PER_M = 1.2  # peak extinction at smoke = 1
SMOKE_RGB = np.array([150.0, 150.0, 155.0])
_SAMPLES = 8  # points drawn along a rain streak
TILE_M = 2.0 * MAX_RANGE_M  # the side of the repeated particle cube in a large world
SMOKE_CUTOFF_SIGMAS = 4.0  # a blob is truncated here (its density is below 3.4e-4 of the peak)


def _in_view(pts: np.ndarray, K: np.ndarray, size: tuple[int, int], margin_m: float):
    """Mask of camera-frame points that may project into the image within `margin_m` (a streak
    length) and lie in the drawn depth range; a cheap cut before streaks are expanded."""
    w, h = size
    z = pts[:, 2]
    ok = (z > 0.1 - margin_m) & (z < MAX_RANGE_M + margin_m)
    zc = np.maximum(z, 0.1)
    slack_u = K[0, 0] * margin_m / zc + 1.0
    slack_v = K[1, 1] * margin_m / zc + 1.0
    u = K[0, 0] * pts[:, 0] / zc + K[0, 2]
    v = K[1, 1] * pts[:, 1] / zc + K[1, 2]
    return ok & (u > -slack_u) & (u < w + slack_u) & (v > -slack_v) & (v < h + slack_v)


def _blob_in_view(
    center: np.ndarray, radius: float, K: np.ndarray, shape: tuple[int, int], reach_max: float
) -> bool:
    """Whether a sphere (camera frame) meets the part of the view pyramid the rays cover."""
    h, w = shape
    x, y, z = center
    if z < -radius or np.linalg.norm(center) > reach_max + radius:
        return False
    for extent, coord, f, c in ((w, x, K[0, 0], K[0, 2]), (h, y, K[1, 1], K[1, 2])):
        for edge in (-0.5 - c, extent - 0.5 - c):  # the image's borders, in pixels from c
            normal = np.array([f, -edge]) if edge > 0 else np.array([-f, edge])
            if (normal @ (coord, z)) / np.linalg.norm(normal) > radius:
                return False
    return True


def _erf(x: np.ndarray) -> np.ndarray:
    """erf by Winitzki's closed form (error < 1.3e-4, invisible in 8-bit colour), ~10× faster
    than scipy.special.erf on float32 images."""
    x2 = x * x
    a = np.float32(0.147)
    return np.sign(x) * np.sqrt(-np.expm1(-x2 * (np.float32(4 / np.pi) + a * x2) / (1 + a * x2)))


@dataclass(frozen=True)
class _Particles:
    xyz0: np.ndarray  # (N, 3) positions at t = 0
    fall_mps: float
    sway: np.ndarray  # (N,) phase of sideways drift (snow)
    rgb: np.ndarray
    alpha: float
    streak: bool


@dataclass(frozen=True)
class _Smoke:
    center0: np.ndarray  # (M, 3)
    velocity: np.ndarray  # (M, 3)
    sigma: np.ndarray  # (M,)
    density: float


class Weather:
    """Composites rain, snow and smoke onto frames of a scene (densities in [0, 1]).

    `apply` only reads the draws (and caches rays), so one instance serves a recording's colour
    frames on the writer's thread and its event-camera renders on the recorder's at once.
    """

    def __init__(self, scene: SceneSpec, rain: float, snow: float, smoke: float, seed: int) -> None:
        rng = np.random.default_rng(np.random.SeedSequence([seed, 0x77EA7]))
        self.lo = np.asarray(scene.bounds_min, float)
        self.hi = np.asarray(scene.bounds_max, float)
        self.size = self.hi - self.lo
        self.tiled = bool(np.prod(self.size) > TILE_M**3)
        if self.tiled:
            self.size = np.full(3, TILE_M)
        volume = float(np.prod(self.size))
        self.particles: list[_Particles] = []
        for amount, per_m3, speed, rgb, alpha, streak in (
            (rain, RAIN_PER_M3, RAIN_SPEED_MPS, (205.0, 210.0, 220.0), 0.45, True),
            (snow, SNOW_PER_M3, SNOW_SPEED_MPS, (245.0, 245.0, 250.0), 0.85, False),
        ):
            n = round(amount * per_m3 * volume)
            if n:
                xyz0 = self.lo + rng.uniform(0.0, 1.0, (n, 3)) * self.size
                sway = rng.uniform(0.0, 2 * np.pi, n)
                self.particles.append(_Particles(xyz0, speed, sway, np.array(rgb), alpha, streak))
        m = int(np.ceil(smoke * SMOKE_BLOBS_PER_100M3 * volume / 100.0)) if smoke > 0 else 0
        heading = rng.uniform(0.0, 2 * np.pi, m)
        self.smoke = _Smoke(
            self.lo + rng.uniform(0.0, 1.0, (m, 3)) * self.size,
            SMOKE_SPEED_MPS * np.stack([np.cos(heading), np.sin(heading), np.zeros(m)], axis=1),
            rng.uniform(*SMOKE_SIGMA_M, m),
            smoke * SMOKE_DENSITY_PER_M,
        )
        self._ray_cache: dict = {}

    @property
    def active(self) -> bool:
        return bool(self.particles) or len(self.smoke.sigma) > 0

    def apply(
        self, rgb: np.ndarray, depth: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray, t_s: float
    ) -> np.ndarray:
        """The frame's colour image with the weather at time t (a new uint8 array)."""
        out = rgb.astype(np.float32)
        if len(self.smoke.sigma):
            out = self._smoke(out, depth, K, T_world_cam, t_s)
        for p in self.particles:
            out = self._particles(out, depth, K, T_world_cam, t_s, p)
        return np.clip(np.rint(out), 0, 255).astype(np.uint8)

    def _positions(self, p: _Particles, t_s: float, eye: np.ndarray) -> np.ndarray:
        """The particles at time t; in a tiled world the copies of the cube that reach within
        `MAX_RANGE_M` of the camera at `eye`."""
        xyz = p.xyz0.copy()
        if not p.streak:  # snow sways sideways as it falls
            xyz[:, 0] += 0.15 * np.sin(0.9 * t_s + p.sway)
            xyz[:, 1] += 0.15 * np.cos(0.7 * t_s + p.sway)
        xyz[:, 2] = self.lo[2] + np.mod(xyz[:, 2] - self.lo[2] - p.fall_mps * t_s, self.size[2])
        if not self.tiled:
            return xyz
        first = np.floor((eye - MAX_RANGE_M - self.lo) / TILE_M).astype(int)
        last = np.floor((eye + MAX_RANGE_M - self.lo) / TILE_M).astype(int)
        cells = np.stack(
            np.meshgrid(*(np.arange(a, b + 1) for a, b in zip(first, last, strict=True))), -1
        ).reshape(-1, 3)
        return (xyz[None, :, :] + TILE_M * cells[:, None, :]).reshape(-1, 3)

    def _particles(self, out, depth, K, T_world_cam, t_s, p: _Particles) -> np.ndarray:
        h, w = depth.shape
        R, t = T_world_cam[:3, :3], T_world_cam[:3, 3]
        head = (self._positions(p, t_s, t) - t) @ R
        head = head[_in_view(head, K, (w, h), p.fall_mps * EXPOSURE_S)]
        if p.streak:  # the streak: where the drop was during the exposure (above it)
            tail = head + (np.array([0.0, 0.0, p.fall_mps * EXPOSURE_S]) @ R)
            s = np.linspace(0.0, 1.0, _SAMPLES)
            pts = head[:, None, :] * (1 - s)[None, :, None] + tail[:, None, :] * s[None, :, None]
            pts = pts.reshape(-1, 3)
            weight = np.full(len(pts), p.alpha * 2.0 / _SAMPLES)
        else:
            pts = head
            weight = np.full(len(pts), p.alpha)
        z = pts[:, 2]
        keep = (z > 0.1) & (z < MAX_RANGE_M)
        pts, z, weight = pts[keep], z[keep], weight[keep]
        u = np.rint(K[0, 0] * pts[:, 0] / z + K[0, 2]).astype(np.int64)
        v = np.rint(K[1, 1] * pts[:, 1] / z + K[1, 2]).astype(np.int64)
        inside = (u >= 0) & (u < w) & (v >= 0) & (v < h)
        u, v, z, weight = u[inside], v[inside], z[inside], weight[inside]
        surface = depth[v, u]
        seen = (surface == 0) | (z < surface)
        u, v, z, weight = u[seen], v[seen], z[seen], weight[seen]
        if not p.streak:  # nearer flakes are bigger: grow them by a pixel ring when close
            big = K[0, 0] * 0.008 / z > 1.0
            offsets = ((0, 1), (1, 0), (0, -1), (-1, 0))
            ring_u = np.concatenate([np.clip(u[big] + du, 0, w - 1) for du, _ in offsets])
            ring_v = np.concatenate([np.clip(v[big] + dv, 0, h - 1) for _, dv in offsets])
            ring_w = np.tile(weight[big] * 0.6, 4)
            u, v, weight = (np.concatenate(a) for a in ((u, ring_u), (v, ring_v), (weight, ring_w)))
        alpha = np.bincount(v * w + u, weights=weight, minlength=h * w)
        hit = np.flatnonzero(alpha)  # blend only the pixels a particle covers
        a = np.minimum(alpha[hit], 0.9).astype(np.float32)[:, None]
        flat = out.reshape(-1, 3)
        flat[hit] = flat[hit] * (1 - a) + p.rgb.astype(np.float32) * a
        return out

    def _rays(self, shape: tuple[int, int], K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Unit ray directions (H·W, 3) in the camera frame and each ray's length per metre of
        z-depth, cached per image size and intrinsics."""
        key = (shape, K.tobytes())
        if key not in self._ray_cache:
            h, w = shape
            u, v = np.meshgrid(np.arange(w), np.arange(h))
            ray = np.stack(
                [(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], np.ones((h, w))], axis=-1
            ).reshape(-1, 3)
            norm = np.linalg.norm(ray, axis=1)
            unit = (ray / norm[:, None]).astype(np.float32)
            self._ray_cache[key] = (unit, norm.astype(np.float32))
        return self._ray_cache[key]

    def _smoke(self, out, depth, K, T_world_cam, t_s) -> np.ndarray:
        """Blend by the transmittance along each ray (float32: this is image blending)."""
        unit, norm = self._rays(depth.shape, K)
        z = depth.ravel()
        reach = np.where(z > 0, z * norm, np.float32(2 * MAX_RANGE_M))  # ray length to surface
        d = unit @ T_world_cam[:3, :3].T.astype(np.float32)  # unit directions, world
        o = T_world_cam[:3, 3]
        sm = self.smoke
        centers = self.lo + np.mod(sm.center0 + sm.velocity * t_s - self.lo, self.size)
        tau = np.zeros(len(z), np.float32)
        local = (centers - o) @ T_world_cam[:3, :3]  # blob centres in the camera frame
        reach_max = float(reach.max())
        for c, sigma, cam_c in zip(centers, sm.sigma, local, strict=True):
            if not _blob_in_view(cam_c, SMOKE_CUTOFF_SIGMAS * sigma, K, depth.shape, reach_max):
                continue
            oc = (c - o).astype(np.float32)
            s0 = d @ oc  # distance along each ray of its closest approach to the centre
            b2 = oc @ oc - s0 * s0
            near = np.flatnonzero(b2 < np.float32((SMOKE_CUTOFF_SIGMAS * sigma) ** 2))
            s0, b2 = s0[near], np.maximum(b2[near], np.float32(0.0))  # rays within the cut-off
            k = np.float32(sigma * np.sqrt(2.0))
            line = _erf((reach[near] - s0) / k) - _erf(-s0 / k)
            weight = np.float32(sm.density * sigma * np.sqrt(np.pi / 2))
            tau[near] += weight * np.exp(b2 * np.float32(-0.5 / sigma**2)) * line
        transmit = np.exp(-tau).reshape(depth.shape)[..., None]
        out *= transmit
        out += SMOKE_RGB.astype(np.float32) * (1 - transmit)
        return out
