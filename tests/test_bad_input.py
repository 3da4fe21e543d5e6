"""Bad input gives a ValueError that names the argument and says what was expected — never a crash
inside a compiled kernel and never a silent NaN."""
from __future__ import annotations

import numpy as np
import pytest

import multibody as mb
from multibody.dynamics import fd_sparse


@pytest.fixture(scope="module")
def arm():
    return mb.models.auto_tree(4, bf=2, skew=0.3)


@pytest.fixture(scope="module")
def floating():
    return mb.models.vee()


def _calls(model, q, qd, qdd, tau, fe):
    fd = np.ones(model.nb, bool)
    fd[-1] = False
    return {
        "rnea": lambda: mb.rnea(model, q, qd, qdd, fe),
        "aba": lambda: mb.aba(model, q, qd, tau, fe),
        "fd_crb": lambda: mb.fd_crb(model, q, qd, tau, fe),
        "fd_sparse": lambda: fd_sparse(model, q, qd, tau, fe),
        "hand_c": lambda: mb.hand_c(model, q, qd, fe),
        "hd": lambda: mb.hybrid_dynamics(model, fd, q, qd, qdd, tau, fe),
    }


def ok_state(model, n=None):
    q = model.neutral()
    z = np.zeros(model.nv)
    fe = np.zeros((model.nb, 6))
    if n is not None:
        q, z, fe = np.tile(q, (n, 1)), np.zeros((n, model.nv)), np.zeros((n, model.nb, 6))
    return q, z.copy(), z.copy(), z.copy(), fe


ALGOS = ["rnea", "aba", "fd_crb", "fd_sparse", "hand_c", "hd"]


# --------------------------------------------------------------------------- shapes and lengths
@pytest.mark.parametrize("algo", ALGOS)
def test_wrong_length_of_q_names_q_and_the_expected_shape(arm, algo):
    q, qd, qdd, tau, fe = ok_state(arm)
    with pytest.raises(ValueError, match=r"q: expected shape \(\.\.\., 4\).*got \(5,\)"):
        _calls(arm, np.zeros(5), qd, qdd, tau, fe)[algo]()


@pytest.mark.parametrize("algo", ["rnea", "aba", "fd_crb", "fd_sparse", "hd"])
def test_wrong_length_of_velocity_arguments(floating, algo):
    q, qd, qdd, tau, fe = ok_state(floating)
    bad = np.zeros(floating.nv - 1)
    for which in ("qd", "qdd", "tau"):
        args = dict(q=q, qd=qd, qdd=qdd, tau=tau, fe=fe)
        args[which] = bad
        used = {"rnea": ("qd", "qdd"), "aba": ("qd", "tau"), "fd_crb": ("qd", "tau"),
                "fd_sparse": ("qd", "tau"), "hd": ("qd", "qdd", "tau")}[algo]
        if which not in used:
            continue
        with pytest.raises(ValueError, match=rf"{which}: expected shape \(\.\.\., 7\)"):
            _calls(floating, **args)[algo]()


def test_free_joint_q_needs_nq_not_nv(floating):
    assert (floating.nq, floating.nv) == (8, 7)
    with pytest.raises(ValueError, match=r"q: expected shape \(\.\.\., 8\), got \(7,\)"):
        mb.rnea(floating, np.zeros(7), np.zeros(7), np.zeros(7))


@pytest.mark.parametrize("algo", ["rnea", "aba", "fd_crb", "fd_sparse", "hd"])
def test_wrong_f_ext_shape(arm, algo):
    q, qd, qdd, tau, _ = ok_state(arm)
    for bad in (np.zeros((arm.nb, 3)), np.zeros((arm.nb + 1, 6)), np.zeros(6)):
        with pytest.raises(ValueError, match=r"f_ext: expected shape \(\.\.\., 4, 6\)"):
            _calls(arm, q, qd, qdd, tau, bad)[algo]()


def test_batch_dimensions_that_do_not_broadcast(arm):
    with pytest.raises(ValueError, match="batch dimensions do not match"):
        mb.rnea(arm, np.zeros((3, 4)), np.zeros((5, 4)), np.zeros(4))
    with pytest.raises(ValueError, match="batch dimensions do not match"):
        fd_sparse(arm, np.zeros((3, 4)), np.zeros((2, 4)), np.zeros(4))


