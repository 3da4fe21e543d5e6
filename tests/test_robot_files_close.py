"""What closes issue 19: a singular model's error names its body (per thread), and the model's own
constraints in fd_gq and linearize."""
from __future__ import annotations

import dataclasses
import glob
import os
import threading
import warnings

import dm_control
import mujoco
import numpy as np
import pytest

import multibody as mb
from multibody.dynamics import fd_crb
from multibody.model.mjcf import MJCFError, MJCFWarning, load_mjcf
from multibody.simulation.constraints import ConstraintSet
from multibody.simulation.limits import tendon_forces


def massless_leaf(names, leaf):
    """romeo's case built by hand: a chain whose body ``leaf`` has no mass and no inertia."""
    b = mb.ModelBuilder("chain")
    parent = None
    for nm in names:
        b.add_body(nm, parent, "Rx", mass=1.0, com=[0, 0, -0.3], inertia=np.eye(3) * 0.1)
        parent = nm
    m = b.build()
    k = names.index(leaf)
    mass, inertia = m.mass.copy(), m.inertia_com.copy()
    mass[k], inertia[k] = 0.0, 0.0
    return dataclasses.replace(m, mass=mass, inertia_com=inertia)


def test_singular_body_is_named_single_and_batched():
    m = massless_leaf(["upper", "lower", "finger"], "finger")
    q = np.zeros(3)
    expected = r"at the joint of body 'finger' \(model.body_names\[2\]\) is singular"
    with pytest.raises(ValueError, match=expected):
        mb.aba(m, q, q, q)
    with pytest.raises(ValueError, match=expected):                 # on worker threads
        mb.aba(m, np.zeros((2000, 3)), np.zeros((2000, 3)), np.zeros((2000, 3)))
    with pytest.raises(ValueError, match=r"^model: singular joint-space inertia \(a massless body"):
        fd_crb(m, q, q, q)                                        # Cholesky: no body located, none named
    assert np.all(np.isfinite(mb.rnea(m, q, q, q)))                  # what needs no M⁻¹ works


def test_two_threads_failing_at_once_keep_their_own_body():
    """The body is handed from the worker threads to the caller's per call, not through one global:
    two callers failing at the same time each name their own body."""
    models = {"alpha": massless_leaf(["a0", "alpha"], "alpha"), "beta": massless_leaf(["b0", "b1", "beta"], "beta")}
    threads_before = mb.get_num_threads()
    mb.set_num_threads(2)
    start = threading.Barrier(2)
    wrong = []

    def fail(name, rounds=40):
        m = models[name]
        Q = np.zeros((600, m.nv))
        start.wait()
        for _ in range(rounds):
            try:
                mb.aba(m, Q, Q, Q)
                wrong.append(f"{name}: no error")
            except ValueError as e:
                if f"body '{name}'" not in str(e):
                    wrong.append(f"{name}: {e}")
            try:
                mb.aba(m, Q[0], Q[0], Q[0])
            except ValueError as e:
                if f"body '{name}'" not in str(e):
                    wrong.append(f"{name} (single): {e}")

    threads = [threading.Thread(target=fail, args=(nm,)) for nm in models]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        mb.set_num_threads(threads_before)
    assert not wrong, wrong[:3]


# --------------------------------------------------------------------------- fd_gq and linearize
# MuJoCo's equality is soft: J q̈ = a_ref + R (A + R)⁻¹ (J q̈_free − a_ref) with A = J M⁻¹ Jᵀ and
# R = (1 − d)/d · diag(A) (solimp d = 0.9999), a_ref = −b ċ − k c.  On the constraint set (c = ċ = 0,
# and J̇q̇ = 0: a linear coupling, or q̇ = 0 for the loop, since MuJoCo leaves J̇q̇ out) a_ref = 0,
# so MuJoCo lets ≈ 1e-4 of the free constraint acceleration J q̈_free through where we solve
# J q̈ = −J̇q̇ exactly: |q̈_ours − q̈_mujoco| ≲ 1e-4 |q̈_free|.  Tolerance 3e-4 · max|q̈_free|.
STIFF = 'solref="0.0005 1" solimp="0.9999 0.9999 0.001 0.5 2"'
OPTIONS = '<option><flag contact="disable" limit="disable"/></option>'

