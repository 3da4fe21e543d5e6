"""The IFToMM / Univ. A Coruña library of computational benchmark problems for multibody systems.

Source: M. González, D. Dopico, U. Lugrís, J. Cuadrado, "A benchmarking system for MBS simulation
software: problem standardization and performance measurement", Multibody System Dynamics 16
(2006) 179–190, and the library's problem pages (http://lim.ii.udc.es/mbsbenchmark,
``A0x_specification.xml``; now iftomm-multibody.org/benchmark).  Each constructor builds the
problem's mechanism from the public API (``ModelBuilder`` and the constraint descriptions), its
loop closures in ``model.constraints``; the runs, references and error measures live in
:mod:`multibody.validation`.

=========================  ===============================================================
constructor                problem
=========================  ===============================================================
``a01_pendulum``           A01 simple pendulum (1 kg point mass on a massless 1 m bar)
``a02_n_four_bar``         A02 N-four-bar mechanism (N = 40 as specified; singular when flat)
``a03_andrews``            A03 Andrews' squeezing mechanism (Hairer–Wanner's parameters)
=========================  ===============================================================

>>> import multibody as mb
>>> model = mb.models.a02_n_four_bar(3)
>>> model.nv, len(model.constraints)          # 4 cranks + 3 couplers, one closure per window
(7, 3)
"""
from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import ArrayLike

from .. import _checks
from ..model.builder import ModelBuilder
from ..model.constraints import PointConstraint
from ..model.model import Model

__all__ = ["a01_pendulum", "a02_n_four_bar", "a02_start", "A02_START", "a03_andrews", "a03_forces", "ANDREWS",
           "ANDREWS_Q0", "ANDREWS_ORDER"]

#: gravity of every A-series problem: 9.81 N/kg along −y
GRAVITY = 9.81


def _slender_rod(length: float, mass: float) -> dict:
    """A uniform slender rod along the body's x axis from its joint (inertia about its centre)."""
    i = mass * length * length / 12.0
    return dict(mass=mass, com=[length / 2, 0.0, 0.0], inertia=np.diag([0.0, i, i]))


def a01_pendulum(mass: float = 1.0, length: float = 1.0) -> Model:
    """IFToMM benchmark A01: the planar simple pendulum.

    A lumped mass of 1 kg on a massless link 1 m long, pinned to the ground at the origin, under
    gravity 9.81 N/kg along −y (``A01_specification.xml``).  The one joint ``theta`` turns about z;
    at θ = 0 the bar lies along +x, so P1 = (L cos θ, L sin θ): the problem's start (horizontal,
    P1 at x = +1 m, at rest) is θ = 0, θ̇ = 0.

    Parameters
    ----------
    mass : float, optional
        The point mass P1, kg (default 1).
    length : float, optional
        The bar length, m (default 1).

    Returns
    -------
    Model
        One revolute joint ``theta``; the body ``P1`` carries the point mass at its x = ``length``.

    Raises
    ------
    ValueError
        A mass or length that is not a finite number > 0.

    Examples
    --------
    >>> import multibody as mb
    >>> m = mb.models.a01_pendulum()
    >>> m.nv, float(mb.hand_c(m, [0.0], [0.0])[0][0, 0])   # H = m L²
    (1, 1.0)
    """
    m = _checks.number("mass", mass, positive=True)
    L = _checks.number("length", length, positive=True)
    b = ModelBuilder("iftomm_a01_pendulum", gravity=(0.0, -GRAVITY, 0.0))
    b.add_body("P1", None, "revolute", axis=[0, 0, 1], mass=m, com=[L, 0.0, 0.0], inertia=np.zeros((3, 3)),
               joint_name="theta")
    return dataclasses.replace(b.build(), planar=True)


#: A02's start: every crank vertical (θ = π/2 from +x), B0 moving at ẋ = +1 m/s (θ̇ = −1 rad/s)
A02_START = dict(theta=np.pi / 2, theta_dot=-1.0)


