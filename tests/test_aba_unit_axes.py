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
