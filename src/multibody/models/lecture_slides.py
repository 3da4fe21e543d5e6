"""The lecture slides' (seed 004) MA 23 manipulator, from "COEFFICIENTS DYNAMIQUES DU MA 23".

The slides give the MA 23's mass-matrix coefficients in Khalil's notation (``SS2`` = sin²q2,
``CC(2+3)`` = cos²(q2+q3), ``SC4`` = sin q4 cos q4) with parameters ``M_i`` (masses), ``I_xi``,
``I_yi``, ``I_zi`` (principal inertias about the CoM), ``ℓ2`` and the offsets ``d_i``, ``h_i``,
``d_y4``, ``ℓ_y4``. :func:`ma23` is the geometry those coefficients imply.
"""
from __future__ import annotations

from ..model.model import Model
from ..model.seed import Parameters, attach
from ..model.tree import build_tree

__all__ = ["ma23"]

# Each link frame of the table: x along the joint axis (joints 1, 2, 3, 5), z along the link.
# Columns are the child's axes in the parent's coordinates (A_PJ).
_VERTICAL_X = ((0, 1, 0), (0, 0, 1), (1, 0, 0))      # link 1: x1 = world z (vertical), y1 = X, z1 = Y
_SHOULDER = ((0, 0, 1), (1, 0, 0), (0, 1, 0))        # link 2: x2 = y1 (horizontal), z2 = x1 (up at q2 = 0)


