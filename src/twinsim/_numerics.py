"""Pins the CPU code paths of NumPy and OpenBLAS, so a run gives the same bytes on any machine.

At import, NumPy picks SIMD kernels for the CPU (AVX-512 or AVX2) and OpenBLAS picks kernels
for the CPU model (e.g. SkylakeX or Zen); their float64 results differ in the last bit, and a
closed control loop carries such a bit into every pose that follows. Both read an override from
the environment when they load, so `import twinsim` sets these first thing, before anything
imports NumPy (unless the caller has set them). A process that imported NumPy before twinsim
keeps the machine's own kernels: `numerics()` says so, and every sequence's metadata records it.
"""

from __future__ import annotations

import os
import sys

#: AVX2 kernels everywhere: every x86-64 machine of the last decade has them
PINNED = {
    "OPENBLAS_CORETYPE": "Haswell",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
}

_NUMPY_WAS_LOADED = "numpy" in sys.modules
for _name, _value in PINNED.items():
    os.environ.setdefault(_name, _value)


def numerics() -> dict:
    """What the metadata records of the kernels in use: the two settings, and whether they
    were in force when NumPy loaded (runs repeat bit for bit across machines only then)."""
    settings = {name: os.environ.get(name) for name in PINNED}
    return settings | {"pinned": not _NUMPY_WAS_LOADED and settings == PINNED}
