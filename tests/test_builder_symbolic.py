"""Symbolic parameters in ModelBuilder: a symbolic model built with the numeric API derives as the seed
models do, and the numeric kernels refuse it, naming its symbols."""
import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody.symbolic import derive


def _double_pendulum_by_builder():
    """The OpenDE report's double pendulum (models.double_pendulum(symbolic=True)), built by hand."""
    m1, m2, l1, l2, h1, h2, w1, w2, d1, d2, g = sp.symbols("m1 m2 l1 l2 h1 h2 w1 w2 d1 d2 g")
    b = mb.ModelBuilder("double_pendulum", gravity=(0, 0, -g))
    box = lambda m, h, w, d: sp.diag(m * (h**2 + w**2), m * (w**2 + d**2), m * (h**2 + d**2)) / 12  # noqa: E731
    b.add_body("link1", None, "revolute", axis=[1, 0, 0], mass=m1, com=(0, l1 / 2, 0), inertia=box(m1, h1, w1, d1))
    b.add_body("link2", "link1", "revolute", axis=[1, 0, 0], mass=m2, com=(0, l2 / 2, 0),
               inertia=box(m2, h2, w2, d2), joint_translation=(0, l1, 0))
    return b.build()


@pytest.mark.parametrize("method", ["rnea", "pne", "tmt", "lagrange"])
def test_builder_double_pendulum_derives_the_seed_equations(method):
    model = _double_pendulum_by_builder()
    assert model.is_symbolic
    seed = mb.models.double_pendulum(symbolic=True)
    q, dq = sp.symbols("th1 th2", real=True), sp.symbols("Dth1 Dth2", real=True)
    ours = derive(model, method, q=q, dq=dq)
    ref = derive(seed, method, q=q, dq=dq)
    names = {s.name: s for s in ref.params}
    assert sorted(p.name for p in ours.params) == sorted(names)
    to_ref = {p: names[p.name] for p in ours.params}      # same names; a seed's symbols may carry assumptions
    for key in ("M", "b", "g"):
        assert sp.expand(getattr(ours, key).xreplace(to_ref) - getattr(ref, key)) == sp.zeros(*getattr(ref, key).shape)


def test_symbolic_builder_in_3d_round_trips_through_subs_and_codegen():
    """Every place a number goes (mass, CoM, inertia, pitch, joint placement, gravity) takes a symbol;
    the derived equations agree with the numeric kernels once the symbols have values."""
    m, a, c, Ix, Iy, Iz, h, g, phi = sp.symbols("m a c Ix Iy Iz h g phi")
    Rz = sp.Matrix([[sp.cos(phi), -sp.sin(phi), 0], [sp.sin(phi), sp.cos(phi), 0], [0, 0, 1]])
    b = mb.ModelBuilder("arm", gravity=(0, 0, -g))
    b.add_body("base", None, "revolute", axis=[0, 0, 1], mass=m, com=(c, 0, 0), inertia=[Ix, Iy, Iz])
    b.add_body("screw", "base", "helical", axis=[0, 1, 0], pitch=h, mass=2 * m, com=(0, c, a),
               inertia=sp.diag(Ix, Iy, Iz), joint_rotation=Rz, joint_translation=(a, 0, 0))
    b.add_body("tip", "screw", "revolute", axis=[1, 0, 0], mass=m / 2, com=(0, 0, c), joint_translation=(0, a, 0))
    model = b.build()
    vals = {m: 1.3, a: 0.7, c: 0.4, Ix: 0.11, Iy: 0.13, Iz: 0.07, h: 0.05, g: 9.81, phi: 0.3}
    numeric = model.subs(vals)
    eom = derive(model)
    num = eom.to_numeric(vals)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, v = rng.normal(size=3), rng.normal(size=3)
        np.testing.assert_allclose(num.M(q), mb.crba(numeric, q), atol=1e-10)
        np.testing.assert_allclose(num.b(q, v) + num.g(q), mb.rnea(numeric, q, v, np.zeros(3)), atol=1e-10)
    # generated code takes the symbols as its parameter vector
    from multibody import codegen

    gen = codegen.to_numpy(model)
    names = [str(p) for p in dict(gen.spec.inputs)["param"]]
    by_name = {str(k): v for k, v in vals.items()}
    q = rng.normal(size=3)
    out = gen(q, np.zeros(3), params=np.array([by_name[n] for n in names]))
    np.testing.assert_allclose(out["M"], mb.crba(numeric, q), atol=1e-10)
    with pytest.raises(ValueError, match=r"symbolic parameters.*\bIx \(inertia_com of body 'base'\)"):
        mb.crba(model, np.zeros(3))


def test_symbolic_builder_refuses_what_no_value_can_fix():
    m, phi = sp.symbols("m phi", positive=True)
    b = mb.ModelBuilder("bad")
    with pytest.raises(ValueError, match="mass: body 'x' has mass -m, which is not positive"):
        b.add_body("x", mass=-m)
    with pytest.raises(ValueError, match="inertia: body 'x' has an inertia that is not symmetric"):
        b.add_body("x", mass=m, inertia=sp.Matrix([[1, m, 0], [0, 1, 0], [0, 0, 1]]))
    with pytest.raises(ValueError, match="joint_rotation of 'x': not a proper rotation matrix"):
        b.add_body("x", mass=m, joint_rotation=sp.Matrix([[sp.cos(phi), 0, 0], [0, 1, 0], [0, 0, 1]]))
    with pytest.raises(ValueError, match="com of 'x': expected finite real entries"):
        b.add_body("x", mass=m, com=(sp.zoo + m * 0, m, 0))
    assert not b.body_names
