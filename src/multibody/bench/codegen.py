"""Benchmark: code generation against Pinocchio, the numeric core and SymPy, from one run.

    python -m multibody.bench.codegen              # everything (n-link pendulum n = 2…12)
    python -m multibody.bench.codegen --quick      # pendulum n = 2…6, smaller batches

1. StarlETH (18 DoF): time to generate (derive + CSE + C source) and compile M, b, g into a fresh
   cache folder (goal ≤ 10 s); the same code loaded again from the cache.
2. One evaluation of M, b, g through the compiled module — one call, and per state in a batch of
   10 000 — against the numeric core (crba + rnea) and Pinocchio (crba + nonLinearEffects on a
   twin with the same parameters; StarlETH's massless feet on fixed joints are left out of the
   twin: they change nothing). Goals: ≥ 2× faster than Pinocchio per evaluation; the batch ≥ 10×
   faster than a Python loop over Pinocchio.
3. Traced ABA of Talos (example-robot-data, free-floating) against Pinocchio's ABA.
4. Operation counts after CSE for the n-link pendulum on a cart against SymPy's ``KanesMethod``
   output (mass matrix and forcing; raw and after ``sympy.cse``), counted by one counter
   (:func:`multibody.codegen.count_ops`). Goal: ours ≤ SymPy's.

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


def _best(fn, number, repeat=5):
    """Best time per call over ``repeat`` runs of ``number`` calls (seconds)."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


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
    t_batch = _best(lambda: f(Q, QD), 1, repeat=3) / n_batch
    Z = np.zeros((n_batch, model.nv))
    mb.crba(model, Q[:10]), mb.rnea(model, Q[:10], QD[:10], Z[:10])
    t_core_b = _best(lambda: (mb.crba(model, Q), mb.rnea(model, Q, QD, Z), mb.rnea(model, Q, Z, Z)), 1,
                     repeat=3) / n_batch
    Qp, QDp = Q[:, perm].copy(), QD[:, perm].copy()

    def pin_loop():
        for k in range(n_batch):
            pin.crba(pm, pd, Qp[k])
            pin.nonLinearEffects(pm, pd, Qp[k], QDp[k])

    t_pin_loop = _best(pin_loop, 1, repeat=3) / n_batch
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
        path = os.path.join(robots_dir(), "talos_data", "robots", "talos_reduced.urdf")
    except FileNotFoundError as e:
        print(f"   skipped: {e}")
        return
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
    t_core = _best(lambda: mb.aba(model, q, qd, tau), 500)
    print(f"   one call: traced ABA {t_ours * 1e6:6.2f} µs | Pinocchio aba {t_pin * 1e6:6.2f} µs | core aba "
          f"{t_core * 1e6:6.2f} µs  → {t_pin / t_ours:.2f}× Pinocchio")
    Q = np.tile(q, (n_batch, 1))
    QD, TAU = rng.uniform(-1, 1, (2, n_batch, model.nv))
    t_b = _best(lambda: f(Q, QD, TAU), 1, repeat=3) / n_batch
    Vp, Tp = QD[:, :pm.nv].copy(), TAU[:, :pm.nv].copy()

    def pin_loop():
        for k in range(n_batch):
            pin.aba(pm, pd, qp, Vp[k], Tp[k])

    t_pl = _best(pin_loop, 1, repeat=3) / n_batch
    print(f"   batch of {n_batch}: traced ABA {t_b * 1e6:6.2f} µs/state | Python loop over Pinocchio "
          f"{t_pl * 1e6:6.2f} µs/state → {t_pl / t_b:.1f}×")


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


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m multibody.bench.codegen", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="pendulum n ≤ 6 and batches of 1 000")
    p.add_argument("--skip-talos", action="store_true", help="leave out the traced Talos ABA")
    args = p.parse_args(argv)
    n_batch = 1000 if args.quick else 10_000
    bench_starleth(n_batch)
    if not args.skip_talos:
        bench_talos(n_batch)
    bench_ops(6 if args.quick else 12)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