def test_non_numeric_arguments(arm):
    # not numbers at all: a TypeError (the array gate, csrc/common/gate.h); a ragged nest: a ValueError
    with pytest.raises(TypeError, match="q: expected an array of numbers"):
        mb.crba(arm, ["a", "b", "c", "d"])
    with pytest.raises(TypeError, match="qd: expected an array of numbers"):
        mb.aba(arm, np.zeros(4), [1, 2, None, object()], np.zeros(4))
    with pytest.raises(ValueError, match="q: expected"):
        mb.forward_kinematics(arm, [[1, 2], [3]])


# --------------------------------------------------------------------------- NaN / inf
READS = {"rnea": ("q", "qd", "qdd", "fe"), "aba": ("q", "qd", "tau", "fe"), "fd_crb": ("q", "qd", "tau", "fe"),
         "fd_sparse": ("q", "qd", "tau", "fe"), "hand_c": ("q", "qd", "fe"), "hd": ("q", "qd", "fe")}


@pytest.mark.parametrize("algo, which", [(a, w) for a, ws in READS.items() for w in ws])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_inputs_are_refused_by_name(floating, algo, which, value):
    q, qd, qdd, tau, fe = ok_state(floating)
    args = dict(q=q, qd=qd, qdd=qdd, tau=tau, fe=fe)
    bad = args[which].copy()
    bad.flat[min(2, bad.size - 1)] = value
    args[which] = bad
    name = "f_ext" if which == "fe" else which
    with pytest.raises(ValueError, match=rf"^{name}: contains NaN or inf"):
        _calls(floating, **args)[algo]()


def test_hybrid_dynamics_reads_qdd_at_id_joints_and_tau_at_fd_joints_only(arm):
    q, qd, qdd, tau, _ = ok_state(arm)
    fd = np.array([True, True, False, False])
    qdd_nan_at_fd = qdd.copy()
    qdd_nan_at_fd[0] = np.nan  # ignored: joint 0 is forward dynamics
    tau_nan_at_id = tau.copy()
    tau_nan_at_id[3] = np.nan  # ignored: joint 3 is inverse dynamics
    qdd_out, tau_out = mb.hybrid_dynamics(arm, fd, q, qd, qdd_nan_at_fd, tau_nan_at_id)
    assert np.all(np.isfinite(qdd_out)) and np.all(np.isfinite(tau_out))
    qdd_bad = qdd.copy()
    qdd_bad[2] = np.nan
    with pytest.raises(ValueError, match="^qdd: contains NaN or inf"):
        mb.hybrid_dynamics(arm, fd, q, qd, qdd_bad, tau)
    tau_bad = tau.copy()
    tau_bad[1] = np.inf
    with pytest.raises(ValueError, match="^tau: contains NaN or inf"):
        mb.hybrid_dynamics(arm, fd, q, qd, qdd, tau_bad)


@pytest.mark.parametrize("n", [10, 300])  # serial and parallel batch paths
@pytest.mark.parametrize("algo", ["rnea", "aba", "fd_crb", "fd_sparse"])
def test_one_bad_state_in_a_batch_is_found(arm, algo, n):
    q, qd, qdd, tau, fe = ok_state(arm, n)
    q[n - 3, 1] = np.nan
    with pytest.raises(ValueError, match="^q: contains NaN or inf"):
        _calls(arm, q, qd, qdd, tau, fe)[algo]()


def test_kinematics_energy_and_integrate_refuse_non_finite(floating):
    q, qd, _, _, _ = ok_state(floating)
    qn = q.copy()
    qn[0] = np.nan
    qdn = qd.copy()
    qdn[4] = np.inf
    for fn in (lambda: mb.forward_kinematics(floating, qn), lambda: mb.crba(floating, qn),
               lambda: mb.energy(floating, qn, qd), lambda: mb.body_jacobian(floating, qn, 1),
               lambda: mb.integrate(floating, qn, qd), lambda: mb.center_of_mass(floating, qn),
               lambda: mb.com_jacobian(floating, qn)):
        with pytest.raises(ValueError, match="^q: contains NaN or inf"):
            fn()
    for fn in (lambda: mb.energy(floating, q, qdn), lambda: mb.body_states(floating, q, qdn),
               lambda: mb.jdot_qd(floating, q, qdn, 1)):
        with pytest.raises(ValueError, match="^qd: contains NaN or inf"):
            fn()
    with pytest.raises(ValueError, match="^v: contains NaN or inf"):   # integrate's argument is v
        mb.integrate(floating, q, qdn)
    with pytest.raises(ValueError, match="^dt: expected a finite number"):
        mb.integrate(floating, q, qd, np.nan)


