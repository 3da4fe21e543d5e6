"""Our C kernels against Pinocchio's C++ itself: ``python -m multibody.bench.pinocchio_cpp``.

The anchor of issue 37: the record for rigid-body dynamics on a CPU is Pinocchio's C++, not its
Python bindings.  In one run, on the URDFs of ``bench.urdf`` (example-robot-data: UR5, Panda,
solo12, ANYmal, Talos), for rnea, crba, aba, M⁻¹ (computeMinverse), ∂RNEA and ∂ABA:

* **our C kernels timed by a C harness** (``kernels_harness.c``, no Python): the core's kernel
  sources (``csrc/common``, ``model``, the six kernels' files) compiled with the extension's flags
  (``setup.py``: ``-O3 -std=c11 -ffp-contract=off``) into a program that reads the model's tables
  and the states from files;
* **Pinocchio's C++** timed by a C++ harness (``pinocchio_harness.cpp``) compiled with ``g++ -O3``
  against the headers and libraries the ``pin`` wheel ships (``cmeel.prefix``: Pinocchio, Boost;
  Eigen from ``cmeel-eigen``), the algorithms header-only, on the ``pin.Model`` this process built
  from the URDF (saved by ``saveToBinary``; the wheel ships no URDF parser headers);
* our Python calls (``mb.rnea`` …) and Pinocchio's Python calls (``pin.rnea`` …), one state a call.

Both harnesses loop through the same ``--states`` states (Pinocchio's in its order and conventions,
``multibody.pinocchio``), CPU time per call.  Ratios are theirs ÷ ours (> 1: we are faster), of each
side's best loop; the table's ``spread`` column gives each side's median loop over its best (in %,
ours/theirs), and the summary repeats the goals on the medians, so the noise is in view.

How the times are taken (the same rules for both sides, so that neither gets the better chances):

* the process and the harnesses it starts are pinned to one CPU (``os.sched_setaffinity``;
  ``--cpu N``, default the last CPU this process may use; ``--cpu -1``: not pinned);
* per robot, a first round of both harnesses (``--repeat`` loops) warms the machine (clock, caches,
  the programs' pages; the first robot's timings used to be the noisiest) and measures each kernel's
  loop; its times are dropped.  Each kernel then gets the same number of timed loops in both
  harnesses: ``--repeat``, or more, enough that the slower side's loops add up to ``--min-time``
  seconds a round (so the sub-µs rows get hundreds of loops, the 20 µs rows ``--repeat``);
* ``--rounds`` rounds follow, the two harnesses run alternately (ours, theirs; theirs, ours; …), one
  process each a round, every loop's time kept: a side's best and median are over all its rounds'
  loops, so a slow spell of the machine falls on both sides alike;
* the Python calls likewise: per kernel, loops of ours and theirs alternately (the order swapped
  each time), the same number for both, at least ``--repeat`` and until each side has had
  ``--rounds`` × ``--min-time`` seconds; each loop calls the function itself on argument tuples built
  beforehand (``bench.timing.calls``: no wrapper frame, whose fixed cost on both sides pulled every
  ratio toward 1).

Why: the run used to time each harness once, best of 5 loops per kernel.  Pinocchio's sub-µs
kernels reach their best only after tens of loops (UR5 crba, 200 states, one process: its first 5
loops 0.72–0.89 µs a call, its best of 60 0.49–0.51 µs; ours flat at 0.37), so the old reading
flattered us on those rows (UR5 crba read up to 2.06×; now 1.36–1.38×), and one noisy spell of
the shared machine fell on one side only (UR5 crba also read 0.74×).  Both harnesses write their results on the first 4 states; the run prints
their largest difference (Pinocchio's mapped to our order) and each side's checksum (sum of |x|,
the same on both sides up to rounding, as the orders differ by a permutation): the timings compare
the same computation.

``--goals``: then, pinned to the same CPU, the 10 000-state batches on one thread against a loop of
Pinocchio's Python calls (``bench.urdf``'s rnea, crba, aba; ``bench.derivatives``' ∂RNEA, ∂ABA, M⁻¹), a new
process's first result (``bench.urdf.startup``) and the Panda's 10 s RK4 run against MuJoCo's rollout
(``bench.simulate`` part 5), and one line per goal of issue 37, met or not, naming the rows that miss
(:func:`goals`): every goal from one command.

Instructions per call come from ``valgrind --tool=callgrind`` (the machine's ``perf`` counters are
not available in this VM): each harness runs ``--count`` calls of each kernel between a zeroing and a
dump of callgrind's counters.  Valgrind counts every iteration of a rep-prefixed string instruction as
one instruction, and glibc's memset clears blocks over 2 kB by ``rep stosb``: a kernel that zeroes its
nv × nv output first (our crba, M⁻¹, derivatives) shows about one instruction per byte cleared there
(Talos' crba: 11.5 k of its 51.5 k), which the processor does at tens of bytes a cycle.  Flops: Featherstone's counts (RBDA table 10.1: ≈ 174 flops per
degree of freedom for RNEA, ≈ 429 for ABA, for revolute joints); the ``peak×`` column is our
C time over the time those flops take at the scalar peak (2 flops a cycle at the CPU's nominal clock).

The programs are compiled once and cached under ``$MULTIBODY_BENCH_CACHE`` (default
``~/.cache/multibody/bench``) in a folder keyed by a hash of what is compiled — the sources' and
included headers' bytes, the flags, the compiler's version, the pin wheel's version — never by
where the files lie, so every checkout or git worktree of one tree shares the compiled programs.  With no C or
C++ compiler, or no Pinocchio/Eigen headers, the missing side is skipped with one line saying why.

Options: ``--robots NAME,…`` (default all), ``--states N`` (default 200), ``--calls N`` (Python
latency loop, default 500), ``--repeat N`` (loops at least, default 5), ``--rounds N`` (default 7),
``--min-time S`` (default 0.03), ``--cpu N`` (default: pinned to the last allowed CPU; -1: not
pinned), ``--count N`` (callgrind calls, default 20; 0 skips callgrind), ``--native`` (both harnesses
with ``-march=native``), ``--robots-dir DIR``,
``--keep DIR`` (the harnesses' files are kept there; the last robot's stay), ``--build-only`` (build or
find both programs in the cache, print their paths, stop).
"""
from __future__ import annotations

