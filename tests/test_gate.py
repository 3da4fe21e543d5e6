"""The one array gate (csrc/common/gate.h): every array argument of the C core, of the Python faces'
fallback path (_boundary.as_batch / states) and of codegen.compile's modules follows its rules.

One test per rule; each would fail on the checkers the gate replaced (a segfault for None, a
wrong matrix for '>f8', a silently dropped imaginary part, an AttributeError for an unaligned
field, inf for an overflow)."""
import numpy as np
import pytest

import multibody as mb
from multibody import _boundary as B
from multibody.core import ResultOverflowError, _core


@pytest.fixture(scope="module")
def arm():
    return mb.models.auto_tree(4)


@pytest.fixture(scope="module")
def state(arm):
    rng = np.random.default_rng(7)
    return rng.uniform(-1, 1, arm.nq), rng.uniform(-1, 1, arm.nv), rng.uniform(-1, 1, arm.nv)


FD = np.array([True, False, True, False])

# every public (function, required array argument) pair: None used to be "absent" in C and the
# kernel dereferenced NULL (a segmentation fault) for all but q
REQUIRED = [
    ("rnea", ("q", "qd", "qdd")), ("aba", ("q", "qd", "tau")), ("fd_crb", ("q", "qd", "tau")),
    ("fd_sparse", ("q", "qd", "tau")), ("hand_c", ("q", "qd")), ("energy", ("q", "qd")),
    ("hybrid_dynamics", ("q", "qd", "qdd", "tau")),
]
PAIRS = [(fn, arg) for fn, args in REQUIRED for arg in args]


def call(arm, fn, values):
    """mb.<fn>(arm, …) with the named arrays (hybrid_dynamics also gets its fd flags)."""
    f = getattr(mb, fn)
    names = dict(REQUIRED)[fn]
    args = [values[n] for n in names]
    return f(arm, FD, *args) if fn == "hybrid_dynamics" else f(arm, *args)


def values_of(state, batch=None):
    q, qd, x = state
    v = {"q": q, "qd": qd, "qdd": x, "tau": x}
    if batch:
        v = {k: np.tile(a, (batch, 1)) for k, a in v.items()}
    return v


@pytest.mark.parametrize("fn,arg", PAIRS)
@pytest.mark.parametrize("batch", [None, 3])
def test_none_for_a_required_array_is_a_type_error_naming_it(arm, state, fn, arg, batch):
    v = values_of(state, batch)
    v[arg] = None
    with pytest.raises(TypeError, match=rf"^{arg}: expected an array of numbers, got None"):
        call(arm, fn, v)


def test_none_in_the_python_fallback_path_too(arm, state):
    q, qd, x = state
    with pytest.raises(TypeError, match="^qd: expected an array of numbers, got None"):
        mb.rnea(arm, np.tile(q, (2, 3, 1)), None, x)        # 3-D batch: the Python face reshapes
    with pytest.raises(TypeError, match="^qd: expected an array of numbers, got None"):
        B.states(arm, q=q, qd=None)
    assert B.states(arm, q=q, f_ext=None)[0].keys() == {"q"}  # optional: absent


@pytest.mark.parametrize("batch", [None, 5, (2, 3)])
def test_non_native_byte_order_is_converted_never_read_as_native(arm, state, batch):
    q, qd, x = state
    if batch:
        shape = batch if isinstance(batch, tuple) else (batch,)
        q, qd, x = (np.broadcast_to(a, shape + a.shape).copy() for a in (q, qd, x))
    swapped = [a.astype(">f8") for a in (q, qd, x)]
    np.testing.assert_array_equal(mb.crba(arm, swapped[0]), mb.crba(arm, q))
    np.testing.assert_array_equal(mb.rnea(arm, *swapped), mb.rnea(arm, q, qd, x))
    np.testing.assert_array_equal(mb.aba(arm, *swapped), mb.aba(arm, q, qd, x))
    H, C = mb.hand_c(arm, swapped[0], swapped[1])
    np.testing.assert_array_equal(C, mb.hand_c(arm, q, qd)[1])
    np.testing.assert_array_equal(mb.energy(arm, swapped[0], swapped[1]).KE, mb.energy(arm, q, qd).KE)


