"""ABA's fast paths for joints whose motion subspace is a signed coordinate axis, S = ±e_s
(csrc/kernels/aba.c: unit_axis, the hand-over on upper triangles, model.h: dof_axis): the forward dynamics
must invert RNEA on trees of such joints — both signs, revolute and prismatic, with and without tree
rotations and rotor inertia — and every lane of the batched call must be the single call's bit for
bit."""
import numpy as np
import pytest

import multibody as mb
from multibody.core import _core

from test_dynamics_consistency import _inertia, _rot

AXES = [(0, 0, -1), (-1, 0, 0), (0, -1, 0), (0, 0, 1), (1, 0, 0), (0, 1, 0)]


def signed_axis_model(seed):
    rng = np.random.default_rng(seed)
    b = mb.ModelBuilder("signed axes", gravity=(0.0, -3.0, -9.81))
    names = []
    for k in range(12):
        m = rng.uniform(0.3, 1.5)
        b.add_body(f"b{k}", names[rng.integers(len(names))] if names else None,
                   "revolute" if k % 2 == 0 else "prismatic", axis=AXES[(k + seed) % 6], mass=m,
                   com=rng.normal(scale=0.2, size=3), inertia=_inertia(rng, m),
                   joint_rotation=_rot(rng) if k % 3 else None, joint_translation=rng.normal(scale=0.3, size=3),
                   armature=0.05 if k % 5 == 4 else None)
        names.append(f"b{k}")
    return b.build()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_aba_inverts_rnea_on_signed_axes(seed):
    model = signed_axis_model(seed)
    rng = np.random.default_rng(seed)
    for _ in range(20):
        q, qd, qdd = rng.uniform(-3, 3, model.nq), rng.normal(size=model.nv), rng.normal(size=model.nv)
        np.testing.assert_allclose(mb.aba(model, q, qd, mb.rnea(model, q, qd, qdd)), qdd, rtol=0, atol=1e-11)


@pytest.mark.parametrize("kind", ["baseline", "avx2"])
def test_signed_axes_in_lanes_bit_for_bit(kind):
    before = _core.use_lanes("none")
    try:
        _core.use_lanes(kind)
    except ValueError:
        _core.use_lanes(before)
        pytest.skip(f"no {kind} lanes on this CPU")
    try:
        model = signed_axis_model(4)
        rng = np.random.default_rng(4)
        Q, QD, X = rng.uniform(-3, 3, (9, model.nq)), rng.normal(size=(9, model.nv)), rng.normal(size=(9, model.nv))
        single = np.array([mb.aba(model, q, qd, x) for q, qd, x in zip(Q, QD, X)])
        np.testing.assert_array_equal(mb.aba(model, Q, QD, X), single)
    finally:
        _core.use_lanes(before)


# ---- revolute joints under a tree rotation that is a signed permutation, prismatic ones under a turn about a
# coordinate axis (model.h: turn_code) ---------------------------------------------------------------------------
# URDF's rpy at multiples of π/2 (the double 1.5707963267948966 has cos 6.1e-17): compile.c takes such a
# rotation as the permutation it rounds (tree_R_exact) and ABA's transforms skip its zeros.
QUARTERS = [0.0, np.pi / 2, np.pi, -np.pi / 2]


def permuted_turn_model(seed):
    from multibody.model.urdf import rpy_to_rot
    rng = np.random.default_rng(seed)
    b = mb.ModelBuilder("permuted turns", gravity=(0.0, -3.0, -9.81))
    names = []
    for k in range(12):
        m = rng.uniform(0.3, 1.5)
        rpy = rng.choice(QUARTERS, size=3)
        slide = k % 3 == 2  # a prismatic joint under a turn about one coordinate axis (the Panda's fingers)
        if slide:
            rpy = np.zeros(3)
            rpy[k % 2 * 2] = rng.uniform(-3, 3)
        b.add_body(f"b{k}", names[rng.integers(len(names))] if names else None, "prismatic" if slide else "revolute",
                   axis=AXES[3 + (k + seed) % 3], mass=m, com=rng.normal(scale=0.2, size=3),
                   inertia=_inertia(rng, m), joint_rotation=rpy_to_rot(*rpy),
                   joint_translation=rng.normal(scale=0.3, size=3) if k % 4 else np.zeros(3))
        names.append(f"b{k}")
    return b.build()


