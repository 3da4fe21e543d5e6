"""Tests for multibody.sparse: branch-induced sparsity against dense linear algebra."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import multibody.sparse as sps
from multibody.sparse import (
    ancestor_mask, expand_lambda, ltdl, ltl, mpy_h, mpy_l, mpy_li, mpy_lit, mpy_lt, solve_ltdl,
)

RNG = np.random.default_rng(6_5)


def random_parent(n, rng):
    return np.array([-1] + [int(rng.integers(-1, i)) for i in range(1, n)])


def dense_mask(lam):
    """Ancestor-or-self mask computed naively (independent of the module's kernel)."""
    n = len(lam)
    M = np.eye(n, dtype=bool)
    for i in range(n):
        j = lam[i]
        while j != -1:
            M[i, j] = True
            j = lam[j]
    return M


def random_factors(lam, rng):
    """Unit lower L with branch-induced sparsity, positive d, and H = Lᵀ diag(d) L."""
    n = len(lam)
    L = np.where(dense_mask(lam), rng.normal(size=(n, n)), 0.0)
    np.fill_diagonal(L, 1.0)
    d = rng.uniform(0.5, 3.0, n)
    H = L.T @ np.diag(d) @ L
    return L, d, 0.5 * (H + H.T)


# --------------------------------------------------------------------------- expand_lambda
def test_expand_lambda_hand_worked_example():
    # bodies: 0 (1 dof) on base; 1 (2 dof) on 0; 2 (1 dof) on 0; 3 (3 dof) on 1
    # variables: 0 | 1 2 | 3 | 4 5 6 ; first var of body 3 hangs from the last var of body 1 (2)
    out = expand_lambda([-1, 0, 0, 1], [1, 2, 1, 3])
    assert out.tolist() == [-1, 0, 1, 0, 2, 4, 5]
    assert out.dtype == np.int64


def test_expand_lambda_single_dof_is_identity_and_floating_base():
    p = [-1, 0, 1, 1, 3, 0]
    assert expand_lambda(p, [1] * 6).tolist() == p
    assert expand_lambda([-1, 0, 0], [6, 1, 2]).tolist() == [-1, 0, 1, 2, 3, 4, 5, 5, 7]


def test_expand_lambda_zero_dof_joint_passes_through():
    # body 1 is welded to body 0; body 2's first variable hangs from body 0's last variable
    assert expand_lambda([-1, 0, 1], [2, 0, 2]).tolist() == [-1, 0, 1, 2]
    assert expand_lambda([-1, 0], [0, 1]).tolist() == [-1]


def test_expand_lambda_matches_pinocchio_parents_from_row():
    import pinocchio as pin
    model = pin.buildSampleModelHumanoidRandom()
    data = model.createData()
    parent = [model.parents[i] - 1 for i in range(1, model.njoints)]
    nf = [model.joints[i].nv for i in range(1, model.njoints)]
    lam = expand_lambda(parent, nf)
    assert lam.tolist() == list(data.parents_fromRow)


# --------------------------------------------------------------------------- factorisations
@pytest.mark.parametrize("seed", range(6))
def test_ltdl_recovers_factors_and_preserves_sparsity(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 15))
    lam = random_parent(n, rng)
    L0, d0, H = random_factors(lam, rng)
    L, d = ltdl(H, lam)
    assert L.shape == (n, n) and d.shape == (n,)
    np.testing.assert_allclose(L.T @ np.diag(d) @ L, H, atol=1e-9 * np.abs(H).max())
    np.testing.assert_allclose(np.diag(L), 1.0)
    assert np.all(L[~dense_mask(lam)] == 0.0)  # exactly zero outside the pattern
    np.testing.assert_allclose(L, L0, atol=1e-8)  # the LᵀDL factorisation is unique
    np.testing.assert_allclose(d, d0, rtol=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_ltl_against_reversed_cholesky(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 15))
    lam = random_parent(n, rng)
    _, _, H = random_factors(lam, rng)
    L = ltl(H, lam)
    np.testing.assert_allclose(L.T @ L, H, atol=1e-9 * np.abs(H).max())
    assert np.all(L[~dense_mask(lam)] == 0.0)
    assert np.all(np.diag(L) > 0)
    # H = Lᵀ L with L lower  <=>  P H P = C Cᵀ with C = P Lᵀ P lower (P reverses the order)
    C = np.linalg.cholesky(H[::-1, ::-1])
    np.testing.assert_allclose(L, C[::-1, ::-1].T, atol=1e-9)
    # and LTL is LTDL with the square root of D folded in
    Lu, d = ltdl(H, lam)
    np.testing.assert_allclose(L, np.sqrt(d)[:, None] * Lu, atol=1e-9)


