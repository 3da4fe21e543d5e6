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
``a04_bricard``            A04 Bricard's mechanism (five rods, six revolute joints; redundant)
``a05_flyball_governor``   A05 stiff flyball governor (couplers as stiff spring-dampers)
=========================  ===============================================================

The geometry, initial states and simulated times of A04 and A05 are the ones of the OpenSim
implementation of the library by its users (Tagliapietra, Vivian, Ceseracciu, Reggiani,
"Multibody Systems Benchmark in OpenSim", University of Padua, 2013–2015: public repository
RehabEngGroup/MBSbenchmarksInOpenSim, ``src/A04-BricardsMechanism``, ``src/A05-FlyballGovernor``
and ``help/benchmarks/A0*.rst``): the library's own specification pages were not reachable.

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
from ..model.constraints import AxisConstraint, PointConstraint
from ..model.model import Model

__all__ = ["a01_pendulum", "a02_n_four_bar", "a02_start", "A02_START", "a03_andrews", "a03_forces", "ANDREWS",
           "ANDREWS_Q0", "ANDREWS_ORDER", "a04_bricard", "BRICARD_JOINTS", "a05_flyball_governor", "a05_forces",
           "FLYBALL", "A05_START"]

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


#: A04's six revolute joints at the start (all joint angles 0): (point, axis) in world coordinates
#: (m), in the order of the loop O → P1 → … → P5 → O; the rods run between consecutive points
BRICARD_JOINTS = (((0.0, 0.0, 0.0), (0.0, 1.0, 0.0)), ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
                  ((1.0, -1.0, 0.0), (1.0, 0.0, 0.0)), ((1.0, -1.0, 1.0), (0.0, 1.0, 0.0)),
                  ((0.0, -1.0, 1.0), (0.0, 0.0, 1.0)), ((0.0, 0.0, 1.0), (1.0, 0.0, 0.0)))


def _bar(mass: float, length: float, side: float, along: int, sign: float) -> dict:
    """A uniform bar of square section ``side`` from its joint along ±body axis ``along``."""
    i_long, i_trans = mass * 2 * side * side / 12.0, mass * (length * length + side * side) / 12.0
    com = np.zeros(3)
    com[along] = sign * length / 2
    return dict(mass=mass, com=com, inertia=np.diag(np.where(np.arange(3) == along, i_long, i_trans)))


def a04_bricard(mass: float = 1.0, length: float = 1.0, side: float = 0.1) -> Model:
    """IFToMM benchmark A04: Bricard's mechanism, over-constrained, with one degree of freedom.

    Five uniform rods (1 kg, 1 m, square section 0.1 m) and six revolute joints, gravity 9.81 N/kg
    along −y (``A04_specification.xml``; the library's page gives the problem, the OpenSim
    implementation of its users the geometry: see the module docstring).  At the start (every
    joint angle 0, at rest) the rods run O(0,0,0) → P1(1,0,0) → P2(1,−1,0) → P3(1,−1,1) →
    P4(0,−1,1) → P5(0,0,1), the joint axes at O…P5 along y, z, x, y, z, x
    (:data:`BRICARD_JOINTS`; a trihedral Bricard linkage).  Grübler's count gives 6·5 − 5·6 = 0
    degrees of freedom; the special axes give the mechanism one.

    As a tree: ``rod1`` … ``rod5`` hang one from the other from O (joints ``j1`` … ``j5``); the
    joint at P5 closes the loop as a :class:`~multibody.PointConstraint` (3 rows) and an
    :class:`~multibody.AxisConstraint` (2 rows) in ``model.constraints``.  5 joints, 5 rows, but the
    rows' Jacobian has rank 4 everywhere along the motion: one row is redundant, so solve them with
    ``mb.ConstraintSet(*model.constraints, redundant="least_squares")``.  The point the benchmark
    records (its "P3", the joint between the second and third rod: (1, −1, 0) at the start, as
    the OpenSim implementation records it) is the origin of ``rod3``.

    Parameters
    ----------
    mass, length, side : float, optional
        Every rod's mass (kg), length (m) and the side of its square section (m) (defaults 1, 1, 0.1).

    Returns
    -------
    Model
        Five revolute joints ``j1`` … ``j5`` (angles 0 at the start); the closure's 5 rows in
        ``model.constraints``.

    Raises
    ------
    ValueError
        A mass, length or side that is not a finite number > 0.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> model = mb.models.a04_bricard()
    >>> cs = mb.ConstraintSet(*model.constraints, redundant="least_squares")
    >>> ev = cs.evaluate(model, np.zeros(5), np.zeros(5))
    >>> model.nv, ev.J.shape, int(np.linalg.matrix_rank(ev.J))      # 5 joints, 5 rows of rank 4
    (5, (5, 5), 4)
    """
    m = _checks.number("mass", mass, positive=True)
    L = _checks.number("length", length, positive=True)
    a = _checks.number("side", side, positive=True)
    pts = np.array([p for p, _ in BRICARD_JOINTS]) * L
    b = ModelBuilder("iftomm_a04_bricard", gravity=(0.0, -GRAVITY, 0.0))
    parent = None
    for i in range(5):
        d = pts[i + 1] - pts[i]
        along = int(np.argmax(np.abs(d)))
        # every body frame is parallel to the world's at the start, its origin at its joint
        b.add_body(f"rod{i + 1}", parent, "revolute", axis=BRICARD_JOINTS[i][1],
                   joint_translation=pts[i] - (pts[i - 1] if i else 0.0), joint_name=f"j{i + 1}",
                   **_bar(m, L, a, along, float(np.sign(d[along]))))
        parent = f"rod{i + 1}"
    u6 = np.array(BRICARD_JOINTS[5][1])
    closure = (PointConstraint("rod5", pts[5] - pts[4], None, pts[5], name="P5_point"),
               AxisConstraint("rod5", u6, None, directions_b=(np.roll(u6, 1), np.roll(u6, 2)), name="P5_axis"))
    return dataclasses.replace(b.build(), constraints=closure)