FINGER = f"""<mujoco>{OPTIONS}<worldbody>
  <body name="palm" pos="0 0 1"><joint name="wrist" axis="0 1 0"/><geom type="box" size=".05 .05 .02" mass="1" pos=".1 0 0"/>
    <body name="knuckle" pos=".15 0 0"><joint name="k1" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 .1 0 0" size=".01" mass=".2"/>
      <body name="tip" pos=".1 0 0"><joint name="k2" axis="0 1 0" ref="0.2"/><geom type="capsule" fromto="0 0 0 .08 0 0" size=".01" mass=".1"/>
      </body></body></body></worldbody>
  <equality><joint joint1="k2" joint2="k1" polycoef="0 0.8 0 0 0" {STIFF}/></equality></mujoco>"""

# a spatial loop (no redundant rows): a ball-jointed crank and a hinged rocker joined by a connect
LOOP = f"""<mujoco>{OPTIONS}<worldbody>
  <body name="crank"><joint name="c" type="ball"/><geom type="capsule" fromto="0 0 0 0 0 -.5" size=".02" mass="1"/>
    <body name="coupler" pos="0 0 -.5"><joint name="m" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 1 0 0" size=".02" mass="2"/></body></body>
  <body name="rocker" pos="1 0 0"><joint name="r" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -.5" size=".02" mass="1"/></body>
  </worldbody><equality><connect body1="coupler" body2="rocker" anchor="1 0 0" {STIFF}/></equality></mujoco>"""


def load(xml):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MJCFWarning)
        return load_mjcf(xml)


def finger_state():
    ref = np.deg2rad(0.2)                                  # MJCF angles are in degrees by default
    q = np.array([0.3, 0.4, ref + 0.8 * 0.4])             # k2 − ref = 0.8 k1
    return q, np.array([1.0, -2.0, -1.6])                 # q̇_k2 = 0.8 q̇_k1


def loop_state(model, theta=0.4):
    """The parallelogram turned by θ about y (ball quaternion [w, x, y, z]), at rest."""
    q = np.array([np.cos(theta / 2), 0, np.sin(theta / 2), 0, -theta, theta])
    return q, np.zeros(model.nv)


def mujoco_qacc(xml, model, q, qd, tau):
    mj = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mj)
    d.qpos[:], d.qvel[:] = mb.mjcf.to_mujoco_state(model, q, qd)
    d.qfrc_applied[:] = tau                                 # hinges and a ball: the same generalized forces
    mujoco.mj_forward(mj, d)
    return d.qacc.copy(), d.qacc_smooth.copy()


@pytest.mark.parametrize("xml,state", [(FINGER, lambda m: finger_state()), (LOOP, loop_state)],
                         ids=["finger coupling", "connect loop"])
def test_fd_gq_honours_the_models_constraints_as_mujoco_does(xml, state):
    model = load(xml)
    assert model.constraints and model.gamma_q is None
    q, qd = state(model)
    tau = np.array([0.3, -0.2, 0.1, 0.05, 0.2, -0.1])[:model.nv]
    cons = ConstraintSet(*model.constraints)
    c, cdot = cons.residual(model, q, qd)
    assert np.abs(c).max() < 1e-12 and np.abs(cdot).max() < 1e-12       # a state on the constraints
    qdd = mb.fd_gq(model, q, qd, tau)
    terms = cons.evaluate(model, q, qd)
    assert np.abs(terms.J @ qdd + terms.bias).max() < 1e-12               # c̈ = 0
    free = mb.aba(model, q, qd, tau)
    assert np.abs(terms.J @ free + terms.bias).max() > 0.1                # the constraint does something
    theirs, theirs_free = mujoco_qacc(xml, model, q, qd, tau)
    assert np.allclose(theirs_free, free, rtol=0, atol=1e-12 * np.abs(free).max())
    assert np.abs(qdd - theirs).max() < 3e-4 * np.abs(free).max(), np.abs(qdd - theirs).max()
    assert np.array_equal(mb.fd_gq(model, np.tile(q, (2, 1)), qd, tau)[1], qdd)    # batched
    with pytest.raises(TypeError, match="constraints: the model carries constraints"):
        mb.fd_gq(model, q, qd, tau, constraints="stiff")


