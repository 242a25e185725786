"""Event camera: events from log-intensity changes between renders, as ESIM and v2e model them.

Each pixel keeps a reference log intensity. Between two renders at t0 and t1 its log intensity
is taken to change linearly (ESIM); every crossing of reference ± C (C+ brightening, C−
darkening) is an event of polarity ±1 at the interpolated instant, and moves the reference by
±C. A crossing within the refractory period after the pixel's previous event is dropped (the
reference still moves, so the pixel stays in step with the scene). Intensity is the luma of the
rendered RGB in [0, 1]; log intensity is log(luma + eps), eps keeping dark pixels finite.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinsim.model.sensors import EventSpec

_LUMA = np.array([0.299, 0.587, 0.114])  # ITU-R BT.601, as OpenCV's grey conversion


@dataclass(frozen=True)
class EventBatch:
    """Events between two renders, sorted by time (then row, column)."""

    x: np.ndarray  # uint16 column
    y: np.ndarray  # uint16 row
    t_ns: np.ndarray  # int64
    polarity: np.ndarray  # int8, +1 brighter, −1 darker

    def __len__(self) -> int:
        return len(self.t_ns)


def log_intensity(rgb: np.ndarray, eps: float) -> np.ndarray:
    """(H, W) float64 log(luma + eps) of an 8-bit RGB image."""
    return np.log(rgb.astype(np.float64) @ _LUMA / 255.0 + eps)


class EventSimulator:
    """Turns a sequence of log-intensity images at increasing times into events."""

    def __init__(self, spec: EventSpec, width: int, height: int) -> None:
        self.spec = spec
        self.shape = (height, width)
        self._ref: np.ndarray | None = None
        self._log: np.ndarray | None = None
        self._t_ns = 0
        self._last = np.full(height * width, np.iinfo(np.int64).min // 2, np.int64)

    def state(self) -> dict[str, np.ndarray]:
        """What it carries between images (none before the first): reference and last log
        image, their time, each pixel's last event time."""
        if self._ref is None:
            return {"last": self._last.copy()}
        return {
            "ref": self._ref.copy(),
            "log": self._log.copy(),
            "t_ns": np.array(self._t_ns),
            "last": self._last.copy(),
        }

    def restore(self, state: dict[str, np.ndarray]) -> None:
        """Take back a `state`."""
        self._last = np.array(state["last"], np.int64)
        if "ref" in state:
            self._ref = np.array(state["ref"], np.float64)
            self._log = np.array(state["log"], np.float64)
            self._t_ns = int(state["t_ns"])

    def update(self, t_ns: int, log_image: np.ndarray) -> EventBatch:
        """Events in (previous t, t_ns] from the change to `log_image`; none for the first image."""
        L1 = np.asarray(log_image, np.float64).reshape(-1)
        if L1.size != self._last.size:
            raise ValueError(f"log image has {L1.size} pixels, expected {self.shape}")
        if self._ref is None:
            self._ref, self._log, self._t_ns = L1.copy(), L1, t_ns
            return _batch([], [], [], self.shape[1])
        if t_ns <= self._t_ns:
            raise ValueError(f"t_ns {t_ns} is not after the previous render {self._t_ns}")
        L0, ref, t0, dt = self._log, self._ref, self._t_ns, t_ns - self._t_ns
        delta = L1 - ref
        up = delta > 0
        C = np.where(up, self.spec.threshold_pos, self.spec.threshold_neg)
        n = np.floor(np.abs(delta) / C).astype(np.int64)
        pixels = np.flatnonzero(n)
        sign = np.where(up[pixels], 1, -1)
        out_pix, out_t, out_pol = [], [], []
        for i in range(1, int(n[pixels].max(initial=0)) + 1):
            sel = n[pixels] >= i
            pix, s = pixels[sel], sign[sel]
            level = ref[pix] + s * i * C[pix]
            span = L1[pix] - L0[pix]
            frac = np.divide(level - L0[pix], span, out=np.ones(len(pix)), where=span != 0)
            t = t0 + np.rint(np.clip(frac, 0.0, 1.0) * dt).astype(np.int64)
            ok = t - self._last[pix] >= self.spec.refractory_ns
            self._last[pix[ok]] = t[ok]
            out_pix.append(pix[ok])
            out_t.append(t[ok])
            out_pol.append(s[ok])
        ref[pixels] += sign * n[pixels] * C[pixels]
        self._log, self._t_ns = L1, t_ns
        return _batch(out_pix, out_t, out_pol, self.shape[1])


def _batch(pix: list, t: list, pol: list, width: int) -> EventBatch:
    """Concatenate per-crossing arrays and sort by (t, y, x)."""
    p = np.concatenate(pix) if pix else np.empty(0, np.int64)
    ts = np.concatenate(t) if t else np.empty(0, np.int64)
    pl = np.concatenate(pol) if pol else np.empty(0, np.int64)
    y, x = np.divmod(p, width)
    order = np.lexsort((x, y, ts))
    return EventBatch(
        x=x[order].astype(np.uint16),
        y=y[order].astype(np.uint16),
        t_ns=ts[order].astype(np.int64),
        polarity=pl[order].astype(np.int8),
    )