@pytest.mark.parametrize("bad,what", [
    (lambda a: a.astype(complex), "complex"),
    (lambda a: np.ma.masked_array(a, mask=np.zeros(a.shape, bool)), "masked arrays"),
    (lambda a: a.astype(object), "objects"),
    (lambda a: a.astype(str), "dtype"),
])
@pytest.mark.parametrize("batch", [None, 3, (2, 2)])
def test_complex_masked_object_and_string_arrays_are_type_errors(arm, state, bad, what, batch):
    q, qd, x = state
    if batch:
        shape = batch if isinstance(batch, tuple) else (batch,)
        qd = np.broadcast_to(qd, shape + qd.shape).copy()
    with pytest.raises(TypeError, match=f"^qd: .*{what}"):
        mb.rnea(arm, q, bad(qd), x)
    with pytest.raises(TypeError, match=f"^q: .*{what}"):
        mb.crba(arm, bad(np.broadcast_to(q, qd.shape[:-1] + q.shape).copy()))


def test_complex_is_refused_even_with_a_zero_imaginary_part_and_no_warning(arm, state):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # no ComplexWarning on the way
        with pytest.raises(TypeError, match="imaginary part would be lost"):
            mb.crba(arm, state[0] + 0j)


@pytest.mark.parametrize("N", [1, 4])
def test_unaligned_arrays_are_copied_and_give_the_right_result(arm, state, N):
    q, qd, x = state
    packed = np.zeros(N, dtype=np.dtype([("a", "u1"), ("q", "f8", (arm.nq,))], align=False))
    packed["q"] = q
    field = packed["q"]
    assert not field.flags.aligned
    np.testing.assert_array_equal(mb.crba(arm, field), np.broadcast_to(mb.crba(arm, q), (N, arm.nv, arm.nv)))
    np.testing.assert_array_equal(mb.rnea(arm, field, qd, x)[0], mb.rnea(arm, q, qd, x))
    np.testing.assert_array_equal(mb.crba(arm, field[0]), mb.crba(arm, q))   # one unaligned state


def test_bool_and_int_arrays_convert_as_before(arm):
    np.testing.assert_array_equal(mb.crba(arm, np.zeros(4, dtype=int)), mb.crba(arm, np.zeros(4)))
    np.testing.assert_array_equal(mb.crba(arm, np.ones(4, dtype=bool)), mb.crba(arm, np.ones(4)))
    np.testing.assert_array_equal(mb.rnea(arm, [0, 1, 0, 1], [0] * 4, [1] * 4),
                                  mb.rnea(arm, np.array([0., 1, 0, 1]), np.zeros(4), np.ones(4)))


def test_ragged_nests_are_value_errors(arm):
    with pytest.raises(ValueError, match="^q: expected"):
        mb.crba(arm, [[1, 2], [3]])


@pytest.mark.parametrize("batch", [None, 4])
def test_a_result_that_overflows_from_finite_inputs_is_an_error(arm, state, batch):
    q, qd, x = state
    huge = np.full(arm.nv, 1e200)
    if batch:
        q, huge, x = (np.tile(a, (batch, 1)) for a in (q, huge, x))
        huge[:2] = qd                                   # states 0 and 1 are fine, state 2 overflows
    where = " at state 2" if batch else ""
    with pytest.raises(ResultOverflowError, match=f"^rnea: the result overflowed .*{where}"):
        mb.rnea(arm, q, huge, x)
    with pytest.raises(ValueError, match="^aba: the result overflowed"):   # a ValueError
        mb.aba(arm, q, huge, x)
    with pytest.raises(ValueError, match="^energy: the result overflowed"):
        mb.energy(arm, q, huge)


def test_the_python_faces_use_the_same_gate():
    a = B.as_array("q", np.arange(3, dtype=">f8"))
    assert a.dtype == np.float64 and a.dtype.isnative and a.flags.c_contiguous and a.flags.aligned
    x = np.zeros(3)
    assert B.as_array("q", x) is x                     # nothing to convert: no copy
    with pytest.raises(TypeError, match="^q: expected real numbers, got complex"):
        B.as_batch("q", np.zeros((2, 3), complex), (3,))
    with pytest.raises(TypeError, match="^xfb: masked"):
        mb.fd_fb(mb.models.floatbase(mb.models.auto_tree(3)), np.ma.zeros(13))


