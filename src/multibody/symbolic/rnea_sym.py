"""Symbolic recursive Newton-Euler (RNEA) and composite-rigid-body (CRBA) algorithms.

The lecture slides' recursion, in each body's own coordinates, on SymEngine 3-vectors:

outward (i = root → leaves), with E = A_PB, p = P_r_PO, Z the joint axis (body coordinates):
    ω_i  = Eᵀω_p + Z q̇_i                                           (revolute, helical)
    ω̇_i  = Eᵀω̇_p + (Eᵀω_p) × Z q̇_i + Z q̈_i
    v̇_i  = Eᵀ(v̇_p + ω̇_p × p + ω_p × (ω_p × p)) + 2(Eᵀω_p) × Z ḋ_i + Z d̈_i   (prismatic, helical)
    v̇_Ci = v̇_i + ω̇_i × c_i + ω_i × (ω_i × c_i)
    F_i = m_i v̇_Ci,   N_i = Θ_Ci ω̇_i + ω_i × Θ_Ci ω_i
inward (i = leaves → root):
    f_i = F_i + Σ_children E_c f_c
    n_i = N_i + c_i × F_i + Σ_children (E_c n_c + p_c × E_c f_c)
    τ_i = n_iᵀZ (revolute),  f_iᵀZ (prismatic),  n_iᵀZ + h f_iᵀZ (helical, pitch h)
gravity: v̇_0 = −g (the base accelerates upwards).

M comes from CRBA with composite inertias (mass, first moment h = m c, rotational inertia about
the body origin), b = RNEA(q, q̇, 0) without gravity, g = RNEA(q, 0, 0) with gravity.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from . import _core as C
from .eom import EquationsOfMotion, register_method
from . import planar as _planar
from .planar import planar_forms, planar_normal
from .tree import FIX, HEL, PRI, REV, SymBody, rotation_chains

__all__ = ["rnea", "crba", "derive_rnea", "rnea_equations", "joint_transform", "inertial_view"]


def joint_transform(body: SymBody, q):
    """(A_PB, P_r_PO) of a body for coordinate values ``q`` (list of SymEngine symbols)."""
    A, t = body.A_PJ, body.t_PJ
    if body.kind == FIX:
        return A, t
    qi = q[body.dof]
    if body.kind in (REV, HEL):
        R = C.axis_rotation(body.axis, qi)
        A = R if C.is_identity(A) else C.mm(A, R)
    if body.kind in (PRI, HEL):
        d = qi if body.kind == PRI else body.pitch * qi
        t = C.add(t, C.scale(d, C.mv(body.A_PJ, body.axis)))
    return A, t


def _rotates(transforms) -> list[bool]:
    """Per joint transform, whether its rotation is other than the identity. The inertial view's
    are all the identity (and a prismatic or fixed joint's often is): the recursions then skip
    ``E v`` and ``E I Eᵀ``, 15 and 90 SymEngine operations that give back what they were given."""
    return [not C.is_identity(E) for E, _ in transforms]


def rnea(bodies: list[SymBody], q, dq, ddq, gravity, transforms=None):
    """Generalized forces τ (list over dofs, length n = len(q)) by the recursion above.

    ``dq``/``ddq`` may be ``None`` (zero); ``gravity`` a 3-vector or ``None`` (zero).
    """
    n = len(q)
    nb = len(bodies)
    if transforms is None:
        transforms = [joint_transform(b, q) for b in bodies]
    rot = _rotates(transforms)
    z3 = [C.ZERO, C.ZERO, C.ZERO]
    w, dw, a = [None] * nb, [None] * nb, [None] * nb
    F, N = [None] * nb, [None] * nb
    a0 = z3 if gravity is None else C.scale(-1, list(gravity))
    for i, bd in enumerate(bodies):
        E, p = transforms[i]
        if bd.parent < 0:
            wp, dwp, ap = z3, z3, a0
        else:
            wp, dwp, ap = w[bd.parent], dw[bd.parent], a[bd.parent]
        lin = ap
        if not C.is_zero_vec(dwp):
            lin = C.add(lin, C.cross(dwp, p))
        if not C.is_zero_vec(wp):
            lin = C.add(lin, C.cross(wp, C.cross(wp, p)))
        if rot[i]:
            ai, wP, dwi = C.mtv(E, lin), C.mtv(E, wp), C.mtv(E, dwp)
        else:
            ai, wP, dwi = lin, wp, dwp
        wi = wP
        qd = dq[bd.dof] if (dq is not None and bd.dof >= 0) else C.ZERO
        qdd = ddq[bd.dof] if (ddq is not None and bd.dof >= 0) else C.ZERO
        Z = bd.axis
        if bd.kind in (REV, HEL):
            wi = C.add(wP, C.scale(qd, Z))
            dwi = C.add(C.add(dwi, C.cross(wP, C.scale(qd, Z))), C.scale(qdd, Z))
        if bd.kind in (PRI, HEL):
            h = C.ONE if bd.kind == PRI else bd.pitch
            ai = C.add(C.add(ai, C.scale(2 * h * qd, C.cross(wP, Z))), C.scale(h * qdd, Z))
        w[i], dw[i], a[i] = wi, dwi, ai
        c, m, Th = bd.com, bd.mass, bd.inertia_com
        aC = C.add(C.add(ai, C.cross(dwi, c)), C.cross(wi, C.cross(wi, c)))
        F[i] = C.scale(m, aC)
        N[i] = C.add(C.mv(Th, dwi), C.cross(wi, C.mv(Th, wi)))
    f = [list(x) for x in F]
    nn = [C.add(N[i], C.cross(bodies[i].com, F[i])) for i in range(nb)]
    tau = [C.ZERO] * n
    for i in range(nb - 1, -1, -1):
        bd = bodies[i]
        if bd.dof >= 0:
            Z = bd.axis
            if bd.kind == REV:
                tau[bd.dof] = C.dot(nn[i], Z)
            elif bd.kind == PRI:
                tau[bd.dof] = C.dot(f[i], Z)
            else:
                tau[bd.dof] = C.dot(nn[i], Z) + bd.pitch * C.dot(f[i], Z)
        if bd.parent >= 0:
            E, p = transforms[i]
            Ef, En = (C.mv(E, f[i]), C.mv(E, nn[i])) if rot[i] else (f[i], nn[i])
            f[bd.parent] = C.add(f[bd.parent], Ef)
            nn[bd.parent] = C.add(nn[bd.parent], C.add(En, C.cross(p, Ef)))
    return tau


def crba(bodies: list[SymBody], q, transforms=None):
    """Joint-space mass matrix (n×n lists) by composite rigid bodies (RBDA table 6.2, 3-vector form)."""
    n = len(q)
    nb = len(bodies)
    if transforms is None:
        transforms = [joint_transform(b, q) for b in bodies]
    rot = _rotates(transforms)
    mc, hc, Ic = [], [], []
    for bd in bodies:
        m, c, Th = bd.mass, bd.com, bd.inertia_com
        cc = C.dot(c, c) if bd.com_sq is None else bd.com_sq
        IO = [[Th[r][k] + m * ((cc if r == k else C.ZERO) - c[r] * c[k]) for k in range(3)]
              for r in range(3)]
        mc.append(m)
        hc.append(C.scale(m, c))
        Ic.append(IO)
    for i in range(nb - 1, -1, -1):
        p_i = bodies[i].parent
        if p_i < 0:
            continue
        E, r = transforms[i]
        if rot[i]:
            h1, I1 = C.mv(E, hc[i]), C.mm(C.mm(E, Ic[i]), C.transpose(E))
        else:
            h1, I1 = hc[i], Ic[i]
        m = mc[i]
        # I_about_parent = I1 − r̃h̃ − h̃r̃ − m r̃r̃  (h, r in parent coordinates)
        rh = C.dot(r, h1)
        rr = C.dot(r, r) if bodies[i].origin_sq is None else bodies[i].origin_sq
        two_rh = rh * 2
        for a_ in range(3):
            for b_ in range(3):
                # d = δ·2 r·h − r_a h_b − h_a r_b,  d2 = m (δ r·r − r_a r_b), left to right as written,
                # the terms with an exact 0 factor left out (the same expression, fewer SymEngine calls)
                d = C.minus_product(C.minus_product(two_rh if a_ == b_ else C.ZERO, r[a_], h1[b_]), h1[a_], r[b_])
                d2 = C.minus_product(rr if a_ == b_ else C.ZERO, r[a_], r[b_])
                if type(d2) is not C._Z:
                    d2 = m * d2
                Ic[p_i][a_][b_] = C._plus(C._plus(C._plus(Ic[p_i][a_][b_], I1[a_][b_]), d), d2)
        hc[p_i] = C.add(hc[p_i], C.add(h1, C.scale(m, r)))
        mc[p_i] = mc[p_i] + m
    M = [[C.ZERO] * n for _ in range(n)]
    z3 = [C.ZERO, C.ZERO, C.ZERO]

    def motion(bd):
        Z = bd.axis
        if bd.kind == REV:
            return Z, z3
        if bd.kind == PRI:
            return z3, Z
        return Z, C.scale(bd.pitch, Z)

    for i, bd in enumerate(bodies):
        if bd.dof < 0:
            continue
        sw, sv = motion(bd)
        # F = Ic s : n = I sw + h × sv, f = m sv − h × sw
        nF = C.add(C.mv(Ic[i], sw), C.cross(hc[i], sv))
        fF = C.sub(C.scale(mc[i], sv), C.cross(hc[i], sw))
        M[bd.dof][bd.dof] = C.dot(sw, nF) + C.dot(sv, fF)
        j = i
        while bodies[j].parent >= 0:
            E, r = transforms[j]
            if rot[j]:
                fF, nF = C.mv(E, fF), C.mv(E, nF)
            nF = C.add(nF, C.cross(r, fF))
            j = bodies[j].parent
            bj = bodies[j]
            if bj.dof >= 0:
                swj, svj = motion(bj)
                M[bd.dof][bj.dof] = M[bj.dof][bd.dof] = C.dot(swj, nF) + C.dot(svj, fF)
    return M


def derive_rnea(bodies: list[SymBody], q, dq, gravity, progress: Callable[[str], None] | None = None,
                frame: str = "auto"):
    """(M, b, g, frame) as SymEngine lists: CRBA, RNEA(q, q̇, 0) without gravity, RNEA(q, 0, 0);
    ``frame``: "body" (each body's coordinates), "inertial" or "auto" (see :func:`inertial_view`)."""
    say = progress or (lambda msg: None)
    bodies, transforms, frame = inertial_view(bodies, q, frame)
    say(f"recursion in {frame} coordinates")
    say("CRBA: mass matrix")
    M = crba(bodies, q, transforms)
    say("RNEA: Coriolis and centrifugal terms b = RNEA(q, q̇, 0), no gravity")
    b = rnea(bodies, q, dq, None, None, transforms)
    say("RNEA: gravity terms g = RNEA(q, 0, 0)")
    g = rnea(bodies, q, None, None, gravity, transforms)
    return M, b, g, frame


def inertial_view(bodies: list[SymBody], q, frame: str = "auto"):
    """Bodies and transforms for running :func:`rnea`/:func:`crba` in inertial coordinates.

    Every body's axis, CoM and inertia are rotated into I with A_IB built from *merged* rotation
    chains (R_z(q1)·R_z(q2) = R_z(q1+q2)), and each joint transform becomes (1, A_IP·P_r_PO).
    The recursions then only add, instead of rotating the parent's quantities at every level:
    for planar mechanisms this keeps the expressions linear in the number of bodies, where the
    body-frame recursion doubles them at every level. ``frame="auto"`` uses it when every
    body's chain merges into one rotation; returns ``(bodies, transforms, frame_used)``.
    """
    chains = rotation_chains(bodies, q)
    locs = [joint_transform(bd, q) for bd in bodies]
    if frame == "auto":
        frame = "inertial" if max((len(c) for c in chains), default=0) <= 1 else "body"
    if frame == "body":
        return bodies, locs, "body"
    if frame != "inertial":
        raise ValueError(f"frame must be 'auto', 'body' or 'inertial', got {frame!r}")
    cache = C.ChainCache()
    out, transforms = [], []
    for i, bd in enumerate(bodies):
        A = cache.matrix(chains[i])
        A_IP = cache.matrix(chains[bd.parent]) if bd.parent >= 0 else C.eye3()
        Th = C.mm(C.mm(A, bd.inertia_com), C.transpose(A))
        # lengths are the rotation's invariants: |A c|² written as |c|², not as c_x² (sin² + cos²) + …
        out.append(SymBody(bd.name, bd.parent, bd.kind, bd.dof, C.mv(A, bd.axis), bd.pitch,
                           C.eye3(), C.mv(A_IP, bd.t_PJ), bd.mass, C.mv(A, bd.com), Th,
                           com_sq=C.dot(bd.com, bd.com), origin_sq=C.dot(locs[i][1], locs[i][1])))
        transforms.append((C.eye3(), C.mv(A_IP, locs[i][1])))
    return out, transforms, "inertial"


@register_method("rnea", summary="symbolic CRBA + recursive Newton-Euler (fastest)", readable=True)
def rnea_equations(model, q, dq, tau, *, S, progress=None, frame: str = "auto",
                   readable: bool = False) -> EquationsOfMotion:
    """``derive(model, "rnea")``: M by CRBA, b = RNEA(q, q̇, 0) without gravity, g = RNEA(q, 0, 0).

    ``frame``: "body", "inertial" or "auto" (see :func:`inertial_view`). ``readable=True`` (what
    ``derive`` asks unless ``raw``): a planar tree (:func:`.planar.planar_normal`, frame "auto")
    is derived in the readable form directly by :mod:`.planar`; any other tree as derived (the
    readable pass runs afterwards).
    """
    import time

    from .tree import model_parameters, symbolic_bodies

    t0 = time.perf_counter()
    say = progress or (lambda msg: None)
    bodies = symbolic_bodies(model)
    params = model_parameters(model)
    say(f"{len(bodies)} bodies, n = {q.rows}")
    qe = [C.to_se(s) for s in q]
    dqe = [C.to_se(s) for s in dq]
    grav = C.vec3(np.asarray(model.gravity, dtype=object).tolist(), "gravity")
    plane = planar_normal(bodies) if readable and frame == "auto" else None
    forms = planar_forms(bodies, qe, dqe, grav, *plane) if plane is not None else None
    b_read = None
    if forms is None and plane is not None:
        # past PLANAR_MAX_WORK: M and g still in harmonics (their work grows as n⁴, b's as n⁵), b by
        # the recursion in inertial coordinates and the readable pass, as the general path gives it
        forms = planar_forms(bodies, qe, dqe, grav, *plane, rates=False, max_work=_planar.PLANAR_MG_MAX_WORK)
        if forms is not None:
            from .trig import readable_entries

            say("planar tree: M, g in harmonics of the relative angles; b = RNEA(q, q̇, 0) in inertial coordinates")
            ibodies, transforms, _ = inertial_view(bodies, qe, "inertial")
            b_read = readable_entries(rnea(ibodies, qe, dqe, None, None, transforms), qe)
    if forms is not None:
        if b_read is None:
            say("planar tree: M, b, g in harmonics of the relative angles (readable form)")
        from .eom import _count_ops
        from .tmt.system import LazyDict

        extra = LazyDict(method="rnea", frame="planar", form="readable")
        extra.update(body_names=[bd.name for bd in bodies], seconds=time.perf_counter() - t0)
        if b_read is None:
            sympy, symengine = forms.sympy, forms.symengine
        else:
            extra["frames"] = {"M": "planar", "b": "inertial", "g": "planar"}

            def sympy(conv):
                M, _, g = forms.sympy(conv)
                return M, [conv(x) for x in b_read], g

            def symengine():
                M, _, g = forms.symengine()
                return M, b_read, g
        # M, b, g built from the polynomials when read: SymPy ones for the reader of M, b, g,
        # SymEngine ones for code generation and to_numeric (neither converted from the other)
        eom = EquationsOfMotion.from_builders(sympy=sympy, symengine=symengine, q=q, dq=dq, S=S,
                                              tau=tau, params=params, extra=extra)
        def size():
            M, b, g = symengine()
            return {"readable": {"M": _count_ops([x for r in M for x in r]), "b": _count_ops(b), "g": _count_ops(g)}}

        extra.lazy("size", size)      # counted when read (the CLI prints it)
        return eom
    M, b, g, frame = derive_rnea(bodies, qe, dqe, grav, progress=say, frame=frame)
    extra = {"method": "rnea", "frame": frame}
    extra.update(body_names=[bd.name for bd in bodies], seconds=time.perf_counter() - t0)
    return EquationsOfMotion.from_symengine(q=q, dq=dq, M=M, b=b, g=g, S=S, tau=tau, params=params, extra=extra)
