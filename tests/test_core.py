"""The C core: armature in every algorithm, threads, the boundary on odd arrays, module hygiene.

Armature is checked by the algorithms against each other (RBDA's identities, now with a rotor
inertia on every dof): CRBA = CRBA without armature + diag(armature); CRBA's columns = RNEA(q, 0,
e_k) − RNEA(q, 0, 0); ABA, FDcrb, fd_sparse and HD invert RNEA; FDfb inverts IDfb; EnerMo's KE =
½ q̇ᵀ H q̇.
"""
from __future__ import annotations

import importlib
import pkgutil
import types
from dataclasses import replace

import numpy as np
import pytest

import multibody as mb
from multibody.core import _core

RNG = np.random.default_rng(7)


def _state(model, rng=RNG):
    q = rng.uniform(-1, 1, model.nq)
    for i in range(model.nb):  # unit quaternions where there are any
        jt, s = model.jtype[i], model.q_start[i]
        if jt in (mb.JointType.SPHERICAL, mb.JointType.FREE):
            o = s + (3 if jt == mb.JointType.FREE else 0)
            quat = rng.normal(size=4)
            q[o:o + 4] = quat / np.linalg.norm(quat)
    return q, rng.normal(size=model.nv), rng.normal(size=model.nv)


def _with_armature(model, rng=RNG):
    return replace(model, armature=rng.uniform(0.05, 0.5, model.nv))


MODELS = {
    "tree": lambda: mb.models.auto_tree(7, bf=2, skew=0.4),
    "vee (free joint)": lambda: mb.models.vee(),
    "planar chain": lambda: mb.models.planar(4),
}


@pytest.fixture(params=sorted(MODELS))
def arm_model(request):
    return _with_armature(MODELS[request.param]())


def test_armature_adds_to_the_diagonal_of_H(arm_model):
    q, _, _ = _state(arm_model)
    bare = replace(arm_model, armature=None)
    np.testing.assert_allclose(mb.crba(arm_model, q), mb.crba(bare, q) + np.diag(arm_model.armature),
                               rtol=1e-12, atol=1e-12)


def test_crba_columns_are_rnea_differences_with_armature(arm_model):
    q, _, _ = _state(arm_model)
    z = np.zeros(arm_model.nv)
    H = mb.crba(arm_model, q)
    g = mb.rnea(arm_model, q, z, z)
    cols = mb.rnea(arm_model, np.tile(q, (arm_model.nv, 1)), np.zeros((arm_model.nv, arm_model.nv)),
                   np.eye(arm_model.nv)) - g
    np.testing.assert_allclose(cols.T, H, rtol=1e-10, atol=1e-10)


