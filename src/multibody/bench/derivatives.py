"""Benchmark of the analytic derivatives against Pinocchio: ``python -m multibody.bench.derivatives``.

The robots of ``bench.urdf`` (example-robot-data: fixed-base UR5 and Panda; free-flyer solo12,
ANYmal and Talos), loaded by ``load_urdf`` and ``pinocchio.buildModelFromUrdf``.  In one run, for
∂RNEA (``mb.rnea_derivatives`` vs ``pin.computeRNEADerivatives``), ∂ABA (``mb.aba_derivatives``
vs ``pin.computeABADerivatives``) and M⁻¹ (``mb.minv`` vs ``pin.computeMinverse``):

* **latency**: one call on one state (ours: 1-D arrays; Pinocchio: its Python binding), timed over
  a loop through ``--calls`` states sliced beforehand that drops each result (the same loop for both),
  the two sides' loops alternating (``bench.timing.interleaved``: at least ``--repeat`` loops each and
  0.1 s of them), the best loop of each;
* **throughput** on ``--states`` states on one thread: ours is *one* batched call, Pinocchio a
  Python loop of calls (the same CPU budget).  Both are timed best-of-``--repeat`` after a warm-up
  call, as in a loop over batches: Pinocchio computes into its reused ``Data``, ours into the blocks
  the previous call's results freed (the core keeps them for the next results of their size), so
  neither side pays for fresh pages.

Ratios are Pinocchio ÷ ours (> 1: we are faster).  Timings are best-of-``--repeat`` process CPU
time (``--wall``: wall clock).  A short agreement check (tangent conventions mapped) runs before
timing.  The goals (issue 21) are for the ∂RNEA and ∂ABA rows; M⁻¹'s (issue 37) are printed on a
line of their own.

Options: ``--states N`` (default 10 000), ``--calls N`` (default 1 000), ``--repeat N`` (default 3),
``--robots-dir DIR``, ``--wall``, ``--algos`` (a comma list of ``rnea``, ``aba``, ``minv``; default
all three: ``--algos minv`` times M⁻¹ alone).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from .timing import best, interleaved
from .timing import calls as call_loop  # (run's `calls` is the loop length)
from .urdf import ROBOTS, _pin_state_map, robots_dir, single_call_loops


def _states(model, n, rng):
    from ..model.configuration import random_configuration
    Q = np.ascontiguousarray(random_configuration(model, rng, n))
    V, A, T = (rng.normal(size=(n, model.nv)) for _ in range(3))
    return Q, V, A, T


ALGOS = {"rnea": "∂rnea", "aba": "∂aba", "minv": "minv"}  # --algos names → the rows' names


def run(states=10_000, calls=1_000, repeat=3, rdir=None, out=print, clock=time.process_time, algos=tuple(ALGOS),
        robots=None):
    import pinocchio as pin

    import multibody as mb
    from multibody.core import _core
    from multibody.model.urdf import load_urdf

    rdir = robots_dir(rdir)
    share = os.path.dirname(os.path.dirname(rdir))
    rng = np.random.default_rng(0)
    threads = mb.get_num_threads()
    out(f"multibody vs Pinocchio {pin.__version__} derivatives: same URDFs (example-robot-data), {states} states "
        f"per batch on 1 thread, best of {repeat}, {'wall' if clock is time.perf_counter else 'CPU'} time")
    out(f"{'':15s}| {'latency per call (µs)':^22s} | {states} states, 1 thread (ms)")
    out(f"{'robot':7s} {'nv':>3s} {'algo':5s}| {'ours':>7s} {'pin':>7s} {'p/ours':>6s} | {'ours':>8s} "
        f"{'pin loop':>8s} {'p/ours':>6s}")
    rows = []
    try:
        mb.set_num_threads(1)
        for label, rel, floating in [r for r in ROBOTS if robots is None or r[0] in robots]:
            path = os.path.join(rdir, rel)
            model = load_urdf(path, floating=floating, package_dirs=[share], check_meshes=False)
            pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
            pd = pm.createData()
            q_map, v_map = _pin_state_map(model, pm)
            vp = v_map(np.arange(model.nv, dtype=float)).astype(int)  # Pinocchio's dof j is our vp[j]
            Q, V, A, T = _states(model, states, rng)
            Qp, Vp, Ap, Tp = (np.ascontiguousarray(x) for x in (q_map(Q), v_map(V), v_map(A), v_map(T)))
            # agreement on a few states, so the timings compare the same computation
            ix = np.ix_(vp, vp)
            for k in range(3):
                ours = mb.rnea_derivatives(model, Q[k], V[k], A[k])[0][ix]
                theirs = pin.computeRNEADerivatives(pm, pd, Qp[k], Vp[k], Ap[k])[0]
                assert np.allclose(ours, theirs, rtol=1e-8, atol=1e-8), label
                ours = mb.aba_derivatives(model, Q[k], V[k], T[k])[0][ix]
                theirs = pin.computeABADerivatives(pm, pd, Qp[k], Vp[k], Tp[k])[0]
                assert np.allclose(ours, theirs, rtol=1e-7, atol=1e-7), label
            n = min(calls, states)
            ours_rows = list(zip(Q[:n], V[:n], A[:n], T[:n]))  # 1-D rows, sliced before timing
            pin_rows = list(zip(Qp[:n], Vp[:n], Ap[:n], Tp[:n]))
            table = {  # (the single-call rows' kernel, batch ours, one pin call by index)
                "∂rnea": ("rnea_derivatives", lambda: mb.rnea_derivatives(model, Q, V, A),
                          lambda k: pin.computeRNEADerivatives(pm, pd, Qp[k], Vp[k], Ap[k])),
                "∂aba": ("aba_derivatives", lambda: mb.aba_derivatives(model, Q, V, T),
                         lambda k: pin.computeABADerivatives(pm, pd, Qp[k], Vp[k], Tp[k])),
                "minv": ("minv", lambda: mb.minv(model, Q), lambda k: pin.computeMinverse(pm, pd, Qp[k])),
            }
            for name, (kernel, batch, pk) in table.items():
                if name not in {ALGOS[a] for a in algos}:
                    continue
                batch()  # warm-up (interleaved warms the single-call loops)
                (t_one, _), (t_pone, _) = interleaved(
                    *single_call_loops(kernel, model, pm, pd, ours_rows, pin_rows), repeat, 0.1, clock, n)
                t_b1 = best(batch, repeat, clock)
                t_ploop = best(call_loop(pk, [(k,) for k in range(states)]), max(1, repeat - 1), clock)
                rows.append(dict(robot=label, nv=model.nv, algo=name, ours_us=t_one * 1e6, pin_us=t_pone * 1e6,
                                 ours_batch1_ms=t_b1 * 1e3, pin_loop_ms=t_ploop * 1e3))
                out(f"{label:7s} {model.nv:3d} {name:5s}| {t_one * 1e6:7.2f} {t_pone * 1e6:7.2f} "
                    f"{t_pone / t_one:6.2f} | {t_b1 * 1e3:8.1f} {t_ploop * 1e3:8.1f} {t_ploop / t_b1:6.2f}")
            _core.release_output_memory()  # the next robot's outputs have other sizes
    finally:
        mb.set_num_threads(threads)
    goal = [r for r in rows if r["algo"] != "minv"]
    single = [r["pin_us"] / r["ours_us"] for r in goal]
    if goal:
        out(f"Goals on the ∂rnea and ∂aba rows: single call ≥ 1.5× Pinocchio on every row: {sum(s >= 1.5 for s in single)}"
            f"/{len(goal)} rows (lowest {min(single):.2f}×); median ≥ 2×: {np.median(single):.2f}×; "
            f"{states} states on 1 thread ≥ 5× the Pinocchio loop: "
            f"{sum(r['pin_loop_ms'] / r['ours_batch1_ms'] >= 5 for r in goal)}/{len(goal)} rows "
            f"(lowest {min(r['pin_loop_ms'] / r['ours_batch1_ms'] for r in goal):.2f}×)")
    mrows = [r for r in rows if r["algo"] == "minv"]
    if mrows:
        out(f"Goals on the minv rows (issue 37): single call ≥ 1.5× Pinocchio: "
            f"{sum(r['pin_us'] / r['ours_us'] >= 1.5 for r in mrows)}/{len(mrows)} rows "
            f"(lowest {min(r['pin_us'] / r['ours_us'] for r in mrows):.2f}×); {states} states on 1 thread ≥ 5× the "
            f"Pinocchio loop: {sum(r['pin_loop_ms'] / r['ours_batch1_ms'] >= 5 for r in mrows)}/{len(mrows)} rows "
            f"(lowest {min(r['pin_loop_ms'] / r['ours_batch1_ms'] for r in mrows):.2f}×)")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m multibody.bench.derivatives", description=__doc__.split("\n\n")[0])
    ap.add_argument("--states", type=int, default=10_000)
    ap.add_argument("--calls", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--robots-dir", default=None)
    ap.add_argument("--wall", action="store_true", help="wall-clock instead of CPU time")
    ap.add_argument("--algos", default=",".join(ALGOS), help="comma list of rnea, aba, minv (default: all)")
    a = ap.parse_args(argv)
    algos = tuple(x.strip() for x in a.algos.split(",") if x.strip())
    if not algos or any(x not in ALGOS for x in algos):
        ap.error(f"--algos must be a comma list of {', '.join(ALGOS)}, got {a.algos!r}")
    if a.states < 1 or a.calls < 1 or a.repeat < 1:
        ap.error("--states, --calls and --repeat must be positive")
    try:
        a.robots_dir = robots_dir(a.robots_dir)   # a missing folder: one line, not a traceback
    except FileNotFoundError as e:
        raise SystemExit(f"bench.derivatives: {e}") from None
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        raise SystemExit("bench.derivatives: Pinocchio is not installed (pip install pin)") from None
    t = time.perf_counter()
    run(a.states, a.calls, a.repeat, a.robots_dir, clock=time.perf_counter if a.wall else time.process_time,
        algos=algos)
    print(f"total {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
