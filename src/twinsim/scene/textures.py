"""Procedural, seamlessly tiling RGB textures for floors, walls and furniture, in pure numpy.

`make_texture` is a pure function of its `TextureSpec`: the same spec always gives the same
bytes, so a `scene.json` only stores the spec, never the image. Every generator works in
texture coordinates u, v ∈ [0, 1) with an integer number of periods per side, so the image
tiles without seams, and its noise is band-limited periodic noise made with an FFT.

Each kind adds fine, irregular detail on top of its pattern so that feature detectors (ORB,
FAST) find plenty of corners, as on real surfaces. That detail is luminance shading applied
on top of the color_a → color_b blend, so even a palette of two near-equal colours (a pale
wall) is not featureless. Kind-specific `params` (all optional floats):

- wood: `planks` (boards across the texture, 4), `rings` (growth rings per board, 7),
  `warp` (ring distortion, 0.8)
- tiles: `tiles` (tiles per side, 4), `grout` (grout width as a fraction of a tile, 0.06),
  `variation` (per-tile colour spread, 0.35), `marble` (vein strength, 0.5)
- carpet: `loops` (fibre tufts per side, 96), `mottle` (low-frequency blotches, 0.35)
- plaster: `roughness` (stucco relief strength, 1.0)
- wallpaper: `motifs` (motifs per side, even, 4), `stripes` (stripes per side, 0 = none),
  `petals` (petals per rosette, 6)
- fabric: `threads` (threads per side, 40), `twill` (1 = twill weave, 0 = plain),
  `plaid` (plaid bands per side, 0 = plain colour)
- asphalt: `aggregate` (share of light stone chips, 0.08), `patches` (repair patch strength,
  0.3)
- grass: `blades` (blade streaks per side, 48), `clover` (share of light clumps, 0.15)
- facade: `columns`, `rows` (windows per side, 2 each), `window_w`, `window_h` (window size as
  a fraction of its cell, 0.5 and 0.55), `lit` (share of bright windows, 0.15); color_a is the
  wall, color_b the glass
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from twinsim.model.scene import TextureSpec


@functools.lru_cache(maxsize=64)
def _amplitude(
    n: int, beta: float, low: float, high: float | None, stretch: tuple[float, float]
) -> np.ndarray:
    """Amplitude spectrum (rfft layout) of band-limited 1/f^beta noise; cached, read-only."""
    fr = np.fft.fftfreq(n, 1.0 / n)[:, None] * stretch[0]
    fc = np.fft.rfftfreq(n, 1.0 / n)[None, :] * stretch[1]
    f = np.hypot(fr, fc)
    amp = np.where(f >= low, np.maximum(f, 1e-9) ** (-beta / 2.0), 0.0)
    if high is not None:
        amp = amp * np.exp(-((f / high) ** 2))
    amp = amp.astype(np.float32)
    amp.flags.writeable = False
    return amp


def _periodic_noise(
    rng: np.random.Generator,
    n: int,
    beta: float,
    low: float = 1.0,
    high: float | None = None,
    stretch: tuple[float, float] = (1.0, 1.0),
) -> np.ndarray:
    """Zero-mean, unit-std noise with power ∝ 1/f^beta that wraps around both image edges.

    `low`/`high` bound the spatial frequency in cycles per texture; `stretch` scales the
    (row, column) frequencies, so (1, 6) gives streaks along the columns (like wood grain).
    """
    amp = _amplitude(n, beta, low, high, stretch)
    white = rng.standard_normal((*amp.shape, 2), dtype=np.float32).view(np.complex64)[..., 0]
    img = np.fft.irfft2(white * amp, s=(n, n))
    std = img.std()
    return (img - img.mean()) / (std if std > 0 else 1.0)


def _grid(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Texture coordinates (u along rows, v along columns) of pixel centres, in [0, 1)."""
    c = (np.arange(n) + 0.5) / n
    return c[:, None] * np.ones((1, n)), np.ones((n, 1)) * c[None, :]


def _emboss(height: np.ndarray, strength: float) -> np.ndarray:
    """Lambert-like shading of a periodic height field lit from the upper left (wraps at edges)."""
    dx = np.roll(height, -1, axis=1) - np.roll(height, 1, axis=1)
    dy = np.roll(height, -1, axis=0) - np.roll(height, 1, axis=0)
    return 1.0 + strength * (dx + dy)


def _colorize(t: np.ndarray, spec: TextureSpec, shade: np.ndarray | float = 1.0) -> np.ndarray:
    """Blend color_a → color_b by t ∈ [0, 1], multiply by a luminance shade, quantise to uint8."""
    a = np.asarray(spec.color_a, dtype=float)
    b = np.asarray(spec.color_b, dtype=float)
    t = np.clip(t, 0.0, 1.0)[..., None]
    rgb = (a + (b - a) * t) * np.asarray(shade, dtype=float)[..., None]
    return np.clip(rgb * 255.0 + 0.5, 0, 255).astype(np.uint8)