#: A05's data (SI units): shaft and rods 1 × 0.01 × 0.01 m, slider a 0.1 m cube, density 3000 kg/m³,
#: point masses 5 kg at the rods' ends, spring-dampers K = 8e5 N/m, C = 4e4 N s/m, rest length
#: 0.5 m from the slider's sides (±``offset``) to the rods' midpoints; the rods are pinned ±``offset``
#: from the shaft's axis at its top; ``alpha`` the rods' start angle below the horizontal (rad)
FLYBALL = dict(length=1.0, section=0.01, slider=0.1, density=3000.0, ball=5.0, K=8e5, C=4e4, rest=0.5,
               offset=0.05, alpha=np.pi / 6)

#: A05's start: the shaft turning at 2π rad/s, the slider at s = 0.5 m, rods at α = 30° (q = 0), at rest
A05_START = dict(q=(0.0, 0.5, 0.0, 0.0), qd=(2 * np.pi, 0.0, 0.0, 0.0))


def a05_flyball_governor() -> Model:
    """IFToMM benchmark A05: the stiff flyball governor (Watt's), its couplers stiff spring-dampers.

    A vertical shaft turning freely about y (gravity 9.81 N/kg along −y), a slider along it, and two
    rods pinned at the shaft's top carrying 5 kg point masses at their ends; the coupler rods of
    the governor are replaced by spring-dampers (K = 8·10⁵ N/m, C = 4·10⁴ N s/m, rest length 0.5 m)
    from the slider's sides to the rods' midpoints (``A05_specification.xml``; the data as in
    :data:`FLYBALL`, the geometry and start as the OpenSim implementation of the library's users
    builds them: see the module docstring).  The damper's fast decay (~10⁴ s⁻¹) against the
    governor's slow motion makes the problem stiff.  The benchmark records the slider's height
    ``s``.

    Joints: ``psi`` (the shaft, about y), ``s`` (the slider's height on it, from the shaft's foot,
    prismatic; 0.5 m at the start: the shaft's middle), ``theta1``, ``theta2`` (the rods, about the
    shaft's z axis, pinned at (±0.05, 1, 0) of the shaft; 0 at the start, when both hang 30° below
    the horizontal and each spring has its rest length).  Shaft, rods and slider are uniform
    prisms of density 3000 kg/m³; each point mass is merged into its rod's inertia.  The
    spring-dampers are :func:`a05_forces` (as ``f_ext``); the start is :data:`A05_START`.

    Returns
    -------
    Model
        Four joints (``psi``, ``s``, ``theta1``, ``theta2``) and four bodies (``shaft``,
        ``slider``, ``rod1``, ``rod2``); ``q_default`` is the start's configuration.

    Raises
    ------
    ValueError
        Never for the fixed data (the builder's checks run on them).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> model = mb.models.a05_flyball_governor()
    >>> q0 = np.array(A05_START["q"])
    >>> a = mb.point_position(model, q0, "slider", [0.05, 0, 0])
    >>> m = mb.point_position(model, q0, "rod1", [0.5, 0, 0])
    >>> round(float(np.linalg.norm(m - a)), 12)                # each spring starts at its rest length
    0.5
    """
    p = FLYBALL
    L, w, rho = p["length"], p["section"], p["density"]
    m_bar = rho * L * w * w
    i_long, i_trans = m_bar * 2 * w * w / 12.0, m_bar * (L * L + w * w) / 12.0
    m_sl = rho * p["slider"] ** 3
    b = ModelBuilder("iftomm_a05_flyball_governor", gravity=(0.0, -GRAVITY, 0.0))
    b.add_body("shaft", None, "revolute", axis=[0, 1, 0], joint_name="psi", mass=m_bar, com=[0.0, L / 2, 0.0],
               inertia=np.diag([i_trans, i_long, i_trans]))
    b.add_body("slider", "shaft", "prismatic", axis=[0, 1, 0], joint_name="s", mass=m_sl,
               inertia=np.eye(3) * m_sl * 2 * p["slider"] ** 2 / 12.0)
    # a rod along its body x from the pin, with the ball at its end: one rigid body
    m_rod = m_bar + p["ball"]
    xc = (m_bar * L / 2 + p["ball"] * L) / m_rod
    i_perp = i_trans + m_bar * (L / 2 - xc) ** 2 + p["ball"] * (L - xc) ** 2
    rod = dict(mass=m_rod, com=[xc, 0.0, 0.0], inertia=np.diag([i_long, i_perp, i_perp]))
    for k, (side, angle) in enumerate(((1.0, -p["alpha"]), (-1.0, np.pi + p["alpha"])), start=1):
        c, s_ = np.cos(angle), np.sin(angle)
        b.add_body(f"rod{k}", "shaft", "revolute", axis=[0, 0, 1], joint_name=f"theta{k}",
                   joint_translation=[side * p["offset"], L, 0.0],
                   joint_rotation=np.array([[c, -s_, 0.0], [s_, c, 0.0], [0.0, 0.0, 1.0]]), **rod)
    # the start's configuration as the model's default (s = 0.5 m, not the neutral 0: the slider's foot)
    return dataclasses.replace(b.build(), qpos0=np.array(A05_START["q"], dtype=float))


