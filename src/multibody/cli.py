"""multibody: describe a mechanism once, then derive, simulate, plot and animate it.

Commands (``multibody COMMAND --help`` for each):

  info MODEL                       the tree: bodies, joints, masses, geometry
  derive MODEL [--method] [--latex] symbolic equations of motion M q̈ + b + g = Sᵀτ
  simulate MODEL --out traj.npz    integrate the motion from an initial state
  plot traj.npz --out DIR          states, phase portraits, energy (and paths with --model)
  animate MODEL [traj.npz] --out anim.html   a self-contained page that plays the motion (.mp4/.gif: video)
  codegen …                        generated code for the equations of motion
  bench                            latency and batch throughput against Pinocchio
  demo                             the main job on the report's double pendulum and a proNEu arm

MODEL is a built-in name (``multibody info --list``) or a URDF file; built-ins with a size take it
after a colon (``planar:3``, ``auto_tree:15``).  Errors print one line and exit non-zero
(``--debug`` shows the traceback); outputs are written whole or not at all.
"""
from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
import time

import numpy as np

from .errors import CLIError

EXIT_ERROR, EXIT_USAGE = 1, 2


# ---- models by name ------------------------------------------------------------------------------

def _builtin_models():
    """name → (constructor of a Model or Mechanism, one line of description)."""
    import multibody as mb
    M = mb.models
    return {
        "double_pendulum": (lambda: M.double_pendulum(), "the OpenDE report's double pendulum (default)"),
        "single_pendulum": (lambda: M.single_pendulum(), "the OpenDE report's (colliding) single pendulum"),
        "planar": (lambda n=2: M.planar(n), "spatial_v2 planar(n): n unit rods (planar:N, default 2)"),
        "auto_tree": (lambda n=7: M.auto_tree(n, bf=2, skew=np.pi / 4, taper=0.95),
                      "spatial_v2 autoTree(n, 2, π/4, 0.95) (auto_tree:N, default 7)"),
        "vee": (lambda: M.vee(), "spatial_v2 vee: two rods at 45°, free-floating"),
        "singlebody": (lambda: M.singlebody(), "spatial_v2 singlebody: a free-floating box"),
        "scissor": (lambda: M.scissor(), "spatial_v2 scissor: two strips joined at their middles"),
        "gfx_example": (lambda: M.gfx_example(), "spatial_v2 gfxExample: every drawing instruction"),
        "gfx_example_tracking": (lambda: M.gfx_example(tracking=True), "gfxExample with the tracking camera"),
        "ra3link": (lambda: M.ra3link(), "proNEu RA3Link arm (manual §3.1)"),
        "ra3link_prismatic": (lambda: M.ra3link_prismatic(), "proNEu RA3LinkPrismatic arm (manual §3.2)"),
        "starleth": (lambda: M.starleth(), "proNEu StarlETH quadruped, Euler-angle base (manual §3.3)"),
        "biped_upper_body": (lambda: M.biped_upper_body(), "TMT paper's passive biped with upper body (tree part)"),
        "flapping_flyer": (lambda: M.flapping_flyer(), "TMT paper's flapping flyer (tree part)"),
        "clemens_joint": (lambda: M.clemens_joint(), "TMT paper's Clemens joint, 3-RSR (tree part)"),
    }


