"""How far apart two runs of the same experiment are, per stream (GRADE's Table 5).

- pose streams: deviation of B from A per axis, x, y, z in metres and roll, pitch, yaw in
  radians (the drone's Z-Y-X angles, wrapped to (−π, π]), as mean and std of the signed
  difference plus the largest absolute one, over the timestamps both streams have;
- camera streams: RGB SSIM (scikit-image, per frame, colour), depth mean absolute difference
  (metres, every pixel) and depth SSIM, as mean, std and worst frame;
- other tables (IMU, odometry, …): the largest absolute difference of any value.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation
from skimage.metrics import structural_similarity

from twinsim.errors import SequenceError
from twinsim.sequence import open_sequence

AXES = ("x", "y", "z", "roll", "pitch", "yaw")


def _stats(values: np.ndarray) -> dict[str, float]:
    if len(values) == 0:
        return {"mean": float("nan"), "std": float("nan"), "max_abs": float("nan")}
    return {
        "mean": float(values.mean()),
        "std": float(values.std()),
        "max_abs": float(np.abs(values).max()),
    }


def _common(t_a: np.ndarray, t_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices into a and b of the timestamps both have."""
    _, ia, ib = np.intersect1d(t_a, t_b, assume_unique=True, return_indices=True)
    return ia, ib


def pose_deviation(T_a: np.ndarray, T_b: np.ndarray) -> dict[str, dict[str, float]]:
    """Per-axis deviation of poses B from A: translation (m) and Z-Y-X angles (rad)."""
    d = np.empty((len(T_a), 6))
    d[:, :3] = T_b[:, :3, 3] - T_a[:, :3, 3]
    ypr_a = Rotation.from_matrix(T_a[:, :3, :3]).as_euler("ZYX")
    ypr_b = Rotation.from_matrix(T_b[:, :3, :3]).as_euler("ZYX")
    dang = np.angle(np.exp(1j * (ypr_b - ypr_a)))  # wrapped
    d[:, 3], d[:, 4], d[:, 5] = dang[:, 2], dang[:, 1], dang[:, 0]
    return {axis: _stats(d[:, i]) for i, axis in enumerate(AXES)}


def _ssim(a: np.ndarray, b: np.ndarray, data_range: float, channel_axis: int | None) -> float:
    if np.array_equal(a, b):
        return 1.0
    return float(structural_similarity(a, b, data_range=data_range, channel_axis=channel_axis))


def _summary(values: list[float], worst: str) -> dict[str, float]:
    arr = np.asarray(values, dtype=float)
    pick = arr.min() if worst == "min" else arr.max()
    return {"mean": float(arr.mean()), "std": float(arr.std()), worst: float(pick)}


def _camera(seq_a, seq_b, name: str, stride: int) -> dict:
    cam_a, cam_b = seq_a.camera(name), seq_b.camera(name)
    ia, ib = _common(cam_a.t_ns, cam_b.t_ns)
    ia, ib = ia[::stride], ib[::stride]
    rgb, mae, dssim = [], [], []
    for i, j in zip(ia, ib, strict=True):
        fa, fb = cam_a[int(i)], cam_b[int(j)]
        if fa.rgb.shape != fb.rgb.shape:
            raise SequenceError(f"{name}: frames are {fa.rgb.shape} in A and {fb.rgb.shape} in B")
        rgb.append(_ssim(fa.rgb, fb.rgb, 255.0, channel_axis=2))
        da, db = fa.depth.astype(np.float64), fb.depth.astype(np.float64)
        mae.append(float(np.abs(da - db).mean()))
        dssim.append(_ssim(da, db, max(float(da.max()), float(db.max()), 1e-6), None))
    if not rgb:
        return {"frames": 0}
    return {
        "frames": len(rgb),
        "rgb_ssim": _summary(rgb, "min"),
        "depth_mae_m": _summary(mae, "max"),
        "depth_ssim": _summary(dssim, "min"),
    }


def _table(seq_a, seq_b, name: str) -> dict:
    ta, tb = seq_a.table(name), seq_b.table(name)
    ia, ib = _common(ta["t_ns"], tb["t_ns"])
    cols = [c for c in ta if c != "t_ns" and c in tb]
    if not cols or not len(ia):
        return {"samples": 0}
    diff = max(float(np.abs(tb[c][ib] - ta[c][ia]).max()) for c in cols)
    return {"samples": len(ia), "max_abs_difference": diff}


def compare_sequences(a: str | Path, b: str | Path, stride: int = 1) -> dict:
    """Compare every stream the two sequences share (cameras every `stride`-th frame)."""
    if stride < 1:
        raise SequenceError(f"stride={stride} must be >= 1")
    seq_a, seq_b = open_sequence(a), open_sequence(b)
    shared = [s for s in seq_a.streams if s in seq_b.streams]
    if not shared:
        raise SequenceError(f"{a} and {b} share no stream")
    result: dict = {"a": str(a), "b": str(b), "poses": {}, "cameras": {}, "tables": {}}
    for name in shared:
        kind = seq_a.stream_info(name).get("type")
        if kind != seq_b.stream_info(name).get("type"):
            continue
        if kind == "pose":
            t_a, T_a = seq_a.groundtruth(name)
            t_b, T_b = seq_b.groundtruth(name)
            ia, ib = _common(t_a, t_b)
            result["poses"][name] = {"samples": len(ia)} | pose_deviation(T_a[ia], T_b[ib])
        elif kind == "camera":
            result["cameras"][name] = _camera(seq_a, seq_b, name, stride)
        else:
            result["tables"][name] = _table(seq_a, seq_b, name)
    result["only_in_a"] = [s for s in seq_a.streams if s not in seq_b.streams]
    result["only_in_b"] = [s for s in seq_b.streams if s not in seq_a.streams]
    return result
