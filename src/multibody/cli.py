"""multibody: describe a mechanism once, then derive, simulate, plot and animate it.

Commands (``multibody COMMAND --help`` for each):

  info MODEL                       the tree: bodies, joints, masses, geometry
  derive MODEL [--method] [--latex] symbolic equations of motion M q̈ + b + g = Sᵀτ
  simulate MODEL --out traj.npz    integrate the motion from an initial state (--record-every K thins it)
  plot traj.npz --out DIR          states, phase portraits, energy (and paths with --model)
  animate MODEL [traj.npz] --out anim.html   a self-contained page that plays the motion (.mp4/.gif: video)
  codegen …                        generated code for the equations of motion
  bench                            latency and batch throughput against Pinocchio
  demo                             the main job on the report's double pendulum and a proNEu arm

MODEL is a built-in name (``multibody info --list``) or a URDF or MJCF file; built-ins with a size take it
after a colon (``planar:3``, ``auto_tree:15``).  Errors print one line and exit non-zero
(``--debug`` shows the traceback); outputs are written whole or not at all.
"""
from __future__ import annotations

import argparse
import importlib
import math
import os
import re
import shutil
import sys
import time
import warnings

import numpy as np

from .errors import EXIT_ERROR, EXIT_USAGE, CLIError, fail
from ._extras import require


# ---- models by name ------------------------------------------------------------------------------

def _robot_file_kind(path):
    """'urdf' or 'mjcf' by the file's root element (an .xml file may be either)."""
    from lxml import etree
    try:
        for _, element in etree.iterparse(path, events=("start",), resolve_entities=False, no_network=True,
                                          huge_tree=False):
            tag = etree.QName(element).localname
            break
    except (etree.XMLSyntaxError, OSError) as e:
        raise CLIError(f"cannot read model file {path!r}: {e}") from None
    if tag not in ("robot", "mujoco"):
        raise CLIError(f"model file {path!r}: expected a URDF <robot> or an MJCF <mujoco> document, got <{tag}>",
                       EXIT_USAGE)
    return "urdf" if tag == "robot" else "mjcf"


def is_model_file(spec: str) -> bool:
    return spec.lower().endswith((".urdf", ".xml", ".mjcf")) or os.path.sep in spec or os.path.isfile(spec)


def load_source(spec: str, floating: bool = False):
    """A Model or Mechanism from a built-in name (``name`` or ``name:N``, the table in
    :mod:`multibody.models.catalogue`) or a URDF/MJCF file (``floating``: a URDF on a free-floating
    base, as ``codegen --floating``)."""
    import multibody as mb
    from .models.catalogue import UnknownModel, build
    if is_model_file(spec):
        if not os.path.isfile(spec):
            raise CLIError(f"model file {spec!r} does not exist", EXIT_USAGE)
        kind = _robot_file_kind(spec)
        try:
            if floating and kind != "urdf":
                raise CLIError(f"--floating: {spec!r} is an MJCF file (its bodies' joints say whether they "
                               "float); expected a URDF", EXIT_USAGE)
            return mb.load_urdf(spec, floating=True) if kind == "urdf" and floating else (
                mb.load_urdf(spec) if kind == "urdf" else mb.load_mjcf(spec))
        except (mb.URDFError, mb.MJCFError) as e:
            raise CLIError(f"cannot load {spec!r}: {e}") from None
    if floating:
        raise CLIError(f"--floating: {spec!r} is a built-in model; expected a URDF file", EXIT_USAGE)
    try:
        return build(spec)
    except UnknownModel as e:
        raise CLIError(str(e), EXIT_USAGE) from None


def output_stem(spec: str) -> str:
    """A file-name stem for a MODEL argument: a robot file's own stem, ``planar_3`` for ``planar:3``."""
    if is_model_file(spec):
        return os.path.splitext(os.path.basename(spec))[0] or "model"
    return spec.replace(":", "_")


def load_model(spec: str, floating: bool = False):
    """The tree Model of a built-in name or URDF path (a Mechanism's tree part)."""
    source = load_source(spec, floating)
    return getattr(source, "model", source)


def _seconds(text):
    """argparse type of --t-final and --dt: a finite number (inf and nan overflow the step count)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds, got {text!r}")
    return value


def _sample_stride(text):
    """argparse type of --record-every: a whole number from 1 to 2**31 − 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 1 <= value < 2**31:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to {2**31 - 1}, got {text}")
    return value


def _floats(text, n, what):
    try:
        v = np.array([float(x) for x in text.replace(",", " ").split()], dtype=float)
    except ValueError:
        raise CLIError(f"{what}: expected {n} numbers separated by commas, got {text!r}", EXIT_USAGE) from None
    if v.shape != (n,) or not np.all(np.isfinite(v)):
        raise CLIError(f"{what}: expected {n} finite numbers, got {len(v)}: {text!r}", EXIT_USAGE)
    return v