def _wood(spec: TextureSpec, rng: np.random.Generator) -> np.ndarray:
    """Floor boards: growth rings bent by noise, fibre streaks, per-board tint, dark seams."""
    n = spec.size
    p = spec.params
    planks = max(1, round(p.get("planks", 4)))
    rings = p.get("rings", 7.0)
    u, v = _grid(n)
    row = np.minimum((u * planks).astype(int), planks - 1)
    local = u * planks - row
    # two boards per plank row, with staggered end joints at a random offset per row
    joint = rng.uniform(0.0, 0.5, planks)
    pos = (v - joint[row]) % 1.0
    board = row * 2 + (pos >= 0.5)
    board_phase = rng.uniform(0.0, 10.0, planks * 2)
    board_tint = rng.uniform(-0.18, 0.18, planks * 2)
    board_curve = rng.uniform(-1.5, 1.5, planks * 2)
    warp = p.get("warp", 0.8) * _periodic_noise(rng, n, 3.0, low=1.0, high=6.0)
    d = rings * (local + board_curve[board] * (pos % 0.5 - 0.25) ** 2) + warp + board_phase[board]
    ring = np.abs(np.sin(np.pi * d)) ** 0.35
    streak = _periodic_noise(rng, n, 1.0, low=2.0, high=n / 3.0, stretch=(1.0, 6.0))
    fine = _periodic_noise(rng, n, 0.0, low=1.0, high=n / 2.5)
    pores = _periodic_noise(rng, n, 0.0, low=1.0, high=n / 2.0, stretch=(1.0, 4.0)) > 1.6
    t = 0.45 * ring + 0.12 * streak + 0.5 + board_tint[board] - 0.2
    seam_u = np.minimum(local, 1.0 - local) * n / planks
    seam_v = np.minimum(pos % 0.5, 0.5 - pos % 0.5) * n
    seam = np.minimum(seam_u, seam_v)
    shade = (1.0 + 0.18 * streak + 0.08 * fine) * np.where(seam < 1.0, 0.45, 1.0)
    shade = shade * np.where(pores, 0.6, 1.0)
    return _colorize(t, spec, shade)


def _tiles(spec: TextureSpec, rng: np.random.Generator) -> np.ndarray:
    """Square tiles with per-tile colour, marble veins and speckle, separated by grout lines."""
    n = spec.size
    p = spec.params
    k = max(1, round(p.get("tiles", 4)))
    grout = p.get("grout", 0.06)
    u, v = _grid(n)
    iu = np.minimum((u * k).astype(int), k - 1)
    iv = np.minimum((v * k).astype(int), k - 1)
    lu = u * k - iu
    lv = v * k - iv
    edge = np.minimum(np.minimum(lu, 1.0 - lu), np.minimum(lv, 1.0 - lv))
    tile_mix = rng.uniform(0.0, p.get("variation", 0.35), (k, k))
    tile_shade = rng.uniform(0.9, 1.08, (k, k))
    marble = _periodic_noise(rng, n, 2.2, low=1.0)
    veins = 1.0 - np.abs(np.sin(3.0 * marble + 2.0 * _periodic_noise(rng, n, 2.5))) ** 0.15
    speckle = _periodic_noise(rng, n, 0.0, low=1.0, high=n / 2.5)
    dots = (speckle > 2.0).astype(float)
    t = tile_mix[iu, iv] + p.get("marble", 0.5) * veins + 0.25 * dots
    bevel = np.clip(edge / 0.06, 0.0, 1.0) ** 0.5
    shade = tile_shade[iu, iv] * (0.82 + 0.18 * bevel) * (1.0 + 0.07 * speckle - 0.25 * dots)
    in_grout = edge < grout / 2.0
    grout_noise = _periodic_noise(rng, n, 0.5, low=1.0)
    t = np.where(in_grout, 0.5, t)
    shade = np.where(in_grout, 0.55 + 0.08 * grout_noise, shade)
    return _colorize(t, spec, shade)


def _carpet(spec: TextureSpec, rng: np.random.Generator) -> np.ndarray:
    """Dense fibre noise with tuft loops and low-frequency mottling."""
    n = spec.size
    p = spec.params
    loops = p.get("loops", 96.0)
    u, v = _grid(n)
    fibre = _periodic_noise(rng, n, 0.0, low=1.0, high=n / 2.2)
    tuft_noise = _periodic_noise(rng, n, 2.0, low=1.0, high=12.0)
    tufts = np.sin(2 * np.pi * round(loops) * u + tuft_noise) * np.sin(
        2 * np.pi * round(loops) * v + tuft_noise
    )
    mottle = _periodic_noise(rng, n, 2.5, low=1.0, high=16.0)
    t = 0.5 + 0.22 * fibre + 0.1 * tufts + p.get("mottle", 0.35) * 0.5 * mottle
    shade = 1.0 + 0.22 * fibre + 0.08 * tufts
    return _colorize(t, spec, shade)


