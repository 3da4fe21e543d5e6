"""``derive(model, method=...)``: symbolic equations of motion of an array-based ``multibody.Model``.

The model's arrays may hold SymPy expressions (a *symbolic* model); ``derive`` reads only
``parent``, ``jtype``, ``jaxis``, ``jpitch``, ``tree_rotation`` (A_PJ), ``tree_translation``
(P_r_PJ), ``mass``, ``com``, ``inertia_com``, ``gravity`` and ``body_names``.

Methods
-------
``"rnea"`` (default)  symbolic CRBA + recursive Newton-Euler (slides), :mod:`.rnea_sym`
``"pne"``             projected Newton-Euler, via a proNEu body list and :func:`.pne.compute_pne`
``"tmt"``             TMT method, :func:`multibody.symbolic.tmt.derive_tmt`
``"lagrange"``        Lagrange (energies, Christoffel symbols), :func:`multibody.symbolic.lagrange.derive_lagrange`
any name registered with :func:`multibody.symbolic.eom.register_method`

Revolute, prismatic, helical and fixed joints are supported symbolically. Free and spherical
joints (quaternion coordinates) are not: model a floating base with Euler angles instead —
three prismatic and three revolute joints through massless bodies, as the proNEu StarlETH
example does (``multibody.models.pronue.starleth``).
"""
from __future__ import annotations

import importlib
import time
from typing import Callable

import numpy as np
import sympy as sp

from . import _core as C
from .eom import DERIVATION_METHODS, EquationsOfMotion
from .rnea_sym import FIX, HEL, PRI, REV, SymBody, derive_rnea

__all__ = ["derive", "model_symbols", "model_to_pne", "symbolic_bodies"]

# JointType codes of multibody.model.joints (read as integers so this module needs only arrays)
_FIXED, _REVOLUTE, _PRISMATIC, _HELICAL, _SPHERICAL, _FREE, _PLANAR = range(7)
_KIND = {_FIXED: FIX, _REVOLUTE: REV, _PRISMATIC: PRI, _HELICAL: HEL}

_EXTERNAL = {"tmt": ("multibody.symbolic.tmt", "derive_tmt"),
             "lagrange": ("multibody.symbolic.lagrange", "derive_lagrange")}


def _free(x) -> set:
    if isinstance(x, sp.Basic):
        return set(x.free_symbols)
    if isinstance(x, np.ndarray) and x.dtype == object:
        out = set()
        for e in x.ravel():
            out |= _free(e)
        return out
    return set()


def model_symbols(model, q=None, dq=None, tau=None, actuated=None):
    """Coordinate, velocity and actuator symbols for ``model`` and its parameter symbols.

    Defaults: ``q0…``, ``dq0…``, ``tau0…`` (real), one per velocity variable; ``actuated`` (list of
    dof indices, default all) selects which dofs get an actuator. Returns
    ``(q, dq, tau, S, params)`` with sympy column matrices and S (m×n) the selection matrix.
    """
    n = int(model.nv)
    for i, jt in enumerate(np.asarray(model.jtype)):
        if int(jt) in (_FREE, _SPHERICAL, _PLANAR):
            symbolic_bodies(model)  # raises the error that names the body and the fix
    if int(model.nq) != n:
        raise ValueError(f"model has nq = {model.nq} ≠ nv = {n}: quaternion joints cannot be "
                         "derived symbolically; use an Euler-angle floating base")
    q = sp.Matrix(sp.symbols(f"q0:{n}", real=True)) if q is None else sp.Matrix(list(q))
    dq = sp.Matrix(sp.symbols(f"dq0:{n}", real=True)) if dq is None else sp.Matrix(list(dq))
    if q.rows != n or dq.rows != n:
        raise ValueError(f"model has {n} coordinates; got {q.rows} symbols in q and {dq.rows} in dq")
    idx = list(range(n)) if actuated is None else [int(k) for k in actuated]
    if any(not 0 <= k < n for k in idx) or len(set(idx)) != len(idx):
        raise ValueError(f"actuated: dof indices must be distinct and in 0…{n - 1}, got {idx}")
    tau = (sp.Matrix([sp.Symbol(f"tau{k}", real=True) for k in idx]) if tau is None
           else sp.Matrix(list(tau)))
    if tau.rows != len(idx):
        raise ValueError(f"{len(idx)} actuated dofs but {tau.rows} symbols in tau")
    S = sp.zeros(len(idx), n)
    for r, k in enumerate(idx):
        S[r, k] = 1
    fixed = set(q) | set(dq) | set(tau)
    if len(fixed) != 2 * n + tau.rows:
        raise ValueError("q, dq and tau must be distinct symbols")
    params = set()
    for name in ("jaxis", "jpitch", "tree_rotation", "tree_translation", "mass", "com",
                 "inertia_com", "gravity"):
        params |= _free(np.asarray(getattr(model, name), dtype=object))
    clash = params & fixed
    if clash:
        raise ValueError("model parameters clash with coordinate/actuator symbols: "
                         + ", ".join(sorted(s.name for s in clash)))
    return q, dq, tau, S, tuple(sorted(params, key=lambda s: s.name))