def test_chain_and_star_extremes():
    n = 6
    A = RNG.normal(size=(n, n))
    H = A @ A.T + n * np.eye(n)  # dense: a chain makes every lower entry an ancestor entry
    L = ltl(H, np.arange(n) - 1)
    np.testing.assert_allclose(L.T @ L, H, atol=1e-10)
    D = np.diag(RNG.uniform(1, 2, n))  # star on the base: H diagonal, L = identity
    Ls, ds = ltdl(D, -np.ones(n, int))
    np.testing.assert_allclose(Ls, np.eye(n))
    np.testing.assert_allclose(ds, np.diag(D))


def test_factorise_pinocchio_joint_space_inertia():
    import pinocchio as pin
    model = pin.buildSampleModelHumanoidRandom()
    data = model.createData()
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    lam = expand_lambda([model.parents[i] - 1 for i in range(1, model.njoints)],
                        [model.joints[i].nv for i in range(1, model.njoints)])
    L, d = ltdl(M, lam)  # also checks that M has the pattern of lam
    np.testing.assert_allclose(L.T @ np.diag(d) @ L, M, atol=1e-10)
    b = RNG.normal(size=model.nv)
    np.testing.assert_allclose(solve_ltdl(L, d, lam, b), np.linalg.solve(M, b), atol=1e-9)
    np.testing.assert_allclose(mpy_h(M, lam, b), M @ b, atol=1e-12)


# --------------------------------------------------------------------------- products and solves
@pytest.mark.parametrize("seed", range(5))
def test_products_and_solves_against_dense(seed):
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(1, 13))
    lam = random_parent(n, rng)
    _, _, H = random_factors(lam, rng)
    x = rng.normal(size=n)
    np.testing.assert_allclose(mpy_h(H, lam, x), H @ x, atol=1e-12 * np.abs(H).max() * n)
    for L in (ltl(H, lam), ltdl(H, lam)[0]):
        np.testing.assert_allclose(mpy_l(L, lam, x), L @ x, atol=1e-11)
        np.testing.assert_allclose(mpy_lt(L, lam, x), L.T @ x, atol=1e-11)
        np.testing.assert_allclose(mpy_li(L, lam, x), np.linalg.solve(L, x), atol=1e-9)
        np.testing.assert_allclose(mpy_lit(L, lam, x), np.linalg.solve(L.T, x), atol=1e-9)
    L, d = ltdl(H, lam)
    np.testing.assert_allclose(solve_ltdl(L, d, lam, x), np.linalg.solve(H, x), atol=1e-9)


def test_mpy_h_reads_only_lower_pattern_of_symmetric_h():
    lam = np.array([-1, 0, 0, 1])
    _, _, H = random_factors(lam, RNG)
    x = RNG.normal(size=4)
    np.testing.assert_allclose(mpy_h(H, lam, x), H @ x, atol=1e-12)
    # H[2,1] and H[3,2] are outside the pattern (2 is not an ancestor of 3, 1 not of 2)
    assert H[2, 1] == pytest.approx(0, abs=1e-14) and H[3, 2] == pytest.approx(0, abs=1e-14)


