"""SIMD over states (csrc/kernels/aba_lanes.c, lanes.h): batched ABA, RNEA and CRBA run groups of states in
the lanes of vector registers.  Every lane must give the single call's result for that state bit for
bit, through every implementation this CPU has, and a failing state inside a group must be
reported exactly as a single call reports it."""
import numpy as np
import pytest

import multibody as mb
from multibody.core import _core

from test_dynamics_consistency import _inertia, _rot, _unit, mixed


def _implementations():
    """The lanes this CPU runs, narrowest first: "baseline", then "avx2" and "avx512" where built
    and supported."""
    names = ["baseline"]
    for name in ("avx2", "avx512"):
        try:
            _core.use_lanes(_core.use_lanes(name))   # try, then put back what import chose
            names.append(name)
        except ValueError:
            pass
    return names


IMPLEMENTATIONS = _implementations()


@pytest.fixture(params=IMPLEMENTATIONS + ["none"])
def lanes(request):
    before = _core.use_lanes(request.param)
    yield request.param
    _core.use_lanes(before)


def test_import_picks_the_widest_lanes_this_cpu_runs():
    chosen = _core.use_lanes("none")
    _core.use_lanes(chosen)
    assert chosen == IMPLEMENTATIONS[-1]
    width = {"avx2": (4,), "avx512": (8,)}.get(chosen, (2, 4, 8))   # baseline: 4 or 8 in a native build
    assert _core.LANES in width


def lane_model(seed, floating=True):
    """One-dof joints of every kind the lanes run — revolute and prismatic about coordinate and
    random axes, helical, fixed — with and without tree rotations and rotor inertia, under a free
    root (or none)."""
    rng = np.random.default_rng(seed)
    b = mb.ModelBuilder("lanes", gravity=(0.0, -3.0, -9.81))
    names = []
    if floating:
        b.add_body("root", None, "free", mass=2.0, com=rng.normal(scale=0.1, size=3), inertia=_inertia(rng, 2.0))
        names.append("root")
    kinds = ["Rx", "Ry", "Rz", "revolute", "Px", "prismatic", "helical", "fixed", "Rz", "Ry"]
    for k in range(12):
        kind = kinds[k % len(kinds)]
        parent = names[rng.integers(len(names))] if names else None
        kw = {}
        if kind in ("revolute", "prismatic", "helical"):
            kw["axis"] = _unit(rng)
        if kind == "helical":
            kw["pitch"] = 0.07
        if kind != "fixed" and k % 4 == 1:
            kw["armature"] = 0.05
        m = rng.uniform(0.3, 1.5)
        b.add_body(f"b{k}", parent, kind, mass=m, com=rng.normal(scale=0.2, size=3), inertia=_inertia(rng, m),
                   joint_rotation=_rot(rng) if k % 3 else None, joint_translation=rng.normal(scale=0.3, size=3), **kw)
        names.append(f"b{k}")
    return b.build()


