"""Symbolic ``multibody.Model`` instances (object arrays of SymPy symbols) for derivations.

* :func:`symbolic_model`            — a Model from per-body lists (entries may be SymPy expressions)
* :func:`n_link_pendulum_on_cart`   — the mechanism of ``sympy.physics.mechanics.models.n_link_pendulum_on_cart``
* :func:`spatial_chain`             — an n-link 3-D chain with joint axes cycling z, x, y
* :func:`starleth_model`            — proNEu's StarlETH as a Model (Euler x-y-z floating base)
"""
from __future__ import annotations

import numpy as np
import sympy as sp

__all__ = ["symbolic_model", "n_link_pendulum_on_cart", "spatial_chain", "starleth_model",
           "ra3link_model", "ra3link_prismatic_model"]

_JT = {"fixed": 0, "revolute": 1, "prismatic": 2, "helical": 3}
_AX = {"x": (1, 0, 0), "y": (0, 1, 0), "z": (0, 0, 1)}


def symbolic_model(bodies, gravity=(0, 0, -9.81), name="symbolic"):
    """Model from a list of dicts: ``name, parent (index or None), joint ('revolute'|'prismatic'|
    'helical'|'fixed'), axis ('x'|'y'|'z' or 3-vector), pitch, rotation (A_PJ), translation
    (P_r_PJ), mass, com, inertia`` (about the CoM). Entries may be SymPy expressions."""
    from ..model.model import Model

    nb = len(bodies)
    obj = lambda shape: np.empty(shape, dtype=object)  # noqa: E731
    jaxis, jpitch, R, t = obj((nb, 3)), obj((nb,)), obj((nb, 3, 3)), obj((nb, 3))
    mass, com, inertia = obj((nb,)), obj((nb, 3)), obj((nb, 3, 3))
    parent, jtype, names = [], [], []
    for i, b in enumerate(bodies):
        names.append(b["name"])
        p = b.get("parent")
        parent.append(-1 if p is None else (names.index(p) if isinstance(p, str) else int(p)))
        jtype.append(_JT[b.get("joint", "revolute")])
        ax = b.get("axis", "z")
        jaxis[i] = [sp.sympify(x) for x in (_AX[ax] if isinstance(ax, str) else ax)]
        jpitch[i] = sp.sympify(b.get("pitch", 0))
        rot = b.get("rotation")
        R[i] = np.array(sp.eye(3).tolist() if rot is None else sp.Matrix(rot).tolist(), dtype=object)
        t[i] = [sp.sympify(x) for x in b.get("translation", (0, 0, 0))]
        mass[i] = sp.sympify(b.get("mass", 0))
        com[i] = [sp.sympify(x) for x in b.get("com", (0, 0, 0))]
        inert = b.get("inertia")
        inertia[i] = np.array(sp.zeros(3, 3).tolist() if inert is None else sp.Matrix(inert).tolist(),
                              dtype=object)
    return Model(parent=np.array(parent), jtype=np.array(jtype), jaxis=jaxis, jpitch=jpitch,
                 tree_rotation=R, tree_translation=t, mass=mass, com=com, inertia_com=inertia,
                 gravity=np.array([sp.sympify(x) for x in gravity], dtype=object),
                 body_names=tuple(names), name=name)


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
        m, s, ln, Ixx, Iyy, Izz = sp.symbols(f"m{i} s{i} l{i} Ixx{i} Iyy{i} Izz{i}")
        bodies.append(dict(name=f"link{i}", parent=i - 1 if i else None, joint="revolute",
                           axis="zxy"[i % 3],
                           translation=(0, 0, sp.Symbol(f"l{i - 1}")) if i else (0, 0, 0),
                           mass=m, com=(0, 0, s), inertia=sp.diag(Ixx, Iyy, Izz)))
    return symbolic_model(bodies, gravity=(0, 0, -g), name=f"chain3d_{n}")