def test_other_faces_go_through_the_gate(arm, state):
    q, qd, x = state
    sw = lambda a: np.asarray(a, dtype=float).astype(">f8")  # noqa: E731
    # kinematics
    J = mb.body_jacobian(arm, q, 3, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(mb.body_jacobian(arm, sw(q), 3, sw([0.1, 0.2, 0.3])), J)
    with pytest.raises(TypeError, match="^point: .*complex"):
        mb.body_jacobian(arm, q, 3, np.zeros(3, complex))
    np.testing.assert_array_equal(mb.com_jacobian(arm, sw(q)), mb.com_jacobian(arm, q))
    s, t = mb.body_states(arm, sw(q), sw(qd)), mb.body_states(arm, q, qd)
    np.testing.assert_array_equal(s.p, t.p)
    np.testing.assert_array_equal(s.v, t.v)
    with pytest.raises(TypeError, match="^qd: .*complex"):
        mb.body_states(arm, q, qd + 0j)
    np.testing.assert_array_equal(mb.integrate(arm, sw(q), sw(qd), 0.1), mb.integrate(arm, q, qd, 0.1))
    # hybrid dynamics, floating base
    np.testing.assert_array_equal(mb.hybrid_dynamics(arm, FD, sw(q), sw(qd), sw(x), sw(x))[0],
                                  mb.hybrid_dynamics(arm, FD, q, qd, x, x)[0])
    fb = mb.models.floatbase(mb.models.auto_tree(3))
    xfb = np.r_[1.0, 0, 0, 0, np.zeros(9)]
    v = np.full(fb.nv - 6, 0.1)
    np.testing.assert_array_equal(mb.fd_fb(fb, sw(xfb), sw(v), sw(v), sw(v))[1], mb.fd_fb(fb, xfb, v, v, v)[1])
    np.testing.assert_array_equal(mb.id_fb(fb, sw(xfb), sw(v), sw(v), sw(v))[1], mb.id_fb(fb, xfb, v, v, v)[1])
    # the sparse kernels
    from multibody import sparse
    H = mb.crba(arm, q)
    lam = np.asarray(arm.parent, dtype=np.int64)
    L, d = sparse.ltdl(sw(H), lam)
    L0, d0 = sparse.ltdl(H, lam)
    np.testing.assert_array_equal(L, L0)
    with pytest.raises(TypeError, match="complex"):
        sparse.ltdl(H + 0j, lam)


def test_c_entry_points_outputs_are_never_copied():
    # an output the caller gives must be written in place: a non-native one is refused, not copied
    L, d, info = np.empty((1, 3, 3), ">f8"), np.empty((1, 3)), np.empty(1, dtype=np.int64)
    with pytest.raises(ValueError, match="^L: expected a writable, aligned, C-contiguous float64"):
        _core.ltdl_kernel(np.eye(3)[None], np.array([-1, 0, 1]), L, d, info)


def test_generated_modules_use_the_same_gate():
    from multibody import codegen
    f = codegen.compile(mb.models.double_pendulum())
    q, qd = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    ref = f(q, qd)
    for out in (f(q.astype(">f8"), qd.astype(">f8")),               # one state: `one`
                {k: v[1] for k, v in f(np.tile(q, (3, 1)).astype(">f8"), qd).items()}):  # batch: `run`
        for k in ref:
            np.testing.assert_array_equal(out[k], ref[k])
    packed = np.zeros(2, dtype=np.dtype([("a", "u1"), ("q", "f8", (2,))], align=False))
    packed["q"] = q
    np.testing.assert_array_equal(f(packed["q"], qd)["M"][1], ref["M"])
    for bad, what in ((q + 0j, "complex"), (np.ma.masked_array(q), "masked"), (q.astype(object), "objects")):
        with pytest.raises(TypeError, match=f"^q: .*{what}"):
            f(bad, qd)
        with pytest.raises(TypeError, match=f"^q: .*{what}"):
            f(np.tile(bad, (2, 1)) if what != "masked" else np.ma.masked_array(np.tile(q, (2, 1))), qd)
    with pytest.raises(ResultOverflowError, match="overflowed"):
        f(q, np.full(2, 1e200))


def test_overflow_inside_an_algorithm_is_not_called_a_singular_model():
    """Finite but huge q (a slider 1e200 m out along a pendulum) overflows inside the
    articulated-body and composite-inertia factorisations (inertias grow as the offset squared):
    ResultOverflowError saying so, not "singular joint-space inertia (a massless body …)", which
    would send the user looking for a modelling error."""
    b = mb.ModelBuilder("slider")
    b.add_body("arm", None, "revolute", axis=[0, 0, 1], mass=1.0, com=[0, 0.5, 0], inertia=[0.1, 0.01, 0.1])
    b.add_body("slider", "arm", "prismatic", axis=[0, 1, 0], mass=2.0, inertia=[0.1, 0.2, 0.3])
    model = b.build()
    q = np.array([0.3, 1e200])
    z = np.zeros(model.nv)
    for fn in (mb.aba, mb.fd_crb, mb.dynamics.fd_sparse):
        with pytest.raises(mb.errors.ResultOverflowError, match="overflowed"):
            fn(model, q, z, z)
    massless = mb.ModelBuilder("massless")
    massless.add_body("a", None, "revolute", mass=0.0, allow_massless=True)
    with pytest.raises(ValueError, match="singular joint-space inertia"):   # a real singular tree still says so
        mb.aba(massless.build(), [0.0], [0.0], [0.0])


# ---- the engine's arguments (csrc/py/_engine.c) pass the same gate ----------------------------------
def _engine_world():
    from multibody import engine as E
    w = E.World()
    w.add_body(E.Box(1.0, 1.0, 1.0), mass=1.0)
    w._ensure()
    return w


def test_the_engine_uses_the_same_gate():
    from multibody.engine import _engine as C
    planes = np.array([[1.0, 0, 0, 1], [-1, 0, 0, 1], [0, 1, 0, 1], [0, -1, 0, 1], [0, 0, 1, 1], [0, 0, -1, 1]])
    o, d = np.array([-5.0, 0, 0]), np.array([1.0, 0, 0])
    ref = C.ray_convex(planes, o, d, 50.0)
    # non-native, strided, lists and integers convert, as for the core
    assert C.ray_convex(planes.astype(">f8"), o[::1].astype(">f8"), [1, 0, 0], 50.0) == ref
    assert C.ray_convex(np.asfortranarray(planes), list(o), np.array([1, 0, 0]), 50.0) == ref
    for bad, what, exc in ((o + 0j, "complex", TypeError), (np.ma.masked_array(o), "masked", TypeError),
                           (o.astype(object), "objects", TypeError), (None, "None", TypeError),
                           ([[1.0], [2.0, 3.0]], "rectangular", ValueError)):
        with pytest.raises(exc, match=f"^origin: .*{what}"):
            C.ray_convex(planes, bad, d, 50.0)
    with pytest.raises(ValueError, match=r"^origin: expected shape \(3,\), got \(2,\)"):
        C.ray_convex(planes, o[:2], d, 50.0)
    with pytest.raises(ValueError, match=r"^planes: expected shape \(n, 4\), got \(6, 3\)"):
        C.ray_convex(planes[:, :3], o, d, 50.0)


def test_the_arrays_a_sim_keeps_are_used_in_place_never_copied():
    # the World edits them between steps and reads the state a step writes: a converted copy would
    # cut that link, so the gate refuses it (MB_GATE_WRITABLE), naming the array
    from multibody.engine import _engine as C
    w = _engine_world()
    args = [w._state, w._load, w._bprop, w._jint, w._jdat, w._gint, w._gdat, w._wpar]
    names = ["state", "load", "bprop", "jint", "jdat", "gint", "gdat", "wpar"]
    for k, name in enumerate(names):
        for bad in (args[k].astype(args[k].dtype.newbyteorder(">")), args[k].tolist()):
            a = list(args)
            a[k] = bad
            with pytest.raises(ValueError, match=f"^{name}: expected a writable, aligned, C-contiguous"):
                C.Sim(*a)
    frozen = w._bprop.copy()
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="^bprop: expected a writable"):
        C.Sim(w._state, w._load, frozen, w._jint, w._jdat, w._gint, w._gdat, w._wpar)
    with pytest.raises(TypeError, match="^jdat: expected an array of numbers, got None"):
        C.Sim(w._state, w._load, w._bprop, w._jint, None, w._gint, w._gdat, w._wpar)