def ma23(symbolic=False, *, M1=12.0, I_x1=0.10, I_y1=0.12, I_z1=0.11,
         M2=8.0, I_x2=0.30, I_y2=0.28, I_z2=0.04, d2=0.30, l2=0.60,
         M3=4.0, I_x3=0.12, I_y3=0.11, I_z3=0.02, d3=0.25,
         M4=1.5, I_x4=0.006, I_y4=0.005, I_z4=0.003, I_yz4=0.0, h1=0.50, d_y4=0.04,
         M5=0.8, I_x5=0.002, I_y5=0.0025, I_z5=0.0012, h2=0.62, l_y4=0.06, d5=0.07,
         M6=3.0, I_x6=0.010, I_y6=0.012, I_z6=0.008, d6=-0.15, g=9.81) -> Model:
    """MA 23: six revolute joints, 1 vertical, 2 and 3 parallel and horizontal, a 3-dof wrist.

    Frames and parameters as the slides' coefficient table implies (every link's principal axes
    are its frame's axes; lengths in m, masses in kg, inertias in kg m² about the CoM):

    * link 1 turns about the vertical (its x axis, ``I_x1``); its CoM is on the axis (``M1``);
    * link 2 (the upper arm) turns about the horizontal x2 through the same point; its z axis runs
      along the arm, up at q2 = 0; CoM at ``d2`` along z2; joint 3 sits at ``l2`` (ℓ2) along z2;
    * link 3 (the forearm) turns about x3 ∥ x2; CoM at ``d3`` along z3;
    * body "6" (``M6``, ``I_*6``) is rigidly fixed to the forearm with its CoM at ``d6`` along
      z3 — in the table it moves with q2 and q3 only (``M6 d6² + I_x6`` in A33, nothing in A44,
      A55): a counterweight behind the elbow (``d6 < 0``);
    * link 4 rolls about the forearm axis z4 = z3 (through joint 3); CoM at ``h1`` along z4
      and ``d_y4`` off the axis (at (0, −d_y4, h1) in link 4's frame);
    * joint 5 (pitch, about x5 = x4) sits at (0, −``l_y4``, ``h2``) in link 4's frame; joint 6
      rolls the hand about z5 = z6, and the hand carries the table's link-5 parameters (``M5``,
      ``I_*5``, CoM at ``d5`` along z6): A66 = I_z5 as the table says. The body between joints 5
      and 6 is massless.

    Gravity ``g`` along −vertical. Coordinates q1 … q6, torques T1 … T6. The table gives no
    numbers: the defaults are illustrative values of an arm of the MA 23's size.

    Link 4 may carry the one product of inertia the table shows, ``I_yz4`` (default 0; the
    slides' tensor has −I_yz off the diagonal).

    How it compares with the slide text (tests/test_ma23.py; "Z" read as 2 throughout). Equal
    exactly, symbolically: h11, h22 and A33 of links 1–3 and body 6. Equal as printed, numerically
    to 1e-12 with only the group's inertial parameters non-zero (the hand's inertia at q6 = 0, where
    the table, which has no q6, holds): h11's link-4 mass and hand inertia terms; h22's link-4
    terms; A33's link-4 and hand inertia terms; A44's hand terms; A55; A66; A13's link-4 mass,
    hand mass and hand inertia terms; A12 − A13. Equal after correcting a misreading (the
    printed text is checked to disagree): h11's and A13's "I_y4" in −2 SC(2+3) C4 I_y4 and
    C(2+3) S4 I_y4 is I_yz4; h11's hand-mass bracket reads CS5, C6, SU, T and d_y4 for C5, C4,
    SC, 2 and ℓ_y4, and CC(2+3) SS4 d5² for CC(2+3) SS5 d5²; h22's M5 bracket is printed with a
    minus sign; A33's hand-mass "2 C3 C5 ℓ_y4 d5" and "CC6 d2²" are 2 CC4 S5 ℓ_y4 d5 and CC4 d5²;
    A44's "I_x4" is I_z4 (joint 4 rolls about z4); A13's "−S(2+3) SC4 I_x4" has the wrong sign.

    Parameters
    ----------
    symbolic : bool, collection of str, or mapping str → sympy.Expr, default False
        Which parameters become SymPy symbols: none (a numeric model), all (``True``), the named
        ones, or the given expressions; the numbers below stay their values (``parameters(model)``).
    M1, M2, M3, M4, M5, M6 : float
        Masses (kg) of links 1–4, the hand (5) and the counterweight body 6.
    I_x1, I_y1, I_z1, I_x2, I_y2, I_z2, I_x3, I_y3, I_z3, I_x4, I_y4, I_z4, I_x5, I_y5, I_z5, I_x6, I_y6, I_z6 : float
        Principal inertias (kg·m²) about each body's centre of mass.
    I_yz4 : float, default 0.0
        Link 4's product of inertia (kg·m²).
    d2, d3, d5, d6 : float
        Centre-of-mass offsets (m) along z of links 2, 3, the hand and body 6.
    l2 : float
        The upper arm's length ℓ2 (m): joint 3's offset along z2.
    h1, d_y4 : float
        Link 4's centre of mass at (0, −d_y4, h1) (m).
    h2, l_y4 : float
        Joint 5 at (0, −l_y4, h2) in link 4's frame (m).
    g : float, default 9.81
        Gravity (m/s²) along −vertical.

    Returns
    -------
    Model
        Six revolute joints q1 … q6, with :class:`SeedInfo` attached.

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
    >>> model = mb.models.ma23()
    >>> model.nv, mb.models.seed_info(model).coordinates
    (6, ('q1', 'q2', 'q3', 'q4', 'q5', 'q6'))
    >>> H = mb.crba(model, np.zeros(6))
    >>> bool(abs(H[5, 5] - 0.0012) < 1e-15)            # A66 = I_z5
    True
    """
    P = Parameters("ma23", symbolic, {k: v for k, v in locals().items() if k != "symbolic"})

    def inertia(k):
        return P.diag(P[f"I_x{k}"], P[f"I_y{k}"], P[f"I_z{k}"])

    I4 = inertia(4)        # the slides' inertia tensor has −I_yz off the diagonal
    I4[1, 2] = I4[2, 1] = 0 - P["I_yz4"]

    model = build_tree("MA23", [
        dict(name="link1", joint="Rx", rotation=_VERTICAL_X, mass=P["M1"], inertia=inertia(1), joint_name="q1"),
        dict(name="link2", parent="link1", joint="Rx", rotation=_SHOULDER, mass=P["M2"], com=(0, 0, P["d2"]),
             inertia=inertia(2), joint_name="q2"),
        dict(name="link3", parent="link2", joint="Rx", translation=(0, 0, P["l2"]), mass=P["M3"],
             com=(0, 0, P["d3"]), inertia=inertia(3), joint_name="q3"),
        dict(name="body6", parent="link3", joint="fixed", mass=P["M6"], com=(0, 0, P["d6"]), inertia=inertia(6),
             joint_name="body6_fixed"),
        dict(name="link4", parent="link3", joint="Rz", mass=P["M4"], com=(0, -P["d_y4"], P["h1"]),
             inertia=I4, joint_name="q4"),
        dict(name="wrist5", parent="link4", joint="Rx", translation=(0, -P["l_y4"], P["h2"]), joint_name="q5"),
        dict(name="hand", parent="wrist5", joint="Rz", mass=P["M5"], com=(0, 0, P["d5"]), inertia=inertia(5),
             joint_name="q6"),
    ], gravity=(0, 0, -P["g"]))
    q = tuple(f"q{k}" for k in range(1, 7))
    return attach(model, P.info("MA23", q, actuators=tuple(f"T{k}" for k in range(1, 7)), actuated=tuple(range(6)),
                                q0=(0.0,) * 6, dq0=(0.0,) * 6))
