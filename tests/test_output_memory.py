"""The core's reuse of large batch outputs (_core.c: new_array, a NEP 49 memory handler) and of
small dropped results (py_output.c: the free list): results stay independent and correct when their
memory comes back, and nothing else is affected."""
import gc

import numpy as np
import pytest

import multibody as mb
from multibody.core import _core

try:  # NumPy ≥ 2
    from numpy._core.multiarray import get_handler_name
except ImportError:  # pragma: no cover - NumPy 1.x
    from numpy.core.multiarray import get_handler_name


@pytest.fixture
def model():
    return mb.models.planar(6)


def _states(model, n, seed):
    return np.random.default_rng(seed).normal(size=(n, model.nq))


def test_reused_block_gives_independent_correct_results(model):
    Q1, Q2 = _states(model, 20_000, 1), _states(model, 20_000, 2)   # 20 000 · 36 · 8 B = 5.8 MB each
    H1 = mb.crba(model, Q1)
    assert H1.nbytes >= 1 << 20
    keep = H1.copy()
    H2 = mb.crba(model, Q2)              # H1 alive: H2 cannot share its memory
    assert not np.shares_memory(H1, H2)
    np.testing.assert_array_equal(H1, keep)
    address = H2.__array_interface__["data"][0]
    del H2
    gc.collect()
    H3 = mb.crba(model, Q1)              # same size: the freed block is handed back
    assert H3.__array_interface__["data"][0] == address
    np.testing.assert_array_equal(H3, keep)
    for k in (0, 7_777, 19_999):         # and every state is the single call's
        np.testing.assert_array_equal(H3[k], mb.crba(model, Q1[k]))


def test_reused_arrays_behave_like_numpy_arrays(model):
    Q = _states(model, 30_000, 3)
    H = mb.crba(model, Q)
    assert H.flags.owndata and H.flags.writeable and H.flags.c_contiguous
    H.resize((15_000, model.nv, model.nv), refcheck=False)   # NumPy reallocates through the handler
    np.testing.assert_array_equal(H[-1], mb.crba(model, Q[14_999]))
    H.resize((40_000, model.nv, model.nv), refcheck=False)
    assert H.shape == (40_000, model.nv, model.nv) and not H[15_000:].any()  # grown part zero-filled
    del H
    mb.core.release_output_memory()
    mb.core.release_output_memory()      # nothing held: a no-op


def test_small_and_single_results_do_not_use_the_handler(model):
    Q = _states(model, 10, 4)
    small = mb.crba(model, Q)
    assert small.nbytes < 1 << 20
    assert get_handler_name(small) == get_handler_name(np.empty(3))
    big = mb.crba(model, _states(model, 20_000, 5))
    assert get_handler_name(big) == "multibody_reuse_large_outputs"
    assert get_handler_name(np.empty(10_000_000)) != "multibody_reuse_large_outputs"  # NumPy's own arrays


def test_a_kept_block_serves_only_an_output_of_its_own_size(model):
    A = mb.crba(model, _states(model, 20_000, 6))
    size_a = A.nbytes
    del A
    assert _core.kept_output_bytes() == size_a      # A's block waits for an output of its size
    B = mb.crba(model, _states(model, 30_000, 7))   # larger: a new block, and A's is freed, not kept
    assert _core.kept_output_bytes() == 0
    np.testing.assert_array_equal(B[0], mb.crba(model, _states(model, 30_000, 7)[0]))
    size_b = B.nbytes
    del B
    assert _core.kept_output_bytes() == size_b
    _core.release_output_memory()
    assert _core.kept_output_bytes() == 0