def _plaster(spec: TextureSpec, rng: np.random.Generator) -> np.ndarray:
    """Multi-octave value noise with embossed stucco relief and trowel marks."""
    n = spec.size
    rough = spec.params.get("roughness", 1.0)
    base = _periodic_noise(rng, n, 2.4, low=1.0)
    relief = _periodic_noise(rng, n, 1.6, low=2.0, high=n / 3.0)
    blobs = np.clip(_periodic_noise(rng, n, 2.0, low=4.0, high=n / 4.0) - 0.6, 0.0, None)
    height = relief + 2.5 * blobs
    fine = _periodic_noise(rng, n, 0.0, low=1.0, high=n / 2.5)
    t = 0.5 + 0.3 * base + 0.1 * relief
    shade = _emboss(height, 0.09 * rough) * (1.0 + 0.06 * fine)
    return _colorize(t, spec, shade)


def _wallpaper(spec: TextureSpec, rng: np.random.Generator) -> np.ndarray:
    """Half-drop rosette (damask-like) motifs over optional stripes, on slightly grainy paper."""
    n = spec.size
    p = spec.params
    m = max(2, 2 * round(p.get("motifs", 4) / 2))
    stripes = round(p.get("stripes", 0))
    petals = max(3, round(p.get("petals", 6)))
    u, v = _grid(n)
    iv = np.minimum((v * m).astype(int), m - 1)
    su = u * m - 0.5 * (iv % 2)
    iu = np.floor(su).astype(int) % m
    du = su - np.floor(su) - 0.5
    dv = v * m - iv - 0.5
    r = np.hypot(du, dv)
    theta = np.arctan2(du, dv)
    jitter = rng.uniform(-0.04, 0.04, (m, m))
    spin = rng.uniform(-0.25, 0.25, (m, m))
    outline = 0.36 + jitter[iu, iv] + 0.07 * np.cos(petals * (theta + spin[iu, iv]))
    petal = (np.abs(r - 0.75 * outline) < 0.03) | (r < 0.08)
    rosette = (r < outline) & (r > 0.7 * outline) | petal
    leaves = (np.abs(np.abs(du) - np.abs(dv)) < 0.025) & (r > outline) & (r < 0.5)
    motif = (rosette | leaves).astype(float)
    stripe = np.zeros_like(v)
    if stripes > 0:
        stripe = (np.abs((v * stripes) % 1.0 - 0.5) < 0.09).astype(float)
    paper = _periodic_noise(rng, n, 0.5, low=1.0, high=n / 2.5)
    print_wear = _periodic_noise(rng, n, 2.0, low=2.0)
    t = np.clip(motif * (0.85 + 0.15 * print_wear) + 0.5 * stripe, 0.0, 1.0)
    shade = (1.0 + 0.07 * paper) * np.where(motif > 0, 0.85, 1.0)
    return _colorize(t, spec, shade)


def _fabric(spec: TextureSpec, rng: np.random.Generator) -> np.ndarray:
    """Woven threads (plain or twill) with uneven yarn, slubs and pilling; optional plaid."""
    n = spec.size
    p = spec.params
    k = max(4, round(p.get("threads", 40)))
    twill = p.get("twill", 0.0) >= 0.5
    bands = round(p.get("plaid", 0))
    u, v = _grid(n)
    iu = np.minimum((u * k).astype(int), k - 1)
    iv = np.minimum((v * k).astype(int), k - 1)
    lu = u * k - iu
    lv = v * k - iv
    warp_up = ((iu + iv) % 4 < 2) if twill else ((iu + iv) % 2 == 0)
    profile = np.where(warp_up, np.sin(np.pi * lv), np.sin(np.pi * lu)) ** 0.7
    thread_tint = rng.uniform(-0.15, 0.15, k)
    tint = np.where(warp_up, thread_tint[iv], thread_tint[iu])
    yarn = rng.uniform(0.7, 1.15, (k, k))  # uneven yarn: every crossing a little different
    colour = np.where(warp_up, 0.15, 0.45)
    if bands > 0:
        band_v = (np.abs((v * bands) % 1.0 - 0.5) < 0.15).astype(float)
        band_u = (np.abs((u * bands) % 1.0 - 0.5) < 0.15).astype(float)
        colour = colour + 0.5 * np.where(warp_up, band_v, band_u)
    fuzz = _periodic_noise(rng, n, 0.5, low=1.0, high=n / 2.5)
    slubs = _periodic_noise(rng, n, 1.5, low=2.0, high=n / 6.0)
    t = colour + tint + 0.05 * fuzz
    shade = (0.35 + 0.65 * profile) * yarn[iu, iv] * (1.0 + 0.08 * fuzz + 0.12 * slubs)
    return _colorize(t, spec, shade)


