"""Lossless per-frame image files: PNG through OpenCV (which releases the GIL), depth as .npy."""

from __future__ import annotations

import shutil
from pathlib import Path

import cv2
import numpy as np

from twinsim.errors import OutputFolderError, SequenceError

#: Masks: zlib level 1 with the SUB row filter (OpenCV's default adaptive filtering costs ~5×
#: the time for files within a few per cent of the same size).
MASK_PNG_LEVEL = 1


def write_png(path: Path, image: np.ndarray, level: int = MASK_PNG_LEVEL) -> None:
    """Encode an 8-bit BGR/grey or 16-bit grey image as PNG (deterministic bytes) and write it."""
    params = [
        cv2.IMWRITE_PNG_COMPRESSION,
        level,
        cv2.IMWRITE_PNG_FILTER,
        cv2.IMWRITE_PNG_FILTER_SUB,
    ]
    ok, encoded = cv2.imencode(".png", image, params)

    if not ok:
        raise OutputFolderError(f"{path}: OpenCV could not encode the image as PNG")
    try:
        path.write_bytes(encoded.tobytes())
    except OSError as exc:
        raise OutputFolderError(f"{path}: cannot be written ({exc})") from None


def write_npy(path: Path, array: np.ndarray) -> None:
    """Save an array as .npy (no pickle), mapping I/O failures to `OutputFolderError`."""
    try:
        with path.open("wb") as f:
            np.save(f, array, allow_pickle=False)
    except OSError as exc:
        raise OutputFolderError(f"{path}: cannot be written ({exc})") from None


def copy_image(source: Path, path: Path) -> None:
    """Copy a frame's image file from another sequence as it is (a twin's unchanged frame)."""
    try:
        shutil.copyfile(source, path)
    except OSError as exc:
        raise OutputFolderError(f"{path}: cannot be copied from {source} ({exc})") from None


def read_png(path: Path, name: str) -> np.ndarray:
    """Decode a PNG unchanged (8 or 16 bit, 1 or 3 channels, as BGR); `name` labels errors."""
    if not path.is_file():
        raise SequenceError(f"{name}: missing")
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise SequenceError(f"{name}: cannot be read (not a complete PNG)")
    return image


def npy_problem(exc: Exception) -> str:
    """Why a .npy did not load, without NumPy's advice to allow pickle (never safe here)."""
    text = str(exc)
    if "allow_pickle" in text:
        return "not a plain NumPy array: it holds Python objects, which twinsim never loads"
    return text


def read_npy(path: Path, name: str) -> np.ndarray:
    """Load a .npy array without pickle; `name` labels errors."""
    if not path.is_file():
        raise SequenceError(f"{name}: missing")
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise SequenceError(f"{name}: cannot be read ({npy_problem(exc)})") from None
