"""``multibody bench``: per-call latency and batch throughput of rnea/crba/aba against Pinocchio.

One run measures, on the same machine and in the same process:

* **latency** of one call with one state (1-D arrays), ours vs Pinocchio's Python binding;
* **throughput** on a batch of states: ours is one call with ``(N, n)`` arrays (the loop runs in
  compiled code), Pinocchio's is a Python loop over the states that stores each result;
* a **breakdown** of our single-call latency: *boundary* = the public call minus a direct call of
  the C entry point (``multibody.core._core``) with the same arrays (the Python face: one function
  call and an attribute lookup); *entry* = that direct call minus the kernel's own time per state
  (argument checks, output allocation); *kernel* = time per state in a 256-state batch on one
  thread (entry cost amortised, data in cache), one state at a time as a single call runs it
  (batches otherwise run several states per vector instruction: SIMD over states, csrc/common/lanes.h).

Timings are timeit-style best-of-N (the minimum is the least disturbed measurement) of the
process's CPU time by default (``time.process_time``: robust when other jobs share the machine;
``--wall`` uses ``time.perf_counter``).  Ratios are Pinocchio time ÷ our time, so > 1 means we are
faster.  Run ``python -m multibody bench --help``.
"""
from __future__ import annotations

import argparse
import math
import platform
import sys
import time
import timeit

import numpy as np

import multibody as mb
from multibody.core import _core
from multibody.bench.pin_twin import pinocchio_twin

ALGORITHMS = ("rnea", "crba", "aba")


# --------------------------------------------------------------------------- models
def bench_models():
    """The two benchmark models: a 6-dof chain and a 30-body branched tree (spatial_v2 autoTree)."""
    return [("6-dof chain  auto_tree(6, skew=π/4)", mb.models.auto_tree(6, skew=math.pi / 4)),
            ("30-body tree auto_tree(30, bf=2, skew=π/4, taper=0.95)",
             mb.models.auto_tree(30, bf=2, skew=math.pi / 4, taper=0.95))]


# --------------------------------------------------------------------------- timing
CLOCK = time.process_time


def best_per_call(fn, repeat=5, target=0.05):
    """Best-of-``repeat`` seconds per call of ``fn()``, with the loop count sized to ~``target`` s."""
    number = 1
    while True:
        t = timeit.timeit(fn, number=number, timer=CLOCK)
        if t >= target / 4 or number >= 1 << 20:
            break
        number *= 4
    number = max(1, int(number * target / max(t, 1e-9)))
    return min(timeit.repeat(fn, number=number, repeat=repeat, timer=CLOCK)) / number


def best_once(fn, repeat=3, clock=None):
    """Best-of-``repeat`` seconds of one ``fn()`` (for the batch runs)."""
    return min(timeit.repeat(fn, number=1, repeat=repeat, timer=clock or CLOCK))


def serial(fn):
    """``fn`` run with batches limited to one thread (the per-core comparison)."""
    def run():
        n = mb.get_num_threads()
        mb.set_num_threads(1)
        try:
            return fn()
        finally:
            mb.set_num_threads(n)
    return run


def _ours(model, name, q, qd, qdd):
    if name == "rnea":
        return lambda: mb.rnea(model, q, qd, qdd)
    if name == "crba":
        return lambda: mb.crba(model, q)
    return lambda: mb.aba(model, q, qd, qdd)


def _kernel_call(model, name, q, qd, qdd):
    """The C entry point called directly with the same arrays (no Python face)."""
    c = model._c
    if name == "rnea":
        return lambda: _core.rnea(c, q, qd, qdd, None)
    if name == "crba":
        return lambda: _core.crba(c, q)
    return lambda: _core.aba(c, q, qd, qdd, None)


def _pin_single(pin, pm, data, name, q, v, a):
    if name == "rnea":
        return lambda: pin.rnea(pm, data, q, v, a)
    if name == "crba":
        return lambda: pin.crba(pm, data, q)
    return lambda: pin.aba(pm, data, q, v, a)


