"""proNEu's input set (body list, force elements, q, q̇, τ, gravity) — written by hand or read
from a ``Model`` — and the ``"pne"`` derivation method.

:class:`PneSystem` is everything ``computePNE`` takes (proNEu manual, chapter 2);
:func:`pne_system` builds it from a model, so a proNEu derivation of a built-in model shares the
model's parameter symbols: each body's A_PB is the joint frame's rotation A_PJ followed by the
joint's elementary rotation, P_r_PO the joint frame's origin plus the prismatic or helical
displacement, and every actuated dof gets a 'rot' (revolute, helical) or 'lin' (prismatic) force
element between the body and its parent.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

from ..model.model import Model
from . import _core as C
from .eom import EquationsOfMotion, register_method
from .pne import Body, LinForce, RotForce, compute_pne
from .rnea_sym import joint_transform
from .tree import HEL, REV, joint_factors, model_parameters, model_symbols, symbolic_bodies

__all__ = ["PneSystem", "pne_system", "pne_equations"]


@dataclass
class PneSystem:
    """A proNEu input set: everything ``computePNE`` takes, plus default values.

    ``derive(system, "pne")`` (or :meth:`derive`) runs :func:`~multibody.symbolic.pne.compute_pne`.
    """

    name: str
    bodies: list
    force_elements: list
    q: sp.Matrix
    dq: sp.Matrix
    tau: sp.Matrix
    params: tuple
    gravity: sp.Matrix
    param_values: dict = field(default_factory=dict)   # paramDef
    q_default: dict = field(default_factory=dict)      # qDef
    info: dict[str, Any] = field(default_factory=dict)

    def derive(self, **kwargs) -> EquationsOfMotion:
        """``compute_pne`` of this system (keyword arguments are passed on)."""
        return compute_pne(self.bodies, self.force_elements, self.q, self.dq, self.tau,
                           self.gravity, params=self.params, **kwargs)

    def __iter__(self):
        """Unpack as ``bodies, force_elements, q, dq, tau, params``."""
        return iter((self.bodies, self.force_elements, self.q, self.dq, self.tau, self.params))


def _converters(symbols):
    """SymEngine → SymPy for scalars, 3×3 rows and 3-vectors, giving back the model's own symbols by
    name (SymEngine keeps one symbol per name, so ``m1`` and ``m1`` with assumptions meet there)."""
    conv = C.Converter(symbols)
    return conv, (lambda rows: sp.Matrix([[conv(x) for x in r] for r in rows])), \
        (lambda v: sp.Matrix([conv(x) for x in v]))


def pne_system(model, q=None, dq=None, tau=None, actuated=None) -> PneSystem:
    """The proNEu body list and force elements of ``model`` (symbols as :func:`derive` chooses them).

    A massless body with one child and no actuator on its joint is folded into that child, as
    the manual writes StarlETH's floating base: one body with P_r_PO = [qX; qY; qZ] and
    A_PB = eulerToRotMat_A_IB(qAL, qBE, qGA) instead of five massless bodies in a chain.

    Parameters
    ----------
    model : Model
        A model with revolute, prismatic, helical or fixed joints.
    q, dq, tau, actuated : optional
        Symbols and actuated dofs, as :func:`model_symbols` takes them.

    Returns
    -------
    PneSystem
        ``bodies`` (list of :class:`Body`), ``force_elements`` (a :class:`RotForce` or
        :class:`LinForce` per actuator), ``q``, ``dq``, ``tau``, ``gravity``, ``params``;
        ``derive(system, "pne")`` gives its equations.

    Raises
    ------
    TypeError
        ``model`` is not a Model; ``q``, ``dq`` or ``tau`` is not a sequence of symbols.
    ValueError
        As :func:`model_symbols` (wrong numbers of symbols, bad ``actuated``, a quaternion or
        planar joint).

    Examples
    --------
    >>> import multibody as mb
    >>> system = mb.symbolic.pne_system(mb.models.starleth(symbolic=True))
    >>> system.bodies[0].name, system.bodies[0].P_r_PO.T, [f[0] for f in system.bodies[0].A_PB]
    ('main_body', Matrix([[qX, qY, qZ]]), ['x', 'y', 'z'])
    """
    from ..model.seed import seed_info

    q, dq, tau, S, params = model_symbols(model, q, dq, tau, actuated)
    _sp, _spm, _spv = _converters(list(q) + list(dq) + list(tau) + list(params))
    bodies = symbolic_bodies(model)
    qe = [C.to_se(s) for s in q]
    tau_of = {int(np.flatnonzero(np.array(S.row(r), dtype=float))[0]): tau[r] for r in range(S.rows)}
    n_children = [sum(1 for b in bodies if b.parent == i) for i in range(len(bodies))]
    folded = {}  # index of a folded body → (its parent's name, P_r_PO, rotation factors)
    body_list, force_elements = [], []
    for i, bd in enumerate(bodies):
        # A_PB as proNEu writes it: a product of elementary rotations ("x", q1) and matrices
        factors = [(f.axis, _sp(f.angle)) if f.axis else _spm(f.matrix) for f in joint_factors(bd, qe)]
        P_r_PO = _spv(joint_transform(bd, qe)[1])
        parent = None if bd.parent < 0 else bodies[bd.parent].name
        P_r_R = _spv(bd.t_PJ)  # where a prismatic actuator's reaction acts on the parent
        if bd.parent in folded:  # continue the folded chain: P_r_PO and A_PB relative to its parent
            parent, p_prev, f_prev = folded[bd.parent]
            A_prev = sp.eye(3)
            for f in f_prev:
                A_prev = A_prev * (_spm(C.elementary(f[0], C.to_se(f[1]))) if isinstance(f, tuple) else f)
            P_r_PO = p_prev + (A_prev * P_r_PO if P_r_PO != sp.zeros(3, 1) else P_r_PO)
            P_r_R = p_prev + A_prev * P_r_R
            factors = f_prev + factors
        massless = bd.mass == 0 and all(x == 0 for r in bd.inertia_com for x in r)
        if massless and n_children[i] == 1 and bd.dof not in tau_of:
            folded[i] = (parent, P_r_PO, factors)
            continue
        body_list.append(Body(bd.name, _sp(bd.mass), _spm(bd.inertia_com), _spv(bd.com), P_r_PO,
                              factors or [sp.eye(3)], parent=parent))
        if bd.dof in tau_of:
            axis, T = _spv(bd.axis), tau_of[bd.dof]
            label = f"actuator of joint {bd.name!r}"
            if bd.kind in (REV, HEL):
                force_elements.append(RotForce(parent, bd.name, axis * T, name=label))
            else:
                force_elements.append(LinForce(parent, bd.name, P_r_R=P_r_R, B_r_A=sp.zeros(3, 1),
                                               B_F=axis * T, name=label))
    gravity = sp.Matrix([sp.sympify(x) for x in np.asarray(model.gravity, dtype=object)])
    info = seed_info(model)
    values = {}
    if info is not None:
        values = {s: info.values[n] for n, s in info.symbols.items() if isinstance(s, sp.Symbol)}
    return PneSystem(model.name, body_list, force_elements, q, dq, tau, params, gravity, values,
                     dict(zip(q, info.q0)) if info and info.q0 else {}, dict(info.notes) if info else {})


def _body_list_source(bodies):
    if not all(isinstance(b, Body) for b in bodies):
        bad = next(type(b).__name__ for b in bodies if not isinstance(b, Body))
        raise TypeError(f"derive: a proNEu body list holds multibody.symbolic.Body records, found a {bad}")


@register_method("pne", accepts=(Model, PneSystem, list), summary="projected Newton-Euler (proNEu computePNE)")
def pne_equations(source, q, dq, tau, *, S, progress=None, force_elements=(), gravity=(0, 0, -9.81),
                  kinematics=True, frame="auto", check_rotations=None) -> EquationsOfMotion:
    """``derive(source, "pne")`` for a Model, a :class:`PneSystem` or a list of :class:`Body`.

    A model is first turned into its body list (:func:`pne_system`); a bare body list takes its
    force elements and gravity from ``force_elements=`` and ``gravity=``. Options of
    :func:`compute_pne`: ``kinematics``, ``frame``, ``check_rotations`` (default: off for a model,
    whose rotations the Model checked, on otherwise).
    """
    if isinstance(source, Model):
        actuated = [int(np.flatnonzero(np.array(S.row(r), dtype=float))[0]) for r in range(S.rows)]
        system = pne_system(source, q, dq, tau, actuated)
        check = False if check_rotations is None else check_rotations
    elif isinstance(source, PneSystem):
        system = source
        check = True if check_rotations is None else check_rotations
    else:
        _body_list_source(source)
        system = PneSystem("bodies", list(source), list(force_elements), q, dq, tau, None,
                           sp.Matrix(list(gravity)))
        check = True if check_rotations is None else check_rotations
    eom = compute_pne(system.bodies, system.force_elements, system.q, system.dq, system.tau, system.gravity,
                      params=system.params, kinematics=kinematics, frame=frame, check_rotations=check,
                      progress=progress)
    if isinstance(source, Model):
        eom.params = model_parameters(source)
    return eom

