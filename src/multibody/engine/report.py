"""Re-run the OpenDE report's comparisons (seed 003, ch. 5 and 6) with this engine.

* :func:`double_pendulum` — the report's double pendulum (two 1 kg boxes 1 × 0.1 × 0.1 m,
  q0 = [π/4, −π/4]) in maximal coordinates against the reduced-coordinate solution (ABA with an
  adaptive Dormand-Prince integrator): joint angles and energy, figures 5.9 and 5.13 as numbers.
* :func:`colliding_pendulum` — appendix C.5's link swinging into a wall with bounce 1.0 against an
  event-based reduced run: how many steps late the engine sees the wall (figures 6.3 and 6.4).

Command line: ``python -m multibody.engine.report`` prints both, with ERP 0.2 and feedback off;
``--ode`` redoes them and table 5.2 with the Open Dynamics Engine 0.16 itself (:mod:`.ode`),
``mb.engine`` and the reduced-coordinate equations side by side (:func:`ode_report`), and checks
the report's scenes engine against ODE (:func:`agreement`).

>>> r = colliding_pendulum()
>>> -1 <= r["steps_late"] <= 2          # the report's OpenDE run: about 10 steps late
True
"""
from __future__ import annotations

import math

import numpy as np

from .shapes import Box, Plane, Sphere
from .world import World
from .._extras import require

__all__ = ["double_pendulum", "colliding_pendulum", "scene", "SCENES", "agreement", "ode_double_pendulum",
           "ode_colliding_pendulum", "colliding_traces", "plot_figures", "table_5_2", "ode_report", "main",
           "chain_world", "pile_poses", "pile_world"]


def double_pendulum(T=10.0, dt=1e-3, erp=0.2, cfm=1e-10, every=10):
    """Both runs of the report's double pendulum, sampled every ``every`` steps.

    Returns a dict: ``t``; ``q_engine``, ``q_reduced`` (n, 2) joint angles (θ₁, θ₂ relative);
    ``energy_engine`` [J]; ``joint_gap`` the largest anchor separation [m].
    """
    require("scipy", "sim", "the OpenDE report's comparisons")
    from scipy.integrate import solve_ivp

    from ..dynamics import aba
    from ..models import double_pendulum as double_pendulum_model
    model = double_pendulum_model()
    q0 = np.array([math.pi / 4, -math.pi / 4])
    n = int(round(T / dt)) // every
    t = np.arange(n + 1) * dt * every
    sol = solve_ivp(lambda _, x: np.r_[x[2:], aba(model, x[:2], x[2:], np.zeros(2))], (0, t[-1]),
                    np.r_[q0, 0, 0], t_eval=t, rtol=1e-11, atol=1e-11, method="DOP853")
    world = World.from_model(model, q0, erp=erp, cfm=cfm, dt=dt)
    q, energy, gap = np.empty((n + 1, 2)), np.empty(n + 1), np.zeros(n + 1)
    q[0], energy[0] = world.joint_positions(), world.energy()
    for k in range(n):
        world.run(every)
        q[k + 1], energy[k + 1] = world.joint_positions(), world.energy()
        gap[k + 1] = max(np.linalg.norm(world.joint_error(j)) for j in world.joints)
    return {"t": t, "q_engine": q, "q_reduced": sol.y[:2].T, "energy_engine": energy, "joint_gap": gap}


def colliding_pendulum_world(dt=1e-3, erp=0.2, cfm=1e-10, solver="auto"):
    """Appendix C.5's scene: the link hinged to the world in front of the wall (bounce 1.0)."""
    world = World(gravity=(0, 0, -9.8), erp=erp, cfm=cfm, dt=dt, bounce_vel=0.0, solver=solver)
    link = world.add_body(Box(1.0, 0.1, 0.1), mass=1.0, position=(1.5, 0, 3), bounce=1.0)
    world.add_hinge(link, None, anchor=(1, 0, 3), axis=(0, 1, 0))
    world.add_geom(Box(1.8, 2.0, 5.5), None, bounce=1.0)
    return world