def _pin_loop(pin, pm, data, name, Q, V, A, out):
    """A plain Python loop over states that keeps every result (what a user would write)."""
    if name == "rnea":
        def run():
            for k in range(Q.shape[0]):
                out[k] = pin.rnea(pm, data, Q[k], V[k], A[k])
    elif name == "crba":
        def run():
            for k in range(Q.shape[0]):
                out[k] = pin.crba(pm, data, Q[k])  # upper triangle filled (compared as such)
    else:
        def run():
            for k in range(Q.shape[0]):
                out[k] = pin.aba(pm, data, Q[k], V[k], A[k])
    return run


def _fmt_t(s):
    if s < 1e-3:
        return f"{s * 1e6:8.2f} µs"
    if s < 1:
        return f"{s * 1e3:8.2f} ms"
    return f"{s:8.2f} s "


# --------------------------------------------------------------------------- main
def run(batch=10_000, repeat=5, target=0.05, seed=0, wall=False, out=sys.stdout):
    """Run the benchmark; returns a list of result dicts (also printed)."""
    global CLOCK
    CLOCK = time.perf_counter if wall else time.process_time
    try:
        import pinocchio as pin
        pin_version = pin.__version__
    except ImportError:
        pin, pin_version = None, None
    p = lambda *a: print(*a, file=out, flush=True)  # noqa: E731
    p(f"multibody bench — Python {platform.python_version()}, NumPy {np.__version__}, C core, "
      f"Pinocchio {pin_version or 'not installed'}; {platform.machine()} {platform.processor() or ''}".rstrip())
    threads = mb.get_num_threads()
    p(f"latency: {'wall' if wall else 'CPU'} time, best of {repeat} × (calls filling ~{target * 1e3:.0f} ms), "
      f"one state as 1-D arrays.  batch: {batch} states, best of 3 — ours in one call (1 thread: "
      f"{'wall' if wall else 'CPU'} time; {threads} threads: wall time; {_core.LANES} states per vector "
      f"instruction), Pinocchio in a Python loop.")
    p("ratio = Pinocchio time / our time (> 1: we are faster)")
    rng = np.random.default_rng(seed)
    results = []
    for label, model in bench_models():
        n = model.nv
        Q = rng.uniform(-np.pi, np.pi, (batch, n))
        QD = rng.normal(size=(batch, n))
        QDD = rng.normal(size=(batch, n))
        q, qd, qdd = Q[0].copy(), QD[0].copy(), QDD[0].copy()
        t0 = time.perf_counter()
        for name in ALGORITHMS:  # warm caches before timing
            _ours(model, name, q, qd, qdd)()
            _ours(model, name, Q[:2], QD[:2], QDD[:2])()
            _ours(model, name, Q[:512], QD[:512], QDD[:512])()
        warm = time.perf_counter() - t0
        twin = pinocchio_twin(model) if pin is not None else None
        p(f"\n{label}: nb={model.nb}, nv={n}  (first calls {warm * 1e3:.1f} ms)")
        p(f"  {'':5} │ {'latency: ours':>13} {'Pinocchio':>11} {'ratio':>6} │ {'batch: ours 1 thr':>17} "
          f"{'Pin. loop':>11} {'ratio':>6} │ {f'ours {threads} thr':>11} {'Pin. loop':>11} {'ratio':>6} │ "
          f"{'our latency = boundary + entry + kernel':>42} │ {'max |Δ|':>7}")
        for name in ALGORITHMS:
            r = dict(model=label, algorithm=name, nv=n, threads=threads)
            ours_fn = _ours(model, name, Q, QD, QDD)
            r["ours_single"] = best_per_call(_ours(model, name, q, qd, qdd), repeat, target)
            m = min(batch, 256)  # kernel time per state from a cache-resident batch (entry cost amortised),
            lanes = _core.use_lanes("none")  # one state at a time, as a single call runs it
            try:
                r["kernel"] = best_per_call(serial(_ours(model, name, Q[:m], QD[:m], QDD[:m])), repeat, target) / m
            finally:
                _core.use_lanes(lanes)
            direct = _kernel_call(model, name, q, qd, qdd)
            if direct is not None:
                r["direct"] = best_per_call(direct, repeat, target)
                r["boundary"] = max(r["ours_single"] - r["direct"], 0.0)
                r["entry"] = max(r["direct"] - r["kernel"], 0.0)
            r["ours_batch_1"] = best_once(serial(ours_fn))
            r["ours_batch_par"] = best_once(ours_fn, clock=time.perf_counter)
            cells = [f"  {name:5} │ {_fmt_t(r['ours_single']):>13}"]
            if twin is not None:
                pm, perm = twin
                data = pm.createData()
                Qp, Vp, Ap = (np.ascontiguousarray(X[:, perm]) for X in (Q, QD, QDD))
                res = np.empty((batch, n, n) if name == "crba" else (batch, n))
                loop = _pin_loop(pin, pm, data, name, Qp, Vp, Ap, res)
                r["pin_single"] = best_per_call(_pin_single(pin, pm, data, name, Qp[0], Vp[0], Ap[0]),
                                                repeat, target)
                r["pin_batch"] = best_once(loop)
                r["pin_batch_wall"] = best_once(loop, clock=time.perf_counter)
                ours = np.asarray(ours_fn())
                if name == "crba":  # Pinocchio fills the upper triangle
                    ours, res = np.triu(ours[:, perm][:, :, perm]), np.triu(res)
                else:
                    ours = ours[:, perm]
                r["max_diff"] = float(np.max(np.abs(ours - res)))
                r["latency_ratio"] = r["pin_single"] / r["ours_single"]
                r["batch_ratio"] = r["pin_batch"] / r["ours_batch_1"]
                r["batch_ratio_par"] = r["pin_batch_wall"] / r["ours_batch_par"]
                cells += [f"{_fmt_t(r['pin_single']):>11} {r['latency_ratio']:5.2f}× │ "
                          f"{_fmt_t(r['ours_batch_1']):>17} {_fmt_t(r['pin_batch']):>11} {r['batch_ratio']:5.1f}× │ "
                          f"{_fmt_t(r['ours_batch_par']):>11} {_fmt_t(r['pin_batch_wall']):>11} "
                          f"{r['batch_ratio_par']:5.1f}× │"]
            else:
                cells += [f"{'—':>11} {'—':>6} │ {_fmt_t(r['ours_batch_1']):>17} {'—':>11} {'—':>6} │ "
                          f"{_fmt_t(r['ours_batch_par']):>11} {'—':>11} {'—':>6} │"]
            if "direct" in r:
                cells.append(f"{_fmt_t(r['boundary']).strip():>12} + {_fmt_t(r['entry']).strip():>11} + "
                             f"{_fmt_t(r['kernel']).strip():>11} │")
            else:
                cells.append(f"{'n/a':>12} + {'n/a':>11} + {_fmt_t(r['kernel']).strip():>11} │")
            if "max_diff" in r:
                cells.append(f"{r['max_diff']:7.0e}")
            p(" ".join(cells))
            results.append(r)
    if pin is not None:
        lat = [r["latency_ratio"] for r in results]
        bat = [r["batch_ratio"] for r in results]
        par = [r["batch_ratio_par"] for r in results]
        p(f"\nGoals: single call ≥ 2× Pinocchio's (median; every row ≥ 1.5×): median {np.median(lat):.2f}×, "
          f"{sum(x >= 1.5 for x in lat)}/{len(lat)} rows ≥ 1.5× (ratios {min(lat):.2f}…{max(lat):.2f}).  "
          f"Batch ≥ 2.5× a Python loop over Pinocchio on 1 thread: {sum(x >= 2.5 for x in bat)}/{len(bat)} "
          f"(ratios {min(bat):.1f}…{max(bat):.1f}); {threads} threads: ratios {min(par):.1f}…{max(par):.1f}.")
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="multibody bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=10_000, help="states in the batch run (default 10000)")
    parser.add_argument("--repeat", type=int, default=5, help="best of this many latency runs (default 5)")
    parser.add_argument("--target", type=float, default=0.05,
                        help="seconds of calls per latency run (default 0.05)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--wall", action="store_true", help="time with the wall clock instead of CPU time")
    a = parser.parse_args(argv)
    if a.batch < 1 or a.repeat < 1 or not a.target > 0:
        parser.error("--batch and --repeat must be ≥ 1 and --target > 0")
    run(batch=a.batch, repeat=a.repeat, target=a.target, seed=a.seed, wall=a.wall)
    return 0


if __name__ == "__main__":
    sys.exit(main())