# --------------------------------------------------------------------------- batches
def test_batched_factorisations_and_products():
    n = 7
    lam = random_parent(n, RNG)
    Hs = np.empty((3, 4, n, n))
    for idx in np.ndindex(3, 4):
        Hs[idx] = random_factors(lam, RNG)[2]
    xs = RNG.normal(size=(3, 4, n))
    L, d = ltdl(Hs, lam)
    Lc = ltl(Hs, lam)
    assert L.shape == (3, 4, n, n) and d.shape == (3, 4, n) and Lc.shape == (3, 4, n, n)
    y_h = mpy_h(Hs, lam, xs)
    y_l, y_lt = mpy_l(Lc, lam, xs), mpy_lt(Lc, lam, xs)
    y_li, y_lit = mpy_li(Lc, lam, xs), mpy_lit(Lc, lam, xs)
    sol = solve_ltdl(L, d, lam, xs)
    for idx in np.ndindex(3, 4):
        H, x = Hs[idx], xs[idx]
        Li, di = ltdl(H, lam)
        np.testing.assert_allclose(L[idx], Li)
        np.testing.assert_allclose(d[idx], di)
        np.testing.assert_allclose(Lc[idx], ltl(H, lam))
        np.testing.assert_allclose(y_h[idx], H @ x, atol=1e-10)
        np.testing.assert_allclose(y_l[idx], Lc[idx] @ x, atol=1e-10)
        np.testing.assert_allclose(y_lt[idx], Lc[idx].T @ x, atol=1e-10)
        np.testing.assert_allclose(y_li[idx], np.linalg.solve(Lc[idx], x), atol=1e-9)
        np.testing.assert_allclose(y_lit[idx], np.linalg.solve(Lc[idx].T, x), atol=1e-9)
        np.testing.assert_allclose(sol[idx], np.linalg.solve(H, x), atol=1e-9)


def test_batch_broadcasting_between_matrix_and_vectors():
    n = 5
    lam = random_parent(n, RNG)
    _, _, H = random_factors(lam, RNG)
    X = RNG.normal(size=(8, n))
    Y = mpy_h(H, lam, X)  # one H, many x
    assert Y.shape == (8, n)
    np.testing.assert_allclose(Y, X @ H.T, atol=1e-10)
    Hs = np.stack([random_factors(lam, RNG)[2] for _ in range(8)])
    x = RNG.normal(size=n)
    Z = mpy_h(Hs, lam, x)  # many H, one x
    np.testing.assert_allclose(Z, Hs @ x, atol=1e-10)
    L, d = ltdl(H, lam)
    S = solve_ltdl(L, d, lam, X)  # one factorisation, many right-hand sides
    np.testing.assert_allclose(S, np.linalg.solve(H, X.T).T, atol=1e-9)
    Ls, ds = ltdl(Hs, lam)
    np.testing.assert_allclose(solve_ltdl(Ls, ds, lam, X), np.linalg.solve(Hs, X[..., None])[..., 0],
                               atol=1e-9)
    with pytest.raises(ValueError, match="do not broadcast"):
        mpy_h(Hs, lam, RNG.normal(size=(3, n)))


def test_check_false_gives_same_results():
    n = 6
    lam = random_parent(n, RNG)
    _, _, H = random_factors(lam, RNG)
    L, d = ltdl(H, lam)
    L2, d2 = ltdl(H, lam, check=False)
    np.testing.assert_array_equal(L, L2)
    np.testing.assert_array_equal(d, d2)
    b = RNG.normal(size=n)
    np.testing.assert_array_equal(solve_ltdl(L, d, lam, b), solve_ltdl(L, d, lam, b, check=False))