def test_forward_dynamics_invert_rnea_with_armature(arm_model):
    q, qd, qdd = _state(arm_model)
    fe = RNG.normal(size=(arm_model.nb, 6))
    tau = mb.rnea(arm_model, q, qd, qdd, fe)
    for fd in (mb.aba, mb.fd_crb, mb.fd_sparse):
        np.testing.assert_allclose(fd(arm_model, q, qd, tau, fe), qdd, rtol=1e-9, atol=1e-9)
    H, C = mb.hand_c(arm_model, q, qd, fe)
    np.testing.assert_allclose(H @ qdd + C, tau, rtol=1e-10, atol=1e-10)
    flags = np.arange(arm_model.nb) % 2 == 0
    qdd_out, tau_out = mb.hybrid_dynamics(arm_model, flags, q, qd, np.where(True, qdd, 0), tau, fe)
    np.testing.assert_allclose(qdd_out, qdd, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(tau_out, tau, rtol=1e-9, atol=1e-9)


def test_kinetic_energy_includes_the_rotors(arm_model):
    q, qd, _ = _state(arm_model)
    H = mb.crba(arm_model, q)
    np.testing.assert_allclose(mb.energy(arm_model, q, qd).KE, 0.5 * qd @ H @ qd, rtol=1e-12)


def test_floating_base_with_armature_fdfb_inverts_idfb():
    model = _with_armature(mb.models.floatbase(mb.models.auto_tree(4, bf=2, skew=0.3)))
    model = replace(model, armature=np.r_[np.zeros(6), model.armature[6:]])
    n = model.nv - 6
    x = np.r_[RNG.normal(size=4), RNG.normal(size=3), RNG.normal(size=6)]
    x[:4] /= np.linalg.norm(x[:4])
    q, qd, qdd = RNG.normal(size=model.nq - 6), RNG.normal(size=n), RNG.normal(size=n)
    xd, tau = mb.id_fb(model, x, q, qd, qdd)
    xd2, qdd2 = mb.fd_fb(model, x, q, qd, tau)
    np.testing.assert_allclose(qdd2, qdd, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(xd2, xd, rtol=1e-9, atol=1e-9)
    bare = replace(model, armature=None)
    _, tau0 = mb.id_fb(bare, x, q, qd, qdd)
    assert not np.allclose(tau, tau0)  # the armature matters


# --------------------------------------------------------------------------- threads
def test_threads_give_the_same_batch_results():
    model = mb.models.auto_tree(9, bf=2, skew=0.2)
    N = 1000  # above the parallel threshold
    Q, QD, QDD = RNG.normal(size=(N, 9)), RNG.normal(size=(N, 9)), RNG.normal(size=(N, 9))
    n0 = mb.get_num_threads()
    try:
        mb.set_num_threads(1)
        one = mb.rnea(model, Q, QD, QDD), mb.aba(model, Q, QD, QDD), mb.crba(model, Q)
        mb.set_num_threads(3)
        assert mb.get_num_threads() == 3
        three = mb.rnea(model, Q, QD, QDD), mb.aba(model, Q, QD, QDD), mb.crba(model, Q)
    finally:
        mb.set_num_threads(n0)
    for a, b in zip(one, three):
        np.testing.assert_array_equal(a, b)
    for k in (0, 500, 999):
        np.testing.assert_allclose(one[0][k], mb.rnea(model, Q[k], QD[k], QDD[k]), rtol=0, atol=0)


def test_set_num_threads_refuses_nonsense():
    with pytest.raises(ValueError, match="n: expected a number of threads ≥ 1"):
        mb.set_num_threads(0)
    with pytest.raises(TypeError, match="n: expected an integer"):
        mb.set_num_threads(1.5)


def test_bad_state_found_in_a_parallel_batch_is_the_first_one():
    model = mb.models.auto_tree(4)
    Q = np.zeros((2000, 4))
    QD = np.zeros((2000, 4))
    Q[1500, 0] = np.nan
    QD[100, 1] = np.inf  # earlier state, other argument
    with pytest.raises(ValueError, match="^qd: contains NaN or inf"):
        mb.rnea(model, Q, QD, np.zeros(4))


# --------------------------------------------------------------------------- the boundary
def test_integer_float32_noncontiguous_and_readonly_inputs_are_converted():
    model = mb.models.auto_tree(5, skew=0.3)
    q, qd, qdd = _state(model)
    ref = mb.rnea(model, q, qd, qdd)
    ro = q.copy()
    ro.setflags(write=False)
    strided = np.zeros((5, 2))
    strided[:, 0] = q
    for qq in (q.astype(np.float32), ro, strided[:, 0], list(q)):
        np.testing.assert_allclose(mb.rnea(model, qq, qd, qdd), ref, rtol=1e-6, atol=1e-6)
    assert mb.rnea(model, np.zeros(5, dtype=int), qd, qdd).shape == (5,)


def test_zero_size_and_mismatched_batches():
    model = mb.models.auto_tree(3)
    assert mb.rnea(model, np.zeros((0, 3)), np.zeros(3), np.zeros(3)).shape == (0, 3)
    assert mb.crba(model, np.zeros((2, 0, 3))).shape == (2, 0, 3, 3)
    with pytest.raises(ValueError, match=r"qd: batch dimensions do not match: a batch of 3 states, but the "
                                         r"arguments before it have 4"):
        mb.aba(model, np.zeros((4, 3)), np.zeros((3, 3)), np.zeros(3))


def test_the_c_entry_points_refuse_what_could_write_out_of_bounds():
    model = mb.models.auto_tree(3)
    c = model._c
    with pytest.raises(TypeError, match="expected a CModel"):
        _core.rnea(object(), np.zeros(3), np.zeros(3), np.zeros(3), None)
    with pytest.raises(ValueError, match="batch dimensions do not match"):
        _core.rnea(c, np.zeros((2, 3)), np.zeros((3, 3)), np.zeros((1, 3)), None)
    assert _core.rnea(c, np.zeros(4), np.zeros(3), np.zeros(3), None) is None  # not its layout: Python converts
    L, d, info = np.empty((1, 3, 3)), np.empty((1, 3)), np.empty(1, dtype=np.int64)
    with pytest.raises(ValueError, match="lam: must satisfy"):
        _core.ltdl_kernel(np.eye(3)[None], np.array([-1, 5, 0]), L, d, info)
    with pytest.raises(ValueError, match="d: dimension 1 is 2, expected 3"):
        _core.ltdl_kernel(np.eye(3)[None], np.array([-1, 0, 1]), L, np.empty((1, 2)), info)
    with pytest.raises(ValueError, match="hybrid|fd: expected 3 booleans"):
        _core.hybrid(c, np.ones(2, bool), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3), None)


def test_symbolic_models_have_no_c_model():
    import sympy as sp
    m = mb.models.planar(2)
    sym = replace(m, mass=np.array([sp.Symbol("m1"), 1.0], dtype=object))
    with pytest.raises(ValueError, match="model has symbolic parameters"):
        mb.rnea(sym, np.zeros(2), np.zeros(2), np.zeros(2))


# --------------------------------------------------------------------------- module hygiene
# Known and owned elsewhere (symbolic package): remove from this list when renamed.
def test_no_function_shadows_its_module():
    """``multibody.dynamics.rnea`` must not be both a module and a function: every attribute of a
    package named like one of its submodules is that module."""
    bad = []
    for info in pkgutil.walk_packages(mb.__path__, "multibody."):
        if info.name.startswith("multibody.bench") or info.name.endswith("__main__"):
            continue
        parent_name, _, child = info.name.rpartition(".")
        parent = importlib.import_module(parent_name)
        importlib.import_module(info.name)
        attr = getattr(parent, child, None)
        if attr is not None and not isinstance(attr, types.ModuleType):
            bad.append(f"{parent_name}.{child} is a {type(attr).__name__}, not the module")
    assert not bad, bad


def test_joint_sincos_matches_libm_to_a_few_ulp():
    """The core's own sin/cos of joint angles (jcalc.c: Cody–Waite reduction + Taylor) against
    Python's libm, over ordinary angles, large ones up to its 1e6 rad switch-over, the points where
    the quadrant changes, and beyond (where it defers to libm)."""
    import math

    rng = np.random.default_rng(7)
    quarter = np.pi / 4 * np.arange(-40, 41)
    xs = np.concatenate([rng.uniform(-10, 10, 20000), rng.uniform(-1e6, 1e6, 5000), quarter,
                         np.nextafter(quarter, np.inf), [0.0, -0.0, 1e-300, 1e6, -1e6, 1e6 + 1, 3e9, -1e300]])
    worst_abs = worst_ulp = 0.0
    for x in xs:
        s, c = _core.sincos(float(x))
        for got, want in ((s, math.sin(x)), (c, math.cos(x))):
            worst_abs = max(worst_abs, abs(got - want))
            if abs(want) > 1e-3:  # relative error where the value is not near a zero
                worst_ulp = max(worst_ulp, abs(got - want) / math.ulp(want))
    assert worst_abs <= 4.5e-16
    assert worst_ulp <= 3
    assert _core.sincos(float("nan"))[0] != _core.sincos(float("nan"))[0]  # NaN stays NaN (libm path)


def test_public_entries_are_c_callables_that_behave_like_the_python_functions():
    """mb.rnea/crba/aba go straight into C (csrc/py/_core.c: fast_function) yet keep the Python
    function's name, signature, docstring, keywords, errors and pickling."""
    import inspect
    import pickle

    m = mb.models.planar(3)
    rng = np.random.default_rng(3)
    q, qd, tau = rng.normal(size=(3, 3))
    assert inspect.signature(mb.aba) == inspect.signature(mb.aba.__wrapped__)
    sig = inspect.signature(mb.rnea)          # the Python face's parameters and type hints
    assert list(sig.parameters) == ["model", "q", "qd", "qdd", "f_ext"] and sig.parameters["f_ext"].default is None
    assert sig.parameters["q"].annotation == "ArrayLike" and sig.return_annotation == "NDArray[np.float64]"
    assert mb.crba.__name__ == "crba" and "composite" in mb.crba.__doc__.lower()
    assert pickle.loads(pickle.dumps(mb.aba)) is mb.aba
    ref = mb.aba.__wrapped__(m, q, qd, tau)
    assert np.array_equal(mb.aba(m, q, qd, tau), ref)
    assert np.array_equal(mb.aba(m, q, qd, tau=tau, f_ext=None), ref)
    assert np.array_equal(mb.aba(model=m, q=q, qd=qd, tau=tau), ref)
    assert np.array_equal(mb.aba(m, list(q), qd, tau), ref)            # converted by the Python face
    assert np.array_equal(mb.rnea(m, q, qd, mb.aba(m, q, qd, tau)), mb.rnea.__wrapped__(m, q, qd, ref))
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'tau'"):
        mb.aba(m, q, qd)
    with pytest.raises(TypeError, match="unexpected keyword argument 'torque'"):
        mb.aba(m, q, qd, torque=tau)
    with pytest.raises(TypeError, match="multiple values for argument 'q'"):
        mb.aba(m, q, qd, tau, q=q)
    with pytest.raises(ValueError, match=r"q: expected shape \(\.\.\., 3\)"):
        mb.crba(m, np.zeros(4))
    with pytest.raises(ValueError, match="fallback must take"):
        _core.fast_function(_core.crba, lambda *a: None)


def test_import_is_quick_and_loads_simulation_view_and_models_on_first_use():
    """`import multibody` must not pull SciPy, the viewer or the seed models (start-up to the first
    rnea is a benchmark goal); each name still resolves on first use, and dir() lists it."""
    import subprocess
    import sys

    code = ("import sys, multibody as mb; heavy = [m for m in ('scipy', 'multibody.simulation', 'multibody.view', "
            "'multibody.models', 'sympy') if m in sys.modules]; print(heavy); "
            "print(mb.simulate.__module__, mb.fd_gq.__name__, mb.models.planar.__name__, 'view' in dir(mb))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]"
    assert out[1] == "multibody.simulation.core fd_gq planar True"
    with pytest.raises(AttributeError, match="no attribute 'simulat'"):
        mb.simulat


def test_first_result_loads_neither_lxml_nor_sympy_scipy_matplotlib():
    """Issue 37's start-up handshake: a new process's first result (import, a 6-body tree from
    ModelBuilder, one rnea) loads what it uses — the core, the model, dynamics — and not lxml (URDF,
    MJCF), SymPy, SciPy, Matplotlib, the MJCF tables (geometry, actuators, sensors) or _io's archive
    and random-name modules; `import multibody` alone loads none of our modules. The rnea's value is
    checked against the same tree's crba times q̈ plus its bias (two kernels, one answer), and
    load_urdf still resolves afterwards (then lxml loads)."""
    import subprocess
    import sys

    heavy = ("lxml", "sympy", "scipy", "matplotlib", "zipfile", "secrets", "multibody.model.geometry",
             "multibody.model.actuators", "multibody.model.sensors", "multibody.model.urdf",
             "multibody.model.mjcf", "multibody.simulation", "multibody.kinematics")
    code = f"""
import sys
import multibody as mb
ours = sorted(m for m in sys.modules if m.startswith("multibody."))
import numpy as np
b = mb.ModelBuilder("six")
for i in range(6):
    b.add_body(f"b{{i}}", parent=f"b{{i - 1}}" if i else None, joint="revolute", axis=(0, i % 2, 1 - i % 2),
               mass=1.0 + i, com=(0.1, 0.02, 0), inertia=(0.1, 0.2, 0.3), joint_translation=(0.3, 0, 0.1))
m = b.build()
q, qd, qdd = np.linspace(-1, 1, 6), np.linspace(0.5, -0.5, 6), np.linspace(2, -1, 6)
tau = mb.rnea(m, q, qd, qdd)
loaded = [name for name in {heavy!r} if name in sys.modules]
H, C = mb.hand_c(m, q, qd)
print(ours, loaded, float(np.max(np.abs(tau - (H @ qdd + C)))), mb.load_urdf.__module__, "lxml" in sys.modules,
      sep="\\n")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]", f"import multibody loaded {out[0]}"
    assert out[1] == "[]", f"the first result loaded {out[1]}"
    assert float(out[2]) < 1e-12
    assert out[3:5] == ["multibody.model.urdf", "True"]


@pytest.mark.slow
def test_startup_benchmark_prints_both_libraries_in_one_run():
    """`python -m multibody.bench.urdf --startup-only` (issue 37's start-up row) runs both snippets in
    new processes and prints ours and Pinocchio's numbers side by side, and the goal line; no time is
    asserted (the machine's load decides those), only that each run produced a result."""
    import re
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "multibody.bench.urdf", "--startup-only", "--startup-repeat", "1"],
                         capture_output=True, text=True, check=True, timeout=600).stdout
    for label in ("6-body tree", "UR5 URDF"):
        line = next(x for x in out.splitlines() if x.startswith(f"start-up to the first rnea, {label} "))
        times = [float(t) for t in re.findall(r"(?:ours|Pinocchio) ([0-9.]+) s", line)]
        assert len(times) == 6 and all(t > 0 for t in times), line
    assert re.search(r"Goal \(issue 37\).*(met|NOT met) on wall .* on CPU", out), out


def _random_planar_tree(rng, normal, n=7):
    """A branched tree in the plane ⊥ e_normal: revolute joints about e_normal, prismatic ones in
    the plane, fixed joints, joint frames turned about e_normal and offset along it, bodies with
    out-of-plane CoM offsets and products of inertia, gravity with a component along the normal."""
    k = normal
    a, b = (k + 1) % 3, (k + 2) % 3
    g = rng.normal(size=3)
    builder = mb.ModelBuilder("planar_tree", gravity=tuple(g))
    for i in range(n):
        phi = rng.uniform(-np.pi, np.pi)
        rot = np.eye(3)
        rot[a, a] = rot[b, b] = np.cos(phi)
        rot[b, a], rot[a, b] = np.sin(phi), -np.sin(phi)
        kind = ["revolute", "revolute", "prismatic", "fixed"][i % 4] if i else "revolute"
        axis = np.eye(3)[k] if kind == "revolute" else None
        if kind == "prismatic":
            axis = np.zeros(3)
            axis[a], axis[b] = np.cos(phi / 3), np.sin(phi / 3)
        R, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        inertia = R @ np.diag(rng.uniform(1.0, 1.8, 3)) @ R.T  # a real body's, turned off the axes
        builder.add_body(f"b{i}", parent=None if i == 0 else f"b{rng.integers(0, i)}", joint=kind, axis=axis,
                         mass=rng.uniform(0.5, 2), com=rng.normal(size=3) * 0.3, inertia=inertia,
                         joint_rotation=rot, joint_translation=rng.normal(size=3),
                         armature=0.1 if kind == "revolute" and i % 3 == 0 else None)
    return builder.build()


@pytest.mark.parametrize("normal", [0, 1, 2])
def test_planar_trees_run_fdab_in_planar_vectors_with_the_same_result(normal):
    """csrc/kernels/planar.c: a planar tree's FDab in 3-vectors equals the 6-D ABA (forced with a zero
    f_ext) and CRBA/RNEA's solution to rounding, out-of-plane offsets and inertia included."""
    rng = np.random.default_rng(normal)
    m = _random_planar_tree(rng, normal)
    assert m._c.planar
    for _ in range(5):
        q, qd, tau = rng.normal(size=(3, m.nq))
        qdd = mb.aba(m, q, qd, tau)
        six_d = mb.aba(m, q, qd, tau, f_ext=np.zeros((m.nb, 6)))
        direct = np.linalg.solve(mb.crba(m, q), tau - mb.rnea(m, q, qd, np.zeros(m.nv)))
        assert np.abs(qdd - six_d).max() <= 1e-12 * (1 + np.abs(six_d).max())
        assert np.abs(qdd - direct).max() <= 1e-10 * (1 + np.abs(direct).max())
    Q, QD, TAU = rng.normal(size=(3, 50, m.nq))  # batches take the same path
    assert np.allclose(mb.aba(m, Q, QD, TAU), mb.aba(m, Q, QD, TAU, f_ext=np.zeros((m.nb, 6))), rtol=1e-12, atol=1e-12)


def test_only_planar_trees_take_the_planar_path():
    assert mb.models.double_pendulum()._c.planar
    assert not mb.models.floatbase(mb.models.auto_tree(3))._c.planar  # a free joint is not planar
    builder = mb.ModelBuilder("tilted")
    builder.add_body("a", joint="revolute", axis=[0, 0, 1], inertia=np.eye(3))
    builder.add_body("b", parent="a", joint="revolute", axis=[0, 1, 0], inertia=np.eye(3))  # out of the plane
    assert not builder.build()._c.planar
    builder = mb.ModelBuilder("slide_out")
    builder.add_body("a", joint="revolute", axis=[0, 0, 1], inertia=np.eye(3))
    builder.add_body("b", parent="a", joint="prismatic", axis=[0, 0.6, 0.8], inertia=np.eye(3))
    assert not builder.build()._c.planar
