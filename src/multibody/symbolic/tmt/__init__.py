"""TMT method: the linear vector form of Lagrange's equations with constraints and collisions.

Source: Sadati, Naghibi, Naraghi, "An Automatic Algorithm to Derive Linear Vector Form of
Lagrangian Equation of Motion with Collision and Constraint", IRIS 2015 (seed ``002_…``).
Equation numbers below are the paper's.

The system is described by the absolute coordinates of its bodies, all functions of the
generalized coordinates ``q``::

    x(q) = [r_1, θ_1, r_2, θ_2, …]        planar bodies: r_i ∈ R², θ_i the absolute angle
    ẋ    = [ṙ_1, ω_1, ṙ_2, ω_2, …]        3-D bodies: r_i ∈ R³, ω_i the angular velocity (eq. 2)

and the method is, step by step (the boxed quantities of the paper):

    T = ∂x/∂q                          (3)   ẋ = T q̇, with the rows of ω_i = T_ωi q̇ (eq. 2)
    D = ∂(T q̇)/∂q                      (3)   ẍ = T q̈ + D q̇
    M = diag[m_i, m_i, (m_i,) I_i, …]        the "diagonal" mass matrix of the bodies
    Tᵀ M T q̈ = Tᵀ (f − M D q̇) + f_c/nc + f_k + f_v                              (4)

    c(q) = 0  →  c̈ = T_cn q̈ + D_cn q̇ = 0,   T_cn = ∂c/∂q,  D_cn = ∂(T_cn q̇)/∂q   (5)

    [ M̄     −T_cnᵀ ] [ q̈ ]   [     d     ]
    [ T_cn    0    ] [ λ  ] = [ −D_cn q̇  ],   M̄ = TᵀMT,   d = Tᵀ(f_g − M D q̇) + f_c/nc + f_k + f_v  (6)

    [ M̄     −T_cnᵀ  −T_ρᵀ ] [ q̇*  ]   [ M̄     ]
    [ T_cn    0      0    ] [ ρ_λ ] = [ 0     ] q̇,     T_ρ q̇* = E T_ρ q̇    (8)          (9)
    [ T_ρ     0      0    ] [ ρ   ]   [ E T_ρ ]

Notes on the paper's text (each checked by the tests):

* Eq. (6) prints ``D_cn q̇`` on the right-hand side; eq. (5) gives ``T_cn q̈ = −D_cn q̇``, which
  is what is built here (the tests check c̈ = 0).
* Springs and dampers are printed with ``(T_s1 − T_s1)``; the generalized forces built here are
  ``f_k = −k(|l| − l0) (T_s2 − T_s1)ᵀ l̂`` (a stretched spring pulls its ends together) and
  ``f_v = −c (T_v2 − T_v1)ᵀ l̇`` (a damper takes energy out), ``f_k = −k(θ − θ0) ∂θ/∂q`` for
  rotational springs.
* 3-D bodies: the paper's M = diag[m, m, m, I] multiplies the angular part of ẍ. With the
  angular velocity taken in body coordinates (ω_B, ``skew(ω_B) = Rᵀ (∂R/∂q q̇)``, the
  body-frame form of eq. 2) the inertia block I_B is constant, and Euler's equation adds the
  gyroscopic force ``−ω_B × I_B ω_B`` to f. It vanishes for planar motion, where eq. (4) is
  exactly the paper's.
* Eq. (8) is used literally: ``T_ρ q̇* = E T_ρ q̇``. Newton's restitution law with coefficient
  e along a unit normal n (and no tangential slip) is ``E = −e n nᵀ``; see
  :func:`newton_restitution`. A contact may also be restricted to chosen directions (rows), e.g.
  only its normal, for a frictionless impact.

Result convention (shared with proNEu, :class:`EquationsOfMotion`)::

    M q̈ + b + g = Sᵀ τ,     M = TᵀMT,
    b = Tᵀ (M D q̇ + f_gyro) − f_v − f_c/nc      (convective, gyroscopic, dampers, applied forces)
    g = −Tᵀ f_g − f_k                            (gravity and springs: g = ∂V/∂q)

Everything is derived in SymEngine (:func:`~.system.tree_terms` for the bodies, the same code for a
bare tree and a mechanism); M, b, g are converted to SymPy when first read, and so is each entry of
``extra`` and ``kinematics`` (a :class:`~.system.LazyDict`: reading T costs nothing until then).

``extra`` keys (all SymPy):
    "T", "Mdiag", "D" (matrix D of eq. 3), "Dqd" (D q̇), "x" (stacked CoM positions; angles for
    planar bodies), "b_convective", "g_gravity", "f_springs", "f_dampers", "f_forces",
    "kinetic_energy", "potential_energy",
    "constraint" (c), "constraint_jacobian" (T_cn), "constraint_D" (D_cn),
    "constraint_convective" (γ with c̈ = T_cn q̈ + γ; γ = D_cn q̇ for time-free constraints),
    "augmented_system" (dict: "A", "rhs" of eq. 6, unknowns [q̈; λ]),
    "contact_jacobian" (T_ρ), "contact_D" (D_ρ), "contact_points",
    "impact_map" (dict: "A", "B", "E" of eq. 9, unknowns [q̇*; ρ_λ; ρ], B multiplies q̇),
    "time" (the time symbol or None).

The package follows the paper: :mod:`.elements` (the input: bodies, forces, springs, dampers,
constraints, contacts, the joint cube J of eq. 1), :mod:`.system` (:class:`TMTSystem`, eqs. 2–9),
:mod:`.from_model` (a ``Model`` or ``Mechanism`` in that input form: :func:`tmt_system`,
:func:`mechanism_point`, :func:`mechanism_rotation`; ``derive(…, "tmt")``) and :mod:`.fourier`
(a bare tree's eqs. 3–4 in the readable form directly: T and D q̇ as derivatives of the bodies'
positions in harmonics, what ``derive(model, "tmt")`` returns unless ``raw``).
"""
from .elements import (Constraint, Contact, LinearDamper, LinearSpring, PointForce, RotationalDamper,
                       RotationalSpring, TMTBody, joint_chain, newton_restitution)
from .from_model import (derive_tmt, mechanism_point, mechanism_rotation, tmt_equations, tmt_system,
                         tmt_system_from_model, tree_kinematics)
from .system import TMTSystem

__all__ = ["TMTBody", "PointForce", "LinearSpring", "RotationalSpring", "LinearDamper", "RotationalDamper",
           "Constraint", "Contact", "TMTSystem", "derive_tmt", "newton_restitution", "tree_kinematics",
           "joint_chain", "tmt_system_from_model", "tmt_equations", "tmt_system", "mechanism_point",
           "mechanism_rotation"]
