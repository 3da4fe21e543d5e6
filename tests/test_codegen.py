"""multibody.codegen: generated NumPy, compiled modules and the example main agree with symbolic
substitution and with the numeric core (crba, rnea) to 1e-12 on the seed models and random trees."""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody import codegen
from multibody.model.mechanism import Mechanism
from multibody.codegen.c_gen import reference_state, reference_values
from system_deps import private_codegen_cache  # noqa: F401 (an autouse fixture)

RTOL = 1e-12
HAVE_CC = shutil.which("gcc") is not None or shutil.which("cc") is not None


def close(a, b, rtol=RTOL):
    """|a − b| ≤ rtol · max|b| (relative to the largest entry of the array)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    scale = max(np.abs(b).max(initial=0.0), 1e-300)
    return a.shape == b.shape and np.abs(a - b).max(initial=0.0) <= rtol * scale


def parse_main_output(text):
    """{name: array} from the example main's printout."""
    out, lines = {}, text.splitlines()
    k = 0
    while k < len(lines):
        m = re.match(r"^(\w+) \((\d+) x (\d+)\) =$", lines[k])
        if m:
            r, c = int(m.group(2)), int(m.group(3))
            rows = [[float(x) for x in lines[k + 1 + i].split()] for i in range(r)]
            out[m.group(1)] = np.array(rows).reshape(r, c)
            k += r
        k += 1
    return out


def build_and_run(folder, exe="eom"):
    cc = shutil.which("gcc") or shutil.which("cc")
    srcs = sorted(f for f in os.listdir(folder) if f.endswith(".c"))
    res = subprocess.run([cc, "-Wall", "-Wextra", "-Werror", *srcs, "-o", exe, "-lm"], cwd=folder,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return subprocess.run([os.path.join(folder, exe)], capture_output=True, text=True, timeout=60)


def sympy_substitution(spec, state):
    """M, b, g, f by SymPy substitution into the EquationsOfMotion (independent of SymEngine)."""
    eom = spec.info["eom"]
    syms = [s for _, ss in spec.inputs for s in ss]
    vals = np.concatenate([state[nm] for nm in spec.input_names()])
    by_name = {str(s): sp.Float(float(v), 30) for s, v in zip(syms, vals)}
    repl = {s: by_name[s.name] for mat in (eom.M, eom.b, eom.g, eom.f) for s in mat.free_symbols}
    out = {}
    for key in ("M", "b", "g", "f"):
        mat = getattr(eom, key).xreplace(repl)
        out[key] = np.array([[float(sp.N(e, 20)) for e in row] for row in mat.tolist()], dtype=float)
    return out


SEEDS = ["ra3link", "ra3link_prismatic", "double_pendulum", "single_pendulum", "biped_upper_body",
         "flapping_flyer"]
BIG_SEEDS = ["starleth", "clemens_joint"]


def check_against_core(name, state, ref):
    """The numeric core (CRBA, RNEA) on the numeric seed model agrees with the generated terms.

    For a Mechanism (tree + TMT force elements) the mass matrix is the tree's; b and g also hold
    the springs and forces, so only M is compared there."""
    numeric = getattr(mb.models, name)()
    tree = numeric.model if isinstance(numeric, Mechanism) else numeric
    M, b, g = core_terms(tree, state["q"], state["dq"])
    assert close(M, ref["M"]), "core M"
    if tree is numeric:
        assert close(b, ref["b"].ravel()) and close(g, ref["g"].ravel()), "core b, g"


def all_backends_agree(spec, state, ref, tmp_path):
    args = [state[nm] for nm in spec.input_names()]
    numpy_out = codegen.to_numpy(spec)(*args)
    compiled_out = codegen.compile(spec)(*args)
    codegen.to_c(spec, tmp_path)
    run = build_and_run(tmp_path)
    assert run.returncode == 0 and "OK: matches the reference" in run.stdout, run.stdout
    printed = parse_main_output(run.stdout)
    for key in ("M", "b", "g", "f"):
        r = ref[key] if key == "M" else ref[key].ravel()
        assert close(numpy_out[key], r), f"numpy {key}"
        assert close(compiled_out[key], r), f"compiled {key}"
        assert close(printed[key].reshape(r.shape), r), f"main.c {key}"


def core_terms(model, q, qd):
    """M, b, g from the numeric core: CRBA and RNEA (b = RNEA(q, q̇, 0) − g, g = RNEA(q, 0, 0))."""
    z = np.zeros(model.nv)
    g = mb.rnea(model, q, z, z)
    return mb.crba(model, q), mb.rnea(model, q, qd, z) - g, g


@pytest.mark.skipif(not HAVE_CC, reason="needs a C compiler")
@pytest.mark.parametrize("name", SEEDS)
def test_seed_model_all_backends_agree(name, tmp_path):
    """Parameters stay symbols (the ``param`` input, proNEu style) and take the seed's values."""
    spec = codegen.as_spec(getattr(mb.models, name)(symbolic=True))
    assert len(spec.defaults["param"]) > 0
    state = reference_state(spec)
    ref = sympy_substitution(spec, state)
    se_ref = reference_values(spec, state)      # SymEngine substitution: the example main's reference
    for key in ref:
        assert close(se_ref[key], ref[key]), key
    all_backends_agree(spec, state, ref, tmp_path)
    check_against_core(name, state, ref)
    M = ref["M"]
    assert np.allclose(M, M.T, rtol=0, atol=1e-13 * np.abs(M).max())


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_CC, reason="needs a C compiler")
@pytest.mark.parametrize("name", BIG_SEEDS)
def test_big_seed_models_all_backends_agree(name, tmp_path):
    spec = codegen.as_spec(getattr(mb.models, name)(symbolic=True))
    state = reference_state(spec)
    ref = reference_values(spec, state)        # SymEngine substitution of the un-CSE'd expressions
    all_backends_agree(spec, state, ref, tmp_path)
    check_against_core(name, state, ref)
    assert spec.count_ops(cse=True) < spec.count_ops(cse=False)


