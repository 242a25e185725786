"""The integer step clock shared by the simulator, the writer and `validate`.

Time is a physics-step counter `k`; a stream at `rate_hz` fires on every step that is a multiple
of its period `physics_hz // rate_hz`, and a step's timestamp is `round(k * 1e9 / physics_hz)`
computed in integers, so every tool derives bit-identical nanoseconds.
"""

from __future__ import annotations

NS_PER_S = 1_000_000_000


def step_to_ns(k: int, physics_hz: int) -> int:
    """Timestamp in integer nanoseconds of physics step `k` (round half up, no floats)."""
    return (k * NS_PER_S + physics_hz // 2) // physics_hz


def stream_steps(k_start: int, k_end: int, period: int) -> range:
    """The steps in [k_start, k_end) at which a stream of the given period fires."""
    first = -(-k_start // period) * period
    return range(first, k_end, period)


def expected_count(k_start: int, k_end: int, period: int) -> int:
    """Number of samples a stream of the given period records over steps [k_start, k_end)."""
    return len(stream_steps(k_start, k_end, period))
