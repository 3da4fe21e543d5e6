"""Benchmark: code generation against Pinocchio, the numeric core, SymPy and PyDy, from one run.

    python -m multibody.bench.codegen              # everything (n-link pendulum n = 2…12)
    python -m multibody.bench.codegen --quick      # pendulum n = 2…6, smaller batches, a 10-link rhs

1. StarlETH (18 DoF): time to generate (derive + CSE + C source) and compile M, b, g into a fresh
   cache folder (goal ≤ 10 s); the same code loaded again from the cache.
2. One evaluation of M, b, g through the compiled module — one call, and per state in a batch of
   10 000 — against the numeric core (crba + rnea) and Pinocchio (crba + nonLinearEffects on a
   twin with the same parameters; StarlETH's massless feet on fixed joints are left out of the
   twin: they change nothing). Goals: ≥ 2× faster than Pinocchio per evaluation; the batch ≥ 10×
   faster than a Python loop over Pinocchio. The batch is one C call: CG_W states per SIMD lane
   block (``templates/module.c``), no Python per state.
3. Traced ABA of Talos (example-robot-data, free-floating) against the core's ABA (goal: at least
   as fast, one call and per state of a batch) and Pinocchio's ABA.
4. Operation counts after CSE for the n-link pendulum on a cart against SymPy's ``KanesMethod``
   output (mass matrix and forcing; raw and after ``sympy.cse``), counted by one counter
   (:func:`multibody.codegen.count_ops`). Goal: ours ≤ SymPy's.
5. The 20-link pendulum on a cart's right-hand side q̈ = M⁻¹(f − b − g)
   (:func:`multibody.codegen.rhs_spec`: M, forcing and an unrolled LDLᵀ, compiled; goal ≤ 5 µs per
   call) beside PyDy's own ``generate_ode_function`` (Cython where Cython is installed, else
   lambdify) on PyDy's model, and PyDy's published 49.5 µs.

Every timed result is checked against its peer first (agreement printed).
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
import timeit
import warnings

import numpy as np

from .pin_twin import pinocchio_twin


_TIMER = [time.process_time]   # main(): --wall switches to time.perf_counter


def _best(fn, number, repeat=5):
    """Best time per call over ``repeat`` runs of ``number`` calls (seconds).

    By default the process's CPU time, with the core's batches on one thread (:func:`main` sets
    it): every contender then runs on one thread, and time the process spends waiting for a core of
    a loaded machine is not counted, so the ratios hold on a shared machine. ``--wall`` measures
    wall-clock time instead (and leaves the core's threads as they are).
    """
    return min(timeit.repeat(fn, number=number, repeat=repeat, timer=_TIMER[0])) / number


def bench_starleth(n_batch: int):
    import pinocchio as pin

    import multibody as mb
    from multibody import codegen
    from multibody.codegen.compiled import compile as cg_compile

    print("1. StarlETH (18 DoF): generate and compile M, b, g")
    model = mb.models.starleth()
    cache = tempfile.mkdtemp(prefix="mb-bench-cache-")
    t0 = time.perf_counter()
    from multibody.symbolic import derive

    eom = derive(model)
    t1 = time.perf_counter()
    spec = codegen.as_spec(eom)
    spec.cse()
    t2 = time.perf_counter()
    f = cg_compile(spec, cache_dir=cache)
    t3 = time.perf_counter()
    assert f.built
    from multibody.codegen import compiled

    compiled._LOADED.clear()
    t4 = time.perf_counter()
    f2 = cg_compile(codegen.as_spec(eom), cache_dir=cache)
    t5 = time.perf_counter()
    assert not f2.built
    total = t3 - t0
    print(f"   derive {t1 - t0:.2f} s + CSE {t2 - t1:.2f} s ({len(spec.temporaries)} temporaries, "
          f"{spec.count_ops()} operations) + C source and compile {t3 - t2:.2f} s = {total:.2f} s "
          f"(goal ≤ 10 s: {'met' if total <= 10 else 'NOT met'})")
    print(f"   from the cache (CSE + hash + load, no compiler run): {t5 - t4:.2f} s")

    print("2. One evaluation of M, b, g (StarlETH)")
    rng = np.random.default_rng(0)
    q, qd = rng.uniform(-1, 1, (2, model.nv))
    pm, perm = pinocchio_twin(model)
    pd = pm.createData()
    out = f(q, qd)
    z = np.zeros(model.nv)
    g_core = mb.rnea(model, q, z, z)
    M_core, h_core = mb.crba(model, q), mb.rnea(model, q, qd, z)
    qp, vp = q[perm], qd[perm]
    M_pin = pin.crba(pm, pd, qp)
    M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
    h_pin = pin.nonLinearEffects(pm, pd, qp, vp)
    inv = np.argsort(perm)
    scale = np.abs(M_core).max()
    print(f"   agreement: |M − M_core| = {np.abs(out['M'] - M_core).max() / scale:.1e}, "
          f"|b+g − rnea| = {np.abs(out['b'] + out['g'] - h_core).max() / np.abs(h_core).max():.1e}, "
          f"|M − M_pin| = {np.abs(out['M'] - M_pin[np.ix_(inv, inv)]).max() / scale:.1e}, "
          f"|b+g − nle_pin| = {np.abs(out['b'] + out['g'] - h_pin[inv]).max() / np.abs(h_pin).max():.1e} (relative)")
    t_ours = _best(lambda: f(q, qd), 2000)
    t_core = _best(lambda: (mb.crba(model, q), mb.rnea(model, q, qd, z), mb.rnea(model, q, z, z)), 200)
    t_pin = _best(lambda: (pin.crba(pm, pd, qp), pin.nonLinearEffects(pm, pd, qp, vp)), 2000)
    print(f"   one call:  compiled module {t_ours * 1e6:7.2f} µs | core crba + 2 rnea {t_core * 1e6:7.2f} µs | "
          f"Pinocchio crba + nonLinearEffects {t_pin * 1e6:7.2f} µs  → {t_pin / t_ours:.2f}× Pinocchio "
          f"(goal ≥ 2×), {t_core / t_ours:.1f}× core")
    Q, QD = rng.uniform(-1, 1, (2, n_batch, model.nv))
    f(Q, QD)
    t_batch = _best(lambda: f(Q, QD), 1, repeat=7) / n_batch
    Z = np.zeros((n_batch, model.nv))
    mb.crba(model, Q[:10]), mb.rnea(model, Q[:10], QD[:10], Z[:10])
    t_core_b = _best(lambda: (mb.crba(model, Q), mb.rnea(model, Q, QD, Z), mb.rnea(model, Q, Z, Z)), 1,
                     repeat=7) / n_batch
    Qp, QDp = Q[:, perm].copy(), QD[:, perm].copy()

    def pin_loop():
        for k in range(n_batch):
            pin.crba(pm, pd, Qp[k])
            pin.nonLinearEffects(pm, pd, Qp[k], QDp[k])

    t_pin_loop = _best(pin_loop, 1, repeat=7) / n_batch
    print(f"   batch of {n_batch}: compiled module {t_batch * 1e6:6.3f} µs/state | core batch "
          f"{t_core_b * 1e6:6.3f} µs/state | Python loop over Pinocchio {t_pin_loop * 1e6:6.3f} µs/state "
          f"→ {t_pin_loop / t_batch:.1f}× the Pinocchio loop (goal ≥ 10×)")


def bench_talos(n_batch: int):
    import pinocchio as pin

    import multibody as mb
    from multibody import codegen

    print("3. Traced ABA, Talos (example-robot-data, free-floating)")
    from .._extras import robots_dir
    try:
        robots = robots_dir()
    except FileNotFoundError as e:
        print(f"   skipped: {e}")
        return
    path = os.path.join(robots, "talos_data", "robots", "talos_reduced.urdf")
    if not os.path.isfile(path):
        print(f"   skipped: {path} not found (install example-robot-data)")
        return
    share = os.path.dirname(os.path.dirname(robots))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_urdf(path, floating=True, package_dirs=[share])
    t0 = time.perf_counter()
    f = codegen.compile_algorithm(model, "aba")
    t_gen = time.perf_counter() - t0
    print(f"   {model}: traced, CSE'd and compiled in {t_gen:.1f} s ({'built' if f.built else 'from the cache'}; "
          f"{len(f.spec.temporaries)} temporaries, {f.spec.count_ops()} operations)")
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    pd = pm.createData()
    rng = np.random.default_rng(1)
    q = model.neutral()
    q = mb.integrate(model, q, rng.uniform(-1, 1, model.nv))
    qd, tau = rng.uniform(-1, 1, (2, model.nv))
    got, want = f(q, qd, tau)["qdd"], mb.aba(model, q, qd, tau)
    print(f"   agreement with the core's ABA: {np.abs(got - want).max() / np.abs(want).max():.1e} (relative)")
    qp = pin.neutral(pm)
    vp, tp = rng.uniform(-1, 1, (2, pm.nv))
    t_ours = _best(lambda: f(q, qd, tau), 2000)
    t_pin = _best(lambda: pin.aba(pm, pd, qp, vp, tp), 2000)
    t_core = _best(lambda: mb.aba(model, q, qd, tau), 2000)
    print(f"   one call: traced ABA {t_ours * 1e6:6.2f} µs | core aba {t_core * 1e6:6.2f} µs | Pinocchio aba "
          f"{t_pin * 1e6:6.2f} µs  → {t_core / t_ours:.2f}× core (goal ≥ 1: "
          f"{'met' if t_core >= t_ours else 'NOT met'}), {t_pin / t_ours:.2f}× Pinocchio")
    Q = mb.integrate(model, np.tile(model.neutral(), (n_batch, 1)), rng.uniform(-1, 1, (n_batch, model.nv)))
    QD, TAU = rng.uniform(-1, 1, (2, n_batch, model.nv))
    got, want = f(Q[:50], QD[:50], TAU[:50])["qdd"], mb.aba(model, Q[:50], QD[:50], TAU[:50])
    print(f"   batch agreement with the core's ABA: {np.abs(got - want).max() / np.abs(want).max():.1e} (relative)")
    t_b = _best(lambda: f(Q, QD, TAU), 1, repeat=7) / n_batch
    t_core_b = _best(lambda: mb.aba(model, Q, QD, TAU), 1, repeat=7) / n_batch
    Vp, Tp = QD[:, :pm.nv].copy(), TAU[:, :pm.nv].copy()

    def pin_loop():
        for k in range(n_batch):
            pin.aba(pm, pd, qp, Vp[k], Tp[k])

    t_pl = _best(pin_loop, 1, repeat=7) / n_batch
    print(f"   batch of {n_batch}: traced ABA {t_b * 1e6:6.3f} µs/state | core batch {t_core_b * 1e6:6.3f} µs/state | "
          f"Python loop over Pinocchio {t_pl * 1e6:6.2f} µs/state → {t_core_b / t_b:.2f}× core (goal ≥ 1: "
          f"{'met' if t_core_b >= t_b else 'NOT met'}), {t_pl / t_b:.1f}× the Pinocchio loop")


def _plain(exprs, n):
    """Kane's expressions with the dynamicsymbols q_i(t), u_i(t) replaced by plain symbols."""
    import sympy as sp
    from sympy.physics.mechanics import dynamicsymbols

    rep = {}
    for k, s in enumerate(dynamicsymbols(f"q:{n + 1}")):
        rep[s] = sp.Symbol(f"q{k}")
    for k, s in enumerate(dynamicsymbols(f"u:{n + 1}")):
        rep[s] = sp.Symbol(f"u{k}")
    return [e.xreplace(rep) for e in exprs]


def bench_ops(n_max: int):
    import sympy as sp
    from sympy.physics.mechanics.models import n_link_pendulum_on_cart as kane_model

    from multibody import codegen
    from multibody.symbolic import derive
    from multibody.symbolic.sym_models import n_link_pendulum_on_cart

    print("4. Operation counts, n-link pendulum on a cart (M, b, g vs Kane's mass matrix and forcing)")
    print(f"   {'n':>3} {'Kane raw':>10} {'Kane + cse':>11} {'ours + CSE':>11} {'ours/Kane+cse':>14} "
          f"{'Kane s':>8} {'ours s':>7}")
    for n in range(2, n_max + 1):
        t0 = time.perf_counter()
        km = kane_model(n=n, cart_force=False, joint_torques=False)
        exprs = _plain(list(km.mass_matrix) + list(km.forcing), n)
        t_kane = time.perf_counter() - t0
        raw = codegen.count_ops(exprs)
        repl, red = sp.cse(exprs)
        kane_cse = codegen.count_ops([e for _, e in repl] + list(red))
        t0 = time.perf_counter()
        spec = codegen.as_spec(derive(n_link_pendulum_on_cart(n)))
        ours = spec.count_ops()
        t_ours = time.perf_counter() - t0
        print(f"   {n:>3} {raw:>10} {kane_cse:>11} {ours:>11} {ours / kane_cse:>14.2f} {t_kane:>8.2f} {t_ours:>7.2f}")


PYDY_PUBLISHED_US = 49.5   # PyDy's generated 20-link pendulum right-hand side, µs per call (issue 35)


def bench_rhs(n: int, n_batch: int):
    from multibody import codegen
    from multibody.symbolic import derive
    from multibody.symbolic.sym_models import n_link_pendulum_on_cart

    print(f"5. Right-hand side of the {n}-link pendulum on a cart (n + 1 = {n + 1} coordinates)")
    values = {**{f"m{i}": 1.0 + 0.1 * i for i in range(n + 1)}, **{f"l{i}": 1.0 - 0.02 * i for i in range(n)},
              "g": 9.81}
    t0 = time.perf_counter()
    eom = derive(n_link_pendulum_on_cart(n))
    t1 = time.perf_counter()
    spec = codegen.rhs_spec(eom, values=values)
    spec.cse()
    t2 = time.perf_counter()
    cache = tempfile.mkdtemp(prefix="mb-bench-cache-")
    f = codegen.compile(spec, cache_dir=cache)
    t3 = time.perf_counter()
    print(f"   ours: derive {t1 - t0:.2f} s + M, forcing, LDLᵀ and CSE {t2 - t1:.2f} s ({len(spec.temporaries)} "
          f"temporaries, {spec.count_ops()} operations) + compile {t3 - t2:.2f} s")
    try:
        from pydy.codegen.ode_function_generators import generate_ode_function
        from pydy.models import n_link_pendulum_on_cart as pydy_model
    except ImportError as exc:  # a test dependency: pip install -e '.[test]'
        print(f"   PyDy not importable ({exc}); install the test extras")
        rhs = None
    else:
        try:
            import Cython  # noqa: F401  PyDy's fastest generator needs it
            generator = "cython"
        except ImportError:
            generator = "lambdify"
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            system = pydy_model(n=n, cart_force=False, joint_torques=False)
            t1 = time.perf_counter()
            kane = system.eom_method
            consts = sorted(system.constants_symbols, key=str)
            rhs = generate_ode_function(kane.forcing_full, system.coordinates, system.speeds, consts,
                                        mass_matrix=kane.mass_matrix_full, generator=generator)
        t2 = time.perf_counter()
        import pydy

        print(f"   PyDy {pydy.__version__}: KanesMethod {t1 - t0:.2f} s + generate_ode_function "
              f"(generator={generator!r}) {t2 - t1:.2f} s")
    rng = np.random.default_rng(7)
    q, dq = rng.uniform(-1, 1, (2, n + 1))
    t_ours = _best(lambda: f(q, dq), 5000)
    Q, DQ = rng.uniform(-1, 1, (2, n_batch, n + 1))
    f(Q, DQ)
    t_batch = _best(lambda: f(Q, DQ), 1, repeat=7) / n_batch
    line = (f"   one call: ours {t_ours * 1e6:6.2f} µs (goal ≤ 5 µs: {'met' if t_ours <= 5e-6 else 'NOT met'}); "
            f"batch of {n_batch}: {t_batch * 1e6:6.3f} µs/state")
    if rhs is not None:
        # PyDy: absolute link angles from the x axis; ours: relative joint angles, links along y
        x = np.concatenate([[q[0]], np.pi / 2 + np.cumsum(q[1:]), [dq[0]], np.cumsum(dq[1:])])
        p = np.array([values[str(c)] for c in consts])
        want = rhs(x, 0.0, p)[n + 1:]
        qdd = f(q, dq)["qdd"]
        got = np.concatenate([[qdd[0]], np.cumsum(qdd[1:])])
        print(f"   agreement with PyDy: {np.abs(got - want).max() / np.abs(want).max():.1e} (relative)")
        t_pydy = _best(lambda: rhs(x, 0.0, p), 500)
        line += (f" | PyDy {t_pydy * 1e6:7.2f} µs → {t_pydy / t_ours:.1f}× PyDy measured, "
                 f"{PYDY_PUBLISHED_US * 1e-6 / t_ours:.1f}× PyDy's published {PYDY_PUBLISHED_US} µs")
    print(line)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m multibody.bench.codegen", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="pendulum n ≤ 6 and batches of 1 000")
    p.add_argument("--skip-talos", action="store_true", help="leave out the traced Talos ABA")
    p.add_argument("--skip-rhs", action="store_true", help="leave out the pendulum right-hand side and PyDy")
    p.add_argument("--only", choices=("starleth", "talos", "ops", "rhs"), help="run one part")
    p.add_argument("--rhs-n", type=int, default=None, help="links of the pendulum in part 5 (default 20; 10 with --quick)")
    p.add_argument("--wall", action="store_true",
                   help="wall-clock times, the core's batches on all its threads (default: CPU time, one thread)")
    args = p.parse_args(argv)
    n_batch = 1000 if args.quick else 10_000
    import multibody as mb

    threads = mb.get_num_threads()
    if args.wall:
        _TIMER[0] = time.perf_counter
        print(f"Times: wall clock, the core's batches on {threads} thread(s).")
    else:
        mb.set_num_threads(1)
        print("Times: CPU time of this process, one thread each (the core's batches too; its SIMD lanes "
              "stay): a loaded machine's waits are not counted. --wall for wall clock.")
    run = (lambda part: args.only in (None, part))  # noqa: E731
    if run("starleth"):
        bench_starleth(n_batch)
    if run("talos") and not args.skip_talos:
        bench_talos(n_batch)
    if run("ops"):
        bench_ops(6 if args.quick else 12)
    if run("rhs") and not args.skip_rhs:
        bench_rhs(args.rhs_n or (10 if args.quick else 20), n_batch)
    mb.set_num_threads(threads)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