def _initial_state(model, q0, qd0, keyframe=None, ground=False):
    """--q0/--qd0, else --keyframe's, else the seed's initial state for a built-in model, else the
    model's default state (``model.default_state()``: an MJCF file's qpos0, else neutral, at rest),
    lifted onto the floor --ground adds (as ``mb.simulate``'s default start)."""
    import multibody as mb
    info = None if keyframe is not None else mb.models.seed_info(model)
    try:
        q_d, qd_d = model.default_state(_keyframe_key(keyframe))
    except ValueError as e:
        raise CLIError(f"--{e}", EXIT_USAGE) from None
    if q0 is not None:
        q = _floats(q0, model.nq, "--q0")
    elif info is not None and info.q0 is not None and len(info.q0) == model.nq:
        q = np.array(info.q0, dtype=float)
    else:
        from .simulation.core import default_start
        q = default_start(model, None, qd_d, keyframe, ground)[0]
    if qd0 is not None:
        qd = _floats(qd0, model.nv, "--qd0")
    elif info is not None and info.dq0 is not None and len(info.dq0) == model.nv:
        qd = np.array(info.dq0, dtype=float)
    else:
        qd = qd_d
    return q, qd


def _ctrl(model, text, keyframe):
    """--ctrl (one number per actuator of model.actuators), else --keyframe's ctrl, else None (zeros)."""
    acts = getattr(model, "actuators", None)
    if text is None:
        return None if acts is None or keyframe is None else acts.keyframe_ctrl(model.keyframes[_keyframe_key(keyframe)])
    if acts is None:
        raise CLIError("--ctrl: the model has no actuators (MJCF <actuator> on joints)", EXIT_USAGE)
    return _floats(text, len(acts), f"--ctrl (one per actuator: {', '.join(acts.names[:8])})")


def _keyframe_key(text):
    """--keyframe NAME, or an index for an unnamed MuJoCo key."""
    return int(text) if text is not None and text.isdigit() else text


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

    from .models.catalogue import catalogue
    name = traj.model_name
    if name in catalogue():
        model = load_model(name)
        if model_fingerprint(model) == traj.model_fingerprint:
            return model
    return None


def _checked_extension(path, allowed, what):
    """``path`` when it ends with one of ``allowed``; a usage error otherwise (never HTML in a .pdf)."""
    if not path.lower().endswith(allowed):
        raise CLIError(f"--out: expected {what} ({', '.join(allowed)}), got {path!r}", EXIT_USAGE)
    return path


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
        from .models.catalogue import catalogue
        for name, entry in sorted(catalogue().items()):
            print(f"  {name:<22} {entry.about}")
        return 0
    if not args.model:
        raise CLIError("info: give a MODEL (or --list)", EXIT_USAGE)
    import multibody as mb
    model = load_model(args.model, args.floating)
    print(f"{model.name}: {model.nb} bodies, nq = {model.nq}, nv = {model.nv}, total mass "
          f"{float(model.mass.sum()):g} kg, gravity {model.gravity.tolist()}")
    rows = [("body", "parent", "joint", "type", "axis", "mass [kg]")]
    for i in range(model.nb):
        rows.append((model.body_names[i], model.body_names[model.parent[i]] if model.parent[i] >= 0 else "(base)",
                     model.joint_names[i], mb.JointType(model.jtype[i]).name.lower(),
                     np.array2string(model.jaxis[i], precision=3, suppress_small=True), f"{model.mass[i]:g}"))
    widths = [max(len(r[c]) for r in rows) for c in range(5)]   # whole names: never cut
    for r in rows:
        print("  " + " ".join(f"{cell:<{w}}" for cell, w in zip(r, widths)) + " " + r[5])
    kinds = {}
    for g in model.geometries:
        kinds[g.kind] = kinds.get(g.kind, 0) + 1
    print("  geometry: " + (", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or
                            "none (viewers draw the default appearance)"))
    from .model.model import passive_terms
    terms = passive_terms(model)
    print("  joint terms (mb.simulate applies them): " + (", ".join(
        f"{k} on {n} variables" + ("" if lo is None else f" ({lo:g}…{hi:g})") for k, n, lo, hi in terms) or "none"))
    for line in _joint_terms_table(model):
        print("  " + line)
    if model.camera is not None:
        print(f"  camera: {model.camera}")
    if args.ground is not False:
        from .kinematics.contacts import scene_geoms
        pairs = scene_geoms(model, args.ground).pairs
        print(f"  contact: a floor z = {0.0 if args.ground is True else args.ground:g} added; {len(pairs)} candidate "
              "pairs (simulate takes them under the compliant law, --contact hard for the LCP)")
    q, qd = _initial_state(model, None, None, args.keyframe, args.ground)
    print(f"  start ({'keyframe ' + repr(args.keyframe) if args.keyframe is not None else 'default state'}): "
          f"q = {np.round(q, 6).tolist()}" + (f", q̇ = {np.round(qd, 6).tolist()}" if np.any(qd) else ""))
    if len(model.keyframes):
        print("  keyframes: " + ", ".join(k.name or f"#{i}" for i, k in enumerate(model.keyframes.values())))
    return 0