def a02_n_four_bar(n: int = 40, length: float = 1.0, mass: float = 1.0) -> Model:
    """IFToMM benchmark A02: the one-degree-of-freedom assembly of ``n`` four-bar linkages.

    2N+1 uniform links 1 m long, 1 kg each, under gravity 9.81 N/kg along −y
    (``A02_specification.xml``; N = 40 as specified): N+1 cranks pinned to the ground at
    A_i = (i, 0), i = 0…N, and N couplers joining the cranks' free ends B_{i−1} and B_i.  When
    the mechanism is flat (cranks horizontal) its mobility jumps from 1 to N+1 — the singular
    positions the problem is about; its closure Jacobian then loses N rows of rank.

    As a tree: each crank ``crank{i}`` hangs from the ground by its revolute joint (angle θ_i
    from +x), each coupler ``coupler{i}`` (i = 1…N) from the end of ``crank{i-1}`` (its angle
    relative to that crank); the window is closed by a :class:`~multibody.PointConstraint` pinning
    the coupler's far end to the end of ``crank{i}`` (rows x, y).  The problem's start is every
    θ_i = π/2 (cranks vertical, couplers level: relative angle −π/2), B0 = end of ``crank0``
    moving at ẋ = 1 m/s: :func:`a02_start`.

    Parameters
    ----------
    n : int, optional
        The number of four-bar windows (default 40, the specification's).
    length, mass : float, optional
        Every link's length (m) and mass (kg) (defaults 1, 1).

    Returns
    -------
    Model
        2n+1 revolute joints (``crank{i}_joint``, ``coupler{i}_joint``); ``model.constraints`` the n
        closures (2 rows each).  Their Jacobian is rank-deficient when the cranks are horizontal:
        solve them with ``mb.ConstraintSet(*model.constraints, redundant="least_squares")``.

    Raises
    ------
    ValueError
        ``n`` < 1, or a length or mass that is not a finite number > 0.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> model = mb.models.a02_n_four_bar(2)
    >>> q, qd = a02_start(model)
    >>> c, cdot = mb.ConstraintSet(*model.constraints).residual(model, q, qd)
    >>> bool(np.allclose(c, 0) and np.allclose(cdot, 0))
    True
    """
    n = _checks.integer("n", n, lo=1)
    L = _checks.number("length", length, positive=True)
    m = _checks.number("mass", mass, positive=True)
    b = ModelBuilder(f"iftomm_a02_{n}_four_bar", gravity=(0.0, -GRAVITY, 0.0))
    for i in range(n + 1):
        b.add_body(f"crank{i}", None, "revolute", axis=[0, 0, 1], joint_translation=[i * L, 0.0, 0.0], **_slender_rod(L, m))
    for i in range(1, n + 1):
        b.add_body(f"coupler{i}", f"crank{i - 1}", "revolute", axis=[0, 0, 1], joint_translation=[L, 0.0, 0.0],
                   **_slender_rod(L, m))
    closures = tuple(PointConstraint(f"coupler{i}", [L, 0.0, 0.0], f"crank{i}", [L, 0.0, 0.0], axes="xy",
                                     name=f"window{i}") for i in range(1, n + 1))
    return dataclasses.replace(b.build(), planar=True, constraints=closures)


def a02_start(model: Model, theta: float = A02_START["theta"],
              theta_dot: float = A02_START["theta_dot"]) -> tuple[np.ndarray, np.ndarray]:
    """(q, q̇) of :func:`a02_n_four_bar` with every crank at angle ``theta`` turning at ``theta_dot``.

    The couplers stay parallel to the ground line (the windows are parallelograms): their angle
    relative to the crank they hang from is −θ, its rate −θ̇.

    Parameters
    ----------
    model : Model
        A model built by :func:`a02_n_four_bar`.
    theta, theta_dot : float, optional
        The cranks' angle from +x (rad) and its rate (rad/s); defaults: the specification's start
        (π/2, −1: B0 moves at +1 m/s along x).

    Returns
    -------
    tuple of ndarray
        q (nv,), q̇ (nv,).

    Raises
    ------
    ValueError
        A model that is not an N-four-bar (its joint count is not odd), or a non-finite angle or rate.

    Examples
    --------
    >>> import multibody as mb
    >>> q, qd = a02_start(mb.models.a02_n_four_bar(1))
    >>> [round(float(v), 4) for v in q], [float(v) for v in qd]
    ([1.5708, 1.5708, -1.5708], [-1.0, -1.0, 1.0])
    """
    th = _checks.number("theta", theta)
    w = _checks.number("theta_dot", theta_dot)
    if model.nv % 2 != 1 or model.nv < 3:
        raise ValueError(f"model: expected an N-four-bar (2N+1 joints), got {model.nv} joints")
    n = model.nv // 2
    q = np.concatenate([np.full(n + 1, th), np.full(n, -th)])
    qd = np.concatenate([np.full(n + 1, w), np.full(n, -w)])
    return q, qd


