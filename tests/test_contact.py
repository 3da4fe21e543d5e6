"""Compliant ground contact: gcontact's law case by case, the compiled kernel against the NumPy
functions, gcPosVel against the kinematics, the floating-base (FDfb) path against the free joint."""

import numpy as np
import pytest

import multibody as mb

import example_scripts  # the examples/ folder's scripts
from multibody.simulation.contact import (GroundContact, contact_points, gc_fd, gc_pos_vel_fb, gcontact,
                                        point_forces_to_f_ext)

examples = example_scripts.namespace()
RNG = np.random.default_rng(3)
K, D, MU = 2e5, 3e3, 0.4


def test_frictionless_law_and_units():
    z = np.array([-4e-4, -1e-3, 0.02, -1e-3])
    zd = np.array([0.0, 0.2, 0.0, -50.0])
    f = gcontact(K, D, 0, z, zd)
    d = np.maximum(0, -z)
    expect = np.maximum(0, np.sqrt(d) * (K * d - D * zd))
    np.testing.assert_allclose(f, expect)
    assert f[2] == 0 and f[1] < f[0] * (1e-3 / 4e-4) ** 1.5    # separating: damping lowers the force
    assert f[0] == pytest.approx(K * 4e-4 ** 1.5)                 # N = (N/m^1.5)·m^1.5
    assert gcontact(K, D, 0, z[None], zd[None]).shape == (1, 4)   # the seed's 1×np form


def test_friction_law_stick_slip_and_free_points():
    # columns: sticking (slow), sliding (fast), out of contact, 2-D-equivalent direction check
    p = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [-1e-3, -1e-3, 0.01]])
    pd = np.array([[1e-4, 2.0, 1.0], [0.0, -1.0, 0.0], [0.0, 0.0, 0.0]])
    u = np.array([[1e-5, 0.0, 3e-4], [0.0, 0.0, -1e-4]])
    f, ud, fcone = gcontact(K, D, MU, p, pd, u)
    zr = np.sqrt(1e-3)
    fn = zr * K * 1e-3
    # sticking: f_t = −√d (K u + D ṗ_t), u̇ = ṗ_t, fcone ≤ 1
    np.testing.assert_allclose(f[:2, 0], -zr * (K * u[:, 0] + D * pd[:2, 0]))
    np.testing.assert_allclose(ud[:, 0], pd[:2, 0])
    assert fcone[0] <= 1 and f[2, 0] == pytest.approx(fn)
    # sliding: on the cone, opposing the slip, u̇ consistent with the same law
    assert fcone[1] > 1
    assert np.hypot(*f[:2, 1]) == pytest.approx(MU * fn)
    assert f[:2, 1] @ pd[:2, 1] < 0
    np.testing.assert_allclose(f[:2, 1], -zr * (K * u[:, 1] + D * ud[:, 1]))
    # out of contact: no force, the ground relaxes
    np.testing.assert_allclose(f[:, 2], 0)
    np.testing.assert_allclose(ud[:, 2], -K / D * u[:, 2])
    assert fcone[2] > 1
    # 2-D (planar) call: x tangent, y normal
    f2, ud2, fc2 = gcontact(K, D, MU, p[[0, 2]], pd[[0, 2]], u[:1])
    np.testing.assert_allclose(f2[1], f[2])
    assert f2.shape == (2, 3) and ud2.shape == (1, 3) and fc2.shape == (3,)


def test_gc_pos_vel_matches_point_kinematics():
    model = mb.models.rolling_disc(6)
    q = mb.integrate(model, model.neutral(), RNG.normal(size=6))
    qd = RNG.normal(size=6)
    pv = mb.gc_pos_vel(model, q, qd)
    bodies, pts = contact_points(model)
    assert pv.shape == (6, 12)
    for i, (b, r) in enumerate(zip(bodies, pts)):
        np.testing.assert_allclose(pv[:3, i], mb.point_position(model, q, b, r), atol=1e-12)
        np.testing.assert_allclose(pv[3:, i], mb.point_velocity(model, q, qd, b, r), atol=1e-12)
    # planar model: 4×np (x, y positions and velocities)
    planar = mb.models.planar(2)
    pv2 = mb.gc_pos_vel(planar, [0.3, 0.2], [1.0, -1.0], points=[("link2", [1, 0, 0])])
    tip = mb.point_position(planar, [0.3, 0.2], "link2", [1, 0, 0])
    assert pv2.shape == (4, 1)
    np.testing.assert_allclose(pv2[:2, 0], tip[:2])


