"""The proNEu manual's examples written as the manual writes them (body structs, eulerToRotMat_A_IB,
'rot'/'lin' force elements, section 3), with the parameter symbols of the built-in models — the
independent input the Model-based derivations are checked against."""
import sympy as sp

import multibody as mb
from multibody.symbolic import Body, LinForce, PneSystem, RotForce
from multibody.symbolic.utils import euler_to_rot_A_IB


def _system(name, model, bodies, ftel, q, dq, tau):
    info = mb.models.seed_info(model)
    P = info.symbols
    params = tuple(sorted(P.values(), key=lambda s: s.name))
    return PneSystem(name, bodies, ftel, sp.Matrix(q), sp.Matrix(dq), sp.Matrix(tau), params,
                     sp.Matrix([0, 0, -P["g"]]), mb.models.parameters(model),
                     dict(zip(q, info.q0)), dict(info.notes))


def _syms(names):
    return [sp.Symbol(n, real=True) for n in names.split()]


def _link(P, k):
    return P[f"l{k}"], P[f"s{k}"], P[f"m{k}"], sp.diag(P[f"Th{k}_xx"], P[f"Th{k}_yy"], P[f"Th{k}_zz"])


def ra3link_list():
    """RA3Link, manual 3.1: A_PB = eulerToRotMat_A_IB(0,0,q1), (q2,0,0), (0,q3,0)."""
    model = mb.models.ra3link(symbolic=True)
    P = mb.models.seed_info(model).symbols
    q1, q2, q3 = _syms("q1 q2 q3")
    l1, s1, m1, Th1 = _link(P, 1)
    l2, s2, m2, Th2 = _link(P, 2)
    _, s3, m3, Th3 = _link(P, 3)
    T1, T2, T3 = _syms("T1 T2 T3")
    bodies = [Body("link1", m1, Th1, sp.Matrix([0, 0, s1]), sp.Matrix([0, 0, 0]), euler_to_rot_A_IB(0, 0, q1)),
              Body("link2", m2, Th2, sp.Matrix([0, 0, s2]), sp.Matrix([0, 0, l1]), euler_to_rot_A_IB(q2, 0, 0),
                   parent="link1"),
              Body("link3", m3, Th3, sp.Matrix([0, 0, s3]), sp.Matrix([0, 0, l2]), euler_to_rot_A_IB(0, q3, 0),
                   parent="link2")]
    ftel = [RotForce(None, "link1", sp.Matrix([0, 0, T1])), RotForce("link1", "link2", sp.Matrix([T2, 0, 0])),
            RotForce("link2", "link3", sp.Matrix([0, T3, 0]))]
    return _system("RA3Link", model, bodies, ftel, [q1, q2, q3], _syms("Dq1 Dq2 Dq3"), [T1, T2, T3])


def ra3link_prismatic_list():
    """RA3LinkPrismatic, manual 3.2: link 3 slides along x, P_r_PO = (l2 + x, 0, 0)."""
    model = mb.models.ra3link_prismatic(symbolic=True)
    P = mb.models.seed_info(model).symbols
    q1, q2, x = _syms("q1 q2 x")
    l1, s1, m1, Th1 = _link(P, 1)
    l2, s2, m2, Th2 = _link(P, 2)
    _, s3, m3, Th3 = _link(P, 3)
    T1, T2, F1 = _syms("T1 T2 F1")
    bodies = [Body("link1", m1, Th1, sp.Matrix([0, 0, s1]), sp.Matrix([0, 0, 0]), euler_to_rot_A_IB(0, 0, q1)),
              Body("link2", m2, Th2, sp.Matrix([s2, 0, 0]), sp.Matrix([0, 0, l1]), euler_to_rot_A_IB(0, q2, 0),
                   parent="link1"),
              Body("link3", m3, Th3, sp.Matrix([s3, 0, 0]), sp.Matrix([l2 + x, 0, 0]), euler_to_rot_A_IB(0, 0, 0),
                   parent="link2")]
    ftel = [RotForce(None, "link1", sp.Matrix([0, 0, T1])), RotForce("link1", "link2", sp.Matrix([0, T2, 0])),
            LinForce("link2", "link3", P_r_R=sp.Matrix([0, 0, 0]), B_r_A=sp.Matrix([0, 0, 0]),
                     B_F=sp.Matrix([F1, 0, 0]))]
    return _system("RA3LinkPrismatic", model, bodies, ftel, [q1, q2, x], _syms("Dq1 Dq2 Dx"), [T1, T2, F1])


def starleth_list():
    """StarlETH, manual 3.3: main body at (qX, qY, qZ) with eulerToRotMat_A_IB(qAL, qBE, qGA), legs
    HAA (x), HFE (y), KFE (y) and a massless foot; twelve 'rot' torques."""
    model = mb.models.starleth(symbolic=True)
    P = mb.models.seed_info(model).symbols
    qX, qY, qZ, qAL, qBE, qGA = base = _syms("qX qY qZ qAL qBE qGA")
    d = lambda k: sp.diag(P[f"Th{k}_xx"], P[f"Th{k}_yy"], P[f"Th{k}_zz"])  # noqa: E731
    bodies = [Body("main_body", P["mB"], d("B"), sp.Matrix([0, 0, P["sB"]]), sp.Matrix([qX, qY, qZ]),
                   euler_to_rot_A_IB(qAL, qBE, qGA))]
    ftel, joints, torques = [], [], []
    for leg, sx, sy in (("LF", 1, 1), ("RF", 1, -1), ("LH", -1, 1), ("RH", -1, -1)):
        qHAA, qHFE, qKFE = _syms(f"q{leg}_HAA q{leg}_HFE q{leg}_KFE")
        tHAA, tHFE, tKFE = _syms(f"T{leg}_HAA T{leg}_HFE T{leg}_KFE")
        joints += [qHAA, qHFE, qKFE]
        torques += [tHAA, tHFE, tKFE]
        hip, thigh, shank, foot = (f"{leg}_HAA", f"{leg}_HFE", f"{leg}_KFE", f"{leg}_Foot")
        bodies += [
            Body(hip, P["mH"], d("H"), sp.Matrix([0, 0, P["sH"]]), sp.Matrix([sx * P["b2hx"], sy * P["b2hy"], 0]),
                 euler_to_rot_A_IB(qHAA, 0, 0), parent="main_body"),
            Body(thigh, P["mT"], d("T"), sp.Matrix([0, 0, P["sT"]]), sp.Matrix([0, 0, P["lH"]]),
                 euler_to_rot_A_IB(0, qHFE, 0), parent=hip),
            Body(shank, P["mS"], d("S"), sp.Matrix([0, 0, P["sS"]]), sp.Matrix([0, 0, P["lT"]]),
                 euler_to_rot_A_IB(0, qKFE, 0), parent=thigh),
            Body(foot, 0, sp.zeros(3, 3), sp.Matrix([0, 0, 0]), sp.Matrix([0, 0, P["lS"]]),
                 euler_to_rot_A_IB(0, 0, 0), parent=shank)]
        ftel += [RotForce("main_body", hip, sp.Matrix([tHAA, 0, 0])), RotForce(hip, thigh, sp.Matrix([0, tHFE, 0])),
                 RotForce(thigh, shank, sp.Matrix([0, tKFE, 0]))]
    q = base + joints
    return _system("StarlETH", model, bodies, ftel, q, [sp.Symbol("D" + s.name, real=True) for s in q], torques)