@pytest.mark.parametrize("model_fn, quat_at", [(mb.models.vee, 3), (lambda: _ball(), 0)])
def test_zero_quaternion(model_fn, quat_at):
    model = model_fn()
    q = model.neutral()
    q[quat_at:quat_at + 4] = 0.0
    z = np.zeros(model.nv)
    for fn in (lambda: mb.rnea(model, q, z, z), lambda: mb.aba(model, q, z, z), lambda: mb.crba(model, q),
               lambda: fd_sparse(model, q, z, z), lambda: mb.forward_kinematics(model, q),
               lambda: mb.energy(model, q, z), lambda: mb.integrate(model, q, z)):
        with pytest.raises(ValueError, match="^q: a quaternion .* zero norm; expected a non-zero quaternion"):
            fn()


def _ball(mass=1.0, inertia=(0.1, 0.2, 0.25), allow_massless=False):
    b = mb.ModelBuilder("ball")
    b.add_body("ball", None, "spherical", mass=mass, com=[0, 0, -0.5], inertia=np.diag(inertia),
               allow_massless=allow_massless)
    return b.build()


# --------------------------------------------------------------------------- models
def test_unknown_joint_types():
    b = mb.ModelBuilder()
    with pytest.raises(ValueError, match=r"^joint: unknown joint type 'hinge'; expected one of \["):
        b.add_body("a", None, "hinge")
    with pytest.raises(ValueError, match=r"^joint: unknown joint type 99"):     # 7 is the cylindrical joint now
        b.add_body("a", None, 99)
    m = mb.models.planar(2)
    with pytest.raises(ValueError, match=r"^jtype: body 1 has unknown joint type code 42; expected one of"):
        mb.Model(parent=m.parent, jtype=[1, 42], jaxis=m.jaxis, jpitch=m.jpitch, tree_rotation=m.tree_rotation,
                 tree_translation=m.tree_translation, mass=m.mass, com=m.com, inertia_com=m.inertia_com)


def _model_kwargs(**over):
    m = mb.models.planar(3)
    kw = dict(parent=m.parent, jtype=m.jtype, jaxis=m.jaxis, jpitch=m.jpitch, tree_rotation=m.tree_rotation,
              tree_translation=m.tree_translation, mass=m.mass, com=m.com, inertia_com=m.inertia_com)
    kw.update(over)
    return kw


@pytest.mark.parametrize("parent, msg", [
    ([-1, 2, 1], r"^parent: body 1 has parent 2; expected −1 \(base\) or an earlier body"),  # points forward
    ([1, 0, 1], r"^parent: body 0 has parent 1"),                                         # cycle 0 ↔ 1
    ([-1, 1, 1], r"^parent: body 1 has parent 1"),                                        # self loop
    ([-1, 0, -2], r"^parent: body 2 has parent -2"),
])
def test_parents_that_form_a_cycle_or_point_forward(parent, msg):
    with pytest.raises(ValueError, match=msg):
        mb.Model(**_model_kwargs(parent=parent))


def test_builder_parent_must_exist_already():
    b = mb.ModelBuilder()
    b.add_body("a", None, "Rz", inertia=[1, 1, 1])
    with pytest.raises(ValueError, match=r"^parent: body 'b' names parent 'c', which is not defined yet; "
                                         r"known bodies: \['a'\]"):
        b.add_body("b", "c", "Rz")
    with pytest.raises(ValueError, match=r"^parent: body 'b' names parent index 3, but only bodies 0…0 exist"):
        b.add_body("b", 3, "Rz")
    with pytest.raises(ValueError, match=r"^name: a body named 'a' already exists"):
        b.add_body("a", None, "Rz")


