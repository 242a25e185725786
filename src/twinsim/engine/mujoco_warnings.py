"""MuJoCo's warnings, taken over from its default handler.

MuJoCo's own handler prints each warning to stdout and appends it to `MUJOCO_LOG.TXT` in the
working directory, a file written outside any output folder. Here every warning goes to the
`twinsim.mujoco` logger instead, and one that means the physics diverged (a NaN, infinite or
huge position, velocity or acceleration, after which MuJoCo silently resets the state to its
initial pose) is kept so the world stepping it stops the run with one line.
"""

from __future__ import annotations

import logging

import mujoco

from twinsim.errors import PhysicsError

logger = logging.getLogger("twinsim.mujoco")

#: the text MuJoCo's checks of qpos, qvel and qacc end a divergence warning with
_UNSTABLE = "The simulation is unstable"

#: divergence warnings not yet raised (a world checks this after every step)
diverged: list[str] = []


def _handle(message: str) -> None:
    if _UNSTABLE in message:
        diverged.append(message)  # raised as a PhysicsError by the world that stepped
        logger.debug("%s", message)
    else:
        logger.warning("%s", message)


def take_over() -> None:
    """Route MuJoCo's warnings here (idempotent; the handler is process-wide)."""
    mujoco.set_mju_user_warning(_handle)


def raise_diverged(when: str) -> None:
    """Raise `PhysicsError` for the divergence MuJoCo reported (`diverged` is not empty);
    `when` says at what time."""
    message = diverged[0].split(". ")[0]
    diverged.clear()
    raise PhysicsError(
        f"the physics diverged {when} ({message}): check the masses, inertias, gains and "
        "limits of the robots, or raise sim.physics_hz"
    )
