"""Analytic derivatives (mb.rnea_derivatives, mb.aba_derivatives, mb.minv) against high-order central
differences on trees with every joint type, armature and f_ext; the chain rule through mb.integrate;
Pinocchio 4's computeRNEADerivatives / computeABADerivatives / computeMinverse on the same models
(mb.pinocchio.to_pinocchio_model) and on the example-robot-data robots (slow); batches; bad input."""
from __future__ import annotations

import os

import numpy as np
import pytest

import multibody as mb
from pin_states import q_to_pin, random_state, to_pinocchio, v_perm
from test_dynamics_consistency import _inertia, _rot, _unit, mixed

# --------------------------------------------------------------------------- models


def every_joint(floating=True, seed=11):
    """Free (or spherical) root, spherical, helical, prismatic, revolute about random axes, planar,
    a fixed bracket with children, elementary-axis joints — armature on every dof."""
    rng = np.random.default_rng(seed)
    b = mb.ModelBuilder("every_joint", gravity=(0.3, -0.2, -9.81))

    def body(name, parent, joint, **kw):
        m = rng.uniform(0.5, 2.0)
        if joint != "fixed":
            kw.setdefault("armature", rng.uniform(0.01, 0.3))
        b.add_body(name, parent, joint, mass=m, com=rng.normal(scale=0.2, size=3), inertia=_inertia(rng, m),
                   joint_rotation=_rot(rng) if parent is not None else None,
                   joint_translation=rng.normal(scale=0.4, size=3) if parent is not None else (0, 0, 0), **kw)

    body("root", None, "free" if floating else "spherical")
    body("ball", "root", "spherical", armature=[0.05, 0.1, 0.15])
    body("screw", "ball", "helical", axis=_unit(rng), pitch=0.13)
    body("slider", "screw", "prismatic", axis=_unit(rng))
    body("hinge", "slider", "revolute", axis=_unit(rng))
    body("plate", "root", "planar", armature=[0.02, 0.03, 0.04])
    body("flap", "plate", "Rx")
    body("bracket", "ball", "fixed")
    body("tip", "bracket", "Ry")
    body("tip2", "bracket", "Pz")
    return b.build()


MODELS = {
    "every_joint_floating": lambda: every_joint(True),
    "every_joint_fixed": lambda: every_joint(False, seed=12),
    "mixed_floating": lambda: mixed(True, False),
    "planar4": lambda: mb.models.planar(4),
    "tree12": lambda: mb.models.auto_tree(12, bf=3, skew=0.37, taper=0.8),
    "floatbase_tree": lambda: mb.models.floatbase(mb.models.auto_tree(4, bf=2, skew=0.5)),
}
_cache = {}


def model_named(name):
    if name not in _cache:
        _cache[name] = MODELS[name]()
    return _cache[name]


def state(model, seed):
    rng = np.random.default_rng(seed)
    q, qd, qdd = random_state(model, rng)
    return q, qd, qdd, rng.normal(size=nv_shape(model)), rng.normal(size=(model.nb, 6)), rng


def nv_shape(model):
    return (model.nv,)


def rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a - b), initial=0.0) / max(1.0, float(np.max(np.abs(b), initial=0.0))))


# --------------------------------------------------------------------------- differences
def diff_q(model, f, q, h=2e-3):
    """∂f/∂q in mb.integrate's tangent space, 6th-order central differences (error O(h⁶))."""
    E = np.eye(model.nv)
    cols = []
    for k in range(model.nv):
        g = {s: f(mb.integrate(model, q, s * h * E[k])) for s in (-3, -2, -1, 1, 2, 3)}
        cols.append((45 * (g[1] - g[-1]) - 9 * (g[2] - g[-2]) + (g[3] - g[-3])) / (60 * h))
    return np.array(cols).T


def diff_v(model, f, x, h=1e-3):
    E = np.eye(model.nv)
    cols = []
    for k in range(model.nv):
        g = {s: f(x + s * h * E[k]) for s in (-2, -1, 1, 2)}
        cols.append((8 * (g[1] - g[-1]) - (g[2] - g[-2])) / (12 * h))
    return np.array(cols).T


NAMES = list(MODELS)