def _cross(a, b):
    """a × b of two 3-vectors (np.cross's generality costs more than this right-hand side's whole law)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def a05_forces(model: Model, q: ArrayLike, qd: ArrayLike) -> np.ndarray:
    """A05's two spring-dampers on :func:`a05_flyball_governor` as ``f_ext`` (nb, 6), base coordinates.

    Each acts along the line from the slider's side point A = (±0.05, 0, 0) to the rod's midpoint
    B = (0.5, 0, 0): tension f = K (d − d₀) + C ḋ, d = |B − A|, ḋ = (B − A)·(Ḃ − Ȧ)/d; the force
    f (B − A)/d on the slider at A and its opposite on the rod at B (spatial forces [p × F; F]).

    Parameters
    ----------
    model : Model
        The model of :func:`a05_flyball_governor`.
    q, qd : array_like (4,)
        Its joint positions and velocities.

    Returns
    -------
    ndarray (nb, 6)
        The external forces (moments about the base origin, then forces).

    Raises
    ------
    ValueError
        A model without the bodies ``slider``, ``rod1`` and ``rod2``.

    Examples
    --------
    >>> import numpy as np
    >>> m = a05_flyball_governor()
    >>> f = a05_forces(m, A05_START["q"], A05_START["qd"])      # springs at rest length, not stretching
    >>> bool(np.abs(f).max() < 1e-9)
    True
    """
    from ..kinematics.forward import body_states
    p = FLYBALL
    f = np.zeros((model.nb, 6))
    bs = body_states(model, q, qd)                     # one pass: every pose and velocity [ω; v] (body axes)

    def point(i, r):                                   # world position and velocity of body i's point r
        r = np.asarray(r, dtype=float)
        R, w, v = bs.R[i], bs.v[i, :3], bs.v[i, 3:]
        return bs.p[i] + R @ r, R @ (v + _cross(w, r))
    i_sl = model.body_index("slider")
    for k, side in ((1, 1.0), (2, -1.0)):
        i_rod = model.body_index(f"rod{k}")
        A, vA = point(i_sl, [side * p["offset"], 0.0, 0.0])
        B, vB = point(i_rod, [p["length"] / 2, 0.0, 0.0])
        d = B - A
        n = np.linalg.norm(d)
        e = d / n
        F = (p["K"] * (n - p["rest"]) + p["C"] * float(e @ (vB - vA))) * e    # pulls A toward B when stretched
        f[i_sl] += np.concatenate([_cross(A, F), F])
        f[i_rod] -= np.concatenate([_cross(B, F), F])
    return f