def states(model, n, seed):
    rng = np.random.default_rng(seed)
    Q = rng.uniform(-4, 4, (n, model.nq))
    for i in range(model.nb):
        if model.jtype[i] == mb.JointType.FREE:
            s = model.q_start[i]
            quat = rng.normal(size=(n, 4))
            Q[:, s + 3:s + 7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    return Q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


ALGORITHMS = {"aba": mb.aba, "rnea": mb.rnea}   # (q, q̇, τ) → q̈ and (q, q̇, q̈) → τ


def singles(model, Q, QD, X, algo="aba"):
    return np.array([ALGORITHMS[algo](model, q, qd, x) for q, qd, x in zip(Q, QD, X)])


@pytest.mark.parametrize("algo", ALGORITHMS)
@pytest.mark.parametrize("seed,floating", [(0, True), (1, False), (2, True)])
@pytest.mark.parametrize("n", [1, 3, 4, 7, 61])
def test_every_lane_is_the_single_call_bit_for_bit(lanes, algo, seed, floating, n):
    m = lane_model(seed, floating)
    Q, QD, X = states(m, n, seed + n)
    Q[n // 2, m.q_start[-1]] = 3e7   # one angle beyond the fast sin/cos: libm in its lane
    np.testing.assert_array_equal(ALGORITHMS[algo](m, Q, QD, X), singles(m, Q, QD, X, algo))


@pytest.mark.parametrize("n", [1, 5, 33])
def test_crba_lanes_bit_for_bit(lanes, n):
    for m in (lane_model(5), lane_model(6, floating=False), mixed(True, True)):
        Q = states(m, n, n)[0]
        for i in range(m.nb):
            if m.jtype[i] == mb.JointType.SPHERICAL:
                s = m.q_start[i]
                Q[:, s:s + 4] /= np.linalg.norm(Q[:, s:s + 4], axis=1, keepdims=True)
        np.testing.assert_array_equal(mb.crba(m, Q), np.array([mb.crba(m, q) for q in Q]))
    m = lane_model(5)
    Q = states(m, 8, 1)[0]
    Q[6, 3:7] = 0.0   # a zero quaternion in the second group
    with pytest.raises(ValueError) as single:
        mb.crba(m, Q[6])
    with pytest.raises(ValueError) as batch:
        mb.crba(m, Q)
    assert str(batch.value) == str(single.value)


def test_crba_of_a_batch_larger_than_the_caches(lanes):
    """A CRBA batch whose outputs pass 8 MB is written with non-temporal stores and checked in the
    lanes (aba_lanes.c: crba_stream_group, py_dynamics.c: crba_streamed): every state still the single
    call's bit for bit, and a state whose H overflows named as the unstreamed batch names it."""
    b = mb.ModelBuilder("chain40")
    parent = None
    for i in range(40):  # revolute and prismatic in turn: a prismatic offset enters H squared
        parent = b.add_body(f"b{i}", parent, ["Rz", "Px", "Ry", "Pz"][i % 4], mass=1.0 + 0.1 * i,
                            com=(0.1, 0.02 * i, 0.0), joint_translation=(0.0, 0.0, 0.3))
    m = b.build()
    n = 2_700  # 2 700 · 40² · 8 B = 34.6 MB
    Q = np.random.default_rng(3).uniform(-1.0, 1.0, (n, m.nq))
    H = mb.crba(m, Q)
    for k in (0, 1, 2, 3, 1_001, n - 2, n - 1):
        np.testing.assert_array_equal(H[k], mb.crba(m, Q[k]))
    np.testing.assert_array_equal(H[::97], mb.crba(m, Q[::97]))  # a small batch: not streamed
    Q[1_500, 1] = 1e200  # a prismatic offset whose square overflows
    with pytest.raises(mb.errors.ResultOverflowError, match="at state 1500"):
        mb.crba(m, Q)
    # finite entries whose sum overflows: the streamed check (lanes.h, AVX2: sums of the rows it
    # stores) may read them as not finite; the group is then redone state by state and checked exactly
    Q[1_500, [1, 5, 9]] = 3e152
    H1500 = mb.crba(m, Q[1_500])
    with np.errstate(over="ignore"):
        assert np.isfinite(H1500).all() and not np.isfinite(np.abs(H1500).sum())
    H = mb.crba(m, Q)
    for k in (1_499, 1_500, 1_501):
        np.testing.assert_array_equal(H[k], mb.crba(m, Q[k]))


def test_rnea_lanes_take_every_joint_type(lanes):
    m = mixed(True, True)   # free, spherical, helical, planar, fixed: RNEA needs no D blocks
    Q, QD, QDD = states(m, 11, 9)
    for i in range(m.nb):
        if m.jtype[i] == mb.JointType.SPHERICAL:
            s = m.q_start[i]
            Q[:, s:s + 4] /= np.linalg.norm(Q[:, s:s + 4], axis=1, keepdims=True)
    np.testing.assert_array_equal(mb.rnea(m, Q, QD, QDD), singles(m, Q, QD, QDD, "rnea"))


def test_shared_rows_and_threads(lanes):
    m = lane_model(3)
    Q, QD, TAU = states(m, 700, 3)   # ≥ PARALLEL_MIN_BATCH: split across threads, each with its lanes
    threads = mb.get_num_threads()
    mb.set_num_threads(2)
    try:
        np.testing.assert_array_equal(mb.aba(m, Q, QD, TAU), singles(m, Q, QD, TAU))
        np.testing.assert_array_equal(mb.rnea(m, Q, QD, TAU), singles(m, Q, QD, TAU, "rnea"))
        shared = mb.aba(m, Q[:1], QD, TAU[:1])   # q and τ shared by every state
        np.testing.assert_array_equal(shared, singles(m, np.repeat(Q[:1], 700, 0), QD, np.repeat(TAU[:1], 700, 0)))
    finally:
        mb.set_num_threads(threads)


def test_models_the_lanes_do_not_run_are_computed_state_by_state(lanes):
    for m in (mixed(True, True), mb.models.planar(4)):   # spherical and planar joints; a planar tree
        Q, QD, TAU = states(m, 9, 5)
        for i in range(m.nb):
            if m.jtype[i] == mb.JointType.SPHERICAL:
                s = m.q_start[i]
                Q[:, s:s + 4] /= np.linalg.norm(Q[:, s:s + 4], axis=1, keepdims=True)
        np.testing.assert_array_equal(mb.aba(m, Q, QD, TAU), singles(m, Q, QD, TAU))
    m = lane_model(4)
    Q, QD, TAU = states(m, 9, 6)
    F = np.random.default_rng(7).normal(size=(9, m.nb, 6))   # f_ext: one state at a time
    for f in ALGORITHMS.values():
        np.testing.assert_array_equal(f(m, Q, QD, TAU, F), np.array([f(m, *x) for x in zip(Q, QD, TAU, F)]))


@pytest.mark.parametrize("algo", ALGORITHMS)
@pytest.mark.parametrize("bad", ["qd", "x", "quaternion"])
def test_a_bad_state_inside_a_group_is_reported_as_a_single_call_reports_it(lanes, algo, bad):
    m = lane_model(0)
    Q, QD, X = states(m, 10, 8)
    k = 5
    if bad == "qd":
        QD[k, 2] = np.nan
    elif bad == "x":
        X[k, 0] = np.inf
    else:
        Q[k, 3:7] = 0.0
    f = ALGORITHMS[algo]
    with pytest.raises(ValueError) as single:
        f(m, Q[k], QD[k], X[k])
    with pytest.raises(ValueError) as batch:
        f(m, Q, QD, X)
    assert str(batch.value) == str(single.value)


def test_use_lanes_refuses_unknown_names():
    with pytest.raises(ValueError, match="not built or not supported"):
        _core.use_lanes("avx512-please")
    with pytest.raises(TypeError):
        _core.use_lanes(4)
