"""Trajectory: what a simulation run leaves behind — samples, energies, events — and its file form.

A :class:`Trajectory` holds time samples ``t`` (N,) and the state and its derivatives at each
sample: ``q`` (N, nq), ``qd`` (N, nv), ``qdd`` (N, nv), ``tau`` (N, nv, the controller's joint
forces), the energies (N,), the events that fired (:class:`EventRecord`), constraint residuals
(N, 2, nc) and contact forces where a run had them.  ``sensordata`` (N, nsensordata) and
``sensor(name)``: the model's sensors (MJCF ``<sensor>``) at the samples, computed on first access
from the recorded q, q̇, q̈ and contact forces (``kinematics/sensors.py``), not stored in files.

The energies are not computed while a run steps (MuJoCo's rollout, our benchmark's reference,
computes none; per sample they cost about a fifth of an RK4 step): a Trajectory keeps its model
and computes kinetic and potential energy on first access, from the recorded q, q̇, in one
batched ``mb.energy`` call (spatial_v2 ``EnerMo`` in the C core, GIL released), then caches
them.  ``repr`` reports the energy drift, so drift is still reported by default.  At an event the trajectory holds two samples
at the same time: the state just before the reset and the state just after it, so plots show the
jump and ``t`` is non-decreasing.

Files are ``.npz`` written atomically (temporary file in the same folder, then ``os.replace``); a
reload is bit-exact, and a file written for another model is refused (a fingerprint of the model's
arrays is stored with the data).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

import numpy as np

from .. import _checks
from .._io import MAX_NPZ_BYTES, atomic_path, read_npz

FORMAT = "multibody.Trajectory/1"


@dataclass(frozen=True)
class EventRecord:
    """One event that fired: time, name, and the state just before and just after its reset."""
    t: float
    name: str
    q_before: np.ndarray
    qd_before: np.ndarray
    q_after: np.ndarray
    qd_after: np.ndarray

    def __repr__(self):
        return f"EventRecord(t={self.t!r}, name={self.name!r})"


def model_fingerprint(model) -> str:
    """SHA-256 of the arrays that define a model's dynamics (structure, geometry, inertia, gravity).

    Two models with the same fingerprint give the same equations of motion; names are included so
    that a file cannot be silently attached to a renamed mechanism. A saved :class:`Trajectory`
    carries its model's fingerprint, and ``Trajectory.load(path, model)`` compares them.

    Parameters
    ----------
    model : Model
        A numeric model.

    Returns
    -------
    str
        64 hexadecimal digits (cached on the model: it is immutable).

    Raises
    ------
    TypeError
        ``model`` is not a :class:`multibody.Model`.
    ValueError
        ``model`` has symbolic parameters.

    Examples
    --------
    >>> import multibody as mb
    >>> model_fingerprint(mb.models.planar(2)) == model_fingerprint(mb.models.planar(2))
    True
    >>> model_fingerprint(mb.models.planar(2)) == model_fingerprint(mb.models.planar(3))
    False
    """
    from ..model.model import Model
    cache = isinstance(model, Model)   # a Model is immutable (read-only arrays, as its cached views assume)
    if cache and "_fingerprint" in model.__dict__:
        return model.__dict__["_fingerprint"]
    _checks.model(model)               # a Model, numeric: the arrays hashed are numbers
    h = hashlib.sha256()
    for k in ("parent", "jtype", "jaxis", "jpitch", "tree_rotation", "tree_translation", "mass", "com",
              "inertia_com", "gravity", "damping", "armature"):
        a = np.ascontiguousarray(np.asarray(getattr(model, k), dtype=np.int64 if k in ("parent", "jtype")
                                            else np.float64))
        h.update(k.encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    h.update("\x00".join(model.body_names + model.joint_names).encode())
    digest = h.hexdigest()
    if cache:   # each simulate call asks (~40 µs of hashing)
        model.__dict__["_fingerprint"] = digest
    return digest


#: |q| or |q̇| past this in a recorded sample is a run blowing up that has not overflowed yet (MuJoCo's
#: mjMAXVAL, behind its "Nan, Inf or huge value in QPOS/QVEL" warning: no joint of a robot or mechanism
#: in SI units gets near it); a coordinate that starts past it is bounded by its start instead
STATE_LIMIT = 1e10
#: samples of a run :func:`cut_at_energy_gain` reads first (then the stretch before the first one past its bound)
ENERGY_SAMPLES = 512


def blow_up(model, t, q, qd):
    """(k, message, note) for the first recorded sample k ≥ 1 of a run (t, q, q̇) whose |q| or |q̇|
    passes :data:`STATE_LIMIT` — a blow-up that has not overflowed yet, which a run reports as
    "diverged" as it does a non-finite state (a user's stiff controller at too large a step ended
    "finished" with |q| = 4.6e149) — or None.  ``message`` reports the run cut there, naming the time,
    the coordinate and its value; ``note`` adds the same to the report of a run that went on to a
    non-finite state (which became non-finite at t = 2.01 s, past 1e10 since t = 0.06 s).

    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(1)
    >>> blow_up(m, np.array([0.0, 0.1, 0.2]), np.array([[0.1], [3e4], [2e11]]), np.zeros((3, 1)))[:2]
    (2, "the state grew past 1e+10 between t = 0.1 and t = 0.2 (q of 'joint1' = 2e+11): a run blowing up (a step too large for the system's stiffness, or an unstable controller or force) before it overflows; the trajectory ends at the last sample within it (t = 0.1)")
    >>> blow_up(m, np.array([0.0, 0.1]), np.array([[0.1], [3e4]]), np.zeros((2, 1))) is None
    True
    """
    if len(t) < 2:
        return None
    over = []
    for X in (np.asarray(q, dtype=float), np.asarray(qd, dtype=float)):
        bound = np.maximum(STATE_LIMIT, np.abs(X[0]))
        over.append(np.abs(X[1:]) > bound)   # (NaN compares False: non-finite states are reported as such)
    past = over[0].any(axis=1) | over[1].any(axis=1)
    if not past.any():
        return None
    k = int(np.argmax(past)) + 1
    which = 0 if over[0][k - 1].any() else 1
    X = (q, qd)[which]
    j = int(np.flatnonzero(over[which][k - 1])[np.argmax(np.abs(X[k][over[which][k - 1]]))])
    from ..model.model import position_names, velocity_names
    name = (position_names if which == 0 else velocity_names)(model)[j]
    onset = (f"past {STATE_LIMIT:.0e} between t = {float(t[k - 1])!r} and t = {float(t[k])!r} "
             f"({'q' if which == 0 else 'q̇'} of {name!r} = {float(X[k][j]):.3g}): a run blowing up (a step too "
             f"large for the system's stiffness, or an unstable controller or force)")
    return (k, f"the state grew {onset} before it overflows; the trajectory ends at the last sample within it "
               f"(t = {float(t[k - 1])!r})", f"; it had grown {onset}")


def cut_at_blow_up(model, traj):
    """``traj`` itself, or where a run that did not end at a non-finite state ("finished", or "terminated"
    by an event) blew up on the way (:func:`blow_up`), its samples before that, ``status`` "diverged" with
    the message (the sensitivities' per-sample arrays cut with them); a run that did end at one keeps its
    samples, its message noting where it passed the bound."""
    found = blow_up(model, traj.t, traj.q, traj.qd)
    if found is None:
        return traj
    k, message, note = found
    if traj.status == "diverged":   # (a new Trajectory on the same samples: a batch reads its runs' messages)
        return _diverged(traj, traj[:], traj.message + note)
    return _diverged(traj, traj[:k], message)


def _diverged(traj, out, message):
    """``out`` (samples of ``traj``) "diverged" with ``message``, the sensitivities' per-sample arrays cut with it."""
    out.status, out.message = "diverged", message
    for name in ("stm", "dx_dtau"):
        if hasattr(traj, name):
            setattr(out, name, getattr(traj, name)[:len(out.t)])
    return out


def cut_at_energy_gain(model, traj, stored):
    """``traj``, or where its energy (kinetic + gravity, ``traj.total_energy``) rose past what could come back
    to it — a run in which nothing supplies energy (``System.supplies_energy``), so that only the contacts'
    springs (``stored``: their energy at the start) and the stops' can return any — its samples before that,
    ``status`` "diverged" with the message.  That is a bounded blow-up: a stiff contact thrown off by an
    explicit step too large for it flings the bodies off the floor, and their |q|, |q̇| stay far below
    :data:`STATE_LIMIT` (example-robot-data's simple_humanoid on a ground at 1 ms RK4 ended "finished"
    700 m up, its energy 695 J → 5e7 J).  The allowance is generous, 2 (|E(0)| + stored) + m (|g| · 1 m +
    ½ (1 m/s)²): what a working run's springs give back is the weight over millimetres.  A run already
    "diverged" is returned as it is.

    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(1)
    >>> tr = mb.simulate(m, [0.3], [0.0], 0.2)
    >>> cut_at_energy_gain(m, tr, 0.0) is tr
    True
    >>> thrown = mb.simulate(m, [0.3], [0.0], 0.2)
    >>> thrown.qd[5:] = 50.0                     # as if the run had been thrown at t = 0.005 s
    >>> cut = cut_at_energy_gain(m, thrown, 0.0)
    >>> cut.status, len(cut.t), cut.message[:50]
    ('diverged', 5, 'the run gained energy that nothing in it supplies:')
    """
    if traj.status == "diverged" or len(traj.t) < 2:
        return traj
    n = len(traj.t)

    def energy(rows):   # (the samples' energies, read where they are known: the run's cost, not a second run's)
        if traj._ke is not None:
            return np.asarray(traj._ke, dtype=float)[rows] + np.asarray(traj._pe, dtype=float)[rows]
        ke, pe = energies_of(model, traj.q[rows], traj.qd[rows])
        return ke + pe
    # every sample's energy cost as much as a cheap model's run (a box at 1 ms: 1.7 times its time): a gain
    # lasts the flight it buys, ≥ ½ s for the allowance's metre, so at most ENERGY_SAMPLES samples are read
    # first, then every sample of the stretch before the first one past it
    stride = max(1, -(-n // ENERGY_SAMPLES))
    rows = np.unique(np.append(np.arange(0, n, stride), n - 1))
    E = energy(rows)
    g = float(np.linalg.norm(model.gravity))
    allowance = 2.0 * (abs(E[0]) + stored) + float(np.sum(model.mass)) * (g * 1.0 + 0.5)
    over = np.flatnonzero(E > E[0] + allowance)
    if not len(over):
        return traj
    lo, hi = int(rows[over[0] - 1]), int(rows[over[0]])
    window = energy(np.arange(lo, hi + 1))
    k = lo + int(np.flatnonzero(window > E[0] + allowance)[0])
    e0, ek = E[0], window[k - lo]
    from ..dynamics.mobility import massless_cause
    cause = massless_cause(model)   # no step follows a joint without inertia; an impact's solve through it is rounding
    if not cause:
        remedy = ("a smaller dt" if traj.integrator == "semi_implicit" else
                  "integrator='semi_implicit' takes the contact law implicitly; or a smaller dt")
        cause = f"a stiff contact or stop thrown off by a step too large for it ({remedy})"
    return _diverged(traj, traj[:k], (
        f"the run gained energy that nothing in it supplies: its energy (kinetic + gravity) rose from {e0:.6g} J "
        f"to {ek:.6g} J between t = {float(traj.t[k - 1])!r} and t = {float(traj.t[k])!r}, past the "
        f"{allowance:.6g} J its contacts' and stops' springs could give back — {cause}; the trajectory ends at "
        f"the last sample within it (t = {float(traj.t[k - 1])!r})"))


def energies_of(model, q, qd):
    """(KE, PE) of states ``q`` (..., nq), ``qd`` (..., nv) in one batched ``mb.energy`` call.

    Rows with a non-finite entry (a batch run that stopped early) get NaN.

    >>> import numpy as np, multibody as mb
    >>> ke, pe = energies_of(mb.models.planar(2), np.zeros((3, 2)), np.ones((3, 2)))
    >>> ke.shape, bool(np.all(ke > 0))
    ((3,), True)
    """
    from ..core import ResultOverflowError
    from ..dynamics import energy
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    lead = q.shape[:-1]
    Q, V = q.reshape(-1, q.shape[-1]), qd.reshape(-1, qd.shape[-1])
    ke, pe = np.full(len(Q), np.nan), np.full(len(Q), np.nan)
    finite = np.all(np.isfinite(Q), axis=1) & np.all(np.isfinite(V), axis=1)
    if finite.any():
        try:
            e = energy(model, np.ascontiguousarray(Q[finite]), np.ascontiguousarray(V[finite]))
            ke[finite], pe[finite] = e.KE, e.PE
        except ResultOverflowError:  # huge states of a run that blew up: NaN there, like non-finite ones
            for i in np.flatnonzero(finite):
                try:
                    e = energy(model, Q[i], V[i])
                    ke[i], pe[i] = e.KE, e.PE
                except ResultOverflowError:
                    pass
    return ke.reshape(lead), pe.reshape(lead)


STATUSES = ("finished", "terminated", "diverged", "non_finite")   # non_finite: files from before "diverged"
_REAL, _REAL_OR_BOOL = "fiu", "fiub"


def check_file_members(d: dict, path, model=None) -> None:
    """Check the arrays read from a trajectory file, member by member; ``ValueError`` naming the
    file and the first fault.  With ``model``, the file must have been written for it (same
    fingerprint, sizes and quaternions).

    Required: ``t`` (N,) finite and non-decreasing; ``q`` (N, nq), ``qd``, ``qdd``, ``tau``
    (N, nv), real, with q and q̇ finite (a run that blew up ends at its last finite state; the
    accelerations and forces of that state may be NaN); ``meta`` (5 texts: status, message,
    integrator, fingerprint, model name); ``quaternion_starts``: increasing, non-overlapping
    4-blocks inside q (with ``model``: the model's); the events ``event_t`` (E,) finite, non-decreasing and within
    the samples' span, ``event_name`` (E,) texts, ``event_q`` (E, 2 nq), ``event_qd`` (E, 2 nv)
    finite.  Optional: both energies (N,) or neither, ``constraint_residual`` (N, 2, nc),
    ``contact_forces`` (N, …), ``contact_state`` (N, nz).
    """
    where = f"path: {path!r}"

    def member(k, ndim, kinds=_REAL, required=True):
        if k not in d:
            if required:
                raise ValueError(f"{where} has no {k!r} array (not a complete trajectory file)")
            return None
        a = d[k]
        if a.dtype.kind not in kinds:
            raise ValueError(f"{where}: {k!r} has dtype {a.dtype}; expected "
                             + ("text" if kinds == "U" else "real numbers"))
        if ndim is not None and a.ndim != ndim:
            raise ValueError(f"{where}: {k!r} has shape {a.shape}; expected {ndim} dimension(s)")
        return a

    known = {"format", "meta", "quaternion_starts", "event_t", "event_name", "event_q", "event_qd",
             *Trajectory._PER_SAMPLE}
    extra = sorted(set(d) - known)
    if extra:
        raise ValueError(f"{where} holds unknown arrays {extra} (not written by Trajectory.save)")
    meta = member("meta", 1, "U")
    if meta.shape != (5,):
        raise ValueError(f"{where}: 'meta' has shape {meta.shape}; expected (5,) (status, message, integrator, "
                         "fingerprint, model name)")
    if str(meta[0]) not in STATUSES:
        raise ValueError(f"{where}: status {str(meta[0])[:40]!r} is not one of {STATUSES}")
    fingerprint, model_name = str(meta[3]), str(meta[4])
    if model is not None and model_fingerprint(model) != fingerprint:
        raise ValueError(f"model: the trajectory in {path!r} was computed for another model "
                         f"({model_name[:80]!r}, fingerprint {fingerprint[:12]}…); this model is "
                         f"{model.name!r} ({model_fingerprint(model)[:12]}…)")
    t = member("t", 1)
    n = len(t)
    if not np.all(np.isfinite(t)):
        raise ValueError(f"{where}: 't' holds non-finite times")
    if n > 1 and np.any(np.diff(t) < 0):
        k = int(np.flatnonzero(np.diff(t) < 0)[0])
        raise ValueError(f"{where}: 't' decreases at sample {k + 1} ({t[k]!r} → {t[k + 1]!r}); "
                         "expected non-decreasing times")
    q, qd = member("q", 2), member("qd", 2)
    nq, nv = q.shape[1], qd.shape[1]
    for k, a, width in (("q", q, nq), ("qd", qd, nv), ("qdd", member("qdd", 2), nv),
                        ("tau", member("tau", 2), nv)):
        if a.shape != (n, width):
            size, like = ("nq", "q") if k == "q" else ("nv", "qd")
            raise ValueError(f"{where}: {k!r} has shape {a.shape}; expected ({n}, {width}) "
                             f"({n} samples as 't', {size} = {width} as {like!r})")
    for k, a in (("q", q), ("qd", qd)):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{where}: {k!r} holds non-finite values")
    if nq < nv:
        raise ValueError(f"{where}: 'q' has {nq} columns, fewer than 'qd' ({nv})")
    ke, pe = member("kinetic_energy", 1, required=False), member("potential_energy", 1, required=False)
    if (ke is None) != (pe is None):
        raise ValueError(f"{where} holds one of the two energies but not the other")
    for k, a in (("kinetic_energy", ke), ("potential_energy", pe)):
        if a is not None and a.shape != (n,):
            raise ValueError(f"{where}: {k!r} has shape {a.shape}; expected ({n},)")
    for k, ndim, kinds in (("constraint_residual", 3, _REAL), ("contact_forces", None, _REAL),
                           ("contact_state", 2, _REAL_OR_BOOL)):
        a = member(k, ndim, kinds, required=False)
        if a is not None and (a.ndim < 1 or a.shape[0] != n):
            raise ValueError(f"{where}: {k!r} has shape {a.shape}; expected {n} rows (one per sample)")
        if k == "constraint_residual" and a is not None and a.shape[1] != 2:
            raise ValueError(f"{where}: 'constraint_residual' has shape {a.shape}; expected ({n}, 2, nc)")
    qs = member("quaternion_starts", 1, "iu")
    starts = [int(x) for x in qs]          # Python ints: uint64 arithmetic wraps (2**64 − 1 + 4 = 3)
    if starts and (min(starts) < 0 or max(starts) + 4 > nq or any(b - a < 4 for a, b in zip(starts, starts[1:]))
                   or len(starts) > nq - nv):
        raise ValueError(f"{where}: 'quaternion_starts' {qs.tolist()[:8]} are not increasing, non-overlapping "
                         f"4-blocks inside q (nq = {nq}, nv = {nv})")
    if model is not None:
        from .rollout import StateSpace
        if (nq, nv) != (model.nq, model.nv):
            raise ValueError(f"model: the trajectory in {path!r} has nq = {nq}, nv = {nv}; model "
                             f"{model.name!r} has nq = {model.nq}, nv = {model.nv}")
        expected = StateSpace(model).quaternion_starts
        if tuple(int(i) for i in qs) != tuple(expected):
            raise ValueError(f"{where}: 'quaternion_starts' {qs.tolist()[:8]} differ from model "
                             f"{model.name!r}'s {list(expected)[:8]}")
    et, en = member("event_t", 1), member("event_name", 1, "U")
    eq, eqd = member("event_q", 2), member("event_qd", 2)
    m = len(et)
    if en.shape != (m,) or eq.shape != (m, 2 * nq) or eqd.shape != (m, 2 * nv):
        raise ValueError(f"{where}: the event arrays are inconsistent: event_t {et.shape}, event_name "
                         f"{en.shape}, event_q {eq.shape}, event_qd {eqd.shape}; expected ({m},), ({m},), "
                         f"({m}, {2 * nq}), ({m}, {2 * nv})")
    if not (np.all(np.isfinite(et)) and np.all(np.isfinite(eq)) and np.all(np.isfinite(eqd))):
        raise ValueError(f"{where}: the event arrays hold non-finite values")
    if m and (n == 0 or np.any(np.diff(et) < 0) or et[0] < t[0] or et[-1] > t[-1]):
        raise ValueError(f"{where}: event times {et.tolist()[:4]} are not non-decreasing within the samples' "
                         f"span [{t[0] if n else 'no samples'}, {t[-1] if n else ''}]")


class EnergyUnavailable(AttributeError, ValueError):
    """A trajectory with neither stored energies nor a model to compute them from.

    A ``ValueError`` (bad input) that is also an ``AttributeError``, so ``getattr(traj,
    "total_energy", None)`` reads "not available" as plotting code expects."""


_NO_ENERGY = ("energies: this trajectory holds no stored energies and no model to compute them from; "
              "load it with Trajectory.load(path, model) or pass model= to Trajectory(...)")


class Trajectory:
    """Samples of a simulation run (see the module docstring for shapes).

    ``status`` is ``"finished"`` (reached t_final), ``"terminated"`` (a terminal event fired) or
    ``"diverged"`` (the state blew up: it became non-finite, or a coordinate passed
    :data:`STATE_LIMIT`; the samples end before that and ``message`` says at what time).  ``kinetic_energy`` and ``potential_energy`` may be given
    (a loaded file) or left None: with ``model`` they are computed on first access and cached.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> traj = mb.simulate(mb.models.planar(2), [0.3, 0.0], [0.0, 0.0], 0.5, dt=1e-3)
    >>> traj.q.shape, traj.status
    ((501, 2), 'finished')
    >>> bool(abs(traj.total_energy[-1] - traj.total_energy[0]) < 1e-9)
    True
    >>> traj[0.1:0.2].t[[0, -1]].round(12).tolist()
    [0.1, 0.2]
    >>> "energy drift" in repr(traj)
    True
    """

    def __init__(self, t, q, qd, qdd, tau, kinetic_energy=None, potential_energy=None, events=None,
                 constraint_residual=None, contact_forces=None, contact_state=None, status="finished",
                 message="", integrator="", model_fingerprint="", model_name="", quaternion_starts=(),
                 model=None):
        self.t, self.q, self.qd, self.qdd, self.tau = t, q, qd, qdd, tau
        if (kinetic_energy is None) != (potential_energy is None):
            raise ValueError("kinetic_energy, potential_energy: give both or neither")
        self._ke, self._pe = kinetic_energy, potential_energy
        self.events = [] if events is None else events
        self.constraint_residual = constraint_residual
        self.contact_forces = contact_forces
        self.contact_state = contact_state
        self.status, self.message, self.integrator = status, message, integrator
        self.model_fingerprint, self.model_name = model_fingerprint, model_name
        self.quaternion_starts = quaternion_starts  # first q index of each unit quaternion
        self.model = model
        self.passive = ()   # what mb.simulate applied from the model: limits, damping, friction, gravcomp
        self.ctrl = None            # the run's constant ctrl (mb.simulate), for actuatorfrc sensors
        self.contact_geoms = None   # the geoms of the run's contact (mb.simulate), for touch and force sensors
        self._sensordata = None

    # ---- energies (lazy) ---------------------------------------------------------------------
    @property
    def energies_known(self) -> bool:
        """True when the energies are stored or can be computed (a model is attached)."""
        return self._ke is not None or self.model is not None

    def _energies(self):
        if self._ke is None:
            if self.model is None:
                raise EnergyUnavailable(_NO_ENERGY)
            self._ke, self._pe = energies_of(self.model, self.q, self.qd)
        return self._ke, self._pe

    @property
    def kinetic_energy(self) -> np.ndarray:
        """Kinetic energy (N,) (spatial_v2 ``EnerMo``), computed on first access."""
        return self._energies()[0]

    @kinetic_energy.setter
    def kinetic_energy(self, value):
        self._ke = value

    @property
    def potential_energy(self) -> np.ndarray:
        """Gravitational potential energy (N,) (spatial_v2 ``EnerMo``), computed on first access."""
        return self._energies()[1]

    @potential_energy.setter
    def potential_energy(self, value):
        self._pe = value

    @property
    def total_energy(self) -> np.ndarray:
        """Kinetic plus gravitational potential energy (N,)."""
        ke, pe = self._energies()
        return ke + pe

    @property
    def energy_drift(self) -> float:
        """Largest |E(t) − E(0)| relative to max(|E(0)|, peak kinetic energy) over the run.

        The second term keeps the measure meaningful when the potential's zero makes E(0) ≈ 0
        (the OpenDE report's colliding pendulum starts with E = 0).
        """
        E = self.total_energy
        if not len(E):
            return 0.0
        scale = max(abs(E[0]), float(np.max(self.kinetic_energy)), 1e-300)
        return float(np.max(np.abs(E - E[0])) / scale)

    def __len__(self):
        return len(self.t)

    # ---- sensors (lazy) ----------------------------------------------------------------------
    @property
    def sensordata(self) -> np.ndarray:
        """The model's sensors (``model.sensors``) at every sample, (N, nsensordata): MuJoCo's
        ``sensordata`` along the run, computed on first access from the recorded q, q̇, q̈ and
        contact forces (:func:`multibody.sensors`; module notes of ``kinematics/sensors.py``)."""
        if self._sensordata is None:
            if self.model is None:
                raise ValueError("sensordata: this trajectory has no model to read its sensors from; load it with "
                                 "Trajectory.load(path, model)")
            self._sensordata = recorded_sensordata(self)
        return self._sensordata

    @property
    def support_force(self) -> np.ndarray:
        """The force the static geoms (the floor, terrain) carry against gravity at each sample, (N,) in N.

        The recorded contact forces of the pairs between a static geom and a body, projected on the up
        direction (−gravity, +z where gravity is zero); the bodies' contacts with each other carry none
        of the weight and are left out.  A robot standing still has it equal to its weight m |g|.

        Raises
        ------
        ValueError
            The run recorded no contact forces of the model's geoms, or the trajectory has no model.

        Example
        -------
        >>> import numpy as np, multibody as mb
        >>> b = mb.ModelBuilder()
        >>> ball = b.add_body("ball", parent=None, joint="free", mass=2.0, inertia=np.eye(3) * 1e-3)
        >>> b.add_geometry(mb.Geometry(ball, "sphere", (0.1,), role="collision", name="ball"))
        >>> model = b.build()
        >>> q0 = np.array([0.0, 0.0, 0.1, 1, 0, 0, 0])
        >>> traj = mb.simulate(model, q0, np.zeros(6), 0.5, dt=1e-3, ground=True, contact="hard")
        >>> round(float(traj.support_force[-1] / (2.0 * 9.81)), 6)   # the ball's weight, resting
        1.0
        """
        return _support_force(self)

    def sensor(self, name) -> np.ndarray:
        """The values (N, dim) of the sensor ``name`` along the run (a view of :attr:`sensordata`)."""
        from ..model.model import _known
        by_name = {s.name: s for s in (self.model.sensors if self.model is not None else ())}
        if name not in by_name:
            raise KeyError(f"no sensor named {name!r}; " + (_known("sensors", name, list(by_name)) if by_name
                                                            else "the model has no sensors (MJCF <sensor>)"))
        s = by_name[name]
        return self.sensordata[:, s.address:s.address + s.dim]

    # ---- slicing and resampling --------------------------------------------------------------
    _PER_SAMPLE = ("t", "q", "qd", "qdd", "tau", "kinetic_energy", "potential_energy",
                   "constraint_residual", "contact_forces", "contact_state")
    _STORED = {"kinetic_energy": "_ke", "potential_energy": "_pe"}  # per-sample arrays kept lazily

    def _stored(self, k):
        return getattr(self, self._STORED.get(k, k))

    def _take(self, idx) -> "Trajectory":
        kw = {k: (None if self._stored(k) is None else self._stored(k)[idx]) for k in self._PER_SAMPLE}
        t = kw["t"]
        lo, hi = (t[0], t[-1]) if len(t) else (np.inf, -np.inf)
        ev = [e for e in self.events if lo <= e.t <= hi]
        out = Trajectory(**kw, events=ev, status=self.status, message=self.message,
                         integrator=self.integrator, model_fingerprint=self.model_fingerprint,
                         model_name=self.model_name, quaternion_starts=self.quaternion_starts, model=self.model)
        out.ctrl, out.contact_geoms = self.ctrl, self.contact_geoms
        return out

    def __getitem__(self, key) -> "Trajectory":
        """``traj[i]``, ``traj[i:j]`` index samples; ``traj[t0:t1]`` with floats selects t0 ≤ t ≤ t1."""
        if isinstance(key, slice) and any(isinstance(x, float) for x in (key.start, key.stop)):
            if key.step is not None:
                raise ValueError("time slice: a step is not supported; use resample(t) for a new grid")
            lo = -np.inf if key.start is None else float(key.start)
            hi = np.inf if key.stop is None else float(key.stop)
            eps = 1e-12 * max(1.0, abs(lo), abs(hi))
            return self._take(np.flatnonzero((self.t >= lo - eps) & (self.t <= hi + eps)))
        if isinstance(key, (int, np.integer)):
            key = slice(key, key + 1 if key != -1 else None)
        return self._take(key)

    def resample(self, t) -> "Trajectory":
        """Samples at the times ``t`` (within [t[0], t[-1]]).

        Between samples ``q`` is the quintic Hermite curve through (q, q̇, q̈) and ``q̇`` the cubic
        one through (q̇, q̈) (models whose q and q̇ have the same size); models with quaternion joints are
        interpolated linearly and their quaternions renormalised.  At an event time the state
        after the reset is returned.  Energies are interpolated linearly (they are diagnostics).
        """
        t_new = np.asarray(t, dtype=float)
        if t_new.ndim != 1 or not np.all(np.isfinite(t_new)):
            raise ValueError("t: expected a 1-D array of finite times")
        if len(self.t) == 0:
            raise ValueError("resample: the trajectory has no samples")
        if np.any(t_new < self.t[0] - 1e-12) or np.any(t_new > self.t[-1] + 1e-12):
            raise ValueError(f"t: times must lie within [{self.t[0]}, {self.t[-1]}]")
        T = self.t
        # right-continuous: at an event time, the sample after the reset is the left end
        k = np.clip(np.searchsorted(T, t_new, side="right") - 1, 0, max(len(T) - 2, 0))
        if len(T) == 1:
            return self._take(np.zeros(len(t_new), dtype=int))
        h = T[k + 1] - T[k]
        s = np.where(h > 0, (t_new - T[k]) / np.where(h > 0, h, 1.0), 0.0)[:, None]
        hh = h[:, None]

        def hermite(y, dy):
            y0, y1, d0, d1 = y[k], y[k + 1], dy[k] * hh, dy[k + 1] * hh
            s2, s3 = s * s, s * s * s
            return ((2 * s3 - 3 * s2 + 1) * y0 + (s3 - 2 * s2 + s) * d0 + (-2 * s3 + 3 * s2) * y1
                    + (s3 - s2) * d1)

        def quintic(y, dy, ddy):
            y0, y1, d0, d1 = y[k], y[k + 1], dy[k] * hh, dy[k + 1] * hh
            a0, a1 = ddy[k] * hh * hh, ddy[k + 1] * hh * hh
            s2, s3 = s * s, s * s * s
            s4, s5 = s3 * s, s3 * s2
            return ((1 - 10 * s3 + 15 * s4 - 6 * s5) * y0 + (s - 6 * s3 + 8 * s4 - 3 * s5) * d0
                    + 0.5 * (s2 - 3 * s3 + 3 * s4 - s5) * a0 + (10 * s3 - 15 * s4 + 6 * s5) * y1
                    + (-4 * s3 + 7 * s4 - 3 * s5) * d1 + 0.5 * (s3 - 2 * s4 + s5) * a1)

        vector_model = self.q.shape[1] == self.qd.shape[1]
        if vector_model and np.all(np.isfinite(self.qdd)):
            q = quintic(self.q, self.qd, self.qdd)
            qd = hermite(self.qd, self.qdd)
        else:
            q = (1 - s) * self.q[k] + s * self.q[k + 1]
            qd = (1 - s) * self.qd[k] + s * self.qd[k + 1]
        out = {"t": t_new, "q": q, "qd": qd,
               "qdd": (1 - s) * self.qdd[k] + s * self.qdd[k + 1],
               "tau": (1 - s) * self.tau[k] + s * self.tau[k + 1],
               "kinetic_energy": None, "potential_energy": None}
        if self.energies_known:
            if self._ke is not None:
                ke0, ke1, pe0, pe1 = self._ke[k], self._ke[k + 1], self._pe[k], self._pe[k + 1]
            else:  # only the rows the interpolation reads (the same numbers as the whole run's)
                rows, back = np.unique(np.concatenate([k, k + 1]), return_inverse=True)
                ke_r, pe_r = energies_of(self.model, self.q[rows], self.qd[rows])
                ke0, ke1 = ke_r[back[:len(k)]], ke_r[back[len(k):]]
                pe0, pe1 = pe_r[back[:len(k)]], pe_r[back[len(k):]]
            out["kinetic_energy"] = (1 - s[:, 0]) * ke0 + s[:, 0] * ke1
            out["potential_energy"] = (1 - s[:, 0]) * pe0 + s[:, 0] * pe1
        for name in ("constraint_residual", "contact_forces", "contact_state"):
            a = getattr(self, name)
            if a is None:
                out[name] = None
            else:
                ss = s.reshape((-1,) + (1,) * (a.ndim - 1))
                out[name] = (1 - ss) * a[k] + ss * a[k + 1]
        traj = Trajectory(**out, events=[e for e in self.events if t_new.min() <= e.t <= t_new.max()],
                          status=self.status, message=self.message, integrator=self.integrator,
                          model_fingerprint=self.model_fingerprint, model_name=self.model_name,
                          quaternion_starts=self.quaternion_starts, model=self.model)
        for s0 in self.quaternion_starts:
            blk = traj.q[:, s0:s0 + 4]
            traj.q[:, s0:s0 + 4] = blk / np.linalg.norm(blk, axis=1, keepdims=True)
        return traj

    # ---- files -------------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the trajectory to ``path`` (.npz), atomically: a crash leaves the old file intact."""
        path = os.fspath(path)
        if not path.endswith(".npz"):
            raise ValueError(f"path: expected a file name ending in .npz, got {path!r}")
        if self.model is not None:
            self._energies()  # stored with the samples, so the file reloads without the model
        data = {k: self._stored(k) for k in self._PER_SAMPLE if self._stored(k) is not None}
        for k, a in data.items():
            if np.asarray(a).dtype.kind not in "fiub":
                raise ValueError(f"{k}: expected a numeric array to save, got dtype {np.asarray(a).dtype}")
        data["format"] = np.array(FORMAT)
        data["meta"] = np.array([self.status, self.message, self.integrator, self.model_fingerprint,
                                 self.model_name])
        data["quaternion_starts"] = np.array(self.quaternion_starts, dtype=np.int64)
        data["event_t"] = np.array([e.t for e in self.events], dtype=float)
        data["event_name"] = np.array([e.name for e in self.events], dtype=str)
        nq, nv = self.q.shape[1], self.qd.shape[1]
        data["event_q"] = np.array([np.concatenate([e.q_before, e.q_after]) for e in self.events]).reshape(-1, 2 * nq)
        data["event_qd"] = np.array([np.concatenate([e.qd_before, e.qd_after])
                                     for e in self.events]).reshape(-1, 2 * nv)
        with atomic_path(path, name="path") as tmp, open(tmp, "wb") as f:
            np.savez(f, **data)
            f.flush()
            os.fsync(f.fileno())

    @classmethod
    def load(cls, path, model=None, *, max_bytes=MAX_NPZ_BYTES) -> "Trajectory":
        """Read a file written by :meth:`save`.  With ``model``, a file for another model is refused.

        Everything is checked before a Trajectory is built (see :func:`check_file_members`): a
        missing, truncated, foreign or inconsistent file, a FIFO or other non-regular file, and a
        file that would expand to more than ``max_bytes`` (default 1 GiB) raise one ``ValueError``
        naming the file and what is wrong.

        >>> import os, tempfile, multibody as mb
        >>> m = mb.models.planar(2)
        >>> p = os.path.join(tempfile.mkdtemp(), "run.npz")
        >>> mb.simulate(m, [0.3, 0.0], [0.0, 0.0], 0.1, dt=1e-2).save(p)
        >>> Trajectory.load(p, m).q.shape
        (11, 2)
        >>> Trajectory.load(p, mb.models.planar(3))
        Traceback (most recent call last):
        ...
        ValueError: model: the trajectory in '...run.npz' was computed for another model ...
        """
        path = os.fspath(path)
        try:
            d = read_npz(path, max_bytes=max_bytes, name="path")
        except FileNotFoundError:
            raise ValueError(f"path: no file {path!r}") from None
        except OSError as e:
            raise ValueError(f"path: cannot read {path!r} ({e.strerror or e})") from None
        if "format" not in d or d["format"].shape != () or d["format"].dtype.kind != "U" or str(d["format"]) != FORMAT:
            raise ValueError(f"path: {path!r} is not a multibody trajectory file (no {FORMAT!r} tag)")
        check_file_members(d, path, model)
        status, message, integrator, fingerprint, model_name = (str(x) for x in d["meta"])
        nq, nv = d["q"].shape[1], d["qd"].shape[1]
        events = [EventRecord(float(t), str(n), eq[:nq], eqd[:nv], eq[nq:], eqd[nv:])
                  for t, n, eq, eqd in zip(d["event_t"], d["event_name"], d["event_q"], d["event_qd"])]
        kw = {k: d.get(k) for k in cls._PER_SAMPLE}
        return cls(**kw, events=events, status=status, message=message, integrator=integrator,
                   model_fingerprint=fingerprint, model_name=model_name,
                   quaternion_starts=tuple(int(i) for i in d["quaternion_starts"]), model=model)

    def __repr__(self):
        span = f"t = {self.t[0]:g}…{self.t[-1]:g}" if len(self.t) else "empty"
        drift = ""
        if self.energies_known and len(self.t):
            drift = f", energy drift {self.energy_drift:.3g}"
        passive = f", {', '.join(self.passive)}" if self.passive else ""
        return (f"Trajectory({self.model_name!r}, {len(self.t)} samples, {span}, {len(self.events)} events, "
                f"{self.status}{drift}{passive})")


def recorded_sensordata(traj):
    """(N, nsensordata) of a trajectory with a model: its sensors at the recorded samples, in one
    batched call (:func:`multibody.kinematics.sensors.sensor_data`).  The contacts of the samples
    with a recorded contact force are collided again at their q (the compiled narrow phase, one
    call per such sample) to place each slot's force (``Contacts.slot``)."""
    from ..kinematics.sensors import sensor_data
    model = traj.model
    q, qd, qdd = (np.ascontiguousarray(a, dtype=float) for a in (traj.q, traj.qd, traj.qdd))
    sens = model.sensors
    if any(s.type == "actuatorfrc" for s in sens) and traj.ctrl is None:
        raise ValueError(f"sensordata: actuatorfrc sensors {[s.name for s in sens if s.type == 'actuatorfrc'][:6]} "
                         "need the run's ctrl, which this trajectory does not hold (a run of mb.simulate with a "
                         "constant ctrl does); compute them with mb.sensors(model, q, qd, qdd, ctrl=...)")
    acc = any(s.stage == "acc" for s in sens)
    contact = None
    needs_contact = any(s.type in ("touch", "force", "torque") for s in sens)
    if needs_contact and traj.contact_forces is not None and len(q):
        contact = _recorded_contacts(traj, q)
    # a sample without a finite acceleration (the last of a diverged run) reads NaN, as its qdd
    finite = np.all(np.isfinite(qdd), axis=1) if acc else np.ones(len(q), bool)
    out = np.full((len(q), sum(s.dim for s in sens)), np.nan)
    if finite.all():
        return sensor_data(model, q, qd, qdd, traj.ctrl, contact)
    rows = np.flatnonzero(finite)
    if contact is not None:
        keep = finite[contact[0]]
        remap = np.cumsum(finite) - 1
        contact = (remap[contact[0][keep]],) + tuple(np.asarray(c)[keep] for c in contact[1:])
    out[rows] = sensor_data(model, q[rows], qd[rows], qdd[rows], traj.ctrl, contact)
    return out


def _slot_geoms(traj, F, what):
    """The geoms whose candidate pairs the recorded contact forces F (N, slots, 3) belong to: the run's, or for a
    sliced or reloaded run the model's, or those with the floor ``ground=True`` adds, whichever F's slots fit."""
    from ..model.geometry import model_geoms
    geoms = traj.contact_geoms
    if geoms is None and traj.model is not None:
        for g in (model_geoms(traj.model), model_geoms(traj.model).with_ground()):
            if F.ndim == 3 and F.shape[1] == g.n_slots:
                geoms = g
                break
    if geoms is None or F.ndim != 3 or F.shape[1] != geoms.n_slots or F.shape[2] != 3:
        raise ValueError(f"{what}: contact_forces {F.shape} are not the slots of the model's geoms "
                         f"(Geoms.slot_start: a slot per point a candidate pair can touch at); {what} needs a run "
                         "with the model's own contact (mb.simulate's default) and its model")
    return geoms


def _support_force(traj):
    """Trajectory.support_force: each slot's force acts on its pair's geom b (``Geoms.slot_pair``), so a
    pair whose geom a alone is static (the floor under a body) pushes the body with +F, one whose geom b alone is
    with −F; the pairs of two bodies act on both and carry nothing of the weight, nor does a pair of two static
    geoms (none is a candidate)."""
    if traj.contact_forces is None or traj.model is None:
        raise ValueError("support_force: this trajectory has no " + ("recorded contact forces (a run with the "
                         "model's contact: mb.simulate's default where the file has a floor, or ground=True)"
                         if traj.contact_forces is None else "model; load it with Trajectory.load(path, model)"))
    F = np.asarray(traj.contact_forces, dtype=float)
    geoms = _slot_geoms(traj, F, "support_force")
    static = geoms.body[geoms.pairs] < 0                          # (pair, a or b): on no body
    sign = np.where(static[:, 0] & ~static[:, 1], 1.0, np.where(static[:, 1] & ~static[:, 0], -1.0, 0.0))
    g = np.asarray(traj.model.gravity, dtype=float)
    up = -g / np.linalg.norm(g) if np.linalg.norm(g) > 0 else np.array([0.0, 0.0, 1.0])
    return (F @ up) @ sign[geoms.slot_pair]        # each slot's force along "up", signed by its pair's side


def _recorded_contacts(traj, q):
    """The recorded contact forces as a contact list (sample, geom a, geom b, position, normal, force on b)."""
    from ..core import _core
    F = np.asarray(traj.contact_forces, dtype=float)
    geoms = _slot_geoms(traj, F, "sensordata")
    names = geoms.names
    packed = geoms.packed
    out = [[], [], [], [], [], []]
    for n in np.flatnonzero(np.any(F != 0, axis=(1, 2))):
        pair, pos, normal, _, slot = _core.scene_contacts(traj.model._c, np.ascontiguousarray(q[n]), *packed)
        out[0].append(np.full(len(pair), n))
        out[1] += [names[g] for g in geoms.pairs[pair, 0]]
        out[2] += [names[g] for g in geoms.pairs[pair, 1]]
        out[3].append(np.reshape(pos, (-1, 3)))
        out[4].append(np.reshape(normal, (-1, 3)))
        out[5].append(F[n, slot])
    if not out[0]:
        return None
    return (np.concatenate(out[0]), out[1], out[2], np.concatenate(out[3]), np.concatenate(out[4]),
            np.concatenate(out[5]))
