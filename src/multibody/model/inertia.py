"""Is a 3×3 inertia (about the centre of mass) one that a rigid body can have?

A rigid body's rotational inertia is symmetric positive semi-definite, and its principal moments
obey the triangle inequality I₁ + I₂ ≥ I₃ (each moment is a sum of two second moments of the mass
distribution).  One check serves every describer of a model, with two policies:

- code written here (``ModelBuilder``) is refused: ``ValueError`` naming the body;
- files written by others (URDF, MJCF) load as written with a warning naming the link, as
  Pinocchio, urdfdom and MuJoCo accept them (several robots in example-robot-data have such
  inertias — rounding in a CAD export, or a sign slip in a tiny link).
"""
from __future__ import annotations

import warnings

import numpy as np

__all__ = ["inertia_fault", "check_inertia"]

# relative tolerances: rounding of the file's printed digits, not physics
_PSD_TOL = 1e-12
_TRIANGLE_TOL = 1e-6


def inertia_fault(Ic, *, triangle: bool = True) -> str | None:
    """Why ``Ic`` is not a rigid body's inertia about its centre of mass, or ``None`` if it is.

    ``triangle=False`` checks only what the kernels need (finite, symmetric, positive semi-definite).

    >>> import numpy as np
    >>> inertia_fault(np.diag([1.0, 2.0, 2.5])) is None
    True
    >>> inertia_fault(np.diag([1.0, 1.0, 3.0]))
    'violates the triangle inequality (principal moments [1.0, 1.0, 3.0]); no rigid body has this inertia'
    """
    Ic = np.asarray(Ic, dtype=float)
    if Ic.shape != (3, 3) or not np.all(np.isfinite(Ic)):
        return "has an inertia that is not a finite 3×3 matrix"
    scale = float(np.abs(Ic).max())
    if not np.allclose(Ic, Ic.T, rtol=0, atol=1e-12 + 1e-9 * scale):
        return "has a non-symmetric inertia matrix"
    ev = np.sort(np.linalg.eigvalsh(Ic))
    if ev[0] < -_PSD_TOL * max(1.0, ev[2]):
        return f"inertia is not positive definite (eigenvalues {_short(ev)})"
    if triangle and ev[0] + ev[1] < ev[2] * (1 - _TRIANGLE_TOL) - 1e-12:
        return f"violates the triangle inequality (principal moments {_short(ev)}); no rigid body has this inertia"
    return None


def check_inertia(Ic, who: str, *, warning: type[Warning] | None = None, stacklevel: int = 2) -> None:
    """Refuse (``ValueError``) or, given a ``warning`` class, warn about an impossible inertia.

    ``who`` names the body or link, e.g. ``"body 'arm'"``; messages read ``inertia: <who> <fault>``.

    >>> import numpy as np, warnings
    >>> check_inertia(np.diag([1.0, 1.0, 3.0]), "body 'a'")
    Traceback (most recent call last):
    ...
    ValueError: inertia: body 'a' violates the triangle inequality (principal moments [1.0, 1.0, 3.0]); no rigid body has this inertia
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     check_inertia(np.diag([1.0, 1.0, 3.0]), "link 'a'", warning=UserWarning)
    >>> "kept as written" in str(w[0].message)
    True
    """
    fault = inertia_fault(Ic)
    if fault is None:
        return
    if warning is None:
        raise ValueError(f"inertia: {who} {fault}")
    warnings.warn(f"inertia: {who} {fault}; kept as written", warning, stacklevel=stacklevel + 1)


def _short(ev) -> list:
    return [float(f"{v:.6g}") for v in ev]