@pytest.mark.skipif(not HAVE_CC, reason="needs a C compiler")
def test_numeric_seed_model_bakes_parameters_in():
    spec = codegen.as_spec(mb.models.ra3link())
    assert spec.input_size("param") == 0
    rng = np.random.default_rng(5)
    q, qd = rng.uniform(-2, 2, (2, 3))
    M, b, g = core_terms(mb.models.ra3link(), q, qd)
    out = codegen.compile(spec)(q, qd)
    assert close(out["M"], M) and close(out["b"], b) and close(out["g"], g)


@pytest.mark.skipif(not HAVE_CC, reason="needs a C compiler")
@pytest.mark.parametrize("seed", range(4))
def test_random_auto_trees_match_core(seed):
    rng = np.random.default_rng(seed)
    nb = int(rng.integers(2, 6))
    model = mb.models.auto_tree(nb, bf=float(rng.uniform(1, 3)), skew=float(rng.uniform(0, 1)),
                                taper=float(rng.uniform(0.7, 1.0)))
    spec = codegen.as_spec(model)
    fnp, fc = codegen.to_numpy(spec), codegen.compile(spec)
    Q, QD = rng.uniform(-np.pi, np.pi, (20, model.nq)), rng.uniform(-3, 3, (20, model.nv))
    out_np, out_c = fnp(Q, QD), fc(Q, QD)                  # batches of 20 states
    for k in range(20):
        M, b, g = core_terms(model, Q[k], QD[k])
        for out in (out_np, out_c):
            assert close(out["M"][k], M) and close(out["b"][k], b) and close(out["g"][k], g)


@pytest.mark.skipif(not HAVE_CC, reason="needs a C compiler")
def test_batch_equals_single_states_and_shares_parameters():
    """A state alone (one(), the kernel one state wide) and in a batch (the kernel CG_W states wide) agree to
    rounding: the same expressions, the compiler free to fuse a·b + c differently in the two widths."""
    spec = codegen.as_spec(mb.models.ra3link(symbolic=True))
    f, fnp = codegen.compile(spec), codegen.to_numpy(spec)
    rng = np.random.default_rng(0)
    Q, QD, TAU = rng.normal(size=(3, 500, 3))
    P = spec.defaults["param"] * rng.uniform(0.5, 1.5, (500, len(spec.defaults["param"])))
    batch = f(Q, QD, TAU, P)
    batch_np = fnp(Q, QD, TAU, P)
    for k in (0, 17, 499):
        one = f(Q[k], QD[k], TAU[k], P[k])
        for key in one:
            assert close(batch[key][k], one[key], rtol=1e-14)
            assert close(batch_np[key][k], one[key])
    shared = f(Q.reshape(20, 25, 3), QD.reshape(20, 25, 3))  # default parameters shared by all states
    assert shared["M"].shape == (20, 25, 3, 3)
    assert close(shared["M"].reshape(500, 3, 3)[42], f(Q[42], QD[42])["M"], rtol=1e-14)
    assert np.array_equal(f(Q[3], qd=QD[3], params=spec.defaults["param"])["b"], f(Q[3], QD[3])["b"])