def load_source(spec: str):
    """A Model or Mechanism from a built-in name (optionally ``name:N``) or a URDF path."""
    import multibody as mb
    if spec.lower().endswith((".urdf", ".xml")) or os.path.sep in spec or os.path.exists(spec):
        if not os.path.isfile(spec):
            raise CLIError(f"model file {spec!r} does not exist", EXIT_USAGE)
        try:
            return mb.load_urdf(spec)
        except mb.URDFError as e:
            raise CLIError(f"cannot load {spec!r}: {e}") from None
    name, _, arg = spec.partition(":")
    models = _builtin_models()
    if name not in models:
        close = difflib.get_close_matches(name, list(models), n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise CLIError(f"unknown model {name!r}{hint} (choose from {', '.join(sorted(models))}, "
                       f"or give a URDF file)", EXIT_USAGE)
    make = models[name][0]
    if arg:
        try:
            n = int(arg)
        except ValueError:
            raise CLIError(f"model {spec!r}: the size after ':' must be an integer", EXIT_USAGE) from None
        try:
            return make(n)
        except TypeError:
            raise CLIError(f"model {name!r} takes no size", EXIT_USAGE) from None
        except ValueError as e:
            raise CLIError(f"model {spec!r}: {e}", EXIT_USAGE) from None
    return make()


def load_model(spec: str):
    """The tree Model of a built-in name or URDF path (a Mechanism's tree part)."""
    source = load_source(spec)
    return getattr(source, "model", source)


def _floats(text, n, what):
    try:
        v = np.array([float(x) for x in text.replace(",", " ").split()], dtype=float)
    except ValueError:
        raise CLIError(f"{what}: expected {n} numbers separated by commas, got {text!r}", EXIT_USAGE) from None
    if v.shape != (n,) or not np.all(np.isfinite(v)):
        raise CLIError(f"{what}: expected {n} finite numbers, got {len(v)}: {text!r}", EXIT_USAGE)
    return v


def _initial_state(model, q0, qd0):
    """--q0/--qd0, else the seed's initial state for a built-in model, else the neutral configuration."""
    import multibody as mb
    info = mb.models.seed_info(model)
    if q0 is not None:
        q = _floats(q0, model.nq, "--q0")
    elif info is not None and info.q0 is not None and len(info.q0) == model.nq:
        q = np.array(info.q0, dtype=float)
    else:
        q = model.neutral()
    if qd0 is not None:
        qd = _floats(qd0, model.nv, "--qd0")
    elif info is not None and info.dq0 is not None and len(info.dq0) == model.nv:
        qd = np.array(info.dq0, dtype=float)
    else:
        qd = np.zeros(model.nv)
    return q, qd


def _load_trajectory(path, model=None):
    """A Trajectory from a .npz file; with ``model``, one computed for another model is refused."""
    from multibody.simulation import Trajectory
    if not os.path.isfile(path):
        raise CLIError(f"trajectory file {path!r} does not exist")
    try:
        traj = Trajectory.load(path)
    except ValueError as e:
        raise CLIError(f"cannot read trajectory {path!r}: {str(e)[:200]}") from None
    except Exception as e:  # numpy/zipfile raise many types for damaged files
        raise CLIError(f"cannot read trajectory {path!r}: {type(e).__name__}: {str(e)[:160]}") from None
    if model is not None:
        from multibody.simulation import model_fingerprint
        if traj.model_fingerprint and traj.model_fingerprint != model_fingerprint(model):
            raise CLIError(f"trajectory {path!r} does not fit model {model.name!r}: it was computed for "
                           f"{traj.model_name!r} (q has {np.asarray(traj.q).shape[1]} columns, the model nq = "
                           f"{model.nq})")
        if np.asarray(traj.q).shape[1] != model.nq:
            raise CLIError(f"trajectory {path!r} does not fit model {model.name!r}: q has "
                           f"{np.asarray(traj.q).shape[1]} columns, the model nq = {model.nq}")
    return traj


def _model_of(traj):
    """The built-in model a trajectory was computed for, when its name and fingerprint say so."""
    from multibody.simulation import model_fingerprint
    name = traj.model_name
    if name in _builtin_models():
        model = load_model(name)
        if model_fingerprint(model) == traj.model_fingerprint:
            return model
    return None


def _out_dir(path):
    path = os.path.abspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise CLIError(f"--out: {path!r} exists and is not a folder")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise CLIError(f"--out: cannot create folder {path!r} ({e.strerror})") from None
    if not os.access(path, os.W_OK):
        raise CLIError(f"--out: folder {path!r} is not writable")
    return path


# ---- commands --------------------------------------------------------------------------------------

def cmd_info(args):
    if args.list:
        for name, (_, doc) in sorted(_builtin_models().items()):
            print(f"  {name:<22} {doc}")
        return 0
    if not args.model:
        raise CLIError("info: give a MODEL (or --list)", EXIT_USAGE)
    import multibody as mb
    model = load_model(args.model)
    print(f"{model.name}: {model.nb} bodies, nq = {model.nq}, nv = {model.nv}, total mass "
          f"{float(model.mass.sum()):g} kg, gravity {model.gravity.tolist()}")
    print(f"  {'body':<18} {'parent':<18} {'joint':<18} {'type':<10} {'axis':<18} mass [kg]")
    for i in range(model.nb):
        parent = model.body_names[model.parent[i]] if model.parent[i] >= 0 else "(base)"
        axis = np.array2string(model.jaxis[i], precision=3, suppress_small=True)
        print(f"  {model.body_names[i]:<18.18} {parent:<18.18} {model.joint_names[i]:<18.18} "
              f"{mb.JointType(model.jtype[i]).name.lower():<10} {axis:<18} {model.mass[i]:g}")
    kinds = {}
    for g in model.geometries:
        kinds[g.kind] = kinds.get(g.kind, 0) + 1
    print("  geometry: " + (", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or
                            "none (viewers draw the default appearance)"))
    if model.camera is not None:
        print(f"  camera: {model.camera}")
    return 0


def _symbolic_source(spec):
    """What ``derive`` reads for a model name: a built-in seed model with its parameters as symbols
    (the seed's names), a Mechanism as it is, anything else numeric."""
    import multibody as mb
    name = spec.partition(":")[0]
    if name in ("ra3link", "ra3link_prismatic", "starleth", "double_pendulum", "single_pendulum"):
        return getattr(mb.models, name)(symbolic=True)
    return load_source(spec)


def _derive_eom(spec, method, say):
    from multibody.symbolic import derive
    source = _symbolic_source(spec)
    if method is None:
        method = "tmt" if hasattr(source, "model") else "rnea"   # a Mechanism needs TMT
    try:
        return derive(source, method, progress=say), getattr(source, "name", spec)
    except ValueError as e:
        raise CLIError(f"derive: {e}") from None


def cmd_derive(args):
    from rich.console import Console
    console = Console(stderr=True)
    with console.status(f"deriving the equations of motion of {args.model} …") as status:
        eom, name = _derive_eom(args.model, args.method, lambda msg: status.update(f"derive: {msg}"))
    if args.latex:
        print(eom.latex())
    else:
        print(f"# {name}: M(q) q̈ + b(q, q̇) + g(q) = Sᵀ τ   (method {eom.extra.get('method', args.method)})")
        print(eom)
    return 0


def cmd_simulate(args):
    import multibody as mb
    model = load_model(args.model)
    q0, qd0 = _initial_state(model, args.q0, args.qd0)
    if not (args.t_final > 0 and args.dt > 0):
        raise CLIError("--t-final and --dt must be positive", EXIT_USAGE)
    out = os.path.abspath(args.out)
    from ._io import check_writable
    try:
        check_writable(out)
    except ValueError as e:
        raise CLIError(str(e)) from None
    t0 = time.perf_counter()
    try:
        traj = mb.simulate(model, q0, qd0, args.t_final, dt=args.dt, integrator=args.integrator,
                           progress=not args.quiet)
    except ValueError as e:
        raise CLIError(f"simulate: {e}") from None
    wall = time.perf_counter() - t0
    if getattr(traj, "status", "finished") == "non_finite":
        print(f"warning: {traj.message}", file=sys.stderr)
    traj.save(out)
    E = np.asarray(traj.total_energy)
    print(f"simulated {model.name} for {args.t_final:g} s (dt = {args.dt:g}, {args.integrator}) in {wall:.2f} s: "
          f"{len(traj.t)} samples → {out}")
    print(f"energy drift max |E(t) − E(0)| = {np.abs(E - E[0]).max():.3e} J (E(0) = {E[0]:.6g} J)")
    return 0


def _write_plots(traj, model, folder, prefix=""):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .view import plot_energy, plot_paths, plot_phase, plot_states
    from .view._io import save_figure
    written = []
    jobs = [("states", lambda: plot_states(traj, model)), ("energy", lambda: plot_energy(traj, model))]
    if traj.qd is not None and np.asarray(traj.q).shape[1] == np.asarray(traj.qd).shape[1]:
        jobs.insert(1, ("phase", lambda: plot_phase(traj, model)))
    if model is not None:
        jobs.append(("paths", lambda: plot_paths(traj, model)))
    for name, make in jobs:
        fig = make()
        written.append(save_figure(fig, os.path.join(folder, f"{prefix}{name}.png"), dpi=110))
        plt.close(fig)
    return written


def cmd_plot(args):
    model = load_model(args.model) if args.model else None
    traj = _load_trajectory(args.trajectory, model)
    if model is None:
        model = _model_of(traj)
    folder = _out_dir(args.out)
    try:
        for p in _write_plots(traj, model, folder):
            print(p)
    except ValueError as e:
        raise CLIError(f"plot: {e}") from None
    return 0


def cmd_animate(args):
    from .view import export_video, showmotion
    model = load_model(args.model)
    traj = _load_trajectory(args.trajectory, model) if args.trajectory else None
    try:
        if args.out.lower().endswith((".mp4", ".gif")):
            path = export_video(model, traj, out=args.out, fps=args.fps, title=args.title, progress=not args.quiet)
        else:
            path = showmotion(model, traj, out=args.out, title=args.title, author=args.author,
                              description=args.description)
    except ValueError as e:
        raise CLIError(f"animate: {e}") from None
    print(f"{path} ({os.path.getsize(path) / 1e6:.2f} MB)")
    return 0


def cmd_bench(args, rest):
    from .bench.core import main as bench_main
    return bench_main(rest) or 0


# ---- demo: the main job -------------------------------------------------------------------------------

def _check_double_pendulum(mb, model, q):
    """H, C and g of our kernels against the report's DP_EOM matrices (appendix D.1)."""
    H, C = mb.hand_c(model, q, np.zeros(model.nv))
    g = mb.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))
    th1, th2 = q
    D = np.array([[1001 / 600 + np.cos(th2), 0.5 * np.cos(th2) + 401 / 1200],
                  [0.5 * np.cos(th2) + 401 / 1200, 401 / 1200]])
    gq = np.array([2943 / 200 * np.cos(th1) + 981 / 200 * np.cos(th1 + th2), 981 / 200 * np.cos(th1 + th2)])
    return H, np.abs(H - D).max(), np.abs(g - gq).max()


