"""The OpenDE report's pendulums (seed 003, chapter 5, appendix D) as ``Model`` s.

* :func:`double_pendulum` — two homogeneous boxes on two hinges (section 5.1, DP_EOM.m)
* :func:`single_pendulum` — one such box, the colliding pendulum (chapter 6, SinglePendulum.m)

Both hinge about x, with the links lying along +y at q = 0, so each angle is measured from the
horizontal as in DP_EOM (D₁₁ = 1001/600 + cos θ₂, g₁ = 2943/200 cos θ₁ + 981/200 cos(θ₁ + θ₂)).
Gravity points along −z.
"""
from __future__ import annotations

import math

from ..model.model import Model
from ..model.seed import Parameters, attach
from ..model.tree import build_tree

__all__ = ["double_pendulum", "single_pendulum"]


def _box_link(P, m, h, w, d):
    """Inertia about the CoM of a box link lying along y: h along y, w along z (in the plane of
    motion), d along x (the hinge axis) — DP_EOM's I_zz = m(h² + w²)/12 is the x entry here."""
    twelfth = P.number("1/12")
    return P.diag(twelfth * m * (h**2 + w**2), twelfth * m * (w**2 + d**2), twelfth * m * (h**2 + d**2))


def double_pendulum(symbolic=False, *, m1=1.0, m2=1.0, l1=1.0, l2=1.0, h1=1.0, h2=1.0,
                    w1=0.1, w2=0.1, d1=0.1, d2=0.1, g=9.81) -> Model:
    """The OpenDE report's double pendulum (section 5.1, appendix D.1 DP_EOM.m).

    Link i: mass ``mi`` [kg], joint distance ``li`` [m] (CoM at li/2), box of length ``hi``,
    in-plane width ``wi`` and depth ``di`` [m] (DP_EOM: h = 1, w = d = 0.1, m = 1, l = 1);
    gravity ``g`` [m/s²] along −z. Coordinates th1 (link 1 from the horizontal) and th2 (link 2
    relative to link 1), rates Dth1, Dth2; the report's initial state q0 = [π/4, −π/4], q̇0 = 0.

    Parameters
    ----------
    symbolic : bool, collection of str, or mapping str → sympy.Expr, default False
        Which parameters become SymPy symbols: none (a numeric model), all (``True``), the named
        ones, or the given expressions; the numbers below stay their values (``parameters(model)``).
    m1, m2 : float, default 1.0
        Link masses (kg).
    l1, l2 : float, default 1.0
        Joint distances (m); each CoM is at half of it.
    h1, h2 : float, default 1.0
        Box lengths (m).
    w1, w2 : float, default 0.1
        In-plane box widths (m).
    d1, d2 : float, default 0.1
        Box depths along the hinge axis (m).
    g : float, default 9.81
        Gravity (m/s²) along −z.

    Returns
    -------
    Model
        Two hinges about x named th1, th2, with :class:`SeedInfo` attached.

    Raises
    ------
    TypeError
        A parameter that is not a number (a string, None), or ``symbolic`` of another kind.
    ValueError
        A parameter NaN or inf, ``symbolic`` naming an unknown parameter, or a mass the model
        builder refuses (negative).
    multibody._extras.MissingExtraError
        ``symbolic`` asks for symbols and SymPy is not installed (the ``symbolic`` extra).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> model = mb.models.double_pendulum()
    >>> H = mb.crba(model, np.array([np.pi / 4, -np.pi / 4]))
    >>> bool(abs(H[0, 0] - (1001 / 600 + np.cos(-np.pi / 4))) < 1e-12)
    True
    """
    P = Parameters("double_pendulum", symbolic, {k: v for k, v in locals().items() if k != "symbolic"})
    m1, m2, l1, l2 = P.take("m1", "m2", "l1", "l2")
    model = build_tree("double_pendulum", [
        dict(name="link1", joint="Rx", mass=m1, com=(0, l1 / 2, 0),
             inertia=_box_link(P, m1, P["h1"], P["w1"], P["d1"]), joint_name="th1"),
        dict(name="link2", parent="link1", joint="Rx", translation=(0, l1, 0), mass=m2, com=(0, l2 / 2, 0),
             inertia=_box_link(P, m2, P["h2"], P["w2"], P["d2"]), joint_name="th2"),
    ], gravity=(0, 0, -P["g"]))
    model = _draw_boxes(model, [(l1, P["h1"], P["w1"], P["d1"]), (l2, P["h2"], P["w2"], P["d2"])])
    pi4 = P.pi / 4
    return attach(model, P.info("double_pendulum", ("th1", "th2"), actuators=("T1", "T2"), actuated=(0, 1),
                                q0=(pi4, -pi4), dq0=(0, 0)))


