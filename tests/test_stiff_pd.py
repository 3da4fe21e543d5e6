"""A stiff PD against the step (issue 33, item 2): the Panda under ``mb.PD(kp=200, kd=20,
gravity_compensation=True)`` at 1 ms is refused up front by the explicit steppers — naming the
gain, the joint and the step that works, from the linearised oscillator's eigenvalues against the
stepper's stability function — and runs under ``semi_implicit`` (the PD's kd implicit, as
MuJoCo's implicitfast), reaching its reference."""
from __future__ import annotations

import re

import numpy as np
import pytest

import multibody as mb
from multibody.simulation.events import EVENT_TIME_TOL
from multibody.simulation import limits
from multibody.simulation.limits import check_pd_step
from test_default_state import urdf

PANDA = "panda_description/urdf/panda.urdf"


def step_matrix(A, h, integrator, M_inv_implicit=None, K=None, C=None):
    """The reference one-step map y₁ = S y₀ of a fixed step h on ẏ = A y, y = [q; q̇], built stage by
    stage from the tableau (S = R(hA)), or semi_implicit's symplectic Euler with M̃⁻¹ given:
    q̇₁ = (I − h M̃⁻¹C) q̇₀ − h M̃⁻¹K q₀, q₁ = q₀ + h q̇₁ (rollout.c's step, MuJoCo's implicitfast)."""
    n2 = len(A)
    if M_inv_implicit is not None:
        n = n2 // 2
        vq, vv = -h * (M_inv_implicit @ K), np.eye(n) - h * (M_inv_implicit @ C)
        return np.block([[np.eye(n) + h * vq, h * vv], [vq, vv]])
    a, b = limits._tableau(integrator)
    stages = []   # stage k_i = A (I + h Σ_j a_ij k_j) as matrices acting on y₀
    for i in range(len(b)):
        Y = np.eye(n2) + h * sum((a[i, j] * stages[j] for j in range(i)), np.zeros((n2, n2)))
        stages.append(A @ Y)
    return np.eye(n2) + h * sum(bi * k for bi, k in zip(b, stages))


def panda_start():
    m = urdf(PANDA)
    q0 = m.q_default.copy()
    q0[:7] += 0.2
    q0[3] -= 0.4          # joint 4's range is below zero
    return m, q0


@pytest.mark.parametrize("integrator", ["euler", "rk3", "rk4"])
def test_the_explicit_steps_refuse_the_panda_pd_naming_gain_joint_and_step(integrator):
    m, q0 = panda_start()
    pd = mb.PD(kp=200, kd=20, gravity_compensation=True)
    with pytest.raises(ValueError, match=r"kd = 20 on 'panda_joint7'.*dt ≤ ") as e:
        mb.simulate(m, q0, None, 2.0, dt=1e-3, integrator=integrator, controller=pd)
    works = float(re.search(r"dt ≤ ([0-9.e-]+)", str(e.value)).group(1))
    assert 1e-4 < works < 1e-3
    traj = mb.simulate(m, q0, None, 0.3, dt=works, integrator=integrator, controller=pd)   # the step it names runs
    assert traj.status == "finished" and np.all(np.isfinite(traj.q))
    with pytest.raises(ValueError, match="too stiff"):    # 2× past it is refused
        mb.simulate(m, q0, None, 0.3, dt=2.0 * works / 0.8, integrator=integrator, controller=pd)


def test_semi_implicit_takes_the_pd_kd_implicitly_and_reaches_the_reference():
    m, q0 = panda_start()
    traj = mb.simulate(m, q0, None, 2.0, dt=1e-3, integrator="semi_implicit",
                       controller=mb.PD(kp=200, kd=20, gravity_compensation=True))
    assert traj.status == "finished"
    np.testing.assert_allclose(traj.q[-1], m.q_default, atol=1e-3)     # q_ref: the model's neutral
    assert np.abs(traj.q[0] - m.q_default).max() > 0.19


def test_the_stability_polynomial_is_the_tableaus_stability_function():
    """R(z) of each tableau on ẏ = λy: Euler 1 + z, RK4 the degree-4 Taylor polynomial — from the
    check's coefficients (bᵀaᵏ1) and from the reference step built stage by stage."""
    lam = np.array([[-3.0]])
    for name, R in (("euler", lambda z: 1 + z), ("rk4", lambda z: 1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24),
                    ("rk3", lambda z: 1 + z + z**2 / 2 + z**3 / 6)):
        c = limits._stability_polynomial(name)[::-1]
        for h in (0.1, 0.5, 0.9):
            assert step_matrix(lam, h, name)[0, 0] == pytest.approx(R(-3.0 * h), rel=1e-14)
            assert np.polyval(c, -3.0 * h) == pytest.approx(R(-3.0 * h), rel=1e-14)