def _name(model, i):
    names = getattr(model, "body_names", None)
    return names[i] if names is not None and len(names) > i else f"body{i}"


def symbolic_bodies(model) -> list[SymBody]:
    """The model's bodies as :class:`SymBody` records (SymEngine entries), validated."""
    parent = np.asarray(model.parent)
    jtype = np.asarray(model.jtype)
    nb = len(parent)
    v_start = np.asarray(model.v_start)
    out = []
    for i in range(nb):
        nm = _name(model, i)
        jt = int(jtype[i])
        if jt in (_FREE, _SPHERICAL):
            raise ValueError(
                f"body {nm!r}: {'free' if jt == _FREE else 'spherical'} joints (quaternion "
                "coordinates) are not supported symbolically; build the floating base from three "
                "prismatic and three revolute joints (Euler angles x-y-z) through massless bodies, "
                "as the proNEu StarlETH example does")
        if jt == _PLANAR:
            raise ValueError(f"body {nm!r}: planar joints are not supported symbolically; use two "
                             "prismatic joints and a revolute joint")
        if jt not in _KIND:
            raise ValueError(f"body {nm!r}: unknown joint type code {jt}")
        p = int(parent[i])
        if not -1 <= p < i:
            raise ValueError(f"body {nm!r}: parent {p} must be −1 or an earlier body")
        axis = C.vec3(np.asarray(model.jaxis[i], dtype=object).tolist(), f"body {nm!r}: jaxis")
        out.append(SymBody(
            name=nm, parent=p, kind=_KIND[jt], dof=int(v_start[i]) if jt != _FIXED else -1,
            axis=axis, pitch=C.to_se(model.jpitch[i]),
            A_PJ=C.mat3(np.asarray(model.tree_rotation[i], dtype=object).tolist(), f"body {nm!r}: tree_rotation"),
            t_PJ=C.vec3(np.asarray(model.tree_translation[i], dtype=object).tolist(), f"body {nm!r}: tree_translation"),
            mass=C.to_se(model.mass[i]),
            com=C.vec3(np.asarray(model.com[i], dtype=object).tolist(), f"body {nm!r}: com"),
            inertia_com=C.mat3(np.asarray(model.inertia_com[i], dtype=object).tolist(), f"body {nm!r}: inertia_com")))
    return out


def model_to_pne(model, q, dq, tau, actuated=None):
    """proNEu body list and force elements of a model (for ``method="pne"``)."""
    from .pne import Body, LinForce, RotForce

    bodies = symbolic_bodies(model)
    qe = [C.to_se(s) for s in q]
    n = len(qe)
    idx = list(range(n)) if actuated is None else list(actuated)
    tau_of = {k: C.to_se(t) for k, t in zip(idx, tau)}
    pb, fe = [], []
    for bd in bodies:
        A_PJ = sp.Matrix(3, 3, [C.to_sp(x) for r in bd.A_PJ for x in r])
        factors = [] if C.is_identity(bd.A_PJ) else [A_PJ]
        _, t = _joint_translation(bd, qe)
        if bd.kind in (REV, HEL):
            elem = next((ax for ax, e in C.AXES.items() if all(a == b for a, b in zip(bd.axis, e))), None)
            if elem is not None:
                factors.append((elem, C.to_sp(qe[bd.dof])))
            else:
                from .rnea_sym import axis_rotation

                R = axis_rotation(bd.axis, qe[bd.dof])
                factors.append(sp.Matrix(3, 3, [C.to_sp(x) for r in R for x in r]))
        if not factors:
            factors = [sp.eye(3)]
        parent = None if bd.parent < 0 else bodies[bd.parent].name
        pb.append(Body(bd.name, C.to_sp(bd.mass),
                       sp.Matrix(3, 3, [C.to_sp(x) for r in bd.inertia_com for x in r]),
                       sp.Matrix([C.to_sp(x) for x in bd.com]), sp.Matrix([C.to_sp(x) for x in t]),
                       factors, parent=parent))
        if bd.dof in tau_of:
            ax = sp.Matrix([C.to_sp(x) for x in bd.axis])
            T = C.to_sp(tau_of[bd.dof])
            if bd.kind in (REV, HEL):
                fe.append(RotForce(parent, bd.name, ax * T, name=f"actuator of joint {bd.name!r}"))
            else:
                fe.append(LinForce(parent, bd.name, P_r_R=sp.Matrix([C.to_sp(x) for x in bd.t_PJ]),
                                   B_r_A=sp.zeros(3, 1), B_F=ax * T,
                                   name=f"actuator of joint {bd.name!r}"))
    return pb, fe