def test_subnormal_mass_is_named_not_reported_as_too_large():
    # 1e-310 is positive but 1/m overflows: aba said "the inputs are too large" and fd_sparse returned 0
    b = mb.ModelBuilder()
    with pytest.raises(ValueError, match=r"^mass: body 'a' has mass 1e-310, below the smallest normal double"):
        b.add_body("a", None, "Rz", mass=1e-310, com=[1, 0, 0])
    b.add_body("a", None, "Rz", mass=1e-300, com=[1, 0, 0])   # tiny but normal: allowed
    with pytest.raises(ValueError, match=r"^mass: body 'body0' has mass 1e-310, below the smallest normal"):
        mb.Model(**_model_kwargs(mass=[1e-310, 1.0, 1.0]))


@pytest.mark.parametrize("mass", [0.0, -1.0, np.nan, np.inf])
def test_non_positive_or_non_finite_mass(mass):
    b = mb.ModelBuilder()
    with pytest.raises(ValueError, match=r"^mass: body 'a' has mass .*; expected a positive number"):
        b.add_body("a", None, "Rz", mass=mass)
    if np.isfinite(mass) and mass < 0:
        with pytest.raises(ValueError, match=r"^mass: body 'body0' has mass -1.0; expected ≥ 0"):
            mb.Model(**_model_kwargs(mass=[mass, 1.0, 1.0]))


def test_inertia_must_be_symmetric_positive_definite_and_physical():
    b = mb.ModelBuilder()
    with pytest.raises(ValueError, match=r"^inertia: body 'a' inertia is not positive definite"):
        b.add_body("a", None, "Rz", inertia=np.diag([1.0, 1.0, -0.5]))
    with pytest.raises(ValueError, match=r"^inertia: body 'a' has a non-symmetric inertia matrix"):
        b.add_body("a", None, "Rz", inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match=r"^inertia: body 'a' violates the triangle inequality"):
        b.add_body("a", None, "Rz", inertia=[1.0, 1.0, 3.0])
    with pytest.raises(ValueError, match=r"^inertia: body 'a' expects a finite 3×3 matrix"):
        b.add_body("a", None, "Rz", inertia=np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"^inertia: body 'body1' inertia is not positive definite"):
        mb.Model(**_model_kwargs(inertia_com=[np.eye(3), -np.eye(3), np.eye(3)]))


def test_model_arrays_with_wrong_shapes_or_values():
    with pytest.raises(ValueError, match=r"^jaxis: expected shape \(3, 3\), got \(3, 2\)"):
        mb.Model(**_model_kwargs(jaxis=np.zeros((3, 2))))
    with pytest.raises(ValueError, match=r"^com: contains NaN or inf"):
        mb.Model(**_model_kwargs(com=np.full((3, 3), np.nan)))
    R = np.eye(3)
    R[0, 0] = 2.0
    with pytest.raises(ValueError, match=r"^tree_rotation: body 'body2' rotation is not a proper orthonormal"):
        mb.Model(**_model_kwargs(tree_rotation=[np.eye(3), np.eye(3), R]))
    b = mb.ModelBuilder()
    with pytest.raises(ValueError, match=r"^axis: must be a non-zero vector"):
        b.add_body("a", None, "revolute", axis=[0, 0, 0])
    with pytest.raises(ValueError, match=r"^joint_rotation of 'a': not a proper rotation matrix"):
        b.add_body("a", None, "Rz", joint_rotation=np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match=r"^com of 'a': expected 3 finite numbers"):
        b.add_body("a", None, "Rz", com=[0, 0])
    with pytest.raises(ValueError, match=r"^build: the model has no bodies"):
        mb.ModelBuilder().build()
    with pytest.raises(ValueError, match=r"^nb: expected an integer ≥ 1"):
        mb.models.auto_tree(0)