@pytest.mark.parametrize("mixed", [False, True])
def test_generated_c_builds_as_cplusplus(tmp_path, mixed):
    """proNEu's manual builds its generated code with g++: C++ has no `restrict` and needs C linkage
    when the function is compiled as C and called from C++ (``mixed``)."""
    from system_deps import require_program      # Debian's g++ (tools/system-deps); fails under CI
    require_program(["g++"], "g++", "the generated C built as C++")
    files = codegen.to_c(mb.models.ra3link(symbolic=True), tmp_path)
    flags = ["-Wall", "-Wextra", "-Werror"]
    if mixed:
        subprocess.run(["gcc", *flags, "-c", "eom.c", "-o", "eom.o"], cwd=tmp_path, check=True)
        cmd = ["g++", *flags, "-x", "c++", "main.c", "-x", "none", "eom.o", "-o", "eom", "-lm"]
    else:
        cmd = ["g++", *flags, "-x", "c++", "eom.c", "main.c", "-o", "eom", "-lm"]
    res = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    run = subprocess.run([str(tmp_path / "eom")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "OK: matches the reference" in run.stdout, run.stdout
    assert set(files) >= {"c", "h", "main"}


def test_module_source_comes_from_the_template_filled_once():
    """templates/module.c (package data) is filled in one pass: an inserted text is never read
    again for placeholders, and every placeholder is filled."""
    from importlib import resources

    from multibody.codegen import compiled

    text = resources.files("multibody.codegen").joinpath("templates", "module.c").read_text(encoding="utf-8")
    names = {m.group("named") or m.group("braced") for m in compiled._module_template().pattern.finditer(text)
             if m.group("named") or m.group("braced")}
    assert names == {"modname", "outputs", "model", "kernel", "nin", "nout", "in_names", "in_sizes", "out_names",
                     "out_sizes", "out_ndim", "out_rows", "out_cols"}
    filled = compiled._module_template().substitute({name: "${nin}$modname" for name in names})
    assert "${nin}$modname" in filled and filled.count("${nin}$modname") == text.count("$")
    x, y = sp.symbols("x y")
    from multibody.codegen.spec import make_spec
    source = compiled.module_source(make_spec({"v": sp.Matrix([x * y, x + y])}, {"q": [x, y]}, name="t"), "m_t")
    assert "$" not in source and "PyInit_m_t(void)" in source and "#define CG_NIN 1" in source


@pytest.fixture(scope="module")
def exported_double_pendulum(tmp_path_factory):
    import importlib.util
    d = tmp_path_factory.mktemp("export")
    path = codegen.export(mb.models.double_pendulum(), d, "dpmod")
    spec = importlib.util.spec_from_file_location("dpmod", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("n, stride", [(2**62, 2), (2**61, 4), (3, 2**62)])
def test_run_refuses_sizes_that_overflow_instead_of_reading_past_the_arrays(exported_double_pendulum, n, stride):
    """run(n, ...) computed n·size and (n − 1)·stride unchecked: run(2**62, ...) segfaulted."""
    mod = exported_double_pendulum
    ins = [np.zeros(4), stride, np.zeros(4), stride, np.zeros(4), stride, np.zeros(0), 0]
    outs = [np.zeros(8), np.zeros(4), np.zeros(4), np.zeros(4)]
    with pytest.raises(ValueError, match=r"q: .*(more values than an array can hold|expected at least)"):
        mod.run(n, *ins, *outs)


@pytest.mark.parametrize("args, says", [
    ((np.zeros(2),), r"one: expected 4 inputs: q \(2\), dq \(2\), tau \(2\), param \(0\); got 1 arguments"),
    ((np.zeros(2), np.zeros(2), None, np.zeros(0)), "one: input tau: expected 2 numbers, got None"),
    ((np.zeros(3), np.zeros(2), np.zeros(2), np.zeros(0)), "one: input q: expected a 1-D array of 2 numbers"),
])
def test_an_exported_module_s_one_names_its_inputs(exported_double_pendulum, args, says):
    with pytest.raises(TypeError, match=says):
        exported_double_pendulum.one(*args)
    good = exported_double_pendulum.one(np.array([0.3, -0.2]), np.zeros(2), np.zeros(2), np.zeros(0))
    assert good["M"].shape == (2, 2)
