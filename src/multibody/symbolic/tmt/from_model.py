"""TMT from a ``Model``: the bodies of a kinematic tree in the paper's input form.

:func:`tree_kinematics` gives every body's rotation A_IB, origin, CoM and body-frame angular
velocity Jacobian (eq. 2 from the joint axes, without differentiating R) from the model's joint
chain; :func:`tmt_system_from_model` turns them into :class:`TMTBody` s; ``derive(source, "tmt")``
(:func:`tmt_equations`) accepts a Model, a :class:`~multibody.model.mechanism.Mechanism` or a
:class:`TMTSystem`.

A Mechanism is model data (the tree and the paper's elements); its symbolic side is here:
:func:`mechanism_point` and :func:`mechanism_rotation` give body points and rotations from the
tree's kinematics (to write the elements with), :func:`tmt_system` the mechanism's TMTSystem.
"""
from __future__ import annotations

import functools

import numpy as np
import symengine as se
import sympy as sp

from ...model.model import Model
from ...model.mechanism import Mechanism
from .. import _core as C
from ..eom import EquationsOfMotion, register_method
from ..rnea_sym import joint_transform
from ..tree import (check_model, model_parameters, rotation_chains, symbol_column, symbolic_bodies,
                    sympy_array)
from .elements import TreeBody
from .fourier import tree_terms_readable
from .system import EXTRA_KEYS, KINEMATICS_KEYS, LazyDict, TMTSystem, tree_terms

__all__ = ["tree_kinematics", "tmt_system_from_model", "derive_tmt", "tmt_equations", "tmt_system",
           "mechanism_point", "mechanism_rotation"]


def tree_kinematics(model, q=None):
    """Per-body kinematics of a Model (revolute/prismatic/helical/fixed joints), symbolically.

    Returns a dict with lists over bodies: ``R`` (A_IB), ``p`` (body-frame origin), ``r_com``
    (CoM position), ``T_omega`` (body-frame angular velocity Jacobian, 3×nq: ω_B = T_omega q̇,
    summed along the body's rotation chain with same-axis rotations merged), and ``q``,
    ``qindex`` (coordinate of each body's joint, −1 for fixed), ``params``, ``names``, ``nq``.
    """
    kin = _tree_kinematics_se(model, q)
    conv = C.Converter(list(kin["q"]) + list(kin["params"]))
    out = dict(kin)
    for key in ("R", "p", "r_com"):
        out[key] = [conv.matrix(x) for x in kin[key]]
    out["T_omega"] = [conv.matrix(x) if kin["nq"] else sp.zeros(3, 0) for x in kin["T_omega"]]
    del out["qe"], out["bodies"]
    return out