def test_compiled_contact_kernel_agrees_with_the_numpy_functions():
    model = mb.models.rolling_disc(8)
    contact = GroundContact(model, K, D, MU)
    touched = 0
    for _ in range(5):
        q = mb.integrate(model, model.neutral(), 0.3 * RNG.normal(size=6))
        q[2] = 0.0
        q[2] = -mb.gc_pos_vel(model, q, np.zeros(6))[2].min() - 1e-3     # the lowest corner 1 mm deep
        qd = 0.1 * RNG.normal(size=6)
        z = 1e-4 * RNG.normal(size=contact.n_states)
        f_ext, zdot, info = contact.forces(model, q, qd, z)
        pv = mb.gc_pos_vel(model, q, qd)
        f, ud, fcone = gcontact(K, D, MU, pv[:3], pv[3:], z.reshape(-1, 2).T)
        np.testing.assert_allclose(info["force"], f.T, atol=1e-9)
        np.testing.assert_allclose(zdot, ud.T.reshape(-1), atol=1e-9)
        np.testing.assert_array_equal(info["sticking"], (fcone <= 1) & (f[2] > 0))
        bodies, _ = contact_points(model)
        np.testing.assert_allclose(f_ext, point_forces_to_f_ext(model, bodies, pv[:3].T, f.T), atol=1e-9)
        touched += info["in_contact"].sum()
    assert touched > 0
    frictionless = GroundContact(model, K, D, 0.0)
    assert frictionless.n_states == 0
    f_ext0, zdot0, info0 = frictionless.forces(model, q, qd, np.zeros(0))
    np.testing.assert_allclose(info0["force"][:, 2], gcontact(K, D, 0, pv[2], pv[5]))
    np.testing.assert_allclose(info0["force"][:, :2], 0)


def test_compiled_contact_kernel_on_a_planar_model_y_up():
    """Planar models: the ground is y = 0, friction along x; the C kernel equals gcontact (nd = 2)."""
    model = mb.models.planar(2)
    pts = [("link1", [0.5, 0.0, 0.0]), ("link2", [1.0, 0.0, 0.0]), ("link2", [0.3, 0.0, 0.0])]
    contact = GroundContact(model, K, D, MU, points=pts)
    assert contact.nd == 2 and contact.n_states == 3
    touched = 0
    for _ in range(20):
        q, qd = RNG.normal(size=2), 0.05 * RNG.normal(size=2)
        pv = mb.gc_pos_vel(model, q, qd, points=pts)             # (4, 3): x, y rows; then velocities
        z = 1e-4 * RNG.normal(size=3)
        f_ext, zdot, info = contact.forces(model, q, qd, z)
        f, ud, fcone = gcontact(K, D, MU, pv[:2], pv[2:], z.reshape(3, 1).T)
        np.testing.assert_allclose(info["force"][:, :2], f.T, rtol=1e-13, atol=1e-12)
        np.testing.assert_array_equal(info["force"][:, 2], 0.0)
        np.testing.assert_allclose(zdot, ud.ravel(), rtol=1e-13, atol=1e-12)
        np.testing.assert_array_equal(info["in_contact"], f[1] > 0)
        np.testing.assert_array_equal(info["sticking"], (fcone <= 1) & (f[1] > 0))
        bodies = contact.bodies
        pos3 = np.c_[pv[:2].T, np.zeros(3)]
        np.testing.assert_allclose(info["position"], pos3, atol=1e-14)
        np.testing.assert_allclose(f_ext, point_forces_to_f_ext(model, bodies, pos3, np.c_[f.T, np.zeros(3)]),
                                   rtol=1e-13, atol=1e-12)
        touched += info["in_contact"].sum()
    assert touched > 0


def test_contact_force_resultant_is_applied_where_the_points_are():
    """f_ext from one point force: a free body's momentum rate equals the force and its moment."""
    model = mb.models.singlebody()
    contact = GroundContact(model, K, D, 0.0, points=[(0, [1.0, 0.5, 0.2])])
    q = model.neutral()
    q[2] = -0.2 - 1e-3                                   # that point 1 mm deep
    f_ext, _, info = contact.forces(model, q, np.zeros(6))
    fw = info["force"][0]
    p = info["position"][0]
    np.testing.assert_allclose(f_ext[0], np.concatenate([np.cross(p, fw), fw]))
    assert fw[2] > 0 and np.allclose(fw[:2], 0)
    qdd = mb.aba(model, q, np.zeros(6), np.zeros(6), f_ext)
    R = mb.forward_kinematics(model, q)[0][0]
    alpha = R @ qdd[:3]
    a_O = R @ qdd[3:] - np.cross(alpha, q[:3])          # spatial acceleration at the world origin (at rest)
    Itot = mb.energy(model, q, np.zeros(6)).Itot
    np.testing.assert_allclose(Itot @ np.concatenate([alpha, a_O]), f_ext[0], atol=1e-9)   # ḣ = f