def _joint_terms_table(model):
    """One row per joint variable (when the model has limits, damping, friction or effort/velocity
    bounds): what ``simulate`` enforces and applies, in the model's units (rad or m; N·m or N)."""
    def num(x):
        return "—" if x is None or not np.isfinite(x) or x == 0.0 else f"{x:g}"

    columns = {"damping": getattr(model, "damping", None), "friction": getattr(model, "friction", None),
               "velocity": getattr(model, "velocity_limit", None), "effort": getattr(model, "effort_limit", None)}
    lower = upper = None
    if getattr(model, "q_lower", None) is not None:
        from .model.model import enforced_position_limits
        lower, upper = enforced_position_limits(model)
    has_limits = lower is not None and (np.any(np.isfinite(lower)) or np.any(np.isfinite(upper)))
    columns = {k: np.asarray(v, dtype=float) for k, v in columns.items()
               if v is not None and np.any(np.isfinite(v) & (np.asarray(v, dtype=float) != 0))}
    if not has_limits and not columns:
        return []
    rows = [("variable", "limits", *columns)]
    for i in range(model.nb):
        nv, nq = int(model.nv_joint[i]), int(model.nq_joint[i])
        for k in range(nv):
            v = int(model.v_start[i]) + k
            name = model.joint_names[i] + (f"[{k}]" if nv > 1 else "")
            lim = "—"
            if has_limits and nq == nv:
                lo, hi = lower[int(model.q_start[i]) + k], upper[int(model.q_start[i]) + k]
                if np.isfinite(lo) or np.isfinite(hi):
                    lim = f"[{lo:g}, {hi:g}]"
            row = (name, lim, *(num(c[v]) for c in columns.values()))
            if any(cell != "—" for cell in row[1:]):     # a free base's six variables carry nothing
                rows.append(row)
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    note = (["(velocity and effort: the file's bounds, kept on the Model; simulate does not clamp to them)"]
            if {"velocity", "effort"} & set(columns) else [])
    return [" ".join(f"{cell:<{w}}" for cell, w in zip(r, widths)).rstrip() for r in rows] + note


def _symbolic_source(spec):
    """What ``derive`` reads for a model name: a built-in seed model with its parameters as symbols
    (the seed's names), a Mechanism as it is, anything else numeric."""
    import multibody as mb
    name = spec.partition(":")[0]
    if name in ("ra3link", "ra3link_prismatic", "starleth", "double_pendulum", "single_pendulum"):
        return getattr(mb.models, name)(symbolic=True)
    return load_source(spec)


def _derive_eom(spec, method, say, raw=False):
    """(equations, the source's name, a note for the header or None)."""
    import multibody as mb
    from multibody.symbolic import derive
    source = _symbolic_source(spec)
    floated = _free_base(source)
    if floated:
        # symbolic derivation takes no quaternions: the floating base in Euler angles, as the seed's own
        # floatbase writes it (spatial_v2's free-floating models are built that way there)
        source = mb.models.floatbase(source)
    if method is None:
        method = "tmt" if hasattr(source, "model") else "rnea"   # a Mechanism needs TMT
    try:
        eom = derive(source, method, raw=raw, progress=say)
    except ValueError as e:
        raise CLIError(str(e)) from None
    note = None
    if floated:
        x, y, z, rx, ry, rz = list(eom.q)[:6]
        note = (f"body 0's free joint written as floatbase's chain (no quaternions symbolically): {x}, {y}, {z} its "
                f"x, y, z and {rx}, {ry}, {rz} its x-y-z Euler angles, singular at {ry} = ±π/2")
    return eom, getattr(source, "name", spec), note


def _free_base(source):
    """Whether ``source`` is a numeric model whose one root, body 0, is on a free joint and whose other
    joints take no quaternion (what floatbase turns into a tree derive takes)."""
    import numpy as np

    import multibody as mb
    if not isinstance(source, mb.Model) or source.is_symbolic or source.planar:
        return False
    parent, jtype = np.asarray(source.parent), np.asarray(source.jtype)
    quaternion = {int(mb.JointType.FREE), int(mb.JointType.SPHERICAL)}
    return (source.nb > 0 and int(jtype[0]) == int(mb.JointType.FREE) and int(np.sum(parent < 0)) == 1
            and not any(int(j) in quaternion for j in jtype[1:]))


