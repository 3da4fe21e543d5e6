"""The constraint descriptions of fixed geometry as the C core's tables (``csrc/sim/constraints.c``).

A :class:`~multibody.dynamics.constraints.ConstraintSet` whose constraints are all of the kinds below is
evaluated and solved in C (TMT eq. 6 with the set's Baumgarte gains): by
``ConstraintSet.accelerations`` and inside the compiled simulation loop (the Plan's
``Constraints`` record).  Each kind becomes items of ``MB_CON_WIDTH`` numbers (core.h):

* :class:`~multibody.model.constraints.PointConstraint` — one point item (its rows on the chosen axes);
* :class:`~multibody.model.constraints.AxisConstraint` — one axis item per direction (a row each);
* :class:`~multibody.model.constraints.WeldConstraint` — its point item and three axis items;
* :class:`~multibody.model.constraints.JointCoupling` and
  :class:`~multibody.model.constraints.TendonCoupling` — one linear item: fixed tendons
  L = Σ k q (a joint: one term of coefficient 1) coupled by a polynomial.

Any other kind — :class:`~multibody.model.constraints.JointPath` (its φ(t) is a Python function),
:class:`~multibody.model.constraints.FunctionConstraint`, a subclass, a user's object — keeps the
whole set on the Python statement (``dynamics/constraints.py``), which stays the reference the tests
compare with.

Example
-------
>>> import numpy as np, multibody as mb
>>> from multibody.simulation.closed_loops import four_bar
>>> model, closure = four_bar()
>>> items, terms, coef, gains = constraint_tables(mb.ConstraintSet(closure), model)
>>> items.shape, gains.tolist()          # one point item (x and y rows); α = β = 1/0.02 s
((1, 16), [50.0, 50.0, 1e-10])
"""
from __future__ import annotations

import numpy as np

from ..model.constraints import AxisConstraint, JointCoupling, PointConstraint, TendonCoupling, WeldConstraint

__all__ = ["WIDTH", "POINT", "AXIS", "LINEAR", "constraint_tables", "packed_table"]

WIDTH, POINT, AXIS, LINEAR = 16, 0, 1, 2  # core.h: MB_CON_WIDTH, MB_CON_POINT, MB_CON_AXIS, MB_CON_LINEAR


def _body(model, body, base_allowed=True):
    """The body's index; None is the base (−1) on side b only, as the Python statement reads it."""
    if body is None and base_allowed:
        return -1
    return int(model.body_index(body))


def _point(model, con):
    it = np.zeros(WIDTH)
    it[:4] = POINT, _body(model, con.body_a, False), _body(model, con.body_b), len(con.axes)
    it[4:7], it[7:10] = con.point_a, con.point_b
    it[12:12 + len(con.axes)] = con.axes
    return [it]


def _axis(model, con):
    a, b = _body(model, con.body_a, False), _body(model, con.body_b)
    out = []
    for w in con.directions_b:
        it = np.zeros(WIDTH)
        it[:3] = AXIS, a, b
        it[4:7], it[7:10] = con.axis_a, w
        out.append(it)
    return out


def _weld(model, con):
    return _point(model, con.point) + [it for ax in con.axes for it in _axis(model, ax)]


class _Linear:
    """The terms and coefficients of the linear items, appended as the items are written."""

    def __init__(self):
        self.terms, self.coef = [], []

    def tendon(self, model, tendon):
        """(first term, count) of a fixed tendon {joint: coefficient}; None for a joint that is not a
        one-variable joint (the Python statement names it)."""
        first = len(self.terms)
        for j, k in tendon.items():
            i = model.joint_index(j)
            if model.nq_joint[i] != 1 or model.nv_joint[i] != 1:
                return None
            self.terms.append((model.q_start[i], model.v_start[i], float(k)))
        return first, len(self.terms) - first

    def item(self, side_a, side_b, polynomial, reference):
        if side_a is None or side_b is False:
            return None
        it = np.zeros(WIDTH)
        it[0] = LINEAR
        it[1:3] = side_a
        it[3:5] = side_b if side_b is not None else (0, 0)
        it[5:7] = len(self.coef), len(polynomial)
        it[7:9] = reference
        self.coef.extend(polynomial)
        return [it]

    def coupling(self, model, con):
        b = None if con.joint_b is None else (self.tendon(model, {con.joint_b: 1.0}) or False)
        return self.item(self.tendon(model, {con.joint_a: 1.0}), b, con.polynomial, con.reference)

    def tendons(self, model, con):
        b = None if con.tendon_b is None else (self.tendon(model, con.tendon_b) or False)
        return self.item(self.tendon(model, con.tendon_a), b, con.polynomial, con.reference)


def constraint_tables(cset, model):
    """(items (n, 16), terms (t, 3), coef (k,), gains (α, β, rank_tol)) of ``cset`` on ``model`` for
    ``csrc/sim/constraints.c``, or None when a constraint is of a kind that stays in Python, names a
    body or joint the model lacks, or couples a joint that is not a one-variable joint (the Python
    statement raises the readable error)."""
    lin = _Linear()
    kinds = {PointConstraint: _point, AxisConstraint: _axis, WeldConstraint: _weld,
             JointCoupling: lin.coupling, TendonCoupling: lin.tendons}
    items = []
    try:
        for con in cset.constraints:
            write = kinds.get(type(con))   # exactly these kinds: a subclass may mean other rows
            rows = write(model, con) if write is not None else None
            if rows is None:
                return None
            items.extend(rows)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None
    terms = np.array(lin.terms, dtype=float).reshape(-1, 3)
    return (np.ascontiguousarray(items, dtype=float), terms, np.array(lin.coef, dtype=float),
            np.array([cset.alpha, cset.beta, cset.rank_tol], dtype=float))


def packed_table(items, terms, coef, gains):
    """The four tables in one array, as the single-state entry points take them (one argument to
    check a call): [n_items, n_terms, n_coef, α, β, rank_tol, items…, terms…, coef…]."""
    head = [len(items), len(terms), len(coef), *gains]
    return np.concatenate([np.asarray(head, dtype=float), np.ravel(items), np.ravel(terms), np.ravel(coef)])