def test_floating_base_contact_path_matches_the_free_joint():
    """The same disc, state and ground: FDfb with forces_fb equals ABA with forces (gcFD)."""
    free = mb.models.rolling_disc(8)
    fb = mb.models.rolling_disc(8, floating="floatbase")
    cf, cb = GroundContact(free, K, D, MU), GroundContact(fb, K, D, MU)
    from multibody.dynamics.floating import fd_fb
    for _ in range(3):
        q = mb.integrate(free, free.neutral(), 0.4 * RNG.normal(size=6))
        q[2] = 0.048
        qd = RNG.normal(size=6)
        z = 1e-4 * RNG.normal(size=cf.n_states)
        x, _, _ = examples.free_to_xfb(free, q, qd)
        np.testing.assert_allclose(gc_pos_vel_fb(fb, x), mb.gc_pos_vel(free, q, qd), atol=1e-12)
        fe_free, zd_free, _ = cf.forces(free, q, qd, z)
        fe_fb, zd_fb, _ = cb.forces_fb(fb, x, z=z)
        np.testing.assert_allclose(zd_fb, zd_free, atol=1e-9)
        np.testing.assert_allclose(fe_fb[5], fe_free[0], atol=1e-8)
        xd, _ = fd_fb(fb, x, f_ext=fe_fb)
        qdd = mb.aba(free, q, qd, np.zeros(6), fe_free)
        # spatial acceleration of the free body in world coordinates at the origin vs FDfb's afb
        R = mb.forward_kinematics(free, q)[0][0]
        w, v = R @ qd[:3], R @ qd[3:]
        p = q[:3]
        alpha = R @ qdd[:3]
        a_p = R @ (qdd[3:] + np.cross(qd[:3], qd[3:]))             # classical acceleration of the origin
        a_O = a_p - np.cross(alpha, p) - np.cross(w, v)               # d/dt of v_O = v_p − ω × p
        np.testing.assert_allclose(xd[7:10], alpha, atol=1e-8)
        np.testing.assert_allclose(xd[10:13], a_O, atol=1e-8)
        # gcFD wrapper: same result as calling fd_fb with the converted forces
        F = cb.forces_fb(fb, x, z=z)[2]["force"]
        np.testing.assert_allclose(gc_fd(fb, fd_fb, x, gc_forces=F)[:13], xd, atol=1e-10)
        np.testing.assert_allclose(gc_fd(free, mb.aba, q, qd, np.zeros(6), gc_forces=cf.forces(free, q, qd, z)[2]["force"]),
                                   qdd, atol=1e-10)


def test_contact_parameters_hold_the_weight_at_the_design_depth():
    Kp, Dp = mb.contact_parameters(2.0, 5e-4, damping_ratio=0.7, gravity=9.81, n_points=4)
    assert Kp * (5e-4) ** 1.5 == pytest.approx(2.0 * 9.81 / 4)
    k = 1.5 * Kp * np.sqrt(5e-4)
    assert Dp * np.sqrt(5e-4) == pytest.approx(2 * 0.7 * np.sqrt(k * 0.5))