import argparse
import hashlib
import math
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time

import numpy as np

from .timing import interleaved
from .urdf import ROBOTS, robots_dir, single_call_loops

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join(os.path.dirname(HERE), "csrc")
KERNELS = ("rnea", "crba", "aba", "minv", "rnea_derivatives", "aba_derivatives")
SHORT = {"rnea": "rnea", "crba": "crba", "aba": "aba", "minv": "M⁻¹", "rnea_derivatives": "∂RNEA",
         "aba_derivatives": "∂ABA"}
# the core's files the six kernels need (the planar FDab: aba.c hands planar trees to it; kkt.c:
# the small SPD solves of multi-dof joints)
C_SOURCES = ("common/status.c", "model/compile.c", "model/jcalc.c", "model/model.c", "kernels/rnea.c",
             "kernels/crba.c", "kernels/aba.c", "kernels/aba_avx2.c", "kernels/planar.c", "kernels/minv.c",
             "kernels/rnea_derivatives.c", "kernels/aba_derivatives.c", "sim/kkt.c")
C_FLAGS = ("-std=c11", "-O3", "-ffp-contract=off")  # setup.py's
CXX_FLAGS = ("-std=c++17", "-O3", "-DNDEBUG", "-DBOOST_MPL_LIMIT_LIST_SIZE=30", "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
             "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_FUSION_INVOKE_MAX_ARITY=12")
# Featherstone, RBDA table 10.1: flops per degree of freedom (revolute joints)
FLOPS_PER_DOF = {"rnea": 174, "aba": 429}
MAX_LOOPS = 100_000  # the harnesses' cap on a kernel's loops in one run (their MAX_LOOPS)


def cache_dir():
    """Where the compiled harnesses are kept: $MULTIBODY_BENCH_CACHE or ~/.cache/multibody/bench."""
    return os.environ.get("MULTIBODY_BENCH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "multibody",
                                                                   "bench")


def pin_prefix():
    """The ``cmeel.prefix`` folder of the pin wheel (Pinocchio's and Eigen's headers), or None."""
    for base in dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *sys.path]):
        p = os.path.join(base or "", "cmeel.prefix")
        if base and os.path.isdir(os.path.join(p, "include", "pinocchio")):
            return p
    return None


def _compiler_identity(compiler):
    """The compiler's ``--version`` text: the cache key names the compiler by what it is, not by
    where it lies."""
    try:
        p = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=120)
        return p.stdout + p.stderr
    except (OSError, subprocess.TimeoutExpired):
        return compiler   # it will fail to compile too, and say so


def _dist_versions(names):
    """``name==version`` of each installed distribution (the headers and libraries a harness builds on)."""
    from importlib.metadata import PackageNotFoundError, version
    out = []
    for name in names:
        try:
            out.append(f"{name}=={version(name)}")
        except PackageNotFoundError:
            out.append(f"{name}==absent")
    return out