def plain_fd_jacobian(model, q, qd, tau, h=1e-6):
    """∂q̈/∂(δq, δq̇, τ) of mb.fd_gq by plain central differences (δq on the manifold)."""
    nv = model.nv
    f = lambda qq, vv, tt: mb.fd_gq(model, qq, vv, tt)               # noqa: E731
    Aq = np.column_stack([(f(mb.integrate(model, q, h * e), qd, tau) - f(mb.integrate(model, q, -h * e), qd, tau))
                          / (2 * h) for e in np.eye(nv)])
    Av = np.column_stack([(f(q, qd + h * e, tau) - f(q, qd - h * e, tau)) / (2 * h) for e in np.eye(nv)])
    Bt = np.column_stack([(f(q, qd, tau + h * e) - f(q, qd, tau - h * e)) / (2 * h) for e in np.eye(nv)])
    return Aq, Av, Bt


@pytest.mark.parametrize("xml,state,dof", [(FINGER, lambda m: finger_state(), 2), (LOOP, loop_state, 2)],
                         ids=["finger coupling (flat, moving)", "connect loop (curved, at equilibrium)"])
def test_linearize_a_constrained_model_is_the_motion_on_its_constraints(xml, state, dof):
    model = load(xml)
    nv = model.nv
    q, qd = state(model)
    tau = np.zeros(nv) if xml is FINGER else mb.rnea(model, q, qd, np.zeros(nv))   # the loop held still
    full = mb.linearize(model, q, qd, tau, coordinates="full")
    Aq, Av, Bt = plain_fd_jacobian(model, q, qd, tau)
    A, B = full
    assert np.allclose(A[nv:, :nv], Aq, rtol=0, atol=1e-6 * (1 + np.abs(Aq).max()))
    assert np.allclose(A[nv:, nv:], Av, rtol=0, atol=1e-6 * (1 + np.abs(Av).max()))
    assert np.allclose(B[nv:], Bt, rtol=0, atol=1e-6)
    # minimal coordinates: 2·dof states; the full linearisation adds the Baumgarte modes −1/T (T =
    # 20 ms, a double root per constraint row), and nothing else
    Ar, Br = red = mb.linearize(model, q, qd, tau)
    assert Ar.shape == (2 * dof, 2 * dof) and Br.shape == (2 * dof, nv)
    V = red.basis
    assert np.allclose(A @ V, V @ Ar, rtol=0, atol=1e-6 * np.abs(A).max())          # an invariant subspace
    ev_full = np.sort_complex(np.linalg.eigvals(A))
    ev_red = np.linalg.eigvals(Ar)
    baumgarte = np.full(2 * (nv - dof), -50.0)
    expected = np.sort_complex(np.concatenate([ev_red, baumgarte]))
    assert np.allclose(ev_full, expected, rtol=0, atol=1e-3 * np.abs(ev_full).max())
    assert np.allclose(V @ np.linalg.lstsq(V, np.concatenate([np.zeros(nv), Bt[:, 0]]), rcond=None)[0],
                       np.concatenate([np.zeros(nv), Bt[:, 0]]), atol=1e-8)         # τ moves on the constraints