def test_outputs_of_other_sizes_and_threads(model):
    threads = mb.get_num_threads()
    mb.set_num_threads(2)
    try:
        for n in (20_000, 25_000, 20_000, 25_000):
            Q = _states(model, n, n)
            A = mb.aba(model, Q, np.zeros((n, model.nv)), np.zeros((n, model.nv)))
            np.testing.assert_allclose(A[n // 2], mb.aba(model, Q[n // 2], np.zeros(model.nv), np.zeros(model.nv)),
                                       rtol=0, atol=0)
            del A
    finally:
        mb.set_num_threads(threads)
    assert _core.release_output_memory() is None


def test_the_outputs_of_a_multi_output_batch_all_come_back(model):
    """The derivatives return three nv × nv matrices per state: all three blocks are kept and
    handed to the next call of the same size, so a loop over batches touches no fresh pages."""
    _core.release_output_memory()
    n = 10_000                                                   # 10 000 · 36 · 8 B = 2.9 MB each
    Q, V, A = (_states(model, n, s) for s in (8, 9, 10))
    first = mb.rnea_derivatives(model, Q, V, A)
    addresses = {x.__array_interface__["data"][0] for x in first}
    size = first[0].nbytes
    keep = [x[[0, n - 1]].copy() for x in first]
    del first
    gc.collect()
    assert _core.kept_output_bytes() == 3 * size
    again = mb.rnea_derivatives(model, Q, V, A)
    assert {x.__array_interface__["data"][0] for x in again} == addresses
    assert _core.kept_output_bytes() == 0
    for x, k in zip(again, keep):
        np.testing.assert_array_equal(x[[0, n - 1]], k)
    single = mb.rnea_derivatives(model, Q[n - 1], V[n - 1], A[n - 1])
    for x, s in zip(again, single):
        np.testing.assert_array_equal(x[n - 1], s)
    del again
    gc.collect()
    other = mb.crba(model, _states(model, n + 1, 11))             # another size: the three are let go
    assert _core.kept_output_bytes() == 0
    del other


def test_at_most_four_blocks_are_kept(model):
    _core.release_output_memory()
    outs = [mb.crba(model, _states(model, 10_000, s)) for s in range(6)]
    size = outs[0].nbytes
    del outs
    gc.collect()
    assert _core.kept_output_bytes() == 4 * size                 # the oldest two were freed
    _core.release_output_memory()
    assert _core.kept_output_bytes() == 0


# ---- small outputs: the free list of the arrays returned last (py_output.c: small_array) ----------

def test_a_held_small_result_is_never_handed_out_again(model):
    q1, q2 = _states(model, 2, 10)
    H1 = mb.crba(model, q1)
    keep = H1.copy()
    H2 = mb.crba(model, q2)              # H1 is held: H2 is another array
    assert H2 is not H1 and not np.shares_memory(H1, H2)
    np.testing.assert_array_equal(H1, keep)
    view = mb.crba(model, q1)[0]         # a view keeps its base: the base is not reused either
    row = view.copy()
    mb.crba(model, q2), mb.crba(model, q2)
    np.testing.assert_array_equal(view, row)
    D = mb.rnea_derivatives(model, q1, q2, q1)   # several outputs of one shape in one call: all distinct
    assert len({id(x) for x in D}) == 3 and not any(np.shares_memory(D[0], x) for x in D[1:])


def test_a_dropped_small_result_comes_back_correct_and_as_made(model):
    q1, q2 = _states(model, 2, 11)
    expected = mb.crba(model, q2)        # held throughout: never reused
    H = mb.crba(model, q1)
    address = H.__array_interface__["data"][0]
    H[:] = np.nan                        # a holder's writes do not leak into the next result
    del H
    H = mb.crba(model, q2)               # the dropped array is handed out again, rewritten whole
    assert H.__array_interface__["data"][0] == address
    assert H is not expected
    np.testing.assert_array_equal(H, expected)
    # one whose flags or shape a holder changed in place is not reused: the next is a plain result
    H.flags.writeable = False
    del H
    H = mb.crba(model, q1)
    assert H.flags.writeable and H.flags.owndata and H.flags.c_contiguous
    H.shape = (model.nv * model.nv,)
    del H
    H = mb.crba(model, q1)
    assert H.shape == (model.nv, model.nv) and H.dtype == np.float64
    mb.core.release_output_memory()      # empties the free list too
    M = mb.minv(model, q1)
    np.testing.assert_allclose(M @ mb.crba(model, q1), np.eye(model.nv), atol=1e-9)