def demo(model_name: str = "double_pendulum", out: str = "out", t_final: float = 10.0, quick: bool = False) -> int:
    """The main job: derive and print the EoM, simulate, write plots and an animation, report the drift."""
    import multibody as mb
    from .view import showmotion
    np.set_printoptions(precision=6, suppress=True, linewidth=110)
    models = ["double_pendulum", "ra3link"] if model_name == "double_pendulum" else [model_name]
    loaded = [load_model(name) for name in models]     # a bad name fails before anything is written
    folder = _out_dir(out)
    written = []
    for name, model in zip(models, loaded):
        print(f"\n=== {model.name}: {model.nb} bodies, nq = {model.nq} ===")
        for i in range(model.nb):
            parent = model.body_names[model.parent[i]] if model.parent[i] >= 0 else "(base)"
            print(f"  {model.body_names[i]:<10} <- {parent:<10} joint {model.joint_names[i]} "
                  f"({mb.JointType(model.jtype[i]).name.lower()}, axis {model.jaxis[i]}), m = {model.mass[i]:g} kg")
        q0, qd0 = _initial_state(model, None, None)
        # equations of motion, symbolically (the seed's parameters as symbols), checked against CRBA
        method = "pne" if name.startswith("ra3link") else "rnea"
        if model.nb <= 3 and all(t in (1, 2, 3) for t in model.jtype):
            source = _symbolic_source(name)
            from multibody.symbolic import derive
            eom = derive(source, method)
            print("\nproNEu (projected Newton-Euler) equations of motion, manual §3.1:" if method == "pne" else
                  "\nSymbolic equations of motion (symbolic CRBA + RNEA):")
            print("M(q) =", eom.M)
            b = str(eom.b.T)
            print("b(q, q̇) =", b if len(b) < 800 else f"({len(b)} characters; `multibody derive {name}` prints it)")
            print("g(q) =", eom.g.T)
            values = {**mb.models.parameters(source), **dict(zip(list(eom.q), q0))}
            Mq = np.array(eom.M.subs(values).evalf(), dtype=float)
            H = mb.crba(model, q0)
            print(f"  symbolic M agrees with CRBA at q0 = {q0} to {np.abs(Mq - H).max():.1e}")
        if name == "double_pendulum":
            H, dH, dg = _check_double_pendulum(mb, model, q0)
            print("H (CRBA) at the report's q0 =\n", H)
            print(f"  vs the report's DP_EOM: |H − D_q| = {dH:.1e}, |g − g_q| = {dg:.1e}")
            rng = np.random.default_rng(1)
            qd = rng.normal(size=model.nv)
            qdd_ab = mb.aba(model, q0, qd, np.zeros(model.nv))
            qdd_crb = mb.fd_crb(model, q0, qd, np.zeros(model.nv))
            print(f"  forward dynamics: FDcrb agrees to {np.abs(qdd_ab - qdd_crb).max():.1e}; RNEA(q, q̇, "
                  f"q̈) returns τ to {np.abs(mb.rnea(model, q0, qd, qdd_ab)).max():.1e}")
        # simulate, plot, animate
        tf = min(t_final, 2.0) if quick else t_final
        t0 = time.perf_counter()
        traj = mb.simulate(model, q0, qd0, tf, dt=1e-3, integrator="rk4", progress=False)
        E = np.asarray(traj.total_energy)
        print(f"\nsimulated {tf:g} s with RK4, dt = 1 ms ({len(traj.t)} samples) in "
              f"{time.perf_counter() - t0:.2f} s; energy drift max |E(t) − E(0)| = "
              f"{np.abs(E - E[0]).max():.3e} J of E(0) = {E[0]:.6g} J")
        path = os.path.join(folder, f"{name}_trajectory.npz")
        traj.save(path)
        written.append(os.path.abspath(path))
        written += _write_plots(traj, model, folder, prefix=f"{name}_")
        written.append(showmotion(model, traj, out=os.path.join(folder, f"{name}.html"),
                                  title=f"{model.name} — multibody demo", author="multibody demo",
                                  description=f"{model.name} from q0 = {np.round(q0, 4).tolist()}, RK4, dt = 1 ms"))
    print("\nwritten:")
    for p in written:
        print(f"  {p}")
    print(f"open {os.path.join(folder, models[0] + '.html')} in a browser to play the animation")
    return 0


