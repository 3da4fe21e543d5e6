"""Symbolic example models for tests and benchmarks (object arrays of SymPy symbols).

* :func:`symbolic_model`          — a Model from per-body dicts (entries may be SymPy expressions)
* :func:`n_link_pendulum_on_cart` — the mechanism of ``sympy.physics.mechanics.models.n_link_pendulum_on_cart``
* :func:`spatial_chain`           — an n-link 3-D chain with joint axes cycling z, x, y

The proNEu examples are ``multibody.models.ra3link(symbolic=True)``, ``ra3link_prismatic(…)`` and
``starleth(symbolic=True)``.
"""
from __future__ import annotations

import sympy as sp

__all__ = ["symbolic_model", "n_link_pendulum_on_cart", "spatial_chain"]


def symbolic_model(bodies, gravity=(0, 0, -9.81), name="symbolic"):
    """Model from a list of dicts: ``name, parent (index, name or None), joint ('revolute'|'prismatic'|
    'helical'|'fixed' or a code 'Rz' …), axis ('x'|'y'|'z' or 3-vector), pitch, rotation (A_PJ),
    translation (P_r_PJ), mass, com, inertia`` (about the CoM). Entries may be SymPy expressions.

    >>> import sympy as sp
    >>> m = sp.Symbol("m")
    >>> symbolic_model([dict(name="arm", axis="y", mass=m, com=(0, 0, 1))]).mass[0]
    m
    """
    from ..model.tree import _symbolic_tree

    return _symbolic_tree(name, list(bodies), gravity)


def n_link_pendulum_on_cart(n: int):
    """Cart (prismatic x, mass m0) carrying an n-link planar pendulum with point masses m1…mn at
    distances l0…l(n−1) along each link's y axis, gravity −g·y: SymPy's
    ``n_link_pendulum_on_cart`` mechanism, in relative joint angles."""
    m = sp.symbols(f"m0:{n + 1}")
    l = sp.symbols(f"l0:{n}")
    g = sp.Symbol("g")
    bodies = [dict(name="cart", joint="prismatic", axis="x", mass=m[0])]
    for i in range(n):
        bodies.append(dict(name=f"link{i + 1}", parent=i, joint="revolute", axis="z",
                           translation=(0, l[i - 1], 0) if i > 0 else (0, 0, 0),
                           mass=m[i + 1], com=(0, l[i], 0)))
    return symbolic_model(bodies, gravity=(0, -g, 0), name=f"pendulum_on_cart_{n}")


def spatial_chain(n: int):
    """n-link 3-D chain: revolute joints about z, x, y, z, … at (0, 0, l_{i−1}); link i has mass
    m_i, CoM (0, 0, s_i) and diagonal inertia (Ixx_i, Iyy_i, Izz_i); gravity −g·z."""
    g = sp.Symbol("g")
    bodies = []
    for i in range(n):
        m, s, Ixx, Iyy, Izz = sp.symbols(f"m{i} s{i} Ixx{i} Iyy{i} Izz{i}")
        bodies.append(dict(name=f"link{i}", parent=i - 1 if i else None, joint="revolute",
                           axis="zxy"[i % 3],
                           translation=(0, 0, sp.Symbol(f"l{i - 1}")) if i else (0, 0, 0),
                           mass=m, com=(0, 0, s), inertia=sp.diag(Ixx, Iyy, Izz)))
    return symbolic_model(bodies, gravity=(0, 0, -g), name=f"chain3d_{n}")


def spatial_chain_in_mechanics(n: int):
    """The chain of :func:`spatial_chain` written in ``sympy.physics.mechanics`` (a ``LagrangesMethod`` with its
    equations formed), for comparing derivations: returns ``(lm, lm.mass_matrix, lm.forcing)``. The bench
    times SymPy on it, the bridge's tests hold ``to_mechanics``/``from_mechanics`` to it."""
    import sympy.physics.mechanics as me

    q = me.dynamicsymbols(f"q0:{n}")
    g = sp.Symbol("g")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    prev_frame, prev_joint = N, O
    bodies = []
    for i in range(n):
        axis = (prev_frame.z, prev_frame.x, prev_frame.y)[i % 3]
        B = prev_frame.orientnew(f"B{i}", "Axis", [q[i], axis])
        if i == 0:
            J = O
        else:
            J = prev_joint.locatenew(f"J{i}", sp.Symbol(f"l{i - 1}") * prev_frame.z)
            J.v2pt_theory(prev_joint, N, prev_frame)
        Cp = J.locatenew(f"C{i}", sp.Symbol(f"s{i}") * B.z)
        Cp.v2pt_theory(J, N, B)
        m = sp.Symbol(f"m{i}")
        inertia = me.inertia(B, sp.Symbol(f"Ixx{i}"), sp.Symbol(f"Iyy{i}"), sp.Symbol(f"Izz{i}"))
        body = me.RigidBody(f"b{i}", Cp, B, m, (inertia, Cp))
        body.potential_energy = m * g * Cp.pos_from(O).dot(N.z)
        bodies.append(body)
        prev_frame, prev_joint = B, J
    L = me.Lagrangian(N, *bodies)
    lm = me.LagrangesMethod(L, q)
    lm.form_lagranges_equations()
    return lm, lm.mass_matrix, lm.forcing
