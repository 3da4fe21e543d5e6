"""Actuators on joints and fixed tendons (MJCF ``<actuator>``: motor, position, velocity, general)
as model data.

MuJoCo compiles every shortcut to a general actuator (``mjModel.actuator_*``); the rows kept here
are the ones with a joint transmission (hinge, slide) or a fixed-tendon transmission (L = Σ c_j q_j,
MuJoCo's ``mjTRN_TENDON`` on a ``<tendon><fixed>``), a fixed gain and a none or affine bias
(MuJoCo's ``mj_fwdActuation`` for those rows):

    c = clip(ctrl, ctrlrange)              when ctrllimited
    l = gear · Σ c_j q_j,  l̇ = gear · Σ c_j q̇_j   (the actuator's length and velocity; one term
                                            with c = 1 for a joint transmission)
    f = gain · c + (b0 + b1 · l + b2 · l̇)  clipped to forcerange when forcelimited
    τ_j += (gear · c_j) · f,  then τ_j clipped to the joint's ``actuatorfrcrange`` where it is limited

``actuatorgravcomp`` on a joint (``gravcomp_dofs``) moves its share g_j of the bodies' gravity
compensation (``Model.gravcomp``, g = Σ_i J_i(c_i)ᵀ f_i: :func:`multibody.gravity_compensation_torques`)
from MuJoCo's passive force into the actuator force before that clip: the variable gets
clip(τ_j + g_j), not g_j + clip(τ_j).  A run applies g as ``f_ext`` on every variable (gravcomp's
law), so :meth:`Actuators.forces` returns clip(τ_j + g_j) − g_j there; unclipped, the two agree.

Activation dynamics ``filter`` / ``filterexact`` (ȧ = (c − a)/τ, dm_control's quadruped) are kept
at their steady state a = c (clamped to ``actrange`` where ``actlimited``), which is exact while the
run's ctrl equals the start activation (0 in MuJoCo's default state: a stays 0); ``filter_tau``
holds each row's τ (0 for none) and ``simulate`` warns, naming the rows and τ, when a run's ctrl
differs from 0 there (the transient MuJoCo integrates is not modelled).  Other dynamics
(integrator, muscle, user) are skipped with a warning.

:meth:`Actuators.forces` is that statement (the reference ``csrc/sim/passive.c``'s
``mb_passive_actuators`` is held to in ``tests/test_passive.py``); a run applies it with a
constant ``ctrl`` (``mb.simulate(..., ctrl=...)``, a keyframe's by default).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _frozen(a):
    """``a``, read-only (a table cached on the immutable record: no caller may change it in place)."""
    a.setflags(write=False)
    return a

# the columns of one row as csrc/sim/passive.c reads them (rollout.py's Passive.actuators)
# (a row's transmission terms are rows first … first + count − 1 of the (k, 3) table
# (q index, v index, coefficient): Actuators.term_rows)
ROW = ("first term", "terms", "gear", "gain", "b0", "b1", "b2", "ctrl lo", "ctrl hi", "force lo", "force hi")


@dataclass(frozen=True, eq=False)
class Actuators:
    """The model's joint actuators, one entry per actuator (``model.actuators``).

    ``names``; ``q_index``, ``v_index`` of the driven joint's variable (−1 for a tendon
    transmission); ``terms`` (k, 4): (actuator, q index, v index, coefficient) of each
    transmission, grouped by actuator in order (None: one term of coefficient 1 on
    ``q_index``/``v_index`` each); ``filter_tau`` (n,): activation filter time constant (0: none);
    ``gear``; ``gain``
    (MuJoCo's ``gainprm[0]``); ``bias`` (n, 3) = ``biasprm[0:3]``; ``ctrlrange``/``forcerange``
    (n, 2) with ``ctrllimited``/``forcelimited``; ``mujoco_index`` (each row's index among the
    file's actuators, to read a keyframe's ``ctrl``); ``dof_forcerange`` (nv, 2): each variable's
    ``actuatorfrcrange`` (±inf where the joint has none); ``gravcomp_dofs`` (nv,) bool: the
    variables whose joint routes its gravity compensation through the actuators (MJCF
    ``actuatorgravcomp``; None: none).

    Example:

    >>> import numpy as np, multibody as mb
    >>> m = mb.load_mjcf('''<mujoco><worldbody><body><joint name="j" type="hinge"/>
    ...   <geom type="sphere" size=".1" mass="1"/></body></worldbody>
    ...   <actuator><position joint="j" kp="10" ctrlrange="-1 1"/></actuator></mujoco>''')
    >>> m.actuators.names, m.actuators.forces(np.array([0.2]), np.array([0.0]), np.array([2.0]))
    (('actuator0',), array([8.]))
    """
    names: tuple
    q_index: np.ndarray
    v_index: np.ndarray
    gear: np.ndarray
    gain: np.ndarray
    bias: np.ndarray
    ctrlrange: np.ndarray
    ctrllimited: np.ndarray
    forcerange: np.ndarray
    forcelimited: np.ndarray
    mujoco_index: np.ndarray
    dof_forcerange: np.ndarray
    terms: np.ndarray = None
    filter_tau: np.ndarray = None
    gravcomp_dofs: np.ndarray = None

    def __post_init__(self):
        n = len(self.names)
        for k, shape, dt in (("q_index", (n,), np.int64), ("v_index", (n,), np.int64), ("gear", (n,), float),
                             ("gain", (n,), float), ("bias", (n, 3), float), ("ctrlrange", (n, 2), float),
                             ("ctrllimited", (n,), bool), ("forcerange", (n, 2), float),
                             ("forcelimited", (n,), bool), ("mujoco_index", (n,), np.int64)):
            a = np.array(getattr(self, k), dtype=dt).reshape(shape)
            if dt is float and not np.all(np.isfinite(a)):
                raise ValueError(f"actuators: {k}: expected finite numbers, got {a!r}"[:300])
            a.setflags(write=False)
            object.__setattr__(self, k, a)
        d = np.array(self.dof_forcerange, dtype=float)
        if d.ndim != 2 or d.shape[1] != 2 or np.any(np.isnan(d)) or np.any(d[:, 0] > d[:, 1]):
            raise ValueError("actuators: dof_forcerange: expected (nv, 2) rows lo ≤ hi (±inf: no limit)")
        d.setflags(write=False)
        object.__setattr__(self, "dof_forcerange", d)
        object.__setattr__(self, "names", tuple(str(x) for x in self.names))
        if self.terms is None:
            if np.any(self.q_index < 0) or np.any(self.v_index < 0):
                raise ValueError("actuators: q_index, v_index: expected indices ≥ 0 without terms")
            t = np.column_stack((np.arange(n), self.q_index, self.v_index, np.ones(n))) if n else np.zeros((0, 4))
        else:
            t = np.array(self.terms, dtype=float).reshape(-1, 4)
            a = t[:, 0]
            if (not np.all(np.isfinite(t)) or np.any(a != np.round(a)) or np.any(np.diff(a) < 0)
                    or set(a.astype(int).tolist()) != set(range(n)) or np.any(t[:, 1:3] < 0)):
                raise ValueError("actuators: terms: expected rows (actuator, q index ≥ 0, v index ≥ 0, "
                                 "coefficient), grouped by actuator in order, at least one per actuator")
        t.setflags(write=False)
        object.__setattr__(self, "terms", t)
        tau = np.zeros(n) if self.filter_tau is None else np.array(self.filter_tau, dtype=float).reshape(n)
        if not np.all(np.isfinite(tau) & (tau >= 0)):
            raise ValueError(f"actuators: filter_tau: expected {n} numbers ≥ 0, got {tau!r}"[:300])
        tau.setflags(write=False)
        object.__setattr__(self, "filter_tau", tau)
        nv = len(d)
        gd = np.zeros(nv, dtype=bool) if self.gravcomp_dofs is None else np.asarray(self.gravcomp_dofs)
        if gd.shape != (nv,) or gd.dtype != bool:
            raise ValueError(f"actuators: gravcomp_dofs: expected {nv} booleans (one per variable, as "
                             f"dof_forcerange), got {self.gravcomp_dofs!r}"[:300])
        gd = gd.copy()
        gd.setflags(write=False)
        object.__setattr__(self, "gravcomp_dofs", gd)

    def __len__(self):
        return len(self.names)

    def __repr__(self):
        """One line: the count, the first and last names, and what is limited, filtered or on tendons (the
        dataclass's default printed every array: a model's repr ran to pages)."""
        n = len(self)
        names = ", ".join(self.names) if n <= 4 else f"{', '.join(self.names[:3])}, …, {self.names[-1]}"
        tendon = int(np.sum((self.q_index < 0) | (self.v_index < 0)))
        return (f"Actuators({n} actuator{'s' if n != 1 else ''}" + (f": {names}" if n else "")
                + f"; ctrl-limited {int(self.ctrllimited.sum())}, force-limited {int(self.forcelimited.sum())}, "
                f"filtered {int(np.count_nonzero(self.filter_tau))}, on tendons {tendon})")

    def bounds(self):
        """(ctrl lo, ctrl hi, force lo, force hi) per actuator, ±inf where a range is not limited
        (read-only arrays, computed once: the record is immutable and a run reads them at every event)."""
        got = self.__dict__.get("_bounds")
        if got is None:
            inf = np.inf
            c = np.where(self.ctrllimited[:, None], self.ctrlrange, [-inf, inf])
            f = np.where(self.forcelimited[:, None], self.forcerange, [-inf, inf])
            got = tuple(_frozen(np.ascontiguousarray(x)) for x in (c[:, 0], c[:, 1], f[:, 0], f[:, 1]))
            object.__setattr__(self, "_bounds", got)
        return got

    def _passes(self, column):
        """The transmission terms as vectorised passes that add them in :meth:`lengths`' (and
        ``csrc/sim/passive.c``'s) order: pass r holds each target's r-th term (the target: the actuator,
        column 0, for the lengths; the variable, column 2, for :meth:`forces`), so no target appears
        twice in a pass and each target's sum is taken term by term in order — the loop's bits.
        Returns [(actuator, q index, v index, coefficient) arrays] per pass; computed once."""
        key = f"_passes{column}"
        got = self.__dict__.get(key)
        if got is None:
            t = self.terms
            target = t[:, column].astype(np.int64)
            rank = np.zeros(len(t), dtype=np.int64)
            seen: dict[int, int] = {}
            for k, x in enumerate(target.tolist()):
                rank[k] = seen.get(x, 0)
                seen[x] = rank[k] + 1
            got = []
            for r in range(int(rank.max()) + 1 if len(t) else 0):
                sel = np.flatnonzero(rank == r)
                got.append(tuple(_frozen(a) for a in (t[sel, 0].astype(np.int64), t[sel, 1].astype(np.int64),
                                                      t[sel, 2].astype(np.int64), t[sel, 3].copy())))
            object.__setattr__(self, key, tuple(got))
        return got

    def rows(self):
        """The (n, 11) table ``csrc/sim/passive.c`` reads (columns :data:`ROW`); built once, read-only."""
        got = self.__dict__.get("_rows")
        if got is not None:
            return got
        clo, chi, flo, fhi = self.bounds()
        a = self.terms[:, 0].astype(int)
        count = np.bincount(a, minlength=len(self))
        first = np.concatenate(([0], np.cumsum(count)[:-1])) if len(self) else np.zeros(0)
        got = _frozen(np.ascontiguousarray(np.column_stack((first, count, self.gear, self.gain, self.bias,
                                                           clo, chi, flo, fhi)), dtype=float))
        object.__setattr__(self, "_rows", got)   # (every run's plan reads it)
        return got

    def term_rows(self):
        """The (k, 3) transmission table ``csrc/sim/passive.c`` reads: (q index, v index, coefficient)."""
        return np.ascontiguousarray(self.terms[:, 1:], dtype=float)

    def check_ctrl(self, ctrl):
        """``ctrl`` as an (n,) float array, or a ValueError naming the expected size."""
        c = np.array(ctrl, dtype=float).reshape(-1) if np.ndim(ctrl) else np.array([ctrl], dtype=float)
        if c.shape != (len(self),) or not np.all(np.isfinite(c)):
            raise ValueError(f"ctrl: expected {len(self)} finite numbers (one per actuator: "
                             f"{list(self.names)[:8]}), got {np.asarray(ctrl)!r}"[:400])
        return c

    def gravcomp_clipped(self):
        """The increasing variable indices where ``actuatorgravcomp`` meets a limited
        ``actuatorfrcrange``: where :meth:`forces` needs the gravity compensation (``csrc/sim/passive.c``
        reads them as ``actuator_gravcomp``)."""
        got = self.__dict__.get("_gravcomp_clipped")
        if got is None:
            r = self.dof_forcerange
            got = _frozen(np.flatnonzero(self.gravcomp_dofs & (np.isfinite(r[:, 0]) | np.isfinite(r[:, 1]))))
            object.__setattr__(self, "_gravcomp_clipped", got)
        return got

    def forces(self, q, v, ctrl, nv=None, gravcomp=None):
        """(nv,) generalized actuator forces at (q, q̇) under ``ctrl`` (the module's statement).
        ``gravcomp`` (nv,): the gravity compensation g at q (:func:`multibody.gravity_compensation_torques`),
        needed where :meth:`gravcomp_clipped` names variables: they get clip(τ_j + g_j) − g_j (module notes)."""
        nv = len(self.dof_forcerange) if nv is None else nv
        force = self.actuator_force(q, v, ctrl)
        tau = np.zeros(nv)
        for a, _qi, vi, c in self._passes(2):   # each variable's terms added in the terms' order
            tau[vi] = tau[vi] + (self.gear[a] * c) * force[a]
        lo, hi = self.dof_forcerange[:, 0], self.dof_forcerange[:, 1]
        out = np.minimum(np.maximum(tau, lo), hi)
        k = self.gravcomp_clipped()
        if len(k):
            if gravcomp is None:
                raise ValueError(f"gravcomp: the actuators clip the gravity compensation of variables {k.tolist()} "
                                 "with their force (MJCF actuatorgravcomp with actuatorfrcrange); pass "
                                 "gravcomp=mb.gravity_compensation_torques(model, q)")
            g = np.asarray(gravcomp, dtype=float)[k]
            out[k] = np.minimum(np.maximum(tau[k] + g, lo[k]), hi[k]) - g
        return out

    def lengths(self, q, v):
        """(l, l̇): each actuator's length gear · Σ c_j q_j and velocity (…, n), over leading axes."""
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        if q.ndim == 1 and v.ndim == 1:   # one state (a run's events ask this): plain indices, no Ellipsis
            L, Ld = np.zeros(len(self)), np.zeros(len(self))
            for a, qi, vi, c in self._passes(0):
                L[a] = L[a] + c * q[qi]
                Ld[a] = Ld[a] + c * v[vi]
            return self.gear * L, self.gear * Ld
        L = np.zeros(q.shape[:-1] + (len(self),))
        Ld = np.zeros(v.shape[:-1] + (len(self),))
        for a, qi, vi, c in self._passes(0):   # summed term by term in order (passive.c's order: its bits)
            L[..., a] = L[..., a] + c * q[..., qi]
            Ld[..., a] = Ld[..., a] + c * v[..., vi]
        return self.gear * L, self.gear * Ld

    def actuator_force(self, q, v, ctrl):
        """(…, n) each actuator's scalar force (MuJoCo's ``actuator_force``), over leading axes of q, v."""
        clo, chi, flo, fhi = self.bounds()
        L, Ld = self.lengths(q, v)
        c = np.minimum(np.maximum(np.asarray(ctrl, dtype=float), clo), chi)
        b = self.bias
        f = self.gain * c + (b[:, 0] + b[:, 1] * L + b[:, 2] * Ld)
        return np.minimum(np.maximum(f, flo), fhi)

    def gains(self, nv):
        """(K, D, kv): the law's linearisation in joint space, K = −∂τ/∂q = −Σ b1 gear² c cᵀ and
        D = −∂τ/∂q̇ = −Σ b2 gear² c cᵀ (nv × nv; the force ranges ignored: the unsaturated law), and
        kv (nv,): the part of D that joint transmissions put on their own variable (diagonal)."""
        K, D, kv = np.zeros((nv, nv)), np.zeros((nv, nv)), np.zeros(nv)
        for a in range(len(self)):
            t = self.terms[self.terms[:, 0] == a]
            c = np.zeros(nv)
            np.add.at(c, t[:, 2].astype(int), t[:, 3])
            g2 = self.gear[a] ** 2
            K -= self.bias[a, 1] * g2 * np.outer(c, c)
            D -= self.bias[a, 2] * g2 * np.outer(c, c)
            if len(t) == 1 and self.bias[a, 2] < 0:
                kv[int(t[0, 2])] -= self.bias[a, 2] * g2 * t[0, 3] ** 2
        return K, D, kv

    def keyframe_ctrl(self, keyframe):
        """A keyframe's ``ctrl`` (one per MuJoCo actuator) for these rows; zeros where it has none."""
        c = np.asarray(keyframe.ctrl, dtype=float)
        if c.size == 0:
            return np.zeros(len(self))
        return c[self.mujoco_index]


def from_mjmodel_actuators(mj, label, warning, lines=None):
    """The joint and fixed-tendon actuators of a compiled ``mujoco.MjModel`` (None if it has none
    kept); each other actuator (site or body transmission, a spatial tendon, a ball or free joint,
    activation dynamics other than a filter, a non-fixed gain or a non-affine bias) is skipped with
    one ``warning`` naming it, where it was written (``lines``: "line N" per actuator, or None) and why."""
    import warnings

    import mujoco
    if mj.nu == 0 or mj.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_ACTUATION:
        return None
    HINGE, SLIDE = int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)
    JOINT, TENDON = int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_TENDON)
    FILTERS = (int(mujoco.mjtDyn.mjDYN_FILTER), int(mujoco.mjtDyn.mjDYN_FILTEREXACT))
    clamp_ctrl = not mj.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CLAMPCTRL
    rows, skipped = [], []
    for a in range(mj.nu):
        name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or f"actuator{a}"
        trn, j = int(mj.actuator_trntype[a]), int(mj.actuator_trnid[a, 0])
        dyn = int(mj.actuator_dyntype[a])
        why, terms = None, []
        if trn == JOINT:
            if int(mj.jnt_type[j]) not in (HINGE, SLIDE):
                why = "drives a ball or free joint (hinge and slide joints only)"
            else:
                terms = [(int(mj.jnt_qposadr[j]), int(mj.jnt_dofadr[j]), 1.0)]
        elif trn == TENDON:
            w0, nw = int(mj.tendon_adr[j]), int(mj.tendon_num[j])
            if any(int(mj.wrap_type[w]) != int(mujoco.mjtWrap.mjWRAP_JOINT) for w in range(w0, w0 + nw)):
                why = "transmission through a spatial tendon (joints and fixed tendons only)"
            else:   # L = Σ c_j q_j over the tendon's hinge/slide joints (MuJoCo allows no others there)
                terms = [(int(mj.jnt_qposadr[mj.wrap_objid[w]]), int(mj.jnt_dofadr[mj.wrap_objid[w]]),
                          float(mj.wrap_prm[w])) for w in range(w0, w0 + nw)]
        else:
            why = f"transmission {mujoco.mjtTrn(trn).name} (joint and fixed-tendon transmissions only)"
        if why:
            pass
        elif dyn != int(mujoco.mjtDyn.mjDYN_NONE) and dyn not in FILTERS:
            why = f"activation dynamics {mujoco.mjtDyn(dyn).name} (none, filter or filterexact only)"
        elif int(mj.actuator_gaintype[a]) != int(mujoco.mjtGain.mjGAIN_FIXED):
            why = f"gain type {mujoco.mjtGain(int(mj.actuator_gaintype[a])).name} (fixed only)"
        elif int(mj.actuator_biastype[a]) not in (int(mujoco.mjtBias.mjBIAS_NONE), int(mujoco.mjtBias.mjBIAS_AFFINE)):
            why = f"bias type {mujoco.mjtBias(int(mj.actuator_biastype[a])).name} (none or affine only)"
        if why:
            where = f" ({lines[a]})" if lines is not None and lines[a] else ""
            skipped.append(f"{name!r}{where}: {why}")
            continue
        affine = int(mj.actuator_biastype[a]) == int(mujoco.mjtBias.mjBIAS_AFFINE)
        cr, cl = np.array(mj.actuator_ctrlrange[a], float), bool(mj.actuator_ctrllimited[a]) and clamp_ctrl
        if dyn in FILTERS and mj.actuator_actlimited[a]:
            # the steady state a = c is clamped to actrange as well: one range, their intersection
            ar = np.array(mj.actuator_actrange[a], float)
            cr = np.array([max(ar[0], cr[0]), min(ar[1], cr[1])]) if cl else ar
            cl = True
        rows.append(dict(name=name, q=terms[0][0] if trn == JOINT else -1, v=terms[0][1] if trn == JOINT else -1,
                         terms=terms, gear=float(mj.actuator_gear[a, 0]), gain=float(mj.actuator_gainprm[a, 0]),
                         bias=np.array(mj.actuator_biasprm[a, :3], float) if affine else np.zeros(3),
                         cr=cr, cl=cl, fr=np.array(mj.actuator_forcerange[a], float),
                         fl=bool(mj.actuator_forcelimited[a]), a=a,
                         tau=float(mj.actuator_dynprm[a, 0]) if dyn in FILTERS else 0.0))
    if skipped:
        warnings.warn(f"{label}: actuators not kept (skipped): {'; '.join(skipped[:8])}"
                      f"{' …' if len(skipped) > 8 else ''}", warning, stacklevel=5)
    if not rows:
        return None
    dof = np.tile([-np.inf, np.inf], (mj.nv, 1))
    for j in range(mj.njnt):   # actuatorfrcrange: hinge and slide joints' one variable (MuJoCo's order = ours)
        if mj.jnt_actfrclimited[j] and int(mj.jnt_type[j]) in (HINGE, SLIDE):
            dof[mj.jnt_dofadr[j]] = mj.jnt_actfrcrange[j]
    gravcomp = np.zeros(mj.nv, dtype=bool)   # actuatorgravcomp: every variable of the joint (MuJoCo's order = ours)
    for j in np.flatnonzero(getattr(mj, "jnt_actgravcomp", np.zeros(mj.njnt))):
        n = {int(mujoco.mjtJoint.mjJNT_FREE): 6, int(mujoco.mjtJoint.mjJNT_BALL): 3}.get(int(mj.jnt_type[j]), 1)
        gravcomp[mj.jnt_dofadr[j]:mj.jnt_dofadr[j] + n] = True
    terms = [(k, qi, vi, c) for k, r in enumerate(rows) for qi, vi, c in r["terms"]]
    return Actuators(names=tuple(r["name"] for r in rows), q_index=[r["q"] for r in rows],
                     v_index=[r["v"] for r in rows], gear=[r["gear"] for r in rows], gain=[r["gain"] for r in rows],
                     bias=[r["bias"] for r in rows], ctrlrange=[r["cr"] for r in rows],
                     ctrllimited=[r["cl"] for r in rows], forcerange=[r["fr"] for r in rows],
                     forcelimited=[r["fl"] for r in rows], mujoco_index=[r["a"] for r in rows], dof_forcerange=dof,
                     terms=terms, filter_tau=[r["tau"] for r in rows], gravcomp_dofs=gravcomp)
