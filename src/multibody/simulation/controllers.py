"""Built-in controllers: joint PD, continuous or sampled (zero-order hold), with reference tables.

A controller is called as ``controller(t, q, qd) -> tau (nv,)``.  A Python function with that
signature is accepted everywhere a controller is (it runs in Python each stage, so it is slower
than a built-in one once the loop is compiled).  Built-in controllers carry ``period``: ``None``
for continuous control, or the sampling period of a zero-order hold — the simulator then samples
at t = 0, T, 2T, … and holds the torque in between (spatial_v2's Simulink example 2, "sampled").
"""
from __future__ import annotations

import numpy as np

from .. import _checks
from ..dynamics import rnea
from ..model.joints import spec


def _gain(name, x, nv):
    a = _checks.array(name, x, None)
    if a.ndim == 0:
        a = np.full(nv, float(a))
    if a.shape != (nv,):
        raise ValueError(f"{name}: expected a number or {nv} numbers (one per velocity variable), got shape {a.shape}")
    return a


def _period(period):
    return None if period is None else _checks.number("period (a sampling period in seconds, or None)", period,
                                                       positive=True)


class PD:
    """Joint-space PD: τ = kp ⊙ (q_ref ⊖ q) + kd ⊙ (q̇_ref − q̇) + tau_ff [+ g(q)].

    ``q_ref``, ``qd_ref``: constants, callables of t, or tables sampled at ``times`` (one row per
    time, interpolated linearly, held constant beyond the ends).  ``period``: None (continuous) or
    the sampling period of a zero-order hold.  The position error uses ``mb.difference`` for
    quaternion joints (an error in velocity coordinates), unless ``kp`` is zero on every joint with
    several degrees of freedom (a floating base left free): then only the one-dof joints' errors
    q_ref − q count, and they are taken directly (as the compiled loop does).  ``gravity_compensation=True`` adds the
    gravity torques g(q) = RNEA(q, 0, 0) (``mb.rnea`` with q̇ = q̈ = 0): the joint forces that hold
    the model still, so the PD only corrects the error (the model's gravity, no external forces).

    Example — spatial_v2 Simulink example 1 (PD-controlled planar 2R, no gravity):

    >>> import numpy as np, multibody as mb
    >>> model = mb.models.planar(2).with_gravity([0.0, 0.0, 0.0])
    >>> pd = mb.PD(kp=100.0, kd=20.0, q_ref=[0.5, -0.5])
    >>> traj = mb.simulate(model, [0.0, 0.0], [0.0, 0.0], 3.0, controller=pd)
    >>> bool(np.allclose(traj.q[-1], [0.5, -0.5], atol=0.05))
    True

    With gravity compensation a PD holds a pendulum exactly where it is told:

    >>> arm = mb.models.double_pendulum()
    >>> hold = mb.PD(kp=50.0, kd=10.0, q_ref=[0.3, -0.2], gravity_compensation=True)
    >>> traj = mb.simulate(arm, [0.3, -0.2], [0.0, 0.0], 1.0, controller=hold)
    >>> bool(np.allclose(traj.q[-1], [0.3, -0.2], atol=1e-9))
    True
    """

    def __init__(self, kp, kd, q_ref=None, qd_ref=None, *, times=None, period=None, tau_ff=None,
                 gravity_compensation=False):
        if not isinstance(gravity_compensation, (bool, np.bool_)):
            raise TypeError(f"gravity_compensation: expected True or False, got {gravity_compensation!r}")
        self.gravity_compensation = bool(gravity_compensation)
        self.kp, self.kd = kp, kd
        self.q_ref, self.qd_ref, self.times, self.tau_ff = q_ref, qd_ref, times, tau_ff
        self.period = _period(period)
        self._model = None
        if times is not None:
            tt = np.asarray(times, dtype=float)
            if tt.ndim != 1 or len(tt) < 1 or not np.all(np.isfinite(tt)) or np.any(np.diff(tt) <= 0):
                raise ValueError("times: expected an increasing 1-D array of finite sample times")
            self._times = tt

    def bind(self, model) -> "PD":
        """Check gains and references against a model (the simulator calls this once)."""
        nv, nq = model.nv, model.nq
        self._model = model
        self._kp = _gain("kp", self.kp, nv)
        self._kd = _gain("kd", self.kd, nv)
        self._ff = np.zeros(nv) if self.tau_ff is None else _gain("tau_ff", self.tau_ff, nv)
        plain = [spec(t).vector for t in model.jtype]  # the joint table: q is a plain vector, q̇ = v
        self._vector = model.nq == model.nv and all(plain)
        several = np.zeros(nv, dtype=bool)
        one_q, one_v = [], []
        for i in range(model.nb):
            qs, vs, n = int(model.q_start[i]), int(model.v_start[i]), int(model.nv_joint[i])
            if not plain[i]:
                several[vs:vs + n] = True
            else:
                one_q += range(qs, qs + n)
                one_v += range(vs, vs + n)
        # no position gain on quaternion and planar joints: their error is not needed, the others' is q_ref − q
        self._one_dof = (np.array(one_q, dtype=int), np.array(one_v, dtype=int)) \
            if not self._vector and not np.any(self._kp[several] != 0) else None
        self._qref = self._reference("q_ref", self.q_ref, nq, model.neutral())
        self._qdref = self._reference("qd_ref", self.qd_ref, nv, np.zeros(nv))
        return self

    def _reference(self, name, ref, n, default):
        if ref is None:
            return lambda t: default
        if callable(ref):
            def call(t, _f=ref):
                r = np.asarray(_f(t), dtype=float)
                if r.shape != (n,) or not np.all(np.isfinite(r)):
                    raise ValueError(f"{name}: the reference function returned {r!r} at t = {t!r}; "
                                     f"expected {n} finite numbers")
                return r
            return call
        a = np.asarray(ref, dtype=float)
        if self.times is not None:
            if a.shape != (len(self._times), n):
                raise ValueError(f"{name}: with times, expected a table of shape ({len(self._times)}, {n}), "
                                 f"got {a.shape}")
        elif a.shape != (n,):
            raise ValueError(f"{name}: expected {n} numbers, got shape {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name}: contains NaN or inf")
        if self.times is None:
            return lambda t: a
        tt = self._times
        return lambda t: np.array([np.interp(t, tt, a[:, j]) for j in range(n)])

    def __call__(self, t, q, qd):
        if self._model is None:
            raise ValueError("PD: not bound to a model; pass it to mb.simulate (or call .bind(model))")
        qr = self._qref(t)
        if self._vector:
            e = qr - q
        elif self._one_dof is not None:
            qi, vi = self._one_dof
            e = np.zeros(np.shape(q)[:-1] + (self._model.nv,))
            e[..., vi] = qr[..., qi] - q[..., qi]
        else:
            from ..model.configuration import difference
            e = difference(self._model, q, qr)
        tau = self._kp * e + self._kd * (self._qdref(t) - qd) + self._ff
        if self.gravity_compensation:
            zero = np.zeros(np.shape(qd))
            tau = tau + rnea(self._model, q, zero, zero)
        return tau

    def __repr__(self):
        kind = "continuous" if self.period is None else f"sampled every {self.period:g} s"
        gc = ", gravity_compensation=True" if self.gravity_compensation else ""
        return f"PD(kp={self.kp!r}, kd={self.kd!r}, {kind}{gc})"