def cache_key(cmd, sources, trees=(), extra=()):
    """The hash a compiled harness is cached under: what is compiled, never where it lies.

    Every argument of ``cmd`` that is (or lies under) a source or a tree folder is written relative to
    it (``<src0>``, ``<tree0>/…``), so the same files in another checkout or git worktree give the same
    key; the bytes of the sources and of every C/C++ file under each tree (what they can include,
    by relative path) are hashed; so are the compiler's ``--version`` text and ``extra`` (the versions of
    the wheels whose headers and libraries are used).  A changed byte, flag, compiler or wheel gives
    another key."""
    roots = [(os.path.abspath(t), f"<tree{i}>") for i, t in enumerate(trees)]
    srcs = {os.path.abspath(x): f"<src{i}>" for i, x in enumerate(sources)}
    words = []
    for arg in cmd:
        a = os.path.abspath(arg) if os.path.isabs(arg) else arg
        if a in srcs:
            words.append(srcs[a])
            continue
        for root, name in roots:
            if a == root or a.startswith(root + os.sep):
                words.append(name + a[len(root):])
                break
        else:
            words.append(arg)
    h = hashlib.sha256("\0".join([*words, _compiler_identity(cmd[0]), *extra]).encode())
    for x, name in srcs.items():
        with open(x, "rb") as f:
            h.update(b"\0" + name.encode() + b"\0" + f.read())
    for root, name in roots:
        for folder, _, files in sorted(os.walk(root)):
            for fn in sorted(files):
                if fn.endswith((".h", ".hpp", ".inc", ".c", ".cpp")):   # what an #include can reach (lanes include .c)
                    path = os.path.join(folder, fn)
                    with open(path, "rb") as f:
                        h.update(b"\0" + (name + path[len(root):]).encode() + b"\0" + f.read())
    return h.hexdigest()[:16]


def _compile(kind, cmd, sources, out_name, trees=(), extra=()):
    """Compile ``sources`` with ``cmd`` (a list, the output path appended) into the cache, once per
    :func:`cache_key` (the sources' and trees' bytes, the command, the compiler, ``extra``).
    (path, None) or (None, the reason it could not)."""
    folder = os.path.join(cache_dir(), f"{out_name}-{cache_key(cmd, sources, trees, extra)}")
    exe = os.path.join(folder, out_name)
    if os.path.exists(exe):
        return exe, None
    os.makedirs(folder, exist_ok=True)
    tmp = exe + f".tmp{os.getpid()}"
    try:
        p = subprocess.run([*cmd, "-o", tmp], capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{kind} compile failed: {e}"
    if p.returncode != 0:
        first = next((ln for ln in p.stderr.splitlines() if "error" in ln), p.stderr.strip()[-300:])
        return None, f"{kind} compile failed: {first}"
    os.replace(tmp, exe)  # atomic: a concurrent run sees the whole program or none
    return exe, None


def build_ours(native=False):
    """The C harness of our kernels: (path, None) or (None, why not)."""
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if not cc:
        return None, "no C compiler (gcc or $CC)"
    sources = [os.path.join(CSRC, s) for s in C_SOURCES] + [os.path.join(HERE, "kernels_harness.c")]
    missing = [s for s in sources if not os.path.exists(s)]
    if missing:
        return None, f"the core's C sources are missing ({missing[0]})"
    flags = [*C_FLAGS, *(["-march=native"] if native else [])]
    return _compile("C harness", [cc, *flags, "-I", CSRC, *sources, "-lm"], sources, "kernels_harness",
                    trees=[CSRC])   # the headers the sources include lie under CSRC


def build_pinocchio(native=False):
    """The C++ harness of Pinocchio's kernels: (path, None) or (None, why not)."""
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        return None, "no C++ compiler (g++ or $CXX)"
    prefix = pin_prefix()
    if prefix is None:
        return None, "Pinocchio's headers not found (pip install pin)"
    inc, lib = os.path.join(prefix, "include"), os.path.join(prefix, "lib")
    if not os.path.isdir(os.path.join(inc, "eigen3", "Eigen")):
        return None, "Eigen's headers not found in the pin wheel's prefix (pip install cmeel-eigen)"
    source = os.path.join(HERE, "pinocchio_harness.cpp")
    flags = [*CXX_FLAGS, *(["-march=native"] if native else [])]
    cmd = [cxx, *flags, "-I", inc, "-I", os.path.join(inc, "eigen3"), source, "-L", lib, f"-Wl,-rpath,{lib}",
           "-lboost_serialization"]
    return _compile("C++ harness", cmd, [source], "pinocchio_harness",
                    extra=_dist_versions(("pin", "cmeel-eigen", "cmeel-boost")))


def write_model(model, path):
    """Our model's tables for kernels_harness.c (int32 counts and tables, then float64 tables)."""
    I = model.I  # noqa: E741  (the book's name; the 10 numbers as Model._build_c takes them)
    inertia10 = np.column_stack([I[:, 5, 5], I[:, 2, 4], I[:, 0, 5], I[:, 1, 3], I[:, 0, 0], I[:, 0, 1],
                                 I[:, 0, 2], I[:, 1, 1], I[:, 1, 2], I[:, 2, 2]])
    ints = [[model.nb, model.nq, model.nv], model.parent, model.jtype, model.q_start, model.nq_joint,
            model.v_start, model.nv_joint, model.dof_parent]
    floats = [model.tree_rotation, model.tree_translation, model.jaxis, model.jpitch, inertia10, model.S,
              model.armature, np.concatenate([np.zeros(3), model.gravity])]
    with open(path, "wb") as f:
        for x in ints:
            f.write(np.ascontiguousarray(x, dtype="<i4").tobytes())
        for x in floats:
            f.write(np.ascontiguousarray(x, dtype="<f8").tobytes())


def write_states(path, Q, V, A, T):
    with open(path, "wb") as f:
        f.write(np.array([len(Q), Q.shape[1], V.shape[1]], dtype="<i4").tobytes())
        for x in (Q, V, A, T):
            f.write(np.ascontiguousarray(x, dtype="<f8").tobytes())


def _run_harness(cmd, what):
    """{kernel: (best seconds per call, checksum, [each timed loop's seconds per call])} from a
    harness's lines, or raise naming the harness."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(f"{what} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    res, loops = {}, {}
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "loops":
            loops[parts[1]] = [float(x) for x in parts[2:]]
        elif len(parts) == 4 and parts[0] == "kernel":
            res[parts[1]] = (float(parts[2]), float(parts[3]), loops.get(parts[1], []))
    return res


def loop_counts(calibration, states, repeat, min_time):
    """The timed loops each harness runs per kernel in a round, the same for both sides: at least
    ``repeat``, and enough that the slower side's loops (``calibration``: each side's
    :func:`_run_harness` result) add up to ``min_time`` seconds; at most MAX_LOOPS."""
    counts = []
    for k in KERNELS:
        per_loop = max((c[k][0] for c in calibration if k in c), default=0.0) * states
        want = math.ceil(min_time / per_loop) if per_loop > 0 else repeat
        counts.append(int(min(MAX_LOOPS, max(repeat, want))))
    return counts


def time_harnesses(cmds, states, rounds, repeat, min_time):
    """Time the harnesses ``cmds`` ({side: (command, what)}) in interleaved rounds.

    One round of every harness with ``repeat`` loops first (a warm-up and the loops' calibration;
    its times dropped), then ``rounds`` rounds of one run each, the order reversed every round,
    each kernel with the same :func:`loop_counts` in every harness.  {side: {kernel: (best,
    checksum, median, loops)}}: seconds per call over all the rounds' loops."""
    sides = list(cmds)
    calibration = [_run_harness([*cmds[s][0], str(min(repeat, MAX_LOOPS))], cmds[s][1]) for s in sides]
    arg = ",".join(str(c) for c in loop_counts(calibration, states, repeat, min_time))
    samples = {s: {k: [] for k in KERNELS} for s in sides}
    checksums = {s: {} for s in sides}
    for r in range(rounds):
        for s in (sides if r % 2 == 0 else sides[::-1]):
            res = _run_harness([*cmds[s][0], arg], cmds[s][1])
            for k in KERNELS:
                samples[s][k] += res[k][2]
                checksums[s][k] = res[k][1]
    return {s: {k: (min(samples[s][k]), checksums[s][k], float(np.median(samples[s][k])), len(samples[s][k]))
                for k in KERNELS} for s in sides}


