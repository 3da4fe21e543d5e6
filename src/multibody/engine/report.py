"""Re-run the OpenDE report's comparisons (seed 003, ch. 5 and 6) with this engine.

* :func:`double_pendulum` — the report's double pendulum (two 1 kg boxes 1 × 0.1 × 0.1 m,
  q0 = [π/4, −π/4]) in maximal coordinates against the reduced-coordinate solution (ABA with an
  adaptive Dormand-Prince integrator): joint angles and energy, figures 5.9 and 5.13 as numbers.
* :func:`colliding_pendulum` — appendix C.5's link swinging into a wall with bounce 1.0 against an
  event-based reduced run: how many steps late the engine sees the wall (figures 6.3 and 6.4).

Command line: ``python -m multibody.engine.report`` prints both, with ERP 0.2 and feedback off.

>>> r = colliding_pendulum()
>>> -1 <= r["steps_late"] <= 2          # the report's OpenDE run: about 10 steps late
True
"""
from __future__ import annotations

import math

import numpy as np

from .shapes import Box
from .world import World

__all__ = ["double_pendulum", "colliding_pendulum", "main"]


def double_pendulum(T=10.0, dt=1e-3, erp=0.2, cfm=1e-10, every=10):
    """Both runs of the report's double pendulum, sampled every ``every`` steps.

    Returns a dict: ``t``; ``q_engine``, ``q_reduced`` (n, 2) joint angles (θ₁, θ₂ relative);
    ``energy_engine`` [J]; ``joint_gap`` the largest anchor separation [m].
    """
    from scipy.integrate import solve_ivp

    import multibody as mb
    model = mb.models.double_pendulum()
    q0 = np.array([math.pi / 4, -math.pi / 4])
    n = int(round(T / dt)) // every
    t = np.arange(n + 1) * dt * every
    sol = solve_ivp(lambda _, x: np.r_[x[2:], mb.aba(model, x[:2], x[2:], np.zeros(2))], (0, t[-1]),
                    np.r_[q0, 0, 0], t_eval=t, rtol=1e-11, atol=1e-11, method="DOP853")
    world = World.from_model(model, q0, erp=erp, cfm=cfm, dt=dt)
    q, energy, gap = np.empty((n + 1, 2)), np.empty(n + 1), np.zeros(n + 1)
    q[0], energy[0] = world.joint_positions(), world.energy()
    for k in range(n):
        world.run(every)
        q[k + 1], energy[k + 1] = world.joint_positions(), world.energy()
        gap[k + 1] = max(np.linalg.norm(world.joint_error(j)) for j in world.joints)
    return {"t": t, "q_engine": q, "q_reduced": sol.y[:2].T, "energy_engine": energy, "joint_gap": gap}


def colliding_pendulum(dt=1e-3, erp=0.2, cfm=1e-10):
    """Appendix C.5: a 1 × 0.1 × 0.1 m, 1 kg link hinged at (1, 0, 3) about y swings from
    horizontal into a 1.8 × 2 × 5.5 m wall box at the origin, bounce 1.0, gravity 9.8.

    The reduced run stops at the event (the link's far lower corner reaches the wall face x = 0.9)
    and reverses the rate.  Returns ``t_event``, ``step_event`` (t_event/dt), ``step_bounce`` (the
    first engine step after which the link moves back), ``steps_late``, ``rate_event`` (reduced,
    just before) and ``rate_after`` (engine, just after).
    """
    from scipy.integrate import solve_ivp
    from scipy.optimize import brentq
    world = World(gravity=(0, 0, -9.8), erp=erp, cfm=cfm, dt=dt, bounce_vel=0.0)
    link = world.add_body(Box(1.0, 0.1, 0.1), mass=1.0, position=(1.5, 0, 3), bounce=1.0)
    hinge = world.add_hinge(link, None, anchor=(1, 0, 3), axis=(0, 1, 0))
    world.add_geom(Box(1.8, 2.0, 5.5), None, bounce=1.0)
    theta_e = brentq(lambda th: 1 + math.cos(th) - 0.05 * math.sin(th) - 0.9, math.pi / 2, math.pi)
    inertia = (1.0 + 0.01) / 12 + 0.25                        # about the hinge

    def event(t, x):
        return x[0] - theta_e
    event.terminal, event.direction = True, 1
    sol = solve_ivp(lambda t, x: [x[1], 9.8 * 0.5 * math.cos(x[0]) / inertia], (0, 5), [0, 0], events=event,
                    rtol=1e-12, atol=1e-12)
    t_e, rate_e = float(sol.t_events[0][0]), float(sol.y_events[0][0][1])
    step_bounce, rate_after = None, None
    for k in range(1, int(t_e / dt) + 100):
        world.step()
        if hinge.rate < 0:
            step_bounce, rate_after = k, hinge.rate
            break
    if step_bounce is None:
        raise RuntimeError("colliding_pendulum: the engine never bounced off the wall")
    return {"t_event": t_e, "step_event": t_e / dt, "step_bounce": step_bounce,
            "steps_late": step_bounce - t_e / dt, "rate_event": rate_e, "rate_after": rate_after}


def main(argv=None):
    print("OpenDE report, ch. 5: double pendulum, engine (dt = 1 ms) against reduced coordinates (DOP853)")
    for erp in (0.2, 0.0):
        r = double_pendulum(erp=erp)
        err = np.abs(r["q_engine"] - r["q_reduced"])
        e = np.abs(r["energy_engine"] - r["energy_engine"][0]).max()
        cols = "   ".join(f"|Δq| ≤ {err[r['t'] <= s].max():.4f} rad to {s:g} s" for s in (1, 3, 6, 10))
        print(f"  ERP {erp:.1f}: {cols}   energy drift {e:.3f} J   joint gap {r['joint_gap'].max():.2e} m")
    print("OpenDE report, ch. 6: colliding pendulum, bounce 1.0")
    for erp in (0.2, 0.0):
        c = colliding_pendulum(erp=erp)
        print(f"  ERP {erp:.1f}: event at t = {c['t_event']:.4f} s (step {c['step_event']:.1f}), engine bounces after "
              f"step {c['step_bounce']}: {c['steps_late']:+.1f} steps; rate {c['rate_event']:.4f} → {c['rate_after']:.4f} rad/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
