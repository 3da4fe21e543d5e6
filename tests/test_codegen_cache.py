"""multibody.codegen: the on-disk cache of compiled modules, C source properties, bad input, CLI."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody import codegen
from multibody.codegen import cli as codegen_cli

HAVE_CC = shutil.which("gcc") is not None or shutil.which("cc") is not None
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="needs a C compiler")
SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def small_spec(scale=1.0):
    x, y, k = sp.symbols("x y k")
    return codegen.make_spec({"out": sp.Matrix([[k * sp.sin(x) * y + scale, 0], [sp.cos(x) ** 2, k * y]])},
                             {"x": [x], "y": [y], "k": [k]}, name="small", defaults={"k": [2.0]})


# ---- cache ------------------------------------------------------------------------------------
@needs_cc
def test_new_process_loads_from_cache_without_compiling(tmp_path, monkeypatch):
    # a compiler wrapper that logs every compilation (not the --version probe of the cache key, nor
    # the probe of whether the compiler takes -march=native)
    log = tmp_path / "compilations.log"
    wrapper = tmp_path / "logging-cc"
    wrapper.write_text(f"#!/bin/sh\ncase \"$*\" in --version|*mb-native-*) ;; *) echo \"$@\" >> {log};; esac\n"
                       f"exec {shutil.which('gcc') or shutil.which('cc')} \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("CC", str(wrapper))
    cache = tmp_path / "cache"
    f = codegen.compile(small_spec(), cache_dir=cache)
    runs = log.read_text().splitlines()   # one build: the module's two parts (batch and one()), then the link
    assert f.built and len(runs) == 3 and sum("-DCG_ONE_STATE_PART" in r for r in runs) == 1
    script = textwrap.dedent(f"""
        import sympy as sp, numpy as np
        from multibody import codegen
        x, y, k = sp.symbols("x y k")
        spec = codegen.make_spec({{"out": sp.Matrix([[k * sp.sin(x) * y + 1.0, 0], [sp.cos(x) ** 2, k * y]])}},
                                 {{"x": [x], "y": [y], "k": [k]}}, name="small", defaults={{"k": [2.0]}})
        f = codegen.compile(spec, cache_dir={str(cache)!r})
        print(f.built, f(np.array([0.5]), np.array([2.0]))["out"][0, 0])
    """)
    env = dict(os.environ, PYTHONPATH=SRC)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    built, value = res.stdout.split()
    assert built == "False" and len(log.read_text().splitlines()) == 3   # nothing compiled
    assert abs(float(value) - (2.0 * np.sin(0.5) * 2.0 + 1.0)) < 1e-15


BUILD_SMALL = textwrap.dedent("""
    import sys, sympy as sp
    from multibody import codegen
    x, y, k = sp.symbols("x y k")
    spec = codegen.make_spec({"out": sp.Matrix([[k * sp.sin(x) * y + 1.0, 0], [sp.cos(x) ** 2, k * y]])},
                             {"x": [x], "y": [y], "k": [k]}, name="small", defaults={"k": [2.0]})
    print(codegen.compile(spec, cache_dir=sys.argv[1]).path)
