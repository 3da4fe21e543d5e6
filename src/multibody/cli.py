"""Command line: ``multibody demo`` (the main job on a built-in model) and ``multibody bench``."""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def demo(model_name: str = "double_pendulum") -> int:
    """Describe a mechanism once, then compute its dynamics every way we can and check they agree."""
    import multibody as mb

    constructors = {"double_pendulum": mb.models.double_pendulum, "planar3": lambda: mb.models.planar(3),
                    "auto_tree": lambda: mb.models.auto_tree(15, bf=2, skew=np.pi / 4, taper=0.95),
                    "vee": mb.models.vee, "scissor": mb.models.scissor}
    if model_name not in constructors:
        print(f"unknown model {model_name!r}; choose from {sorted(constructors)}", file=sys.stderr)
        return 2
    model = constructors[model_name]()
    np.set_printoptions(precision=6, suppress=True, linewidth=110)
    print(f"{model}")
    for i in range(model.nb):
        parent = model.body_names[model.parent[i]] if model.parent[i] >= 0 else "(base)"
        print(f"  {model.body_names[i]:<10} <- {parent:<10} joint {model.joint_names[i]} "
              f"({mb.JointType(model.jtype[i]).name.lower()}, axis {model.jaxis[i]}), m = {model.mass[i]:g} kg")

    q = model.neutral()
    if model_name == "double_pendulum":
        q = np.array([np.pi / 4, -np.pi / 4])  # the report's initial state
    rng = np.random.default_rng(1)
    qd = rng.normal(size=model.nv)
    tau = np.zeros(model.nv)

    H, C = mb.hand_c(model, q, qd)
    g = mb.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))
    print("\nJoint-space equation of motion  H q̈ + C = τ  at q =", q)
    print("H (CRBA) =\n", H)
    print("C (RNEA, q̈ = 0) =", C, "   of which gravity g =", g)
    if model_name == "double_pendulum":
        th1, th2 = q
        D = np.array([[1001 / 600 + np.cos(th2), 0.5 * np.cos(th2) + 401 / 1200],
                      [0.5 * np.cos(th2) + 401 / 1200, 401 / 1200]])
        gq = np.array([2943 / 200 * np.cos(th1) + 981 / 200 * np.cos(th1 + th2), 981 / 200 * np.cos(th1 + th2)])
        print(f"  vs the report's DP_EOM: |H − D_q| = {np.abs(H - D).max():.1e}, |g − g_q| = {np.abs(g - gq).max():.1e}")

    qdd_ab = mb.aba(model, q, qd, tau)
    qdd_crb = mb.fd_crb(model, q, qd, tau)
    print("\nForward dynamics q̈ (ABA)   =", qdd_ab)
    print(f"  FDcrb agrees to {np.abs(qdd_ab - qdd_crb).max():.1e}; "
          f"RNEA(q, q̇, q̈) returns τ to {np.abs(mb.rnea(model, q, qd, qdd_ab) - tau).max():.1e}")
    e = mb.energy(model, q, qd)
    print(f"Energy: KE = {float(e.KE):.6f} J, PE = {float(e.PE):.6f} J, mass = {float(e.mass):g} kg, "
          f"CoM = {e.cm}")

    n = 10_000
    Q = np.tile(q, (n, 1)) + 0.1 * rng.normal(size=(n, model.nq))
    if model.nq != model.nv:
        Q = mb.integrate(model, np.tile(q, (n, 1)), 0.1 * rng.normal(size=(n, model.nv)))
    QD = rng.normal(size=(n, model.nv))
    mb.aba(model, Q[:300], QD[:300], np.zeros((300, model.nv)))  # first call compiles (or loads) the kernel
    t0 = time.perf_counter()
    mb.aba(model, Q, QD, np.zeros((n, model.nv)))
    dt = time.perf_counter() - t0
    print(f"\nBatch: ABA on {n} states in one call: {dt * 1e3:.1f} ms ({dt / n * 1e6:.2f} µs/state, compiled loop)")

    try:
        from multibody.symbolic import derive
    except ImportError:
        return 0
    if model.nb <= 3 and all(t in (1, 2, 3) for t in model.jtype):
        t0 = time.perf_counter()
        eom = derive(model)
        print(f"\nSymbolic equations of motion ({time.perf_counter() - t0:.2f} s):")
        print("M(q) =", eom.M)
        Mq = np.array(eom.M.subs(dict(zip(eom.q, q))).evalf(), dtype=float)
        print(f"  symbolic M agrees with CRBA to {np.abs(Mq - H).max():.1e}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="multibody", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="run the main job on a built-in model")
    p_demo.add_argument("--model", default="double_pendulum")
    sub.add_parser("bench", help="latency and batch throughput against Pinocchio")
    args, rest = parser.parse_known_args(argv)
    if args.command == "demo":
        return demo(args.model)
    if args.command == "bench":
        from multibody.bench import main as bench_main
        return bench_main(rest) or 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