def test_unknown_body_joint_and_frame_names(arm):
    q = np.zeros(arm.nq)
    with pytest.raises(ValueError, match=r"^body: no body named 'hand'; bodies are \['B1', 'B2', 'B3', 'B4'\]"):
        mb.body_jacobian(arm, q, "hand")
    with pytest.raises(ValueError, match=r"^body: no body named 'hand'"):
        mb.point_position(arm, q, "hand")
    with pytest.raises(ValueError, match=r"^body: index 9 out of range 0…3"):
        mb.point_velocity(arm, q, q, 9)
    with pytest.raises(ValueError, match=r"^joint: no joint named 'J9'"):
        arm.joint_index("J9")
    with pytest.raises(ValueError, match=r"^frame: no frame or body named 'tcp'"):
        mb.frame_pose(arm, q, "tcp")
    with pytest.raises(ValueError, match=r"^point: contains NaN or inf"):
        mb.point_position(arm, q, "B2", point=[0, np.nan, 0])
    with pytest.raises(ValueError, match=r"^frame: expected one of \['world_aligned', 'local', 'world'\]"):
        mb.body_jacobian(arm, q, "B2", frame="base")


@pytest.mark.parametrize("fd", [[True, False], [1, 0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5], ["yes"] * 4,
                                np.ones((2, 4), bool)])
def test_bad_hybrid_dynamics_mask(arm, fd):
    z = np.zeros(4)
    with pytest.raises(ValueError, match=r"^fd: expected 4 booleans \(one per joint\)"):
        mb.hybrid_dynamics(arm, fd, z, z, z, z)


# --------------------------------------------------------------------------- singular models: no silent NaN
def _with_massless_leaf():
    b = mb.ModelBuilder("massless leaf")
    b.add_body("upper", None, "Ry", mass=1.0, com=[0.1, 0.2, -0.5], inertia=[0.1, 0.1, 0.01])
    b.add_body("lower", "upper", "revolute", axis=[0.3, 0.4, 0.5], mass=0.0, allow_massless=True,
               joint_translation=[0.1, 0.3, -1])
    return b.build()


def _point_mass_on_ball(offset):
    b = mb.ModelBuilder("point mass on a ball joint")
    b.add_body("p", None, "spherical", mass=1.0, com=offset)  # no rotational inertia about its CoM
    return b.build()


@pytest.mark.parametrize("model_fn", [_with_massless_leaf, lambda: _point_mass_on_ball([0, 0, -0.5]),
                                      lambda: _point_mass_on_ball([0.3, -0.2, 0.4]),
                                      lambda: _point_mass_on_ball([0, 0, 0])])
@pytest.mark.parametrize("algo", ["aba", "fd_crb", "fd_sparse", "hd"])
def test_singular_inertia_raises_instead_of_nan(model_fn, algo):
    """A massless leaf, or a point mass on a ball joint (no inertia about the line through it), has
    a singular joint-space inertia: q̈ is undefined and must not come back as NaN or garbage."""
    model = model_fn()
    q, qd, qdd, tau, _ = ok_state(model)
    tau[:] = 1.0
    if model.jtype[0] == mb.JointType.SPHERICAL:  # a generic orientation: the pivot is round-off, not 0
        q = np.array([0.9, 0.1, -0.3, 0.2])
    else:
        q = np.array([0.3, 1.1])
    fd = np.ones(model.nb, bool)
    fn = _calls(model, q, qd, qdd, tau, None)
    fn["hd"] = lambda: mb.hybrid_dynamics(model, fd, q, qd, qdd, tau)
    with pytest.raises(ValueError, match=r"^model: singular joint-space inertia"):
        fn[algo]()
    # what is defined stays finite
    assert np.all(np.isfinite(mb.crba(model, q))) and np.all(np.isfinite(mb.rnea(model, q, qd, qdd)))


def test_symbolic_model_needs_values_for_numeric_algorithms():
    import sympy as sp
    m = mb.models.planar(2)
    L = sp.Symbol("L")
    sym = mb.Model(**_model_kwargs(tree_translation=np.array([[0, 0, 0], [L, 0, 0], [1, 0, 0]], dtype=object)))
    with pytest.raises(ValueError, match=r"model has symbolic parameters; call model.subs"):
        mb.rnea(sym, np.zeros(3), np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match=r"^subs: parameter\(s\) \['L'\] have no value"):
        sym.subs({})
    assert m.nb == 2
