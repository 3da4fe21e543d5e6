"""TMT from a ``Model``: the bodies of a kinematic tree in the paper's input form.

:func:`tree_kinematics` gives every body's rotation A_IB, origin, CoM and body-frame angular
velocity Jacobian (eq. 2 from the joint axes, without differentiating R) from the model's joint
chain; :func:`tmt_system_from_model` turns them into :class:`TMTBody` s; ``derive(source, "tmt")``
(:func:`tmt_equations`) accepts a Model, a :class:`~multibody.model.mechanism.Mechanism` or a
:class:`TMTSystem`.
"""
from __future__ import annotations

import sympy as sp

from ...model.model import Model
from ...model.mechanism import Mechanism
from .. import _core as C
from ..eom import EquationsOfMotion, register_method
from ..rnea_sym import joint_transform
from ..tree import model_parameters, rotation_chains, symbolic_bodies, sympy_array, sympy_entry
from .elements import TMTBody
from .system import TMTSystem

__all__ = ["tree_kinematics", "tmt_system_from_model", "derive_tmt", "tmt_equations"]


def tree_kinematics(model, q=None):
    """Per-body kinematics of a Model (revolute/prismatic/helical/fixed joints), symbolically.

    Returns a dict with lists over bodies: ``R`` (A_IB), ``p`` (body-frame origin), ``r_com``
    (CoM position), ``T_omega`` (body-frame angular velocity Jacobian, 3×nq: ω_B = T_omega q̇,
    summed along the body's rotation chain with same-axis rotations merged), and ``q``,
    ``qindex`` (coordinate of each body's joint, −1 for fixed), ``params``, ``names``, ``nq``.
    """
    bodies = symbolic_bodies(model)
    nq = int(model.nv)
    if q is None:
        q = sp.Matrix(sp.symbols(f"q0:{nq}")) if nq else sp.zeros(0, 1)
    else:
        q = sp.Matrix(list(q))
        if len(q) != nq:
            raise ValueError(f"q has {len(q)} entries, the model has nq = {nq}")
    params = model_parameters(model)
    qe = [C.to_se(s) for s in q]
    chains = rotation_chains(bodies, qe)
    cache = C.ChainCache()
    conv = C.Converter(list(q) + list(params))
    origins, R, p, rc, Tw = [], [], [], [], []
    for i, bd in enumerate(bodies):
        t = joint_transform(bd, qe)[1]                       # joint origin (+ slide) in the parent
        if bd.parent >= 0:
            t = C.add(origins[bd.parent], C.mv(cache.matrix(chains[bd.parent]), t))
        origins.append(t)
        A_IB = cache.matrix(chains[i])
        R.append(conv.matrix(A_IB))
        p.append(conv.matrix(t))
        rc.append(conv.matrix(C.add(t, C.mv(A_IB, bd.com))))
        Tw.append(conv.matrix(C.chain_local_omega(chains[i], qe, nq)) if nq else sp.zeros(3, 0))
    return {"R": R, "p": p, "r_com": rc, "T_omega": Tw, "q": q, "qindex": [bd.dof for bd in bodies],
            "params": params, "names": [bd.name for bd in bodies], "nq": nq}


def _model_actuation(nq, tau, S, actuated):
    """tau symbols and S (m×nq) for a Model: all joints actuated unless ``actuated``/``S`` say otherwise."""
    if actuated is not None and S is None:
        idx = [int(i) for i in actuated]
        for i in idx:
            if not 0 <= i < nq:
                raise ValueError(f"actuated: dof {i} does not exist (nq = {nq})")
        S = sp.zeros(len(idx), nq)
        for r, i in enumerate(idx):
            S[r, i] = 1
    m = nq if S is None else sp.Matrix(S).shape[0]
    tau = sp.Matrix(sp.symbols(f"tau0:{m}")) if tau is None else sp.Matrix(list(tau))
    if S is None:
        if len(tau) != nq:
            raise ValueError(f"tau has {len(tau)} entries, the model has nq = {nq}: give S or actuated=")
        S = sp.eye(nq)
    S = sp.Matrix(S)
    if S.shape != (len(tau), nq):
        raise ValueError(f"S has shape {S.shape}, expected ({len(tau)}, {nq})")
    return tau, S


