"""A bounded property-based fuzz of the public numeric functions: every array argument is mutated
(byte order, strides, layout, alignment, read-only, aliasing, dtype, None, complex, object, masked,
NaN/inf, huge values, wrong shapes, empty batches) and each call must either

- give exactly the result of the same numbers passed as clean float64 arrays (value-preserving
  mutations: the gate converts, never reinterprets), or
- raise the documented class — ``TypeError`` for what is not an array of real numbers (None,
  complex, object, masked), ``ValueError`` for wrong shapes and non-finite numbers — with a message
  that names the argument;

and never crash, hang or return a non-finite number.  Runs under ``make test-asan`` too, where an
out-of-bounds read or a use of freed memory is an abort.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import multibody as mb
from multibody.dynamics import fd_sparse

FUZZ = settings(max_examples=4, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _model():
    """Every joint type the core has, on one tree: a free root, a ball, a hinge, a slider, a screw."""
    b = mb.ModelBuilder("fuzz")
    inertia = np.diag([0.02, 0.03, 0.04])
    b.add_body("base", None, "free", mass=2.0, com=[0.01, 0.02, 0.03], inertia=inertia)
    b.add_body("ball", "base", "spherical", mass=1.0, com=[0, 0, -0.2], inertia=inertia, joint_translation=[0.1, 0, 0])
    b.add_body("hinge", "ball", "revolute", axis=[0, 1, 0], mass=0.5, com=[0.1, 0, 0], inertia=inertia,
               joint_translation=[0, 0, -0.4])
    b.add_body("slider", "base", "prismatic", axis=[0, 0, 1], mass=0.7, com=[0, 0.1, 0], inertia=inertia,
               joint_translation=[-0.1, 0, 0])
    b.add_body("screw", "slider", "helical", axis=[1, 0, 0], pitch=0.05, mass=0.3, inertia=inertia,
               joint_translation=[0, 0, 0.2])
    return b.build()


MODEL = _model()
NQ, NV, NB = MODEL.nq, MODEL.nv, MODEL.nb
FD = np.array([True, False, True, True, False])  # hybrid dynamics: forward dynamics on these joints

# name -> (function of keyword arrays, {argument: trailing shape}, optional arguments)
FUNCTIONS = {
    "rnea": (lambda q, qd, qdd, f_ext=None: mb.rnea(MODEL, q, qd, qdd, f_ext),
             {"q": (NQ,), "qd": (NV,), "qdd": (NV,), "f_ext": (NB, 6)}, {"f_ext"}),
    "aba": (lambda q, qd, tau, f_ext=None: mb.aba(MODEL, q, qd, tau, f_ext),
            {"q": (NQ,), "qd": (NV,), "tau": (NV,), "f_ext": (NB, 6)}, {"f_ext"}),
    "fd_crb": (lambda q, qd, tau, f_ext=None: mb.fd_crb(MODEL, q, qd, tau, f_ext),
               {"q": (NQ,), "qd": (NV,), "tau": (NV,), "f_ext": (NB, 6)}, {"f_ext"}),
    "fd_sparse": (lambda q, qd, tau: fd_sparse(MODEL, q, qd, tau), {"q": (NQ,), "qd": (NV,), "tau": (NV,)}, set()),
    "crba": (lambda q: mb.crba(MODEL, q), {"q": (NQ,)}, set()),
    "hand_c": (lambda q, qd, f_ext=None: mb.hand_c(MODEL, q, qd, f_ext),
               {"q": (NQ,), "qd": (NV,), "f_ext": (NB, 6)}, {"f_ext"}),
    "hybrid_dynamics": (lambda q, qd, qdd, tau: mb.hybrid_dynamics(MODEL, FD, q, qd, qdd, tau),
                        {"q": (NQ,), "qd": (NV,), "qdd": (NV,), "tau": (NV,)}, set()),
    "energy": (lambda q, qd: mb.energy(MODEL, q, qd), {"q": (NQ,), "qd": (NV,)}, set()),
    "body_states": (lambda q, qd, qdd: mb.body_states(MODEL, q, qd, qdd),
                    {"q": (NQ,), "qd": (NV,), "qdd": (NV,)}, {"qd", "qdd"}),    # rates: None = poses only
    "forward_kinematics": (lambda q: mb.forward_kinematics(MODEL, q), {"q": (NQ,)}, set()),
    "point_velocity": (lambda q, qd: mb.point_velocity(MODEL, q, qd, "hinge", (0.1, 0.2, 0.3)),
                       {"q": (NQ,), "qd": (NV,)}, set()),
    "body_jacobian": (lambda q: mb.body_jacobian(MODEL, q, "screw"), {"q": (NQ,)}, set()),
    "jdot_qd": (lambda q, qd: mb.jdot_qd(MODEL, q, qd, "hinge"), {"q": (NQ,), "qd": (NV,)}, set()),
    "frame_placement": (lambda q: mb.frame_placement(MODEL, q, "hinge"), {"q": (NQ,)}, set()),
    "frame_velocity": (lambda q, qd: mb.frame_velocity(MODEL, q, qd, "screw", "world"), {"q": (NQ,), "qd": (NV,)},
                       set()),
    "frame_acceleration": (lambda q, qd, qdd: mb.frame_acceleration(MODEL, q, qd, qdd, "hinge", "local"),
                           {"q": (NQ,), "qd": (NV,), "qdd": (NV,)}, set()),
    "frame_jacobian": (lambda q: mb.frame_jacobian(MODEL, q, "ball", "local"), {"q": (NQ,)}, set()),
    "com_jacobian": (lambda q: mb.com_jacobian(MODEL, q), {"q": (NQ,)}, set()),
    "com_velocity": (lambda q, qd: mb.com_velocity(MODEL, q, qd), {"q": (NQ,), "qd": (NV,)}, set()),
    "integrate": (lambda q, v: mb.integrate(MODEL, q, v, 0.01), {"q": (NQ,), "v": (NV,)}, set()),
    "rnea_derivatives": (lambda q, qd, qdd, f_ext=None: mb.rnea_derivatives(MODEL, q, qd, qdd, f_ext),
                         {"q": (NQ,), "qd": (NV,), "qdd": (NV,), "f_ext": (NB, 6)}, {"f_ext"}),
    "aba_derivatives": (lambda q, qd, tau: mb.aba_derivatives(MODEL, q, qd, tau),
                        {"q": (NQ,), "qd": (NV,), "tau": (NV,)}, set()),
    "minv": (lambda q: mb.minv(MODEL, q), {"q": (NQ,)}, set()),
}


def arrays_of(result):
    """The numbers of a result (array, tuple, dataclass or object with array attributes) as a list."""
    if isinstance(result, np.ndarray) or np.isscalar(result):
        return [np.asarray(result)]
    if isinstance(result, (tuple, list)):
        return [a for r in result for a in arrays_of(r)]
    if dataclasses.is_dataclass(result):
        return [a for f in dataclasses.fields(result) for a in arrays_of(getattr(result, f.name))]
    return [a for k, v in sorted(vars(result).items()) if not k.startswith("_") for a in arrays_of(v)]


def state(rng, name, tail):
    """A valid random value of one argument (unit quaternions inside q)."""
    if name == "q":
        return mb.integrate(MODEL, MODEL.neutral(), rng.normal(size=NV))
    return rng.normal(size=tail)


def unaligned(x):
    """The same numbers as a field of a packed structured array: float64 at an odd address."""
    packed = np.zeros(x.shape[:1] if x.ndim > 1 else (), dtype=[("pad", "u1"), ("x", "f8", x.shape[-1:] if x.ndim == 1 else x.shape[1:])])
    packed["x"] = x
    view = packed["x"]
    assert not view.flags.aligned
    return view


# value-preserving: the call must equal the call on np.array(mutated, dtype=float64)
SAME_NUMBERS = {
    "big-endian": lambda x: x.astype(">f8"),
    "strided": lambda x: np.repeat(x[..., None], 2, axis=-1)[..., 0],
    "reversed-strides": lambda x: np.ascontiguousarray(x[..., ::-1])[..., ::-1],
    "fortran": lambda x: np.asfortranarray(x),
    "read-only": lambda x: _readonly(x),
    "unaligned": unaligned,
    "float32": lambda x: x.astype(np.float32),
    "list": lambda x: x.tolist(),
    "batch-of-one": lambda x: x[None],
    "batch-of-three": lambda x: np.stack([x, x, x]),
}
# refused: (mutation, exception class)
REFUSED = {
    "None": (lambda x: None, TypeError),
    "complex": (lambda x: x + 0j, TypeError),
    "object": (lambda x: x.astype(object), TypeError),
    "masked": (lambda x: np.ma.masked_array(x, mask=np.zeros(x.shape, bool)), TypeError),
    "nan": (lambda x: _poke(x, np.nan), ValueError),
    "inf": (lambda x: _poke(x, -np.inf), ValueError),
    "too-long": (lambda x: np.concatenate([x.ravel(), [0.0]]), ValueError),
    "too-short": (lambda x: x.ravel()[:-1], ValueError),
    "scalar": (lambda x: 1.5, ValueError),
}


def _readonly(x):
    y = x.copy()
    y.flags.writeable = False
    return y


def _poke(x, value):
    """Every entry non-finite (hybrid dynamics reads only the τ/q̈ entries its fd flags select: NaN
    in the others means "not given")."""
    return np.full(np.shape(x), value)


def clean(x):
    return None if x is None else np.array(x, dtype=np.float64)


# every (function, argument) pair: each mutation is tried on each, with random valid values around it
CALLS = [(fname, arg) for fname in sorted(FUNCTIONS) for arg in FUNCTIONS[fname][1]]


def random_call(fname, seed):
    """The function and a valid random value of each of its arguments."""
    fn, tails, optional = FUNCTIONS[fname]
    rng = np.random.default_rng(seed)
    return fn, {k: state(rng, k, t) for k, t in tails.items()}, optional


def check_finite(name, result):
    for a in arrays_of(result):
        assert np.all(np.isfinite(a)), f"{name}: returned non-finite numbers"


@pytest.mark.parametrize("mutation", sorted(SAME_NUMBERS))
@pytest.mark.parametrize("fname, target", CALLS)
@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_same_numbers_give_the_same_result(fname, target, mutation, seed):
    fn, args, _ = random_call(fname, seed)
    mutated = dict(args, **{target: SAME_NUMBERS[mutation](args[target])})
    expected = fn(**{k: clean(v) for k, v in mutated.items()})
    got = fn(**mutated)
    exp_arrays, got_arrays = arrays_of(expected), arrays_of(got)
    assert len(exp_arrays) == len(got_arrays)
    for e, g in zip(exp_arrays, got_arrays):
        np.testing.assert_array_equal(g, e, err_msg=f"{fname}: {target} {mutation}")
    check_finite(fname, got)


@pytest.mark.parametrize("mutation", sorted(REFUSED))
@pytest.mark.parametrize("fname, target", CALLS)
def test_bad_arrays_are_refused_by_name(fname, target, mutation):
    fn, args, optional = random_call(fname, 1)
    if mutation == "None" and target in optional:
        return  # None means "not given" for an optional argument
    make, error = REFUSED[mutation]
    mutated = dict(args, **{target: make(args[target])})
    with pytest.raises(error) as info:
        fn(**mutated)
    assert target in str(info.value), f"{fname}: the error for {target} ({mutation}) does not name it: {info.value}"


@pytest.mark.parametrize("fname, target", CALLS)
@FUZZ
@given(seed=st.integers(0, 2**32 - 1), exponent=st.integers(100, 300))
def test_huge_values_give_finite_numbers_or_say_so(fname, target, seed, exponent):
    """Finite input whose result overflows raises ValueError; no inf or NaN comes back."""
    fn, args, _ = random_call(fname, seed)
    args[target] = args[target] * 10.0**exponent
    try:
        result = fn(**args)
    except ValueError as exc:
        assert "overflow" in str(exc) or target in str(exc), f"{fname}: unclear error {exc}"
        return
    check_finite(fname, result)


@pytest.mark.parametrize("fname", sorted(FUNCTIONS))
def test_aliased_and_empty_batches(fname):
    """One array passed for several arguments reads as copies would; results never alias inputs;
    a batch of zero states gives zero results."""
    fn, tails, _ = FUNCTIONS[fname]
    rng = np.random.default_rng(7)
    args = {k: state(rng, k, t) for k, t in tails.items()}
    rates = [k for k, t in tails.items() if t == (NV,)]
    if len(rates) > 1:
        shared = args[rates[0]]
        aliased = dict(args, **{k: shared for k in rates})
        expected = fn(**{k: v.copy() for k, v in aliased.items()})
        got = fn(**aliased)
        for e, g in zip(arrays_of(expected), arrays_of(got)):
            np.testing.assert_array_equal(g, e)
        assert np.array_equal(shared, args[rates[0]])  # inputs untouched
    for a in arrays_of(fn(**args)):
        for x in args.values():
            assert not np.shares_memory(a, x)
    empty = dict(args, q=np.zeros((0, NQ)))
    for a in arrays_of(fn(**empty)):
        assert a.shape[0] == 0, f"{fname}: a batch of no states gave shape {a.shape}"


@FUZZ
@given(scale=st.sampled_from([1e-200, 1e-100, 1.0, 1e100, 1e200]), seed=st.integers(0, 2**32 - 1))
def test_quaternions_of_any_finite_scale_are_the_same_rotation(scale, seed):
    """q's quaternions are directions: scaling one (without overflow or underflow) changes nothing."""
    rng = np.random.default_rng(seed)
    q = state(rng, "q", (NQ,))
    scaled = q.copy()
    for start in (3, 7):  # the free root's and the ball's quaternions
        scaled[start:start + 4] *= scale
    for want, got in zip(arrays_of(mb.forward_kinematics(MODEL, q)), arrays_of(mb.forward_kinematics(MODEL, scaled))):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mb.crba(MODEL, scaled), mb.crba(MODEL, q), rtol=1e-12, atol=1e-12)