def test_linearize_reduced_pendulum_frequencies_are_those_of_the_coupled_mechanism():
    """Held still by τ = g(q): δÿ = −K δy with K = (NᵀHN)⁻¹ Nᵀ ∂g/∂q N, built here from crba and rnea."""
    model = load(FINGER)
    q = finger_state()[0]
    Ar, _ = red = mb.linearize(model, q, np.zeros(3), mb.rnea(model, q, np.zeros(3), np.zeros(3)))
    N = red.basis[:3, :2]
    H = mb.crba(model, q)
    h = 1e-5
    dg = np.column_stack([(mb.rnea(model, q + h * e, np.zeros(3), np.zeros(3)) -
                           mb.rnea(model, q - h * e, np.zeros(3), np.zeros(3))) / (2 * h) for e in np.eye(3)])
    K = np.linalg.solve(N.T @ H @ N, N.T @ dg @ N)
    assert np.allclose(Ar[2:, :2], -K, rtol=0, atol=1e-7)
    assert np.allclose(Ar[:2, 2:], np.eye(2), atol=1e-12)
    with pytest.raises(ValueError, match="q, qd: the operating point is not on the constraints"):
        mb.linearize(model, np.array([0.3, 0.4, 0.0]), np.zeros(3))
    loop = load(LOOP)
    q, qd = loop_state(loop)
    with pytest.raises(ValueError, match="q, qd, tau: the constraint set is curved here and the point is no equilibrium"):
        mb.linearize(loop, q, qd)                                    # falling: no constant reduction
    assert mb.linearize(loop, q, qd, coordinates="full")[0].shape == (10, 10)


# --------------------------------------------------------------------------- sprung fixed tendons
FISH = os.path.join(os.path.dirname(dm_control.__file__), "suite", "fish.xml")


def load_fish(tmp_path, stiffness="1e-4", damping="0"):
    """dm_control's fish with what the Model does not keep switched off — the joint spring of tail2,
    the fluid (density), the actuators — and the fins' tendon spring/damper as asked; (model, mjModel)."""
    with open(FISH) as f:
        text = f.read()
    text = text.replace('stiffness="8e-5"', "").replace('density="5000"', 'density="0"')
    text = text.replace('<fixed name="fins_sym" stiffness="1e-4">',
                        f'<fixed name="fins_sym" stiffness="{stiffness}" damping="{damping}">')
    os.symlink(os.path.join(os.path.dirname(FISH), "common"), tmp_path / "common")   # its <include>s
    path = tmp_path / "fish.xml"
    path.write_text(text)
    mj = mujoco.MjModel.from_xml_path(str(path))
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_ACTUATION    # position servos pull at ctrl = 0: off on
    return dataclasses.replace(load(str(path)), actuators=None), mj   # both sides (one sits on a tendon)


def test_fish_loads_with_its_sprung_fin_tendon_as_mujocos_passive_force(tmp_path):
    with pytest.warns(MJCFWarning) as rec:
        model = load_mjcf(FISH)                                  # as shipped: loads
    assert not [w for w in rec if "fins_sym" in str(w.message)]
    (fins,) = model.tendons
    assert (fins.name, fins.joints, fins.coef, fins.stiffness) == ("fins_sym", ("finleft_roll", "finright_roll"),
                                                                   (0.5, 0.5), 1e-4)
    model, mj = load_fish(tmp_path, stiffness="0.05", damping="0.003")
    d = mujoco.MjData(mj)
    rng = np.random.default_rng(3)
    for _ in range(4):
        d.qpos[:] = mj.qpos0 + 0.5 * rng.normal(size=mj.nq)
        d.qpos[3:7] /= np.linalg.norm(d.qpos[3:7])
        d.qvel[:] = rng.normal(size=mj.nv)
        mujoco.mj_forward(mj, d)
        q, qd = mb.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
        ours = tendon_forces(model, q, qd) - model.damping * qd
        P = mb.mjcf.to_mujoco_state(model, np.broadcast_to(q, (model.nv, model.nq)), np.eye(model.nv))[1].T
        # generalized forces map with Pᵀ (qvel = P q̇, so τ_ours = Pᵀ τ_mujoco)
        assert np.abs(ours - P.T @ d.qfrc_passive).max() < 1e-15 + 1e-12 * np.abs(d.qfrc_passive).max()
        assert np.abs(tendon_forces(model, q, qd)).max() > 1e-4              # the tendon is in it
    batch = tendon_forces(model, np.tile(q, (3, 1)), np.tile(qd, (3, 1)))
    assert batch.shape == (3, model.nv) and np.array_equal(batch[2], tendon_forces(model, q, qd))