def cmd_derive(args):
    from rich.console import Console
    console = Console(stderr=True)
    with console.status(f"deriving the equations of motion of {args.model} …") as status:
        eom, name, note = _derive_eom(args.model, args.method, lambda msg: status.update(f"derive: {msg}"),
                                      raw=args.raw)
    size = eom.extra.get("size")
    ops = (size["readable"] if size else eom.count_ops())
    # a planar tree is derived in the readable form directly: there is no other form to count, and
    # deriving it a second time (raw) only for the count doubled the command's derivation
    as_derived = ((f" (as derived: {sum(size['derived'].values())}, --raw)" if "derived" in size
                   else " (derived readable directly; --raw for the recursion's form)") if size else " (raw)")
    sized = f"size: M {ops['M']}, b {ops['b']}, g {ops['g']} operations" + as_derived
    if args.latex:
        print(f"% {name}, {sized}")
        if note:
            print(f"% {note}")
        print(eom.latex())
    else:
        print(f"# {name}: M(q) q̈ + b(q, q̇) + g(q) = Sᵀ τ   (method {eom.extra.get('method', args.method)})")
        print(f"# {sized}")
        if note:
            print(f"# {note}")
        print(eom)
    return 0


def trajectory_file_bytes(model, t_final, dt, record_every=1):
    """About the samples and bytes of ``simulate``'s .npz: each sample t, q, q̇, q̈, τ and the two
    energies in float64."""
    from .simulation.core import record_samples
    samples = record_samples(t_final, dt, record_every)
    return samples, 8 * samples * (3 + model.nq + 3 * model.nv)