#: Andrews' squeezing mechanism's parameters (SI units): Hairer & Wanner, *Solving Ordinary
#: Differential Equations II*, §VII.7 (Andrews' problem), as the Test Set for IVP Solvers (Bari)
#: states them (problem "andrews"); mom is the constant drive torque on the crank, c0 and l0 the
#: spring's stiffness and rest length
ANDREWS = dict(m1=.04325, m2=.00365, m3=.02373, m4=.00706, m5=.07050, m6=.00706, m7=.05498,
               xa=-.06934, ya=-.00227, xb=-.03635, yb=.03273, xc=.014, yc=.072, c0=4530.0,
               i1=2.194e-6, i2=4.410e-7, i3=5.255e-6, i4=5.667e-7, i5=1.169e-5, i6=5.667e-7, i7=1.912e-5,
               d=28e-3, da=115e-4, e=2e-2, ea=1421e-5, rr=7e-3, ra=92e-5, l0=7785e-5, ss=35e-3, sa=1874e-5,
               sb=1043e-5, sc=18e-3, sd=2e-2, ta=2308e-5, tb=916e-5, u=4e-2, ua=1228e-5, ub=449e-5, zf=2e-2,
               zt=4e-2, fa=1421e-5, mom=33e-3)

#: the paper's coordinates (β, Θ, γ, Φ, δ, Ω, ε) at q = our joint order (β, Θ, γ, δ, Φ, ε, Ω) taken
#: in this order: ``q_paper = q[ANDREWS_ORDER]`` (δ and ε carry Φ and Ω, so their joints come first)
ANDREWS_ORDER = (0, 1, 2, 4, 3, 6, 5)

#: the consistent start of Hairer & Wanner (at rest), in the paper's order β, Θ, γ, Φ, δ, Ω, ε (rad)
ANDREWS_Q0 = (-0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
              0.222668390165885884674473185609, 0.487364979543842550225598953530,
              -0.222668390165885884674473185609, 1.23054744454982119249735015568)


def _disc(mass, com, izz):
    """A planar body: its mass, centre of mass (body x, y) and moment of inertia about z at the CoM."""
    return dict(mass=mass, com=[com[0], com[1], 0.0], inertia=np.diag([izz / 2, izz / 2, izz]))