def _aba_agrees_with_pinocchio(model, rng):
    """ABA on 20 random states against Pinocchio's, to the rounding of the angles, and against RNEA."""
    import pinocchio as pin   # (a test dependency: CI installs it, so a missing one fails)
    from pin_states import q_to_pin, to_pinocchio, v_perm
    pm = to_pinocchio(model)
    data, P = pm.createData(), v_perm(model)
    for _ in range(20):
        q, qd, tau = rng.uniform(-3, 3, model.nq), rng.normal(size=model.nv), rng.normal(size=model.nv)
        ours = mb.aba(model, q, qd, tau)
        theirs = pin.aba(pm, data, q_to_pin(model, q), qd[P], tau[P])
        np.testing.assert_allclose(ours[P], theirs, rtol=0, atol=1e-11 * max(1.0, np.abs(theirs).max()))
        np.testing.assert_allclose(mb.rnea(model, q, qd, ours), tau, rtol=0, atol=1e-11)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_permuted_turns_against_pinocchio(seed):
    """The twin keeps the rotations' residues: ABA agrees with Pinocchio's to the rounding of the angles."""
    model = permuted_turn_model(seed)
    T = model.tree_rotation
    assert np.any((np.abs(T) > 0) & (np.abs(T) < 1e-15)), "no rounding residues: the test would not test the snap"
    _aba_agrees_with_pinocchio(model, np.random.default_rng(seed))


def test_permuted_turns_are_the_exact_permutations():
    """The residues are the only change: the model and its copy with exact permutations give the same
    numbers bit for bit (ABA through its permuted turns, RNEA through the general pose code)."""
    import dataclasses
    model = permuted_turn_model(3)
    exact = dataclasses.replace(model, tree_rotation=np.where(np.abs(model.tree_rotation) < 1e-15, 0.0,
                                                              model.tree_rotation))
    rng = np.random.default_rng(3)
    Q, QD, X = rng.uniform(-3, 3, (9, model.nq)), rng.normal(size=(9, model.nv)), rng.normal(size=(9, model.nv))
    for f in (mb.aba, mb.rnea):
        np.testing.assert_array_equal(f(model, Q, QD, X), f(exact, Q, QD, X))
    single = np.array([mb.aba(model, q, qd, x) for q, qd, x in zip(Q, QD, X)])
    np.testing.assert_array_equal(mb.aba(model, Q, QD, X), single)   # the lanes' copy of the permuted turns


# ---- revolute joints at their parent frame's origin (p = 0: compile.c's unit_handover + 27), in a branching
# tree whose bodies have several children (model.h: aba_tree — the child of largest index starts its parent's IA)
def origin_joints_model(seed):
    from multibody.model.urdf import rpy_to_rot
    rng = np.random.default_rng(seed)
    b = mb.ModelBuilder("joints at the origin", gravity=(0.0, -3.0, -9.81))
    names = []
    for k in range(14):
        m = rng.uniform(0.3, 1.5)
        rotation = (None, rpy_to_rot(*rng.choice(QUARTERS, size=3)), _rot(rng))[k % 3]  # a turn, permuted, general
        b.add_body(f"b{k}", names[rng.integers(max(1, len(names) - 3), len(names) + 1) - 1] if names else None,
                   "revolute", axis=AXES[(k + seed) % 6], mass=m, com=rng.normal(scale=0.2, size=3),
                   inertia=_inertia(rng, m), joint_rotation=rotation,
                   joint_translation=np.zeros(3) if k % 4 else rng.normal(scale=0.3, size=3))
        names.append(f"b{k}")
    return b.build()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_joints_at_the_origin_against_pinocchio(seed):
    model = origin_joints_model(seed)
    assert np.sum(np.all(model.tree_translation == 0.0, axis=1)) >= 10
    assert len(set(model.parent)) < model.nb - 2, "no body with several children"
    rng = np.random.default_rng(seed)
    _aba_agrees_with_pinocchio(model, rng)
    Q, QD, X = rng.uniform(-3, 3, (9, model.nq)), rng.normal(size=(9, model.nv)), rng.normal(size=(9, model.nv))
    single = np.array([mb.aba(model, q, qd, x) for q, qd, x in zip(Q, QD, X)])
    np.testing.assert_array_equal(mb.aba(model, Q, QD, X), single)   # the lanes (their IA copied in pass 1)
