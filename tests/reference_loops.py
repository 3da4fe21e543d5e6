"""Reference loops the tests hold the compiled loop (csrc/sim/rollout.c) to.

``batch_loop`` is the fixed-step loop ``simulate_batch`` ran in Python for a controller of the whole
batch, ``controller(t, Q (N, nq), QD (N, nv)) -> (N, nv)``, before that case moved into rollout.c:
all N states in lockstep with ``reference_steppers.STEPPERS``, each stage one controller call with every
run still going and one batched ``mb.aba`` call.  Two things differ from the loop the library had,
both to match what the compiled loop (and a single ``simulate`` run) does: a run whose stage state
is not finite is left out of that stage's controller call (it has diverged; the old loop handed
the NaN rows to the controller, whose NaN output then raised), and the q̈, τ of the samples no step
started from (the final one) come from one call per sample time, not one per run.
"""
from __future__ import annotations

import math

import numpy as np

from multibody.core import ResultOverflowError
from multibody.dynamics import aba
from multibody.simulation.batch import BatchTrajectory, _cut_blow_ups
from reference_steppers import STEPPERS
from multibody.simulation.rollout import StateSpace
from multibody.simulation.trajectory import model_fingerprint
from multibody.spatial.rotations import unit_quaternion


def _finite_rows_deriv(system):
    """K = [V, Q̈] and (Q̈, τ) of N states (system.deriv_batch's law: one controller call, one batched
    ABA) on the rows that are finite; rows not finite, and rows whose q̈ overflows from a finite
    state, get NaN (q̈ and τ): they have diverged (a single run's System.accelerations says so too)."""
    nq, nv = system.nq, system.nv

    def deriv(t, Y):
        ok = np.all(np.isfinite(Y), axis=1)
        A, tau = np.full((Y.shape[0], nv), np.nan), np.full((Y.shape[0], nv), np.nan)
        if np.any(ok):
            Q, V = Y[ok, :nq], Y[ok, nq:nq + nv]
            tau[ok] = system.control_batch(t, Q, V)
            tau_all = tau[ok] if system.damping is None else tau[ok] - system.damping * V
            try:
                A[ok] = aba(system.dynamics_model, Q, V, tau_all, system.f_ext_const)
            except ResultOverflowError:   # row by row: those that overflow stay NaN
                rows = np.flatnonzero(ok)
                for i, row in enumerate(rows):
                    try:
                        A[row] = aba(system.dynamics_model, Q[i], V[i], tau_all[i], system.f_ext_const)
                    except ResultOverflowError:
                        pass
        tau[~np.all(np.isfinite(A), axis=1)] = np.nan   # a sample whose q̈ is not finite keeps neither
        return np.concatenate((Y[:, nq:nq + nv], A), axis=1), (A, tau, None)
    return deriv


def batch_loop(system, Q0, QD0, t_final, dt, integrator, record_every):
    """Fixed-step integration of N states together under a batch controller; a BatchTrajectory."""
    model = system.model
    space = StateSpace(model)
    deriv = _finite_rows_deriv(system)
    step = STEPPERS[integrator]
    N = Q0.shape[0]
    Q0 = np.array(Q0, dtype=float)
    for s in space.quaternion_starts:
        Q0[:, s:s + 4] = unit_quaternion(Q0[:, s:s + 4])
    Y = np.concatenate((Q0, QD0), axis=1)
    alive = np.ones(N, dtype=bool)
    blown = np.full(N, np.nan)
    n_steps = max(0, math.ceil(t_final / dt - 1e-9))
    grid = [k * dt for k in range(n_steps)] + [t_final]
    keep = [k for k in range(len(grid)) if k % record_every == 0 or k == len(grid) - 1]
    T = np.array([grid[k] for k in keep])
    rec = np.full((len(keep), N, space.n), np.nan)
    acc = np.full((len(keep), N, space.nv), np.nan)
    taus = np.full((len(keep), N, space.nv), np.nan)
    r = 0
    if keep[0] == 0:
        rec[0] = Y
        r = 1
    for k in range(1, len(grid)):
        t0, t1 = grid[k - 1], grid[k]
        h = t1 - t0
        idx = np.flatnonzero(alive)
        if len(idx) == 0:
            break
        Y1, (k1, info) = step(space, deriv, t0, Y[idx], h)
        if r and keep[r - 1] == k - 1:
            acc[r - 1, idx], taus[r - 1, idx] = info[0], info[1]
        ok = np.all(np.isfinite(Y1), axis=1)
        if not np.all(ok):   # runs that blew up in this step stop at their last finite state
            dead = idx[~ok]
            alive[dead] = False
            blown[dead] = t0
            Y1 = Y1[ok]
            idx = idx[ok]
        Y[idx] = Y1
        if r < len(keep) and keep[r] == k:
            rec[r, idx] = Y[idx]
            r += 1
    # accelerations of samples that no step started from (the final one): one call per sample time, in
    # the order of the first run that needs it
    missing = np.argwhere(np.isnan(acc[:, :, 0]) & np.isfinite(rec[:, :, 0]))
    times = sorted(set(missing[:, 0]), key=lambda ri: missing[missing[:, 0] == ri, 1].min())
    for ri in times:
        rows = missing[missing[:, 0] == ri, 1]
        _, (A, tau, _) = deriv(float(T[ri]), rec[ri, rows])
        acc[ri, rows], taus[ri, rows] = A, tau
    R = r if np.all(alive) else 1 + int(np.max(np.flatnonzero(np.any(np.isfinite(rec[:, :, 0]), axis=1))))
    T, rec, acc, taus = T[:R], rec[:R], acc[:R], taus[:R]   # up to the longest run's last sample
    q = rec[:, :, :space.nq].transpose(1, 0, 2)
    qd = rec[:, :, space.nq:].transpose(1, 0, 2)
    status = ["finished" if alive[i] else "diverged" for i in range(N)]
    messages = ["" if alive[i] else f"the state became non-finite in the step from t = {float(blown[i])!r}; the run "
                f"keeps its samples up to then" for i in range(N)]
    # a run past the state bound is cut there as simulate_batch cuts it (the same helper: the loop is
    # what this reference checks; tests/test_simulate.py holds the cut against its own numbers)
    return _cut_blow_ups(model, BatchTrajectory(
        t=T, q=q, qd=qd, qdd=acc.transpose(1, 0, 2), tau=taus.transpose(1, 0, 2), model=model, status=status,
        messages=messages, integrator=integrator, model_name=model.name, model_fingerprint=model_fingerprint(model),
        quaternion_starts=space.quaternion_starts))
