"""Every built-in model through every derivation method: symbolic M, b, g against the numeric
crba/rnea at random states; the methods that do not apply raise a clear error. The proNEu
manual's body lists give the very same expressions as the models; seed parameters substitute."""
import importlib

import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody.model.mechanism import Mechanism
from multibody.symbolic import derive
from multibody.symbolic.tmt import mechanism_point, tmt_system
from pronue_lists import ra3link_list, starleth_list

METHODS = ("rnea", "pne", "tmt", "lagrange")
RNG = np.random.default_rng(2024)

# one representative call of every constructor in multibody.models
CATALOG = {
    "auto_tree": lambda: mb.models.auto_tree(4, bf=2, skew=0.3),
    "planar": lambda: mb.models.planar(3),
    "vee": mb.models.vee,
    "singlebody": mb.models.singlebody,
    "scissor": mb.models.scissor,
    "floatbase": lambda: mb.models.floatbase(mb.models.auto_tree(2)),
    "ra3link": mb.models.ra3link,
    "ra3link_prismatic": mb.models.ra3link_prismatic,
    "starleth": mb.models.starleth,
    "ma23": mb.models.ma23,
    "double_pendulum": mb.models.double_pendulum,
    "single_pendulum": mb.models.single_pendulum,
    "biped_upper_body": mb.models.biped_upper_body,
    "flapping_flyer": mb.models.flapping_flyer,
    "clemens_joint": mb.models.clemens_joint,
    "gfx_example": mb.models.gfx_example,
    "double_elbow": mb.models.double_elbow,
    "rolling_disc": lambda: mb.models.rolling_disc(4),
    "whipple_bicycle": mb.models.whipple_bicycle,
    "a01_pendulum": mb.models.a01_pendulum,
    "a02_n_four_bar": lambda: mb.models.a02_n_four_bar(2),
    "a03_andrews": mb.models.a03_andrews,
    "a04_bricard": mb.models.a04_bricard,
    "a05_flyball_governor": mb.models.a05_flyball_governor,
}
QUATERNION = {"vee", "singlebody", "scissor", "rolling_disc"}          # free joints: no symbolic coordinates
MECHANISMS = {"biped_upper_body", "flapping_flyer", "clemens_joint"}
SEEDS = ("ra3link", "ra3link_prismatic", "starleth", "ma23", "double_pendulum", "single_pendulum") + tuple(sorted(MECHANISMS))
SLOW = {("starleth", "tmt"), ("starleth", "lagrange")}
NOT_CONSTRUCTORS = {"support_jacobian", "SeedInfo", "seed_info", "parameters"}


def test_catalog_covers_every_constructor():
    assert set(mb.models.__all__) - NOT_CONSTRUCTORS == set(CATALOG)


def _reference(model, q, dq):
    n = model.nv
    g = mb.rnea(model, q, np.zeros(n), np.zeros(n))
    return mb.crba(model, q), mb.rnea(model, q, dq, np.zeros(n)) - g, g


def _close(a, b, tol=1e-9):
    return np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max())


def _check_numeric(num, model, trials=3):
    for _ in range(trials):
        q, dq = RNG.uniform(-1.2, 1.2, model.nv), RNG.normal(size=model.nv)
        M, b, g = _reference(model, q, dq)
        assert _close(num.M(q), M) and _close(num.b(q, dq), b) and _close(num.g(q), g)


def _params(name, method):
    marks = [pytest.mark.slow] if (name, method) in SLOW else []
    return pytest.param(name, method, marks=marks, id=f"{name}-{method}")


@pytest.mark.parametrize("name,method", [_params(n, m) for n in CATALOG for m in METHODS])
def test_every_model_by_every_method(name, method):
    source = CATALOG[name]()
    if name in QUATERNION:
        with pytest.raises(ValueError, match=r"'\w+'.*(free|spherical).*Euler"):
            derive(source, method)
        return
    if name in MECHANISMS and method not in ("tmt", "lagrange"):   # a mechanism by TMT or by its energies
        with pytest.raises(TypeError, match=rf"method '{method}' derives from .*Mechanism.*'tmt'"):
            derive(source, method)
        return
    eom = derive(source, method)
    assert eom.extra["method"] == method
    if name in MECHANISMS:
        # the tree part of TMT is the model's: M = crba, convective + gravity terms = rnea
        model, num = source.model, eom.to_numeric({})
        for _ in range(2):
            q, dq = RNG.uniform(-1.2, 1.2, model.nv), RNG.normal(size=model.nv)
            M, b, g = _reference(model, q, dq)
            subs = {**dict(zip(eom.q, q)), **dict(zip(eom.dq, dq)), **({source.time: 0.7} if source.time else {})}
            tree_terms = (eom.extra["b_convective"] + eom.extra["g_gravity"]).xreplace(subs)
            assert _close(num.M(q), M)
            assert _close(np.array(tree_terms, dtype=float).ravel(), b + g)
        return
    assert eom.n == source.nv
    _check_numeric(eom.to_numeric({}), source)