def _asphalt(spec: TextureSpec, rng: np.random.Generator) -> np.ndarray:
    """Dark binder with light stone chips, fine grain and darker repair patches."""
    n = spec.size
    p = spec.params
    grain = _periodic_noise(rng, n, 0.0, low=1.0, high=n / 2.0)
    chips = _periodic_noise(rng, n, 0.3, low=2.0, high=n / 2.5)
    share = p.get("aggregate", 0.08)
    stone = chips > np.quantile(chips, 1.0 - share)
    patch = _periodic_noise(rng, n, 3.0, low=1.0, high=5.0) > 1.0
    t = 0.3 + 0.08 * grain + 0.6 * stone - p.get("patches", 0.3) * patch
    shade = (1.0 + 0.12 * grain) * np.where(stone, 1.15, 1.0)
    return _colorize(t, spec, shade)


def _grass(spec: TextureSpec, rng: np.random.Generator) -> np.ndarray:
    """Blade streaks in random directions over mottled turf, with lighter clumps."""
    n = spec.size
    p = spec.params
    blades = round(p.get("blades", 48))
    streak_a = _periodic_noise(rng, n, 0.5, low=2.0, high=blades, stretch=(1.0, 4.0))
    streak_b = _periodic_noise(rng, n, 0.5, low=2.0, high=blades, stretch=(4.0, 1.0))
    mottle = _periodic_noise(rng, n, 2.5, low=1.0, high=10.0)
    clumps = _periodic_noise(rng, n, 2.0, low=3.0, high=n / 8.0)
    clover = clumps > np.quantile(clumps, 1.0 - p.get("clover", 0.15))
    t = 0.45 + 0.15 * (streak_a + streak_b) / 2 + 0.2 * mottle + 0.3 * clover
    shade = 1.0 + 0.18 * np.maximum(streak_a, streak_b) - 0.1 * np.abs(mottle)
    return _colorize(t, spec, shade)


def _facade(spec: TextureSpec, rng: np.random.Generator) -> np.ndarray:
    """A wall with a grid of framed windows, each pane a little different, a few lit."""
    n = spec.size
    p = spec.params
    cols, rows = max(1, round(p.get("columns", 2))), max(1, round(p.get("rows", 2)))
    ww, wh = p.get("window_w", 0.5), p.get("window_h", 0.55)
    u, v = _grid(n)  # u down the rows (storeys), v along the columns
    iu = np.minimum((u * rows).astype(int), rows - 1)
    iv = np.minimum((v * cols).astype(int), cols - 1)
    lu, lv = u * rows - iu - 0.5, v * cols - iv - 0.5
    inside = (np.abs(lu) < wh / 2) & (np.abs(lv) < ww / 2)
    frame = inside & ((np.abs(lu) > wh / 2 - 0.04) | (np.abs(lv) > ww / 2 - 0.04))
    pane = rng.uniform(0.75, 1.0, (rows, cols))
    lit = rng.uniform(size=(rows, cols)) < p.get("lit", 0.15)
    wall = _periodic_noise(rng, n, 2.0, low=1.0, high=n / 4.0)
    fine = _periodic_noise(rng, n, 0.0, low=1.0, high=n / 2.5)
    band = (np.abs(lu) > 0.46) & ~inside  # the slab edge between storeys
    t = inside.astype(float)
    shade = np.where(inside, pane[iu, iv] * np.where(lit[iu, iv], 2.2, 1.0), 1.0 + 0.06 * wall)
    shade = np.where(frame, 0.45, np.where(band, 0.8, shade)) * (1.0 + 0.04 * fine)
    return _colorize(t, spec, shade)


_GENERATORS: dict[str, Callable[[TextureSpec, np.random.Generator], np.ndarray]] = {
    "wood": _wood,
    "tiles": _tiles,
    "carpet": _carpet,
    "plaster": _plaster,
    "wallpaper": _wallpaper,
    "fabric": _fabric,
    "asphalt": _asphalt,
    "grass": _grass,
    "facade": _facade,
}


def make_texture(spec: TextureSpec) -> np.ndarray:
    """Render `spec` into a (size, size, 3) uint8 RGB image, deterministically from its seed."""
    rng = np.random.default_rng(spec.seed)
    return _GENERATORS[spec.kind](spec, rng)