def _tree_kinematics_se(model, q=None):
    """:func:`tree_kinematics` with its lists of SymEngine expressions, not converted: ``R`` (3×3
    lists of rows), ``p``, ``r_com`` (3-lists), ``T_omega`` (3 rows of nq), and ``qe``, the
    coordinates as SymEngine symbols (``q`` stays the SymPy column). The symbolic Kane projection
    (:mod:`multibody.symbolic.nonholonomic`) works on these without a round trip through SymPy."""
    check_model(model)
    bodies = symbolic_bodies(model)
    nq = int(model.nv)
    if q is None:
        q = sp.Matrix(sp.symbols(f"q0:{nq}")) if nq else sp.zeros(0, 1)
    else:
        q = symbol_column(q, "q")
        if len(q) != nq:
            raise ValueError(f"q has {len(q)} entries, the model has nq = {nq}")
    params = model_parameters(model)
    qe = [C.to_se(s) for s in q]
    chains = rotation_chains(bodies, qe)
    cache = C.ChainCache()
    origins, R, p, rc, Tw = [], [], [], [], []
    for i, bd in enumerate(bodies):
        t = joint_transform(bd, qe)[1]                       # joint origin (+ slide) in the parent
        if bd.parent >= 0:
            t = C.add(origins[bd.parent], C.mv(cache.matrix(chains[bd.parent]), t))
        origins.append(t)
        A_IB = cache.matrix(chains[i])
        R.append(A_IB)
        p.append(t)
        rc.append(C.add(t, C.mv(A_IB, bd.com)))
        Tw.append(C.chain_local_omega(chains[i], qe, nq) if nq else [[], [], []])
    return {"R": R, "p": p, "r_com": rc, "T_omega": Tw, "q": q, "qe": qe, "qindex": [bd.dof for bd in bodies],
            "params": params, "names": [bd.name for bd in bodies], "nq": nq, "bodies": bodies}


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
    tau = sp.Matrix(sp.symbols(f"tau0:{m}")) if tau is None else symbol_column(tau, "tau")
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
    """TMT equations of motion of a Model (the TMT paper's eqs. 3–4).

    The bodies' CoM positions and rotations come from the joint chain; T (the Jacobians of the
    CoM velocities and body angular velocities) gives M = Tᵀ M̄ T and the convective terms
    Tᵀ (M̄ ġ + ω × Θω). Reads only ``parent, jtype, jaxis, jpitch, tree_rotation,
    tree_translation, mass, com, inertia_com, gravity, nq, body_names``.

    Parameters
    ----------
    model : Model
        A model with revolute, prismatic, helical or fixed joints (numeric or symbolic).
    q, dq : sequence of sympy.Symbol, optional
        Coordinate (rad or m) and rate symbols; default ``q0…``, ``dq0…``.
    tau : sequence of sympy.Symbol, optional
        Actuator symbols (N·m or N); default ``tau0…``, one per row of S.
    S : matrix, optional
        Selection matrix (m×n): the joint forces are Sᵀ τ (default: the identity, every joint
        actuated).
    actuated : sequence of int, optional
        Dof indices that carry an actuator (builds S when ``S`` is None).
    simplify : bool or float, optional
        Simplify the system's expressions (False, True or seconds).
    progress : callable, optional
        ``progress(message)``, called at each stage.
    **kw
        Elements for :class:`TMTSystem`: ``springs``, ``dampers``, ``forces``, ``constraints``,
        ``contacts`` (with ``extra_params`` for their parameter symbols), ``values``, ``name``.

    Returns
    -------
    EquationsOfMotion
        The equations of :meth:`TMTSystem.equations` (saveable: ``extra`` holds only SymPy
        objects); use :func:`tmt_system_from_model` for the TMTSystem and its numeric helpers.

    Raises
    ------
    TypeError
        ``model`` is not a Model; ``q``, ``dq`` or ``tau`` is not a sequence of symbols; an
        unknown keyword.
    ValueError
        Symbols or S of the wrong size, an ``actuated`` dof that does not exist, a quaternion or
        planar joint.

    Examples
    --------
    >>> import multibody as mb
    >>> from multibody.symbolic import derive, derive_tmt
    >>> model = mb.models.double_pendulum()
    >>> eom = derive_tmt(model, actuated=[1])          # only the second joint driven
    >>> eom.S
    Matrix([[0, 1]])
    >>> rnea = derive(model, q=eom.q, dq=eom.dq, tau=eom.tau, actuated=[1])   # the same equations
    >>> at = dict(zip(eom.q, (0.3, -0.4)))
    >>> max(abs(float((eom.M - rnea.M)[k].subs(at))) for k in range(4)) < 1e-12
    True
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

    Bodies with zero mass and zero inertia are left out (they move nothing).

    Parameters
    ----------
    model : Model
        A model with revolute, prismatic, helical or fixed joints (numeric or symbolic).
    q, dq : sequence of sympy.Symbol, optional
        Coordinate (rad or m) and rate symbols; default ``q0…``, ``dq0…``.
    tau : sequence of sympy.Symbol, optional
        Actuator symbols (N·m or N); default ``tau0…``, one per row of S.
    S : matrix, optional
        Selection matrix (m×n): the joint forces are Sᵀ τ (default: the identity, every joint
        actuated).
    actuated : sequence of int, optional
        Dof indices that carry an actuator (builds S when ``S`` is None).
    simplify : bool or float, optional
        Simplify the system's expressions (False, True or seconds).
    extra_params : sequence of sympy.Symbol, optional
        Parameter symbols of the elements in ``kw`` that are not in the model's arrays.
    **kw
        Elements and options of :class:`TMTSystem`: ``springs``, ``dampers``, ``forces``,
        ``constraints``, ``contacts``, ``values``, ``q0``, ``dq0``, ``name``.

    Returns
    -------
    TMTSystem
        Its ``bodies``, ``q``, ``dq``, ``tau``, ``S``, ``params``; ``equations()`` derives them.

    Raises
    ------
    TypeError
        ``model`` is not a Model; ``q``, ``dq`` or ``tau`` is not a sequence of symbols; an
        unknown keyword.
    ValueError
        Symbols or S of the wrong size, an ``actuated`` dof that does not exist, a quaternion or
        planar joint.

    Examples
    --------
    >>> import multibody as mb
    >>> from multibody.symbolic import tmt_system_from_model
    >>> system = tmt_system_from_model(mb.models.double_pendulum())
    >>> [b.name for b in system.bodies], list(system.q)
    (['link1', 'link2'], [q0, q1])
    >>> system.equations().M.shape
    (2, 2)
    """
    kin = _tree_kinematics_se(model, q)
    q = kin["q"]
    nq = kin["nq"]
    dq = sp.Matrix(sp.symbols(f"dq0:{nq}")) if dq is None else symbol_column(dq, "dq")
    if len(dq) != nq:
        raise ValueError(f"dq has {len(dq)} entries, the model has nq = {nq}")
    tau, S = _model_actuation(nq, tau, S, actuated)
    # the bodies keep the tree walk's SymEngine kinematics (TreeBody): the system derives from
    # them without a round trip through SymPy, which is made only when a body's field is read
    conv = C.Converter(list(q) + list(kin["params"]))

    def convert(x):
        return sp.Matrix(x.nrows(), x.ncols(), [conv(e) for e in x]) if isinstance(x, se.DenseMatrix) else conv(x)
    bodies = [TreeBody(name, twins, convert) for name, twins in _tree_bodies(kin)]
    params = tuple(dict.fromkeys(list(kin["params"]) + [sp.sympify(p) for p in extra_params]))
    kw.setdefault("name", getattr(model, "name", ""))
    return TMTSystem(q, dq, bodies, params=params, gravity=sympy_array(model.gravity, (3,)),
                     tau=tau, S=S, simplify=simplify, _rotations_checked=True, **kw)


