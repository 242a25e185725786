"""Importing one small module of twinsim loads only what it needs: the package's exports are
lazy (PEP 562, `twinsim/_lazy.py`), `_numerics` still comes before NumPy, and every export
still resolves to the object its submodule defines."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys
import twinsim.geometry
names = list(sys.modules)
print(json.dumps({"twinsim": sorted(m for m in names if m.startswith("twinsim")),
    "heavy": sorted(m for m in ("cv2", "mujoco", "pydantic", "scipy.optimize") if m in names),
    "numerics_first": names.index("twinsim._numerics") < names.index("numpy")}))
"""


def test_import_twinsim_geometry_loads_no_simulator():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    assert loaded["twinsim"] == [
        "twinsim",
        "twinsim._lazy",
        "twinsim._numerics",
        "twinsim._version",
        "twinsim.geometry",
    ]
    assert loaded["heavy"] == [] and loaded["numerics_first"]


@pytest.mark.parametrize(
    "package",
    [
        "twinsim",
        "twinsim.sequence",
        "twinsim.noise",
        "twinsim.dsg",
        "twinsim.batch",
        "twinsim.eval",
        "twinsim.export",
        "twinsim.closedloop",
    ],
)
def test_every_lazy_export_is_its_submodule_s_object(package):
    import importlib

    module = importlib.import_module(package)
    names = [n for n in module.__all__ if n != "__version__"]
    assert names and set(names) <= set(dir(module))
    for name in names:
        value = getattr(module, name)
        home = importlib.import_module(value.__module__) if hasattr(value, "__module__") else None
        assert home is None or getattr(home, name, value) is value
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        module.nope  # noqa: B018


def test_the_cli_imports_no_mujoco_before_it_picks_a_render_backend():
    """MuJoCo reads `MUJOCO_GL` once, at its import: a module the CLI imports that loads it
    (even for a type hint) leaves `twinsim run` on GLFW, which has no display here."""
    probe = "import sys, twinsim.cli; print('mujoco' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