# ---- parser ----------------------------------------------------------------------------------------

def _hooks():
    """Subcommands contributed by other packages: a module with add_parser(subparsers) and run(args)."""
    found = []
    for modname in ("multibody.codegen.cli",):
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            continue
        if hasattr(mod, "add_parser") and hasattr(mod, "run"):
            found.append(mod)
    return found


def build_parser():
    parser = argparse.ArgumentParser(prog="multibody", description=__doc__.split("\n\n")[0],
                                     epilog="MODEL: a built-in name (multibody info --list) or a URDF file.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("info", help="the model's tree, masses and geometry")
    p.add_argument("model", nargs="?", metavar="MODEL")
    p.add_argument("--list", action="store_true", help="list the built-in models")

    p = sub.add_parser("derive", help="symbolic equations of motion")
    p.add_argument("model", metavar="MODEL", help="a built-in model (seed models keep their parameters as "
                                                  "symbols) or a URDF file")
    p.add_argument("--method", default=None, help="rnea (default; tmt for the TMT mechanisms), pne, tmt, lagrange")
    p.add_argument("--latex", action="store_true", help="print LaTeX")

    p = sub.add_parser("simulate", help="integrate the motion and save the trajectory (.npz)")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("--t-final", type=float, default=5.0, help="seconds to simulate (default 5)")
    p.add_argument("--dt", type=float, default=1e-3, help="time step (default 1e-3)")
    p.add_argument("--integrator", default="rk4", help="rk4 (default), euler, semi_implicit; adaptive: rk45, dop853, radau, lsoda, rk23, bdf")
    p.add_argument("--q0", help="initial q, comma-separated (default: the model's own, else neutral)")
    p.add_argument("--qd0", help="initial q̇, comma-separated (default zero)")
    p.add_argument("--out", required=True, help="the trajectory file to write (.npz)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")

    p = sub.add_parser("plot", help="states, phase, energy (and paths with --model) as PNG files")
    p.add_argument("trajectory", metavar="TRAJ.npz")
    p.add_argument("--out", required=True, help="folder for the figures")
    p.add_argument("--model", metavar="MODEL", help="the model (names the joints, draws the CoM path)")

    p = sub.add_parser("animate", help="a self-contained HTML animation (or .mp4/.gif video)")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("trajectory", nargs="?", metavar="TRAJ.npz", help="default: each joint ramped in turn")
    p.add_argument("--out", default="anim.html", help="anim.html (default), or a .mp4/.gif file")
    p.add_argument("--title")
    p.add_argument("--author")
    p.add_argument("--description")
    p.add_argument("--fps", type=float, default=25, help="frames per second for video (default 25)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")

    sub.add_parser("bench", help="latency and batch throughput against Pinocchio (--help for options)",
                   add_help=False)

    p = sub.add_parser("demo", help="the main job: derive, simulate, plot and animate into out/")
    p.add_argument("--model", default="double_pendulum", help="default: the report's double pendulum and "
                                                              "the proNEu RA3Link arm")
    p.add_argument("--out", default="out", help="output folder (default out/)")
    p.add_argument("--t-final", type=float, default=10.0, help="seconds to simulate (default 10, as the report)")
    p.add_argument("--quick", action="store_true", help="simulate at most 2 s")

    hooks = {}
    for mod in _hooks():
        before = set(sub.choices)
        mod.add_parser(sub)
        for name in set(sub.choices) - before:
            hooks[name] = mod
    return parser, hooks


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, hooks = build_parser()
    debug = "--debug" in argv
    if debug:
        argv.remove("--debug")
    # `bench` forwards everything after it (its own parser has its own --help)
    if argv and argv[0] == "bench":
        args, rest = parser.parse_args(["bench"]), argv[1:]
    else:
        args, rest = parser.parse_args(argv), []
    try:
        if args.command == "info":
            return cmd_info(args)
        if args.command == "derive":
            return cmd_derive(args)
        if args.command == "simulate":
            return cmd_simulate(args)
        if args.command == "plot":
            return cmd_plot(args)
        if args.command == "animate":
            return cmd_animate(args)
        if args.command == "bench":
            return cmd_bench(args, rest)
        if args.command == "demo":
            return demo(args.model, args.out, args.t_final, args.quick)
        if args.command in hooks:
            return hooks[args.command].run(args) or 0
        parser.error(f"unknown command {args.command!r}")
    except CLIError as e:
        if debug:
            raise
        print(f"multibody {args.command}: error: {e}", file=sys.stderr)
        return e.code
    except (ValueError, TypeError, OSError, ImportError) as e:
        if debug:
            raise
        print(f"multibody {args.command}: error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"multibody {args.command}: interrupted", file=sys.stderr)
        return 130
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
