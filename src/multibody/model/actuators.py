"""Actuators on joints (MJCF ``<actuator>``: motor, position, velocity, general) as model data.

MuJoCo compiles every shortcut to a general actuator (``mjModel.actuator_*``); the rows kept here
are the ones with a joint transmission, a fixed gain, a none or affine bias and no activation
dynamics (MuJoCo's ``mj_fwdActuation`` for those rows):

    c = clip(ctrl, ctrlrange)              when ctrllimited
    l = gear · q,  l̇ = gear · q̇            (the actuator's length and velocity)
    f = gain · c + (b0 + b1 · l + b2 · l̇)  clipped to forcerange when forcelimited
    τ_j += gear · f,  then τ_j clipped to the joint's ``actuatorfrcrange`` where it is limited

:meth:`Actuators.forces` is that statement (the reference ``csrc/sim/passive.c``'s
``mb_passive_actuators`` is held to in ``tests/test_passive.py``); a run applies it with a
constant ``ctrl`` (``mb.simulate(..., ctrl=...)``, a keyframe's by default).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# the columns of one row as csrc/sim/passive.c reads them (rollout.py's Passive.actuators)
ROW = ("q index", "v index", "gear", "gain", "b0", "b1", "b2", "ctrl lo", "ctrl hi", "force lo", "force hi")


@dataclass(frozen=True, eq=False)
class Actuators:
    """The model's joint actuators, one entry per actuator (``model.actuators``).

    ``names``; ``q_index``, ``v_index`` of the driven joint's variable; ``gear``; ``gain``
    (MuJoCo's ``gainprm[0]``); ``bias`` (n, 3) = ``biasprm[0:3]``; ``ctrlrange``/``forcerange``
    (n, 2) with ``ctrllimited``/``forcelimited``; ``mujoco_index`` (each row's index among the
    file's actuators, to read a keyframe's ``ctrl``); ``dof_forcerange`` (nv, 2): each variable's
    ``actuatorfrcrange`` (±inf where the joint has none).

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

    def __len__(self):
        return len(self.names)

    def bounds(self):
        """(ctrl lo, ctrl hi, force lo, force hi) per actuator, ±inf where a range is not limited."""
        inf = np.inf
        c = np.where(self.ctrllimited[:, None], self.ctrlrange, [-inf, inf])
        f = np.where(self.forcelimited[:, None], self.forcerange, [-inf, inf])
        return c[:, 0], c[:, 1], f[:, 0], f[:, 1]

    def rows(self):
        """The (n, 11) table ``csrc/sim/passive.c`` reads (columns :data:`ROW`)."""
        clo, chi, flo, fhi = self.bounds()
        return np.ascontiguousarray(np.column_stack((self.q_index, self.v_index, self.gear, self.gain, self.bias,
                                                     clo, chi, flo, fhi)), dtype=float)

    def check_ctrl(self, ctrl):
        """``ctrl`` as an (n,) float array, or a ValueError naming the expected size."""
        c = np.array(ctrl, dtype=float).reshape(-1) if np.ndim(ctrl) else np.array([ctrl], dtype=float)
        if c.shape != (len(self),) or not np.all(np.isfinite(c)):
            raise ValueError(f"ctrl: expected {len(self)} finite numbers (one per actuator: "
                             f"{list(self.names)[:8]}), got {np.asarray(ctrl)!r}"[:400])
        return c

    def forces(self, q, v, ctrl, nv=None):
        """(nv,) generalized actuator forces at (q, q̇) under ``ctrl`` (the module's statement)."""
        nv = len(self.dof_forcerange) if nv is None else nv
        force = self.actuator_force(q, v, ctrl)
        tau = np.zeros(nv)
        for a in range(len(self)):
            vi = int(self.v_index[a])
            tau[vi] = tau[vi] + self.gear[a] * force[a]
        return np.minimum(np.maximum(tau, self.dof_forcerange[:, 0]), self.dof_forcerange[:, 1])

    def actuator_force(self, q, v, ctrl):
        """(n,) each actuator's scalar force (MuJoCo's ``actuator_force``)."""
        clo, chi, flo, fhi = self.bounds()
        out = np.zeros(len(self))
        for a in range(len(self)):
            qi, vi, g = int(self.q_index[a]), int(self.v_index[a]), self.gear[a]
            c = min(max(ctrl[a], clo[a]), chi[a])
            b0, b1, b2 = self.bias[a]
            out[a] = min(max(self.gain[a] * c + (b0 + b1 * (g * q[qi]) + b2 * (g * v[vi])), flo[a]), fhi[a])
        return out

    def keyframe_ctrl(self, keyframe):
        """A keyframe's ``ctrl`` (one per MuJoCo actuator) for these rows; zeros where it has none."""
        c = np.asarray(keyframe.ctrl, dtype=float)
        if c.size == 0:
            return np.zeros(len(self))
        return c[self.mujoco_index]


def from_mjmodel_actuators(mj, label, warning):
    """The joint actuators of a compiled ``mujoco.MjModel`` (None if it has none kept); each other
    actuator (tendon, site or body transmission, a ball or free joint, activation dynamics, a
    non-fixed gain or a non-affine bias) is skipped with one ``warning`` naming it and why."""
    import warnings

    import mujoco
    if mj.nu == 0 or mj.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_ACTUATION:
        return None
    HINGE, SLIDE = int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)
    clamp_ctrl = not mj.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CLAMPCTRL
    rows, skipped = [], []
    for a in range(mj.nu):
        name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or f"actuator{a}"
        trn, j = int(mj.actuator_trntype[a]), int(mj.actuator_trnid[a, 0])
        why = None
        if trn != int(mujoco.mjtTrn.mjTRN_JOINT):
            why = f"transmission {mujoco.mjtTrn(trn).name} (joint transmissions only)"
        elif int(mj.jnt_type[j]) not in (HINGE, SLIDE):
            why = "drives a ball or free joint (hinge and slide joints only)"
        elif int(mj.actuator_dyntype[a]) != int(mujoco.mjtDyn.mjDYN_NONE):
            why = f"activation dynamics {mujoco.mjtDyn(int(mj.actuator_dyntype[a])).name} (none only)"
        elif int(mj.actuator_gaintype[a]) != int(mujoco.mjtGain.mjGAIN_FIXED):
            why = f"gain type {mujoco.mjtGain(int(mj.actuator_gaintype[a])).name} (fixed only)"
        elif int(mj.actuator_biastype[a]) not in (int(mujoco.mjtBias.mjBIAS_NONE), int(mujoco.mjtBias.mjBIAS_AFFINE)):
            why = f"bias type {mujoco.mjtBias(int(mj.actuator_biastype[a])).name} (none or affine only)"
        if why:
            skipped.append(f"{name!r}: {why}")
            continue
        affine = int(mj.actuator_biastype[a]) == int(mujoco.mjtBias.mjBIAS_AFFINE)
        rows.append(dict(name=name, q=int(mj.jnt_qposadr[j]), v=int(mj.jnt_dofadr[j]), gear=float(mj.actuator_gear[a, 0]),
                         gain=float(mj.actuator_gainprm[a, 0]),
                         bias=np.array(mj.actuator_biasprm[a, :3], float) if affine else np.zeros(3),
                         cr=np.array(mj.actuator_ctrlrange[a], float), cl=bool(mj.actuator_ctrllimited[a]) and clamp_ctrl,
                         fr=np.array(mj.actuator_forcerange[a], float), fl=bool(mj.actuator_forcelimited[a]), a=a))
    if skipped:
        warnings.warn(f"{label}: actuators not kept (skipped): {'; '.join(skipped[:8])}"
                      f"{' …' if len(skipped) > 8 else ''}", warning, stacklevel=5)
    if not rows:
        return None
    dof = np.tile([-np.inf, np.inf], (mj.nv, 1))
    for j in range(mj.njnt):   # actuatorfrcrange: hinge and slide joints' one variable (MuJoCo's order = ours)
        if mj.jnt_actfrclimited[j] and int(mj.jnt_type[j]) in (HINGE, SLIDE):
            dof[mj.jnt_dofadr[j]] = mj.jnt_actfrcrange[j]
    return Actuators(names=tuple(r["name"] for r in rows), q_index=[r["q"] for r in rows],
                     v_index=[r["v"] for r in rows], gear=[r["gear"] for r in rows], gain=[r["gain"] for r in rows],
                     bias=[r["bias"] for r in rows], ctrlrange=[r["cr"] for r in rows],
                     ctrllimited=[r["cl"] for r in rows], forcerange=[r["fr"] for r in rows],
                     forcelimited=[r["fl"] for r in rows], mujoco_index=[r["a"] for r in rows], dof_forcerange=dof)
