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
import os
import sys

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
    loaded = sys.modules.get(module)   # imported already: no import machinery (model builders ask per entry)
    if loaded is not None:
        return loaded
    try:
        return importlib.import_module(module)
    except ImportError as e:
        top = module.split(".")[0]
        if e.name is not None and e.name.split(".")[0] != top:
            raise      # the package is there but something it needs is broken: its own message says what
        raise MissingExtraError(f"{feature} needs the Python package {top!r}, which the core install leaves "
                                f"out: pip install 'multibody[{extra}]'", name=top) from None


def robots_dir(given: str | os.PathLike | None = None) -> str:
    """example-robot-data's ``robots`` folder: the one place the benchmarks and the tests find the
    real robots' URDFs (UR5, Panda, solo12, ANYmal, Talos, …).

    example-robot-data is a test dependency, not a runtime one: it is a data package that installs
    into the cmeel prefix of its wheel (``<site-packages>/cmeel.prefix/share/example-robot-data``),
    sometimes with a Python module ``example_robot_data`` that names the folder.

    Parameters
    ----------
    given : str or os.PathLike, optional
        A folder to use as is (a benchmark's ``--robots-dir``); it must exist.  None: look in
        ``$EXAMPLE_ROBOT_DATA_DIR``, then ``example_robot_data.path.EXAMPLE_ROBOT_DATA_MODEL_DIR``,
        then the ``cmeel.prefix`` of every site folder and ``sys.path`` entry.

    Returns
    -------
    str
        The absolute, normalised path of the folder.

    Raises
    ------
    FileNotFoundError
        ``given`` is not a folder, or none of the places above holds one; the message says what
        was tried and how to install the package.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> robots_dir(d) == os.path.abspath(d)
    True
    >>> robots_dir(os.path.join(d, "missing"))
    Traceback (most recent call last):
    ...
    FileNotFoundError: robots_dir: '...missing' is not a folder (expected example-robot-data's robots folder)
    """
    if given is not None:
        path = os.fspath(given)
        if not os.path.isdir(path):
            raise FileNotFoundError(f"robots_dir: {path!r} is not a folder (expected example-robot-data's "
                                    f"robots folder)")
        return os.path.abspath(path)
    tried = []
    env = os.environ.get("EXAMPLE_ROBOT_DATA_DIR")
    if env:
        tried.append(env)
    try:
        from example_robot_data.path import EXAMPLE_ROBOT_DATA_MODEL_DIR
        tried.append(EXAMPLE_ROBOT_DATA_MODEL_DIR)
    except ImportError:
        pass
    import sysconfig

    paths = sysconfig.get_paths()
    for base in dict.fromkeys([paths["purelib"], paths["platlib"], *sys.path]):  # ordered, no repeats
        if base:
            tried.append(os.path.join(base, "cmeel.prefix", "share", "example-robot-data", "robots"))
    for path in tried:
        if os.path.isdir(path):
            return os.path.abspath(path)
    raise FileNotFoundError(f"robots_dir: example-robot-data's robots folder not found (tried $EXAMPLE_ROBOT_DATA_DIR, "
                            f"example_robot_data and {len(tried)} folders); install it (pip install "
                            f"example-robot-data) or name the folder")