@pytest.mark.parametrize("integrator", ["euler", "rk3", "rk4", "semi_implicit"])
def test_the_batched_radii_are_the_step_matrices_radii(integrator):
    """check_pd_steps' radii (explicit: the stability polynomial on A's eigenvalues, computed once;
    semi_implicit: the symplectic map, stacked over the starts) against step_matrix's stages
    built start by start, at random Panda starts and steps around the stability edge."""
    m, q0 = panda_start()
    rng = np.random.default_rng(5)
    Q = q0 + 0.2 * rng.uniform(-1, 1, (6, m.nq))
    kp, kd, d = np.full(m.nv, 200.0), np.full(m.nv, 20.0), np.asarray(m.damping, float)
    H = np.stack([mb.crba(m, q) for q in Q])
    A, radii = limits.oscillator_step_radii(H, np.diag(kp), np.diag(kd + d), kd + d, integrator)
    implicit = integrator == "semi_implicit"
    for h in (2e-4, 1e-3, 4e-3):
        expected = []
        for i, q in enumerate(Q):
            Mi = np.linalg.inv(mb.crba(m, q) + np.diag(h * (d + kd))) if implicit else None
            S = step_matrix(A[i], h, integrator, Mi, np.diag(kp), np.diag(d + kd))
            expected.append(np.abs(np.linalg.eigvals(S)).max())
        np.testing.assert_allclose(radii(h), expected, rtol=1e-9)


def test_semi_implicit_bound_counts_the_damping_term(monkeypatch):
    """A stiff, strongly damped slider (m = 1, h c = 3): semi_implicit steps v₁ = (v₀ − h(k q₀ + c v₀)/(1 + hc)),
    stable while h²k/(1 + hc) < 2 + 2/(1 + hc) = 2.5.  Just past it the run is refused, and it does blow up
    (checked with the refusal switched off: the check once left out the −h M̃⁻¹C q̇₀ term, passed every
    h²k/(1 + hc) ≤ 4, and such a run ended 'finished' at 1e53); just inside, it settles."""
    from multibody.simulation import core
    b = mb.ModelBuilder(gravity=[0, 0, 0])
    b.add_body("slider", parent=None, joint="Px", mass=1.0, com=[0, 0, 0], inertia=1e-3 * np.eye(3))
    m, h, hc = b.build(), 1e-3, 3.0

    def run(x):
        pd = mb.PD(kp=x / h**2 * (1 + hc), kd=hc / h)
        return mb.simulate(m, [0.01], [0.0], 0.5, dt=h, integrator="semi_implicit", controller=pd, limits="off")

    assert abs(run(2.45).q[-1, 0]) < 1e-12
    with pytest.raises(ValueError, match=r"kp = .* too stiff for a semi_implicit step of dt = 0.001 s.*dt ≤ 0.000"):
        run(2.55)
    monkeypatch.setattr(core, "check_pd_step", lambda *a: None)
    assert abs(run(2.55).q[-1, 0]) > 1e3


def test_a_gentle_pd_is_not_refused():
    m, q0 = panda_start()
    check_pd_step(m, mb.PD(kp=200, kd=2).bind(m), None, q0, 1e-3, "rk4")
    traj = mb.simulate(m, q0, None, 0.05, controller=mb.PD(kp=20, kd=2, gravity_compensation=True))
    assert traj.status == "finished"


def test_a_passed_check_is_remembered_by_its_values_and_a_refusal_never(monkeypatch):
    """The same run again (a benchmark's repeats, a loop of short runs) is not linearised again;
    other gains, another start or step are; a refused PD is refused every time."""
    from multibody.simulation import limits
    computed = []
    real = limits.check_pd_steps
    monkeypatch.setattr(limits, "check_pd_steps", lambda *a: (computed.append(a[3]), real(*a)))
    m, q0 = panda_start()
    gentle = mb.PD(kp=200, kd=2).bind(m)
    for _ in range(3):
        check_pd_step(m, gentle, None, q0, 1e-3, "rk4")
    assert len(computed) == 1
    check_pd_step(m, mb.PD(kp=201, kd=2).bind(m), None, q0, 1e-3, "rk4")
    check_pd_step(m, gentle, None, q0 + 0.01, 1e-3, "rk4")
    check_pd_step(m, gentle, None, q0, 5e-4, "rk4")
    assert len(computed) == 4
    stiff = mb.PD(kp=200, kd=20).bind(m)
    for attempt in range(2):
        with pytest.raises(ValueError, match="too stiff"):
            check_pd_step(m, stiff, None, q0, 1e-3, "rk4")
    assert len(computed) == 6


def test_the_fingers_resting_on_the_pd_reference_are_let_go_consistently():
    """The fingers' PD reference is their lower stop, so a resting finger's stop force is zero to
    rounding.  A release is decided on one rule (the stop stops pushing and the joint, let go, does not
    move into it by the stepper's own q̈: JointLimits.release_guard): no finger creeps past its stop
    and no impact event "fires forever" (start 11 did, by 3.76e-25, when the release read the
    multiplier alone), every release leaves the finger exactly on its stop at rest."""
    m, q0 = panda_start()
    for k in range(12):
        q = q0.copy()
        q[:7] += 0.05 * np.sin(np.arange(7) + k)
        q[-2:] = 0.0     # the fingers on their stops
        traj = mb.simulate(m, q, None, 0.5, dt=1e-3, integrator="semi_implicit",
                           controller=mb.PD(kp=200, kd=20, gravity_compensation=True))
        assert traj.status == "finished"
        slack = 2.0 * EVENT_TIME_TOL * np.abs(traj.qd[:, -2:]).max()   # a located impact: |q̇| EVENT_TIME_TOL
        assert traj.q[:, -2:].min() >= -slack
        releases = [ev for ev in traj.events if "finger" in ev.name and ev.name.endswith("release")]
        for ev in releases:
            vi = 7 if "joint1" in ev.name else 8
            assert ev.q_after[vi] == 0.0 and ev.qd_after[vi] == 0.0
