"""A cylinder acting across a revolute joint, as the joint torque it makes (proNEu manual §2.2.2,
Figure 2.2, eqs. 2.1–2.2).

The manual's note: a linear actuator (hydraulic or pneumatic cylinder, spindle drive) mounted on
two bodies that a revolute joint connects is modelled as a *torque* element ('rot') on that
joint. With the cylinder mounted at distance ``b`` from the joint axis on the reaction body P and
at distance ``a`` on the action body B, and the joint angle ``q1``,

    φ  = tan⁻¹( a sin q1 / (b + a cos q1) )                                    (2.1)
    T1 = F1 b sin φ                                                            (2.2)

Geometry (in the plane normal to the joint axis, origin on the axis): the P mount at ``(−b, 0)``,
the B mount at ``a (cos q1, sin q1)``, so at ``q1 = 0`` the mounts lie on either side of the axis
and the cylinder is longest, ``L = a + b``; in general ``L² = a² + b² + 2ab cos q1``. φ is the
cylinder's angle at the P mount and ``b sin φ`` its lever arm about the axis. ``F1 > 0`` pulls the
mounts together (the cylinder contracts), which turns B positively about the axis: T1 is the
generalized force ``−F1 ∂L/∂q1`` of the cylinder's force (virtual work). A pushing cylinder is
``F1 < 0``.

φ is evaluated quadrant-correctly (``atan2``): where ``b + a cos q1 < 0`` (possible only with
``a > b``, the arm turned past ``cos q1 = −b/a``) the one-argument tan⁻¹ of eq. 2.1 as printed gives
``φ ∓ π``, whose sine has the wrong sign, so the printed formula holds only while ``b + a cos q1 > 0``.
Written out, ``b sin φ = a b sin q1 / L``, which is the form returned (one square root, no
trigonometric inverse, for generated code).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from .pne import RotForce

__all__ = ["cylinder_angle", "cylinder_torque", "cylinder_element"]


def _symbolic(*xs) -> bool:
    return any(isinstance(x, sp.Basic) for x in xs)


def _floats(x, what: str, expected: str):
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: expected {expected} as a number, an array or a SymPy expression, got {x!r}") from None


def _numeric_lengths(a, b):
    a = _floats(a, "a", "the distance (m) of the B mount from the joint axis")
    b = _floats(b, "b", "the distance (m) of the P mount from the joint axis")
    if not (np.all(np.isfinite(a)) and np.all(a > 0)):
        raise ValueError(f"a: expected a positive finite distance of the B mount from the joint axis, got {a!r}")
    if not (np.all(np.isfinite(b)) and np.all(b > 0)):
        raise ValueError(f"b: expected a positive finite distance of the P mount from the joint axis, got {b!r}")
    return a, b


def _numeric_angle(q, what="q"):
    q = _floats(q, what, "the joint angle (rad)")
    if not np.all(np.isfinite(q)):
        raise ValueError(f"{what}: expected finite joint angles, got {q!r}")
    return q


def _length(q, a, b):
    """The cylinder's length L(q1) = √(a² + b² + 2ab cos q1)."""
    if _symbolic(q, a, b):
        return sp.sqrt(a**2 + b**2 + 2 * a * b * sp.cos(q))
    L = np.sqrt(a * a + b * b + 2 * a * b * np.cos(q))
    if np.any(L <= 1e-12 * (a + b)):
        raise ValueError("q: the cylinder's mounts coincide (a = b and q1 = ±π): the cylinder has no direction "
                         "and its torque is undefined")
    return L


def cylinder_angle(q, a, b):
    """φ of eq. 2.1: the cylinder's angle at the P mount, ``atan2(a sin q1, b + a cos q1)``.

    Parameters
    ----------
    q : sympy expression, float or array_like
        Joint angle q1 (rad).
    a : sympy expression or float
        Distance (m) of the cylinder's mount on the action body B from the joint axis (> 0).
    b : sympy expression or float
        Distance (m) of its mount on the reaction body P from the joint axis (> 0).

    Returns
    -------
    sympy expression or ndarray
        φ (rad): a SymPy expression if any input is SymPy, else NumPy values (inputs broadcast).

    Raises
    ------
    TypeError
        A numeric argument that is not a number or array of numbers.
    ValueError
        Numeric ``a`` or ``b`` not positive and finite, a non-finite ``q``, or mounts that
        coincide (``a = b``, ``q1 = ±π``: the cylinder has no direction).

    Examples
    --------
    >>> import numpy as np
    >>> from multibody.symbolic import cylinder_angle
    >>> round(float(cylinder_angle(np.pi / 2, 0.3, 0.4)), 12) == round(float(np.arctan(0.3 / 0.4)), 12)
    True
    """
    if _symbolic(q, a, b):
        return sp.atan2(a * sp.sin(q), b + a * sp.cos(q))
    q = _numeric_angle(q)
    a, b = _numeric_lengths(a, b)
    _length(q, a, b)          # refuses coincident mounts: the cylinder has no direction there
    return np.arctan2(a * np.sin(q), b + a * np.cos(q))