def _wall_event():
    """(θ of the corner's contact, time and rate there, time the link hangs vertical θ = π/2) of
    the reduced run: the link swings from horizontal under gravity 9.8 about its hinge."""
    require("scipy", "sim", "the OpenDE report's comparisons")
    from scipy.integrate import solve_ivp
    from scipy.optimize import brentq
    theta_e = brentq(lambda th: 1 + math.cos(th) - 0.05 * math.sin(th) - 0.9, math.pi / 2, math.pi)
    inertia = (1.0 + 0.01) / 12 + 0.25                        # about the hinge

    def event(t, x):
        return x[0] - theta_e

    def vertical(t, x):
        return x[0] - math.pi / 2
    event.terminal, event.direction = True, 1
    sol = solve_ivp(lambda t, x: [x[1], 9.8 * 0.5 * math.cos(x[0]) / inertia], (0, 5), [0, 0],
                    events=[event, vertical], rtol=1e-12, atol=1e-12)
    return theta_e, float(sol.t_events[0][0]), float(sol.y_events[0][0][1]), float(sol.t_events[1][0])


def colliding_pendulum(dt=1e-3, erp=0.2, cfm=1e-10):
    """Appendix C.5: a 1 × 0.1 × 0.1 m, 1 kg link hinged at (1, 0, 3) about y swings from
    horizontal into a 1.8 × 2 × 5.5 m wall box at the origin, bounce 1.0, gravity 9.8.

    The reduced run stops at the event (the link's far lower corner reaches the wall face x = 0.9)
    and reverses the rate.  Returns ``t_event``, ``step_event`` (t_event/dt), ``step_bounce`` (the
    first engine step after which the link moves back), ``steps_late``, ``rate_event`` (reduced,
    just before) and ``rate_after`` (engine, just after).
    """
    require("scipy", "sim", "the OpenDE report's comparisons")
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


# ---- the Open Dynamics Engine itself, beside mb.engine (python -m multibody.engine.report --ode) --------
def _model_q0():
    from ..models import double_pendulum as double_pendulum_model
    return double_pendulum_model(), np.array([math.pi / 4, -math.pi / 4])


def ode_double_pendulum(T=10.0, dt=1e-3, erp=0.2, cfm=1e-10, every=10, quick=False, iterations=20):
    """The report's double pendulum in ODE (``dWorldStep``, or ``dWorldQuickStep`` with
    ``iterations`` sweeps), built from the same Model as :func:`double_pendulum`'s engine run.

    Returns ``t``, ``q`` (n, 2) joint angles and ``energy`` [J], sampled every ``every`` steps.
    """
    from .ode import OdeWorld
    model, q0 = _model_q0()
    world = World.from_model(model, q0, erp=erp, cfm=cfm, dt=dt, iterations=iterations)
    ode = OdeWorld.from_engine(world)
    n = int(round(T / dt)) // every
    ang, energy = np.empty((n + 1, 2)), np.empty(n + 1)
    ang[0], energy[0] = 0.0, ode.energy()
    for k in range(n):
        for _ in range(every):
            ode.step(quick)
        ang[k + 1] = [ode.hinge_angle(j)[0] for j in range(2)]
        energy[k + 1] = ode.energy()
    ode.close()
    # dJointGetHingeAngle is body 1 about the axis relative to body 2, zero at attach, in (-π, π]
    return {"t": np.arange(n + 1) * dt * every, "q": q0 + np.unwrap(ang, axis=0), "energy": energy}


def reduced_double_pendulum(T=10.0, dt=1e-3, every=10, integrator="euler"):
    """The report's Matlab runs (cases 3, 4): the reduced equations by explicit Euler (fixed
    ``dt``) or an adaptive method, sampled every ``every`` steps: ``t``, ``q``, ``energy``."""
    from ..simulation import simulate
    model, q0 = _model_q0()
    tr = simulate(model, q0, np.zeros(2), T, dt=dt, integrator=integrator, record_every=every)
    return {"t": np.asarray(tr.t), "q": np.asarray(tr.q), "energy": np.asarray(tr.total_energy)}


def ode_colliding_pendulum(dt=1e-3, erp=0.2, cfm=1e-10, quick=False):
    """Appendix C.5 in ODE (the report's own program, as data): the first step after which the
    link moves back, and how late that is against the corner's contact and against the link
    hanging vertical (θ = π/2, where a model without the link's thickness puts the wall)."""
    from .ode import OdeWorld
    world = colliding_pendulum_world(dt, erp, cfm)
    ode = OdeWorld.from_engine(world)
    _, t_e, rate_e, t_vert = _wall_event()
    for k in range(1, int(t_e / dt) + 100):
        ode.step(quick)
        if ode.hinge_angle(0)[1] < 0:
            rate = ode.hinge_angle(0)[1]
            ode.close()
            return {"t_event": t_e, "step_event": t_e / dt, "step_bounce": k, "steps_late": k - t_e / dt,
                    "steps_after_vertical": k - t_vert / dt, "rate_event": rate_e, "rate_after": rate}
    raise RuntimeError("ode_colliding_pendulum: ODE never bounced off the wall")