@pytest.mark.parametrize("name", SEEDS)
def test_symbolic_seed_models_substitute_their_parameters(name):
    """derive(model(symbolic=True)) with parameters(model) = the numeric model, at non-default values."""
    ctor = getattr(mb.models, name)
    info = mb.models.seed_info(ctor())
    inertia_scale = RNG.uniform(0.8, 1.25)   # one factor for all moments keeps them a rigid body's
    kw = {k: v * (inertia_scale if k.startswith(("Th", "I")) else RNG.uniform(0.8, 1.25))
          for k, v in info.values.items()}
    if "I_l" in kw:           # the Clemens joint's massless links get mass, so every body counts
        kw.update(m_l=0.3, I_l=0.02)
    numeric, symbolic = ctor(**kw), ctor(symbolic=True, **kw)
    tree_num = numeric.model if name in MECHANISMS else numeric
    tree_sym = symbolic.model if name in MECHANISMS else symbolic
    values = mb.models.parameters(symbolic)
    assert set(values) == set(mb.models.seed_info(symbolic).symbols.values())
    assert {str(s) for s in values} == set(info.values)
    assert tree_sym.is_symbolic and not tree_num.is_symbolic
    # the symbolic tree with its values is the numeric tree
    back = tree_sym.subs(values)
    for field in ("jaxis", "tree_rotation", "tree_translation", "mass", "com", "inertia_com", "gravity"):
        np.testing.assert_allclose(getattr(back, field), getattr(tree_num, field), atol=1e-12, err_msg=field)
    eom = derive(tree_sym, "rnea")
    _check_numeric(eom.to_numeric(values), tree_num, trials=2)
    # substitution leaves no parameter behind (the symbols are the model's own)
    assert not (eom.subs(values).M.free_symbols - set(eom.q))


def test_subs_example_of_the_issue():
    model = mb.models.ra3link(symbolic=True)
    M = derive(model).M.subs(mb.models.parameters(model))
    assert M.free_symbols <= set(sp.symbols("q1 q2 q3", real=True))
    q = np.array([0.3, -0.4, 0.8])
    np.testing.assert_allclose(np.array(M.subs(dict(zip(sp.symbols("q1 q2 q3", real=True), q))), dtype=float),
                               mb.crba(mb.models.ra3link(), q), atol=1e-12)


@pytest.mark.parametrize("lst,ctor", [(ra3link_list, mb.models.ra3link), (starleth_list, mb.models.starleth)],
                         ids=["RA3Link", "StarlETH"])
def test_model_and_manual_body_list_give_identical_expressions(lst, ctor):
    """The manual's body list (eulerToRotMat_A_IB, 'rot' torques) and the Model give the same M, b, g, S."""
    by_list = lst().derive(kinematics=False)
    by_model_raw = derive(ctor(symbolic=True), "pne", kinematics=False, raw=True)
    for name in ("q", "dq", "tau", "S", "M", "b", "g"):
        assert getattr(by_list, name) == getattr(by_model_raw, name), name
    by_model = derive(ctor(symbolic=True), "pne", kinematics=False)       # readable: the same rewrite of both
    readable_list = by_list.readable()
    for name in ("M", "b", "g"):
        assert getattr(readable_list, name) == getattr(by_model, name), name
    # and derive() takes the body list itself, and the PneSystem built from the model
    system = lst()
    again = derive(system.bodies, "pne", q=system.q, dq=system.dq, tau=system.tau,
                   force_elements=system.force_elements, gravity=system.gravity, kinematics=False)
    assert again.M == by_model.M and again.g == by_model.g
    assert derive(mb.symbolic.pne_system(ctor(symbolic=True)), "pne", kinematics=False).b == by_model.b


def test_seed_names_and_actuators():
    eom = derive(mb.models.starleth())
    assert [str(s) for s in eom.q[:7]] == ["qX", "qY", "qZ", "qAL", "qBE", "qGA", "qLF_HAA"]
    assert eom.S.shape == (12, 18) and eom.S[:, :6] == sp.zeros(12, 6)      # the base is not actuated
    assert str(eom.tau[0]) == "TLF_HAA" and str(eom.dq[0]) == "DqX"
    assert [str(t) for t in derive(mb.models.ra3link_prismatic()).tau] == ["T1", "T2", "F1"]
    assert [str(t) for t in derive(mb.models.auto_tree(2)).tau] == ["tau0", "tau1"]