# --------------------------------------------------------------------------- bad input
def _good():
    lam = np.array([-1, 0, 0, 1])
    L, d, H = random_factors(lam, np.random.default_rng(1))
    return lam, L, d, H


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda lam, L, d, H: ltdl(H[:, :3], lam), r"ltdl: H must be a square matrix"),
        (lambda lam, L, d, H: ltdl(H + np.triu(np.ones((4, 4)), 1), lam), r"ltdl: H must be symmetric"),
        (lambda lam, L, d, H: ltdl(H, lam[:3]), r"ltdl: lam must have length 4"),
        (lambda lam, L, d, H: ltdl(H, [-1, 0, 2, 1]), r"ltdl: lam must satisfy -1 <= lam\[i\] < i .* lam\[2\] = 2"),
        (lambda lam, L, d, H: ltl(H, [-1, -2, 0, 1]), r"ltl: lam must satisfy .* lam\[1\] = -2"),
        (lambda lam, L, d, H: ltdl(H, [-1, 0, 0.5, 1]), r"ltdl: lam must contain integers"),
        (lambda lam, L, d, H: ltdl(np.where(np.eye(4) > 0, np.nan, H), lam), r"ltdl: H contains NaN"),
        (lambda lam, L, d, H: ltdl(H + 0.3 * (np.eye(4)[[3]].T @ np.eye(4)[[2]] + np.eye(4)[[2]].T @ np.eye(4)[[3]]), lam),
         r"ltdl: H\[\.\.\., 3, 2\] = 0\.3 is outside the branch-induced sparsity pattern \(2 is not an ancestor of 3"),
        (lambda lam, L, d, H: ltdl(-H, lam), r"ltdl: H must be positive definite; pivot 3"),
        (lambda lam, L, d, H: ltl(np.diag([1.0, 1, 0, 1]), lam), r"ltl: H must be positive definite; pivot 2"),
        (lambda lam, L, d, H: ltl(np.stack([H, -H]), lam), r"batch element 1"),
        (lambda lam, L, d, H: mpy_h(H, lam, np.ones(3)), r"mpy_h: x must have shape \(\.\.\., 4\)"),
        (lambda lam, L, d, H: mpy_h(H, lam, [1, np.inf, 0, 0]), r"mpy_h: x contains NaN or inf"),
        (lambda lam, L, d, H: mpy_l(L.T, lam, np.ones(4)), r"mpy_l: L\[\.\.\., 0, 1\] .* above the diagonal"),
        (lambda lam, L, d, H: mpy_lt(np.ones((4, 4)), lam, np.ones(4)), r"mpy_lt: L\[.*outside"),
        (lambda lam, L, d, H: mpy_li(L - np.diag(np.diag(L)), lam, np.ones(4)), r"mpy_li: L must have a nonzero diagonal"),
        (lambda lam, L, d, H: mpy_lit(L - np.eye(4) * np.eye(4)[2], lam, np.ones(4)), r"mpy_lit: L must have a nonzero diagonal, L\[\.\.\., 2, 2\] = 0"),
        (lambda lam, L, d, H: solve_ltdl(L, d[:3], lam, np.ones(4)), r"solve_ltdl: d must have shape \(\.\.\., 4\)"),
        (lambda lam, L, d, H: solve_ltdl(L, 0 * d, lam, np.ones(4)), r"solve_ltdl: d must be nonzero"),
        (lambda lam, L, d, H: solve_ltdl(L, d, lam, np.ones(5)), r"solve_ltdl: b must have shape"),
        (lambda lam, L, d, H: expand_lambda([-1, 0], [1, -1]), r"expand_lambda: nf must be >= 0"),
        (lambda lam, L, d, H: expand_lambda([-1, 0], [1]), r"expand_lambda: nf must have one entry per body"),
        (lambda lam, L, d, H: expand_lambda([-1, 1], [1, 1]), r"expand_lambda: parent must satisfy"),
        (lambda lam, L, d, H: expand_lambda([[-1, 0]], [1, 1]), r"expand_lambda: parent must be a 1-D integer array"),
    ],
)
def test_bad_input_raises_value_error_naming_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call(*_good())


# --------------------------------------------------------------------------- misc
def test_ancestor_mask_and_seed_aliases():
    lam = [-1, 0, 1, 0, 3]
    np.testing.assert_array_equal(ancestor_mask(lam), dense_mask(lam))
    from multibody import spatial_v2 as sv2          # the seed spellings live there only
    assert sv2.expandLambda is expand_lambda and sv2.LTDL is ltdl and sv2.LTL is ltl
    assert sv2.mpyH is mpy_h and sv2.mpyL is mpy_l and sv2.mpyLt is mpy_lt
    assert sv2.mpyLi is mpy_li and sv2.mpyLit is mpy_lit
    assert not any(hasattr(sps, n) for n in ("expandLambda", "LTDL", "LTL", "mpyH", "mpyL", "mpyLt", "mpyLi", "mpyLit"))