def _joint_translation(bd: SymBody, qe):
    t = bd.t_PJ
    if bd.kind in (PRI, HEL):
        d = qe[bd.dof] if bd.kind == PRI else bd.pitch * qe[bd.dof]
        t = C.add(t, C.scale(d, C.mv(bd.A_PJ, bd.axis)))
    return None, t


def derive(model, method: str = "rnea", *, q=None, dq=None, tau=None, actuated=None,
           simplify: bool | float = False, progress: Callable[[str], None] | None = None,
           verbose: bool = False, **options) -> EquationsOfMotion:
    """Symbolic ``M(q) q̈ + b(q, q̇) + g(q) = Sᵀ τ`` of ``model``.

    Parameters
    ----------
    model    : ``multibody.Model`` (numeric or with SymPy entries)
    method   : "rnea" (default, fastest), "pne", "tmt", "lagrange" or a registered name
    q, dq, tau : symbols to use (defaults ``q0…``, ``dq0…``, ``tau0…``)
    actuated : dof indices that carry an actuator (default: all); S selects them
    simplify : False, True (60 s) or a time limit in seconds for ``EquationsOfMotion.simplify``
    progress : callback ``progress(message)``; ``verbose=True`` prints the messages
    options  : passed on to the method (e.g. ``kinematics=False`` for "pne"; ``frame="body"|
               "inertial"|"auto"`` for "rnea" and "pne")
    """
    say = progress
    if say is None and verbose:
        t_start = time.perf_counter()

        def say(msg):
            print(f"[derive {method} {time.perf_counter() - t_start:7.2f} s] {msg}", flush=True)

    qs, dqs, taus, S, params = model_symbols(model, q, dq, tau, actuated)
    key = str(method).lower()
    if key == "rnea":
        return _derive_rnea(model, qs, dqs, taus, S, params, say, simplify, options.pop("frame", "auto"))
    if key == "pne":
        from .pne import compute_pne

        bodies, fe = model_to_pne(model, qs, dqs, taus, actuated)
        grav = sp.Matrix([sp.sympify(x) for x in np.asarray(model.gravity, dtype=object)])
        options.setdefault("kinematics", True)
        options.setdefault("check_rotations", False)  # the Model's rotations are checked by Model
        eom = compute_pne(bodies, fe, qs, dqs, taus, grav, params=params, simplify=simplify,
                          progress=say, **options)
        eom.extra["method"] = "pne"
        return eom
    func = DERIVATION_METHODS.get(key)
    if func is None and key in _EXTERNAL:  # TMT and Lagrange live in their own modules (SymPy-heavy)
        modname, fname = _EXTERNAL[key]
        func = getattr(importlib.import_module(modname), fname)
    if func is None:
        known = sorted({"rnea", "pne", *_EXTERNAL, *DERIVATION_METHODS})
        raise ValueError(f"derive: unknown method {method!r}; choose one of {', '.join(known)}")
    import inspect

    try:
        sig = inspect.signature(func).parameters
        takes_progress = "progress" in sig or any(p.kind == p.VAR_KEYWORD for p in sig.values())
        takes_S = "S" in sig
    except (TypeError, ValueError):  # pragma: no cover - builtins
        takes_progress, takes_S = True, False
    if takes_progress:
        options["progress"] = say
    if takes_S:
        options.setdefault("S", S)  # the actuator selection built from ``actuated`` above
    eom = func(model, qs, dqs, taus, **options)
    if not isinstance(eom, EquationsOfMotion):
        raise TypeError(f"derive(method={method!r}) returned {type(eom).__name__}, "
                        "not an EquationsOfMotion")
    if simplify:
        eom = eom.simplify(time_limit=60.0 if simplify is True else float(simplify), progress=say)
    return eom


def _derive_rnea(model, q, dq, tau, S, params, say, simplify, frame="auto"):
    t0 = time.perf_counter()
    bodies = symbolic_bodies(model)
    if say:
        say(f"{len(bodies)} bodies, n = {q.rows}")
    qe = [C.to_se(s) for s in q]
    dqe = [C.to_se(s) for s in dq]
    grav = C.vec3(np.asarray(model.gravity, dtype=object).tolist(), "gravity")
    M, b, g, frame = derive_rnea(bodies, qe, dqe, grav, progress=say, frame=frame)
    if say:
        say("converting to SymPy")
    conv = C.Converter(list(q) + list(dq) + list(tau) + list(params))
    eom = EquationsOfMotion(q=q, dq=dq, M=C.sp_matrix(M, conv), b=C.sp_matrix(b, conv),
                            g=C.sp_matrix(g, conv), S=S, tau=tau, params=params,
                            extra={"method": "rnea", "frame": frame, "body_names": [bd.name for bd in bodies],
                                   "seconds": time.perf_counter() - t0})
    eom._se_exprs = {"M": [x for row in M for x in row], "b": list(b), "g": list(g)}
    if simplify:
        eom = eom.simplify(time_limit=60.0 if simplify is True else float(simplify), progress=say)
    return eom