def test_symbolic_argument_forms():
    some = mb.models.double_pendulum(symbolic=["m1", "l1"])
    assert {str(s) for s in mb.models.parameters(some)} == {"m1", "l1"}
    m = sp.Symbol("m", positive=True)
    mapped = mb.models.double_pendulum(symbolic={"m1": m, "m2": 2 * m})
    assert mapped.mass[0] == m and mapped.mass[1] == 2 * m
    assert mb.models.parameters(mapped) == {m: 1.0}
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['mass'\].*\['m1'"):
        mb.models.double_pendulum(symbolic=["mass"])
    with pytest.raises(TypeError, match="symbolic must be"):
        mb.models.double_pendulum(symbolic="m1")
    with pytest.raises(TypeError, match="parameter m1 must be a number"):
        mb.models.double_pendulum(m1="heavy")
    with pytest.raises(ValueError, match="parameter l2 must be finite"):
        mb.models.ra3link(l2=float("nan"))
    with pytest.raises(ValueError, match="mass"):
        mb.models.double_pendulum(m2=-1.0)
    with pytest.raises(ValueError, match="not built by a multibody.models seed constructor"):
        mb.models.parameters(mb.models.auto_tree(2))


def test_derive_refuses_what_it_cannot_read():
    with pytest.raises(TypeError, match=r"cannot derive .* from int.*derive accepts Model"):
        derive(42)
    with pytest.raises(TypeError, match="method 'rnea' derives from Model; got TMTSystem"):
        derive(tmt_system(mb.models.biped_upper_body()), "rnea")
    with pytest.raises(TypeError, match="proNEu body list holds multibody.symbolic.Body records"):
        derive([1, 2], "pne", q=[sp.Symbol("a")], dq=[sp.Symbol("b")])
    with pytest.raises(ValueError, match="unknown method 'nope'; choose one of lagrange, pne, rnea, tmt"):
        derive(mb.models.ra3link(), "nope")
    with pytest.raises(ValueError, match="carries its own symbols; q cannot be given"):
        derive(mb.models.clemens_joint(), "tmt", q=sp.symbols("a0:13"))
    with pytest.raises(ValueError, match="needs its coordinate symbols"):
        derive(ra3link_list().bodies, "pne")


def test_mechanism_points_and_elements():
    mech = mb.models.biped_upper_body()
    q = dict(zip(mech.q, mech.q0))
    swing = np.array(mechanism_point(mech, "swing_leg", (0, -1, 0)).xreplace(q), dtype=float).ravel()
    assert abs(swing[1]) < 1e-12                                  # the paper's q0: both feet on the slope
    system = tmt_system(mech)
    f_k = system.evaluate("f_springs", q=mech.q0)
    np.testing.assert_allclose(f_k.ravel(), [0, 0, 0, 0.0035 * 0.4, 0], atol=1e-15)   # −k_h q2 on q2
    with pytest.raises(ValueError, match="q and dq need 3 symbols"):
        Mechanism(mb.models.ra3link(), sp.symbols("a b"), sp.symbols("c d"))
    with pytest.raises(ValueError, match="quaternion joints"):
        Mechanism(mb.models.vee(), (), ())


def test_previous_names_are_gone():
    for name in ("double_pendulum_report", "double_pendulum_report_model", "double_pendulum_report_symbols",
                 "PneSystem", "Mechanism", "autoTree", "gfxExample"):
        with pytest.raises(AttributeError):
            getattr(mb.models, name)
    for module in ("multibody.models.constructors", "multibody.models.mechanism"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(module)
    import multibody.symbolic.sym_models as sym_models
    assert mb.models.ra3link(symbolic=True).is_symbolic
    assert not any(hasattr(sym_models, n) for n in ("ra3link_model", "ra3link_prismatic_model", "starleth_model"))


@pytest.mark.parametrize("L2", [1.0, 2.0, 0.5])
def test_vee_draws_the_seeds_construction_lines_and_spheres(L2):
    """spatial_v2 vee.m (Simulink example 3): axes, the 45° line and the line between the centres of
    mass in base coordinates; red spheres on the rods' centres of mass; for L2 ≠ 1 orange spheres at
    the system's centre of mass and at the rod points that meet it when the rods are folded."""
    from multibody.kinematics.forward import forward_kinematics
    model = mb.models.vee(L2)
    geoms = {g.name: g for g in model.geometries if g.name}
    lines = [g for g in model.geometries if g.kind == "line" and g.body == -1]
    assert len(lines) == 5
    assert {"centre of mass rod1", "centre of mass rod2"} <= set(geoms)
    assert ("system centre of mass" in geoms) == (L2 != 1.0)

    def world_point(q, body, local):
        R, p = forward_kinematics(model, q)
        return p[body] + R[body] @ np.asarray(local, float)

    def system_com(q):
        return sum(model.mass[i] * world_point(q, i, model.com[i]) for i in range(2)) / model.mass.sum()

    q0 = model.neutral()
    for i in range(2):                                         # the red spheres sit on the centres of mass
        assert np.allclose(geoms[f"centre of mass rod{i + 1}"].translation, model.com[i])
    if L2 != 1.0:
        assert np.allclose(geoms["system centre of mass"].translation, system_com(q0))
        folded = q0.copy()
        folded[-1] = np.pi                                      # rod 2 turned onto rod 1 about the 45° axis
        for i in range(2):
            point = world_point(folded, i, geoms[f"folded centre of mass rod{i + 1}"].translation)
            assert np.allclose(point, system_com(folded), atol=1e-12)


# The Raises sections of the constructors, held: every bad argument is named, with the package's rule
# (TypeError for the wrong kind, ValueError for a wrong value).  Before, numpy's or Python's own
# messages came out ("ufunc 'isfinite' not supported …", "'>' not supported between instances of
# 'str' and 'int'", "not enough values to unpack", "'str' object has no attribute 'planar'").
@pytest.mark.parametrize("call, kind, match", [
    (lambda: mb.models.auto_tree(2.5), TypeError, r"^nb: expected an integer, got 2.5$"),
    (lambda: mb.models.auto_tree(0), ValueError, r"^nb: expected an integer ≥ 1, got 0$"),
    (lambda: mb.models.auto_tree(3, bf="a"), TypeError, r"^bf: expected a real number, got str 'a'$"),
    (lambda: mb.models.auto_tree(3, skew=None), TypeError, r"^skew: expected a real number, got NoneType"),
    (lambda: mb.models.auto_tree(3, taper=float("nan")), ValueError, r"^taper: expected a finite number > 0, got nan$"),
    (lambda: mb.models.planar(True), TypeError, r"^n: expected an integer, got True$"),
    (lambda: mb.models.vee("a"), TypeError, r"^L2: expected a real number, got str 'a'$"),
    (lambda: mb.models.vee(float("inf")), ValueError, r"^L2: expected a finite number > 0, got inf$"),
    (lambda: mb.models.singlebody(size=(1, 2)), ValueError, r"^size: expected shape \(3,\), got \(2,\)$"),
    (lambda: mb.models.singlebody(size=(1, 2, -1)), ValueError, r"^size: expected three lengths > 0"),
    (lambda: mb.models.singlebody("a"), TypeError, r"^mass: expected a real number, got str 'a'$"),
    (lambda: mb.models.scissor("a"), TypeError, r"^mass: expected a real number, got str 'a'$"),
    (lambda: mb.models.scissor(length=float("inf")), ValueError, r"^length: expected a finite number > 0, got inf$"),
    (lambda: mb.models.floatbase("x"), TypeError, r"^model: expected a multibody.Model, got str$"),
    (lambda: mb.models.double_elbow(spacing="a"), TypeError, r"^spacing: expected a real number, got str 'a'$"),
    (lambda: mb.models.rolling_disc(2.0), TypeError, r"^npt: expected an integer, got 2.0$"),
    (lambda: mb.models.rolling_disc(radius=None), TypeError, r"^radius: expected a real number, got NoneType"),
    (lambda: mb.models.rolling_disc(floating="x"), ValueError, r"^floating: expected one of \['free', 'floatbase'\]"),
    (lambda: mb.models.parameters(None), TypeError, r"^obj: expected a Model or Mechanism"),
    (lambda: mb.models.support_jacobian(None), TypeError, r"^eom: expected the EquationsOfMotion"),
])
def test_constructor_arguments_are_named(call, kind, match):
    with pytest.raises(kind, match=match):
        call()


def test_checked_constructors_build_as_before():
    assert mb.models.auto_tree(7, bf=2).name == "auto_tree(7, bf=2, skew=0, taper=1)"   # the values as given
    assert mb.models.planar(np.int64(3)).nv == 3 and mb.models.rolling_disc(np.int32(8)).nv == 6
    assert mb.models.singlebody(2, size=np.array([1.0, 2.0, 3.0])).mass[0] == 2.0