def _draw_boxes(model, links):
    """Drawing instructions: each link the report's box (d along x, h along y, w along z) around its
    CoM, and a cylinder on each hinge; none for a symbolic model."""
    if model.is_symbolic:
        return model
    from dataclasses import replace

    from ..model import appearance as look
    shapes = []
    for k, link in enumerate(links):
        l, h, w, d = (float(x) for x in link)
        shapes.append(look.box(k, (-d / 2, l / 2 - h / 2, -w / 2), (d / 2, l / 2 + h / 2, w / 2),
                               (0.55, 0.62, 0.78), name=f"link{k + 1}"))
        shapes.append(look.cylinder(k, (-0.8 * d, 0, 0), (0.8 * d, 0, 0), 0.4 * w, (0.85, 0.55, 0.15),
                                    name=f"hinge{k + 1}"))
    return replace(model, geometries=tuple(shapes))


def single_pendulum(symbolic=False, *, m=1.0, l=1.0, h=1.0, w=0.1, d=0.1, g=9.81) -> Model:
    """The OpenDE report's single (colliding) pendulum (chapter 6, appendix D.5 SinglePendulum.m).

    One box link like the double pendulum's first (mass ``m``, CoM at ``l``/2, box ``h`` × ``w``
    × ``d``), hinged about x, lying along +y at th1 = 0 (horizontal): D_q = 401/1200,
    g_q = 981/200 cos th1. The report starts at rest at th1 = 0 and puts a wall at th1 = −π/2
    (bounce 1.0: the rate is reversed there); the wall is an event for the simulator, not part of
    the model.

    Parameters
    ----------
    symbolic : bool, collection of str, or mapping str → sympy.Expr, default False
        Which parameters become SymPy symbols: none (a numeric model), all (``True``), the named
        ones, or the given expressions; the numbers below stay their values (``parameters(model)``).
    m : float, default 1.0
        Mass (kg).
    l : float, default 1.0
        Hinge-to-end distance (m); the CoM is at l/2.
    h, w, d : float
        Box length (1.0), in-plane width (0.1) and depth along the hinge (0.1), in m.
    g : float, default 9.81
        Gravity (m/s²) along −z.

    Returns
    -------
    Model
        One hinge about x named th1, with :class:`SeedInfo` attached (its notes hold the wall angle).

    Raises
    ------
    TypeError
        A parameter that is not a number (a string, None), or ``symbolic`` of another kind.
    ValueError
        A parameter NaN or inf, ``symbolic`` naming an unknown parameter, or a mass the model
        builder refuses (negative).
    multibody._extras.MissingExtraError
        ``symbolic`` asks for symbols and SymPy is not installed (the ``symbolic`` extra).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> round(float(mb.crba(mb.models.single_pendulum(), np.zeros(1))[0, 0]) * 1200, 9)
    401.0
    """
    P = Parameters("single_pendulum", symbolic, {k: v for k, v in locals().items() if k != "symbolic"})
    model = build_tree("single_pendulum", [
        dict(name="link1", joint="Rx", mass=P["m"], com=(0, P["l"] / 2, 0),
             inertia=_box_link(P, P["m"], P["h"], P["w"], P["d"]), joint_name="th1"),
    ], gravity=(0, 0, -P["g"]))
    model = _draw_boxes(model, [(P["l"], P["h"], P["w"], P["d"])])
    return attach(model, P.info("single_pendulum", ("th1",), actuators=("T1",), actuated=(0,),
                                q0=(0.0,), dq0=(0.0,), notes={"wall_angle": -math.pi / 2}))