""")


@needs_cc
def test_corrupted_cache_entry_is_rebuilt_not_loaded(tmp_path):
    # another process built the entry (a library mapped into this process must not be truncated)
    env = dict(os.environ, PYTHONPATH=SRC)
    res = subprocess.run([sys.executable, "-c", BUILD_SMALL, str(tmp_path)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    path = res.stdout.strip()
    with open(path, "r+b") as fh:                      # truncate the library, as a crash mid-copy would
        fh.truncate(100)
    with pytest.warns(RuntimeWarning, match="corrupted or incomplete"):
        g = codegen.compile(small_spec(), cache_dir=tmp_path)
    assert g.built
    assert np.isclose(g(np.array([0.5]), np.array([2.0]))["out"][0, 0], 2.0 * np.sin(0.5) * 2.0 + 1.0)
    # the record now points at a complete library whose checksum matches
    rec = json.load(open(os.path.join(tmp_path, os.path.basename(g.path).split("-")[0] + ".json")))
    from multibody.codegen.cache import sha256_file

    assert sha256_file(os.path.join(tmp_path, rec["file"])) == rec["sha256"]


@needs_cc
def test_concurrent_builders_do_not_collide(tmp_path):
    script = textwrap.dedent(f"""
        import sympy as sp, numpy as np
        from multibody import codegen
        x = sp.symbols("x")
        terms = sum(sp.sin(j * x) * sp.cos((j + 1) * x) for j in range(1, 120))
        spec = codegen.make_spec({{"y": sp.Matrix([terms, terms ** 2])}}, {{"x": [x]}}, name="race")
        f = codegen.compile(spec, cache_dir={str(tmp_path)!r})
        print(repr(float(f(np.array([0.3]))["y"][1])))
    """)
    env = dict(os.environ, PYTHONPATH=SRC)
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for _ in range(3)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    values = {o.strip() for o, _ in outs}
    assert len(values) == 1
    x = 0.3
    expect = sum(np.sin(j * x) * np.cos((j + 1) * x) for j in range(1, 120)) ** 2
    assert abs(float(values.pop()) - expect) < 1e-12 * abs(expect)
    leftovers = [n for n in os.listdir(tmp_path) if n.startswith((".build", ".tmp"))]
    assert not leftovers


@needs_cc
def test_unwritable_cache_dir_falls_back_to_temp_with_warning(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    with pytest.warns(RuntimeWarning, match="not writable"):
        f = codegen.compile(small_spec(3.0), cache_dir=blocker / "cache")
    assert not str(f.path).startswith(str(blocker))
    assert np.isclose(f(np.array([0.0]), np.array([1.0]))["out"][0, 0], 3.0)


def test_no_c_compiler_says_so_and_points_to_numpy(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/bin/cc")
    with pytest.raises(codegen.CompilerNotFoundError, match="to_numpy"):
        codegen.compile(small_spec(4.0))
    monkeypatch.delenv("CC")
    monkeypatch.setenv("PATH", "")
    with pytest.raises(codegen.CompilerNotFoundError, match="no C compiler found.*to_numpy"):
        codegen.compile(small_spec(5.0))


# ---- C source --------------------------------------------------------------------------------
@needs_cc
def test_c_source_zeroes_outputs_uses_const_temporaries_and_caller_names(tmp_path):
    files = codegen.to_c(mb.models.ra3link(symbolic=True), tmp_path, prefix="arm",
                         arrays={"M": "MpNE", "b": "bpNE", "g": "gpNE", "f": "fpNE", "q": "x"})
    c = open(files["c"]).read()
    assert "for (cg_k = 0; cg_k < 9; ++cg_k) MpNE[cg_k] = 0.0;" in c
    assert "const double cg_t0 = " in c
    assert "void arm_eval(const double *restrict x, const double *restrict dq" in c
    assert "MpNE[0] = " in c and "q[" not in c.replace("dq[", "")
    h = open(files["h"]).read()
    assert "#define ARM_SIZE_MpNE 9" in h
    cc = shutil.which("gcc") or shutil.which("cc")
    build = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "arm.c", "main.c", "-o",
                            "arm", "-lm"], cwd=tmp_path, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    assert subprocess.run(["./arm"], cwd=tmp_path, capture_output=True).returncode == 0


@needs_cc
def test_example_main_exits_nonzero_when_values_differ(tmp_path):
    files = codegen.to_c(mb.models.double_pendulum(), tmp_path)
    main = open(files["main"]).read()
    ref = float(files.reference["M"][0, 0])
    bad = ref * (1 + 1e-9)
    main = main.replace(f"cg_ref_M[4] = {{{ref!r}", f"cg_ref_M[4] = {{{bad!r}")
    assert repr(bad) in main
    (tmp_path / "main.c").write_text(main)
    cc = shutil.which("gcc") or shutil.which("cc")
    subprocess.run([cc, "eom.c", "main.c", "-o", "eom", "-lm"], cwd=tmp_path, check=True)
    run = subprocess.run(["./eom"], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 1 and "M DIFFERS" in run.stdout


# ---- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize("arrays, match", [
    ({"M": "2M"}, "'2M' is not a valid"),
    ({"M": "double"}, "'double' is reserved"),
    ({"M": "cg_tmp"}, "'cg_tmp' is reserved"),
    ({"M": "b"}, "'b' is used twice"),
    ({"q": "dq"}, "'dq' is used twice"),
    ({"X": "Y"}, "no input or output named X"),
    ({"M": "eom_eval"}, "clashes with the function name"),
])
def test_bad_array_names_are_named(arrays, match, tmp_path):
    with pytest.raises(ValueError, match=match):
        codegen.to_c(mb.models.double_pendulum(), tmp_path, arrays=arrays)


def test_bad_prefix_and_foreign_symbols_are_named(tmp_path):
    with pytest.raises(ValueError, match="'my-eom' is not a valid"):
        codegen.to_c(mb.models.double_pendulum(), tmp_path, prefix="my-eom")
    x, a, b = sp.symbols("x a b")
    with pytest.raises(ValueError, match="not inputs: a, b"):
        codegen.make_spec({"y": sp.Matrix([a * x + b])}, {"x": [x]})
    eom = mb.symbolic.derive(mb.models.double_pendulum())
    stray = eom.subs({})
    stray.M = stray.M + sp.eye(2) * sp.Symbol("stiffness")
    with pytest.raises(ValueError, match="not inputs: stiffness"):
        codegen.to_numpy(stray)
    with pytest.raises(TypeError, match="expected EquationsOfMotion"):
        codegen.to_numpy(42)
    with pytest.raises(ValueError, match="no default value for parameter"):
        codegen.to_numpy(mb.symbolic.derive(mb.models.ra3link(symbolic=True)), values={"l1": 1.0})


@needs_cc
def test_bad_call_arguments_are_named():
    f = codegen.compile(mb.models.double_pendulum())
    with pytest.raises(ValueError, match=r"dq: expected shape \(2,\)"):
        f(np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError, match="q: contains NaN"):
        f(np.array([np.nan, 0.0]), np.zeros(2))
    with pytest.raises(TypeError, match="missing input 'dq'"):
        f(np.zeros(2))
    with pytest.raises(TypeError, match="unexpected argument 'qdot'"):
        f(np.zeros(2), qdot=np.zeros(2))
    with pytest.raises(ValueError, match="does not broadcast"):
        f(np.zeros((3, 2)), np.zeros((4, 2)))
    g = codegen.to_numpy(mb.models.double_pendulum())
    with pytest.raises(ValueError, match="tau: contains NaN"):
        g(np.zeros(2), np.zeros(2), np.array([0.0, np.inf]))


# ---- CSE and operation counts -----------------------------------------------------------------
def test_cse_reduces_operations_and_keeps_values():
    spec = codegen.as_spec(mb.models.ra3link())
    assert spec.count_ops(cse=True) < spec.count_ops(cse=False)
    x = sp.Symbol("x")
    assert codegen.count_ops([x ** 3 + sp.sin(x) * 2]) == 5   # x*x*x (2), sin (1), *2 (1), + (1)


# ---- CLI ---------------------------------------------------------------------------------------
def run_cli(argv):
    parser = argparse.ArgumentParser()
    codegen_cli.add_parser(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.func(args)


@needs_cc
def test_cli_writes_c_numpy_and_compiled(tmp_path, capsys):
    assert run_cli(["codegen", "ra3link", "--lang", "c", "--out", str(tmp_path / "c"), "--no-progress"]) == 0
    assert sorted(os.listdir(tmp_path / "c")) == ["eom.c", "eom.h", "main.c"]
    assert run_cli(["codegen", "planar:3", "--lang", "numpy", "--out", str(tmp_path / "py"), "--prefix", "arm",
                    "--no-progress"]) == 0
    ns = {}
    exec(open(tmp_path / "py" / "arm.py").read(), ns)
    q = np.array([0.1, 0.2, 0.3])
    out = ns["arm"](q, np.zeros(3), np.zeros(3), np.zeros(0))
    assert np.allclose(out["M"], mb.crba(mb.models.planar(3), q), rtol=1e-12, atol=1e-14)
    assert run_cli(["codegen", "double_pendulum", "--lang", "compiled", "--out", str(tmp_path / "so"),
                    "--no-progress"]) == 0
    assert any(n.endswith(".so") or n.endswith(".pyd") for n in os.listdir(tmp_path / "so"))
    assert "operations after CSE" in capsys.readouterr().out


def test_cli_bad_model_is_a_clear_error(tmp_path, capsys):
    assert run_cli(["codegen", "no_such_model", "--out", str(tmp_path), "--no-progress"]) == 2
    assert "no_such_model" in capsys.readouterr().err


def test_import_multibody_does_not_load_sympy_and_codegen_is_lazy():
    script = ("import sys, multibody as mb; a = 'sympy' in sys.modules or 'symengine' in sys.modules; "
              "f = mb.codegen.to_numpy; print(a, 'symengine' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=SRC))
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "True"]


@needs_cc
def test_batch_loop_releases_the_gil():
    """While ``run`` loops over a batch in C, another Python thread runs: it sees the output half
    written (first state done, last state not yet), which it can only see inside the call.  With
    the GIL held through the loop it never could.  No clock: the batch grows, then the call is
    repeated, until the other thread has seen it."""
    import threading

    f = codegen.compile(mb.models.ra3link(symbolic=True))
    seen = threading.Event()

    def attempt(n):
        Q = np.random.default_rng(0).uniform(-1, 1, (n, 3))
        args = [n]
        for name, x, size in zip(f.input_names, f._filled, f.sizes):  # q, q̇ per state; the rest shared
            args += [Q, size] if name in ("q", "dq") else [np.asarray(x, dtype=float), 0]
        outs = [np.full((n,) + shp, np.nan) for shp in f._out_shapes]
        first, last = outs[0].reshape(n, -1)[0], outs[0].reshape(n, -1)[-1]
        stop = threading.Event()

        def watch():                                  # runs whenever it holds the GIL
            while not stop.is_set():
                if not np.isnan(first).any() and np.isnan(last).all():
                    seen.set()
                    return

        watcher = threading.Thread(target=watch)
        watcher.start()
        f._run(*args, *outs)                          # the C loop, in this thread
        stop.set()
        watcher.join()
        assert not np.isnan(last).any()               # the call did finish every state

    n = 1 << 12
    for _ in range(60):
        attempt(n)
        if seen.is_set():
            break
        n = min(2 * n, 1 << 18)
    assert seen.is_set(), "no other thread ran while the batch was inside C: the GIL was held"