def test_fish_passive_run_with_its_fin_spring_moves_as_in_mujoco(tmp_path):
    # The fish as shipped (fin spring k = 1e-4).  RK4 on both sides (MuJoCo 0.1 ms, ours 1 ms); no
    # constraints, contacts or gravity in the fish: the runs differ by integration error only
    # (measured 3e-11 after 0.5 s).  Tolerance 1e-8, against the tendon's effect: the same run
    # without its force ends 0.36 away.
    model, mj = load_fish(tmp_path)
    mj.opt.timestep, mj.opt.integrator = 1e-4, mujoco.mjtIntegrator.mjINT_RK4
    d = mujoco.MjData(mj)
    d.qpos[:] = mj.qpos0
    d.qpos[[model.q_start[model.joint_index(j)] for j in ("finleft_roll", "finright_roll")]] = (0.6, 0.4)
    d.qvel[:] = 0.0
    d.qvel[:6] = [0.1, 0, 0, 0, 0, 0.5]
    q0, qd0 = mb.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    for _ in range(5000):
        mujoco.mj_step(mj, d)
    theirs, _ = mb.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    # simulate applies the model's tendon springs itself (listed in traj.passive); a controller
    # that cancels them shows they matter
    traj = mb.simulate(model, q0, qd0, 0.5, dt=1e-3, integrator="rk4")
    assert "tendons" in traj.passive
    free = mb.simulate(model, q0, qd0, 0.5, dt=1e-3, integrator="rk4",
                       controller=lambda t, q, v: -tendon_forces(model, q, v))
    assert np.abs(free.q[-1] - theirs).max() > 0.1                          # the tendon matters
    batch = mb.simulate_batch(model, q0[None], qd0[None], 0.5, dt=1e-3, integrator="rk4")
    assert np.array_equal(batch[0].q, traj.q)
    assert np.abs(traj.q[-1] - theirs).max() < 1e-8, np.abs(traj.q[-1] - theirs).max()


def test_fixed_tendon_dead_band_and_bad_definitions():
    xml = """<mujoco><option gravity="0 0 0"/><worldbody>
      <body name="a"><joint name="a" axis="0 1 0"/><geom size=".1" mass="1"/>
        <body name="b" pos=".3 0 0"><joint name="b" type="slide" axis="1 0 0"/><geom size=".1" mass="1"/></body></body>
      </worldbody><tendon><fixed name="band" stiffness="3" damping="0.5" springlength="0.1 0.4">
        <joint joint="a" coef="2"/><joint joint="b" coef="-1"/></fixed></tendon></mujoco>"""
    model, mj = load(xml), mujoco.MjModel.from_xml_string(xml)
    (band,) = model.tendons
    assert band.spring_length == (0.1, 0.4)
    d = mujoco.MjData(mj)
    for q in ([0.1, 0.0], [0.2, 0.1], [0.3, 0.05], [-0.2, 0.3]):     # above, inside, above, below the band
        d.qpos[:], d.qvel[:] = q, [0.3, -0.7]
        mujoco.mj_forward(mj, d)
        assert np.allclose(tendon_forces(model, d.qpos, d.qvel), d.qfrc_passive, rtol=0, atol=1e-14)
    from multibody.model.tendons import FixedTendon
    with pytest.raises(ValueError, match="tendon 'x': stiffness must be a finite number ≥ 0"):
        FixedTendon("x", ("a",), (1.0,), stiffness=-1)
    with pytest.raises(ValueError, match="tendon 'x': joints and coef must be non-empty and of equal length"):
        FixedTendon("x", ("a", "b"), (1.0,))
    with pytest.raises(TypeError, match="tendons: expected a tuple of tendon objects"):
        dataclasses.replace(model, tendons=("band",))
    ball = mb.load_mjcf('<mujoco><worldbody><body><joint name="s" type="ball"/><geom size=".1"/></body>'
                        '</worldbody></mujoco>')
    with pytest.raises(ValueError, match="tendon 'x': joint 's' is SPHERICAL; a fixed tendon spans hinge and slide"):
        FixedTendon("x", ("s",), (1.0,), stiffness=1).forces(ball, ball.neutral(), np.zeros(3))