def callgrind_instructions(cmd, count, folder, tag):
    """{kernel: instructions per call} of a harness run under callgrind with ``count`` calls per kernel,
    or None when valgrind is missing or fails."""
    vg = shutil.which("valgrind")
    if not vg or count <= 0:
        return None
    out = os.path.join(folder, f"cg-{tag}.out")
    p = subprocess.run([vg, "--tool=callgrind", f"--callgrind-out-file={out}", *cmd, str(count)],
                       capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        return None
    res = {}
    for name in os.listdir(folder):
        if not name.startswith(f"cg-{tag}.out"):
            continue
        trigger, total = None, None
        with open(os.path.join(folder, name)) as f:
            for line in f:
                if line.startswith("desc: Trigger: Client Request:"):
                    trigger = line.split(":")[-1].strip()
                elif line.startswith(("summary:", "totals:")):
                    total = int(line.split()[1])
        if trigger in KERNELS and total is not None:
            res[trigger] = total / count
    return res


def compare(folder, nv, vp):
    """{kernel: (largest |ours − Pinocchio's| over the checked states and outputs, that over max |x|)}:
    Pinocchio's results (its order: its dof j is our vp[j]) mapped to ours."""
    res = {}
    for k in KERNELS:
        ours = np.fromfile(os.path.join(folder, f"ours_{k}.bin"))
        pin = np.fromfile(os.path.join(folder, f"pin_{k}.bin"))
        if ours.size != pin.size:
            raise RuntimeError(f"{k}: the harnesses wrote {ours.size} and {pin.size} numbers")
        mapped = np.empty_like(pin)
        if k in ("rnea", "aba"):
            mapped.reshape(-1, nv)[:, vp] = pin.reshape(-1, nv)
        else:
            mapped.reshape(-1, nv, nv)[:, vp[:, None], vp] = pin.reshape(-1, nv, nv)
        diff = np.max(np.abs(ours - mapped.ravel()))
        res[k] = (diff, diff / max(1.0, np.max(np.abs(mapped))))
    return res


def _python_timings(model, pm, pd, Q, V, A, T, Qp, Vp, Ap, Tp, calls, repeat, clock, min_time=0.0):
    """{kernel: ((best, median) of ours, (best, median) of Pinocchio's)}, seconds per call of the
    Python calls, one state a call, timed by :func:`multibody.bench.timing.interleaved`."""
    n = min(calls, len(Q))
    ours = list(zip(Q[:n], V[:n], A[:n], T[:n]))
    theirs = list(zip(Qp[:n], Vp[:n], Ap[:n], Tp[:n]))
    return {k: interleaved(*single_call_loops(k, model, pm, pd, ours, theirs), repeat, min_time, clock, n, MAX_LOOPS)
            for k in KERNELS}


def pin_to_cpu(cpu=None):
    """Pin this process (and the harnesses it starts) to one CPU: ``cpu``, or the last one it may use
    when None; -1 leaves it as it is.  (the CPU pinned to or None, the CPUs allowed before)."""
    if cpu == -1 or not hasattr(os, "sched_setaffinity"):
        return None, None
    before = os.sched_getaffinity(0)
    chosen = max(before) if cpu is None else cpu
    if chosen not in before:
        raise SystemExit(f"bench.pinocchio_cpp: --cpu {cpu}: this process may run on CPUs {sorted(before)} only")
    os.sched_setaffinity(0, {chosen})
    return chosen, before


def cpu_mhz():
    """The CPU's nominal clock in MHz (/proc/cpuinfo), or None."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    return float(line.split(":")[1])
    except OSError:
        pass
    return None


def run(robots=None, states=200, calls=500, repeat=5, count=20, native=False, rdir=None, out=print,
        clock=time.process_time, keep=None, rounds=7, min_time=0.03, cpu=None):
    """Build both harnesses (cached), run them and the Python calls on each robot; the rows as dicts.

    Each row: robot, nv, kernel, c_ours / cpp_pin / py_ours / py_pin (best seconds per call; None
    when that side was skipped) and their medians (``…_med``), c_loops (timed loops per harness),
    ir_ours / ir_pin (instructions per call, or None), checksum_ours / checksum_pin, diff / rel_diff
    (ours against Pinocchio's C++ results).  The method: the module's docstring."""
    pinned, before = pin_to_cpu(cpu)
    try:
        return _run(robots, states, calls, repeat, count, native, rdir, out, clock, keep, rounds, min_time, pinned)
    finally:
        if before is not None:
            os.sched_setaffinity(0, before)


def _run(robots, states, calls, repeat, count, native, rdir, out, clock, keep, rounds, min_time, pinned):
    import pinocchio as pin

    from multibody.model.urdf import load_urdf

    from .derivatives import _states
    from .urdf import _pin_state_map

    rdir = robots_dir(rdir)
    share = os.path.dirname(os.path.dirname(rdir))
    chosen = [r for r in ROBOTS if robots is None or r[0] in robots]
    if not chosen:
        raise SystemExit(f"bench.pinocchio_cpp: no robot among {robots}; known: {[r[0] for r in ROBOTS]}")
    ours_exe, why_ours = build_ours(native)
    pin_exe, why_pin = build_pinocchio(native)
    if why_ours:
        out(f"skipped: our C harness ({why_ours})")
    if why_pin:
        out(f"skipped: Pinocchio's C++ harness ({why_pin})")
    mhz = cpu_mhz()
    rng = np.random.default_rng(0)
    out(f"multibody vs Pinocchio {pin.__version__}, C/C++ harnesses and Python calls: {states} states; best loop "
        f"over {rounds} interleaved rounds of each harness and interleaved Python loops (≥ {repeat} loops, "
        f"≥ {min_time:g} s a round), CPU time per call (µs), "
        f"{f'pinned to CPU {pinned}' if pinned is not None else 'not pinned'}; ratios theirs ÷ ours; spread: "
        f"median loop over best − 1, %, ours/theirs; instructions per call by callgrind ({count} calls); "
        f"flops: RBDA table 10.1 per dof; {'-march=native' if native else 'portable -O3'}")
    out(f"{'robot':7s} {'nv':>3s} {'kernel':6s}| {'C ours':>7s} {'C++ pin':>7s} {'ratio':>5s} {'spread':>7s} | "
        f"{'py ours':>7s} {'py pin':>7s} {'ratio':>5s} {'spread':>7s} | {'Ir ours':>7s} {'Ir pin':>7s} | "
        f"{'flops':>6s} {'peak×':>5s} | {'max |Δ|':>8s}")
    rows = []
    for label, rel, floating in chosen:
        path = os.path.join(rdir, rel)
        model = load_urdf(path, floating=floating, package_dirs=[share], check_meshes=False)
        pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
        pd = pm.createData()
        q_map, v_map = _pin_state_map(model, pm)
        vp = v_map(np.arange(model.nv, dtype=float)).astype(int)
        Q, V, A, T = _states(model, states, rng)
        Qp, Vp, Ap, Tp = (np.ascontiguousarray(x) for x in (q_map(Q), v_map(V), v_map(A), v_map(T)))
        folder = keep or tempfile.mkdtemp(prefix="mb-bench-")
        os.makedirs(folder, exist_ok=True)
        try:
            write_model(model, os.path.join(folder, "model.bin"))
            write_states(os.path.join(folder, "states.bin"), Q, V, A, T)
            pm.saveToBinary(os.path.join(folder, "pin_model.bin"))
            write_states(os.path.join(folder, "pin_states.bin"), Qp, Vp, Ap, Tp)
            ours_cmd = [ours_exe, os.path.join(folder, "model.bin"), os.path.join(folder, "states.bin"), folder]
            pin_cmd = [pin_exe, os.path.join(folder, "pin_model.bin"), os.path.join(folder, "pin_states.bin"), folder]
            cmds = {}
            if ours_exe:
                cmds["ours"] = (ours_cmd, "our C harness")
            if pin_exe:
                cmds["pin"] = (pin_cmd, "Pinocchio's C++ harness")
            timed = time_harnesses(cmds, states, rounds, repeat, min_time) if cmds else {}
            c_ours, c_pin = timed.get("ours", {}), timed.get("pin", {})
            diffs = compare(folder, model.nv, vp) if ours_exe and pin_exe else {}
            ir_ours = callgrind_instructions([*ours_cmd, "1"], count, folder, "ours") if ours_exe else None
            ir_pin = callgrind_instructions([*pin_cmd, "1"], count, folder, "pin") if pin_exe else None
        finally:
            if keep is None:
                shutil.rmtree(folder, ignore_errors=True)
        py = _python_timings(model, pm, pd, Q, V, A, T, Qp, Vp, Ap, Tp, calls, repeat, clock, rounds * min_time)
        for k in KERNELS:
            c_o, c_p = c_ours.get(k, (None,) * 4), c_pin.get(k, (None,) * 4)
            row = dict(robot=label, nv=model.nv, kernel=k, c_ours=c_o[0], cpp_pin=c_p[0], c_ours_med=c_o[2],
                       cpp_pin_med=c_p[2], c_loops=c_o[3] or c_p[3], py_ours=py[k][0][0], py_pin=py[k][1][0],
                       py_ours_med=py[k][0][1], py_pin_med=py[k][1][1],
                       ir_ours=(ir_ours or {}).get(k), ir_pin=(ir_pin or {}).get(k),
                       checksum_ours=c_ours.get(k, (None, None))[1], checksum_pin=c_pin.get(k, (None, None))[1],
                       diff=diffs.get(k, (None,))[0], rel_diff=diffs.get(k, (None, None))[1],
                       flops=FLOPS_PER_DOF[k] * model.nv if k in FLOPS_PER_DOF else None)
            rows.append(row)
            out(_format_row(row, mhz))
        if c_ours and c_pin:  # each program's own checksum: sum of |x| over its results on the 4 states
            out(f"{'':7s} checksums C/C++: " + ", ".join(
                f"{SHORT[k]} {c_ours[k][1]:.10g}/{c_pin[k][1]:.10g}" for k in KERNELS))
    _summary(rows, mhz, out)
    return rows


def _us(x):
    return f"{x * 1e6:7.3f}" if x is not None else f"{'—':>7s}"


def _ratio(a, b):
    return f"{a / b:5.2f}" if a is not None and b else f"{'—':>5s}"


def _spread(best, median):
    return f"{min(999.0, 100 * (median / best - 1)):3.0f}" if best and median else f"{'—':>3s}"


def _peak(r, mhz):
    """A row's C time over the time its Featherstone flops take at the scalar peak (2 flops a cycle at
    ``mhz``), or None (no flop count, clock or C time)."""
    return r["c_ours"] / (r["flops"] / (2 * mhz * 1e6)) if r["flops"] and mhz and r["c_ours"] else None


def _ratios(rows, theirs, ours):
    """{"robot kernel": theirs ÷ ours} over the rows where both sides were timed."""
    return {f"{r['robot']} {SHORT[r['kernel']]}": r[theirs] / r[ours] for r in rows if r[theirs] and r[ours]}


def _format_row(r, mhz):
    ir = lambda x: f"{x:7.0f}" if x is not None else f"{'—':>7s}"  # noqa: E731
    peak = f"{_peak(r, mhz):5.2f}" if _peak(r, mhz) is not None else f"{'':5s}"
    diff = f"{r['diff']:8.1e}" if r["diff"] is not None else f"{'—':>8s}"
    flops = f"{r['flops']:6d}" if r["flops"] else f"{'':6s}"
    c_spread = f"{_spread(r['c_ours'], r['c_ours_med'])}/{_spread(r['cpp_pin'], r['cpp_pin_med'])}"
    py_spread = f"{_spread(r['py_ours'], r['py_ours_med'])}/{_spread(r['py_pin'], r['py_pin_med'])}"
    return (f"{r['robot']:7s} {r['nv']:3d} {SHORT[r['kernel']]:6s}| {_us(r['c_ours'])} {_us(r['cpp_pin'])} "
            f"{_ratio(r['cpp_pin'], r['c_ours'])} {c_spread:>7s} | {_us(r['py_ours'])} {_us(r['py_pin'])} "
            f"{_ratio(r['py_pin'], r['py_ours'])} {py_spread:>7s} | {ir(r['ir_ours'])} {ir(r['ir_pin'])} | {flops} "
            f"{peak} | {diff}")


def _summary(rows, mhz, out):
    c, c_med = (list(_ratios(rows, f"cpp_pin{m}", f"c_ours{m}").values()) for m in ("", "_med"))
    py, py_med = (list(_ratios(rows, f"py_pin{m}", f"py_ours{m}").values()) for m in ("", "_med"))
    if c:
        out(f"C kernels vs Pinocchio's C++: median {np.median(c):.2f}×, {sum(x >= 1 for x in c)}/{len(c)} rows "
            f"≤ Pinocchio's time (goal: every row, median ≥ 1.3×); worst {min(c):.2f}× "
            f"[on median loops: median {np.median(c_med):.2f}×, {sum(x >= 1 for x in c_med)}/{len(c_med)} rows, "
            f"worst {min(c_med):.2f}×]")
    if py:
        out(f"Python calls vs Pinocchio's Python: median {np.median(py):.2f}×, {sum(x >= 1.5 for x in py)}/{len(py)} "
            f"rows ≥ 1.5× (goal: every row, median ≥ 2×); worst {min(py):.2f}× [on median loops: median "
            f"{np.median(py_med):.2f}×, {sum(x >= 1.5 for x in py_med)}/{len(py_med)} rows, worst {min(py_med):.2f}×]")
    peaks = [x for x in (_peak(r, mhz) for r in rows) if x is not None]
    if peaks:
        out(f"RNEA/ABA time over Featherstone's flops at the scalar peak (2 flops/cycle, {mhz:.0f} MHz): "
            f"{min(peaks):.2f}–{max(peaks):.2f}× (goal ≤ 3×)")
    d = [r["rel_diff"] for r in rows if r["rel_diff"] is not None]
    if d:
        out(f"agreement of the C harness with Pinocchio's C++ (first 4 states, every output): largest difference "
            f"{max(d):.1e} relative to the outputs' size")


def goals(kernel_rows, robots=None, states=10_000, repeat=3, rdir=None, cpu=None, out=print):
    """Every goal of issue 37 from one run: after the kernels table (``kernel_rows``, :func:`run`'s), the
    10 000-state batches on one thread against a loop of Pinocchio's Python calls (``bench.urdf``: rnea, crba,
    aba; ``bench.derivatives``: ∂RNEA, ∂ABA, M⁻¹), a new process's first result (``bench.urdf.startup``) and
    the Panda's 10 s RK4 run against MuJoCo's rollout (``bench.simulate`` part 5, which needs ``mujoco``),
    all pinned to the kernels' CPU; then one line per goal, met or not, naming the rows that miss.
    Returns ``{goal: (met, what was measured)}``."""
    import multibody as mb

    from . import derivatives, simulate, urdf
    pinned, before = pin_to_cpu(cpu)
    threads = mb.get_num_threads()
    try:
        mb.set_num_threads(1)
        batch = urdf.run(states=states, repeat=repeat, rdir=rdir, out=out, robots=robots)
        batch += derivatives.run(states=states, repeat=repeat, rdir=rdir, out=out, robots=robots)
        start = urdf.startup(rdir, out=out)[urdf._STARTUP[0][0]]
        try:
            args = simulate.parser().parse_args(["--repeat", str(max(repeat, 5)), "--batch", "100"])
            ours, theirs = simulate.panda(args, np.random.default_rng(0))["rk4"]
            panda = theirs / ours
        except ImportError as e:   # no MuJoCo: the row says so
            out(f"skipped: the Panda's RK4 run against MuJoCo ({e})")
            panda = None
    finally:
        mb.set_num_threads(threads)
        if before is not None:
            os.sched_setaffinity(0, before)
    mhz = cpu_mhz()
    c, py = _ratios(kernel_rows, "cpp_pin", "c_ours"), _ratios(kernel_rows, "py_pin", "py_ours")
    b = {f"{r['robot']} {r['algo'].strip()}": r["pin_loop_ms"] / r["ours_batch1_ms"] for r in batch}
    peak = {f"{r['robot']} {SHORT[r['kernel']]}": _peak(r, mhz) for r in kernel_rows if _peak(r, mhz) is not None}

    def rows(ratios, ok, med=None):
        """(met, text) of a goal on every row (``ok``) and on the median (``med``)"""
        if not ratios:
            return False, "not measured"
        miss = [f"{k} {v:.2f}×" for k, v in ratios.items() if not ok(v)]
        m = float(np.median(list(ratios.values())))
        met = not miss and (med is None or med(m))
        return met, (f"{len(ratios) - len(miss)}/{len(ratios)} rows, median {m:.2f}×, "
                     f"lowest {min(ratios.values()):.2f}×" + (f"; missed: {', '.join(miss)}" if miss else ""))
    res = {
        "C kernel ≤ Pinocchio's C++ on every row, median ≥ 1.3×": rows(c, lambda v: v >= 1.0, lambda m: m >= 1.3),
        "Python single call ≥ 1.5× Pinocchio's on every row, median ≥ 2×": rows(py, lambda v: v >= 1.5,
                                                                               lambda m: m >= 2.0),
        f"{states} states on one thread ≥ 5× the Pinocchio loop on every row": rows(b, lambda v: v >= 5.0),
        "RNEA and ABA within 3× of Featherstone's flops at the scalar peak": (
            bool(peak) and max(peak.values()) <= 3.0,
            f"{min(peak.values()):.2f}–{max(peak.values()):.2f}×" if peak else "not measured"),
        "Panda's 10 s RK4 run ≥ 4× MuJoCo's rollout": (panda is not None and panda >= 4.0,
                                                       f"{panda:.2f}×" if panda is not None else "not measured"),
        "a new process's first result ≤ Pinocchio's (6-body tree, whole process)": (
            start["multibody"][0] <= start["pinocchio"][0],
            f"{start['multibody'][0]:.3f} s against {start['pinocchio'][0]:.3f} s"),
    }
    out(f"\nIssue 37's goals, this run{f' (pinned to CPU {pinned})' if pinned is not None else ''}:")
    for goal, (met, text) in res.items():
        out(f"  {'met    ' if met else 'NOT met'}  {goal}: {text}")
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m multibody.bench.pinocchio_cpp",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--robots", default=None, help="comma-separated labels (default: all)")
    ap.add_argument("--states", type=int, default=200)
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=5, help="timed loops at least, per kernel and side (default 5)")
    ap.add_argument("--rounds", type=int, default=7,
                    help="interleaved runs of each harness per robot (default 7)")
    ap.add_argument("--min-time", type=float, default=0.03,
                    help="seconds of timed loops per kernel and round for the slower side: more loops for "
                         "short kernels (default 0.03; the Python calls get rounds × this)")
    ap.add_argument("--cpu", type=int, default=None,
                    help="the CPU to pin the run to (default: the last this process may use; -1: not pinned)")
    ap.add_argument("--count", type=int, default=20, help="calls per kernel under callgrind (0: skip)")
    ap.add_argument("--native", action="store_true", help="both harnesses with -march=native")
    ap.add_argument("--robots-dir", default=None)
    ap.add_argument("--keep", default=None, metavar="DIR",
                    help="keep the harnesses' input and result files in DIR (one robot at a time)")
    ap.add_argument("--goals", action="store_true",
                    help="then the batches, the start-up and the Panda's RK4 run, and every goal of issue 37, "
                         "met or not")
    ap.add_argument("--build-only", action="store_true",
                    help="build (or find in the cache) both harnesses, print where they are, and stop")
    a = ap.parse_args(argv)
    if a.states < 1 or a.calls < 1 or a.repeat < 1 or a.rounds < 1 or a.count < 0:
        ap.error("--states, --calls, --repeat and --rounds must be positive, --count ≥ 0")
    if not 0 <= a.min_time <= 60:   # NaN fails too
        ap.error(f"--min-time: expected seconds in [0, 60], got {a.min_time}")
    if a.build_only:
        for what, (exe, why) in (("C harness", build_ours(a.native)), ("C++ harness", build_pinocchio(a.native))):
            print(f"{what}: {exe}" if exe else f"{what}: skipped ({why})")
        return
    try:
        a.robots_dir = robots_dir(a.robots_dir)   # a missing folder: one line, not a traceback
    except FileNotFoundError as e:
        raise SystemExit(f"bench.pinocchio_cpp: {e}") from None
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        raise SystemExit("bench.pinocchio_cpp: Pinocchio is not installed (pip install pin)") from None
    t = time.perf_counter()
    robots = a.robots.split(",") if a.robots else None
    rows = run(robots, a.states, a.calls, a.repeat, a.count, a.native, a.robots_dir, keep=a.keep, rounds=a.rounds,
               min_time=a.min_time, cpu=a.cpu)
    if a.goals:
        goals(rows, robots, rdir=a.robots_dir, cpu=a.cpu)
    print(f"total {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