@pytest.mark.parametrize("with_fext", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_rnea_derivatives_match_high_order_differences(name, with_fext):
    model = model_named(name)
    for seed in (0, 1):
        q, qd, qdd, _, fe, _ = state(model, seed)
        fe = fe if with_fext else None
        dq, dqd, M = mb.rnea_derivatives(model, q, qd, qdd, fe)
        assert rel(dq, diff_q(model, lambda x: mb.rnea(model, x, qd, qdd, fe), q)) < 1e-8
        assert rel(dqd, diff_v(model, lambda x: mb.rnea(model, q, x, qdd, fe), qd)) < 1e-9
        assert rel(M, diff_v(model, lambda x: mb.rnea(model, q, qd, x, fe), qdd)) < 1e-9
        assert rel(M, mb.crba(model, q)) < 1e-12  # armature included
        assert np.abs(dq).max() > 1e-3 and np.abs(dqd).max() > 1e-3


@pytest.mark.parametrize("with_fext", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_aba_derivatives_match_high_order_differences(name, with_fext):
    model = model_named(name)
    q, qd, _, tau, fe, _ = state(model, 2)
    fe = fe if with_fext else None
    dq, dqd, Minv = mb.aba_derivatives(model, q, qd, tau, fe)
    # FD is ill-conditioned on the long tapered trees: differences carry ~1e-8 of its noise
    assert rel(dq, diff_q(model, lambda x: mb.aba(model, x, qd, tau, fe), q)) < 1e-6
    assert rel(dqd, diff_v(model, lambda x: mb.aba(model, q, x, tau, fe), qd)) < 1e-7
    assert rel(Minv, diff_v(model, lambda x: mb.aba(model, q, qd, x, fe), tau)) < 1e-7


@pytest.mark.parametrize("name", NAMES)
def test_minv_is_the_inverse_of_crba(name):
    model = model_named(name)
    for seed in (0, 1, 2):
        q = state(model, seed)[0]
        Minv = mb.minv(model, q)
        assert np.array_equal(Minv, Minv.T)
        assert rel(Minv @ mb.crba(model, q), np.eye(model.nv)) < 1e-11
        assert rel(Minv, mb.aba_derivatives(model, q, np.zeros(model.nv), np.zeros(model.nv))[2]) == 0.0


def _floating_tree(kind):
    """A free-floating base with two branches (minv.c's free-root rows), in the variants that must
    leave that path: a second tree beside it, armature on the free joint; and one numbered
    breadth-first (the path with one body acceleration per body)."""
    b = mb.ModelBuilder(kind)
    b.add_body("base", None, "free", mass=3.0, com=[0.05, -0.02, 0.1], inertia=[0.2, 0.3, 0.25],
               armature=0.1 if kind == "free_armature" else None)
    links = [("a", "base"), ("b", "a"), ("c", "base"), ("d", "c")]
    if kind == "breadth_first":
        links = [("a", "base"), ("c", "base"), ("b", "a"), ("d", "c")]
    for k, (name, parent) in enumerate(links):
        b.add_body(name, parent, ["Rz", "Rx", "Ry"][k % 3], mass=1.0 + k, com=[0.1, 0.2 * k, 0.3],
                   inertia=[0.1, 0.2, 0.3], joint_translation=[0.3, 0.5 - 0.2 * k, 0.1 * k])
    if kind == "forest":  # a second root after the first tree: its columns are 0 in the first tree's rows
        b.add_body("arm", None, "Rz", mass=2.0, com=[0.2, 0.0, 0.0], inertia=[0.1, 0.1, 0.1])
        b.add_body("hand", "arm", "Ry", mass=1.0, com=[0.1, 0.0, 0.1], inertia=[0.05, 0.1, 0.1],
                   joint_translation=[0.5, 0.0, 0.0])
    return b.build()


@pytest.mark.parametrize("kind", ["depth_first", "breadth_first", "forest", "free_armature"])
def test_minv_of_floating_trees(kind):
    """A free root's rows by IA⁻¹ (minv.c) or by D's inversion: the inverse of CRBA's M (another
    algorithm), symmetric, the batch in lanes bit for bit the single calls, and aba_derivatives' M⁻¹."""
    model = _floating_tree(kind)
    from multibody.model.configuration import random_configuration
    rng = np.random.default_rng(5)
    Q = np.ascontiguousarray(random_configuration(model, rng, 9))
    Q[4, :3] = [40.0, -70.0, 25.0]  # a base far from the origin: world coordinates lose digits there
    batch = mb.minv(model, Q)
    for k in range(len(Q)):
        Minv = mb.minv(model, Q[k])
        assert np.array_equal(Minv, Minv.T)
        assert np.array_equal(batch[k], Minv)
        assert rel(Minv @ mb.crba(model, Q[k]), np.eye(model.nv)) < (1e-9 if k == 4 else 1e-12)
        assert rel(Minv, np.linalg.inv(mb.crba(model, Q[k]))) < (1e-9 if k == 4 else 1e-12)
        assert np.array_equal(Minv, mb.aba_derivatives(model, Q[k], np.zeros(model.nv), np.zeros(model.nv))[2])
    if kind == "forest":  # the two trees do not couple
        assert np.all(batch[:, :model.nv - 2, model.nv - 2:] == 0.0)


@pytest.mark.parametrize("order", ["depth_first", "breadth_first"])
def test_minv_for_bodies_in_any_order(order):
    """minv.c keeps one body acceleration per depth when the bodies are numbered depth-first and one
    per body otherwise: both give the inverse of CRBA's M, the one in lanes bit for bit the single."""
    b = mb.ModelBuilder(order)
    links = {"depth_first": [("a", None), ("b", "a"), ("d", "b"), ("f", "d"), ("c", "a"), ("e", "c")],
             "breadth_first": [("a", None), ("b", "a"), ("c", "a"), ("d", "b"), ("e", "c"), ("f", "d")]}[order]
    for k, (name, parent) in enumerate(links):
        b.add_body(name, parent, ["Rz", "Rx", "Ry"][k % 3], mass=1.0 + k, com=[0.1, 0.2 * k, 0.3],
                   inertia=[0.1, 0.2, 0.3], joint_translation=[0.0, 0.5, 0.1 * k])
    model = b.build()
    rng = np.random.default_rng(3)
    Q, QD, TAU = (rng.normal(size=(16, model.nv)) for _ in range(3))
    outs = mb.aba_derivatives(model, Q, QD, TAU)
    for k in (0, 7, 15):
        Minv = mb.minv(model, Q[k])
        assert rel(Minv @ mb.crba(model, Q[k]), np.eye(model.nv)) < 1e-12
        for a, s in zip(outs, mb.aba_derivatives(model, Q[k], QD[k], TAU[k])):
            assert np.array_equal(a[k], s)


def test_f_ext_is_fixed_in_the_base_and_matters():
    """f_ext stays put in base coordinates while q moves (as in mb.rnea): a wrench on a floating body
    changes ∂τ/∂q — by the turn of the joint axes under it — but not ∂τ/∂q̇ or M."""
    model = model_named("every_joint_floating")
    q, qd, qdd, _, fe, _ = state(model, 3)
    a = mb.rnea_derivatives(model, q, qd, qdd)
    b = mb.rnea_derivatives(model, q, qd, qdd, 10 * fe)
    assert np.abs(a[0] - b[0]).max() > 1e-2
    assert rel(a[1], b[1]) < 1e-12 and rel(a[2], b[2]) == 0.0


@pytest.mark.parametrize("name", ["every_joint_floating", "every_joint_fixed"])
def test_chain_rule_through_integrate(name):
    """d/dε f(integrate(q, ε v)) = (∂f/∂q) v for a random tangent v (the documented convention)."""
    model = model_named(name)
    q, qd, qdd, tau, fe, rng = state(model, 4)
    v = rng.normal(size=model.nv)
    h = 1e-3
    for f, D in ((lambda x: mb.rnea(model, x, qd, qdd, fe), mb.rnea_derivatives(model, q, qd, qdd, fe)[0]),
                 (lambda x: mb.aba(model, x, qd, tau, fe), mb.aba_derivatives(model, q, qd, tau, fe)[0])):
        g = {s: f(mb.integrate(model, q, s * h * v)) for s in (-2, -1, 1, 2)}
        num = (8 * (g[1] - g[-1]) - (g[2] - g[-2])) / (12 * h)
        assert rel(D @ v, num) < 1e-7


def test_derivatives_do_not_depend_on_the_quaternion_scale():
    """q's quaternions are normalised where they are used (as everywhere in the core)."""
    model = model_named("every_joint_floating")
    q, qd, qdd, tau, fe, _ = state(model, 5)
    q2 = q.copy()
    for i in range(model.nb):
        if model.jtype[i] in (mb.JointType.SPHERICAL, mb.JointType.FREE):
            s = model.q_start[i] + (3 if model.jtype[i] == mb.JointType.FREE else 0)
            q2[s:s + 4] *= 2.5
    for a, b in zip(mb.rnea_derivatives(model, q, qd, qdd, fe), mb.rnea_derivatives(model, q2, qd, qdd, fe)):
        assert rel(a, b) < 1e-12


# --------------------------------------------------------------------------- Pinocchio twins
PIN_NAMES = ["mixed_floating", "tree12", "floatbase_tree"]  # the twin builder carries no armature (FD tests do)


def pin_twin(model):
    pin = pytest.importorskip("pinocchio")
    pm = to_pinocchio(model)
    return pin, pm, pm.createData(), v_perm(model)


def upper_sym(M):
    """Pinocchio fills only the upper triangle of M⁻¹ (and M)."""
    M = np.asarray(M)
    return np.triu(M) + np.triu(M, 1).T


@pytest.mark.parametrize("name", PIN_NAMES)
def test_against_pinocchio_twin(name):
    model = model_named(name)
    pin, pm, data, P = pin_twin(model)
    for seed in (0, 1):
        q, qd, qdd, tau, _, _ = state(model, seed)
        qp = q_to_pin(model, q)
        dq, dqd, M = mb.rnea_derivatives(model, q, qd, qdd)
        pdq, pdv, pM = pin.computeRNEADerivatives(pm, data, qp, qd[P], qdd[P])
        ix = np.ix_(P, P)
        assert rel(dq[ix], pdq) < 1e-10 and rel(dqd[ix], pdv) < 1e-10 and rel(M[ix], upper_sym(pM)) < 1e-10
        aq, av, Minv = mb.aba_derivatives(model, q, qd, tau)
        paq, pav, pMinv = pin.computeABADerivatives(pm, data, qp, qd[P], tau[P])
        assert rel(aq[ix], paq) < 1e-9 and rel(av[ix], pav) < 1e-9 and rel(Minv[ix], upper_sym(pMinv)) < 1e-10
        assert rel(mb.minv(model, q)[ix], upper_sym(pin.computeMinverse(pm, data, qp))) < 1e-10


ROBOTS = [("ur_description/urdf/ur5_robot.urdf", False), ("panda_description/urdf/panda.urdf", False),
          ("solo_description/robots/solo12.urdf", True), ("anymal_b_simple_description/robots/anymal.urdf", True),
          ("talos_data/robots/talos_reduced.urdf", True)]


@pytest.mark.slow
@pytest.mark.parametrize("rel_path, floating", ROBOTS, ids=[r[0].split("/")[-1] for r in ROBOTS])
def test_against_pinocchio_on_example_robot_data(rel_path, floating):
    pin = pytest.importorskip("pinocchio")
    from multibody import pinocchio as conv
    from test_urdf_robots import robots_dir
    rdir = robots_dir()
    path = os.path.join(rdir, rel_path)
    model = mb.load_urdf(path, floating=floating, package_dirs=[os.path.dirname(os.path.dirname(rdir))],
                         check_meshes=False)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    data = pm.createData()
    q_map, v_map = (lambda Q: conv.to_pinocchio_q(model, pm, Q)), (lambda V: conv.to_pinocchio_v(model, pm, V))
    vp = v_map(np.arange(model.nv, dtype=float)).astype(int)  # pin index j holds our dof vp[j]
    ix = np.ix_(vp, vp)
    rng = np.random.default_rng(0)
    for _ in range(3):
        q, qd, qdd = random_state(model, rng)
        tau = rng.normal(size=model.nv)
        qp = q_map(q)
        dq, dqd, M = mb.rnea_derivatives(model, q, qd, qdd)
        pdq, pdv, pM = pin.computeRNEADerivatives(pm, data, qp, v_map(qd), v_map(qdd))
        assert rel(dq[ix], pdq) < 1e-9 and rel(dqd[ix], pdv) < 1e-9 and rel(M[ix], upper_sym(pM)) < 1e-10
        aq, av, Minv = mb.aba_derivatives(model, q, qd, tau)
        paq, pav, pMinv = pin.computeABADerivatives(pm, data, qp, v_map(qd), v_map(tau))
        assert rel(aq[ix], paq) < 1e-8 and rel(av[ix], pav) < 1e-8 and rel(Minv[ix], upper_sym(pMinv)) < 1e-9
        assert rel(mb.minv(model, q)[ix], upper_sym(pin.computeMinverse(pm, data, qp))) < 1e-9


# --------------------------------------------------------------------------- batches
@pytest.mark.parametrize("n", [5, 300])  # one thread, and the threaded path
def test_batch_equals_single(n):
    model = model_named("every_joint_floating")
    rng = np.random.default_rng(6)
    rows = [random_state(model, rng) for _ in range(n)]
    Q, QD, QDD = (np.array([r[k] for r in rows]) for k in range(3))
    FE = rng.normal(size=(n, model.nb, 6))
    outs = mb.rnea_derivatives(model, Q, QD, QDD, FE)
    aouts = mb.aba_derivatives(model, Q, QD, QDD, FE)
    Minv = mb.minv(model, Q)
    assert all(o.shape == (n, model.nv, model.nv) for o in outs + aouts) and Minv.shape == outs[0].shape
    for k in sorted({0, n // 2, n - 1}):
        for a, b in zip(outs, mb.rnea_derivatives(model, Q[k], QD[k], QDD[k], FE[k])):
            assert np.array_equal(a[k], b)
        for a, b in zip(aouts, mb.aba_derivatives(model, Q[k], QD[k], QDD[k], FE[k])):
            assert np.array_equal(a[k], b)
        assert np.array_equal(Minv[k], mb.minv(model, Q[k]))


@pytest.mark.parametrize("lanes", ["avx512", "avx2", "baseline", "none"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_batch_in_lanes_equals_single_bit_for_bit(name, lanes):
    """Batches without f_ext (and of minv) run groups of states in SIMD lanes (derivatives_lanes.c):
    every state, the groups' and the leftover ones', is the single call's bit for bit."""
    from multibody.core import _core
    model = model_named(name)
    rng = np.random.default_rng(16)
    n = 11  # groups of 8, 4 or 2 and a remainder run one by one
    rows = [random_state(model, rng) for _ in range(n)]
    Q, QD, QDD = (np.array([r[k] for r in rows]) for k in range(3))
    TAU = rng.normal(size=QDD.shape)
    try:
        before = _core.use_lanes(lanes)
    except ValueError:
        pytest.skip(f"lanes {lanes!r} not built or not supported by this CPU")
    try:
        outs = mb.rnea_derivatives(model, Q, QD, QDD)
        aouts = mb.aba_derivatives(model, Q, QD, TAU)
        minv = mb.minv(model, Q)  # derivatives_lanes.c's minv_group
    finally:
        _core.use_lanes(before)
    for k in range(n):
        assert np.array_equal(minv[k], mb.minv(model, Q[k])), (name, lanes, k)
        for a, b in zip(outs, mb.rnea_derivatives(model, Q[k], QD[k], QDD[k])):
            assert np.array_equal(a[k], b), (name, lanes, k)
        for a, b in zip(aouts, mb.aba_derivatives(model, Q[k], QD[k], TAU[k])):
            assert np.array_equal(a[k], b), (name, lanes, k)


def test_lanes_batches_in_turn_on_threads_keep_their_zeros():
    """A thread's lanes zero their matrices once per batch and then write only the tree's entries
    (derivatives_lanes.c): batches of other models and of the other function in between, on two
    threads, must not leave their numbers behind."""
    threads = mb.get_num_threads()
    mb.set_num_threads(2)
    try:
        rng = np.random.default_rng(19)
        for name in ["tree12", "every_joint_floating", "tree12", "planar4", "every_joint_floating"]:
            model = model_named(name)
            rows = [random_state(model, rng) for _ in range(2_000)]
            Q, QD, X = (np.array([r[k] for r in rows]) for k in range(3))
            for fn in (mb.rnea_derivatives, mb.aba_derivatives, mb.rnea_derivatives):
                outs = fn(model, Q, QD, X)
                for k in (0, 5, 999, 1_000, 1_003, 1_999):
                    for a, b in zip(outs, fn(model, Q[k], QD[k], X[k])):
                        assert np.array_equal(a[k], b), (name, fn.__name__, k)
    finally:
        mb.set_num_threads(threads)


def _streamed_minv_equals_the_unstreamed(model, Q, lanes):
    """mb.minv of a batch over 8 MB (streamed) with ``lanes``: equal to the batch without lanes and, at
    a few states, to the single call; the batch's M⁻¹."""
    from multibody.core import _core
    try:
        before = _core.use_lanes(lanes)
    except ValueError:
        pytest.skip(f"lanes {lanes!r} not built or not supported by this CPU")
    try:
        M = mb.minv(model, Q)
        assert M.nbytes >= 8 << 20
        _core.use_lanes("none")
        np.testing.assert_array_equal(M, mb.minv(model, Q))
    finally:
        _core.use_lanes(before)
    n = len(Q)
    for k in (0, 1, 2, 3, 5, n // 2 + 1, n - 2, n - 1):
        assert np.array_equal(M[k], mb.minv(model, Q[k])), k
    return M


@pytest.mark.parametrize("lanes", ["avx512", "avx2", "baseline"])
@pytest.mark.parametrize("nv", [5, 6])
def test_a_minv_batch_larger_than_the_caches_gives_the_same_numbers(nv, lanes):
    """A minv batch of 8 MB or more is streamed from the lanes (derivatives_lanes.c: minv_group):
    on and off 16-byte boundaries, every state equals the batch without lanes and the single call."""
    model = mb.models.planar(nv)
    n = (9 << 20) // (8 * nv * nv) + 3
    Q = np.random.default_rng(21).normal(size=(n, model.nq))
    _streamed_minv_equals_the_unstreamed(model, Q, lanes)


@pytest.mark.parametrize("lanes", ["avx512", "avx2", "baseline"])
@pytest.mark.parametrize("order", ["depth-first", "breadth-first"])
@pytest.mark.parametrize("branch", [2, 3])
def test_a_streamed_minv_batch_of_a_floating_tree_writes_its_rows_as_they_are_final(branch, order, lanes):
    """A free root and one-dof joints numbered depth-first (floating robots): a streamed batch in lanes
    writes each row of M⁻¹ as soon as the forward pass has made it (derivatives_lanes.c:
    minv_stream_rows), in pieces ending on multiples of 8 entries, the rest at the end; with 8 lanes
    from the upper triangle alone (lanes.h: scatter_streaming_symmetric).  nv = 10 and 12 (rows cut
    inside a piece differently), numbered depth-first and breadth-first (the legs' bodies
    interleaved: no one P or IA per depth, minv.c), and every state equals the batch without lanes
    and the single call."""
    b = mb.ModelBuilder("streamed")
    b.add_body("base", None, "free", mass=3.0, com=[0.05, -0.02, 0.1], inertia=[0.2, 0.3, 0.25])
    bodies = [(leg, k) for leg in range(2) for k in range(branch)]
    if order == "breadth-first":
        bodies.sort(key=lambda lk: (lk[1], lk[0]))
    for leg, k in bodies:
        b.add_body(f"l{leg}{k}", "base" if k == 0 else f"l{leg}{k - 1}", ["Rz", "Rx", "Ry"][k % 3],
                   mass=1.0 + k, com=[0.1, 0.2 * k, 0.3], inertia=[0.1, 0.2, 0.3],
                   joint_translation=[0.3 * (-1) ** leg, 0.5 - 0.2 * k, 0.1])
    model = b.build()
    from multibody.model.configuration import random_configuration
    n = (9 << 20) // (8 * model.nv ** 2) + 3
    Q = np.ascontiguousarray(random_configuration(model, np.random.default_rng(23), n))
    M = _streamed_minv_equals_the_unstreamed(model, Q, lanes)
    assert rel(M[7] @ mb.crba(model, Q[7]), np.eye(model.nv)) < 1e-12


@pytest.mark.parametrize("lanes", ["avx512", "avx2", "baseline"])
@pytest.mark.parametrize("nv", [2, 5, 6, 11])
@pytest.mark.parametrize("fn", ["rnea_derivatives", "aba_derivatives"])
def test_a_batch_larger_than_the_caches_gives_the_same_numbers(fn, nv, lanes):
    """Outputs of 8 MB or more are written with non-temporal stores (lanes.h): nv = 6
    keeps every state's matrices on 16-byte boundaries (transposed in registers, four states at a
    time), nv = 5 puts every other state's off them (element pairs, one state at a time); with 8
    lanes each state's rows start at another offset in a cache line (whole lines transposed, the
    rest one by one; nv = 2: no whole line; nv = 11: ∂ABA writes rows in blocks of 8, 2 and 1 as it
    finishes them).  Every state equals the batch run one state at a time."""
    from multibody.core import _core
    model = mb.models.planar(nv)
    n = (33 << 20) // (3 * 8 * nv * nv) + 3
    rng = np.random.default_rng(18)
    Q, QD, X = (rng.normal(size=(n, model.nv)) for _ in range(3))
    try:
        before = _core.use_lanes(lanes)
    except ValueError:
        pytest.skip(f"lanes {lanes!r} not built or not supported by this CPU")
    try:
        outs = getattr(mb, fn)(model, Q, QD, X)
        assert sum(o.nbytes for o in outs) >= 32 << 20
        _core.use_lanes("none")
        for a, b in zip(outs, getattr(mb, fn)(model, Q, QD, X)):
            np.testing.assert_array_equal(a, b)
    finally:
        _core.use_lanes(before)
    for k in (0, 1, 2, 3, 5, n // 2 + 1, n - 2, n - 1):
        for a, b in zip(outs, getattr(mb, fn)(model, Q[k], QD[k], X[k])):
            assert np.array_equal(a[k], b), k
    del outs
    QD[n // 2 + 1] = 1e200  # the streamed groups check their numbers on the way out
    try:
        _core.use_lanes(lanes)
        with pytest.raises(mb.core.ResultOverflowError, match=f"at state {n // 2 + 1};"):
            getattr(mb, fn)(model, Q, QD, X)
    finally:
        _core.use_lanes(before)
    mb.core.release_output_memory()


@pytest.mark.parametrize("fn", ["rnea_derivatives", "aba_derivatives"])
def test_a_bad_state_in_a_lane_group_is_reported_as_a_single_call_would(fn):
    model = model_named("every_joint_floating")
    rng = np.random.default_rng(17)
    rows = [random_state(model, rng) for _ in range(8)]
    Q, QD, X = (np.array([r[k] for r in rows]) for k in range(3))
    third = "qdd" if fn == "rnea_derivatives" else "tau"
    X[5, 0] = np.nan
    with pytest.raises(ValueError, match=third):
        getattr(mb, fn)(model, Q, QD, X)
    Q[2, :] = 0.0  # a zero quaternion too: the first bad state (2) decides, as it does for rnea
    with pytest.raises(ValueError, match="quaternion"):
        getattr(mb, fn)(model, Q, QD, X)


@pytest.mark.parametrize("lanes", ["avx512", "avx2", "baseline", "none"])
@pytest.mark.parametrize("fn", ["rnea_derivatives", "aba_derivatives"])
def test_an_overflowing_state_in_a_batch_is_named(fn, lanes):
    """Finite but huge q̇ overflows to inf/NaN in one state of a lane group (and in the tail after the
    last whole group): the groups check their own results, and the batch names the first such state
    as the single call's check of the whole output would."""
    from multibody.core import ResultOverflowError, _core
    model = model_named("tree12")
    rng = np.random.default_rng(19)
    rows = [random_state(model, rng) for _ in range(19)]
    Q, QD, X = (np.array([r[k] for r in rows]) for k in range(3))
    try:
        before = _core.use_lanes(lanes)
    except ValueError:
        pytest.skip(f"lanes {lanes!r} not built or not supported by this CPU")
    try:
        getattr(mb, fn)(model, Q, QD, X)  # all finite: no error
        for bad in (18, 11, 3):  # the tail, a group's middle, then the first of two
            QD[bad] = 1e200
            with pytest.raises(ResultOverflowError, match=f"^{fn}: the result overflowed .* at state {bad};"):
                getattr(mb, fn)(model, Q, QD, X)
    finally:
        _core.use_lanes(before)


def test_a_singular_state_in_a_lane_group_falls_back_to_single_states():
    """A point mass on a slider on a massless turntable: M is singular only with the mass on the axis.
    One such state in a group: the lanes give up, the states run one by one and the batch fails as
    the single call does; the other states are the single calls' bit for bit."""
    b = mb.ModelBuilder("turntable")
    b.add_body("a", None, "Rz", mass=0.0, inertia=[0.0, 0.0, 0.0], allow_massless=True)
    b.add_body("b", "a", "Px", mass=1.0, inertia=[0.0, 0.0, 0.0], allow_massless=True)
    model = b.build()
    n = 8
    Q = np.column_stack([np.linspace(0, 1, n), np.linspace(0.5, 1.5, n)])
    QD, TAU = np.ones((n, 2)), np.ones((n, 2))
    outs = mb.aba_derivatives(model, Q, QD, TAU)
    for k in range(n):
        for a, s in zip(outs, mb.aba_derivatives(model, Q[k], QD[k], TAU[k])):
            assert np.array_equal(a[k], s)
    Q[5, 1] = 0.0
    with pytest.raises(ValueError, match="singular"):
        mb.aba_derivatives(model, Q[5], QD[5], TAU[5])
    with pytest.raises(ValueError, match="singular"):
        mb.aba_derivatives(model, Q, QD, TAU)
    with pytest.raises(ValueError, match="singular"):
        mb.minv(model, Q)


def test_broadcast_and_leading_dimensions():
    model = model_named("planar4")
    q, qd, qdd, _, _, _ = state(model, 7)
    Q = np.stack([q, q + 0.1, q - 0.2]).reshape(3, 1, model.nq)
    out = mb.rnea_derivatives(model, Q, qd, [qdd, 2 * qdd])  # (3, 1) with (2,) → (3, 2)
    assert out[0].shape == (3, 2, model.nv, model.nv)
    single = mb.rnea_derivatives(model, Q[2, 0], qd, 2 * qdd)
    for a, b in zip(out, single):
        assert np.array_equal(a[2, 1], b)
    assert mb.minv(model, [q.tolist()]).shape == (1, model.nv, model.nv)


# --------------------------------------------------------------------------- bad input
@pytest.fixture(scope="module")
def floating():
    return mb.models.vee()


def _calls(model, q, qd, x, fe):
    return {"rnea_derivatives": lambda: mb.rnea_derivatives(model, q, qd, x, fe),
            "aba_derivatives": lambda: mb.aba_derivatives(model, q, qd, x, fe),
            "minv": lambda: mb.minv(model, q)}


FNS = ["rnea_derivatives", "aba_derivatives", "minv"]


@pytest.mark.parametrize("fn", FNS)
def test_wrong_shapes_name_the_argument(floating, fn):
    q, z, fe = floating.neutral(), np.zeros(floating.nv), np.zeros((floating.nb, 6))
    with pytest.raises(ValueError, match=r"q: expected shape \(\.\.\., 8\), got \(7,\)"):
        _calls(floating, np.zeros(7), z, z, fe)[fn]()
    if fn == "minv":
        return
    x = "qdd" if fn == "rnea_derivatives" else "tau"
    with pytest.raises(ValueError, match=r"qd: expected shape \(\.\.\., 7\)"):
        _calls(floating, q, np.zeros(6), z, fe)[fn]()
    with pytest.raises(ValueError, match=rf"{x}: expected shape \(\.\.\., 7\)"):
        _calls(floating, q, z, np.zeros(8), fe)[fn]()
    with pytest.raises(ValueError, match=rf"f_ext: expected shape \(\.\.\., {floating.nb}, 6\)"):
        _calls(floating, q, z, z, np.zeros(6))[fn]()
    with pytest.raises(ValueError, match="batch dimensions do not match"):
        _calls(floating, np.tile(q, (3, 1)), np.zeros((2, 7)), z, None)[fn]()
    with pytest.raises(TypeError, match="qd: expected an array of numbers"):      # strings: the wrong kind
        _calls(floating, q, ["a"] * 7, z, None)[fn]()
    with pytest.raises(TypeError, match="qd: expected an array of numbers, got None"):
        _calls(floating, q, None, z, None)[fn]()


@pytest.mark.parametrize("fn", FNS)
@pytest.mark.parametrize("which", ["q", "qd", "x", "fe"])
def test_non_finite_inputs_are_refused_by_name(floating, fn, which):
    if fn == "minv" and which != "q":
        return
    args = dict(q=floating.neutral(), qd=np.zeros(floating.nv), x=np.zeros(floating.nv),
                fe=np.zeros((floating.nb, 6)))
    args[which] = args[which].copy()
    args[which].flat[2] = np.nan
    name = {"x": "qdd" if fn == "rnea_derivatives" else "tau", "fe": "f_ext"}.get(which, which)
    with pytest.raises(ValueError, match=rf"^{name}: contains NaN or inf"):
        _calls(floating, **args)[fn]()
    # the same in a batch, the bad state last
    batch = {k: np.stack([v, v]) for k, v in args.items()}
    for k, v in args.items():
        batch[k][0] = np.nan_to_num(v)
    with pytest.raises(ValueError, match=rf"^{name}: contains NaN or inf"):
        _calls(floating, **batch)[fn]()


@pytest.mark.parametrize("fn", FNS)
def test_zero_quaternion_is_refused(floating, fn):
    q = floating.neutral()
    q[3:7] = 0.0
    with pytest.raises(ValueError, match="quaternion"):
        _calls(floating, q, np.zeros(floating.nv), np.zeros(floating.nv), None)[fn]()


def test_singular_inertia_is_refused():
    b = mb.ModelBuilder("massless")
    b.add_body("a", None, "Rz", mass=0.0, inertia=[0.0, 0.0, 0.0], allow_massless=True)
    model = b.build()
    with pytest.raises(ValueError, match="singular"):
        mb.minv(model, [0.0])
    with pytest.raises(ValueError, match="singular"):
        mb.aba_derivatives(model, [0.0], [0.0], [0.0])
    dq, dqd, M = mb.rnea_derivatives(model, [0.0], [0.0], [0.0])  # ID is defined: M = 0
    assert not M.any()


# --------------------------------------------------------------------------- linearize
@pytest.mark.parametrize("name", ["every_joint_floating", "planar4"])
def test_linearize_is_exact_and_agrees_with_its_finite_differences(name):
    model = model_named(name)
    q, qd, _, tau, fe, _ = state(model, 8)
    A, B = mb.linearize(model, q, qd, tau, fe)
    Af, Bf = mb.linearize(model, q, qd, tau, fe, method="fd")
    nv = model.nv
    dq, dqd, Minv = mb.aba_derivatives(model, q, qd, tau, fe)
    assert np.array_equal(A[nv:, :nv], dq) and np.array_equal(A[nv:, nv:], dqd) and np.array_equal(B[nv:], Minv)
    assert np.array_equal(A[:nv], Af[:nv]) and not B[:nv].any()
    assert rel(A, Af) < 1e-6 and rel(B, Bf) < 1e-10
    with pytest.raises(ValueError, match=r"method: expected one of \['analytic', 'fd'\]"):
        mb.linearize(model, q, qd, tau, method="exact")
