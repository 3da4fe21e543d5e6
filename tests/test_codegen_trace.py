"""multibody.codegen.compile_algorithm (traced RNEA/CRBA/ABA) against the numeric core, on built-in
models and example-robot-data robots; codegen.derivatives against finite differences."""
import os
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody import codegen
from multibody.codegen.trace import trace_algorithm
from system_deps import needs_c_compiler, private_codegen_cache  # noqa: F401 (an autouse fixture)

pytestmark = needs_c_compiler


def load_robot(rel, floating):
    from test_urdf_robots import ROBOTS, SHARE

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mb.load_urdf(os.path.join(ROBOTS, rel), floating=floating, package_dirs=[SHARE])


def random_states(model, n, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.tile(model.neutral(), (n, 1))
    Q = mb.integrate(model, Q, rng.uniform(-1.5, 1.5, (n, model.nv)))
    return Q, rng.uniform(-2, 2, (n, model.nv)), rng.uniform(-2, 2, (n, model.nv))


def rel_err(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


def check_all_algorithms(model, n=5, tol=1e-12, algorithms=("rnea", "crba", "aba")):
    Q, QD, X = random_states(model, n)
    for alg in algorithms:
        f = codegen.compile_algorithm(model, alg)
        for k in range(n):
            q, qd, x = Q[k], QD[k], X[k]
            if alg == "rnea":
                got, want = f(q, qd, x)["tau"], mb.rnea(model, q, qd, x)
            elif alg == "crba":
                got, want = f(q)["M"], mb.crba(model, q)
            else:
                got, want = f(q, qd, x)["qdd"], mb.aba(model, q, qd, x)
            assert rel_err(got, want) <= tol, (alg, k, rel_err(got, want))
        batch = f(Q, QD, X) if alg != "crba" else f(Q)        # the batch's kernel, CG_W states wide, and
        single = f(Q[-1], QD[-1], X[-1]) if alg != "crba" else f(Q[-1])   # one()'s, one wide: to rounding
        for key in batch:
            assert rel_err(batch[key][-1], single[key]) <= 1e-14


@pytest.mark.parametrize("make", [
    lambda: mb.models.auto_tree(7, bf=2, skew=0.4, taper=0.9),
    lambda: mb.models.planar(4),
    lambda: mb.models.vee(),                       # free-floating base (quaternion)
    lambda: mb.models.floatbase(mb.models.auto_tree(4, bf=1.5, skew=0.3)),
], ids=["auto_tree", "planar", "vee(free)", "floatbase"])
def test_traced_algorithms_match_core(make):
    check_all_algorithms(make(), tol=1e-11)


def test_traced_code_drops_structural_zeros():
    model = mb.models.planar(3)                      # planar chain: z-rotations only
    spec = trace_algorithm(model, "crba")
    spec.cse()
    text = codegen.c_gen.c_function(spec)
    # no multiplication by exact zero and no products with 1.0 survive in the code
    assert "*0.0" not in text.replace(" ", "") and "1.0*" not in text.replace(" ", "")
    # dense 6×6 arithmetic would cost ~1 700 operations for the two congruences XᵀIcX alone
    assert spec.count_ops() < 200


@pytest.mark.parametrize("rel, floating", [("ur_description/urdf/ur5_robot.urdf", False),
                                           ("solo_description/robots/solo12.urdf", True)])
def test_traced_algorithms_match_core_on_example_robot_data(rel, floating):
    check_all_algorithms(load_robot(rel, floating), n=3, tol=1e-10)


@pytest.mark.slow
def test_traced_aba_matches_core_on_talos():
    model = load_robot("talos_data/robots/talos_reduced.urdf", True)
    check_all_algorithms(model, n=3, tol=1e-10, algorithms=("aba",))


def test_traced_algorithms_carry_joint_armature():
    """Rotor inertia (MuJoCo's armature) on revolute, prismatic and ball joints: τ gains
    armature·q̈, H its diagonal, ABA's D blocks their diagonal — as in the core."""
    b = mb.ModelBuilder("rotors")
    b.add_body("base", joint="revolute", axis=[0, 0, 1], inertia=[0.2, 0.3, 0.4], armature=0.7)
    b.add_body("slider", parent="base", joint="prismatic", axis=[1, 0, 0], joint_translation=(0.3, 0, 0),
               inertia=[0.1, 0.1, 0.1], armature=0.25)
    b.add_body("ball", parent="slider", joint="spherical", joint_translation=(0, 0.2, 0.1), com=(0, 0, 0.3),
               inertia=[0.05, 0.06, 0.07], armature=[0.1, 0.2, 0.3])
    b.add_body("tip", parent="ball", joint="revolute", axis=[0, 1, 0], joint_translation=(0, 0, 0.4),
               inertia=[0.02, 0.03, 0.04], armature=0.05)
    model = b.build()
    assert np.count_nonzero(model.armature) == model.nv
    check_all_algorithms(model, tol=1e-11)


def test_bad_algorithm_and_model_are_named():
    with pytest.raises(ValueError, match="algorithm: expected one of rnea, crba, aba, got 'fd'"):
        codegen.compile_algorithm(mb.models.planar(2), "fd")
    with pytest.raises(TypeError, match="expected a multibody Model"):
        codegen.compile_algorithm("planar", "aba")
    with pytest.raises(ValueError, match="numeric model"):
        codegen.compile_algorithm(mb.models.ra3link(symbolic=True), "aba")


# ---- derivatives --------------------------------------------------------------------------------
def central_difference(fun, x, eps=1e-6):
    cols = []
    for k in range(len(x)):
        e = np.zeros(len(x))
        e[k] = eps
        cols.append((fun(x + e) - fun(x - e)) / (2 * eps))
    return np.array(cols).T


@pytest.mark.parametrize("backend", ["numpy", "compiled"])
@pytest.mark.parametrize("make", [lambda: mb.models.double_pendulum(),
                                  lambda: mb.models.auto_tree(4, bf=2, skew=0.5),
                                  lambda: mb.models.ra3link_prismatic()], ids=["dp", "auto_tree", "ra3linkP"])
def test_derivatives_match_finite_differences_of_the_core(make, backend):
    model = make()
    d = codegen.derivatives(model, backend=backend)
    rng = np.random.default_rng(7)
    q, qd, tau, qdd = rng.uniform(-1, 1, (4, model.nv))
    out = d(q, qd, tau)
    assert rel_err(out["qdd"], mb.aba(model, q, qd, tau)) < 1e-12
    fd = {"dqdd_dq": central_difference(lambda x: mb.aba(model, x, qd, tau), q),
          "dqdd_dqd": central_difference(lambda x: mb.aba(model, q, x, tau), qd),
          "dqdd_dtau": central_difference(lambda x: mb.aba(model, q, qd, x), tau)}
    for key, want in fd.items():
        assert rel_err(out[key], want) < 1e-7, key
    inv = d.inverse(q, qd, qdd)
    assert rel_err(inv["tau_id"], mb.rnea(model, q, qd, qdd)) < 1e-12
    assert rel_err(inv["dID_dq"], central_difference(lambda x: mb.rnea(model, x, qd, qdd), q)) < 1e-7
    assert rel_err(inv["dID_dqd"], central_difference(lambda x: mb.rnea(model, q, x, qdd), qd)) < 1e-7


def test_derivatives_batch_and_parameters():
    model = mb.models.ra3link(symbolic=True)
    d = codegen.derivatives(model, backend="compiled")
    rng = np.random.default_rng(8)
    Q, QD, TAU = rng.uniform(-1, 1, (3, 6, 3))
    batch = d(Q, QD, TAU)
    numeric = mb.models.ra3link()
    for k in range(6):
        one = d(Q[k], QD[k], TAU[k])
        assert np.allclose(batch["dqdd_dq"][k], one["dqdd_dq"], rtol=1e-13, atol=1e-13)
        fd = central_difference(lambda x: mb.aba(numeric, x, QD[k], TAU[k]), Q[k])
        assert rel_err(one["dqdd_dq"], fd) < 1e-7


@pytest.mark.slow
def test_starleth_derivatives_match_finite_differences_of_the_core():
    model = mb.models.starleth()
    d = codegen.derivatives(model)
    S = np.array(d.spec.info["eom"].S, dtype=float)          # 12 × 18: joints actuated, base not
    rng = np.random.default_rng(9)
    q, qd = rng.uniform(-1, 1, (2, model.nv))
    tau = rng.uniform(-1, 1, S.shape[0])
    out = d(q, qd, tau)
    assert rel_err(out["qdd"], mb.aba(model, q, qd, S.T @ tau)) < 1e-11
    fd_q = central_difference(lambda x: mb.aba(model, x, qd, S.T @ tau), q)
    fd_qd = central_difference(lambda x: mb.aba(model, q, x, S.T @ tau), qd)
    fd_tau = central_difference(lambda x: mb.aba(model, q, qd, S.T @ x), tau)
    assert rel_err(out["dqdd_dq"], fd_q) < 1e-6
    assert rel_err(out["dqdd_dqd"], fd_qd) < 1e-6
    assert rel_err(out["dqdd_dtau"], fd_tau) < 1e-6