def a03_andrews() -> Model:
    """IFToMM benchmark A03: Andrews' squeezing mechanism (seven bodies, three loops).

    The seven-body planar mechanism of Andrews & Manning as stated by Hairer & Wanner (*Solving
    ODEs II*, §VII.7) and the Test Set for IVP Solvers (Mazzia & Magherini, Univ. Bari, problem
    "andrews"), from which the IFToMM library takes it (``A03_specification.xml``): no gravity, a
    constant torque mom = 0.033 N m drives the crank, a spring (c0 = 4530 N/m, rest length 0.07785 m)
    pulls point D of body 3 toward the fixed point C.

    As a tree (``model.constraints`` closes the three loops at the paper's point E): the crank
    ``b1`` (β) turns about O, ``b2`` (Θ, relative) hangs from it at F = rr along b1; ``b3`` (γ)
    turns about B; ``b5`` (δ) about A with ``b4`` (Φ, relative) hanging from it zt along b5; ``b7``
    (ε) about A with ``b6`` (Ω, relative) hanging from it at (0, −u).  E (−d along b2) is pinned to
    b3's (0, −ss), to b4's (0, −e) and to b6's (zf, 0): three :class:`~multibody.PointConstraint`
    rows x, y each.  The centres of mass (ra, da, (sa, sb), (ta, tb), e − ea, zf − fa, (ua, ub)
    from the joints) and the moments of inertia are the paper's, so the joint-space inertia is its
    M(q).  The loads are :func:`a03_forces` (as ``f_ext``).

    Returns
    -------
    Model
        Seven revolute joints in the order β, Θ, γ, δ, Φ, ε, Ω (:data:`ANDREWS_ORDER` maps them to
        the paper's); the three closures (6 rows) in ``model.constraints``.

    Raises
    ------
    ValueError
        Never for the fixed parameters (the builder's checks run on them).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> model = a03_andrews()
    >>> q0 = np.array(ANDREWS_Q0)[list(ANDREWS_ORDER)]          # the paper's start, our order
    >>> c, _ = mb.ConstraintSet(*model.constraints).residual(model, q0, np.zeros(7))
    >>> bool(np.abs(c).max() < 1e-15), model.nv
    (True, 7)
    """
    p = ANDREWS
    b = ModelBuilder("iftomm_a03_andrews", gravity=(0.0, 0.0, 0.0))
    z = [0, 0, 1]
    b.add_body("b1", None, "revolute", axis=z, joint_name="beta", **_disc(p["m1"], (p["ra"], 0.0), p["i1"]))
    b.add_body("b2", "b1", "revolute", axis=z, joint_translation=[p["rr"], 0, 0], joint_name="Theta",
               **_disc(p["m2"], (-p["da"], 0.0), p["i2"]))
    b.add_body("b3", None, "revolute", axis=z, joint_translation=[p["xb"], p["yb"], 0], joint_name="gamma",
               **_disc(p["m3"], (p["sa"], p["sb"]), p["i3"]))
    b.add_body("b5", None, "revolute", axis=z, joint_translation=[p["xa"], p["ya"], 0], joint_name="delta",
               **_disc(p["m5"], (p["ta"], p["tb"]), p["i5"]))
    b.add_body("b4", "b5", "revolute", axis=z, joint_translation=[p["zt"], 0, 0], joint_name="Phi",
               **_disc(p["m4"], (0.0, -(p["e"] - p["ea"])), p["i4"]))
    b.add_body("b7", None, "revolute", axis=z, joint_translation=[p["xa"], p["ya"], 0], joint_name="epsilon",
               **_disc(p["m7"], (p["ua"], p["ub"]), p["i7"]))
    b.add_body("b6", "b7", "revolute", axis=z, joint_translation=[0, -p["u"], 0], joint_name="Omega",
               **_disc(p["m6"], (p["zf"] - p["fa"], 0.0), p["i6"]))
    E = [-p["d"], 0.0, 0.0]
    closures = (PointConstraint("b2", E, "b3", [0.0, -p["ss"], 0.0], axes="xy", name="E_b3"),
                PointConstraint("b2", E, "b4", [0.0, -p["e"], 0.0], axes="xy", name="E_b4"),
                PointConstraint("b2", E, "b6", [p["zf"], 0.0, 0.0], axes="xy", name="E_b6"))
    return dataclasses.replace(b.build(), planar=True, constraints=closures)


def a03_forces(model: Model, q: ArrayLike, qd: ArrayLike | None = None) -> np.ndarray:
    """Andrews' loads on :func:`a03_andrews` as ``f_ext`` (nb, 6), spatial forces in base coordinates.

    The drive torque mom about z on the crank ``b1``, and the spring force at D = B + R(γ)(sd, −sc)
    on ``b3``: F = −c0 (L − l0)/L (D − C), L = |D − C| (its moment about the origin, [p × F; F]).

    Parameters
    ----------
    model : Model
        The model of :func:`a03_andrews`.
    q : array_like (7,)
        Its joint angles (our order).
    qd : array_like, optional
        Unused (the loads depend on q only); accepted so that ``lambda t, q, qd: a03_forces(model, q)``
        is not needed.

    Returns
    -------
    ndarray (nb, 6)
        The external forces.

    Raises
    ------
    ValueError
        A model without the bodies b1 and b3.

    Examples
    --------
    >>> import numpy as np
    >>> m = a03_andrews()
    >>> f = a03_forces(m, np.array(ANDREWS_Q0)[list(ANDREWS_ORDER)])
    >>> f.shape, float(f[m.body_index("b1"), 2])
    ((7, 6), 0.033)
    """
    p = ANDREWS
    g = float(q[2])
    xd = p["xb"] + p["sd"] * np.cos(g) + p["sc"] * np.sin(g)
    yd = p["yb"] + p["sd"] * np.sin(g) - p["sc"] * np.cos(g)
    L = np.hypot(xd - p["xc"], yd - p["yc"])
    F = -p["c0"] * (L - p["l0"]) / L
    fx, fy = F * (xd - p["xc"]), F * (yd - p["yc"])
    f = np.zeros((model.nb, 6))
    f[model.body_index("b1"), 2] = p["mom"]
    f[model.body_index("b3")] = [0.0, 0.0, xd * fy - yd * fx, fx, fy, 0.0]
    return f