def _timed(fn, repeat=3):
    import time
    best = math.inf
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def table_5_2(T=10.0, dt=1e-3, repeat=3):
    """Table 5.2 redone: CPU seconds (best of ``repeat``, ``time.process_time``) to simulate the
    double pendulum for ``T`` seconds.  Rows (case, platform, solver, steps, seconds); the loops
    of the reduced runs, the engine and ODE all run in C (ODE through ``ode_loop.c``)."""
    from ..simulation import simulate
    from .ode import OdeWorld
    model, q0 = _model_q0()
    n = int(round(T / dt))
    rows = []
    rk = simulate(model, q0, np.zeros(2), T, dt=T / 500, integrator="rk45")
    rows.append(("3", "multibody, reduced (ABA)", "Runge-Kutta (4,5), adaptive", len(rk.t) - 1,
                 _timed(lambda: simulate(model, q0, np.zeros(2), T, dt=T / 500, integrator="rk45"), repeat)))
    rows.append(("4", "multibody, reduced (ABA)", "explicit Euler", n,
                 _timed(lambda: simulate(model, q0, np.zeros(2), T, dt=dt, integrator="euler", record_every=n),
                        repeat)))

    def engine_run(solver):
        w = World.from_model(model, q0, dt=dt, solver=solver, iterations=20, tolerance=0.0)   # ODE's fixed sweeps
        return lambda: w.run(n)

    def ode_run(quick):
        o = OdeWorld.from_engine(World.from_model(model, q0, dt=dt, iterations=20), fdir="plane")
        return lambda: o.run(n, quick)
    for label, solver in (("defaults (tree factorization)", "auto"), ("solver='dantzig'", "dantzig"),
                          ("solver='pgs', 20 sweeps", "pgs")):
        rows.append(("5", "mb.engine (maximal)", f"semi-implicit Euler, {label}", n,
                     min(_timed(engine_run(solver), 1) for _ in range(repeat))))
    for label, quick in (("dWorldStep", False), ("dWorldQuickStep, 20 sweeps", True)):
        rows.append(("5", "ODE 0.16 (maximal)", f"semi-implicit Euler, {label}", n,
                     min(_timed(ode_run(quick), 1) for _ in range(repeat))))
    return rows


# the report's scenes, each built once in mb.engine; OdeWorld.from_engine copies it into ODE
def _bouncing_ball(solver, e=0.8):
    world = World(bounce_vel=0.0, solver=solver, iterations=20)
    world.add_geom(Plane((0, 0, 1), 0.0), bounce=e)
    world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 1.1), bounce=e)
    return world


def _slope(solver, mu=0.3, degrees=25.0):
    from .world import matrix_to_quat
    a = math.radians(degrees)
    n = np.array([-math.sin(a), 0, math.cos(a)])
    world = World(solver=solver, iterations=20)
    world.add_geom(Plane(n, 0.0), mu=mu)
    R = np.array([[math.cos(a), 0, -math.sin(a)], [0, 1, 0], [math.sin(a), 0, math.cos(a)]])
    world.add_body(Box(0.2, 0.2, 0.2), mass=1.0, position=n * 0.1, quaternion=matrix_to_quat(R), mu=mu)
    return world


# ---- the benchmark scenes (multibody.bench.engine times them; agreement() checks them against ODE) ----
CHAIN_N, CHAIN_L, DT = 10, 0.3, 1e-3
PILE_N, PILE_SIDE = 100, 0.2


def chain_world():
    world = World(dt=DT, contacts=False)
    prev = None
    for i in range(CHAIN_N):
        body = world.add_body(Box(CHAIN_L, 0.05, 0.05), mass=1.0, position=(CHAIN_L * (i + 0.5), 0, 0))
        world.add_hinge(body, prev, anchor=(CHAIN_L * i, 0, 0), axis=(0, 1, 0))
        prev = body
    return world