@st.composite
def trees(draw):
    n = draw(st.integers(1, 12))
    lam = [-1] + [draw(st.integers(-1, i - 1)) for i in range(1, n)]
    seed = draw(st.integers(0, 2**32 - 1))
    return np.array(lam), np.random.default_rng(seed)


@settings(max_examples=150, deadline=None)
@given(trees())
def test_property_factorise_and_solve_random_trees(tree):
    lam, rng = tree
    L0, d0, H = random_factors(lam, rng)
    L, d = ltdl(H, lam)
    scale = np.abs(H).max()
    np.testing.assert_allclose(L.T @ (d[:, None] * L), H, atol=1e-9 * scale)
    assert np.all(L[~dense_mask(lam)] == 0)
    Lc = ltl(H, lam)
    np.testing.assert_allclose(Lc.T @ Lc, H, atol=1e-9 * scale)
    b = rng.normal(size=len(lam))
    x = solve_ltdl(L, d, lam, b)
    np.testing.assert_allclose(mpy_h(H, lam, x), b, atol=1e-7 * max(1, scale))
    np.testing.assert_allclose(mpy_lt(Lc, lam, mpy_l(Lc, lam, x)), H @ x, atol=1e-8 * max(1, scale))
    # H⁻¹ = L⁻¹ L⁻ᵀ for H = Lᵀ L
    np.testing.assert_allclose(mpy_li(Lc, lam, mpy_lit(Lc, lam, b)), np.linalg.solve(H, b),
                               atol=1e-6 * max(1, np.abs(np.linalg.solve(H, b)).max()))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=10), st.integers(0, 2**32 - 1))
def test_property_expand_lambda_is_a_valid_tree_consistent_with_bodies(nf, seed):
    rng = np.random.default_rng(seed)
    parent = random_parent(len(nf), rng)
    lam = expand_lambda(parent, nf)
    assert len(lam) == sum(nf)
    assert all(-1 <= lam[i] < i for i in range(len(lam)))
    # variable -> body map; the parent variable belongs to the same body or to an ancestor body
    body = np.repeat(np.arange(len(nf)), nf)
    anc_bodies = dense_mask(parent)
    for i in range(len(lam)):
        if lam[i] >= 0:
            assert anc_bodies[body[i], body[lam[i]]]
        else:  # hangs from the base: no ancestor body has a variable
            b = parent[body[i]]
            while b != -1:
                assert nf[b] == 0
                b = parent[b]


def test_pattern_error_reports_batch_element():
    lam = np.array([-1, 0, 0, 1])
    Hs = np.stack([random_factors(lam, RNG)[2] for _ in range(3)])
    Hs[2, 3, 2] = Hs[2, 2, 3] = 0.25
    with pytest.raises(ValueError, match=r"H\[\.\.\., 3, 2\] = 0\.25 .* \(batch element \(2,\)\)"):
        ltl(Hs, lam)


def test_docstring_examples_run():
    import doctest

    res = doctest.testmod(sps)
    assert res.failed == 0 and res.attempted > 10


def test_kernel_contract_used_by_compiled_callers():
    # dynamics.fd_sparse calls these kernels from njit code with (B, n, n) / (B, n) arrays
    from multibody.sparse import _ltdl_kernel, _solve_ltdl_kernel

    lam = np.array([-1, 0, 1, 0])
    _, _, H = random_factors(lam, RNG)
    L = np.empty((1, 4, 4))
    d = np.empty((1, 4))
    info = np.empty(1, dtype=np.int64)
    _ltdl_kernel(H[None].copy(), lam, L, d, info)
    assert info[0] == -1
    rhs = RNG.normal(size=(3, 4))
    x = np.empty((3, 4))
    _solve_ltdl_kernel(L, d, lam, rhs, x)  # one factorisation broadcast over 3 right-hand sides
    np.testing.assert_allclose(x, np.linalg.solve(H, rhs.T).T, atol=1e-9)