def record_every_to_fit(model, t_final, dt, limit):
    """The least ``record_every`` whose trajectory file stays within ``limit`` bytes."""
    per_sample = trajectory_file_bytes(model, 0.0, dt)[1] // 2
    room = max(1, limit // per_sample - 2)             # grid samples that fit beside the final and a spare
    k = max(1, math.ceil(t_final / dt / room))
    while trajectory_file_bytes(model, t_final, dt, k)[1] > limit:
        k += 1
    return k


def _check_trajectory_size(model, args, out):
    """Refuse, before simulating, a file that `plot`/`animate` could not read or the disk could not hold."""
    from ._io import MAX_NPZ_BYTES
    samples, nbytes = trajectory_file_bytes(model, args.t_final, args.dt, args.record_every)
    if nbytes > MAX_NPZ_BYTES:
        k = record_every_to_fit(model, args.t_final, args.dt, MAX_NPZ_BYTES)
        raise CLIError(f"--t-final: {samples:,} samples of {model.name} would make a {nbytes / 2**30:.1f} GiB file, "
                       f"more than the {MAX_NPZ_BYTES / 2**30:g} GiB that plot, animate and Trajectory.load read; "
                       f"pass --record-every {k} (keep every {k}th sample) or a shorter --t-final", EXIT_USAGE)
    free = shutil.disk_usage(os.path.dirname(out)).free
    if nbytes > free:
        raise CLIError(f"--out: the trajectory would take about {nbytes / 2**20:,.0f} MiB but {os.path.dirname(out)} "
                       f"has {free / 2**20:,.0f} MiB free; pass a larger --record-every or another folder")


def cmd_simulate(args):
    import multibody as mb
    model = load_model(args.model, args.floating)
    q0, qd0 = _initial_state(model, args.q0, args.qd0, args.keyframe, args.ground)
    from .simulation.system import default_integrator, default_step
    if args.dt is None:   # the file's own step (an MJCF's <option timestep>), else 1 ms
        args.dt = default_step(model)
    if not (args.t_final > 0 and args.dt > 0):
        raise CLIError("--t-final and --dt must be positive", EXIT_USAGE)
    from .simulation.core import check_step_count     # simulate's own check, before the file-size check
    try:
        check_step_count(args.t_final, args.dt, args.record_every)
    except ValueError as e:
        raise CLIError(f"--{e}", EXIT_USAGE) from None
    if args.record_every < 1:
        raise CLIError(f"--record-every: expected a whole number ≥ 1, got {args.record_every}", EXIT_USAGE)
    out = os.path.abspath(_checked_extension(args.out, (".npz",), "a trajectory file"))
    from ._io import check_writable
    try:
        check_writable(out)
    except ValueError as e:
        raise CLIError(str(e)) from None
    _check_trajectory_size(model, args, out)
    contact = None if args.contact == "on" else args.contact   # on: the file's own (compliant), if it has a floor
    args.integrator = args.integrator or default_integrator(contact, model, args.ground)   # semi_implicit on a floor
    t0 = time.perf_counter()
    try:
        traj = mb.simulate(model, q0, qd0, args.t_final, dt=args.dt, integrator=args.integrator,
                           record_every=args.record_every, progress=not args.quiet, on_divergence="raise",
                           ground=args.ground, contact=contact, limits=args.limits,
                           ctrl=_ctrl(model, args.ctrl, args.keyframe))
    except mb.SimulationError as e:   # diverged: keep the samples up to the last finite state, exit 1
        if e.trajectory is not None:
            e.trajectory.save(out)
        other = "semi_implicit" if args.integrator == "rk4" else "rk4"   # (the one that is not this run's)
        raise CLIError(f"{e} (dt = {args.dt:g} with {args.integrator}: try a smaller --dt or --integrator {other})"
                       + (f"; the samples up to then are in {out}" if e.trajectory is not None else "")) from None
    except (ValueError, MemoryError) as e:
        raise CLIError(str(e)) from None
    wall = time.perf_counter() - t0
    traj.save(out)
    E = np.asarray(traj.total_energy)
    print(f"simulated {model.name} for {args.t_final:g} s (dt = {args.dt:g}, {args.integrator}) in {wall:.2f} s: "
          f"{len(traj.t)} samples → {out}")
    print(f"energy drift max |E(t) − E(0)| = {np.abs(E - E[0]).max():.3e} J (E(0) = {E[0]:.6g} J)"
          + (f"; applied from the model: {', '.join(traj.passive)} (they change the energy)" if traj.passive else ""))
    if traj.contact is not None:
        weight = np.sum(model.mass) * np.linalg.norm(model.gravity)
        print(f"contact: the model's geoms under the {traj.contact} law; the static geoms (the floor) carry "
              f"{traj.support_force[-1]:.6g} N at the end (weight {weight:.6g} N)")
    return 0


def _write_plots(traj, model, folder, prefix=""):
    require("matplotlib", "view", "the demo's plots")
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
        raise CLIError(str(e)) from None
    return 0


def cmd_animate(args):
    from .view import export_video, showmotion
    model = load_model(args.model, args.floating)
    traj = _load_trajectory(args.trajectory, model) if args.trajectory else None
    _checked_extension(args.out, (".html", ".htm", ".mp4", ".gif"), "an animation page or a video")
    try:
        if args.out.lower().endswith((".mp4", ".gif")):
            path = export_video(model, traj, out=args.out, fps=args.fps, title=args.title, progress=not args.quiet)
        else:
            path = showmotion(model, traj, out=args.out, title=args.title, author=args.author,
                              description=args.description)
    except ValueError as e:
        raise CLIError(str(e)) from None
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


def _print_equations(eom, name, shown=400, simplify_below=1000):
    """M, b and g entry by entry (M's upper triangle: it is symmetric), each simplified to the
    seed's shape when it is short enough to print (e.g. DP_EOM's l1*l2*m2*cos(th2)); longer entries
    are referred to `multibody derive`.  Which entries are simplified depends on their size, never
    on the clock, so a loaded machine prints the same; the time limit only guards against a
    simplification that does not end."""
    from .symbolic.eom import simplify_with_time_limit
    n = eom.M.shape[0]
    entries = ([(f"M[{i},{j}]", eom.M[i, j]) for i in range(n) for j in range(i, n)] +
               [(f"b[{i}]", eom.b[i]) for i in range(n)] + [(f"g[{i}]", eom.g[i]) for i in range(n)])
    short = [k for k, (_, e) in enumerate(entries) if len(str(e)) < simplify_below]
    simpler, _ = simplify_with_time_limit([entries[k][1] for k in short], time_limit=300, per_entry=120)
    for k, e in zip(short, simpler):
        entries[k] = (entries[k][0], e)
    titles = {"M": "M(q), symmetric:", "b": "b(q, q̇):", "g": "g(q):"}
    for label, expr in entries:
        if label.endswith(("[0,0]", "b[0]", "g[0]")) and label[0] in titles:
            print(titles[label[0]])
        text = str(expr)
        print(f"  {label} = {text if len(text) < shown else f'({len(text)} characters; `multibody derive {name}`)'}")


def _trunk(model):
    """The bodies from the fixed base to the first that branches (a legged robot's trunk, with the
    chain of joints that floats it), or None when the model does not float on such a chain."""
    children = np.bincount(model.parent[model.parent >= 0], minlength=model.nb)
    chain, b = [], -1
    while True:
        kids = np.flatnonzero(model.parent == b)
        if len(kids) != 1:
            return None
        b = int(kids[0])
        chain.append(b)
        if children[b] > 1:
            break
    dofs = sum(int(model.nv_joint[i]) for i in chain)
    return chain if dofs == 6 else None


def _stance(mb, model, q0):
    """A floating legged robot with no floor of its own stands on one in the demo: (q0 with its
    lowest foot on z = 0, ground contact at its feet — the leaf bodies' origins — a PD holding its
    legs at q0, a camera following its trunk), or None for any other model."""
    trunk = _trunk(model) if model.geoms is None else None
    if trunk is None:
        return None
    has_children = np.zeros(model.nb, bool)
    has_children[model.parent[model.parent >= 0]] = True
    feet = [i for i in range(model.nb) if not has_children[i]]
    states = mb.body_states(model, q0)
    vertical = np.flatnonzero(mb.body_jacobian(model, q0, trunk[-1])[5] > 0.99)   # the trunk's vertical dofs
    if len(vertical) == 0 or (model.nq != model.nv and int(model.jtype[trunk[0]]) != int(mb.JointType.FREE)):
        return None
    q = np.array(q0, dtype=float)
    zi = 2 if int(model.jtype[trunk[0]]) == int(mb.JointType.FREE) else int(model.q_start[model.dof_body[vertical[0]]])
    q[zi] -= states.p[feet, 2].min()
    mass = float(np.sum(model.mass))
    K, D = mb.contact_parameters(mass, 1e-3, damping_ratio=1.0, n_points=len(feet))
    contact = mb.GroundContact(model, K, D, mu=0.8, points=[(b, np.zeros(3)) for b in feet])
    legs = np.ones(model.nv)
    legs[[v for b in trunk for v in range(int(model.v_start[b]), int(model.v_start[b]) + int(model.nv_joint[b]))]] = 0
    pd = mb.PD(kp=legs * 20.0 * mass, kd=legs * 0.5 * math.sqrt(mass), q_ref=q.copy())
    return q, contact, pd, mb.view.Camera(body=trunk[-1], zoom=0.8)


def demo(model_name: str = "double_pendulum", out: str = "out", t_final: float = 10.0, quick: bool = False,
         floating: bool = False, keyframe=None) -> int:
    """The main job: derive and print the EoM, simulate, write plots and an animation, report the drift."""
    import multibody as mb
    from .view import showmotion
    np.set_printoptions(precision=6, suppress=True, linewidth=110)
    if not (math.isfinite(t_final) and t_final >= 0):     # before the derivation, not after it
        raise CLIError(f"--t-final: expected a finite number of seconds ≥ 0, got {t_final:g}", EXIT_USAGE)
    models = ["double_pendulum", "ra3link"] if model_name == "double_pendulum" else [model_name]
    loaded = [load_model(name, floating) for name in models]     # a bad name fails before anything is written
    folder = _out_dir(out)
    written = []
    for name, model in zip(models, loaded):
        stem = output_stem(name)        # files in `folder` named by the model, never by a path
        print(f"\n=== {model.name}: {model.nb} bodies, nq = {model.nq} ===")
        for i in range(model.nb):
            parent = model.body_names[model.parent[i]] if model.parent[i] >= 0 else "(base)"
            print(f"  {model.body_names[i]:<10} <- {parent:<10} joint {model.joint_names[i]} "
                  f"({mb.JointType(model.jtype[i]).name.lower()}, axis {model.jaxis[i]}), m = {model.mass[i]:g} kg")
        q0, qd0 = _initial_state(model, None, None, keyframe)
        # equations of motion, symbolically (the seed's parameters as symbols), checked against CRBA
        method = "pne" if name.startswith("ra3link") else "rnea"
        if model.nb <= 3 and all(t in (1, 2, 3) for t in model.jtype):
            source = _symbolic_source(name)
            from multibody.symbolic import derive
            # simplified (time-limited) to the seed's own shape, e.g. the report's DP_EOM: l1*l2*m2*cos(th2)
            eom = derive(source, method)
            print("\nproNEu (projected Newton-Euler) equations of motion, manual §3.1:" if method == "pne" else
                  "\nSymbolic equations of motion (symbolic CRBA + RNEA), simplified:")
            _print_equations(eom, name)
            seed_values = mb.models.parameters(source) if mb.models.seed_info(source) is not None else {}
            values = {**seed_values, **dict(zip(list(eom.q), q0))}
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
        stance = _stance(mb, model, q0)
        camera = None
        if stance is None:
            traj = mb.simulate(model, q0, qd0, tf, dt=1e-3, integrator="rk4", progress=False)
            E = np.asarray(traj.total_energy)
            print(f"\nsimulated {tf:g} s with RK4, dt = 1 ms ({len(traj.t)} samples) in "
                  f"{time.perf_counter() - t0:.2f} s; energy drift max |E(t) − E(0)| = "
                  f"{np.abs(E - E[0]).max():.3e} J of E(0) = {E[0]:.6g} J")
        else:   # a floating legged robot stands on a floor under a PD stance (energy is not conserved)
            q0, contact, pd, camera = stance
            traj = mb.simulate(model, q0, np.zeros(model.nv), tf, dt=1e-3, integrator="rk4", progress=False,
                               controller=pd, contact=contact)
            weight = float(np.sum(model.mass)) * float(np.linalg.norm(model.gravity))
            floor = traj.contact_forces[-1][:, 2].sum() if traj.contact_forces is not None else float("nan")
            print(f"\nstood {tf:g} s on a floor (compliant ground contact at its {len(contact.bodies)} feet, a PD "
                  f"stance), RK4, dt = 1 ms, in {time.perf_counter() - t0:.2f} s; its coordinates moved "
                  f"{np.abs(traj.q[-1] - q0).max():.3g} at most from the stance, the floor carries {floor:.4g} N of its "
                  f"{weight:.4g} N weight")
        path = os.path.join(folder, f"{stem}_trajectory.npz")
        traj.save(path)
        written.append(os.path.abspath(path))
        written += _write_plots(traj, model, folder, prefix=f"{stem}_")
        written.append(showmotion(model, traj, out=os.path.join(folder, f"{stem}.html"),
                                  title=f"{model.name} — multibody demo", author="multibody demo",
                                  description=f"{model.name} from q0 = {np.round(q0, 4).tolist()}, RK4, dt = 1 ms",
                                  camera=camera))
    print("\nwritten:")
    for p in written:
        print(f"  {p}")
    print(f"open {os.path.join(folder, output_stem(models[0]) + '.html')} in a browser to play the animation")
    return 0


# ---- parser ----------------------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line, ``multibody <cmd>: error: <message>``, exit status 2
    (subcommands' parsers are of this class too)."""

    def error(self, message):
        print(f"{self.prog}: error: {message} (see `{self.prog} --help`)", file=sys.stderr)
        sys.exit(EXIT_USAGE)


_NEGATIVE_NUMBERS = re.compile(r"^-\.?\d")


def _join_negative_values(argv):
    """``--q0 -0.5,0.3`` → ``--q0=-0.5,0.3``: argparse would read ``-0.5,0.3`` as an option."""
    out = []
    for token in argv:
        if out and _NEGATIVE_NUMBERS.match(token) and out[-1].startswith("--") and "=" not in out[-1]:
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def _robot_flags(p, keyframe=True, ground=False):
    """The flags that say how a robot file is loaded and where it starts (info, simulate, animate, demo)."""
    p.add_argument("--floating", action="store_true", help="URDF: on a free-floating base (as codegen --floating)")
    if keyframe:
        p.add_argument("--keyframe", metavar="NAME", help="start from the model's keyframe NAME (or index) "
                                                          "instead of its default state")
    if ground:
        p.add_argument("--ground", nargs="?", type=float, const=True, default=False, metavar="HEIGHT",
                       help="add a floor z = 0 (or z = HEIGHT) under the model's geoms, for files without one "
                            "(URDF); the default start is lifted onto it")


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
    parser = _Parser(prog="multibody", description=__doc__.split("\n\n")[0],
                                     epilog="MODEL: a built-in name (multibody info --list) or a URDF or MJCF file.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("--version", action="version", version=f"multibody {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("info", help="the model's tree, masses and geometry")
    p.add_argument("model", nargs="?", metavar="MODEL")
    p.add_argument("--list", action="store_true", help="list the built-in models")
    _robot_flags(p, ground=True)

    p = sub.add_parser("derive", help="symbolic equations of motion")
    p.add_argument("model", metavar="MODEL", help="a built-in model (seed models keep their parameters as "
                                                  "symbols) or a URDF or MJCF file")
    p.add_argument("--method", default=None, choices=("rnea", "pne", "tmt", "lagrange"),
                   help="rnea (default; tmt for the TMT mechanisms), pne, tmt, lagrange")
    p.add_argument("--latex", action="store_true", help="print LaTeX")
    p.add_argument("--raw", action="store_true", help="the entries as derived, without the readable form "
                                                      "(sin² + cos² and angle sums collapsed)")

    p = sub.add_parser("simulate", help="integrate the motion and save the trajectory (.npz)")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("--t-final", type=_seconds, default=5.0, help="seconds to simulate (default 5)")
    p.add_argument("--dt", type=_seconds, default=None, help="time step (default: the file's own, an MJCF's "
                                                              "<option timestep>; else 1e-3)")
    p.add_argument("--integrator", default=None, help="rk4 (default; semi_implicit under --contact hard, on --ground "
                                                      "or where the file's <option integrator> is MuJoCo's Euler), rk3, "
                                                      "euler, semi_implicit; adaptive: rk45, dop853, radau, lsoda, "
                                                      "rk23, bdf")
    p.add_argument("--q0", help="initial q, comma-separated, negative numbers too: --q0 -0.5,0.3 (default: the "
                                "model's own, else neutral)")
    p.add_argument("--qd0", help="initial q̇, comma-separated (default zero)")
    _robot_flags(p, ground=True)
    p.add_argument("--ctrl", help="a constant control per actuator, comma-separated (default: the keyframe's, "
                                  "else zeros)")
    p.add_argument("--record-every", type=_sample_stride, default=1, metavar="K",
                   help="keep every K-th sample (default 1; the final state is always kept)")
    p.add_argument("-o", "--out", required=True, help="the trajectory file to write (.npz)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--contact", choices=("on", "compliant", "hard", "off"), default="on",
                   help="the file's own contacts (its floor and geoms): on (default: the compliant law where the "
                        "file has a floor), compliant, hard (Coulomb friction, an LCP each step; semi_implicit), "
                        "or off")
    p.add_argument("--limits", choices=("hard", "soft", "off"), default=None,
                   help="the joint limits: the model's own by default (an MJCF file's soft, as MuJoCo's soft "
                        "constraints with its solreflimit and solimplimit; a URDF's hard: rigid stops), hard, soft "
                        "or off")

    p = sub.add_parser("plot", help="states, phase, energy (and paths with --model) as PNG files")
    p.add_argument("trajectory", metavar="TRAJ.npz")
    p.add_argument("-o", "--out", required=True, help="folder for the figures")
    p.add_argument("--model", metavar="MODEL", help="the model (names the joints, draws the CoM path)")

    p = sub.add_parser("animate", help="a self-contained HTML animation (or .mp4/.gif video)")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("trajectory", nargs="?", metavar="TRAJ.npz", help="default: each joint ramped in turn")
    p.add_argument("-o", "--out", default="anim.html", help="anim.html (default), or a .mp4/.gif file")
    p.add_argument("--title")
    p.add_argument("--author")
    p.add_argument("--description")
    p.add_argument("--fps", type=float, default=25, help="frames per second for video (default 25)")
    _robot_flags(p, keyframe=False)
    p.add_argument("--quiet", action="store_true", help="no progress bar")

    sub.add_parser("bench", help="latency and batch throughput against Pinocchio (--help for options)",
                   add_help=False)

    p = sub.add_parser("demo", help="the main job: derive, simulate, plot and animate into out/")
    p.add_argument("--model", default="double_pendulum", help="default: the report's double pendulum and "
                                                              "the proNEu RA3Link arm")
    p.add_argument("-o", "--out", default="out", help="output folder (default out/)")
    p.add_argument("--t-final", type=_seconds, default=10.0, help="seconds to simulate (default 10, as the report)")
    p.add_argument("--quick", action="store_true", help="simulate at most 2 s")
    _robot_flags(p)

    hooks = {}
    for mod in _hooks():
        before = set(sub.choices)
        mod.add_parser(sub)
        for name in set(sub.choices) - before:
            hooks[name] = mod
    return parser, hooks


def main(argv=None) -> int:
    argv = _join_negative_values(list(sys.argv[1:] if argv is None else argv))
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
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning(args.command)
            status = _dispatch(parser, hooks, args, rest)
        if sys.stdout is not None:    # None when started with standard output closed (`>&-`)
            sys.stdout.flush()        # a closed pipe shows here, inside the handlers below
        return status
    except CLIError as e:
        if debug:
            raise
        return fail(args.command, e, e.code)
    except BrokenPipeError:
        # the reader went away (`multibody derive … | head`): stop quietly, as a program killed by SIGPIPE would
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13
    except (ValueError, TypeError, OSError, ImportError, RuntimeError, ArithmeticError) as e:
        if debug:
            raise
        return fail(args.command, e, EXIT_ERROR)
    except KeyboardInterrupt:
        print(f"multibody {args.command}: interrupted", file=sys.stderr)
        return 130


def _version():
    import multibody
    return multibody.__version__


def _one_line_warning(command):
    """A ``warnings.showwarning`` that prints ``multibody <command>: warning: <message>`` on one line
    (Python's own echoes the source line that warned, which means nothing to a command's user)."""
    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        print(f"multibody {command}: warning: {text}", file=sys.stderr if file is None else file)
    return show


def _dispatch(parser, hooks, args, rest) -> int:
    commands = {"info": cmd_info, "derive": cmd_derive, "simulate": cmd_simulate, "plot": cmd_plot,
                "animate": cmd_animate}
    if args.command in commands:
        return commands[args.command](args)
    if args.command == "bench":
        return cmd_bench(args, rest)
    if args.command == "demo":
        return demo(args.model, args.out, args.t_final, args.quick, args.floating, args.keyframe)
    if args.command in hooks:
        return hooks[args.command].run(args) or 0
    parser.error(f"unknown command {args.command!r}")


if __name__ == "__main__":
    sys.exit(main())
