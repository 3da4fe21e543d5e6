"""The optional parts of multibody and what each needs: one table, read by ``require`` (the one way
the package imports an optional dependency) and checked against ``pyproject.toml``'s extras by the
tests.

The core install (``pip install multibody``: NumPy, lxml, trimesh, tqdm, rich) runs every numeric
function — kinematics, dynamics, derivatives, the fixed-step simulator, the engine, URDF models and
the catalogue's numeric models.  An extra adds a field of use:

>>> sorted(EXTRAS)
['mjcf', 'sim', 'symbolic', 'view']
>>> require("numpy", "sim", "a doctest").__name__      # installed: the module itself
'numpy'
>>> require("no_such_module_anywhere", "view", "drawing a plot")
Traceback (most recent call last):
...
multibody._extras.MissingExtraError: drawing a plot needs the Python package 'no_such_module_anywhere', which the core install leaves out: pip install 'multibody[view]'
"""
from __future__ import annotations

import importlib

#: extra → (the import names it provides, what it is for); pyproject.toml lists the same packages
EXTRAS = {
    "symbolic": (("sympy", "symengine"), "symbolic derivation (derive, proNEu, TMT, Lagrange) and code generation"),
    "mjcf": (("mujoco",), "MuJoCo MJCF files (MuJoCo's own compiler reads them) and the MuJoCo comparisons"),
    "sim": (("scipy",), "adaptive integrators (SciPy's solve_ivp) and convex hulls of meshes"),
    "view": (("matplotlib", "imageio_ffmpeg", "collada"), "plots, videos and COLLADA (.dae) meshes"),
}


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the extra that installs it."""


def require(module: str, extra: str, feature: str):
    """Import ``module`` (an optional dependency of ``extra``) or raise :class:`MissingExtraError`
    saying which feature needed it and the one ``pip install`` line that brings it."""
    if extra not in EXTRAS:
        raise ValueError(f"extra: expected one of {sorted(EXTRAS)}, got {extra!r}")
    try:
        return importlib.import_module(module)
    except ImportError as e:
        top = module.split(".")[0]
        if e.name is not None and e.name.split(".")[0] != top:
            raise      # the package is there but something it needs is broken: its own message says what
        raise MissingExtraError(f"{feature} needs the Python package {top!r}, which the core install leaves "
                                f"out: pip install 'multibody[{extra}]'", name=top) from None