def cylinder_torque(q, a, b, F):
    """T1 of eq. 2.2: the joint torque ``F1 b sin φ`` of a cylinder across a revolute joint.

    Parameters
    ----------
    q : joint angle q1 (rad): SymPy symbol/expression, a number or an array
    a : distance (m) of the cylinder's mount on the action body B from the joint axis (> 0)
    b : distance (m) of its mount on the reaction body P from the joint axis (> 0)
    F : cylinder force F1 (N), positive pulling the mounts together (see the module docstring)

    Returns
    -------
    The torque (N m) about the joint axis on B (−T1 on P): ``F a b sin q1 / L`` with
    ``L = √(a² + b² + 2ab cos q1)``, which is ``F1 b sin φ`` with φ of eq. 2.1; a SymPy
    expression if any input is SymPy, else NumPy values.

    Raises
    ------
    ValueError
        numeric ``a`` or ``b`` not positive and finite, a non-finite ``q`` or ``F``, or mounts
        that coincide (``a = b``, ``q1 = ±π``).

    Examples
    --------
    >>> import numpy as np, sympy as sp
    >>> q, a, b, F = sp.symbols("q1 a b F1")
    >>> cylinder_torque(q, a, b, F)
    F1*a*b*sin(q1)/sqrt(a**2 + 2*a*b*cos(q1) + b**2)
    >>> T = cylinder_torque(0.7, 0.3, 0.5, 1000.0)
    >>> phi = np.arctan(0.3 * np.sin(0.7) / (0.5 + 0.3 * np.cos(0.7)))      # eq. 2.1
    >>> bool(np.isclose(T, 1000.0 * 0.5 * np.sin(phi), rtol=1e-14))        # eq. 2.2
    True
    """
    if _symbolic(q, a, b, F):
        return F * a * b * sp.sin(q) / _length(q, a, b)
    q = _numeric_angle(q)
    a, b = _numeric_lengths(a, b)
    F = _floats(F, "F", "the cylinder force (N)")
    if not np.all(np.isfinite(F)):
        raise ValueError(f"F: expected a finite cylinder force, got {F!r}")
    return F * a * b * np.sin(q) / _length(q, a, b)


def cylinder_element(body_P, body_B, q, a, b, F, axis=(0, 0, 1), name: str | None = None) -> RotForce:
    """The manual's torque element ('rot') of a cylinder across a revolute joint.

    The element between ``body_P`` and ``body_B`` has ``B_T = cylinder_torque(q, a, b, F) · axis``
    (proNEu's ``ftel(i).B_T = [0;0;T1]`` for the z axis). Give it to :func:`compute_pne` with the
    other force elements.

    Parameters
    ----------
    body_P : str, int or None
        The reaction body (name or index; None: the inertial frame).
    body_B : str or int
        The action body, the joint's child.
    q : sympy.Symbol
        The joint's coordinate (rad).
    a, b : sympy expression or float
        Distances (m) of the mounts on B and on P from the joint axis (> 0).
    F : sympy expression or float
        The cylinder force (N), positive pulling the mounts together: an actuator symbol τ or an
        expression in q and parameters.
    axis : sequence of 3, optional
        The joint axis in B coordinates, a unit vector (default z).
    name : str, optional
        The element's name (in error messages).

    Returns
    -------
    RotForce
        The torque element.

    Raises
    ------
    TypeError
        ``q`` is not a SymPy symbol.
    ValueError
        Numeric ``a`` or ``b`` not positive and finite; ``axis`` not 3 components of a unit vector.

    Examples
    --------
    >>> import sympy as sp
    >>> from multibody.symbolic import cylinder_element
    >>> q1, F1 = sp.symbols("q1 F1")
    >>> fe = cylinder_element(None, "arm", q1, 0.3, 0.5, F1, name="boom cylinder")
    >>> fe.type, fe.B_T[0], fe.B_T[1]
    ('rot', 0, 0)
    """
    if not isinstance(q, sp.Symbol):
        raise TypeError(f"q: expected the joint's coordinate as a SymPy symbol, got {q!r}")
    for what, v in (("a", a), ("b", b)):
        if not isinstance(v, sp.Basic):
            _numeric_lengths(v if what == "a" else 1.0, v if what == "b" else 1.0)
    u = np.asarray([sp.sympify(c) for c in axis], dtype=object)
    if u.shape != (3,):
        raise ValueError(f"axis: expected 3 components, got {axis!r}")
    if all(c.is_number for c in u):
        norm = float(sp.sqrt(sum(c**2 for c in u)))
        if abs(norm - 1.0) > 1e-12:
            raise ValueError(f"axis: expected a unit vector (the joint axis in B coordinates), got {axis!r} "
                             f"of length {norm:.6g}")
    T = cylinder_torque(q, sp.sympify(a), sp.sympify(b), sp.sympify(F))
    return RotForce(body_P, body_B, sp.Matrix([T * c for c in u]), name=name)