def _tree_bodies(kin):
    """(name, twins) of each body with mass of a tree walk (:func:`_tree_kinematics_se`), the
    twins in SymEngine as :class:`TreeBody` and :func:`tree_terms` read them: ``"m"``, ``"I"``
    (inertia about the CoM, body coordinates), ``"r"`` (CoM), ``"R"`` (A_IB), ``"To"`` (T_ω).
    A joint chain's massless bodies move nothing and are left out."""
    nq = kin["nq"]
    out = []
    for i, bd in enumerate(kin["bodies"]):
        if bd.mass == 0 and all(e == 0 for row in bd.inertia_com for e in row):
            continue
        out.append((kin["names"][i], {"m": bd.mass, "I": se.Matrix(bd.inertia_com), "r": se.Matrix(kin["r_com"][i]),
                                      "R": se.Matrix(kin["R"][i]),
                                      "To": se.Matrix(kin["T_omega"][i]) if nq else se.zeros(3, 0)}))
    return out


def _tree_tmt(model, q, dq, tau, S, say, readable=False) -> EquationsOfMotion:
    """The TMT paper's eqs. 3–4 for a bare tree: the tree walk's bodies straight into
    :func:`~multibody.symbolic.tmt.system.tree_terms` (the code :meth:`TMTSystem.equations` runs
    on a mechanism's tree), M, b, g handed over in SymEngine.

    ``extra`` and ``kinematics`` have the keys of :meth:`TMTSystem.equations` (T, D, the impact
    map, …); the first one read derives the model's :class:`TMTSystem` (:func:`tmt_system_from_model`)
    and takes them from it. Why not always through the system: building it (its SymPy symbols,
    the checks, the elements' empty terms) was a fixed cost that made the bare double pendulum's
    derivation 1.9× slower (3.5 against 1.8 ms, min of 40 on the loaded machine).
    """
    import time

    t0 = time.perf_counter()
    kin = _tree_kinematics_se(model, q)
    n = kin["nq"]
    qm = se.Matrix(kin["qe"]) if n else se.zeros(0, 1)
    dqm = se.Matrix([C.to_se(s) for s in dq]) if n else se.zeros(0, 1)
    bodies = _tree_bodies(kin)
    say(f"TMT: T, D q̇ and TᵀMT for {len(bodies)} bodies, n = {n} (SymEngine)")
    grav = se.Matrix(C.vec3(np.asarray(model.gravity, dtype=object).tolist(), "gravity"))
    bodies_se = [(tw["m"], tw["I"], tw["r"], tw["To"]) for _, tw in bodies]
    M, b, g, _, _ = tree_terms(bodies_se, qm, dqm, grav)
    M, b, g = list(M), list(b), list(g)       # (row by row, as M[r, c] for r, c, without a key check each)
    size = None
    if readable and n:
        done = tree_terms_readable(bodies_se, kin["qe"], list(dqm), grav, (M, b, g))
        if done is not None:
            say("TMT: M, b, g in the readable form directly (harmonics of T and D q̇)")
            derived, (M, b, g) = (M, b, g), done

            def size(derived=derived, readable=done):    # counted when read (extra is lazy)
                ops = lambda xs: int(se.count_ops(*xs)) if xs else 0  # noqa: E731
                return {"derived": dict(zip("Mbg", map(ops, derived))), "readable": dict(zip("Mbg", map(ops, readable)))}

    @functools.cache
    def system():
        return tmt_system_from_model(model, q=q, dq=dq, tau=tau, S=S).equations()
    extra, kinematics = LazyDict(), LazyDict()
    for key in EXTRA_KEYS:
        extra.lazy(key, lambda key=key: system().extra[key])
    for key in KINEMATICS_KEYS:
        kinematics.lazy(key, lambda key=key: system().kinematics[key])
    extra.update({"method": "tmt", "body_names": [name for name, _ in bodies], "seconds": time.perf_counter() - t0})
    if size is not None:
        extra["form"] = "readable"
        extra.lazy("size", size)
    return EquationsOfMotion.from_symengine(
        M=[M[r * n:(r + 1) * n] for r in range(n)], b=b, g=g, q=q, dq=dq, tau=tau, S=S,
        params=kin["params"], kinematics=kinematics, extra=extra)


