"""The adaptive-step loop of ``mb.simulate``: SciPy's dense-output solvers between events and samples.

One loop serves the plain run (``core``) and the run with sensitivities (``sensitivity``, where the
solver's vector is the state with Z = [Φ | ∂x/∂τ] after it).  What differs between the two is a
*flow* object:

- ``rate(t, w)``: the solver's right-hand side;
- ``normalise(w)``: a copy of w with the state's quaternions scaled to unit length;
- ``record(t, w)``: keep a sample;
- ``fire(monitor, i, te, w)``: record before/after, apply event i's reset; returns the new w;
- ``sample(t, w)``: a sampled controller takes its next sample.

The loop steps the solver to the end, to the next controller sample or to the earliest event in a
step (located on the step's dense output), emits every ``sample_dt`` on that output, and restarts
the solver after an event or a sample (its derivative jumps there).
"""
from __future__ import annotations

import math

import numpy as np

from .events import EventMonitor
from .system import _NonFinite, non_finite_message


#: restarts in a row, each with a step 1000× smaller, after a step whose trial states were not finite
RETRIES = 3
#: the smallest adaptive step, as a share of the run's span: a run needing smaller ones would take
#: > 10¹⁴ steps (SciPy's own floor, 10 ulp of t, is zero at t = 0: such a run crawls there for ever);
#: TINY_STEPS of them in a row fail the run (a kink takes a few)
MIN_STEP = 1e-14
TINY_STEPS = 1000


def adaptive_loop(flow, integrator, Solver, space, events, w, t_final, sample_dt, period, rtol, atol,
                  on_step=None):
    """Run ``flow`` from t = 0 to ``t_final`` with ``Solver`` (a SciPy OdeSolver class); returns
    (status, message, t, w) with status one of "finished", "terminated", "diverged" or "failed" (the
    solver gave up; message says why)."""
    n = space.n

    def state(ww):
        return space.split(ww[:n])[:2]

    status, message = "finished", ""
    t = 0.0
    monitor = EventMonitor(events, t, *state(w)) if events else None
    k_out, next_sample, n_sample = 1, math.inf, 1
    if period is not None:
        flow.sample(t, w)
        next_sample = period
    flow.record(t, w)

    def emit_grid(sol, t_hi):
        nonlocal k_out
        while k_out * sample_dt <= t_hi + 1e-12 * sample_dt and k_out * sample_dt < t_final - 1e-12 * sample_dt:
            tk = k_out * sample_dt
            flow.record(tk, flow.normalise(sol(tk)))
            k_out += 1

    first_step, retries, tiny = None, 0, 0
    while t < t_final and status == "finished":
        t_bound = t_final if next_sample >= t_final - 1e-12 * max(1.0, t_final) else next_sample
        try:
            solver = Solver(flow.rate, t, w, t_bound, rtol=rtol, atol=atol,
                            **({} if first_step is None else {"first_step": first_step}))
        except _NonFinite:
            status, message = "diverged", non_finite_message(t, t)
            break
        restart, first_step = False, None
        while solver.status == "running":
            try:
                msg = solver.step()
            except _NonFinite:
                # A state the solver tried inside the step (an RK stage, a Newton iterate of radau or
                # bdf across a kink such as a soft stop engaging) is not finite.  Started again from
                # the last accepted state with a step 1000× smaller (a fresh Jacobian), it may pass;
                # a run that blows up fails the retries too: diverged.
                h_last = solver.step_size if solver.step_size and np.isfinite(solver.step_size) else None
                if retries < RETRIES and h_last:
                    retries += 1
                    first_step, restart = min(h_last, t_bound - t) * 1e-3, True
                    break
                status, message = "diverged", non_finite_message(t, solver.t)
                break
            retries = 0
            if solver.status == "failed":
                status, message = "failed", f"integrator {integrator!r}: step failed at t = {float(solver.t)!r}: {msg}"
                break
            t_old, t_new = solver.t_old, solver.t
            # SciPy's floor, 10 ulp of t, is none at t = 0: a run may crawl there for ever.  A few tiny
            # steps pass a kink (a stop engaging); TINY_STEPS of them in a row are a crawl.
            tiny = tiny + 1 if t_new - t_old < MIN_STEP * t_final and t_new < t_bound else 0
            if tiny >= TINY_STEPS:
                status, message = "failed", (
                    f"integrator {integrator!r}: its step fell to {t_new - t_old:.3g} s at t = {float(t_old)!r} "
                    f"({TINY_STEPS} steps in a row below {MIN_STEP:g} of the run's {t_final:g} s): the state "
                    f"changes faster than any step "
                    f"can follow — it is blowing up or started far out of scale (|q̇| up to "
                    f"{np.max(np.abs(state(solver.y)[1])):.3g}), or the "
                    + ("forces are too stiff even for it" if integrator in ("radau", "bdf", "lsoda")
                       else "forces are too stiff for an explicit method (try 'radau' or 'bdf')"))
                break
            w_new = flow.normalise(solver.y)
            if not np.all(np.isfinite(w_new)):
                status, message = "diverged", non_finite_message(t_old, t_new)
                break
            sol = solver.dense_output()
            if monitor is not None:
                def g_at(i, tt, sol=sol):
                    return monitor.events[i].value(tt, *state(flow.normalise(sol(tt))))

                def g_all(tt, sol=sol):
                    return monitor.values(tt, *state(flow.normalise(sol(tt))))
                try:   # (the hard stops' guards and resets compute the dynamics: they may blow up too)
                    g_new = monitor.values(t_new, *state(w_new))
                    hit = monitor.earliest(t_old, t_new, g_new, g_at, g_all)
                    if hit is not None:
                        te, i = hit
                        emit_grid(sol, te)
                        w = flow.fire(monitor, i, te, flow.normalise(sol(te)))
                except _NonFinite:
                    status, message = "diverged", non_finite_message(t_old, t_new)
                    break
                if hit is not None:
                    t = te
                    if monitor.events[i].terminal:
                        status, message = "terminated", f"terminal event {monitor.events[i].name!r} at t = {float(te)!r}"
                    restart = True
                    break
                monitor.g = g_new
            emit_grid(sol, t_new)
            t, w = t_new, w_new
            if on_step is not None:
                on_step(t)
        if status != "finished" or restart:
            continue
        if period is not None and t >= next_sample - 1e-12:
            flow.sample(t, w)
            n_sample += 1
            next_sample = n_sample * period
    return status, message, t, w