def test_bad_input_is_named():
    z, zd = np.array([-1e-3]), np.array([0.0])
    for kw, name in (((0.0, D, 0.0), "K"), ((np.nan, D, 0.0), "K"), ((K, -1.0, 0.0), "D"),
                     ((K, 0.0, 0.5), "D"), ((K, D, -0.1), "mu"), ((K, D, np.inf), "mu")):
        with pytest.raises(ValueError, match=name):
            gcontact(*kw, np.zeros((3, 1)) if kw[2] else z, np.zeros((3, 1)) if kw[2] else zd)
    with pytest.raises(ValueError, match="p, pd"):
        gcontact(K, D, 0, z, np.zeros(2))
    with pytest.raises(ValueError, match="NaN"):
        gcontact(K, D, 0, np.array([np.nan]), zd)
    with pytest.raises(ValueError, match="u: expected shape"):
        gcontact(K, D, MU, np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="nd = 2 or 3"):
        gcontact(K, D, MU, np.zeros((4, 2)), np.zeros((4, 2)))
    with pytest.raises(ValueError, match="ground-contact points"):
        GroundContact(mb.models.planar(2), K, D)
    with pytest.raises(ValueError, match="points"):
        GroundContact(mb.models.planar(2), K, D, points=[("link1", [0, 0])])
    with pytest.raises(ValueError, match="fixed base"):
        GroundContact(mb.models.planar(2), K, D, points=[(-1, [0, 0, 0])])
    model = mb.models.rolling_disc(4)
    c = GroundContact(model, K, D, MU)
    with pytest.raises(ValueError, match="z: expected 16"):
        c.forces(model, model.neutral(), np.zeros(6), np.zeros(3))
    with pytest.raises(ValueError, match="q: expected 7"):
        c.forces(model, np.zeros(3), np.zeros(6), np.zeros(16))
    with pytest.raises(ValueError, match="qd: expected 6"):
        c.forces(model, model.neutral(), np.zeros((2, 3)), np.zeros(16))
    for bad, name in (((np.full(7, np.nan), np.zeros(6), np.zeros(16)), "q"),
                      ((model.neutral(), np.r_[np.inf, np.zeros(5)], np.zeros(16)), "qd"),
                      ((model.neutral(), np.zeros(6), np.r_[np.nan, np.zeros(15)]), "z")):
        with pytest.raises(ValueError, match=f"^{name}: contains NaN"):
            c.forces(model, *bad)
    with pytest.raises(ValueError, match="not the model"):
        c.forces(mb.models.planar(2), np.zeros(2), np.zeros(2), np.zeros(16))
    with pytest.raises(ValueError, match="mass"):
        mb.contact_parameters(-1.0, 1e-3)
    with pytest.raises(ValueError, match="npt"):
        mb.models.rolling_disc(2)
    with pytest.raises(ValueError, match="floating"):
        mb.models.rolling_disc(8, floating="hover")


def test_ground_contact_refuses_a_step_its_feet_outrun():
    """GroundContact.check_step: solo12 on contact_parameters(its mass, 1 mm, 4 points) — critically
    damped for the whole robot, far past critical for a 34 g lower leg — hopped for the whole run at
    1 ms and 0.5 ms RK4, silently.  Now refused up front, naming K, D, the body and the step that works
    (0.39 ms); at 0.25 ms it rests quietly.  StarlETH's demo stance (feet carrying heavy legs) passes at 1 ms."""
    import os
    import warnings
    from multibody import cli
    from multibody._extras import robots_dir
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mb.load_urdf(os.path.join(robots_dir(), "solo_description/robots/solo12.urdf"), floating=True)
    feet = [(m.body_names[f.body], f.translation) for f in m.frames if f.name.endswith("_FOOT")]
    q_ref = m.neutral()
    q_ref[7:] = [0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6]
    R, p = mb.forward_kinematics(m, q_ref)
    q0 = q_ref.copy()
    q0[2] = -min(float(p[m.body_index(b), 2] + R[m.body_index(b)][2] @ x) for b, x in feet)
    K, D = mb.contact_parameters(float(np.sum(m.mass)), 1e-3, n_points=4)
    contact = mb.GroundContact(m, K, D, mu=1.0, points=feet)
    pd = mb.PD(kp=np.r_[np.zeros(6), 5.0 * np.ones(12)], kd=np.r_[np.zeros(6), 0.2 * np.ones(12)], q_ref=q_ref)
    for dt in (1e-3, 5e-4):
        with pytest.raises(ValueError, match=r"stiffness K = .* on body '\w+_LOWER_LEG' .*Pass dt <= 0\.000389"):
            mb.simulate(m, q0, None, 0.5, dt=dt, controller=pd, contact=contact)
    tr = mb.simulate(m, q0, None, 2.0, dt=2.5e-4, controller=pd, contact=contact, record_every=40)
    assert tr.status == "finished" and np.abs(tr.qd[-1]).max() < 1e-6
    assert tr.contact_forces[-1, :, 2].sum() == pytest.approx(float(np.sum(m.mass)) * 9.81, rel=1e-6)
    s = mb.models.starleth()
    q, stance, stand, _camera = cli._stance(mb, s, s.neutral())
    assert mb.simulate(s, q, None, 0.5, controller=stand, contact=stance).status == "finished"