# --------------------------------------------------------------------------- actuatorgravcomp
ARM_GC = """<mujoco><option gravity="0.5 0 -9.81"/><actuator><motor joint="elbow"/></actuator><worldbody>
  <body name="upper" gravcomp="1"><joint name="shoulder" axis="0 1 0" {attrs}/>
    <geom type="capsule" fromto="0 0 0 .4 0 0" size=".03" mass="1.5"/>
    <body name="lower" pos=".4 0 0" gravcomp="0.6"><joint name="elbow" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03" mass="0.8"/></body></body></worldbody></mujoco>"""


def test_actuator_gravcomp_unclamped_is_the_same_force_as_mujocos():
    xml = ARM_GC.format(attrs='actuatorgravcomp="true"')
    model, mj = load(xml), mujoco.MjModel.from_xml_string(xml)
    assert mj.jnt_actgravcomp[0] and model.gravcomp.tolist() == [1.0, 0.6]
    d = mujoco.MjData(mj)
    q, qd, tau = np.array([0.4, -0.7]), np.array([0.3, 1.1]), np.array([0.2, -0.1])
    d.qpos[:], d.qvel[:], d.qfrc_applied[:] = q, qd, tau
    mujoco.mj_forward(mj, d)
    assert abs(d.qfrc_actuator[0]) > 1.0 and d.qfrc_actuator[1] == 0       # the shoulder's lift is an actuator force
    fg = mb.gravity_compensation_forces(model, q)
    lift = mb.rnea(model, q, np.zeros(2), np.zeros(2)) - mb.rnea(model, q, np.zeros(2), np.zeros(2), fg)
    assert np.allclose(lift, d.qfrc_passive + d.qfrc_actuator, rtol=0, atol=1e-12)
    assert np.allclose(mb.aba(model, q, qd, tau, fg), d.qacc, rtol=0, atol=1e-10)


def test_actuator_gravcomp_clamped_by_the_actuator_range_is_kept_with_the_actuators():
    # (held to MuJoCo at random states in tests/test_actuator_gravcomp.py)
    xml = ARM_GC.format(attrs='actuatorgravcomp="true" actuatorfrclimited="true" actuatorfrcrange="-2 2"')
    model = load_mjcf(xml)
    assert model.gravcomp.tolist() == [1.0, 0.6] and model.actuators.gravcomp_clipped().tolist() == [0]
    # a range on a joint without actuatorgravcomp clamps actuators only: loads
    assert load(ARM_GC.format(attrs='actuatorfrclimited="true" actuatorfrcrange="-2 2"')).nv == 2
    # without actuators MuJoCo drops the joint's gravcomp altogether (qfrc_actuator stays 0)
    bare = ARM_GC.format(attrs='actuatorgravcomp="true"').replace('<actuator><motor joint="elbow"/></actuator>', "")
    mj = mujoco.MjModel.from_xml_string(bare)
    d = mujoco.MjData(mj)
    mujoco.mj_forward(mj, d)
    assert d.qfrc_gravcomp[0] != 0 and d.qfrc_actuator[0] == 0 and d.qfrc_passive[0] == 0
    with pytest.raises(MJCFError, match=r"<joint> 'shoulder' \(body 'upper'\): actuatorgravcomp in a model without "
                                        r"actuators \(or with actuation disabled\) — MuJoCo then applies none of this joint's "
                                        r"gravity compensation"):
        load_mjcf(bare)