def _mechanism_kinematics(mechanism):
    """tree_kinematics of the mechanism's tree in its own q symbols, computed once per mechanism
    (the paper's models ask for many points of the same tree)."""
    kin = mechanism.__dict__.get("_kin")
    if kin is None:
        kin = tree_kinematics(mechanism.model, mechanism.q)
        object.__setattr__(mechanism, "_kin", kin)      # a cache on the frozen Mechanism, not a field
    return kin


def mechanism_rotation(mechanism, body):
    """A_IB(q) of a body (name or index) of a :class:`~multibody.model.mechanism.Mechanism`, a SymPy 3×3 matrix.

    >>> import multibody as mb
    >>> mech = mb.models.biped_upper_body()
    >>> mechanism_rotation(mech, "upper_body").shape
    (3, 3)
    """
    return _mechanism_kinematics(mechanism)["R"][mechanism.model.body_index(body)]


def mechanism_point(mechanism, body, B_r=(0, 0, 0)):
    """I_r(q) of the point ``B_r`` (body coordinates) of a body of a mechanism, a SymPy 3-vector.

    >>> import multibody as mb
    >>> mech = mb.models.biped_upper_body()
    >>> mechanism_point(mech, "swing_leg", (0, -1, 0)).shape
    (3, 1)
    """
    i = mechanism.model.body_index(body)
    kin = _mechanism_kinematics(mechanism)
    return kin["p"][i] + kin["R"][i] * sp.Matrix(list(B_r))


def tmt_system(mechanism, simplify=False) -> TMTSystem:
    """The :class:`TMTSystem` of a :class:`~multibody.model.mechanism.Mechanism`: the tree's bodies
    (:func:`tmt_system_from_model`) with the mechanism's constraints (TMT eq. 5), springs, dampers,
    forces (eq. 4), contacts (eq. 9) and actuators.

    >>> import multibody as mb
    >>> tmt_system(mb.models.biped_upper_body()).q.shape       # stance foot (x, y) and q1, q2, q3
    (5, 1)
    """
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism: expected a multibody.model.mechanism.Mechanism, got {type(mechanism).__name__}")
    m = mechanism
    return tmt_system_from_model(
        m.model, q=m.q, dq=m.dq, tau=list(m.tau), S=m.S if m.tau else None,
        actuated=[] if not m.tau else None, simplify=simplify, forces=m.forces,
        springs=m.springs, dampers=m.dampers, constraints=m.constraints,
        contacts=m.contacts, time=m.time, extra_params=m.params, values=m.values,
        q0=m.q0, dq0=m.dq0, name=m.name)


@register_method("tmt", accepts=(Model, Mechanism, TMTSystem), summary="TMT method: linear vector form of Lagrange (IRIS 2015)",
                 readable=True)
def tmt_equations(source, q, dq, tau, *, S, progress=None, readable=False, **options) -> EquationsOfMotion:
    """``derive(source, "tmt")`` for a Model, a :class:`~multibody.model.mechanism.Mechanism` (tree plus
    constraints, springs, dampers, forces, contacts) or a :class:`TMTSystem`. ``readable=True`` (what
    ``derive`` passes unless ``raw``): a bare tree's M, b, g are formed in the readable form directly
    (:mod:`.fourier`); anything else is derived as is and ``derive`` runs the readable pass."""
    say = progress or (lambda msg: None)
    say("TMT: kinematics of the tree")
    if isinstance(source, Model) and not options:
        return _tree_tmt(source, q, dq, tau, S, say, readable=readable)
    if isinstance(source, Model):
        system = tmt_system_from_model(source, q=q, dq=dq, tau=tau, S=S, **options)
    elif isinstance(source, Mechanism):
        system = tmt_system(source, **options)
    else:
        system = source
    say(f"TMT: T, D and TᵀMT for {len(system.bodies)} bodies, n = {len(system.q)}")
    eom = system.equations()
    eom.extra["method"] = "tmt"
    say("TMT: done")
    return eom