def starleth_model():
    """proNEu's StarlETH (manual section 3.3) as a Model: the floating base is built from
    prismatic x, y, z and revolute x, y, z joints (Euler x-y-z) through massless bodies, so
    q = [qX, qY, qZ, qAL, qBE, qGA, legs LF, RF, LH, RH × (HAA, HFE, KFE)] as in the manual.
    Parameter symbols are those of :func:`multibody.models.pronue.starleth`."""
    S = lambda s: sp.Symbol(s)  # noqa: E731
    mB, sB, mH, sH, mT, sT, mS, sS = (S(x) for x in "mB sB mH sH mT sT mS sS".split())
    ThB = sp.diag(S("ThB_xx"), S("ThB_yy"), S("ThB_zz"))
    ThH = sp.diag(S("ThH_xx"), S("ThH_yy"), S("ThH_zz"))
    ThT = sp.diag(S("ThT_xx"), S("ThT_yy"), S("ThT_zz"))
    ThS = sp.diag(S("ThS_xx"), S("ThS_yy"), S("ThS_zz"))
    b2hx, b2hy, lH, lT, lS, g = (S(x) for x in "b2hx b2hy lH lT lS g".split())
    bodies = [dict(name="base_x", joint="prismatic", axis="x"),
              dict(name="base_y", parent="base_x", joint="prismatic", axis="y"),
              dict(name="base_z", parent="base_y", joint="prismatic", axis="z"),
              dict(name="base_al", parent="base_z", joint="revolute", axis="x"),
              dict(name="base_be", parent="base_al", joint="revolute", axis="y"),
              dict(name="main_body", parent="base_be", joint="revolute", axis="z",
                   mass=mB, com=(0, 0, sB), inertia=ThB)]
    for leg, sx, sy in (("LF", 1, 1), ("RF", 1, -1), ("LH", -1, 1), ("RH", -1, -1)):
        bodies += [
            dict(name=f"{leg}_HAA", parent="main_body", axis="x", translation=(sx * b2hx, sy * b2hy, 0),
                 mass=mH, com=(0, 0, sH), inertia=ThH),
            dict(name=f"{leg}_HFE", parent=f"{leg}_HAA", axis="y", translation=(0, 0, lH),
                 mass=mT, com=(0, 0, sT), inertia=ThT),
            dict(name=f"{leg}_KFE", parent=f"{leg}_HFE", axis="y", translation=(0, 0, lT),
                 mass=mS, com=(0, 0, sS), inertia=ThS),
            dict(name=f"{leg}_Foot", parent=f"{leg}_KFE", joint="fixed", translation=(0, 0, lS)),
        ]
    return symbolic_model(bodies, gravity=(0, 0, -g), name="StarlETH")


def _link_syms(k):
    return sp.symbols(f"l{k} s{k} m{k} Th{k}_xx Th{k}_yy Th{k}_zz")


def ra3link_model():
    """proNEu's RA3Link (manual 3.1) as a Model: revolute z, x, y; same parameter symbols as
    :func:`multibody.models.pronue.ra3link`, gravity −g·z."""
    l1, s1, m1, *T1 = _link_syms(1)
    l2, s2, m2, *T2 = _link_syms(2)
    l3, s3, m3, *T3 = _link_syms(3)
    g = sp.Symbol("g")
    return symbolic_model([
        dict(name="link1", axis="z", mass=m1, com=(0, 0, s1), inertia=sp.diag(*T1)),
        dict(name="link2", parent="link1", axis="x", translation=(0, 0, l1), mass=m2, com=(0, 0, s2),
             inertia=sp.diag(*T2)),
        dict(name="link3", parent="link2", axis="y", translation=(0, 0, l2), mass=m3, com=(0, 0, s3),
             inertia=sp.diag(*T3)),
    ], gravity=(0, 0, -g), name="RA3Link")


def ra3link_prismatic_model():
    """proNEu's RA3LinkPrismatic (manual 3.2) as a Model: revolute z, revolute y, prismatic x."""
    l1, s1, m1, *T1 = _link_syms(1)
    l2, s2, m2, *T2 = _link_syms(2)
    l3, s3, m3, *T3 = _link_syms(3)
    g = sp.Symbol("g")
    return symbolic_model([
        dict(name="link1", axis="z", mass=m1, com=(0, 0, s1), inertia=sp.diag(*T1)),
        dict(name="link2", parent="link1", axis="y", translation=(0, 0, l1), mass=m2, com=(s2, 0, 0),
             inertia=sp.diag(*T2)),
        dict(name="link3", parent="link2", joint="prismatic", axis="x", translation=(l2, 0, 0),
             mass=m3, com=(s3, 0, 0), inertia=sp.diag(*T3)),
    ], gravity=(0, 0, -g), name="RA3LinkPrismatic")