def pile_poses(seed=0):
    rng = np.random.default_rng(seed)
    poses = []
    for i in range(PILE_N):
        layer, k = divmod(i, 25)
        x, y = (k % 5 - 2) * 0.3, (k // 5 - 2) * 0.3
        q = rng.normal(size=4) * [1, 0.15, 0.15, 0.15] + [3, 0, 0, 0]
        poses.append(((x + rng.uniform(-0.03, 0.03), y + rng.uniform(-0.03, 0.03), 0.15 + 0.3 * layer),
                      q / np.linalg.norm(q)))
    return poses


def pile_world(iterations=None, solver="auto", n=PILE_N, tolerance=None, seed=0):
    """The pile (``pile_poses(seed)``) with World's defaults, or the quick step's ``iterations`` /
    ``tolerance`` given."""
    kw = {k: v for k, v in (("iterations", iterations), ("tolerance", tolerance)) if v is not None}
    world = World(dt=DT, solver=solver, **kw)
    world.add_geom(Plane((0, 0, 1), 0.0))
    for p, q in pile_poses(seed)[:n]:
        world.add_body(Box(PILE_SIDE, PILE_SIDE, PILE_SIDE), mass=1.0, position=p, quaternion=q, mu=0.8)
    return world


def _double_pendulum(solver):
    model, q0 = _model_q0()
    return World.from_model(model, q0, solver=solver, iterations=20)


def _chain(solver):
    w = chain_world()
    w.solver, w.iterations = solver, 20
    return w


def _pile(solver, n=100):
    return pile_world(iterations=20, solver=solver, n=n)


SCENES = {"double pendulum": _double_pendulum,
          "colliding pendulum": lambda solver: colliding_pendulum_world(solver=solver),
          "bouncing ball": _bouncing_ball, "box on a slope": _slope, "10-link chain": _chain,
          "box pile": _pile}


def scene(name, solver="dantzig"):
    """The engine World of one of the report's scenes (``SCENES``), ERP 0.2, CFM 1e-10, 1 ms
    steps, 20 quick-step sweeps every step (``tolerance=0``: ODE's fixed sweeps, no early stop): 'double pendulum', 'colliding pendulum', 'bouncing ball'
    (restitution 0.8), 'box on a slope' (25°, μ 0.3: it slides), '10-link chain', 'box pile'."""
    if name not in SCENES:
        raise ValueError(f"name: expected one of {sorted(SCENES)}, got {name!r}")
    world = SCENES[name](solver)
    world.tolerance = 0.0
    return world


def agreement(name, quick=False, steps=1000, fdir="slip", every=1):
    """Run scene ``name`` in mb.engine (``quick``: solver='pgs', else 'dantzig') and in ODE
    (``dWorldQuickStep`` or ``dWorldStep``) side by side for ``steps`` steps.

    Returns ``t``, ``engine`` and ``ode`` positions of every body (n, nb, 3) sampled every
    ``every`` steps, and ``gap`` their largest difference at each sample [m]."""
    from .ode import OdeWorld
    world = scene(name, "pgs" if quick else "dantzig")
    ode = OdeWorld.from_engine(world, fdir=fdir)
    nb = len(world.bodies)
    n = steps // every
    pe, po = np.empty((n + 1, nb, 3)), np.empty((n + 1, nb, 3))
    pe[0] = po[0] = [b.position for b in world.bodies]
    for k in range(n):
        world.run(every)
        for _ in range(every):
            ode.step(quick)
        pe[k + 1] = [b.position for b in world.bodies]
        po[k + 1] = [ode.position(i) for i in range(nb)]
    ode.close()
    return {"t": np.arange(n + 1) * every * world.dt, "engine": pe, "ode": po,
            "gap": np.abs(pe - po).max(axis=(1, 2))}


def _apexes(z, dt):
    v = np.diff(z) / dt
    return [z[i] - 0.1 for i in range(1, len(v)) if v[i - 1] > 0 >= v[i]]


def colliding_traces(steps=520, dt=1e-3):
    """Hinge angle after each of ``steps`` steps of appendix C.5's scene in ODE and in mb.engine
    (figures 6.3 and 6.4): ``step``, ``ode``, ``engine`` [rad], and the corner's contact step and
    the step the link hangs vertical (reduced solution)."""
    from .ode import OdeWorld
    world = colliding_pendulum_world(dt)
    ode = OdeWorld.from_engine(world)
    a_e, a_o = np.empty(steps + 1), np.empty(steps + 1)
    a_e[0] = a_o[0] = 0.0
    for k in range(steps):
        world.step()
        ode.step()
        a_e[k + 1], a_o[k + 1] = world.joints[0].angle, ode.hinge_angle(0)[0]
    ode.close()
    _, t_e, _, t_vert = _wall_event()
    return {"step": np.arange(steps + 1), "engine": a_e, "ode": np.unwrap(a_o), "step_event": t_e / dt,
            "step_vertical": t_vert / dt}


def plot_figures(folder, t, q_reference, runs, traces):
    """Figures 5.9/5.13 (joint angles and energy of the double pendulum: ``runs`` maps a label to
    (q, energy) sampled at ``t``, against ``q_reference``) and 6.3/6.4 (``colliding_traces``) as
    PNG files in ``folder``; returns their paths."""
    import os

    require("matplotlib", "view", "the OpenDE report's comparisons")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(folder, exist_ok=True)
    fig, ax = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
    for j in range(2):
        ax[j].plot(t, q_reference[:, j], "k-", lw=2.5, alpha=0.4, label="reduced, DOP853")
    for label, (q, e) in runs.items():
        n = min(len(t), len(q))
        for j in range(2):
            ax[j].plot(t[:n], q[:n, j], lw=1, label=label)
        ax[2].plot(t[:n], e[:n] - e[0], lw=1, label=label)
    ax[0].set_ylabel("q1 [rad]")
    ax[1].set_ylabel("q2 [rad]")
    ax[2].set_ylabel("E − E(0) [J]")
    ax[2].set_xlabel("t [s]")
    ax[0].legend(fontsize=7)
    fig.suptitle("OpenDE report figs. 5.9-5.13: double pendulum, dt = 1 ms")
    first = os.path.join(folder, "fig5_double_pendulum.png")
    fig.savefig(first, dpi=100)
    plt.close(fig)
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for a, lo in zip(ax, (0, int(traces["step_vertical"]) - 15)):
        s = traces["step"] >= lo
        a.plot(traces["step"][s], traces["ode"][s], "o-", ms=3, label="ODE 0.16 dWorldStep")
        a.plot(traces["step"][s], traces["engine"][s], "x--", ms=3, label="mb.engine")
        a.axvline(traces["step_event"], color="r", lw=1, label="corner reaches the wall (reduced)")
        a.axvline(traces["step_vertical"], color="g", lw=1, label="link vertical (reduced)")
        a.set_xlabel("step")
        a.set_ylabel("hinge angle [rad]")
    ax[1].legend(fontsize=7)
    fig.suptitle("OpenDE report figs. 6.3-6.4: colliding pendulum, bounce 1.0")
    second = os.path.join(folder, "fig6_colliding_pendulum.png")
    fig.savefig(second, dpi=100)
    plt.close(fig)
    return [first, second]


def ode_report(out=print, plot=None):
    """The report's experiments with ODE 0.16, mb.engine and the reduced equations side by side;
    ``plot`` a folder for the figures' PNG files (:func:`plot_figures`)."""
    from .ode import version
    out(f"ODE: {version()}")
    out("Ch. 5, figures 5.9-5.13: double pendulum, 10 s, dt = 1 ms; |Δq| against the reduced solution (DOP853)")
    ref = double_pendulum(erp=0.2)
    runs = {"mb.engine, exact (ERP 0.2)": (ref["q_engine"], ref["energy_engine"])}
    for erp, cfm in ((0.2, 1e-10), (0.2, 1e-5), (0.0, 1e-10)):
        o = ode_double_pendulum(erp=erp, cfm=cfm)
        runs[f"ODE dWorldStep (ERP {erp:.1f}, CFM {cfm:g})"] = (o["q"], o["energy"])
    o = ode_double_pendulum(quick=True)
    runs["ODE dWorldQuickStep, 20 sweeps"] = (o["q"], o["energy"])
    eu = reduced_double_pendulum(integrator="euler")
    runs["reduced, explicit Euler (case 4)"] = (eu["q"], eu["energy"])
    rk = reduced_double_pendulum(integrator="rk45")
    runs["reduced, Runge-Kutta (4,5) (case 3)"] = (rk["q"], rk["energy"])
    t = ref["t"]
    for label, (q, e) in runs.items():
        err = np.abs(q[:len(t)] - ref["q_reduced"][:len(q)])
        cols = " ".join(f"{err[t[:len(err)] <= s].max():8.4f}" for s in (1, 3, 6, 10))
        out(f"  {label:38s} |Δq| to 1/3/6/10 s [rad] {cols}   energy range {np.ptp(e):.4f} J")
    e_ode = np.ptp(runs["ODE dWorldStep (ERP 0.2, CFM 1e-10)"][1])
    e_eul = np.ptp(eu["energy"])
    if plot:
        keep = ("ODE dWorldStep (ERP 0.2, CFM 1e-10)", "mb.engine, exact (ERP 0.2)", "reduced, explicit Euler (case 4)")
        paths = plot_figures(plot, t, ref["q_reduced"], {k: runs[k] for k in keep}, colliding_traces())
        out(f"  figures: {', '.join(paths)}")
    out(f"  finding 1 (ODE's energy fluctuates more than explicit Euler's): "
        f"{'still shown' if e_ode > e_eul else 'NOT shown'} by ODE 0.16 "
        f"({e_ode:.3f} J against {e_eul:.3f} J)")
    out("Ch. 6, figures 6.3-6.4: colliding pendulum, bounce 1.0, dt = 1 ms")
    found = None
    for erp in (0.2, 0.0):
        c, oc = colliding_pendulum(erp=erp), ode_colliding_pendulum(erp=erp)
        found = found or oc
        _, _, _, t_vert = _wall_event()
        out(f"  ERP {erp:.1f}: corner reaches the wall at step {c['step_event']:.1f} (link vertical at step "
            f"{t_vert / 1e-3:.1f}); bounces after step: ODE {oc['step_bounce']} ({oc['steps_late']:+.1f}), "
            f"mb.engine {c['step_bounce']} ({c['steps_late']:+.1f}); counted from the vertical: "
            f"ODE {oc['steps_after_vertical']:+.1f}")
    oc = found                                     # the report's ERP 0.2
    out(f"  finding 2 (wall detected ~10 steps late): ODE 0.16 bounces {oc['steps_late']:+.1f} steps after the "
        f"contact event, {'so it is not late' if abs(oc['steps_late']) < 2 else 'late'}; it is "
        f"{oc['steps_after_vertical']:+.1f} steps after the link hangs vertical, the event a model without the "
        "link's half-thickness and the wall's 0.1 m offset would use")
    out("Table 5.2: CPU time for 10 s of the double pendulum (this machine, one core)")
    out(f"  {'case':4s} {'platform':26s} {'solver':48s} {'steps':>6s} {'time [s]':>9s}")
    for case, plat, solver, steps, sec in table_5_2():
        out(f"  {case:4s} {plat:26s} {solver:48s} {steps:6d} {sec:9.4f}")
    out("The report's scenes, mb.engine against ODE 0.16 with the same ERP, CFM, friction and step")
    for name, steps in (("double pendulum", 1000), ("colliding pendulum", 700), ("10-link chain", 1000)):
        for quick in (False, True):
            g = agreement(name, quick, steps)["gap"]
            out(f"  {name:20s} {'quick step, 20 sweeps' if quick else 'exact':22s} largest position gap over "
                f"{steps} steps {g.max():.2e} m")
    for quick in (False, True):
        r = agreement("bouncing ball", quick, 3000)
        ae, ao = _apexes(r["engine"][:, 0, 2], 1e-3), _apexes(r["ode"][:, 0, 2], 1e-3)
        out(f"  bouncing ball (e 0.8) {'quick' if quick else 'exact'}: apexes [m] mb.engine "
            f"{' '.join(f'{a:.4f}' for a in ae[:4])}; ODE {' '.join(f'{a:.4f}' for a in ao[:4])}; "
            f"e^2k: {' '.join(f'{0.8 ** (2 * k):.4f}' for k in range(1, 5))}")
        r = agreement("box on a slope", quick, 700)
        de, do = (np.linalg.norm(r[k][-1, 0] - r[k][0, 0]) for k in ("engine", "ode"))
        out(f"  box on a slope (25°, μ 0.3) {'quick' if quick else 'exact'}: slides {de:.5f} m (mb.engine), "
            f"{do:.5f} m (ODE) in 0.7 s; a = g (sin α − μ cos α) gives "
            f"{0.5 * 9.81 * (math.sin(math.radians(25)) - 0.3 * math.cos(math.radians(25))) * 0.7 ** 2:.5f} m")
    return 0


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(prog="python -m multibody.engine.report", description=__doc__.splitlines()[0])
    ap.add_argument("--ode", action="store_true",
                    help="redo the figures' numbers and table 5.2 with ODE 0.16 (libode-dev) beside mb.engine")
    ap.add_argument("--plot", metavar="FOLDER", help="with --ode: also draw figures 5.9-5.13 and 6.3-6.4 as PNG files")
    args = ap.parse_args(argv)
    if args.plot and not args.ode:
        ap.error("--plot: needs --ode")
    if args.ode:
        from .ode import OdeUnavailable
        try:
            return ode_report(plot=args.plot)
        except OdeUnavailable as e:
            print(f"--ode: {e}")
            return 2
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