class TorqueTable:
    """Open-loop joint forces from a time table: τ(t) linear between rows, held beyond the ends.

    ``times`` (M,) increasing, ``tau`` (M, nv); ``period``: None (continuous) or the sampling period
    of a zero-order hold, as for :class:`PD`.  Runs in the compiled loop of ``mb.simulate``.

    >>> import numpy as np, multibody as mb
    >>> table = mb.TorqueTable([0.0, 1.0], [[0.0, 0.0], [2.0, -1.0]])
    >>> table.bind(mb.models.planar(2))(0.25, None, None).tolist()
    [0.5, -0.25]
    """

    def __init__(self, times, tau, *, period=None):
        tt = _checks.array("times", times, None)
        if tt.ndim != 1 or len(tt) < 1 or np.any(np.diff(tt) <= 0):
            raise ValueError("times: expected an increasing 1-D array of finite sample times")
        tau = _checks.array("tau", tau, (len(tt), None), what="a table with one row per time")
        self.times, self.tau = tt, tau
        self.period = _period(period)
        self._model = None

    def bind(self, model) -> "TorqueTable":
        """Check the table's width against a model (the simulator calls this once)."""
        if self.tau.shape[1] != model.nv:
            raise ValueError(f"tau: the table has {self.tau.shape[1]} columns, expected {model.nv} (one per "
                             f"velocity variable)")
        self._model = model
        return self

    def __call__(self, t, q, qd):
        return np.array([np.interp(t, self.times, self.tau[:, j]) for j in range(self.tau.shape[1])])

    def __repr__(self):
        kind = "continuous" if self.period is None else f"sampled every {self.period:g} s"
        return f"TorqueTable({len(self.times)} rows, {kind})"