def derive_tmt(model, q=None, dq=None, tau=None, *, S=None, actuated=None, simplify=False,
               progress=None, **kw) -> EquationsOfMotion:
    """TMT equations of motion of a Model (eqs. 3–4).

    Reads only ``parent, jtype, jaxis, jpitch, tree_rotation, tree_translation, mass, com,
    inertia_com, gravity, nq, body_names``. ``q``/``dq``/``tau`` default to symbols q0…, dq0…,
    tau0…; every joint is actuated (S = I) unless ``S`` or ``actuated`` (dof indices) is given.
    ``progress(message)`` is called at each stage. Returns the EquationsOfMotion of
    :meth:`TMTSystem.equations` (saveable: ``extra`` holds only SymPy objects); use
    :func:`tmt_system_from_model` for the TMTSystem and its numeric helpers.
    """
    say = progress or (lambda msg: None)
    say("TMT: kinematics of the tree")
    sysm = tmt_system_from_model(model, q=q, dq=dq, tau=tau, S=S, actuated=actuated,
                                 simplify=simplify, **kw)
    say(f"TMT: T, D and TᵀMT for {len(sysm.bodies)} bodies, n = {len(sysm.q)}")
    eom = sysm.equations()
    eom.extra["method"] = "tmt"
    say("TMT: done")
    return eom


def tmt_system_from_model(model, q=None, dq=None, tau=None, *, S=None, actuated=None,
                          simplify=False, extra_params=(), **kw) -> TMTSystem:
    """The :class:`TMTSystem` (3-D bodies) of a Model; see :func:`derive_tmt`.

    Bodies with zero mass and zero inertia are left out (they move nothing). ``extra_params``
    are parameter symbols of the elements in ``kw`` (forces, springs, dampers, constraints,
    contacts) that are not in the model's arrays.
    """
    kin = tree_kinematics(model, q)
    q = kin["q"]
    nq = kin["nq"]
    dq = sp.Matrix(sp.symbols(f"dq0:{nq}")) if dq is None else sp.Matrix(list(dq))
    if len(dq) != nq:
        raise ValueError(f"dq has {len(dq)} entries, the model has nq = {nq}")
    tau, S = _model_actuation(nq, tau, S, actuated)
    bodies = []
    for i in range(len(kin["R"])):
        m, I = sympy_entry(model.mass[i]), sympy_array(model.inertia_com[i], (3, 3))
        if m == 0 and I == sp.zeros(3, 3):
            continue
        bodies.append(TMTBody(mass=m, inertia=I, position=kin["r_com"][i], orientation=kin["R"][i],
                              name=kin["names"][i], T_omega=kin["T_omega"][i]))
    params = tuple(dict.fromkeys(list(kin["params"]) + [sp.sympify(p) for p in extra_params]))
    kw.setdefault("name", getattr(model, "name", ""))
    return TMTSystem(q, dq, bodies, params=params, gravity=sympy_array(model.gravity, (3,)),
                     tau=tau, S=S, simplify=simplify, **kw)


@register_method("tmt", accepts=(Model, Mechanism, TMTSystem), summary="TMT method: linear vector form of Lagrange (IRIS 2015)")
def tmt_equations(source, q, dq, tau, *, S, progress=None, **options) -> EquationsOfMotion:
    """``derive(source, "tmt")`` for a Model, a :class:`~multibody.model.mechanism.Mechanism` (tree plus
    constraints, springs, dampers, forces, contacts) or a :class:`TMTSystem`."""
    say = progress or (lambda msg: None)
    say("TMT: kinematics of the tree")
    if isinstance(source, Model):
        system = tmt_system_from_model(source, q=q, dq=dq, tau=tau, S=S, **options)
    elif isinstance(source, Mechanism):
        system = source.tmt_system(**options)
    else:
        system = source
    say(f"TMT: T, D and TᵀMT for {len(system.bodies)} bodies, n = {len(system.q)}")
    eom = system.equations()
    eom.extra["method"] = "tmt"
    say("TMT: done")
    return eom
